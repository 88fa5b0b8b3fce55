import Foundation
import ImageCodecs

/// What a cached thumbnail says about itself: its format and size (from the image header), the stream time of the
/// frame it shows and the key of the request it answers (from a stamp ftgst writes into it: a JPEG COM segment or a
/// PNG tEXt chunk, both ignored by viewers). A cache hit is answered from this without decoding, and only when the
/// key is the new request's; a file without a readable stamp is not trusted.
public struct ImageStamp: Equatable, Sendable {
    public var format: ImageFormat
    public var width: Int
    public var height: Int
    public var timeMilliseconds: Int64
    /// Hex SHA-256 of what was asked (`ThumbnailRequest.cacheKey`: the source's identity, time, tolerance, box,
    /// format, quality); nil in a stamp without one (written before it existed), which never answers a request.
    public var request: String?

    static let keyword = "ftgst"

    /// The stamp's text: `timeMs=1234 request=<hex>` (`timeMs=1234` without a request key).
    static func text(timeMilliseconds: Int64, request: String?) -> String {
        "timeMs=\(timeMilliseconds)" + (request.map { " request=\($0)" } ?? "")
    }

    // MARK: - Writing

    /// Returns `encoded` with the stamp inserted: after SOI for JPEG, after IHDR for PNG.
    public static func insert(
        timeMilliseconds: Int64, request: String? = nil, into encoded: [UInt8], format: ImageFormat
    ) -> [UInt8] {
        let text = text(timeMilliseconds: timeMilliseconds, request: request)
        let payload = Array((keyword + ":" + text).utf8)
        switch format {
        case .jpeg:
            guard encoded.count >= 2, encoded[0] == 0xFF, encoded[1] == 0xD8 else { return encoded }
            let length = payload.count + 2
            let segment: [UInt8] = [0xFF, 0xFE, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
            return Array(encoded[0..<2]) + segment + Array(encoded[2...])
        case .png:
            return insertPNGText([(keyword, text)], into: encoded)
        }
    }

    /// Returns a PNG with `tEXt` chunks (keyword, Latin-1 text) inserted right after IHDR, in order; `encoded`
    /// unchanged when it is not a PNG. Keywords are 1–79 printable Latin-1 characters (the PNG rule; the caller's
    /// are constants), the text has no NUL: anything else is left out.
    static func insertPNGText(_ entries: [(keyword: String, text: String)], into encoded: [UInt8]) -> [UInt8] {
        let afterHeader = 8 + 8 + 13 + 4  // signature, then the IHDR chunk (length, type, 13 bytes, CRC)
        guard encoded.count > afterHeader, isPNG(encoded) else { return encoded }
        var chunks: [UInt8] = []
        for (keyword, text) in entries {
            guard (1...79).contains(keyword.unicodeScalars.count),
                keyword.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) }),
                text.unicodeScalars.allSatisfy({ $0.value != 0 && $0.value <= 0xFF })
            else { continue }
            let data = Array(keyword.utf8) + [0] + text.unicodeScalars.map { UInt8($0.value) }
            let typeAndData = Array("tEXt".utf8) + data
            chunks += bigEndian32(UInt32(data.count)) + typeAndData + bigEndian32(CRC32.checksum(typeAndData))
        }
        return Array(encoded[0..<afterHeader]) + chunks + Array(encoded[afterHeader...])
    }

    // MARK: - Reading

    /// Whether the file at `url` begins as ftgst writes a stamped image: for JPEG the stamp's COM segment right
    /// after SOI, for PNG its `tEXt` chunk right after IHDR. Reads only the first bytes, so a cache can tell its
    /// own files from a user's (`important-holiday.jpg`) without reading whole files; only those are evicted.
    static func isStamped(file url: URL) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return false }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 64) else { return false }
        return isStamped(head: [UInt8](head))
    }

    /// `isStamped(file:)` on the first bytes of a file. Pure.
    static func isStamped(head bytes: [UInt8]) -> Bool {
        let mark = Array((keyword + ":").utf8)
        if bytes.count >= 6 + mark.count, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF, bytes[3] == 0xFE {
            return bytes[6..<(6 + mark.count)].elementsEqual(mark)
        }
        let afterHeader = 8 + 8 + 13 + 4
        let text = Array("tEXt".utf8) + Array(keyword.utf8) + [0]
        guard isPNG(bytes), bytes.count >= afterHeader + 4 + text.count else { return false }
        return bytes[(afterHeader + 4)..<(afterHeader + 4 + text.count)].elementsEqual(text)
    }

    /// Reads format, size and stamp from a file ftgst wrote. nil when the bytes are not a complete JPEG/PNG with
    /// a stamp (a truncated or foreign file is then rebuilt rather than served).
    public static func read(_ bytes: [UInt8]) -> ImageStamp? {
        if isPNG(bytes) { return readPNG(bytes) }
        if bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 { return readJPEG(bytes) }
        return nil
    }

    private static func isPNG(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 8 && bytes[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }

    /// The chunks of a PNG up to and including IEND; nil when a chunk runs past the end or there is no IEND.
    private static func pngChunks(_ bytes: [UInt8]) -> [(type: String, data: ArraySlice<UInt8>)]? {
        var chunks: [(type: String, data: ArraySlice<UInt8>)] = []
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(readBigEndian32(bytes, offset))
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let dataStart = offset + 8
            guard length >= 0, dataStart + length + 4 <= bytes.count else { return nil }
            chunks.append((type, bytes[dataStart..<(dataStart + length)]))
            if type == "IEND" { return chunks }
            offset = dataStart + length + 4
        }
        return nil
    }

    /// The `tEXt` entries (keyword, Latin-1 text) of a complete PNG, in file order; empty for anything else.
    static func pngText(_ bytes: [UInt8]) -> [(keyword: String, text: String)] {
        guard isPNG(bytes), let chunks = pngChunks(bytes) else { return [] }
        return chunks.compactMap { chunk in
            guard chunk.type == "tEXt", let zero = chunk.data.firstIndex(of: 0) else { return nil }
            let text = String(String.UnicodeScalarView(chunk.data[(zero + 1)...].map { Unicode.Scalar($0) }))
            return (String(decoding: chunk.data[..<zero], as: UTF8.self), text)
        }
    }

    private static func readPNG(_ bytes: [UInt8]) -> ImageStamp? {
        guard let chunks = pngChunks(bytes) else { return nil }
        var size: (Int, Int)? = nil
        var time: (Int64, String?)? = nil
        for (type, data) in chunks {
            if type == "IHDR", data.count >= 8 {
                let header = Array(data)
                size = (Int(readBigEndian32(header, 0)), Int(readBigEndian32(header, 4)))
            } else if type == "tEXt", let zero = data.firstIndex(of: 0),
                String(decoding: data[..<zero], as: UTF8.self) == keyword
            {
                time = parse(String(decoding: data[(zero + 1)...], as: UTF8.self))
            }
        }
        guard let size, let time, size.0 > 0, size.1 > 0 else { return nil }
        return ImageStamp(format: .png, width: size.0, height: size.1, timeMilliseconds: time.0, request: time.1)
    }

    private static func readJPEG(_ bytes: [UInt8]) -> ImageStamp? {
        var offset = 2
        var time: (Int64, String?)? = nil
        var size: (Int, Int)? = nil
        // Walk the marker segments up to the start of scan; SOFn carries the size.
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            if marker == 0xFF {
                offset += 1
                continue
            }  // fill byte
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= bytes.count else { return nil }
            let data = bytes[(offset + 4)..<(offset + 2 + length)]
            if marker == 0xFE {
                let text = String(decoding: data, as: UTF8.self)
                if text.hasPrefix(keyword + ":") { time = parse(String(text.dropFirst(keyword.count + 1))) }
            } else if (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker) && data.count >= 5 {
                let start = data.startIndex
                size = (
                    Int(data[start + 3]) << 8 | Int(data[start + 4]), Int(data[start + 1]) << 8 | Int(data[start + 2])
                )
            } else if marker == 0xDA {
                break
            }
            offset += 2 + length
        }
        // A complete file ends with EOI; a truncated one is not served from the cache.
        guard bytes.count >= 2, bytes[bytes.count - 2] == 0xFF, bytes[bytes.count - 1] == 0xD9 else { return nil }
        guard let size, let time, size.0 > 0, size.1 > 0 else { return nil }
        return ImageStamp(format: .jpeg, width: size.0, height: size.1, timeMilliseconds: time.0, request: time.1)
    }

    /// `timeMs=N`, then optional ` request=HEX`; anything else is no stamp.
    private static func parse(_ text: String) -> (Int64, String?)? {
        let fields = text.split(separator: " ", omittingEmptySubsequences: false)
        guard let first = fields.first, first.hasPrefix("timeMs="), let time = Int64(first.dropFirst("timeMs=".count)),
            fields.count <= 2
        else { return nil }
        guard fields.count == 2 else { return (time, nil) }
        guard fields[1].hasPrefix("request=") else { return nil }
        return (time, String(fields[1].dropFirst("request=".count)))
    }

    private static func bigEndian32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    private static func readBigEndian32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }
}

/// CRC-32 (ISO 3309, as PNG chunks use it).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
