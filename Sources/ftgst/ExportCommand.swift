import FilmtoneGst
import Foundation
import Synchronization

/// `ftgst export SOURCE -o OUT [options]`: decode → look → encode with a preset, with progress and cancel.
enum ExportCommand {
    static let help = """
        usage: ftgst export SOURCE -o OUT [options]
               ftgst export --request FILE.json [options]
          SOURCE                 a path, file:// URI, or http(s):// URL of a video or photo
          -o, --output OUT       the file to write (under a temporary name, renamed after a clean end)
          --preset NAME          see `ftgst presets` [by OUT's extension: .mp4 h264-mp4, .mov prores-mov,
                                 .mkv ffv1-mkv, .jpg jpeg, .png png; another extension needs --preset]
          --input-lut FILE       .cube applied first    --creative-lut FILE  .cube with the look
          --intensity X          0..1 [1]               --interpolation M    tetrahedral|trilinear|nearest
          --max-width N          --max-height N         bounds of the upright output; never upscaled
          --start-ms N           keep from N ms of the source   --end-ms N   up to N ms (not included)
          --audio MODE           auto|copy|aac|none [auto: copy AAC, else re-encode to AAC]
          --depth 8|10|auto      bits between decoding and encoding [auto: the source's, capped by the preset]
          --build-mezzanine      also build the source's mezzanine first (ftgst mezzanine), stage `mezzanine`
                                 (also --mezzanine)
          --overwrite            replace OUT if it exists (else WRITE_FAILED)
          --progress MODE        auto|bar|jsonl|none [auto: a bar on a terminal's stderr, else none]
          --workspace DIR        one export at a time per workspace [$XDG_RUNTIME_DIR/ftgst]
          --timeout-ms N         stop with [CANCELLED] timeout after N ms
          --header 'Name: value' (repeatable)
          --request FILE.json    preview's request fields plus preset, audio, overwrite, workspace, maxWidth,
                                 maxHeight, startMs, endMs, depth, timeoutMs; options on the command line override it
          --dry-run              print the gst-launch-1.0 command (for bash) that does this export, and exit
        prints {"event":"result","path":…,"preset":…,"width":…,"height":…,"durationMs":…,"frames":…,
        "sizeBytes":…,"sidecar":…,"benchmark":…,"elapsedMs":…}; with --progress jsonl, progress events first.
        Ctrl-C, SIGTERM and `ftgst cancel` stop it: nothing is left at OUT, [CANCELLED] reason, exit 130.
        """

    enum ProgressMode: String {
        case auto, bar, jsonl, none
    }

    static func run(_ words: [String]) async throws {
        let normalized = words.map { $0 == "-o" ? "--output" : $0 }
        let arguments = try Arguments(
            normalized,
            options: [
                "output", "preset", "input-lut", "creative-lut", "intensity", "interpolation", "max-width",
                "max-height", "start-ms", "end-ms", "audio", "depth", "progress", "workspace", "timeout-ms", "header",
                "request",
            ],
            flags: ["help", "overwrite", "dry-run", "build-mezzanine"], aliases: ["mezzanine": "build-mezzanine"])
        if arguments.has("help") {
            print(help)
            return
        }
        var options: ExportOptions
        if let requestPath = arguments.string("request") {
            guard arguments.positionals.isEmpty else {
                throw usage("give the source in the request or as SOURCE, not both")
            }
            guard let data = FileManager.default.contents(atPath: requestPath) else {
                throw FilmtoneError(.fileNotFound, "no such request file: \(requestPath)")
            }
            options = try ExportOptions.fromJSON(data)
        } else {
            guard arguments.positionals.count == 1, let source = arguments.positionals.first else {
                throw usage(
                    arguments.positionals.isEmpty ? "export needs a SOURCE (or --request)" : "export takes one SOURCE")
            }
            options = ExportOptions(source: source)
        }
        if let value = arguments.string("output") { options.output = value }
        if let value = arguments.string("preset") { options.preset = value }
        if let value = arguments.string("input-lut") { options.inputLUT = value }
        if let value = arguments.string("creative-lut") { options.creativeLUT = value }
        if let value = try arguments.double("intensity") { options.intensity = value }
        if let value = arguments.string("interpolation") { options.interpolation = value }
        if let value = try arguments.int("max-width") { options.maxWidth = Int(clamping: value) }
        if let value = try arguments.int("max-height") { options.maxHeight = Int(clamping: value) }
        if let value = try arguments.int("start-ms") { options.startMilliseconds = value }
        if let value = try arguments.int("end-ms") { options.endMilliseconds = value }
        if let value = arguments.string("audio") {
            guard let mode = AudioMode(rawValue: value) else { throw usage("--audio must be auto, copy, aac or none") }
            options.audio = mode
        }
        if let value = arguments.string("depth") {
            guard let depth = ExportDepth(rawValue: value) else { throw usage("--depth must be 8, 10 or auto") }
            options.depth = depth
        }
        if arguments.has("overwrite") { options.overwrite = true }
        if arguments.has("build-mezzanine") { options.mezzanine = true }
        if let value = arguments.string("workspace") { options.workspace = value }
        if let value = try arguments.int("timeout-ms") { options.timeoutMilliseconds = value }
        if !arguments.all("header").isEmpty { options.headers = arguments.all("header") }
        guard let mode = ProgressMode(rawValue: arguments.string("progress") ?? "auto") else {
            throw usage("--progress must be auto, bar, jsonl or none")
        }

        if arguments.has("dry-run") {
            print(try await exportCommandLine(options))
            return
        }
        ExportSignals.install()
        let display = ProgressDisplay(mode: mode == .auto ? (isatty(2) != 0 ? .bar : .none) : mode)
        // The bar's line is ended on success and on failure, so `[CODE] message` starts a line of its own.
        defer { display.finish() }
        let result = try await runExport(options) { display.show($0) }
        print(result.json.serialized)
    }
}

