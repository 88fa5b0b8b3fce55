import FilmtoneCore
import Foundation
import GstKit

/// Several pictures of one source from one pipeline (issue 13, item 2): `ftgst thumb --time-ms A,B,C`, `--time`,
/// `--count N`. The source is opened once (`OpenedFrameSource`, kept: forward steps as the engine's kept
/// pipelines take them), the times are visited in ascending order, and a frame already decoded answers every later
/// time it is acceptable for (`FrameRecipe.accepts`). All or nothing: every picture is staged before decoding and
/// committed only once all are made, so a failure on one leaves no file of any.
public enum ThumbnailSet {
    /// One picture of the set: the result, the time asked (resolved, ms), and which decoded frame it shows (1-based
    /// in decode order; nil on a cache hit). `sourceOpens` and `seeks` are the whole call's counts.
    public struct Picture: Sendable {
        public var result: ThumbnailResult
        public var requestedMilliseconds: Int64
        public var frame: Int?
        public var sourceOpens: Int
        public var seeks: Int
        /// `--time auto`: no time was asked (`requestedMs` is null; `timeMs` says what was picked).
        public var isPicked = false

        /// Today's single-result fields, then `requestedMs`, `frame`, `sourceOpens`, `seeks`.
        public var json: JSONValue {
            guard case .object(var fields) = result.json else { return result.json }
            fields.append(("requestedMs", isPicked ? .null : .int(requestedMilliseconds)))
            fields.append(("frame", frame.map { .int(Int64($0)) } ?? .null))
            fields.append(("sourceOpens", .int(Int64(sourceOpens))))
            fields.append(("seeks", .int(Int64(seeks))))
            return .object(fields)
        }
    }

    /// The `index`-th name (1-based) of a printf-style pattern holding exactly one `%d` or `%0Nd` (`%%` is a
    /// literal `%`), as ffmpeg's image2 muxer numbers `thumb-%03d.jpg`. nil when `pattern` holds no index or more
    /// than one, or any other `%` sequence.
    public static func name(pattern: String, index: Int) -> String? {
        var out = ""
        var found = 0
        var chars = Array(pattern)[...]
        while let c = chars.popFirst() {
            guard c == "%" else {
                out.append(c)
                continue
            }
            if chars.first == "%" {
                chars.removeFirst()
                out.append("%")
                continue
            }
            var width = ""
            while let d = chars.first, d.isASCII, d.isNumber {
                width.append(d)
                chars.removeFirst()
            }
            guard chars.popFirst() == "d", width.isEmpty || (width.hasPrefix("0") && width.count <= 3) else {
                return nil
            }
            let digits = String(index)
            let pad = Int(width) ?? 0
            out += String(repeating: "0", count: max(0, pad - digits.count)) + digits
            found += 1
        }
        return found == 1 ? out : nil
    }

    /// Makes every picture, then `body` with them in the order the times were given.
    public static func withPictures<T>(
        _ options: ThumbnailOptions, times: [ThumbnailTime], _ body: ([Picture]) async throws -> T
    ) async throws -> T {
        guard !times.isEmpty else { throw FilmtoneError(.invalidArgument, "no time given") }
        let pattern: String
        var base = options
        let single = times.count == 1
        if let output = options.output {
            guard single || name(pattern: output, index: 1) != nil else {
                throw FilmtoneError(
                    .invalidArgument,
                    "several pictures need -o with one index pattern (%d or %03d, as ffmpeg's thumb-%03d.jpg): \(output)"
                )
            }
            pattern = output
        } else {
            let given =
                options.cacheName ?? "thumb-\(UUID().uuidString.lowercased())" + (single ? "" : "-%03d")
            guard single || name(pattern: given, index: 1) != nil else {
                throw FilmtoneError(
                    .invalidArgument, "several pictures need --cache-name with one index pattern (%03d): \(given)")
            }
            pattern = given
        }
        // Every request checked before any work: the names and all other options, each time with its own file.
        var requests: [ThumbnailRequest] = []
        for (index, time) in times.enumerated() {
            // One time: the name as given (an index in it is numbered 1).
            let file = name(pattern: pattern, index: index + 1) ?? pattern
            if options.output != nil { base.output = file } else { base.cacheName = file }
            if case .milliseconds(let ms) = time { base.timeMilliseconds = ms } else { base.timeMilliseconds = 0 }
            var request = try ThumbnailRequest(base)
            request.picksTime = time == .auto
            requests.append(request)
        }
        guard Set(requests.map(\.output)).count == requests.count else {
            throw FilmtoneError(.invalidArgument, "two pictures would get the same file name: \(pattern)")
        }
        let checked = requests
        let (pictures, leases) = try await runDetached { isCancelled in
            try run(checked, times: times, isCancelled: isCancelled)
        }
        let value = try await body(pictures)
        withExtendedLifetime(leases) {}
        return value
    }

