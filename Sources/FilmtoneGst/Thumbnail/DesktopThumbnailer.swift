import FilmtoneCore
import Foundation
import Glibc
import GstKit
import ImageCodecs

/// The freedesktop thumbnailer (issue 13, item 5), by the Thumbnail Managing Standard
/// (specifications.freedesktop.org/thumbnail-spec): a PNG of the frame `--time auto` picks (`FrameInterest`), no
/// larger than SIZE on its longer side and never upscaled, carrying `Thumb::URI`, `Thumb::MTime`, `Thumb::Size`
/// and, for a video, `Thumb::Movie::Length`; `Thumb::Mimetype` when the type is known for sure (`MimeTypes`).
/// Local files only: no network, as a sandboxed thumbnailer has none.
///
/// Two ways to use it: `write` for a desktop's thumbnail factory, which names the output (`Exec=ftgst thumbnailer
/// -s %s -i %i -o %o`; GNOME runs it in bubblewrap with only `/usr` and the input), and `cache` for programs
/// without a desktop, which writes the shared cache itself: `$XDG_CACHE_HOME/thumbnails/<size>/MD5(URI).png`, 0600
/// files in 0700 folders, and on a file that cannot be thumbnailed the spec's failure entry under
/// `fail/ftgst-VERSION/`.
public enum DesktopThumbnailer {
    /// The spec's cache folders and their sizes.
    public enum CacheSize: String, CaseIterable, Sendable {
        case normal
        case large
        case xLarge = "x-large"
        case xxLarge = "xx-large"

        public var pixels: Int {
            switch self {
            case .normal: return 128
            case .large: return 256
            case .xLarge: return 512
            case .xxLarge: return 1024
            }
        }

        /// The folder for a `-s` size: one of 128, 256, 512, 1024.
        public init?(pixels: Int) {
            guard let size = Self.allCases.first(where: { $0.pixels == pixels }) else { return nil }
            self = size
        }
    }

    public struct Result: Sendable {
        public var path: String
        /// The source's URI as the cache keys it (GLib's `g_filename_to_uri` of its absolute path).
        public var sourceURI: String
        public var width: Int
        public var height: Int
        public var timeMilliseconds: Int64
        /// `cache`: a valid entry (same URI, same `Thumb::MTime`) was already there; nothing was decoded.
        public var cached: Bool

        public var json: JSONValue {
            .object([
                ("path", .string(path)), ("uri", .string(sourceURI)), ("width", .int(Int64(width))),
                ("height", .int(Int64(height))), ("timeMs", .int(timeMilliseconds)), ("cached", .bool(cached)),
            ])
        }
    }

    /// Writes the thumbnail of `input` (a path or `file://` URI) to `output` (atomically), fitting `size`×`size`.
    public static func write(input: String, output: String, size: Int, timeoutMilliseconds: Int64 = 30_000)
        async throws -> Result
    {
        guard !output.isEmpty else { throw FilmtoneError(.invalidArgument, "-o needs a file name") }
        try MediaSource.refuseControlCharacters(output, as: "-o path", code: .invalidArgument)
        let source = try localSource(input)
        let target = URL(fileURLWithPath: output).standardizedFileURL
        guard target.path != source.path else { throw FilmtoneError(.invalidArgument, "-o is the input itself") }
        return try await runDetached { isCancelled in
            try make(source, into: target, size: size, mode: nil, timeout: timeoutMilliseconds, isCancelled)
        }
    }