/// Renders progress events: a one-line bar on stderr, or JSON lines on stdout.
final class ProgressDisplay: Sendable {
    let mode: ExportCommand.ProgressMode
    /// Whether a bar line is on screen (it then needs its newline). Events come from the export's thread.
    private let drewBar = Mutex(false)

    init(mode: ExportCommand.ProgressMode) {
        self.mode = mode
    }

    func show(_ event: ExportProgress) {
        drewBar.withLock { drewBar in
            draw(event, drewBar: &drewBar)
        }
    }

    private func draw(_ event: ExportProgress, drewBar: inout Bool) {
        switch mode {
        case .jsonl:
            print(event.json.serialized)
            fflush(nil)  // every output stream: a reader sees each event as it happens
        case .bar:
            let width = 30
            let filled = Int((event.progress * Double(width)).rounded(.down))
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            let frames = event.totalFrames.map { "\(event.currentFrame)/\($0)" } ?? "\(event.currentFrame)"
            let eta = event.remainingMilliseconds.map { " ETA \(ProgressDisplay.clock($0))" } ?? ""
            let line = String(
                format: "\r%-10@ [%@] %3d%% %@ frames %.1f fps%@\u{1B}[K", event.stage.rawValue, bar,
                Int(event.progress * 100), frames, event.framesPerSecond, eta)
            FileHandle.standardError.write(Data(line.utf8))
            drewBar = true
        case .none, .auto:
            break
        }
    }

    func finish() {
        drewBar.withLock { drewBar in
            if drewBar { FileHandle.standardError.write(Data("\n".utf8)) }
        }
    }

    static func clock(_ milliseconds: Int64) -> String {
        let seconds = milliseconds / 1000
        return String(format: "%d:%02d", seconds / 60, seconds % 60)
    }
}

/// `ftgst presets`: the export presets, one JSON object per line.
enum PresetsCommand {
    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, options: [], flags: ["help"])
        if arguments.has("help") {
            print(
                "usage: ftgst presets\nprints one JSON object per preset: name, description, extensions, sources, depth, audio, path"
            )
            return
        }
        guard arguments.positionals.isEmpty else { throw usage("presets takes no arguments") }
        for preset in try ExportPresets.all() { print(preset.json.serialized) }
    }
}

/// `ftgst cancel [--workspace DIR]`: stops the export running in the workspace.
enum CancelCommand {
    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, options: ["workspace", "timeout-ms"], flags: ["help"])
        if arguments.has("help") {
            print(
                """
                usage: ftgst cancel [--workspace DIR] [--timeout-ms N]
                asks the export running in the workspace to stop and waits (up to N ms, 5000) until it has;
                prints {"cancelled":true|false,"workspace":…} (false: no export was running)
                """)
            return
        }
        guard arguments.positionals.isEmpty else { throw usage("cancel takes no arguments") }
        let result = try await cancelRunningExport(
            workspace: arguments.string("workspace"),
            timeoutMilliseconds: try arguments.int("timeout-ms") ?? 5000)
        print(result.json.serialized)
    }
}
