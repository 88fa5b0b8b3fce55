import FilmtoneCore
import Foundation

/// The one video track of a plain (unfragmented) MP4 or QuickTime file, read from its sample tables: where each
/// sample is, when it is decoded and shown, which are keyframes, and what the sample entry says about the pictures.
/// Read for the desktop thumbnailer's direct path (`DirectKeyframe`); `nil` whenever the file is anything that path
/// cannot be sure of (then GStreamer's `qtdemux` reads it): fragments, several video tracks, a turn, non-square
/// pixels, an edit list other than one plain edit, Dolby Vision, interlaced fields, 64-bit-sized boxes inside `moov`,
/// tables that disagree with each other or point past the file's end.
struct MP4VideoTrack {
    enum Codec: Equatable {
        case h264
        case hevc
    }

    var codec: Codec
    /// The `avcC` or `hvcC` record's payload: the decoder's extradata.
    var configuration: [UInt8]
    var width: Int
    var height: Int
    /// The movie's duration (`mvhd`), in ns: what `qtdemux` reports as the duration.
    var durationNanoseconds: Int64
    /// When each sample is decoded and shown, and which are keyframes.
    var times: SampleTimes
    /// Per sample, in decoding order: its size and where it is in the file.
    var sizes: [Int]
    var offsets: [Int64]
    /// The `colr` box's `nclx`/`nclc` code points, when there is one.
    var colour: (primaries: Int, transfer: Int, matrix: Int, fullRange: Bool)?
    /// The file's sound tracks' sample times: qtdemux aligns a keyframe seek to the earliest sync sample of every
    /// track (`DirectKeyframe.Timing`).
    var sound: [SampleTimes] = []

    /// One track's sample times, in its media ticks.
    struct SampleTimes: Equatable {
        /// The media timescale (`mdhd`).
        var timescale: Int64
        /// The one edit's `media_time` (0 without an edit list): shown times start there.
        var mediaStart: Int64
        /// Per sample, in decoding order.
        var decodeTimes: [Int64]
        var compositionOffsets: [Int64]
        /// 0-based sync samples, ascending (every sample without an `stss`).
        var syncSamples: [Int]
    }

    /// Largest `moov` read (the sample tables of hours of video fit in a few MiB).
    static let moovLimit: Int64 = 64 << 20
    /// Most samples taken.
    static let sampleLimit = 4_000_000
    /// Largest sample read (a keyframe of an 8K intra stream is a few MiB).
    static let sampleSizeLimit = 64 << 20

    /// Why the file was declined, for the switch that asks for the reason (`FTGST_DIRECT_KEYFRAME=required`).
    struct Declined: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    typealias Read = (Int64, Int) -> [UInt8]?

    static func read(size: Int64, _ read: Read) throws -> MP4VideoTrack {
        typealias Boxes = DolbyVisionReader.MP4Boxes
        let top = Boxes.boxes(from: 0, to: size, read)
        guard top.last?.end == size else { throw Declined("the top-level boxes do not end at the file's end") }
        guard
            top.first?.type == "ftyp" || top.first?.type == "moov" || top.first?.type == "wide"
                || top.first?.type == "mdat" || top.first?.type == "free"
        else { throw Declined("not an MP4/QuickTime file") }
        guard !top.contains(where: { $0.type == "moof" || $0.type == "mfra" }) else { throw Declined("fragmented") }
        let moovs = top.filter { $0.type == "moov" }
        guard moovs.count == 1, let moov = moovs.first else { throw Declined("not one moov") }
        guard moov.end - moov.payload <= moovLimit,
            let bytes = read(moov.payload, Int(moov.end - moov.payload)), bytes.count == Int(moov.end - moov.payload)
        else { throw Declined("moov unreadable or too large") }
        var parser = Parser(bytes: bytes, fileSize: size)
        return try parser.track()
    }

    static func read(path: String) throws -> MP4VideoTrack {
        guard let file = try? POSIXFile(path: path, flags: O_RDONLY), let size = file.size else {
            throw Declined("cannot open")
        }
        return try read(size: size) { offset, count in try? file.read(at: offset, count: count) }
    }

    /// The bytes of `moov`'s payload, walked with 32-bit box sizes only.
    private struct Parser {
        let bytes: [UInt8]
        let fileSize: Int64

        func boxes(_ range: Range<Int>) -> [FragmentIndex.Box] {
            FragmentIndex.boxes(in: bytes, from: range.lowerBound, to: range.upperBound)
        }

        func only(_ type: String, in range: Range<Int>) throws -> Range<Int> {
            let found = boxes(range).filter { $0.type == type }
            guard found.count == 1 else { throw Declined("\(found.count) \(type) boxes") }
            return found[0].payload
        }

