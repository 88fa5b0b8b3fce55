import FilmtoneCore
import Foundation
import GstKit
import ImageCodecs

/// What `Thumbnails.make` is asked for. Defaults match `ftgst thumb`'s.
public struct ThumbnailOptions: Sendable {
    /// A path, `file://` URI or `http(s)://` URL.
    public var source: String
    /// Requested time; ignored for photos.
    public var timeMilliseconds: Int64 = 0
    /// How far from the requested time the returned frame may be; 0 asks for the exact frame.
    public var toleranceMilliseconds: Int64 = 2000
    public var maxWidth: Int = 512
    public var maxHeight: Int = 512
    public var format: ImageFormat = .jpeg
    /// 0…1, JPEG only.
    public var quality: Double = 0.9
    /// `on`: PQ and HLG sources are tone-mapped to SDR BT.709; `off`: not.
    public var toneMap: ToneMapping = .on
    /// nil: `$XDG_CACHE_HOME/ftgst/thumbnails` (or `~/.cache/ftgst/thumbnails`).
    public var cacheDirectory: String? = nil
    /// nil: `thumb-<uuid>`. No `/`, no `..`. `.jpg`/`.png` is added unless it ends with the format's extension.
    public var cacheName: String? = nil
    /// A file of the caller's own instead of a cache entry: written there (atomically, no stamp, never a cache
    /// hit, never evicted). Its extension (`.jpg`, `.jpeg`, `.png`) must agree with `format`; `cacheDirectory` and
    /// `cacheName` must then be nil.
    public var output: String? = nil
    public var cacheCapMegabytes: Int64 = 100
    /// The largest cap, which nothing is evicted under (not even listed): `ftgst batch`'s outputs.
    public static let uncappedMegabytes: Int64 = 1 << 30
    /// `Name: value` lines sent on every HTTP request.
    public var headers: [String] = []
    /// The deadline for the whole job.
    public var timeoutMilliseconds: Int64 = 30_000

    public init(source: String) {
        self.source = source
    }
}

/// A finished thumbnail.
public struct ThumbnailResult: Equatable, Sendable {
    /// `file://` URI of the image.
    public var uri: String
    public var path: String
    public var width: Int
    public var height: Int
    /// Stream time of the frame actually returned (0 for photos).
    public var timeMilliseconds: Int64
    public var format: ImageFormat
    /// True when an existing `cacheName` made for the same request was returned without decoding.
    public var cached: Bool
}

/// A validated request: every value checked, the source parsed, the output path resolved.
struct ThumbnailRequest {
    var frame: FrameRequest
    var format: ImageFormat
    var quality: Double
    var cacheDirectory: URL
    var fileName: String
    var cacheCapBytes: Int64
    /// `output` is the caller's own file (`-o`), not a cache entry.
    var isOwnFile = false
    /// `--time auto`: the time is picked while decoding, so the key says `auto` instead of a time.
    var picksTime = false

    var source: MediaSource { frame.source }
    var time: ClockTime { frame.time }
    var tolerance: ClockTime { frame.tolerance }
    var output: URL { cacheDirectory.appendingPathComponent(fileName) }

    /// The key stamped into a cache entry and compared on a hit: SHA-256 of everything the picture depends on —
    /// the source's identity (location; for a local file also size, mtime in ns and inode), time, tolerance, box,
    /// format, (JPEG) quality and the tone-map setting — in a fixed text form. Pure.
    func cacheKey(source identity: SourceIdentity) -> String {
        let text =
            (["ftgst-thumbnail v1"] + identity.keyLines() + [
                "time-ms \(picksTime ? "auto" : String(time.milliseconds))",
                "tolerance-ms \(tolerance.milliseconds)", "box \(frame.maxWidth)x\(frame.maxHeight)",
                "format \(format.rawValue)", "quality \(format == .jpeg ? String(quality) : "-")",
                "tone-map \(frame.toneMap ? "on" : "off")",
            ]).joined(separator: "\n")
        return SHA256.hex(of: Array(text.utf8))
    }

    /// The format a file name's extension names (`jpg`, `jpeg`, `png`, any case); nil for any other.
    static func format(ofFileNamed name: String) -> ImageFormat? {
        switch URL(fileURLWithPath: name).pathExtension.lowercased() {
        case "jpg", "jpeg": return .jpeg
        case "png": return .png
        default: return nil
        }
    }

