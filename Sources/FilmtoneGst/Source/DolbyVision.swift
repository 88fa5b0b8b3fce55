import FilmtoneCore
import Foundation

/// A stream's Dolby Vision configuration record (`DOVIDecoderConfigurationRecord`, Dolby's "Dolby Vision Streams
/// Within the ISO Base Media File Format" 2.x): the profile, level, layers and which plain format the base layer is
/// compatible with.
///
/// GStreamer 1.22 reads none of it: qtdemux takes a `dvh1` sample entry for plain HEVC and drops the `dvcC`/`dvvC`
/// box, matroskademux drops the `BlockAdditionMapping`, so a profile 5 stream (colours in Dolby's IPTPQc2, no
/// compatible base layer) decodes to a green-and-purple picture without an error. ftgst reads the record itself
/// (`DolbyVisionReader`): profiles with a compatible base layer (8.1, 8.2, 8.4, 7, 4, 9, 10.x) are shown through that
/// base layer, the others are refused (`refusal`).
public struct DolbyVisionConfiguration: Equatable, Sendable {
    public var profile: Int
    public var level: Int
    /// `rpu_present_flag`, `el_present_flag`, `bl_present_flag`.
    public var hasRPU: Bool
    public var hasEnhancementLayer: Bool
    public var hasBaseLayer: Bool
    /// `dv_bl_signal_compatibility_id`: 0 none, 1 HDR10, 2 SDR (BT.709), 4 HLG, 6 HDR10 as on Ultra HD Blu-ray.
    public var compatibility: Int

    /// What a plain decoder shows of the stream: the base layer, when it is one of the plain formats.
    public enum BaseLayer: String, Sendable {
        case hdr10
        case sdr
        case hlg
    }

    /// Parses a record of at least 8 bytes (version 1 or 2, as the boxes and Matroska's mapping hold it); nil for
    /// anything else.
    init?(record: [UInt8]) {
        guard record.count >= 8, (1...2).contains(record[0]) else { return nil }
        let flags = Int(record[2]) << 8 | Int(record[3])
        profile = flags >> 9
        level = (flags >> 3) & 0x3F
        hasRPU = flags & 4 != 0
        hasEnhancementLayer = flags & 2 != 0
        hasBaseLayer = flags & 1 != 0
        compatibility = Int(record[4] >> 4)
    }

    /// The base layer a plain decoder shows correctly, nil when there is none: profile 5 (IPTPQc2 in the only
    /// layer), a record without a base layer, or a compatibility id ftgst does not know.
    public var baseLayer: BaseLayer? {
        guard hasBaseLayer, profile != 5 else { return nil }
        switch compatibility {
        case 1, 6: return .hdr10
        case 2: return .sdr
        case 4: return .hlg
        default: return nil
        }
    }

    /// `8.4`, `5`: the name players show (profile, then the compatibility id when there is one).
    public var name: String { compatibility == 0 ? "\(profile)" : "\(profile).\(compatibility)" }

    /// The error for a stream that cannot be shown (`baseLayer` nil); nil when it can.
    var refusal: FilmtoneError? {
        guard baseLayer == nil else { return nil }
        let why =
            profile == 5
            ? "its only layer is coded in Dolby's own colour space (IPTPQc2), which needs a Dolby Vision decoder; "
                + "shown as plain HEVC it would come out green and purple"
            : "it has no base layer compatible with HDR10, HLG or SDR (compatibility id \(compatibility))"
        return FilmtoneError(.unsupportedFormat, "Dolby Vision profile \(name) cannot be shown: \(why)")
    }

    /// Probe's object (`VideoStreamReport.dolbyVision`).
    public var json: JSONValue {
        .object([
            ("profile", .int(Int64(profile))), ("level", .int(Int64(level))),
            ("compatibility", .int(Int64(compatibility))),
            ("baseLayer", baseLayer.map { JSONValue.string($0.rawValue) } ?? .null),
            ("enhancementLayer", .bool(hasEnhancementLayer)),
        ])
    }
}