        func u16(_ at: Int) -> Int { Int(bytes[at]) << 8 | Int(bytes[at + 1]) }
        func u32(_ at: Int) -> Int64 { Int64(FragmentIndex.be32(bytes, at)) }
        func i32(_ at: Int) -> Int64 { Int64(Int32(bitPattern: FragmentIndex.be32(bytes, at))) }
        func u64(_ at: Int) -> Int64? {
            let value = FragmentIndex.be64(bytes, at)
            return value <= UInt64(Int64.max) ? Int64(value) : nil
        }

        func need(_ range: Range<Int>, _ count: Int, _ what: String) throws {
            guard count >= 0, range.count >= count else { throw Declined("\(what) is short") }
        }

        /// A full box's table: its entry count (at +4) and that the entries fit.
        func entries(_ payload: Range<Int>, entrySize: Int, _ what: String) throws -> Int {
            try need(payload, 8, what)
            let count = Int(u32(payload.lowerBound + 4))
            guard count <= sampleLimit, payload.count >= 8 + count * entrySize else {
                throw Declined("\(what) has \(count) entries that do not fit")
            }
            return count
        }

        mutating func track() throws -> MP4VideoTrack {
            let all = 0..<bytes.count
            let mvhd = try only("mvhd", in: all)
            try need(mvhd, 32, "mvhd")
            let movieScale: Int64
            let movieDuration: Int64
            if bytes[mvhd.lowerBound] == 1 {
                movieScale = u32(mvhd.lowerBound + 20)
                guard let duration = u64(mvhd.lowerBound + 24) else { throw Declined("mvhd duration") }
                movieDuration = duration
            } else {
                movieScale = u32(mvhd.lowerBound + 12)
                movieDuration = u32(mvhd.lowerBound + 16)
            }
            guard movieScale > 0, movieDuration > 0, movieDuration < Int64.max / 1_000_000_000 else {
                throw Declined("no movie duration")
            }
            guard !boxes(all).contains(where: { $0.type == "mvex" }) else { throw Declined("fragmented (mvex)") }
            var videos: [Range<Int>] = []
            var sounds: [Range<Int>] = []
            for trak in boxes(all) where trak.type == "trak" {
                let mdia = try only("mdia", in: trak.payload)
                let hdlr = try only("hdlr", in: mdia)
                try need(hdlr, 12, "hdlr")
                let handler = String(decoding: bytes[(hdlr.lowerBound + 8)..<(hdlr.lowerBound + 12)], as: UTF8.self)
                switch handler {
                case "vide": videos.append(trak.payload)
                case "soun": sounds.append(trak.payload)
                // Subtitles, timecodes, metadata: whether qtdemux makes a stream of them (which then takes part in
                // its seeks) is not known here.
                default: throw Declined("a \(handler) track")
                }
            }
            guard videos.count == 1, let trak = videos.first else { throw Declined("\(videos.count) video tracks") }
            try checkUpright(try only("tkhd", in: trak))
            let stbl = try only("stbl", in: try only("minf", in: try only("mdia", in: trak)))
            var track = try sampleEntry(try only("stsd", in: stbl))
            // The exact ns of gst_util_uint64_scale (integer, rounding down), as qtdemux computes it.
            let (high, low) = movieDuration.multipliedFullWidth(by: 1_000_000_000)
            track.durationNanoseconds = Int64(movieScale).dividingFullWidth((high, low)).quotient
            (track.times, track.sizes, track.offsets) = try samples(of: trak)
            track.sound = try sounds.map { try samples(of: $0).times }
            return track
        }

        /// A track's sample tables (`mdhd`'s timescale, the one plain edit, `stbl`) expanded per sample.
        func samples(of trak: Range<Int>) throws -> (times: SampleTimes, sizes: [Int], positions: [Int64]) {
            let mdia = try only("mdia", in: trak)
            let mdhd = try only("mdhd", in: mdia)
            try need(mdhd, 24, "mdhd")
            var table = try samples(try only("stbl", in: try only("minf", in: mdia)))
            table.times.timescale =
                bytes[mdhd.lowerBound] == 1 ? u32(mdhd.lowerBound + 20) : u32(mdhd.lowerBound + 12)
            guard table.times.timescale > 0 else { throw Declined("no media timescale") }
            table.times.mediaStart = try editStart(trak)
            return (table.times, table.sizes, table.positions)
        }

