import FilmtoneCore
import Foundation

/// Whether qtdemux (GStreamer 1.22) can be trusted to seek in a fragmented MP4. In pull mode it seeks through the
/// file's random-access index (`mfra`/`tfra`) and takes an entry's `time` for the decoding time of the fragment it
/// points to. ISO/IEC 14496-12 makes that time the sync sample's *presentation* time, and ffmpeg writes it so: with
/// B-frames the first keyframe is shown 2 frames after it is decoded, so after a seek every frame came 80 ms late and
/// a thumbnail showed the frame 2 before the one asked (issue 28). The fragment's own `tfdt` holds the decoding time;
/// when an entry's time differs from it, seeks are not trusted and the file is read forward
/// (`OpenedFrameSource`). Pure: it reads bytes through `read(offset, count)`.
enum FragmentIndex {
    /// How many `tfra` entries are compared with their fragments' `tfdt`: enough to see a muxer's rule.
    static let entriesChecked = 16

    /// What qtdemux can be trusted with in a file.
    struct Verdict: Equatable {
        /// The file ends in a random-access index (`mfra`): it is fragmented, and qtdemux's duration is the last
        /// index entry's time, the start of the last fragment, not the end (a time before the end was refused as
        /// past it).
        var hasIndex: Bool
        /// Its `tfra` times disagree with their fragments' `tfdt`: seeks land late.
        var misleadsSeeks: Bool
        /// The end of the indexed track, in ns of stream time: its last `tfra` entry's time (qtdemux's duration)
        /// plus the durations of the samples of the fragment it points to (`trun`, else `tfhd`'s or `trex`'s
        /// default); nil when anything it needs cannot be read.
        var end: UInt64? = nil
    }

    /// Nothing to distrust: no index (a plain MP4, another container, a remote or unreadable source).
    static let trusted = Verdict(hasIndex: false, misleadsSeeks: false)

    /// The verdict for a file of `size` bytes read through `read`. `mfro`, the file's last box, gives the size of
    /// the `mfra` that ends there; its `tfra` entries are compared with the `tfdt` of the fragments they point to.
    static func inspect(size: Int64, read: (Int64, Int) -> [UInt8]?) -> Verdict {
        guard size >= 16, let tail = read(size - 16, 16), tail.count == 16,
            String(decoding: tail[4..<8], as: UTF8.self) == "mfro"
        else { return trusted }
        let mfraSize = Int64(be32(tail, 12))
        guard mfraSize >= 16, mfraSize <= size, mfraSize <= 1 << 24, let mfra = read(size - mfraSize, Int(mfraSize)),
            mfra.count == Int(mfraSize), String(decoding: mfra[4..<8], as: UTF8.self) == "mfra"
        else { return Verdict(hasIndex: true, misleadsSeeks: false) }
        return Verdict(
            hasIndex: true, misleadsSeeks: misleadsSeeks(mfra, size, read), end: indexedEnd(mfra, size, read))
    }

    /// `inspect` for a source: a local file is read; anything else (remote, unreadable) is trusted.
    static func inspect(_ source: MediaSource) -> Verdict {
        guard case .local(let path) = source, let file = try? POSIXFile(path: path, flags: O_RDONLY),
            let size = file.size
        else { return trusted }
        return inspect(size: size) { offset, count in try? file.read(at: offset, count: count) }
    }

    /// Whether any of the first `entriesChecked` entries of the file's `mfra` disagrees with its fragment's `tfdt`.
    private static func misleadsSeeks(_ mfra: [UInt8], _ size: Int64, _ read: (Int64, Int) -> [UInt8]?) -> Bool {
        for box in boxes(in: mfra, from: 8) where box.type == "tfra" {
            for entry in tfraEntries(mfra, box).prefix(entriesChecked) {
                guard let decodeTime = fragmentDecodeTime(track: entry.track, moofOffset: entry.moofOffset, size, read)
                else { continue }
                if decodeTime != entry.time { return true }
            }
        }
        return false
    }

    /// A box inside `bytes`: its type and the range of its payload (after the 8-byte header).
    struct Box {
        var type: String
        var payload: Range<Int>
    }