    /// The shared cache's entry for `input`: made unless a valid one is there; on a file that cannot be
    /// thumbnailed, the failure entry is written and the error thrown.
    public static func cache(
        input: String, size: CacheSize, timeoutMilliseconds: Int64 = 30_000,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> Result {
        let source = try localSource(input)
        let root = try cacheRoot(environment)
        let name = GLib.md5Hex(source.uri) + ".png"
        let target = root.appendingPathComponent(size.rawValue).appendingPathComponent(name)
        return try await runDetached { isCancelled in
            if let valid = try validEntry(at: target, for: source) { return valid }
            try makeFolders(root, size.rawValue)
            do {
                return try make(
                    source, into: target, size: size.pixels, mode: 0o600, timeout: timeoutMilliseconds, isCancelled)
            } catch let error as FilmtoneError where [.decodeFailed, .unsupportedFormat].contains(error.code) {
                let folder = "ftgst-\(FilmtoneVersion.string)"
                try? makeFolders(root, "fail", folder)
                try? writeFailure(
                    root.appendingPathComponent("fail").appendingPathComponent(folder)
                        .appendingPathComponent(name), for: source)
                throw error
            }
        }
    }

    // MARK: - Parts

    /// The input as the spec names it: its absolute path, GLib's URI of it, its mtime (whole seconds) and size.
    struct LocalSource {
        var path: String
        var uri: String
        var modified: Int64
        var size: Int64
    }

    static func localSource(_ input: String) throws -> LocalSource {
        guard !input.isEmpty, !input.contains("\0") else { throw FilmtoneError(.invalidArgument, "-i needs a file") }
        guard case .local(let path) = try MediaSource.parse(input) else {
            throw FilmtoneError(.invalidURL, "the thumbnailer reads local files only, never the network: \(input)")
        }
        try MediaSource.local(path: path).checkExists()
        var info = stat()
        guard stat(path, &info) == 0 else { throw FilmtoneError(.fileNotFound, "cannot stat \(path)") }
        guard let uri = GLib.fileURI(path: path) else { throw FilmtoneError(.invalidURL, "no URI for \(path)") }
        return LocalSource(path: path, uri: uri, modified: Int64(info.st_mtim.tv_sec), size: Int64(info.st_size))
    }

    /// `$XDG_CACHE_HOME/thumbnails`, or `$HOME/.cache/thumbnails` when it is unset or not absolute.
    static func cacheRoot(_ environment: [String: String]) throws -> URL {
        if let base = environment["XDG_CACHE_HOME"], base.hasPrefix("/") {
            return URL(fileURLWithPath: base).appendingPathComponent("thumbnails")
        }
        guard let home = environment["HOME"], home.hasPrefix("/") else {
            throw FilmtoneError(.writeFailed, "no cache folder: neither XDG_CACHE_HOME nor HOME is an absolute path")
        }
        return URL(fileURLWithPath: home).appendingPathComponent(".cache/thumbnails")
    }

    /// Creates `root` and each of `components` below it that is missing, 0700 (the spec's mode); existing folders
    /// are left as they are.
    static func makeFolders(_ root: URL, _ components: String...) throws {
        var folders = [root]
        for component in components { folders.append(folders.last!.appendingPathComponent(component)) }
        try FileManager.default.createDirectory(
            at: root.deletingLastPathComponent(), withIntermediateDirectories: true)
        for folder in folders where mkdir(folder.path, 0o700) != 0 && errno != EEXIST {
            throw FilmtoneError(.writeFailed, "cannot create \(folder.path): \(String(cString: strerror(errno)))")
        }
    }

    /// An entry already in the cache for this source as it is now: the same `Thumb::URI` and `Thumb::MTime`.
    static func validEntry(at target: URL, for source: LocalSource) throws -> Result? {
        guard let data = FileManager.default.contents(atPath: target.path) else { return nil }
        let bytes = [UInt8](data)
        let text = Dictionary(ImageStamp.pngText(bytes), uniquingKeysWith: { first, _ in first })
        guard text["Thumb::URI"] == source.uri, text["Thumb::MTime"] == String(source.modified),
            let stamp = ImageStamp.read(bytes)
        else { return nil }
        return Result(
            path: target.path, sourceURI: source.uri, width: stamp.width, height: stamp.height,
            timeMilliseconds: stamp.timeMilliseconds, cached: true)
    }

    /// Decodes the frame worth showing, writes the PNG with the spec's keys through `StagedFile`.
    static func make(
        _ source: LocalSource, into target: URL, size: Int, mode: mode_t?, timeout: Int64,
        _ isCancelled: @escaping () -> Bool
    ) throws -> Result {
        let request = try FrameOptions(
            source: source.path, headers: [], timeMilliseconds: 0, toleranceMilliseconds: 0, maxWidth: size,
            maxHeight: size, format: .png, quality: 1, timeoutMilliseconds: timeout
        ).frameRequest
        let (frame, duration, mimeType) = try grab(request, path: source.path, size: size, isCancelled)
        var entries: [(keyword: String, text: String)] = [
            ("Thumb::URI", source.uri), ("Thumb::MTime", String(source.modified)), ("Thumb::Size", String(source.size)),
        ]
        if let mimeType { entries.append(("Thumb::Mimetype", mimeType)) }
        if let duration, !frame.isStill { entries.append(("Thumb::Movie::Length", String(duration / 1000))) }
        entries.append(("Software", "ftgst \(FilmtoneVersion.string)"))
        // The ftgst stamp (time, no request key) first, so `validEntry` reads the size and time back.
        let png = ImageStamp.insertPNGText(
            entries,
            into: ImageStamp.insert(
                timeMilliseconds: frame.time.milliseconds,
                into: try ImageEncoder.encode(frame.image, format: .png, quality: 1), format: .png))
        let staged = try StagedFile(beside: target)
        try staged.write(png)
        if let mode, chmod(staged.path, mode) != 0 {
            throw FilmtoneError(.writeFailed, "cannot set the mode of \(staged.path)")
        }
        try staged.commit(replacing: true)
        return Result(
            path: target.path, sourceURI: source.uri, width: frame.image.width, height: frame.image.height,
            timeMilliseconds: frame.time.milliseconds, cached: false)
    }

    /// The picture: a local JPEG, PNG or WebP at its shown size (`ScaledPhoto`), anything else the keyframe
    /// `--time auto` picks, with the duration (ms) when the demuxer knows it, and the MIME type when it is known for
    /// sure (`MimeTypes`: the photo's format, the container named by the file's first bytes, or the type finder's).
    /// A plain MP4 or MOV of H.264 or HEVC is answered without GStreamer where that gives the same picture
    /// (`DirectKeyframe`).
    private static func grab(
        _ request: FrameRequest, path: String, size: Int, _ isCancelled: @escaping () -> Bool
    ) throws -> (GrabbedFrame, Int64?, String?) {
        if let photo = ScaledPhoto.grab(request) { return (photo, nil, ScaledPhoto.Kind(path: path)?.mimeType) }
        if let direct = try DirectKeyframe.thumbnail(path: path, size: size) {
            return (direct.frame, direct.durationMilliseconds, MimeTypes.mimeType(fileStart: direct.fileStart))
        }
        let formats = PictureFormatWatch()
        let deadline = Deadline(after: request.timeoutMilliseconds)
        // Where the file's demuxer allows, the first sample's keyframe is sought before the first preroll: the first
        // keyframe is not decoded to preroll only to be decoded again when the sample's seek leads back to it.
        let seeksFirst = FramePipeline.seeksBeforePreroll(request.source)
        let (frame, duration) = try formats.refining {
            let source = try OpenedFrameSource(
                request, watching: formats, deadline: deadline, keeps: !seeksFirst,
                firstKeyframe: seeksFirst ? FrameInterest.firstSample : nil, isCancelled: isCancelled)
            defer { source.stop() }
            return (try ThumbnailSet.pickFrame(source, deadline, isCancelled).frame, source.durationMilliseconds)
        }
        let start = FileHandle(forReadingAtPath: path).flatMap { file in
            defer { try? file.close() }
            return try? file.read(upToCount: 64)
        }
        let mimeType =
            start.flatMap { MimeTypes.mimeType(fileStart: [UInt8]($0)) }
            ?? formats.container.flatMap(MimeTypes.mimeType(container:))
        return (frame, duration, mimeType)
    }

    /// The spec's failure entry: an empty (1×1) PNG with `Thumb::URI` and `Thumb::MTime`, 0600.
    private static func writeFailure(_ target: URL, for source: LocalSource) throws {
        let blank = try ImageEncoder.encode(
            RGBImage(width: 1, height: 1, pixels: [0, 0, 0]), format: .png, quality: 1)
        let png = ImageStamp.insertPNGText(
            [("Thumb::URI", source.uri), ("Thumb::MTime", String(source.modified))], into: blank)
        let staged = try StagedFile(beside: target)
        try staged.write(png)
        _ = chmod(staged.path, 0o600)
        try staged.commit(replacing: true)
    }
}
