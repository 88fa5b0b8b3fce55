import FilmtoneCore
import FilmtoneLooks
import Foundation
import Glibc

/// What `runExport` is asked for: `source` decoded, made upright, scaled, looked and encoded with a preset
/// into `output`. The fields it shares with a preview (source, output, headers, LUTs, intensity, interpolation,
/// box, timeout) are `render`'s and read as this type's own (`RenderJobOptions`). The JSON request (`fromJSON`)
/// is `ftgst preview`'s plus the export fields; `toneMap` is read as a preview reads it; preview-only fields
/// (timeMs, toleranceMs, format, quality, mezzanine, mezzanineDir) are type-checked and ignored, so one request file
/// serves both.
public struct ExportOptions: RenderJobOptions, Sendable {
    /// The box defaults to 16384×16384: the source's own size, never upscaled.
    public var render: RenderOptions
    /// A preset name (`ftgst presets`); nil: chosen from the output's extension and the source's kind.
    public var preset: String? = nil
    /// A folder of `*.preset` files to choose from instead of the built-in presets; nil: `$FTGST_PRESETS` when set,
    /// else the presets compiled into the library (`ExportPresets`).
    public var presets: String? = nil
    /// Keep only [start, end) of the source, in milliseconds of stream time; nil: its beginning / its end.
    public var startMilliseconds: Int64? = nil
    public var endMilliseconds: Int64? = nil
    public var audio: AudioMode = .auto
    /// Bits per channel between decoding and encoding (`auto`: the source's, capped by the preset).
    public var depth: ExportDepth = .auto
    /// `on`: a PQ or HLG source is tone-mapped to SDR BT.709 before the look, as its preview shows it; `off`: its
    /// codes and colour tags are kept (an HDR delivery).
    public var toneMap: ToneMapping = .on
    /// Also build (or find) the source's mezzanine first (`ftgst mezzanine`), reported as the `mezzanine` stage.
    public var mezzanine: Bool = false
    /// Replace an existing output (else `WRITE_FAILED`).
    public var overwrite: Bool = false
    /// The workspace (lock, cancel requests, records); nil: `$XDG_RUNTIME_DIR/ftgst` or the cache folder.
    public var workspace: String? = nil
    /// No new frame for this long is an error (a stalled pipeline), with or without a timeout.
    public var stallMilliseconds: Int64 = 60_000
    /// Show the export on the desktop while it runs (`ExportDesktop`: a notification with Cancel, dock progress,
    /// suspend inhibited, low-memory warnings counted), where the session bus offers each.
    public var notify: Bool = false
    /// With `notify`: this process stays to answer the last notification's Open and Show in folder (the engine).
    public var notifyAnswersButtons: Bool = false

    /// Stop with `CANCELLED` (reason `timeout`) after this long; nil: no limit (a stalled pipeline is still
    /// caught: no new frame for `stallMilliseconds` is an error).
    public var timeoutMilliseconds: Int64? {
        get { render.timeoutMilliseconds }
        set { render.timeoutMilliseconds = newValue }
    }

    public init(source: String) {
        render = RenderOptions(source: source, maxWidth: 16384, maxHeight: 16384)
    }

    /// The keys only an export has.
    static let ownKeys: Set<String> = [
        "preset", "presets", "audio", "overwrite", "workspace", "startMs", "endMs", "depth", "buildMezzanine",
    ]

    /// Reads a JSON request: a preview's (`PreviewOptions.fromJSON`) plus the keys above. Unknown keys and wrong
    /// types are `INVALID_ARGUMENT`.
    public static func fromJSON(_ data: Data) throws -> ExportOptions {
        let request = try JSONRequest(data)
        try request.refuseUnknownKeys(PreviewOptions.keys.union(ownKeys))
        // The shared fields over the export's defaults: maxWidth/maxHeight left out keep 16384 (a preview's 1280
        // would shrink an export), timeoutMs left out is no limit.
        var options = ExportOptions(source: "")
        try options.render.read(request)
        // A preview's own fields are checked as a preview would check them, then ignored.
        var preview = PreviewOptions(source: options.source)
        try preview.readOwnFields(request)
        options.toneMap = preview.toneMap
        if let name = try request.string("preset") { options.preset = name }
        if let folder = try request.string("presets") { options.presets = folder }
        if let value = try request.string("audio") {
            guard let mode = AudioMode(rawValue: value) else {
                throw request.invalid("'audio' must be auto, copy, aac or none")
            }
            options.audio = mode
        }
        if let value = request.value("depth") {
            let text: String? =
                switch value {
                case .string(let text): text
                case .int(let number): String(number)
                case .double(let number) where number == number.rounded() && abs(number) < 100: String(Int(number))
                default: nil
                }
            guard let text, let depth = ExportDepth(rawValue: text) else {
                throw request.invalid("'depth' must be auto, 8 or 10")
            }
            options.depth = depth
        }
        if let flag = try request.bool("buildMezzanine") { options.mezzanine = flag }
        if let flag = try request.bool("overwrite") { options.overwrite = flag }
        if let text = try request.string("workspace") { options.workspace = text }
        if let value = try request.whole("startMs") { options.startMilliseconds = value }
        if let value = try request.whole("endMs") { options.endMilliseconds = value }
        return options
    }