/// Finds the Dolby Vision configuration record of a local file's first video track: the `dvcC`, `dvvC` or `dvwC` box
/// of its sample entry in an MP4 or QuickTime file, or the `dvcC`/`dvvC` `BlockAdditionMapping` of its track entry in
/// Matroska or WebM. Reads box and element headers only on the way (a few small reads, wherever `moov` is), then the
/// sample entry or the `Tracks` element. A remote source's record is found by `DolbyVisionScanner` instead; MPEG-TS's
/// descriptor is not read (such a stream is shown as its decoder shows it). Pure: it reads bytes through
/// `read(offset, count)`.
enum DolbyVisionReader {
    typealias Read = (Int64, Int) -> [UInt8]?

    /// For a source: a local file is read; anything else has none.
    static func configuration(of source: MediaSource) -> DolbyVisionConfiguration? {
        guard case .local(let path) = source, let file = try? POSIXFile(path: path, flags: O_RDONLY),
            let size = file.size
        else { return nil }
        return configuration(size: size) { offset, count in try? file.read(at: offset, count: count) }
    }

    /// Throws the configuration's `refusal` (UNSUPPORTED_FORMAT) when the source is a Dolby Vision stream that cannot
    /// be shown. Every command that shows pictures asks it before it builds a pipeline.
    static func refuseUnshowable(_ source: MediaSource) throws {
        if let refusal = configuration(of: source)?.refusal { throw refusal }
    }

    static func configuration(size: Int64, read: Read) -> DolbyVisionConfiguration? {
        guard let start = read(0, 8), start.count == 8 else { return nil }
        if start[0..<4] == [0x1A, 0x45, 0xDF, 0xA3] { return MatroskaTracks.configuration(size: size, read: read) }
        return MP4Boxes.configuration(size: size, read: read)
    }

    /// The MP4/QuickTime walk: top-level boxes to `moov`, then `trak` → `mdia` (a `vide` handler) → `minf` → `stbl`
    /// → `stsd`'s first entry, whose child boxes follow its 78 bytes of visual sample entry fields.
    enum MP4Boxes {
        struct Box {
            var type: String
            var start: Int64
            var payload: Int64
            var end: Int64
        }

        /// The boxes between `start` and `end`, from their headers (64-bit sizes and a last box "to the end"
        /// included); stops at the first header that does not fit.
        static func boxes(from start: Int64, to end: Int64, _ read: Read) -> [Box] {
            var found: [Box] = []
            var offset = start
            while offset + 8 <= end, found.count < 4096, let header = read(offset, 16), header.count >= 8 {
                var size = Int64(FragmentIndex.be32(header, 0))
                var payload = offset + 8
                if size == 1 {
                    guard header.count == 16 else { break }
                    size = Int64(clamping: FragmentIndex.be64(header, 8))
                    payload += 8
                } else if size == 0 {
                    size = end - offset
                }
                guard size >= payload - offset, size <= end - offset else { break }
                let type = String(decoding: header[4..<8], as: UTF8.self)
                found.append(Box(type: type, start: offset, payload: payload, end: offset + size))
                offset += size
            }
            return found
        }

        static func child(_ type: String, of box: Box, _ read: Read) -> Box? {
            boxes(from: box.payload, to: box.end, read).first { $0.type == type }
        }

        static func configuration(size: Int64, read: Read) -> DolbyVisionConfiguration? {
            guard let moov = boxes(from: 0, to: size, read).first(where: { $0.type == "moov" }) else { return nil }
            for trak in boxes(from: moov.payload, to: moov.end, read) where trak.type == "trak" {
                guard let mdia = child("mdia", of: trak, read), let hdlr = child("hdlr", of: mdia, read),
                    let handler = read(hdlr.payload + 8, 4), handler == Array("vide".utf8)
                else { continue }
                // The first video track is the one shown; it decides.
                guard let minf = child("minf", of: mdia, read), let stbl = child("stbl", of: minf, read),
                    let stsd = child("stsd", of: stbl, read),
                    let entry = boxes(from: stsd.payload + 8, to: stsd.end, read).first,
                    entry.end - entry.payload <= 1 << 20,
                    let bytes = read(entry.payload, Int(entry.end - entry.payload))
                else { return nil }
                let fields = 78
                for box in FragmentIndex.boxes(in: bytes, from: fields)
                where ["dvcC", "dvvC", "dvwC"].contains(box.type) {
                    return DolbyVisionConfiguration(record: Array(bytes[box.payload]))
                }
                return nil
            }
            return nil
        }
    }

