import Foundation
import FilmtoneCore
import FilmtoneLooks

/// What `runExport` is asked for: `source` decoded, made upright, scaled, looked and encoded with a preset
/// into `output`. The JSON request (`fromJSON`) is `ftgst preview`'s plus the export fields; preview-only
/// fields (timeMs, toleranceMs, format, quality) are accepted and ignored, so one request file serves both.
public struct ExportOptions: Sendable {
    public var source: String
    public var output: String?
    public var headers: [String] = []
    /// A preset name (`ftgst presets`); nil: chosen from the output's extension and the source's kind.
    public var preset: String? = nil
    public var inputLUT: String? = nil
    public var creativeLUT: String? = nil
    public var intensity: Double = 1
    public var interpolation: String = Interpolation.default.rawValue
    /// Bounds of the output size (display size, upright); never upscaled.
    public var maxWidth: Int = 16384
    public var maxHeight: Int = 16384
    /// Keep only [start, end) of the source, in milliseconds of stream time; nil: its beginning / its end.
    public var startMilliseconds: Int64? = nil
    public var endMilliseconds: Int64? = nil
    public var audio: AudioMode = .auto
    /// Bits per channel between decoding and encoding (`auto`: the source's, capped by the preset).
    public var depth: ExportDepth = .auto
    /// Also build (or find) the source's mezzanine first (`ftgst mezzanine`), reported as the `mezzanine` stage.
    public var mezzanine: Bool = false
    /// Replace an existing output (else `WRITE_FAILED`).
    public var overwrite: Bool = false
    /// The workspace (lock, cancel requests, records); nil: `$XDG_RUNTIME_DIR/ftgst` or the cache folder.
    public var workspace: String? = nil
    /// Stop with `CANCELLED` (reason `timeout`) after this long; nil: no limit (a stalled pipeline is still
    /// caught: no new frame for `stallMilliseconds` is an error).
    public var timeoutMilliseconds: Int64? = nil
    public var stallMilliseconds: Int64 = 60_000

    public init(source: String) {
        self.source = source
    }

    static let exportKeys: Set<String> = [
        "preset", "audio", "overwrite", "workspace", "maxWidth", "maxHeight", "timeoutMs", "startMs", "endMs", "depth", "buildMezzanine",
    ]

