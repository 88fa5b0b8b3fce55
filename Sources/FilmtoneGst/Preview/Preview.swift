import FilmtoneCore
import FilmtoneLooks
import Foundation
import GstKit
import ImageCodecs

/// What `Previews.render` is asked for: one upright frame of `source` with the current look, written to `output`.
/// The shared fields (source, output, headers, LUTs, intensity, interpolation, box, timeout) are `render`'s and
/// read as this type's own (`RenderJobOptions`). The same fields, with the same names, are read from a JSON request
/// file (`PreviewOptions.fromJSON`), which `ftgst export` takes too.
public struct PreviewOptions: RenderJobOptions, Sendable {
    public var render: RenderOptions
    public var timeMilliseconds: Int64 = 0
    /// 0: the frame on screen at the time (a preview shows what the export will show there).
    public var toleranceMilliseconds: Int64 = 0
    /// `png` or `jpeg` (`jpg`); nil: the output's extension decides (`.png`, `.jpg`, `.jpeg`), else PNG. An
    /// extension that names another format, or one that disagrees with the format given, is refused
    /// (`PreviewRequest.outputFormat`): the file's name never lies about what it holds.
    public var format: ImageFormat? = nil
    public var quality: Double = 0.9
    /// `on`: PQ and HLG sources are tone-mapped to SDR BT.709; `off`: not (`toneMap` in a request file).
    public var toneMap: ToneMapping = .on
    /// `auto`: read the source's mezzanine when a ready one is in `mezzanineDirectory` (never builds one; see
    /// `Mezzanines.prepare`); `off`: always decode the source.
    public var mezzanine: MezzanineUse = .auto
    /// nil: `$XDG_CACHE_HOME/ftgst/mezzanines` (or `~/.cache/ftgst/mezzanines`), where `ftgst mezzanine` builds.
    public var mezzanineDirectory: String? = nil

    static let defaultTimeoutMilliseconds: Int64 = 30_000

    /// The deadline of the whole job.
    public var timeoutMilliseconds: Int64 {
        get { render.timeoutMilliseconds ?? PreviewOptions.defaultTimeoutMilliseconds }
        set { render.timeoutMilliseconds = newValue }
    }

    public init(source: String) {
        render = RenderOptions(source: source, maxWidth: 1280, maxHeight: 1280)
    }

    /// The keys only a preview has (an export request accepts and ignores them).
    static let ownKeys: Set<String> = [
        "timeMs", "toleranceMs", "format", "quality", "toneMap", "mezzanine", "mezzanineDir",
    ]

    /// The request keys, as written in JSON.
    static let keys = RenderOptions.keys.union(ownKeys)

    /// Reads a JSON request: an object with the keys above (`source` required). Unknown keys and wrong types are
    /// `INVALID_ARGUMENT`, so a typo never silently falls back to a default.
    public static func fromJSON(_ data: Data) throws -> PreviewOptions {
        try fromJSON(try JSONRequest(data))
    }

    /// The same, from an object already read (a `preview` line of `ftgst batch`).
    static func fromJSON(_ request: JSONRequest) throws -> PreviewOptions {
        try request.refuseUnknownKeys(keys)
        var options = PreviewOptions(source: "")
        try options.render.read(request)
        try options.readOwnFields(request)
        return options
    }