    static func run(_ requests: [ThumbnailRequest], times: [ThumbnailTime], isCancelled: @escaping () -> Bool)
        throws -> ([Picture], [CacheFileLease])
    {
        let first = requests[0]
        try first.source.checkExists()
        let identity = first.isOwnFile ? nil : try MezzanineStore.identity(of: first.source)
        var answers: [Int: (ThumbnailResult, Int64, Int?)] = [:]
        var leases: [CacheFileLease] = []
        // Cache hits first (times in ms and auto: a fraction needs the duration, known once the source is open).
        if let identity {
            for (index, request) in requests.enumerated() {
                guard let ms = times[index].knownMilliseconds,
                    let (hit, lease) = try Thumbnails.cached(
                        request, key: request.cacheKey(source: identity), isCancelled: isCancelled)
                else { continue }
                answers[index] = (hit, ms, nil)
                if let lease { leases.append(lease) }
            }
        }
        var opens = 0
        var seeks = 0
        let misses = requests.indices.filter { answers[$0] == nil }
        if !misses.isEmpty {
            if !first.isOwnFile { try CacheDirectory.prepare(first.cacheDirectory) }
            var staged: [Int: StagedFile] = [:]
            for index in misses { staged[index] = try StagedFile(beside: requests[index].output) }
            let started = staged[misses[0]].flatMap { CacheDirectory.runStart(createdFile: $0.path) }
            // A fraction's entry is looked up once its time is known: a hit skips its decoding.
            func cachedFraction(_ index: Int, _ request: ThumbnailRequest, _ ms: Int64) throws
                -> (ThumbnailResult, Int64, Int?)?
            {
                guard case .fraction = times[index], let identity,
                    let (hit, lease) = try Thumbnails.cached(
                        request, key: request.cacheKey(source: identity), isCancelled: isCancelled)
                else { return nil }
                staged[index]?.discard()
                staged[index] = nil
                if let lease { leases.append(lease) }
                return (hit, ms, nil)
            }
            // One picture written into its staged file: its result, the time asked and the frame's number.
            func make(
                _ index: Int, _ request: ThumbnailRequest, _ picked: (frame: GrabbedFrame, number: Int), _ ms: Int64
            )
                throws -> (ThumbnailResult, Int64, Int?)
            {
                let key = identity.map { request.cacheKey(source: $0) }
                try staged[index]!.write(try Thumbnails.encoded(picked.frame, request, key: key))
                try staged[index]!.sync()
                let result = Thumbnails.result(
                    request, width: picked.frame.image.width, height: picked.frame.image.height,
                    time: picked.frame.time.milliseconds, cached: false)
                return (result, ms, picked.number)
            }
            let formats = PictureFormatWatch()
            let deadline = Deadline(after: first.frame.timeoutMilliseconds)
            // A local photo the photo path decodes (`ScaledPhoto`: JPEG, PNG, WebP; never two full-size copies, no
            // GStreamer) is one still for every time: the single call's picture, with the JSON GStreamer's still
            // gave (one open of the source, frame 1, no seeks, the times resolved against no duration).
            let photo = isCancelled() ? nil : ScaledPhoto.grab(first.frame)
            let made = try formats.refining { () -> [Int: (ThumbnailResult, Int64, Int?)] in
                if let photo {
                    opens = 1
                    var out: [Int: (ThumbnailResult, Int64, Int?)] = [:]
                    for index in misses {
                        var request = requests[index]
                        let ms = times[index].resolved(durationMilliseconds: 0)
                        request.frame.time = .milliseconds(ms)
                        out[index] = try cachedFraction(index, request, ms) ?? make(index, request, (photo, 1), ms)
                    }
                    return out
                }
                // One `--time auto` picture: where the file's demuxer allows, the first sample's keyframe is sought
                // before the first preroll, as the desktop thumbnailer does, so the first keyframe is not decoded to
                // preroll and again for that sample.
                let seeksFirst = times == [.auto] && FramePipeline.seeksBeforePreroll(first.frame.source)
                let source = try OpenedFrameSource(
                    first.frame, watching: formats, deadline: deadline, keeps: !seeksFirst,
                    firstKeyframe: seeksFirst ? FrameInterest.firstSample : nil, isCancelled: isCancelled)
                opens = 1
                defer { source.stop() }
                let fractions = misses.contains { if case .fraction = times[$0] { true } else { false } }
                let duration: Int64
                if let known = source.durationMilliseconds, known > 0 {
                    duration = known
                } else if fractions, !source.isStill {
                    // Taken as 0, every fraction would be a copy of the first frame.
                    throw FilmtoneError(
                        .decodeFailed, "the source's duration is unknown: --count and percentages need it")
                } else {
                    duration = 0
                }
                var wanted = misses.map { ($0, times[$0].resolved(durationMilliseconds: duration)) }
                wanted.sort { $0.1 < $1.1 }
                var decoded: [(frame: GrabbedFrame, number: Int)] = []
                var out: [Int: (ThumbnailResult, Int64, Int?)] = [:]
                for (index, ms) in wanted {
                    var request = requests[index]
                    request.frame.time = .milliseconds(ms)
                    if let hit = try cachedFraction(index, request, ms) {
                        out[index] = hit
                        continue
                    }
                    var requested = ms
                    let picked: (frame: GrabbedFrame, number: Int)
                    if times[index] == .auto {
                        let choice = try pickFrame(source, deadline, isCancelled)
                        requested = choice.sampled
                        picked = (choice.frame, choice.number)
                    } else if let reuse = decoded.first(where: {
                        $0.frame.isStill
                            || FrameRecipe.accepts(
                                frame: $0.frame.time, duration: nil, target: request.time,
                                tolerance: request.tolerance)
                    }) {
                        picked = reuse
                    } else {
                        if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }
                        let frame = try source.frame(
                            at: request.time, tolerance: request.tolerance, deadline: deadline,
                            isCancelled: isCancelled)
                        picked = (frame, decoded.count + 1)
                        decoded.append(picked)
                    }
                    out[index] = try make(index, request, picked, requested)
                }
                seeks = source.seekCount
                opens = source.opens
                return out
            }
            // All made: committed together (under the folder's lock for the cache, then evicted once), and only
            // once every target can take its file: a folder in the way of the second must not leave the first
            // replaced.
            for index in misses { try staged[index]?.checkCommittable() }
            if first.isOwnFile {
                // A failure part way takes back those placed and puts back the files they replaced.
                try StagedFile.commitAll(misses.compactMap { staged[$0] }, replacing: true, keepingPrevious: true)
            } else {
                try CacheDirectory.withLock(in: first.cacheDirectory, isCancelled: isCancelled) {
                    for index in misses where staged[index] != nil {
                        try staged[index]!.commit(replacing: true)
                        if let lease = CacheFileLease(requests[index].output) { leases.append(lease) }
                    }
                    CacheDirectory.evict(
                        in: first.cacheDirectory, capBytes: first.cacheCapBytes, keep: requests[misses[0]].fileName,
                        startedAt: started, owned: ImageStamp.isStamped(file:))
                }
            }
            answers.merge(made) { $1 }
        }
        let pictures = requests.indices.map { index in
            let (result, ms, frame) = answers[index]!
            return Picture(
                result: result, requestedMilliseconds: ms, frame: frame, sourceOpens: opens, seeks: seeks,
                isPicked: times[index] == .auto)
        }
        return (pictures, leases)
    }

    /// `--time auto`: the sampled keyframes (`FrameInterest.sampleTimes`) in order until one is worth showing (a
    /// keyframe already looked at is not judged again). Returns the chosen frame, its number among the distinct
    /// frames looked at (1-based), and the sample time that found it.
    static func pickFrame(_ source: OpenedFrameSource, _ deadline: Deadline, _ isCancelled: () -> Bool) throws
        -> (frame: GrabbedFrame, number: Int, sampled: Int64)
    {
        var frames: [GrabbedFrame] = []
        var statistics: [FrameInterest.Statistics] = []
        var sampled: [Int64] = []
        for time in FrameInterest.sampleTimes(durationMilliseconds: source.durationMilliseconds) {
            if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }
            let frame = try source.keyframe(before: .milliseconds(time), deadline: deadline, isCancelled: isCancelled)
            if frames.last?.time == frame.time { continue }
            frames.append(frame)
            sampled.append(time)
            statistics.append(FrameInterest.statistics(of: frame.image))
            if statistics.last!.isWorthShowing || frame.isStill { break }
        }
        let chosen = FrameInterest.pick(statistics) ?? 0
        return (frames[chosen], chosen + 1, sampled[chosen])
    }
}

extension ThumbnailTime {
    /// The time before the source is open: milliseconds as given; `auto`'s entry is keyed without one (0 here);
    /// nil for a fraction.
    fileprivate var knownMilliseconds: Int64? {
        switch self {
        case .milliseconds(let ms): return ms
        case .auto: return 0
        case .fraction: return nil
        }
    }
}
