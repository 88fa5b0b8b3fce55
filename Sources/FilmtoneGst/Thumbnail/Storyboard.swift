import FilmtoneCore
import Foundation
import GstKit
import ImageCodecs

/// What `Storyboards.make` is asked for (issue 13, item 3). Defaults are Jellyfin's trickplay: 320-px tiles, 10×10
/// a sheet, one every 10 s.
public struct StoryboardOptions: Sendable {
    /// A path, `file://` URI or `http(s)://` URL of a video.
    public var source: String
    /// The folder the sheets and `storyboard.vtt` go into; created (not its parents) when missing.
    public var outputDirectory: String
    /// Each tile's width; its height follows the display aspect, rounded to an even number. Never upscaled.
    public var tileWidth: Int = 320
    public var columns: Int = 10
    public var rows: Int = 10
    /// One tile every this many ms, the first at 0.
    public var intervalMilliseconds: Int64 = 10_000
    /// How far a tile's frame may be from its time; 0 (the default) gives each tile the exact frame on screen at
    /// its time. Larger, a keyframe within it stands in (no decoding from the keyframe to the time).
    public var toleranceMilliseconds: Int64 = 0
    /// 0…1, the sheets' JPEG quality.
    public var quality: Double = 0.9
    /// `on`: PQ and HLG sources are tone-mapped to SDR BT.709; `off`: not.
    public var toneMap: ToneMapping = .on
    /// `Name: value` lines sent on every HTTP request.
    public var headers: [String] = []
    /// The deadline for the whole job.
    public var timeoutMilliseconds: Int64 = 600_000

    public init(source: String, outputDirectory: String) {
        self.source = source
        self.outputDirectory = outputDirectory
    }

    /// `--every` and `--tolerance`: seconds, as `10`, `2.5`, `2.5s` or `1:00` (`thumb --time`'s forms without the
    /// percentage), in whole ms. Throws `INVALID_ARGUMENT` naming `option`.
    public static func milliseconds(seconds text: String, option: String) throws -> Int64 {
        let parsed = try? ThumbnailTime.parse(text)
        guard case .milliseconds(let value)? = parsed else {
            throw FilmtoneError(.invalidArgument, "\(option) takes seconds (10, 2.5, 2.5s or 1:00): \(text)")
        }
        return value
    }
}

/// A finished storyboard: where its files are and what they hold.
public struct StoryboardResult: Sendable {
    /// One sprite sheet: its path, size and how many tiles it holds.
    public struct Sheet: Sendable {
        public var path: String
        public var width: Int
        public var height: Int
        public var tiles: Int
    }

    public var directory: String
    public var vttPath: String
    public var sheets: [Sheet]
    public var tileWidth: Int
    public var tileHeight: Int
    public var columns: Int
    public var rows: Int
    public var intervalMilliseconds: Int64
    public var toleranceMilliseconds: Int64
    public var durationMilliseconds: Int64
    /// The time of the frame each tile shows (ms, 0-based), in tile order.
    public var frameMilliseconds: [Int64]
    /// Frames decoded and handed out (a frame answering two tiles counts once), and seeks sent.
    public var framesUsed: Int
    public var seeks: Int

    /// The CLI's result object.
    public var json: JSONValue {
        .object([
            ("directory", .string(directory)), ("vtt", .string(vttPath)),
            (
                "sheets",
                .array(
                    sheets.map {
                        .object([
                            ("path", .string($0.path)), ("width", .int(Int64($0.width))),
                            ("height", .int(Int64($0.height))), ("tiles", .int(Int64($0.tiles))),
                        ])
                    })
            ),
            ("tiles", .int(Int64(frameMilliseconds.count))), ("tileWidth", .int(Int64(tileWidth))),
            ("tileHeight", .int(Int64(tileHeight))), ("columns", .int(Int64(columns))), ("rows", .int(Int64(rows))),
            ("everyMs", .int(intervalMilliseconds)), ("toleranceMs", .int(toleranceMilliseconds)),
            ("durationMs", .int(durationMilliseconds)), ("framesUsed", .int(Int64(framesUsed))),
            ("seeks", .int(Int64(seeks))), ("frameTimesMs", .array(frameMilliseconds.map { .int($0) })),
        ])
    }
}