    /// Reads (and type-checks) the preview's own keys over these options.
    mutating func readOwnFields(_ request: JSONRequest) throws {
        if let value = try request.whole("timeMs") { timeMilliseconds = value }
        if let value = try request.whole("toleranceMs") { toleranceMilliseconds = value }
        if let value = try request.string("format") { format = try ImageFormat.parse(value) }
        if let value = try request.number("quality") { quality = value }
        if let value = try request.string("toneMap") { toneMap = try ToneMapping.parse(value) }
        if let value = try request.string("mezzanine") { mezzanine = try MezzanineUse.parse(value) }
        mezzanineDirectory = try request.string("mezzanineDir")
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
    /// `parseLUTs` false (the engine's warm path, `WarmPreviews`): the LUT paths are only resolved; the look cache
    /// parses them (with the same errors) when the file is new or changed.
    init(_ options: PreviewOptions, parseLUTs: Bool = true) throws {
        let render = try RenderRequest(options.render)
        // The preview must not be written over what it reads, whatever the path (a symlink, a hard link): the
        // source, or a LUT file. The staged write would replace it; nothing that was there would be left.
        var inputs: [(String, String)] = []
        if case .local(let path) = try MediaSource.parse(options.source) { inputs.append((path, "source")) }
        let luts = render.lookPaths()
        inputs += [luts.inputLUT.map { ($0, "input LUT") }, luts.creativeLUT.map { ($0, "creative LUT") }]
            .compactMap { $0 }
        for (path, what) in inputs where ExportRequest.isSameFile(path, render.output.path) {
            throw FilmtoneError(.invalidArgument, "the preview would overwrite the \(what): \(path)")
        }
        let common = try FrameOptions(
            source: options.source, headers: options.headers, timeMilliseconds: options.timeMilliseconds,
            toleranceMilliseconds: options.toleranceMilliseconds, maxWidth: options.maxWidth,
            maxHeight: options.maxHeight,
            format: try PreviewRequest.outputFormat(named: options.format, output: render.output),
            quality: options.quality,
            timeoutMilliseconds: options.timeoutMilliseconds, toneMap: options.toneMap)
        try CacheDirectory.validate(options.mezzanineDirectory, option: "--mezzanine-dir")
        output = render.output
        format = common.format
        quality = common.quality
        frame = common.frameRequest
        // A mezzanine holds a PQ or HLG source tone-mapped (`MezzanineRecipe`): never read with the tone map off.
        mezzanines =
            options.mezzanine == .off || !common.frameRequest.toneMap
            ? nil
            : MezzanineStore(
                directory: URL(
                    fileURLWithPath: options.mezzanineDirectory ?? MezzanineStore.defaultDirectory()
                ).standardizedFileURL)
        frame.look = try parseLUTs ? render.look() : render.lookPaths()
    }
}

extension PreviewRequest {
    /// The encoding of a preview written to `output`: the one named (`--format`), else the extension's (`.png`; `.jpg` or `.jpeg`), else PNG when the name has no
    /// extension. An extension that is neither (`x.webp`, `x.gif`) is `UNSUPPORTED_FORMAT`, and one that
    /// disagrees with the format named (`x.jpg` with `--format png`) `INVALID_ARGUMENT`: either would be a file
    /// whose name says it is something else, as an export refuses an extension no preset writes.
    static func outputFormat(named chosen: ImageFormat?, output: URL) throws -> ImageFormat {
        let ext = output.pathExtension
        guard !ext.isEmpty else { return chosen ?? .png }
        guard let implied = try? ImageFormat.parse(ext) else {
            throw FilmtoneError(
                .unsupportedFormat,
                "a preview is written as .png or .jpg/.jpeg, not '.\(ext)' (\(output.lastPathComponent))")
        }
        if let chosen, chosen != implied {
            throw FilmtoneError(
                .invalidArgument,
                "--format \(chosen.rawValue) does not match the output's extension '.\(ext)' "
                    + "(name it .\(chosen.fileExtension), or leave --format out)")
        }
        return implied
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

    /// `stamp`: the request key written into the image (`ImageStamp`, as a thumbnail's), so that `ftgst batch`
    /// can tell a preview it already made; nil (the `preview` command) writes the plain image.
    static func run(_ request: PreviewRequest, stamp: String? = nil, isCancelled: @escaping () -> Bool) throws
        -> PreviewResult
    {
        let started = ContinuousClock.now
        let (frame, usedMezzanine) = try grab(request, isCancelled: isCancelled)
        return try write(
            frame, request, usedMezzanine: usedMezzanine, started: started, stamp: stamp, isCancelled: isCancelled)
    }

    /// The frame the request shows: from a ready mezzanine when there is one, else decoded from the source, with
    /// the request's look applied by `ftlut` (none when `request.frame.look` is nil: the upright scaled RGB frame
    /// `ftlut` would have been given, which the warm path caches).
    /// `frames` grabs one `FrameRequest` (of the source or of its mezzanine): a one-shot `FrameGrabber` unless
    /// given, the engine's kept pipelines when given (`WarmPreviews`).
    static func grab(
        _ request: PreviewRequest, isCancelled: @escaping () -> Bool,
        frames: ((FrameRequest) throws -> GrabbedFrame)? = nil
    ) throws -> (GrabbedFrame, Bool) {
        try request.frame.source.checkExists()
        let grab = frames ?? { try FrameGrabber(request: $0, isCancelled: isCancelled).grab() }
        if let fromMezzanine = try grabFromMezzanine(request, frames: grab) {
            return (fromMezzanine, true)
        }
        return (try grab(request.frame), false)
    }

    /// Encodes `frame` and writes it to the request's output (atomically).
    static func write(
        _ frame: GrabbedFrame, _ request: PreviewRequest, usedMezzanine: Bool, started: ContinuousClock.Instant,
        stamp: String? = nil, isCancelled: () -> Bool
    ) throws -> PreviewResult {
        if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }
        var bytes = try ImageEncoder.encode(frame.image, format: request.format, quality: request.quality)
        if let stamp {
            bytes = ImageStamp.insert(
                timeMilliseconds: frame.time.milliseconds, request: stamp, into: bytes, format: request.format)
        }
        let elapsed = ContinuousClock.now - started
        try StagedFile.write(bytes, to: request.output)
        let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
        return PreviewResult(
            path: request.output.path, width: frame.image.width, height: frame.image.height,
            timeMilliseconds: frame.time.milliseconds, renderMilliseconds: milliseconds,
            usedMezzanine: usedMezzanine)
    }

