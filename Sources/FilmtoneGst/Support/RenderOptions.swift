import FilmtoneCore
import FilmtoneLooks
import Foundation

/// What every job that renders a source through a look is asked for (a preview, an export): the source and how
/// to fetch it, the look, the box the picture is fitted into, where to write, and the deadline. `PreviewOptions`
/// and `ExportOptions` keep these in `render` and add their own; the JSON request keys, their reading
/// (`read(_:)`) and their checks (`RenderRequest`) are written here once for both.
public struct RenderOptions: Sendable {
    /// A path, `file://` URI or `http(s)://` URL of a video or photo.
    public var source: String
    public var output: String? = nil
    /// `Name: value` lines sent on every HTTP request.
    public var headers: [String] = []
    public var inputLUT: String? = nil
    public var creativeLUT: String? = nil
    /// 0…1: how much of the creative look is applied.
    public var intensity: Double = 1
    public var interpolation: Interpolation = .default
    /// Bounds of the output size (display size, upright); never upscaled. The default is the job's.
    public var maxWidth: Int
    public var maxHeight: Int
    /// nil: the job's default (a preview's 30 s; an export has none).
    public var timeoutMilliseconds: Int64? = nil

    public init(source: String, maxWidth: Int, maxHeight: Int) {
        self.source = source
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
    }

    /// The request keys, as written in JSON.
    static let keys: Set<String> = [
        "source", "output", "headers", "inputLut", "creativeLut", "intensity", "interpolation", "maxWidth",
        "maxHeight", "timeoutMs",
    ]

    /// Reads the shared fields of a request over these options (keys left out keep their value); `source` is
    /// required. A wrong type is `INVALID_ARGUMENT`.
    mutating func read(_ request: JSONRequest) throws {
        guard let source = try request.string("source") else { throw request.invalid("'source' is required") }
        self.source = source
        output = try request.string("output")
        if let headers = try request.strings("headers") { self.headers = headers }
        inputLUT = try request.string("inputLut")
        creativeLUT = try request.string("creativeLut")
        if let value = try request.number("intensity") { intensity = value }
        if let value = try request.string("interpolation") { interpolation = try Interpolation.parse(value) }
        if let value = try request.whole("maxWidth") { maxWidth = Int(value) }
        if let value = try request.whole("maxHeight") { maxHeight = Int(value) }
        if let value = try request.whole("timeoutMs") { timeoutMilliseconds = value }
    }
}

/// The options of a job built on `RenderOptions` (`PreviewOptions`, `ExportOptions`). The shared fields live in
/// `render`; this protocol's extension gives them back as the job's own properties (`options.creativeLUT = …`),
/// written once for every such job instead of a forwarding copy in each.
public protocol RenderJobOptions {
    var render: RenderOptions { get set }
}

extension RenderJobOptions {
    public var source: String {
        get { render.source }
        set { render.source = newValue }
    }

    public var output: String? {
        get { render.output }
        set { render.output = newValue }
    }

    public var headers: [String] {
        get { render.headers }
        set { render.headers = newValue }
    }

    public var inputLUT: String? {
        get { render.inputLUT }
        set { render.inputLUT = newValue }
    }

    public var creativeLUT: String? {
        get { render.creativeLUT }
        set { render.creativeLUT = newValue }
    }

    public var intensity: Double {
        get { render.intensity }
        set { render.intensity = newValue }
    }

    public var interpolation: Interpolation {
        get { render.interpolation }
        set { render.interpolation = newValue }
    }

    public var maxWidth: Int {
        get { render.maxWidth }
        set { render.maxWidth = newValue }
    }

    public var maxHeight: Int {
        get { render.maxHeight }
        set { render.maxHeight = newValue }
    }
}

// MARK: - Validation

/// The shared fields checked: an output path is given (made absolute), the intensity and interpolation are valid
/// (`INVALID_ARGUMENT`). Touches no file; the LUT files are read by `look()`, which a job calls after its own
/// checks so that every option is checked before any file. The source, headers, box and timeout are checked by
/// the job (`FrameOptions` for previews), whose limits and defaults differ.
struct RenderRequest {
    var output: URL
    private var options: RenderOptions
    private var interpolation: Interpolation

    init(_ options: RenderOptions) throws {
        func invalid(_ message: String) -> FilmtoneError { FilmtoneError(.invalidArgument, message) }
        guard let output = options.output, !output.isEmpty else { throw invalid("an output path is required (-o OUT)") }
        try MediaSource.refuseControlCharacters(output, as: "output path", code: .invalidArgument)
        for lut in [options.inputLUT, options.creativeLUT].compactMap({ $0 }) {
            try MediaSource.refuseControlCharacters(lut, as: "LUT path", code: .invalidArgument)
        }
        guard options.intensity.isFinite, (0...1).contains(options.intensity) else {
            throw invalid("--intensity must be between 0 and 1")
        }
        self.output = URL(fileURLWithPath: output, relativeTo: RenderRequest.currentDirectory).standardizedFileURL
        self.options = options
        self.interpolation = options.interpolation
    }

    /// The look, both LUT files parsed once here (`FILE_NOT_FOUND`, `LUT_INVALID`) so that a bad one fails before
    /// any decoding; their paths made absolute, an empty path an empty slot.
    func look() throws -> LookSettings {
        let slots = [options.inputLUT, options.creativeLUT].map { $0.flatMap { $0.isEmpty ? nil : $0 } }
        for path in slots.compactMap({ $0 }) { _ = try CubeLUT.load(path: path) }
        return lookPaths()
    }

    /// The look's settings with its LUT paths made absolute (an empty path an empty slot), the files not read.
    func lookPaths() -> LookSettings {
        let slots = [options.inputLUT, options.creativeLUT].map { $0.flatMap { $0.isEmpty ? nil : $0 } }
        let paths = slots.map {
            $0.map { URL(fileURLWithPath: $0, relativeTo: RenderRequest.currentDirectory).standardizedFileURL.path }
        }
        return LookSettings(
            inputLUT: paths[0], creativeLUT: paths[1], intensity: options.intensity,
            interpolation: interpolation)
    }

    private static var currentDirectory: URL { URL(fileURLWithPath: FileManager.default.currentDirectoryPath) }
}

extension LookSettings {
    /// Neither slot holds a LUT: the look changes nothing.
    var isEmpty: Bool { inputLUT == nil && creativeLUT == nil }
}
