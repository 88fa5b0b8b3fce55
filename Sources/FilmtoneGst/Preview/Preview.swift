import Foundation
import FilmtoneCore
import FilmtoneLooks
import ImageCodecs

/// What `Previews.render` is asked for: one upright frame of `source` with the current look, written to `output`.
/// The same fields, with the same names, are read from a JSON request file (`PreviewOptions.fromJSON`), which
/// `ftgst export` will take too.
public struct PreviewOptions: Sendable {
    public var source: String
    public var output: String?
    public var headers: [String] = []
    public var inputLUT: String? = nil
    public var creativeLUT: String? = nil
    /// 0…1: how much of the creative look is applied.
    public var intensity: Double = 1
    /// `tetrahedral`, `trilinear` or `nearest`.
    public var interpolation: String = Interpolation.default.rawValue
    public var timeMilliseconds: Int64 = 0
    /// 0: the frame on screen at the time (a preview shows what the export will show there).
    public var toleranceMilliseconds: Int64 = 0
    public var maxWidth: Int = 1280
    public var maxHeight: Int = 1280
    public var format: String = "png"
    public var quality: Double = 0.9
    public var timeoutMilliseconds: Int64 = 30_000
    /// `auto`: read the source's mezzanine when a ready one is in `mezzanineDirectory` (never builds one; see
    /// `Mezzanines.prepare`); `off`: always decode the source.
    public var mezzanine: String = "auto"
    /// nil: `$XDG_CACHE_HOME/ftgst/mezzanines` (or `~/.cache/ftgst/mezzanines`), where `ftgst mezzanine` builds.
    public var mezzanineDirectory: String? = nil

    public init(source: String) {
        self.source = source
    }

    /// The request keys, as written in JSON.
    static let keys: Set<String> = [
        "source", "output", "headers", "inputLut", "creativeLut", "intensity", "interpolation", "timeMs",
        "toleranceMs", "maxWidth", "maxHeight", "format", "quality", "timeoutMs", "mezzanine", "mezzanineDir",
    ]

    /// Reads a JSON request: an object with the keys above (`source` required). Unknown keys and wrong types are
    /// `INVALID_ARGUMENT`, so a typo never silently falls back to a default.
    public static func fromJSON(_ data: Data) throws -> PreviewOptions {
        func invalid(_ message: String) -> FilmtoneError { FilmtoneError(.invalidArgument, "request: \(message)") }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw invalid("not a JSON object")
        }
        if let unknown = object.keys.filter({ !keys.contains($0) }).sorted().first {
            throw invalid("unknown key '\(unknown)'")
        }
        func string(_ key: String) throws -> String? {
            guard let value = object[key] else { return nil }
            guard let text = value as? String else { throw invalid("'\(key)' must be a string") }
            return text
        }
        func number(_ key: String) throws -> Double? {
            guard let value = object[key] else { return nil }
            guard let number = value as? NSNumber, !(value is Bool), number.doubleValue.isFinite else {
                throw invalid("'\(key)' must be a number")
            }
            return number.doubleValue
        }
        func whole(_ key: String) throws -> Int64? {
            guard let value = try number(key) else { return nil }
            guard value.rounded() == value, abs(value) < 1e15 else { throw invalid("'\(key)' must be a whole number") }
            return Int64(value)
        }
        guard let source = try string("source") else { throw invalid("'source' is required") }
        var options = PreviewOptions(source: source)
        options.output = try string("output")
        if let headers = object["headers"] {
            guard let list = headers as? [String] else { throw invalid("'headers' must be a list of strings") }
            options.headers = list
        }
        options.inputLUT = try string("inputLut")
        options.creativeLUT = try string("creativeLut")
        if let value = try number("intensity") { options.intensity = value }
        if let value = try string("interpolation") { options.interpolation = value }
        if let value = try whole("timeMs") { options.timeMilliseconds = value }
        if let value = try whole("toleranceMs") { options.toleranceMilliseconds = value }
        if let value = try whole("maxWidth") { options.maxWidth = Int(value) }
        if let value = try whole("maxHeight") { options.maxHeight = Int(value) }
        if let value = try string("format") { options.format = value }
        if let value = try number("quality") { options.quality = value }
        if let value = try whole("timeoutMs") { options.timeoutMilliseconds = value }
        if let value = try string("mezzanine") { options.mezzanine = value }
        options.mezzanineDirectory = try string("mezzanineDir")
        return options
    }
}

/// A rendered preview.
public struct PreviewResult: Equatable, Sendable {
    public var path: String
    public var width: Int
    public var height: Int
    /// Stream time of the frame shown (0 for photos).
    public var timeMilliseconds: Int64
    /// Wall time of decoding, look, scaling and encoding.
    public var renderMilliseconds: Int64
    /// True when the frame was read from the source's mezzanine rather than decoded from the source.
    public var usedMezzanine: Bool = false

    /// The CLI's result object: path, width, height, timeMs, renderMs, mezzanine.
    public var json: JSONValue {
        .object([
            ("path", .string(path)), ("width", .int(Int64(width))), ("height", .int(Int64(height))),
            ("timeMs", .int(timeMilliseconds)), ("renderMs", .int(renderMilliseconds)),
            ("mezzanine", .bool(usedMezzanine)),
        ])
    }
}

