import FilmtoneGst
import Foundation
import Synchronization

/// `ftgst export SOURCE -o OUT [options]`: decode → look → encode with a preset, with progress and cancel.
enum ExportCommand {
    static let spec = CommandSpec(
        path: ["export"], synopsis: "export SOURCE -o OUT", summary: "decode, apply the look, encode with a preset",
        usage: ["ftgst export SOURCE -o OUT [options]", "ftgst export --request FILE.json [options]"],
        positionals: [
            .init(
                name: "SOURCE", help: "a path, file:// URI, or http(s):// URL of a video or photo", completion: .anyFile
            )
        ],
        options: [
            .init(
                name: "output", short: "o", value: "OUT",
                help: "the file to write (under a temporary name, renamed after a clean end)", completion: .anyFile),
            .init(
                name: "preset", value: "NAME", help: "see `ftgst presets`",
                defaultValue:
                    "by OUT's extension: .mp4 h264-mp4, .mov prores-mov, .mkv ffv1-mkv, .jpg jpeg, .png png; another extension needs --preset",
                completion: .preset),
            .init(
                name: "presets", value: "DIR", help: "choose among DIR's *.preset files",
                defaultValue: "$FTGST_PRESETS, else the built-in presets", completion: .folder),
            .init(name: "input-lut", value: "FILE", help: ".cube applied first", completion: .cube),
            .init(name: "creative-lut", value: "FILE", help: ".cube with the look", completion: .cube),
            .init(name: "intensity", value: "X", help: "0..1", defaultValue: "1"),
            .interpolation,
            .init(name: "max-width", value: "N", help: "bound of the upright output's width; never upscaled"),
            .init(name: "max-height", value: "N", help: "bound of its height; never upscaled"),
            .init(name: "start-ms", value: "N", help: "keep from N ms of the source"),
            .init(name: "end-ms", value: "N", help: "up to N ms (not included)"),
            .init(
                name: "audio", value: "MODE", help: "auto|copy|aac|none",
                defaultValue: "auto: copy AAC, else re-encode to AAC",
                completion: .choices(["auto", "copy", "aac", "none"])),
            .init(
                name: "depth", value: "8|10|auto", help: "bits between decoding and encoding",
                defaultValue: "auto: the source's, capped by the preset", completion: .choices(["8", "10", "auto"])),
            .toneMap,
            .init(
                name: "build-mezzanine", value: nil,
                help: "also build the source's mezzanine first (ftgst mezzanine), stage `mezzanine`",
                aliases: ["mezzanine"]),
            .flag("overwrite", "replace OUT if it exists (else WRITE_FAILED)"),
            .flag(
                "notify",
                "show the export on the desktop: a notification with its progress and a Cancel button, dock progress, suspend inhibited"
            ),
            .init(
                name: "progress", value: "MODE", help: "auto|bar|jsonl|none",
                defaultValue: "auto: a bar on a terminal's stderr, else none",
                completion: .choices(ProgressMode.allCases.map(\.rawValue))),
            .init(
                name: "workspace", value: "DIR", help: "one export at a time per workspace",
                defaultValue: "$XDG_RUNTIME_DIR/ftgst", completion: .folder),
            .init(name: "timeout-ms", value: "N", help: "stop with [CANCELLED] timeout after N ms"),
            .init(name: "header", value: "'Name: value'", help: "sent on every HTTP request", repeatable: true),
            .init(
                name: "request", value: "FILE.json",
                help:
                    "preview's request fields plus preset, presets, audio, overwrite, workspace, maxWidth, maxHeight, startMs, endMs, depth, toneMap, timeoutMs; options on the command line override it",
                completion: .file(extensions: ["json"])),
            .flag("dry-run", "print the gst-launch-1.0 command (for bash) that does this export, and exit"),
        ],
        notes: #"""
            prints {"event":"result","path":…,"preset":…,"width":…,"height":…,"durationMs":…,"frames":…,"sizeBytes":…,"sidecar":…,"benchmark":…,"elapsedMs":…}; with --progress jsonl, progress events first.
            Ctrl-C, SIGTERM and `ftgst cancel` stop it: nothing is left at OUT, [CANCELLED] reason, exit 130.
            """#)

    enum ProgressMode: String, CaseIterable {
        case auto, bar, jsonl, none
    }

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
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
        if let value = arguments.string("presets") { options.presets = value }
        if let value = arguments.string("input-lut") { options.inputLUT = value }
        if let value = arguments.string("creative-lut") { options.creativeLUT = value }
        if let value = try arguments.double("intensity") { options.intensity = value }
        if let value = arguments.string("interpolation") { options.interpolation = try Interpolation.parse(value) }
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
        if let value = arguments.string("tone-map") { options.toneMap = try ToneMapping.parse(value) }
        if arguments.has("overwrite") { options.overwrite = true }
        if arguments.has("notify") { options.notify = true }
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
        let display = ProgressDisplay(mode: mode == .auto ? (isatty(2) != 0 ? .bar : .none) : mode)
        // A second Ctrl-C exits at once: the stream still ends with how it ended.
        ExportSignals.install(beforeForcedExit: { display.end(with: FilmtoneError(.cancelled, $0.rawValue)) })
        let result: ExportResult
        do {
            result = try await runExport(options) { display.show($0) }
        } catch {
            // The bar's line is ended, so `[CODE] message` starts a line of its own; JSON lines end with the outcome.
            display.end(with: (error as? FilmtoneError) ?? FilmtoneError(.internalError, "\(error)"))
            throw error
        }
        // The bar's line is ended before the result is printed: on a terminal both go to the same screen.
        display.end(with: nil)
        print(result.json.serialized)
        fflush(nil)
    }
}

/// Renders progress events: a one-line bar on stderr, or JSON lines on stdout.
final class ProgressDisplay: Sendable {
    let mode: ExportCommand.ProgressMode
    /// Whether a bar line is on screen (it then needs its newline) and whether the display has ended. Events come
    /// from the export's thread; the end may come from the signal thread.
    private let drewBar = Mutex((drewBar: false, ended: false))

    init(mode: ExportCommand.ProgressMode) {
        self.mode = mode
    }

    func show(_ event: ExportProgress) {
        drewBar.withLock { state in
            guard !state.ended else { return }
            draw(event, drewBar: &state.drewBar)
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

    /// Ends the display, once: the bar's line gets its newline; JSON lines get a last event for a failure
    /// (`{"event":"error","code":…,"message":…,"exitStatus":…}`) or a cancel (`{"event":"cancelled",
    /// "code":"CANCELLED","reason":…,"exitStatus":130}`), so a program reading stdout learns how the export ended
    /// (a success ends with the result line, printed after this). Later events are not shown.
    func end(with failure: FilmtoneError?) {
        drewBar.withLock { state in
            guard !state.ended else { return }
            state.ended = true
            if state.drewBar { FileHandle.standardError.write(Data("\n".utf8)) }
            guard mode == .jsonl, let failure else { return }
            print(ProgressDisplay.finalEvent(failure).serialized)
            fflush(nil)
        }
    }

    /// The last JSON line of a failed or cancelled export.
    static func finalEvent(_ failure: FilmtoneError) -> JSONValue {
        let status = ("exitStatus", JSONValue.int(Int64(failure.code.exitStatus)))
        if failure.code == .cancelled {
            return .object([
                ("event", .string("cancelled")), ("code", .string(failure.code.rawValue)),
                ("reason", .string(failure.message)), status,
            ])
        }
        return .object([
            ("event", .string("error")), ("code", .string(failure.code.rawValue)),
            ("message", .string(failure.message)), status,
        ])
    }

    static func clock(_ milliseconds: Int64) -> String {
        let seconds = milliseconds / 1000
        return String(format: "%d:%02d", seconds / 60, seconds % 60)
    }
}

/// `ftgst presets`: the export presets, one JSON object per line.
enum PresetsCommand {
    static let spec = CommandSpec(
        path: ["presets"], synopsis: "presets", summary: "list the export presets",
        usage: ["ftgst presets [--presets DIR]"],
        options: [
            .init(
                name: "presets", value: "DIR", help: "DIR's *.preset files",
                defaultValue: "$FTGST_PRESETS, else the built-in presets", completion: .folder)
        ],
        notes: "prints one JSON object per preset: name, description, extensions, sources, depth, audio, path")

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return
        }
        guard arguments.positionals.isEmpty else { throw usage("presets takes no arguments") }
        for preset in try ExportPresets.all(folder: arguments.string("presets")) { print(preset.json.serialized) }
    }
}

/// `ftgst cancel [--workspace DIR]`: stops the export running in the workspace.
enum CancelCommand {
    static let spec = CommandSpec(
        path: ["cancel"], synopsis: "cancel [--workspace DIR]", summary: "stop the running export",
        usage: ["ftgst cancel [--workspace DIR] [--timeout-ms N]"],
        options: [
            .init(
                name: "workspace", value: "DIR", help: "the export's workspace", defaultValue: "$XDG_RUNTIME_DIR/ftgst",
                completion: .folder),
            .init(name: "timeout-ms", value: "N", help: "how long to wait until it has stopped", defaultValue: "5000"),
        ],
        notes: #"""
            asks the export running in the workspace to stop and waits (up to N ms, 5000) until it has;
            prints {"cancelled":true|false,"workspace":…} (false: no export was running)
            """#)

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return
        }
        guard arguments.positionals.isEmpty else { throw usage("cancel takes no arguments") }
        let result = try await cancelRunningExport(
            workspace: arguments.string("workspace"),
            timeoutMilliseconds: try arguments.int("timeout-ms") ?? 5000)
        print(result.json.serialized)
    }
}