    /// The Matroska walk: the EBML header, the `Segment`'s children up to `Tracks` (before the first `Cluster`, where
    /// every muxer puts it), then the first video `TrackEntry`'s `BlockAdditionMapping` of type `dvcC` or `dvvC`.
    enum MatroskaTracks {
        static let segment: UInt32 = 0x1853_8067
        static let tracks: UInt32 = 0x1654_AE6B
        static let cluster: UInt32 = 0x1F43_B675
        static let trackEntry: UInt32 = 0xAE
        static let trackType: UInt32 = 0x83
        static let mapping: UInt32 = 0x41E4
        static let mappingType: UInt32 = 0x41E7
        static let mappingData: UInt32 = 0x41ED

        /// An element's ID, where its data starts and its size (nil: unknown size).
        struct Element {
            var id: UInt32
            var data: Int64
            var size: Int64?
        }

        /// The element whose header starts at `bytes[at]`; nil when it does not parse.
        static func element(_ bytes: [UInt8], at: Int, base: Int64 = 0) -> Element? {
            guard at < bytes.count, let (idLength, _) = vint(bytes, at), idLength <= 4,
                at + idLength <= bytes.count
            else { return nil }
            let id = bytes[at..<(at + idLength)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard let (sizeLength, size) = vint(bytes, at + idLength) else { return nil }
            let unknown = size == (UInt64(1) << (7 * sizeLength)) - 1
            return Element(
                id: id, data: base + Int64(at + idLength + sizeLength),
                size: unknown ? nil : Int64(clamping: size))
        }

        /// A variable-length integer at `bytes[at]`: its length and value (marker bit removed).
        static func vint(_ bytes: [UInt8], _ at: Int) -> (Int, UInt64)? {
            guard at < bytes.count, bytes[at] != 0 else { return nil }
            let length = bytes[at].leadingZeroBitCount + 1
            guard at + length <= bytes.count else { return nil }
            var value = UInt64(bytes[at] & (0xFF >> length))
            for byte in bytes[(at + 1)..<(at + length)] { value = value << 8 | UInt64(byte) }
            return (length, value)
        }

        static func configuration(size: Int64, read: Read) -> DolbyVisionConfiguration? {
            guard let head = read(0, 64), let ebml = element(head, at: 0), let ebmlSize = ebml.size,
                let segmentHead = read(ebml.data + ebmlSize, 16),
                let segment = element(segmentHead, at: 0, base: ebml.data + ebmlSize), segment.id == Self.segment
            else { return nil }
            let segmentEnd = segment.size.map { min(size, segment.data + $0) } ?? size
            var offset = segment.data
            for _ in 0..<64 {
                guard offset < segmentEnd, let header = read(offset, 16),
                    let child = element(header, at: 0, base: offset)
                else { return nil }
                if child.id == cluster { return nil }
                guard let childSize = child.size else { return nil }
                if child.id == tracks {
                    guard childSize <= 1 << 20, let bytes = read(child.data, Int(childSize)),
                        bytes.count == Int(childSize)
                    else { return nil }
                    return firstVideoTrack(bytes)
                }
                offset = child.data + childSize
            }
            return nil
        }

        /// The children of the element whose data is `bytes[range]`: (id, data range); stops at one that does not fit.
        static func children(_ bytes: [UInt8], _ range: Range<Int>) -> [(id: UInt32, data: Range<Int>)] {
            var found: [(UInt32, Range<Int>)] = []
            var at = range.lowerBound
            while at < range.upperBound, let child = element(bytes, at: at), let size = child.size,
                Int(child.data) + Int(size) <= range.upperBound
            {
                found.append((child.id, Int(child.data)..<(Int(child.data) + Int(size))))
                at = Int(child.data) + Int(size)
            }
            return found.map { (id: $0.0, data: $0.1) }
        }

        static func firstVideoTrack(_ bytes: [UInt8]) -> DolbyVisionConfiguration? {
            for entry in children(bytes, 0..<bytes.count) where entry.id == trackEntry {
                let fields = children(bytes, entry.data)
                guard let type = fields.first(where: { $0.id == trackType }), type.data.count == 1,
                    bytes[type.data.lowerBound] == 1
                else { continue }
                for mapping in fields where mapping.id == Self.mapping {
                    let parts = children(bytes, mapping.data)
                    guard let kind = parts.first(where: { $0.id == mappingType }),
                        let data = parts.first(where: { $0.id == mappingData })
                    else { continue }
                    let name = String(decoding: bytes[kind.data].suffix(4), as: UTF8.self)
                    if name == "dvcC" || name == "dvvC" {
                        return DolbyVisionConfiguration(record: Array(bytes[data.data]))
                    }
                }
                return nil
            }
            return nil
        }
    }
}

/// Finds a Dolby Vision configuration record in the bytes a demuxer reads, buffer by buffer: for a remote source,
/// whose file ftgst does not read itself (`PictureFormatWatch` scans what enters qtdemux or matroskademux). It looks
/// for the record's own framing only: an MP4 box of exactly 32 bytes named `dvcC`, `dvvC` or `dvwC` holding a
/// version 1 or 2 record, or Matroska's `BlockAddIDType` element holding `dvcC`/`dvvC` with a 24-byte
/// `BlockAddIDExtraData` within 64 bytes of it. A record split across two buffers is found (the last bytes of one
/// are kept for the next). Not Sendable: one per pad, called on its streaming thread.
struct DolbyVisionScanner {
    /// How many bytes are scanned at most: the headers come first, or right after the one seek a demuxer makes to
    /// a `moov` at the end of the file.
    static let limit = 64 << 20
    private var tail: [UInt8] = []
    private(set) var scanned = 0
    private(set) var found: DolbyVisionConfiguration? = nil

