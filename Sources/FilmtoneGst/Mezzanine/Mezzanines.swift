import FilmtoneCore
import Foundation

/// What `Mezzanines.prepare` is asked for. Defaults match `ftgst mezzanine`'s.
public struct MezzanineOptions: Sendable {
    /// A path, `file://` URI or `http(s)://` URL of a video.
    public var source: String
    /// `Name: value` lines sent on every HTTP request.
    public var headers: [String] = []
    /// The mezzanine's picture is the upright source fitted into this box (never upscaled). Previews asking for a
    /// larger picture than the mezzanine holds decode the source instead.
    public var maxWidth: Int = 1280
    /// The box's height (see `maxWidth`).
    public var maxHeight: Int = 1280
    /// nil: `$XDG_CACHE_HOME/ftgst/mezzanines` (or `~/.cache/ftgst/mezzanines`).
    public var cacheDirectory: String? = nil
    /// Least recently used mezzanines are evicted past this total.
    public var cacheCapMegabytes: Int64 = 4096
    /// The deadline for the whole build.
    public var timeoutMilliseconds: Int64 = 600_000

    public init(source: String) {
        self.source = source
    }
}

/// A ready mezzanine.
public struct MezzanineResult: Equatable, Sendable {
    public var path: String
    /// Hex SHA-256 of the source identity and the mezzanine settings.
    public var key: String
    public var width: Int
    public var height: Int
    public var frames: Int
    public var durationMilliseconds: Int64
    public var sizeBytes: Int64
    /// False when a valid mezzanine was already in the cache.
    public var built: Bool
    /// Wall time of this call (build, or validation of a cached one).
    public var buildMilliseconds: Int64

    /// The CLI's result object: path, key, width, height, frames, durationMs, sizeBytes, built, buildMs.
    public var json: JSONValue {
        .object([
            ("path", .string(path)), ("key", .string(key)), ("width", .int(Int64(width))),
            ("height", .int(Int64(height))), ("frames", .int(Int64(frames))),
            ("durationMs", .int(durationMilliseconds)),
            ("sizeBytes", .int(sizeBytes)), ("built", .bool(built)), ("buildMs", .int(buildMilliseconds)),
        ])
    }
}

/// The state of a source's mezzanine in a cache folder.
public enum MezzanineStatus: String, Sendable {
    /// Built from the source as it is now, and intact.
    case ready
    /// There is one, but the source changed since, or the file is damaged: it will not be used.
    case stale
    case missing
}

/// A validated `MezzanineOptions`.
struct MezzanineRequest {
    var source: MediaSource
    var headers: [HTTPHeader]
    var settings: MezzanineSettings
    var store: MezzanineStore
    var capBytes: Int64
    var timeoutMilliseconds: Int64

    /// `INVALID_ARGUMENT`, `INVALID_URL`; touches no file.
    init(_ options: MezzanineOptions) throws {
        func invalid(_ message: String) -> FilmtoneError { FilmtoneError(.invalidArgument, message) }
        guard (1...16384).contains(options.maxWidth) else { throw invalid("--max-width must be 1…16384") }
        guard (1...16384).contains(options.maxHeight) else { throw invalid("--max-height must be 1…16384") }
        guard (1...(1 << 30)).contains(options.cacheCapMegabytes) else {
            throw invalid("--cache-max-mb must be 1…\(1 << 30)")
        }
        guard (1...FrameOptions.maxMilliseconds).contains(options.timeoutMilliseconds) else {
            throw invalid("--timeout-ms must be 1…\(FrameOptions.maxMilliseconds)")
        }
        try CacheDirectory.validate(options.cacheDirectory, option: "--cache-dir")
        source = try MediaSource.parse(options.source)
        headers = try options.headers.map(HTTPHeader.parse)
        settings = MezzanineSettings(maxWidth: options.maxWidth, maxHeight: options.maxHeight)
        store = MezzanineStore(
            directory: URL(fileURLWithPath: options.cacheDirectory ?? MezzanineStore.defaultDirectory())
                .standardizedFileURL)
        capBytes = options.cacheCapMegabytes * 1024 * 1024
        timeoutMilliseconds = options.timeoutMilliseconds
    }
}

/// Intra-frame copies of long-GOP videos, for fast exact previews. See docs/ARCHITECTURE.md#mezzanines.
public enum Mezzanines {
    /// Returns the source's mezzanine, building it when there is none or the one there is stale or damaged (a
    /// cache hit re-reads the whole file against its SHA-256). Written atomically: on any failure nothing is left
    /// in the cache folder. Cancelling the task stops the build within ~50 ms (`CANCELLED`).
    public static func prepare(_ options: MezzanineOptions) async throws -> MezzanineResult {
        let request = try MezzanineRequest(options)
        return try await runDetached { isCancelled in try run(request, isCancelled: isCancelled) }
    }