        /// Only the identity matrix: a turned track is the GStreamer path's (`videoflip`).
        func checkUpright(_ tkhd: Range<Int>) throws {
            let at = tkhd.lowerBound + (bytes[tkhd.lowerBound] == 1 ? 52 : 40)
            try need(tkhd, at - tkhd.lowerBound + 36, "tkhd")
            let identity: [Int64] = [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x4000_0000]
            guard (0..<9).map({ u32(at + 4 * $0) }) == identity else { throw Declined("a turned or scaled track") }
        }

        /// The one plain edit's media time (rate 1, not empty), 0 without an edit list.
        func editStart(_ trak: Range<Int>) throws -> Int64 {
            guard let edts = boxes(trak).first(where: { $0.type == "edts" }) else { return 0 }
            let elst = try only("elst", in: edts.payload)
            let wide = bytes[elst.lowerBound] == 1
            let count = try entries(elst, entrySize: wide ? 20 : 12, "elst")
            guard count == 1 else { throw Declined("an edit list of \(count) edits") }
            let at = elst.lowerBound + 8
            let mediaTime = wide ? (u64(at + 8) ?? -1) : i32(at + 4)
            let rate = u32(at + (wide ? 16 : 8))
            guard mediaTime >= 0, rate == 0x10000 else { throw Declined("an empty or non-plain edit") }
            return mediaTime
        }

        /// The one sample entry: `avc1`, `hvc1` or `hev1` with its configuration record; square pixels, progressive,
        /// no Dolby Vision.
        func sampleEntry(_ stsd: Range<Int>) throws -> MP4VideoTrack {
            try need(stsd, 8, "stsd")
            guard u32(stsd.lowerBound + 4) == 1 else { throw Declined("several sample entries") }
            let entries = boxes((stsd.lowerBound + 8)..<stsd.upperBound)
            guard entries.count == 1, let entry = entries.first else { throw Declined("no sample entry") }
            let codec: Codec
            switch entry.type {
            case "avc1": codec = .h264
            case "hvc1", "hev1": codec = .hevc
            default: throw Declined("a \(entry.type) track")
            }
            try need(entry.payload, 78, "the sample entry")
            let width = u16(entry.payload.lowerBound + 24)
            let height = u16(entry.payload.lowerBound + 26)
            var configuration: [UInt8]?
            var colour: (Int, Int, Int, Bool)?
            for child in boxes((entry.payload.lowerBound + 78)..<entry.payload.upperBound) {
                switch child.type {
                case "avcC" where codec == .h264, "hvcC" where codec == .hevc:
                    guard configuration == nil else { throw Declined("two configuration records") }
                    configuration = Array(bytes[child.payload])
                case "pasp":
                    try need(child.payload, 8, "pasp")
                    let h = u32(child.payload.lowerBound)
                    let v = u32(child.payload.lowerBound + 4)
                    guard h == v else { throw Declined("non-square pixels") }
                case "colr":
                    try need(child.payload, 10, "colr")
                    let kind = String(decoding: bytes[child.payload.prefix(4)], as: UTF8.self)
                    guard kind == "nclx" || kind == "nclc" else { continue }  // an ICC profile: not used by qtdemux
                    let at = child.payload.lowerBound + 4
                    let full = kind == "nclx" && child.payload.count >= 11 && bytes[at + 6] & 0x80 != 0
                    colour = (u16(at), u16(at + 2), u16(at + 4), full)
                case "fiel":
                    guard child.payload.count >= 1, bytes[child.payload.lowerBound] <= 1 else {
                        throw Declined("interlaced fields")
                    }
                case "dvcC", "dvvC", "dvwC": throw Declined("Dolby Vision")
                default: continue
                }
            }
            guard let configuration, !configuration.isEmpty, width > 0, height > 0 else {
                throw Declined("no configuration record")
            }
            return MP4VideoTrack(
                codec: codec, configuration: configuration, width: width, height: height, durationNanoseconds: 0,
                times: SampleTimes(
                    timescale: 0, mediaStart: 0, decodeTimes: [], compositionOffsets: [], syncSamples: []),
                sizes: [], offsets: [], colour: colour)
        }

