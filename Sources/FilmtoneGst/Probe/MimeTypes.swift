import Foundation
import GstKit

/// The MIME type of a source, named as the freedesktop shared MIME database names it (what a file manager matched
/// to run the thumbnailer, and what the Thumbnail Managing Standard's `Thumb::Mimetype` holds). Only when it is
/// known for sure: from the first bytes of a container ftgst opens without type-finding (`FrameRecipe.demuxer`),
/// or from GStreamer's type finder; nil otherwise (an Ogg file may be audio or video, a `video/mpeg` stream a
/// program or elementary stream). Pure.
enum MimeTypes {
    /// From a file's first bytes: an ISO base media file's `ftyp` major brand (QuickTime, 3GPP, 3GPP2, else MP4),
    /// a Matroska EBML header's DocType (`webm` or `matroska`); nil for anything else.
    static func mimeType(fileStart bytes: [UInt8]) -> String? {
        switch FrameRecipe.demuxer(forFileStart: bytes) {
        case .isoMedia?:
            let brand = String(decoding: bytes[8..<12], as: UTF8.self)
            if brand == "qt  " { return "video/quicktime" }
            if brand.hasPrefix("3gp") { return "video/3gpp" }
            if brand.hasPrefix("3g2") { return "video/3gpp2" }
            // Audio-only and other ISO files (M4A, M4B, CMAF audio) are not named: their thumbnail is no video's.
            if brand.hasPrefix("M4A") || brand.hasPrefix("M4B") || brand.hasPrefix("M4P") { return nil }
            return "video/mp4"
        case .matroska?:
            switch matroskaDocType(bytes) {
            case "webm": return "video/webm"
            case "matroska": return "video/x-matroska"
            default: return nil
            }
        case nil:
            return nil
        }
    }

    /// The DocType string of an EBML header (element 0x4282, its size a one-byte vint as every muxer writes it,
    /// trailing NULs dropped: GStreamer's muxers write `webm\0`), looked for inside the header element only;
    /// nil when the header is not all in `bytes` or has none.
    static func matroskaDocType(_ bytes: [UInt8]) -> String? {
        guard bytes.count > 5, bytes[0..<4] == [0x1A, 0x45, 0xDF, 0xA3], bytes[4] != 0 else { return nil }
        // The header's size: a vint whose leading zero bits say how many more bytes it has.
        let sizeLength = bytes[4].leadingZeroBitCount + 1
        guard 4 + sizeLength <= bytes.count else { return nil }
        var size = Int(bytes[4] & (0xFF >> sizeLength))
        for byte in bytes[5..<4 + sizeLength] { size = size << 8 | Int(byte) }
        let start = 4 + sizeLength
        guard size <= bytes.count - start else { return nil }
        var index = start
        while index + 2 < start + size {
            if bytes[index] == 0x42, bytes[index + 1] == 0x82, bytes[index + 2] & 0x80 != 0 {
                let length = Int(bytes[index + 2] & 0x7F)
                let text = index + 3
                guard length > 0, text + length <= start + size else { return nil }
                let docType = bytes[text..<text + length].prefix { $0 != 0 }
                return String(decoding: docType, as: UTF8.self)
            }
            index += 1
        }
        return nil
    }

    /// From the type finder's caps; nil for a type not listed (or not certain).
    static func mimeType(container caps: CapsStructure) -> String? {
        switch caps.name {
        case "video/quicktime":
            switch caps.string("variant") {
            case "iso", "iso-fragmented": return "video/mp4"
            case "3gpp": return "video/3gpp"
            case "3g2": return "video/3gpp2"
            case "heif": return nil
            default: return "video/quicktime"
            }
        case "video/x-matroska": return "video/x-matroska"
        case "video/webm": return "video/webm"
        case "video/x-msvideo": return "video/x-msvideo"
        case "video/mpegts": return "video/mp2t"
        case "video/x-flv": return "video/x-flv"
        case "application/mxf": return "application/mxf"
        case "video/x-ms-asf": return "video/x-ms-asf"
        case "image/jpeg", "image/png", "image/webp", "image/gif", "image/tiff", "image/bmp": return caps.name
        default: return nil
        }
    }
}