/// `ftgst storyboard`: sprite sheets of evenly spaced tiles and the WebVTT file that maps the timeline onto them,
/// for seek-bar previews (Jellyfin's trickplay, video.js and Plyr thumbnails). One pipeline for all tiles
/// (`OpenedFrameSource`, kept, so tiles close together are forward steps rather than seeks), the times visited in
/// order, one sheet composed at a time in memory. All or nothing: every sheet is staged (`StagedFile`) as it is
/// finished and the set placed only once all are made, the VTT last; a failure placing one takes back those
/// already placed and puts back the files they replaced (a rerun's failure leaves the previous storyboard whole),
/// and a folder this run created is removed again.
public enum Storyboards {
    /// Makes the storyboard. Throws `FilmtoneError`: `INVALID_ARGUMENT` for an option or a still picture,
    /// `FILE_NOT_FOUND`, `WRITE_FAILED` for the folder (checked before decoding) or a file, `DECODE_FAILED`…
    public static func make(_ options: StoryboardOptions) async throws -> StoryboardResult {
        let request = try StoryboardRequest(options)
        return try await runDetached { isCancelled in try run(request, isCancelled: isCancelled) }
    }

    static func run(_ request: StoryboardRequest, isCancelled: @escaping () -> Bool) throws -> StoryboardResult {
        try request.frame.source.checkExists()
        let folder = request.directory
        let created = try prepare(folder)
        var done = false
        defer { if created && !done { rmdir(folder.path) } }  // only ever removes it empty
        // Staged before decoding: a folder that cannot be written fails before any work.
        let vtt = try StagedFile(beside: folder.appendingPathComponent(StoryboardLayout.vttName))
        var sheets: [StagedFile] = []
        var layout: StoryboardLayout?
        var times: [Int64] = []
        var framesUsed = 0
        var seeks = 0

        let formats = PictureFormatWatch()
        let deadline = Deadline(after: request.frame.timeoutMilliseconds)
        try formats.refining {
            let source = try OpenedFrameSource(
                request.frame, watching: formats, deadline: deadline, keeps: true, isCancelled: isCancelled)
            defer { source.stop() }
            guard !source.isStill else {
                throw FilmtoneError(.invalidArgument, "a storyboard needs a video: the source is a still picture")
            }
            guard let duration = source.durationMilliseconds, duration > 0 else {
                throw FilmtoneError(.decodeFailed, "the source's duration is unknown: a storyboard needs it")
            }
            var sheet: StoryboardSheet?
            var last: GrabbedFrame?
            var index = 0
            while index < (layout?.tileCount ?? 1) {
                if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }
                let time = ClockTime.milliseconds(Int64(index) * request.intervalMilliseconds)
                let frame: GrabbedFrame
                if let last,
                    FrameRecipe.accepts(
                        frame: last.time, duration: nil, target: time, tolerance: request.frame.tolerance)
                {
                    frame = last
                } else {
                    frame = try source.frame(
                        at: time, tolerance: request.frame.tolerance, deadline: deadline, isCancelled: isCancelled)
                    framesUsed += 1
                    last = frame
                }
                if layout == nil {
                    // The first tile fixes the tile size (every frame is fitted the same way).
                    let fixed = StoryboardLayout(
                        durationMilliseconds: duration, intervalMilliseconds: request.intervalMilliseconds,
                        tileWidth: frame.image.width, tileHeight: frame.image.height, columns: request.columns,
                        rows: request.rows)
                    try fixed.checkLimits()
                    layout = fixed
                }
                let plan = layout!
                let (sheetIndex, x, y) = plan.place(ofTile: index)
                if sheet == nil {
                    let size = plan.size(ofSheet: sheetIndex)
                    sheet = StoryboardSheet(width: size.width, height: size.height)
                }
                sheet!.place(frame.image, x: x, y: y, width: plan.tileWidth, height: plan.tileHeight)
                times.append(frame.time.milliseconds)
                index += 1
                if index == plan.tileCount || plan.place(ofTile: index).sheet != sheetIndex {
                    let staged = try StagedFile(
                        beside: folder.appendingPathComponent(StoryboardLayout.sheetName(sheetIndex)))
                    try staged.write(try ImageEncoder.encode(sheet!.image, format: .jpeg, quality: request.quality))
                    try staged.sync()
                    sheets.append(staged)
                    sheet = nil
                }
            }
            seeks = source.seekCount
        }
        guard let layout else { throw FilmtoneError(.internalError, "storyboard ended without a tile") }
        try vtt.write(Array(layout.vtt.utf8))
        try vtt.sync()