    /// The request as the sidecar records it.
    var json: JSONValue {
        func optional(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }
        return .object([
            ("source", .string(source)), ("output", optional(output)),
            ("headers", .array(headers.map { .string(HTTPHeader.redacted($0)) })),
            ("preset", optional(preset)), ("presets", optional(presets)), ("inputLut", optional(inputLUT)),
            ("creativeLut", optional(creativeLUT)),
            ("intensity", .double(intensity)), ("interpolation", .string(interpolation.rawValue)),
            ("maxWidth", .int(Int64(maxWidth))), ("maxHeight", .int(Int64(maxHeight))),
            ("startMs", startMilliseconds.map { .int($0) } ?? .null),
            ("endMs", endMilliseconds.map { .int($0) } ?? .null),
            ("audio", .string(audio.rawValue)), ("depth", .string(depth.rawValue)),
            ("toneMap", .string(toneMap.rawValue)), ("overwrite", .bool(overwrite)),
            ("buildMezzanine", .bool(mezzanine)),
            ("timeoutMs", timeoutMilliseconds.map { .int($0) } ?? .null),
        ])
    }
}

extension HTTPHeader {
    /// A header line as records keep it: the name, not the value (custom headers such as `X-Token` carry
    /// credentials as often as `Authorization` does).
    static func redacted(_ line: String) -> String {
        guard let colon = line.firstIndex(of: ":") else { return "***" }
        return "\(line[..<colon]): ***"
    }
}

/// A validated export request (no file touched yet, except the LUTs, parsed once so a bad one fails first).
struct ExportRequest {
    var options: ExportOptions
    var source: MediaSource
    var headers: [HTTPHeader]
    var output: URL
    var look: LookSettings?
    var workspace: Workspace

    init(_ options: ExportOptions, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        func invalid(_ message: String) -> FilmtoneError { FilmtoneError(.invalidArgument, message) }
        let render = try RenderRequest(options.render)
        try FrameOptions.checkBox(maxWidth: options.maxWidth, maxHeight: options.maxHeight)
        if let timeout = options.timeoutMilliseconds { try FrameOptions.checkTimeout(timeout) }
        let limit = FrameOptions.maxMilliseconds
        if let start = options.startMilliseconds, !(0...limit).contains(start) {
            throw invalid("--start-ms must be 0…\(limit)")
        }
        if let end = options.endMilliseconds, !(1...limit).contains(end) {
            throw invalid("--end-ms must be 1…\(limit)")
        }
        if let start = options.startMilliseconds, let end = options.endMilliseconds, end <= start {
            throw invalid("--end-ms must be after --start-ms")
        }
        // An empty presets folder value is refused before any probing (the folder itself is read with the presets).
        _ = try ExportPresets.location(folder: options.presets, environment: environment)
        guard (1...limit).contains(options.stallMilliseconds) else {
            throw invalid("the stall limit must be 1…\(limit) ms")
        }
        source = try MediaSource.parse(options.source)
        headers = try options.headers.map(HTTPHeader.parse)
        output = render.output
        // OUT and its sidecar and record must not be one of the inputs, even with --overwrite: whatever the path
        // (a symlink, a hard link), the same file is the same file.
        let targets = [
            ("output", output), ("sidecar", ExportRequest.sidecar(of: output)),
            ("benchmark record", ExportRequest.benchmark(of: output)),
        ]
        func refuseOverwriting(_ input: String, _ what: String) throws {
            for (name, target) in targets where ExportRequest.isSameFile(input, target.path) {
                throw invalid("the \(name) would overwrite the \(what): \(input)")
            }
        }
        if case .local(let path) = source { try refuseOverwriting(path, "source") }
        let look = try render.look()
        for lut in [look.inputLUT, look.creativeLUT].compactMap({ $0 }) { try refuseOverwriting(lut, "LUT") }
        self.look = look.isEmpty ? nil : look
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let folder =
            options.workspace.map { URL(fileURLWithPath: $0, relativeTo: cwd).standardizedFileURL }
            ?? URL(fileURLWithPath: Workspace.defaultFolder(environment))
        workspace = Workspace(folder: folder)
        self.options = options
    }

    /// `OUT.ftgst.json`, the sidecar placed beside OUT.
    var sidecar: URL { ExportRequest.sidecar(of: output) }
    /// `OUT.ftgst-bench.json`, the benchmark record placed beside OUT.
    var benchmark: URL { ExportRequest.benchmark(of: output) }

    static func sidecar(of output: URL) -> URL { URL(fileURLWithPath: output.path + ".ftgst.json") }
    static func benchmark(of output: URL) -> URL { URL(fileURLWithPath: output.path + ".ftgst-bench.json") }

    /// The same path, or two names of one existing file (same device and inode).
    static func isSameFile(_ a: String, _ b: String) -> Bool {
        if (a as NSString).standardizingPath == (b as NSString).standardizingPath { return true }
        var first = stat()
        var second = stat()
        guard stat(a, &first) == 0, stat(b, &second) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }
}
