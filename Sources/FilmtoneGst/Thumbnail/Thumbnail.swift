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
    /// `jpeg` or `png`; anything else is `UNSUPPORTED_FORMAT`.
    public var format: String = "jpeg"
    /// 0…1, JPEG only.
    public var quality: Double = 0.9
    /// nil: `$XDG_CACHE_HOME/ftgst/thumbnails` (or `~/.cache/ftgst/thumbnails`).
    public var cacheDirectory: String? = nil
    /// nil: `thumb-<uuid>`. No `/`, no `..`.
    public var cacheName: String? = nil
    public var cacheCapMegabytes: Int64 = 100
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
    /// True when an existing `cacheName` was returned without decoding.
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

    var source: MediaSource { frame.source }
    var time: ClockTime { frame.time }
    var tolerance: ClockTime { frame.tolerance }
    var output: URL { cacheDirectory.appendingPathComponent(fileName) }

    /// Checks every option; throws `INVALID_ARGUMENT`, `INVALID_URL` or `UNSUPPORTED_FORMAT`. Touches no file.
    init(_ options: ThumbnailOptions, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        func invalid(_ message: String) -> FilmtoneError { FilmtoneError(.invalidArgument, message) }
        guard (1...(1 << 30)).contains(options.cacheCapMegabytes) else {
            throw invalid("--cache-cap-mb must be 1…\(1 << 30)")
        }
        try CacheDirectory.validate(options.cacheDirectory, option: "--cache-dir")
        let name = options.cacheName ?? "thumb-\(UUID().uuidString.lowercased())"
        guard !name.isEmpty, !name.contains("/"), !name.contains(".."), !name.contains("\0"), !name.hasPrefix(".")
        else { throw invalid("--cache-name must be a plain file name (no '/', no '..', not hidden): \(name)") }
        let common = try FrameOptions(
            source: options.source, headers: options.headers, timeMilliseconds: options.timeMilliseconds,
            toleranceMilliseconds: options.toleranceMilliseconds, maxWidth: options.maxWidth,
            maxHeight: options.maxHeight, format: options.format, quality: options.quality,
            timeoutMilliseconds: options.timeoutMilliseconds)
        frame = common.frameRequest
        format = common.format
        quality = common.quality
        cacheDirectory = URL(
            fileURLWithPath: options.cacheDirectory ?? ThumbnailRequest.defaultCacheDirectory(environment))
        fileName = "\(name).\(format.fileExtension)"
        cacheCapBytes = options.cacheCapMegabytes * 1024 * 1024
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
        let request = try ThumbnailRequest(options)
        return try await runDetached { isCancelled in try run(request, isCancelled: isCancelled) }
    }

    /// The synchronous job.
    static func run(_ request: ThumbnailRequest, isCancelled: @escaping () -> Bool) throws -> ThumbnailResult {
        if let hit = try cached(request, isCancelled: isCancelled) { return hit }
        try request.source.checkExists()
        try CacheDirectory.prepare(request.cacheDirectory)
        // Staged before decoding: its creation time is this run's start, before any sibling's file it must spare.
        let staged = try StagedFile(beside: request.output)
        let started = CacheDirectory.runStart(createdFile: staged.path)

        let frame = try FrameGrabber(request: request.frame, isCancelled: isCancelled).grab()
        if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }

        let encoded = try ImageEncoder.encode(frame.image, format: request.format, quality: request.quality)
        let bytes = ImageStamp.insert(timeMilliseconds: frame.time.milliseconds, into: encoded, format: request.format)
        try staged.write(bytes)
        try staged.sync()
        // Placed and evicted under the folder's lock, sparing what is newer than this run: a sibling's fresh file
        // or hit is never deleted before its run has returned its path.
        try CacheDirectory.withLock(in: request.cacheDirectory, isCancelled: isCancelled) {
            try staged.commit(replacing: true)
            CacheDirectory.evict(
                in: request.cacheDirectory, capBytes: request.cacheCapBytes, keep: request.fileName,
                startedAt: started, owned: ImageStamp.isStamped(file:))
        }
        return result(
            request, width: frame.image.width, height: frame.image.height,
            time: frame.time.milliseconds, cached: false)
    }

    /// An existing, complete, stamped file of the requested name and format: returned at once, its mtime touched.
    /// Read and touched under the folder's lock, so that no eviction removes it in between (when the folder cannot
    /// be locked, it is read without the lock).
    private static func cached(_ request: ThumbnailRequest, isCancelled: () -> Bool) throws -> ThumbnailResult? {
        guard FileManager.default.fileExists(atPath: request.output.path) else { return nil }
        let lookUp = { () -> ThumbnailResult? in
            guard let data = FileManager.default.contents(atPath: request.output.path),
                let stamp = ImageStamp.read([UInt8](data)), stamp.format == request.format
            else { return nil }
            CacheDirectory.touch(request.output)
            return result(
                request, width: stamp.width, height: stamp.height, time: stamp.timeMilliseconds, cached: true)
        }
        do {
            return try CacheDirectory.withLock(in: request.cacheDirectory, isCancelled: isCancelled, lookUp)
        } catch let error as FilmtoneError where error.code == .cancelled {
            throw error
        } catch {
            return lookUp()
        }
    }

    private static func result(_ request: ThumbnailRequest, width: Int, height: Int, time: Int64, cached: Bool)
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