    static func boxes(in bytes: [UInt8], from start: Int, to end: Int? = nil) -> [Box] {
        var found: [Box] = []
        var offset = start
        let limit = min(end ?? bytes.count, bytes.count)
        while offset + 8 <= limit {
            let size = Int(be32(bytes, offset))
            guard size >= 8, offset + size <= limit else { break }
            found.append(
                Box(
                    type: String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self),
                    payload: (offset + 8)..<(offset + size)))
            offset += size
        }
        return found
    }

    /// The end of the first indexed track (`Verdict.end`), in ns; nil when the last fragment, its samples' durations
    /// or the track's timescale cannot be read.
    private static func indexedEnd(_ mfra: [UInt8], _ size: Int64, _ read: (Int64, Int) -> [UInt8]?) -> UInt64? {
        guard let tfra = boxes(in: mfra, from: 8).first(where: { $0.type == "tfra" }),
            let last = tfraEntries(mfra, tfra, limit: .max).last,
            let track = TrackDefaults.read(track: last.track, size, read), track.timescale > 0,
            let samples = fragmentDuration(
                track: last.track, moofOffset: last.moofOffset, defaultDuration: track.defaultDuration, size, read)
        else { return nil }
        let (end, overflow) = last.time.addingReportingOverflow(samples)
        guard !overflow, end < UInt64.max / 1_000_000_000 else { return nil }
        return end * 1_000_000_000 / UInt64(track.timescale)
    }

    /// What `moov` says of a track: its timescale (`mdhd`) and the default sample duration of its fragments
    /// (`mvex`/`trex`).
    struct TrackDefaults {
        var timescale: UInt32
        var defaultDuration: UInt32?

        /// From the `moov` among the file's top-level boxes (read up to 16 MiB of it).
        static func read(track: UInt32, _ size: Int64, _ read: (Int64, Int) -> [UInt8]?) -> TrackDefaults? {
            var offset: Int64 = 0
            while offset + 8 <= size, let header = read(offset, 8), header.count == 8 {
                let boxSize = Int64(be32(header, 0))
                guard boxSize >= 8 else { return nil }
                if String(decoding: header[4..<8], as: UTF8.self) == "moov" {
                    guard boxSize <= 1 << 24, let moov = read(offset, Int(boxSize)), moov.count == Int(boxSize) else {
                        return nil
                    }
                    return parse(moov, track: track)
                }
                offset += boxSize
            }
            return nil
        }

        static func parse(_ moov: [UInt8], track: UInt32) -> TrackDefaults? {
            var result: TrackDefaults? = nil
            var defaultDuration: UInt32? = nil
            for box in boxes(in: moov, from: 8) {
                if box.type == "trak" {
                    let children = boxes(in: moov, from: box.payload.lowerBound, to: box.payload.upperBound)
                    guard let tkhd = children.first(where: { $0.type == "tkhd" }), tkhd.payload.count >= 16 else {
                        continue
                    }
                    let p = tkhd.payload.lowerBound
                    let id = moov[p] == 1 ? be32(moov, p + 20) : be32(moov, p + 12)
                    guard id == track, let mdia = children.first(where: { $0.type == "mdia" }),
                        let mdhd = boxes(in: moov, from: mdia.payload.lowerBound, to: mdia.payload.upperBound)
                            .first(where: { $0.type == "mdhd" }), mdhd.payload.count >= 24
                    else { continue }
                    let q = mdhd.payload.lowerBound
                    result = TrackDefaults(
                        timescale: moov[q] == 1 ? be32(moov, q + 20) : be32(moov, q + 12), defaultDuration: nil)
                } else if box.type == "mvex" {
                    for trex in boxes(in: moov, from: box.payload.lowerBound, to: box.payload.upperBound)
                    where trex.type == "trex" && trex.payload.count >= 24 {
                        let p = trex.payload.lowerBound
                        if be32(moov, p + 4) == track { defaultDuration = be32(moov, p + 12) }
                    }
                }
            }
            result?.defaultDuration = defaultDuration
            return result
        }
    }

    /// The summed durations of `track`'s samples in the `moof` at `moofOffset` (each `trun` sample's own, else
    /// `tfhd`'s default, else `defaultDuration`); nil when the fragment cannot be read or a duration is unknown.
    static func fragmentDuration(
        track: UInt32, moofOffset: Int64, defaultDuration: UInt32?, _ size: Int64, _ read: (Int64, Int) -> [UInt8]?
    ) -> UInt64? {
        guard let moof = readMoof(at: moofOffset, size, read) else { return nil }
        for traf in boxes(in: moof, from: 8) where traf.type == "traf" {
            let children = boxes(in: moof, from: traf.payload.lowerBound, to: traf.payload.upperBound)
            guard let tfhd = children.first(where: { $0.type == "tfhd" }), tfhd.payload.count >= 8,
                be32(moof, tfhd.payload.lowerBound + 4) == track
            else { continue }
            let h = tfhd.payload.lowerBound
            let tfhdFlags = be32(moof, h) & 0xFF_FFFF
            var fallback = defaultDuration
            if tfhdFlags & 0x08 != 0 {
                let at = h + 8 + (tfhdFlags & 0x01 != 0 ? 8 : 0) + (tfhdFlags & 0x02 != 0 ? 4 : 0)
                guard at + 4 <= tfhd.payload.upperBound else { return nil }
                fallback = be32(moof, at)
            }
            var total: UInt64 = 0
            for trun in children where trun.type == "trun" {
                let p = trun.payload.lowerBound
                guard trun.payload.count >= 8 else { return nil }
                let flags = be32(moof, p) & 0xFF_FFFF
                let count = Int(be32(moof, p + 4))
                var at = p + 8 + (flags & 0x01 != 0 ? 4 : 0) + (flags & 0x04 != 0 ? 4 : 0)
                let perSample = [0x100, 0x200, 0x400, 0x800].filter { flags & UInt32($0) != 0 }.count * 4
                guard count >= 0, at + count * perSample <= trun.payload.upperBound else { return nil }
                for _ in 0..<count {
                    if flags & 0x100 != 0 {
                        total += UInt64(be32(moof, at))
                    } else if let fallback {
                        total += UInt64(fallback)
                    } else {
                        return nil
                    }
                    at += perSample
                }
            }
            return total
        }
        return nil
    }

    /// The `moof` box at `offset` (at most 1 MiB); nil when there is none.
    private static func readMoof(at offset: Int64, _ size: Int64, _ read: (Int64, Int) -> [UInt8]?) -> [UInt8]? {
        guard offset >= 0, offset + 8 <= size, let header = read(offset, 8), header.count == 8,
            String(decoding: header[4..<8], as: UTF8.self) == "moof"
        else { return nil }
        let moofSize = Int(be32(header, 0))
        guard moofSize >= 8, moofSize <= 1 << 20, let moof = read(offset, moofSize), moof.count == moofSize else {
            return nil
        }
        return moof
    }

    /// A `tfra` box's track and entries (time, moof offset): the first `limit`.
    static func tfraEntries(_ bytes: [UInt8], _ box: Box, limit: Int = entriesChecked)
        -> [(track: UInt32, time: UInt64, moofOffset: Int64)]
    {
        let p = box.payload.lowerBound
        guard box.payload.count >= 16 else { return [] }
        let version = bytes[p]
        let track = be32(bytes, p + 4)
        let lengths = be32(bytes, p + 8)
        let extra = Int((lengths >> 4) & 3) + Int((lengths >> 2) & 3) + Int(lengths & 3) + 3
        let count = Int(be32(bytes, p + 12))
        let fixed = version == 1 ? 16 : 8
        var entries: [(UInt32, UInt64, Int64)] = []
        var offset = p + 16
        for _ in 0..<min(count, limit) {
            guard offset + fixed + extra <= box.payload.upperBound else { break }
            let time = version == 1 ? be64(bytes, offset) : UInt64(be32(bytes, offset))
            let moof = version == 1 ? be64(bytes, offset + 8) : UInt64(be32(bytes, offset + 4))
            entries.append((track, time, Int64(clamping: moof)))
            offset += fixed + extra
        }
        return entries.map { (track: $0.0, time: $0.1, moofOffset: $0.2) }
    }

    /// The `tfdt` (base media decode time) of `track`'s `traf` in the `moof` at `moofOffset`; nil when absent.
    static func fragmentDecodeTime(track: UInt32, moofOffset: Int64, _ size: Int64, _ read: (Int64, Int) -> [UInt8]?)
        -> UInt64?
    {
        guard let moof = readMoof(at: moofOffset, size, read) else { return nil }
        for traf in boxes(in: moof, from: 8) where traf.type == "traf" {
            let children = boxes(in: moof, from: traf.payload.lowerBound, to: traf.payload.upperBound)
            guard let tfhd = children.first(where: { $0.type == "tfhd" }), tfhd.payload.count >= 8,
                be32(moof, tfhd.payload.lowerBound + 4) == track,
                let tfdt = children.first(where: { $0.type == "tfdt" }), tfdt.payload.count >= 8
            else { continue }
            let p = tfdt.payload.lowerBound
            if moof[p] == 1 {
                guard tfdt.payload.count >= 12 else { return nil }
                return be64(moof, p + 4)
            }
            return UInt64(be32(moof, p + 4))
        }
        return nil
    }

    static func be32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        bytes[at..<(at + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func be64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        bytes[at..<(at + 8)].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