    /// A mezzanine frame's duration, from its manifest (the mean over the file); nil when it cannot be known.
    static func frameDuration(_ manifest: MezzanineManifest) -> ClockTime? {
        guard manifest.frames > 0, manifest.durationMilliseconds > 0 else { return nil }
        return ClockTime(nanoseconds: UInt64(manifest.durationMilliseconds) * 1_000_000 / UInt64(manifest.frames))
    }

    /// The frame read from a ready mezzanine of the source (`MezzanineRecipe.choose`), at the size the source
    /// would have given; nil when there is none, or when reading it fails for any reason but cancellation — the
    /// source is then decoded as if there were none (a mezzanine is a cache, never the only copy).
    private static func grabFromMezzanine(_ request: PreviewRequest, frames: (FrameRequest) throws -> GrabbedFrame)
        throws -> GrabbedFrame?
    {
        guard let store = request.mezzanines, let identity = try? MezzanineStore.identity(of: request.frame.source),
            let chosen = MezzanineRecipe.choose(
                store.readySlots(for: identity), maxWidth: request.frame.maxWidth,
                maxHeight: request.frame.maxHeight)
        else { return nil }
        var frameRequest = request.frame
        frameRequest.source = .local(path: store.url(MezzanineRecipe.videoName(slot: chosen.slot)).path)
        frameRequest.headers = []
        frameRequest.outputSize = chosen.size
        frameRequest.allIntra = true
        do {
            let frame = try frames(frameRequest)
            // The manifest's checks (size, mtime, inode) cannot see bytes changed in place: a damaged frame is
            // dropped by the decoder and the next one comes out instead. A frame that does not answer the request
            // (not on screen at the time, nor within the tolerance) is refused, and the source is decoded.
            guard
                FrameRecipe.accepts(
                    frame: frame.time, duration: frameDuration(chosen.manifest), target: request.frame.time,
                    tolerance: request.frame.tolerance)
            else { return nil }
            store.touch(slot: chosen.slot)
            return frame
        } catch let error as FilmtoneError where error.code != .cancelled {
            return nil
        }
    }
}
