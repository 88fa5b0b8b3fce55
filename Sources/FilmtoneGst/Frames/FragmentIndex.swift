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
    }

    /// Nothing to distrust: no index (a plain MP4, another container, a remote or unreadable source).
    static let trusted = Verdict(hasIndex: false, misleadsSeeks: false)

    /// The verdict for a file of `size` bytes read through `read`. `mfro`, the file's last box, gives the size of
    /// the `mfra` that ends there; its `tfra` entries are compared with the `tfdt` of the fragments they point to.
    static func inspect(size: Int64, read: (Int64, Int) -> [UInt8]?) -> Verdict {
        guard size >= 16, let tail = read(size - 16, 16), tail.count == 16,
            String(decoding: tail[4..<8], as: UTF8.self) == "mfro"
        else { return trusted }
        return Verdict(hasIndex: true, misleadsSeeks: misleadsSeeks(mfraSize: Int64(be32(tail, 12)), size, read))
    }

    /// `inspect` for a source: a local file is read; anything else (remote, unreadable) is trusted.
    static func inspect(_ source: MediaSource) -> Verdict {
        guard case .local(let path) = source, let file = try? POSIXFile(path: path, flags: O_RDONLY),
            let size = file.size
        else { return trusted }
        return inspect(size: size) { offset, count in try? file.read(at: offset, count: count) }
    }

    /// Whether any of the first `entriesChecked` entries of the `mfra` of `mfraSize` bytes ending the file disagrees
    /// with its fragment's `tfdt`; false when the index cannot be read.
    private static func misleadsSeeks(mfraSize: Int64, _ size: Int64, _ read: (Int64, Int) -> [UInt8]?) -> Bool {
        guard mfraSize >= 16, mfraSize <= size, mfraSize <= 1 << 24, let mfra = read(size - mfraSize, Int(mfraSize)),
            mfra.count == Int(mfraSize), String(decoding: mfra[4..<8], as: UTF8.self) == "mfra"
        else { return false }
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

    /// A `tfra` box's track and entries (time, moof offset).
    static func tfraEntries(_ bytes: [UInt8], _ box: Box) -> [(track: UInt32, time: UInt64, moofOffset: Int64)] {
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
        for _ in 0..<min(count, entriesChecked) {
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
        guard moofOffset >= 0, moofOffset + 8 <= size, let header = read(moofOffset, 8), header.count == 8,
            String(decoding: header[4..<8], as: UTF8.self) == "moof"
        else { return nil }
        let moofSize = Int(be32(header, 0))
        guard moofSize >= 8, moofSize <= 1 << 20, let moof = read(moofOffset, moofSize), moof.count == moofSize else {
            return nil
        }
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