        // All made: placed together, the VTT last (a player that finds it finds every sheet it names). Every target
        // is checked first (a folder in the way fails before any file is replaced), and each replaced file is kept
        // until the set is placed: a failure part way puts the previous sheets back, so the previous VTT still
        // finds what it names.
        for file in sheets + [vtt] { try file.checkCommittable() }
        try StagedFile.commitAll(sheets + [vtt], replacing: true, keepingPrevious: true)
        done = true
        return StoryboardResult(
            directory: folder.path, vttPath: vtt.target.path,
            sheets: sheets.enumerated().map { index, file in
                let size = layout.size(ofSheet: index)
                return .init(
                    path: file.target.path, width: size.width, height: size.height,
                    tiles: layout.tiles(onSheet: index))
            },
            tileWidth: layout.tileWidth, tileHeight: layout.tileHeight, columns: layout.columns, rows: layout.rows,
            intervalMilliseconds: layout.intervalMilliseconds, toleranceMilliseconds: request.toleranceMilliseconds,
            durationMilliseconds: layout.durationMilliseconds, frameMilliseconds: times, framesUsed: framesUsed,
            seeks: seeks)
    }

    /// The output folder, created when missing (its parent must exist). True when this call created it.
    /// `WRITE_FAILED` when it cannot be created or is not a folder.
    private static func prepare(_ folder: URL) throws -> Bool {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw FilmtoneError(.writeFailed, "-o is not a folder: \(folder.path)")
            }
            return false
        }
        guard mkdir(folder.path, 0o755) == 0 else {
            throw FilmtoneError(
                .writeFailed, "cannot create folder \(folder.path): \(String(cString: strerror(errno)))")
        }
        return true
    }
}

/// A validated storyboard request: every option checked, the source parsed. Touches no file.
struct StoryboardRequest {
    var frame: FrameRequest
    var directory: URL
    var columns: Int
    var rows: Int
    var intervalMilliseconds: Int64
    var toleranceMilliseconds: Int64
    var quality: Double

    init(_ options: StoryboardOptions) throws {
        func invalid(_ message: String) -> FilmtoneError { FilmtoneError(.invalidArgument, message) }
        let limit = FrameOptions.maxMilliseconds
        guard (1...16384).contains(options.tileWidth) else { throw invalid("--max-width (--width) must be 1…16384") }
        guard (1...1000).contains(options.columns) else { throw invalid("--columns must be 1…1000") }
        guard (1...1000).contains(options.rows) else { throw invalid("--rows must be 1…1000") }
        guard (1...limit).contains(options.intervalMilliseconds) else {
            throw invalid("--every must be 0.001 s or more")
        }
        guard (0...limit).contains(options.toleranceMilliseconds) else {
            throw invalid("--tolerance-ms (--tolerance) must be 0 or more")
        }
        guard !options.outputDirectory.isEmpty else { throw invalid("-o must name a folder") }
        try MediaSource.refuseControlCharacters(options.outputDirectory, as: "-o folder", code: .invalidArgument)
        let common = try FrameOptions(
            source: options.source, headers: options.headers, timeMilliseconds: 0,
            toleranceMilliseconds: options.toleranceMilliseconds, maxWidth: options.tileWidth, maxHeight: 16384,
            format: .jpeg, quality: options.quality, timeoutMilliseconds: options.timeoutMilliseconds,
            toneMap: options.toneMap)
        frame = common.frameRequest
        frame.evenHeight = true
        quality = common.quality
        directory = URL(fileURLWithPath: options.outputDirectory).standardizedFileURL
        columns = options.columns
        rows = options.rows
        intervalMilliseconds = options.intervalMilliseconds
        toleranceMilliseconds = options.toleranceMilliseconds
    }
}