/// A validated preview request.
struct PreviewRequest {
    var frame: FrameRequest
    var format: ImageFormat
    var quality: Double
    var output: URL
    /// Where to look for a ready mezzanine; nil with `mezzanine: off`.
    var mezzanines: MezzanineStore?

    /// Checks every option (INVALID_ARGUMENT, INVALID_URL, UNSUPPORTED_FORMAT), then the LUT files (FILE_NOT_FOUND,
    /// LUT_INVALID) — parsed here once so a bad file is reported before any decoding starts.
    init(_ options: PreviewOptions) throws {
        func invalid(_ message: String) -> FilmtoneError { FilmtoneError(.invalidArgument, message) }
        guard let output = options.output, !output.isEmpty else { throw invalid("an output path is required (-o OUT)") }
        guard options.intensity.isFinite, (0...1).contains(options.intensity) else {
            throw invalid("--intensity must be between 0 and 1")
        }
        guard let interpolation = Interpolation(rawValue: options.interpolation) else {
            throw invalid("--interpolation must be tetrahedral, trilinear or nearest")
        }
        let common = try FrameOptions(
            source: options.source, headers: options.headers, timeMilliseconds: options.timeMilliseconds,
            toleranceMilliseconds: options.toleranceMilliseconds, maxWidth: options.maxWidth,
            maxHeight: options.maxHeight, format: options.format, quality: options.quality,
            timeoutMilliseconds: options.timeoutMilliseconds)
        guard ["auto", "off"].contains(options.mezzanine) else { throw invalid("--mezzanine must be auto or off") }
        let slots = [options.inputLUT, options.creativeLUT].map { $0.flatMap { $0.isEmpty ? nil : $0 } }
        for path in slots.compactMap({ $0 }) { _ = try CubeLUT.load(path: path) }
        self.output = URL(fileURLWithPath: output, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
            .standardizedFileURL
        format = common.format
        quality = common.quality
        frame = common.frameRequest
        mezzanines = options.mezzanine == "off" ? nil : MezzanineStore(directory: URL(
            fileURLWithPath: options.mezzanineDirectory ?? MezzanineStore.defaultDirectory()).standardizedFileURL)
        frame.look = LookSettings(inputLUT: slots[0].map { URL(fileURLWithPath: $0).standardizedFileURL.path },
                                  creativeLUT: slots[1].map { URL(fileURLWithPath: $0).standardizedFileURL.path },
                                  intensity: options.intensity, interpolation: interpolation)
    }
}

/// One frame of the current look.
public enum Previews {
    /// Renders the preview to `options.output`, atomically: on any failure nothing is left at the output path.
    /// Cancelling the task stops it within ~50 ms (`CANCELLED`).
    public static func render(_ options: PreviewOptions) async throws -> PreviewResult {
        let request = try PreviewRequest(options)
        return try await runDetached { isCancelled in try run(request, isCancelled: isCancelled) }
    }

    static func run(_ request: PreviewRequest, isCancelled: @escaping () -> Bool) throws -> PreviewResult {
        let started = ContinuousClock.now
        try request.frame.source.checkExists()
        var frame: GrabbedFrame
        var usedMezzanine = false
        if let fromMezzanine = try grabFromMezzanine(request, isCancelled: isCancelled) {
            frame = fromMezzanine
            usedMezzanine = true
        } else {
            frame = try FrameGrabber(request: request.frame, isCancelled: isCancelled).grab()
        }
        if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }
        let bytes = try ImageEncoder.encode(frame.image, format: request.format, quality: request.quality)
        let elapsed = ContinuousClock.now - started
        try StagedFile.write(bytes, to: request.output)
        let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
        return PreviewResult(path: request.output.path, width: frame.image.width, height: frame.image.height,
                             timeMilliseconds: frame.time.milliseconds, renderMilliseconds: milliseconds,
                             usedMezzanine: usedMezzanine)
    }

    /// The frame read from a ready mezzanine of the source (`MezzanineRecipe.choose`), at the size the source
    /// would have given; nil when there is none, or when reading it fails for any reason but cancellation — the
    /// source is then decoded as if there were none (a mezzanine is a cache, never the only copy).
    private static func grabFromMezzanine(_ request: PreviewRequest, isCancelled: @escaping () -> Bool) throws
        -> GrabbedFrame?
    {
        guard let store = request.mezzanines, let identity = try? MezzanineStore.identity(of: request.frame.source),
              let chosen = MezzanineRecipe.choose(store.readySlots(for: identity), maxWidth: request.frame.maxWidth,
                                                  maxHeight: request.frame.maxHeight)
        else { return nil }
        var frameRequest = request.frame
        frameRequest.source = .local(path: store.url(MezzanineRecipe.videoName(slot: chosen.slot)).path)
        frameRequest.headers = []
        frameRequest.outputSize = chosen.size
        do {
            let frame = try FrameGrabber(request: frameRequest, isCancelled: isCancelled).grab()
            store.touch(slot: chosen.slot)
            return frame
        } catch let error as FilmtoneError where error.code != .cancelled {
            return nil
        }
    }
}