    /// Whether `source` has a ready mezzanine built with this box in `cacheDirectory` (no decoding, no hashing:
    /// the manifest, the source's identity and the mezzanine file's size, mtime and inode).
    public static func status(
        source: String, maxWidth: Int = 1280, maxHeight: Int = 1280,
        cacheDirectory: String? = nil
    ) throws -> MezzanineStatus {
        var options = MezzanineOptions(source: source)
        options.maxWidth = maxWidth
        options.maxHeight = maxHeight
        options.cacheDirectory = cacheDirectory
        let request = try MezzanineRequest(options)
        let identity = try MezzanineStore.identity(of: request.source)
        let slot = MezzanineRecipe.slot(location: identity.location, settings: request.settings)
        switch request.store.verdict(slot: slot, key: MezzanineRecipe.key(source: identity, settings: request.settings))
            .0
        {
        case .ready: return .ready
        case .stale: return .stale
        case .missing: return .missing
        }
    }

    static func run(
        _ request: MezzanineRequest, isCancelled: @escaping () -> Bool,
        onFrame: (@Sendable (Int) -> Void)? = nil
    ) throws -> MezzanineResult {
        let started = ContinuousClock.now
        let identity = try MezzanineStore.identity(of: request.source)
        let key = MezzanineRecipe.key(source: identity, settings: request.settings)
        let slot = MezzanineRecipe.slot(location: identity.location, settings: request.settings)
        let store = request.store
        let video = store.url(MezzanineRecipe.videoName(slot: slot))

        if case (.ready, let manifest?) = store.verdict(slot: slot, key: key),
            (try? SHA256.hash(file: video.path, isCancelled: isCancelled)) == manifest.file.sha256,
            // Checked again and touched under the lock: no eviction can remove it between the check and the touch.
            try CacheDirectory.withLock(
                in: store.directory, isCancelled: isCancelled,
                {
                    guard case (.ready, manifest?) = store.verdict(slot: slot, key: key) else { return false }
                    store.touch(slot: slot)
                    return true
                })
        {
            return result(manifest, path: video, built: false, since: started)
        }
        if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }

        try CacheDirectory.prepare(store.directory)
        let staged = try StagedFile(beside: video)
        let runStart = CacheDirectory.runStart(createdFile: staged.path)
        do {
            let built = try MezzanineBuilder(
                source: request.source, headers: request.headers, settings: request.settings, temporary: staged.url,
                timeoutMilliseconds: request.timeoutMilliseconds, isCancelled: isCancelled, onFrame: onFrame
            ).build()
            if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }
            try staged.sync()  // filesink does not sync; the hash reads what is on disk
            let sha = try SHA256.hash(file: staged.path, isCancelled: isCancelled)
            // Placed, described and evicted under the folder's lock, sparing slots used since this run started.
            let manifest = try CacheDirectory.withLock(in: store.directory, isCancelled: isCancelled) {
                () throws -> MezzanineManifest in
                try staged.commit(replacing: true)
                guard let facts = MezzanineStore.fileFacts(video.path) else {
                    throw FilmtoneError(.writeFailed, "the mezzanine vanished after it was written: \(video.path)")
                }
                let elapsed = milliseconds(since: started)
                let manifest = MezzanineManifest(
                    formatVersion: MezzanineSettings.formatVersion, key: key, source: identity,
                    settings: request.settings,
                    width: built.width, height: built.height, sourceDisplayWidth: built.sourceDisplayWidth,
                    sourceDisplayHeight: built.sourceDisplayHeight, frames: built.frames,
                    durationMilliseconds: built.duration.milliseconds,
                    file: MezzanineFileFacts(
                        name: video.lastPathComponent, size: facts.size,
                        modifiedNanoseconds: facts.modifiedNanoseconds, inode: facts.inode, sha256: sha),
                    buildMilliseconds: elapsed)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                do {
                    try StagedFile.write(
                        [UInt8](try encoder.encode(manifest)),
                        to: store.url(MezzanineRecipe.manifestName(slot: slot)))
                } catch {
                    unlink(video.path)  // a video without its manifest is never used; do not leave it taking space
                    throw error
                }
                store.evict(capBytes: request.capBytes, keep: slot, startedAt: runStart)
                return manifest
            }
            return result(manifest, path: video, built: true, since: started)
        } catch {
            staged.discard()
            throw error
        }
    }

    private static func result(
        _ manifest: MezzanineManifest, path: URL, built: Bool, since started: ContinuousClock.Instant
    )
        -> MezzanineResult
    {
        MezzanineResult(
            path: path.path, key: manifest.key, width: manifest.width, height: manifest.height,
            frames: manifest.frames, durationMilliseconds: manifest.durationMilliseconds,
            sizeBytes: manifest.file.size, built: built, buildMilliseconds: milliseconds(since: started))
    }

    static func milliseconds(since started: ContinuousClock.Instant) -> Int64 {
        let elapsed = ContinuousClock.now - started
        return elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    }
}