    var isDone: Bool { found != nil || scanned >= Self.limit }

    /// Scans nothing more.
    mutating func stop() { scanned = Self.limit }

    /// Scans one more buffer; the configuration once found.
    mutating func scan(_ bytes: UnsafeRawBufferPointer) -> DolbyVisionConfiguration? {
        guard !isDone else { return found }
        scanned += bytes.count
        let window = tail + bytes.prefix(Self.limit)
        found = Self.record(in: window)
        tail = Array(window.suffix(96))
        return found
    }

    /// The first record framed as described above in `bytes`.
    static func record(in bytes: [UInt8]) -> DolbyVisionConfiguration? {
        guard bytes.count >= 8 else { return nil }
        for at in 4..<(bytes.count - 3) where bytes[at] == 0x64 && bytes[at + 1] == 0x76 && bytes[at + 3] == 0x43 {
            let kind = bytes[at + 2]
            // An MP4 box: size 32, then the record.
            if kind == 0x63 || kind == 0x76 || kind == 0x77, bytes[(at - 4)..<at] == [0, 0, 0, 32],
                at + 4 + 24 <= bytes.count,
                let record = DolbyVisionConfiguration(record: Array(bytes[(at + 4)..<(at + 28)]))
            {
                return record
            }
            // Matroska: BlockAddIDType (0x41E7, size 4) holding dvcC/dvvC, its ExtraData (0x41ED, size 24) nearby.
            if kind == 0x63 || kind == 0x76, at >= 3, bytes[(at - 3)..<at] == [0x41, 0xE7, 0x84] {
                let near = max(0, at - 64)..<min(bytes.count, at + 64)
                for start in near
                where start + 3 + 24 <= bytes.count
                    && bytes[start] == 0x41 && bytes[start + 1] == 0xED && bytes[start + 2] == 0x98
                {
                    if let record = DolbyVisionConfiguration(record: Array(bytes[(start + 3)..<(start + 27)])) {
                        return record
                    }
                }
            }
        }
        return nil
    }
}