    /// Reads a JSON request. Unknown keys and wrong types are `INVALID_ARGUMENT`.
    public static func fromJSON(_ data: Data) throws -> ExportOptions {
        func invalid(_ message: String) -> FilmtoneError { FilmtoneError(.invalidArgument, "request: \(message)") }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw invalid("not a JSON object")
        }
        if let unknown = object.keys.filter({ !exportKeys.contains($0) && !PreviewOptions.keys.contains($0) })
            .sorted().first
        {
            throw invalid("unknown key '\(unknown)'")
        }
        // The shared fields are read (and type-checked) by the preview request's reader.
        let shared = object.filter { PreviewOptions.keys.contains($0.key) && $0.key != "timeoutMs" }
        let preview = try PreviewOptions.fromJSON(try JSONSerialization.data(withJSONObject: shared))
        var options = ExportOptions(source: preview.source)
        options.output = preview.output
        options.headers = preview.headers
        options.inputLUT = preview.inputLUT
        options.creativeLUT = preview.creativeLUT
        options.intensity = preview.intensity
        options.interpolation = preview.interpolation
        func whole(_ key: String) throws -> Int64? {
            guard let value = object[key] else { return nil }
            guard let number = value as? NSNumber, !(value is Bool), number.doubleValue.rounded() == number.doubleValue,
                  abs(number.doubleValue) < 1e15 else { throw invalid("'\(key)' must be a whole number") }
            return number.int64Value
        }
        if let value = object["preset"] {
            guard let name = value as? String else { throw invalid("'preset' must be a string") }
            options.preset = name
        }
        if let value = object["audio"] {
            guard let text = value as? String, let mode = AudioMode(rawValue: text) else {
                throw invalid("'audio' must be auto, copy, aac or none")
            }
            options.audio = mode
        }
        if let value = object["depth"] {
            let text = (value as? String) ?? (value as? NSNumber).map { "\($0)" }
            guard let text, let depth = ExportDepth(rawValue: text) else { throw invalid("'depth' must be auto, 8 or 10") }
            options.depth = depth
        }
        if let value = object["buildMezzanine"] {
            guard let flag = value as? Bool else { throw invalid("'buildMezzanine' must be true or false") }
            options.mezzanine = flag
        }
        if let value = object["overwrite"] {
            guard let flag = value as? Bool else { throw invalid("'overwrite' must be true or false") }
            options.overwrite = flag
        }
        if let value = object["workspace"] {
            guard let text = value as? String else { throw invalid("'workspace' must be a string") }
            options.workspace = text
        }
        // maxWidth/maxHeight are the export's own (a preview's default of 1280 would shrink an export).
        if let value = try whole("maxWidth") { options.maxWidth = Int(value) }
        if let value = try whole("maxHeight") { options.maxHeight = Int(value) }
        if let value = try whole("timeoutMs") { options.timeoutMilliseconds = value }
        if let value = try whole("startMs") { options.startMilliseconds = value }
        if let value = try whole("endMs") { options.endMilliseconds = value }
        return options
    }

    /// The request as the sidecar records it.
    var json: JSONValue {
        func optional(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }
        return .object([
            ("source", .string(source)), ("output", optional(output)),
            ("headers", .array(headers.map { .string(HTTPHeader.redacted($0)) })),
            ("preset", optional(preset)), ("inputLut", optional(inputLUT)), ("creativeLut", optional(creativeLUT)),
            ("intensity", .double(intensity)), ("interpolation", .string(interpolation)),
            ("maxWidth", .int(Int64(maxWidth))), ("maxHeight", .int(Int64(maxHeight))),
            ("startMs", startMilliseconds.map { .int($0) } ?? .null),
            ("endMs", endMilliseconds.map { .int($0) } ?? .null),
            ("audio", .string(audio.rawValue)), ("depth", .string(depth.rawValue)), ("overwrite", .bool(overwrite)),
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
        guard let output = options.output, !output.isEmpty else { throw invalid("an output path is required (-o OUT)") }
        guard options.intensity.isFinite, (0...1).contains(options.intensity) else {
            throw invalid("--intensity must be between 0 and 1")
        }
        guard let interpolation = Interpolation(rawValue: options.interpolation) else {
            throw invalid("--interpolation must be tetrahedral, trilinear or nearest")
        }
        guard (1...16384).contains(options.maxWidth) else { throw invalid("--max-width must be 1…16384") }
        guard (1...16384).contains(options.maxHeight) else { throw invalid("--max-height must be 1…16384") }
        if let timeout = options.timeoutMilliseconds, !(1...FrameOptions.maxMilliseconds).contains(timeout) {
            throw invalid("--timeout-ms must be 1…\(FrameOptions.maxMilliseconds)")
        }
        let limit = FrameOptions.maxMilliseconds
        if let start = options.startMilliseconds, !(0...limit).contains(start) {
            throw invalid("--start-ms must be 0…\(limit)")
        }
        if let end = options.endMilliseconds, !(1...limit).contains(end) { throw invalid("--end-ms must be 1…\(limit)") }
        if let start = options.startMilliseconds, let end = options.endMilliseconds, end <= start {
            throw invalid("--end-ms must be after --start-ms")
        }
        guard (1...FrameOptions.maxMilliseconds).contains(options.stallMilliseconds) else {
            throw invalid("the stall limit must be 1…\(FrameOptions.maxMilliseconds) ms")
        }
        source = try MediaSource.parse(options.source)
        headers = try options.headers.map(HTTPHeader.parse)
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        self.output = URL(fileURLWithPath: output, relativeTo: cwd).standardizedFileURL
        if case .local(let path) = source, path == self.output.path {
            throw invalid("the output would overwrite the source: \(path)")
        }
        let slots = [options.inputLUT, options.creativeLUT].map { $0.flatMap { $0.isEmpty ? nil : $0 } }
        for path in slots.compactMap({ $0 }) { _ = try CubeLUT.load(path: path) }
        let paths = slots.map { $0.map { URL(fileURLWithPath: $0, relativeTo: cwd).standardizedFileURL.path } }
        look = paths.allSatisfy({ $0 == nil }) ? nil
            : LookSettings(inputLUT: paths[0], creativeLUT: paths[1], intensity: options.intensity,
                           interpolation: interpolation)
        let folder = options.workspace.map { URL(fileURLWithPath: $0, relativeTo: cwd).standardizedFileURL }
            ?? URL(fileURLWithPath: Workspace.defaultFolder(environment))
        workspace = Workspace(folder: folder)
        self.options = options
    }
}