        /// stts, ctts, stss, stsz, stsc, stco/co64 expanded per sample.
        func samples(_ stbl: Range<Int>) throws -> (sizes: [Int], positions: [Int64], times: SampleTimes) {
            let children = boxes(stbl)
            func box(_ type: String) throws -> Range<Int>? {
                let found = children.filter { $0.type == type }
                guard found.count <= 1 else { throw Declined("two \(type) boxes") }
                return found.first?.payload
            }
            guard let stsz = try box("stsz") else { throw Declined("no stsz") }
            try need(stsz, 12, "stsz")
            let fixed = Int(u32(stsz.lowerBound + 4))
            let count = Int(u32(stsz.lowerBound + 8))
            guard count > 0, count <= sampleLimit, fixed != 0 || stsz.count >= 12 + 4 * count else {
                throw Declined("stsz")
            }
            let sizes =
                fixed != 0
                ? [Int](repeating: fixed, count: count)
                : (0..<count).map {
                    Int(u32(stsz.lowerBound + 12 + 4 * $0))
                }

            guard let stts = try box("stts") else { throw Declined("no stts") }
            var times: [Int64] = []
            times.reserveCapacity(count)
            var time: Int64 = 0
            for i in 0..<(try entries(stts, entrySize: 8, "stts")) {
                let at = stts.lowerBound + 8 + 8 * i
                let (run, delta) = (Int(u32(at)), u32(at + 4))
                guard run <= count - times.count else { throw Declined("stts counts more samples than stsz") }
                for _ in 0..<run {
                    times.append(time)
                    time += delta
                }
            }
            guard times.count == count else { throw Declined("stts counts fewer samples than stsz") }

            var offsets = [Int64](repeating: 0, count: count)
            if let ctts = try box("ctts") {
                let signed = bytes[ctts.lowerBound] == 1
                var sample = 0
                for i in 0..<(try entries(ctts, entrySize: 8, "ctts")) {
                    let at = ctts.lowerBound + 8 + 8 * i
                    let run = Int(u32(at))
                    let offset = signed ? i32(at + 4) : u32(at + 4)
                    guard run <= count - sample else { throw Declined("ctts counts more samples than stsz") }
                    for _ in 0..<run {
                        offsets[sample] = offset
                        sample += 1
                    }
                }
                guard sample == count else { throw Declined("ctts counts fewer samples than stsz") }
            }

            var sync = Array(0..<count)
            if let stss = try box("stss") {
                sync = try (0..<(try entries(stss, entrySize: 4, "stss"))).map {
                    let number = Int(u32(stss.lowerBound + 8 + 4 * $0))
                    guard number >= 1, number <= count else { throw Declined("stss names sample \(number)") }
                    return number - 1
                }
                guard zip(sync, sync.dropFirst()).allSatisfy({ $0 < $1 }), !sync.isEmpty else {
                    throw Declined("stss is not ascending")
                }
            }

            var chunks: [Int64] = []
            if let stco = try box("stco") {
                chunks = try (0..<(try entries(stco, entrySize: 4, "stco"))).map { u32(stco.lowerBound + 8 + 4 * $0) }
            } else if let co64 = try box("co64") {
                chunks = try (0..<(try entries(co64, entrySize: 8, "co64"))).map {
                    guard let offset = u64(co64.lowerBound + 8 + 8 * $0) else { throw Declined("co64") }
                    return offset
                }
            }
            guard !chunks.isEmpty, let stsc = try box("stsc") else { throw Declined("no chunks") }
            let runs = try (0..<(try entries(stsc, entrySize: 12, "stsc"))).map {
                (first: Int(u32(stsc.lowerBound + 8 + 12 * $0)), samples: Int(u32(stsc.lowerBound + 12 + 12 * $0)))
            }
            guard let firstRun = runs.first, firstRun.first == 1,
                zip(runs, runs.dropFirst()).allSatisfy({ $0.first < $1.first })
            else { throw Declined("stsc") }
            var positions = [Int64](repeating: 0, count: count)
            var sample = 0
            for (index, run) in runs.enumerated() {
                let last = index + 1 < runs.count ? runs[index + 1].first - 1 : chunks.count
                guard run.first <= chunks.count, last <= chunks.count, run.samples > 0 || run.first > last else {
                    throw Declined("stsc names chunks that are not there")
                }
                if run.first > last { continue }
                for chunk in run.first...last where sample < count {
                    var offset = chunks[chunk - 1]
                    let end = sample + min(run.samples, count - sample)
                    while sample < end {
                        positions[sample] = offset
                        offset += Int64(sizes[sample])
                        sample += 1
                    }
                }
            }
            guard sample == count else { throw Declined("the chunks hold \(sample) of \(count) samples") }
            for i in 0..<count where positions[i] < 0 || positions[i] + Int64(sizes[i]) > fileSize {
                throw Declined("sample \(i + 1) lies past the file's end")
            }
            guard sizes.allSatisfy({ $0 <= sampleSizeLimit }) else { throw Declined("a sample of more than 64 MiB") }
            return (
                sizes, positions,
                SampleTimes(
                    timescale: 0, mediaStart: 0, decodeTimes: times, compositionOffsets: offsets, syncSamples: sync)
            )
        }
    }
}