    /// Checks every option; throws `INVALID_ARGUMENT`, `INVALID_URL` or `UNSUPPORTED_FORMAT`. Touches no file.
    init(_ options: ThumbnailOptions, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        func invalid(_ message: String) -> FilmtoneError { FilmtoneError(.invalidArgument, message) }
        guard (1...(1 << 30)).contains(options.cacheCapMegabytes) else {
            throw invalid("--cache-cap-mb must be 1…\(1 << 30)")
        }
        try CacheDirectory.validate(options.cacheDirectory, option: "--cache-dir")
        for (text, what) in [
            (options.cacheDirectory, "--cache-dir"), (options.cacheName, "--cache-name"), (options.output, "-o path"),
        ] {
            if let text { try MediaSource.refuseControlCharacters(text, as: what, code: .invalidArgument) }
        }
        let name = options.cacheName ?? "thumb-\(UUID().uuidString.lowercased())"
        guard !name.isEmpty, !name.contains("/"), !name.contains(".."), !name.contains("\0"), !name.hasPrefix(".")
        else { throw invalid("--cache-name must be a plain file name (no '/', no '..', not hidden): \(name)") }
        if let output = options.output {
            guard options.cacheDirectory == nil, options.cacheName == nil else {
                throw invalid("-o writes a file of its own: it takes no --cache-dir or --cache-name")
            }
            guard !output.isEmpty, !output.contains("\0"), !output.hasSuffix("/") else {
                throw invalid("-o must name a file")
            }
        }
        let common = try FrameOptions(
            source: options.source, headers: options.headers, timeMilliseconds: options.timeMilliseconds,
            toleranceMilliseconds: options.toleranceMilliseconds, maxWidth: options.maxWidth,
            maxHeight: options.maxHeight, format: options.format, quality: options.quality,
            timeoutMilliseconds: options.timeoutMilliseconds, toneMap: options.toneMap)
        frame = common.frameRequest
        format = common.format
        quality = common.quality
        cacheCapBytes = options.cacheCapMegabytes * 1024 * 1024
        if let output = options.output {
            guard let named = ThumbnailRequest.format(ofFileNamed: output) else {
                throw FilmtoneError(.unsupportedFormat, "-o must end in .jpg, .jpeg or .png: \(output)")
            }
            guard named == format else {
                throw invalid("-o \(output) names a \(named.rawValue) file but the format is \(format.rawValue)")
            }
            let file = URL(fileURLWithPath: output).standardizedFileURL
            cacheDirectory = file.deletingLastPathComponent()
            fileName = file.lastPathComponent
            isOwnFile = true
            if case .local(let path) = frame.source, ExportRequest.isSameFile(path, file.path) {
                throw invalid("-o is the source itself: \(output)")
            }
            return
        }
        cacheDirectory = URL(
            fileURLWithPath: options.cacheDirectory ?? ThumbnailRequest.defaultCacheDirectory(environment))
        // `x.jpg` stays `x.jpg` (not `x.jpg.jpg`); `x.png` asked for as JPEG is a contradiction, not a name.
        if let named = ThumbnailRequest.format(ofFileNamed: name) {
            guard named == format else {
                throw invalid(
                    "--cache-name \(name) names a \(named.rawValue) file but the format is \(format.rawValue)")
            }
            fileName = name
        } else {
            fileName = "\(name).\(format.fileExtension)"
        }
        // `--cache-dir . --cache-name photo` next to photo.jpg names the source itself (or a link to it): refused,
        // as -o is, before anything is written over it.
        let target = URL(fileURLWithPath: fileName, relativeTo: cacheDirectory).standardizedFileURL.path
        if case .local(let path) = frame.source, ExportRequest.isSameFile(path, target) {
            throw invalid("--cache-dir and --cache-name name the source itself: \(target)")
        }
    }

    /// `$XDG_CACHE_HOME/ftgst/thumbnails`, else `$HOME/.cache/ftgst/thumbnails`.
    static func defaultCacheDirectory(_ environment: [String: String]) -> String {
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return xdg + "/ftgst/thumbnails" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.cache/ftgst/thumbnails"
    }
}

/// Thumbnails of videos and photos, local or remote.
public enum Thumbnails {
    /// Makes (or returns from the cache) one thumbnail. Throws `FilmtoneError`. Cancelling the task stops the
    /// pipeline within ~50 ms and throws `CANCELLED`; nothing is left in the cache folder on any failure.
    public static func make(_ options: ThumbnailOptions) async throws -> ThumbnailResult {
        try await withThumbnail(options) { $0 }
    }

    /// `make`, then `body` with the result while the file is held: no eviction (by any process) deletes a cache
    /// file before `body` returns. For a caller that hands the path on (the CLI prints it inside `body`).
    public static func withThumbnail<T>(
        _ options: ThumbnailOptions, _ body: (ThumbnailResult) async throws -> T
    ) async throws -> T {
        let request = try ThumbnailRequest(options)
        let (result, lease) = try await runDetached { isCancelled in try run(request, isCancelled: isCancelled) }
        let value = try await body(result)
        withExtendedLifetime(lease) {}
        return value
    }

    /// The synchronous job.
    /// The synchronous job: the result, and the lease that keeps a cache file from eviction while it is held.
    static func run(_ request: ThumbnailRequest, isCancelled: @escaping () -> Bool) throws
        -> (ThumbnailResult, CacheFileLease?)
    {
        if request.isOwnFile { return (try writeOwnFile(request, isCancelled: isCancelled), nil) }
        // Who the source is now (FILE_NOT_FOUND if a local one is gone): part of the key a hit must match.
        let key = request.cacheKey(source: try MezzanineStore.identity(of: request.source))
        if let hit = try cached(request, key: key, isCancelled: isCancelled) { return hit }
        try CacheDirectory.prepare(request.cacheDirectory)
        // Staged before decoding: its creation time is this run's start, before any sibling's file it must spare.
        let staged = try StagedFile(beside: request.output)
        let started = CacheDirectory.runStart(createdFile: staged.path)

        let frame = try grabFrame(request.frame, isCancelled: isCancelled)
        if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }

        try staged.write(try encoded(frame, request, key: key))
        try staged.sync()
        // Placed and evicted under the folder's lock, sparing what is newer than this run: a sibling's fresh file
        // or hit is never deleted before its run has returned its path.
        let lease = try CacheDirectory.withLock(in: request.cacheDirectory, isCancelled: isCancelled) {
            try staged.commit(replacing: true)
            let lease = CacheFileLease(request.output)
            CacheDirectory.evict(
                in: request.cacheDirectory, capBytes: request.cacheCapBytes, keep: request.fileName,
                startedAt: started, owned: ImageStamp.isStamped(file:))
            return lease
        }
        let made = result(
            request, width: frame.image.width, height: frame.image.height,
            time: frame.time.milliseconds, cached: false)
        return (made, lease)
    }

    /// `-o FILE`: decoded and written there atomically, without a stamp (so no cache ever counts or evicts it).
    private static func writeOwnFile(_ request: ThumbnailRequest, isCancelled: @escaping () -> Bool) throws
        -> ThumbnailResult
    {
        try request.source.checkExists()
        let staged = try StagedFile(beside: request.output)  // before decoding: a folder that is not there fails first
        let frame = try grabFrame(request.frame, isCancelled: isCancelled)
        if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }
        try staged.write(try encoded(frame, request, key: nil))
        try staged.commit(replacing: true)
        return result(
            request, width: frame.image.width, height: frame.image.height, time: frame.time.milliseconds, cached: false)
    }

    /// One thumbnail's frame: a local JPEG decoded at the size it is shown (`ScaledPhoto`, no GStreamer), anything
    /// else (or a JPEG that path does not decode cleanly) by `FrameGrabber`.
    static func grabFrame(_ request: FrameRequest, isCancelled: @escaping () -> Bool) throws -> GrabbedFrame {
        if !isCancelled(), let photo = ScaledPhoto.grab(request) { return photo }
        return try FrameGrabber(request: request, isCancelled: isCancelled).grab()
    }

    /// The thumbnail's bytes: `frame` encoded as the request asks, stamped with the request's cache `key` when it
    /// goes to a cache (nil: `-o FILE`, never stamped, so no cache counts or evicts it).
    static func encoded(_ frame: GrabbedFrame, _ request: ThumbnailRequest, key: String?) throws -> [UInt8] {
        let encoded = try ImageEncoder.encode(frame.image, format: request.format, quality: request.quality)
        guard let key else { return encoded }
        return ImageStamp.insert(
            timeMilliseconds: frame.time.milliseconds, request: key, into: encoded, format: request.format)
    }

    /// An existing, complete file of the requested name, stamped with the same request key (same source as it is
    /// now, time, tolerance, box, format, quality): returned at once, its mtime touched. Anything else is rebuilt.
    /// Read and touched under the folder's lock, so that no eviction removes it in between (when the folder cannot
    /// be locked, it is read without the lock).
    static func cached(_ request: ThumbnailRequest, key: String, isCancelled: () -> Bool) throws
        -> (ThumbnailResult, CacheFileLease?)?
    {
        guard FileManager.default.fileExists(atPath: request.output.path) else { return nil }
        let lookUp = { () -> (ThumbnailResult, CacheFileLease?)? in
            guard let data = FileManager.default.contents(atPath: request.output.path),
                let stamp = ImageStamp.read([UInt8](data)), stamp.format == request.format, stamp.request == key
            else { return nil }
            let lease = CacheFileLease(request.output)
            CacheDirectory.touch(request.output)
            let hit = result(
                request, width: stamp.width, height: stamp.height, time: stamp.timeMilliseconds, cached: true)
            return (hit, lease)
        }
        do {
            return try CacheDirectory.withLock(in: request.cacheDirectory, isCancelled: isCancelled, lookUp)
        } catch let error as FilmtoneError where error.code == .cancelled {
            throw error
        } catch {
            return lookUp()
        }
    }

    static func result(_ request: ThumbnailRequest, width: Int, height: Int, time: Int64, cached: Bool)
        -> ThumbnailResult
    {
        ThumbnailResult(
            uri: request.output.absoluteString, path: request.output.path, width: width, height: height,
            timeMilliseconds: time, format: request.format, cached: cached)
    }
}

// MARK: - JSON

extension ThumbnailResult {
    /// The CLI's result object: uri, path, width, height, timeMs, format, cached.
    public var json: JSONValue {
        .object([
            ("uri", .string(uri)), ("path", .string(path)), ("width", .int(Int64(width))),
            ("height", .int(Int64(height))), ("timeMs", .int(timeMilliseconds)), ("format", .string(format.rawValue)),
            ("cached", .bool(cached)),
        ])
    }
}
