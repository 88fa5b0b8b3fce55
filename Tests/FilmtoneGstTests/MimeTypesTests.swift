import GstKit
import XCTest

@testable import FilmtoneGst

/// `Thumb::Mimetype`'s rules: a container named by its first bytes, or by the type finder's caps; nil when unsure.
final class MimeTypesTests: XCTestCase {
    /// An ISO base media file's first 24 bytes: a `ftyp` box of `major`, minor version 0, then `compatible`.
    private func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
        let size = 16 + 4 * compatible.count
        return [0, 0, 0, UInt8(size)] + Array("ftyp".utf8) + Array(major.utf8) + [0, 0, 0, 0]
            + compatible.flatMap { Array($0.utf8) }
    }

    /// An EBML header holding only a DocType of `docType` (one-byte sizes, as muxers write them).
    private func ebml(_ docType: String) -> [UInt8] {
        let element: [UInt8] = [0x42, 0x82, 0x80 | UInt8(docType.utf8.count)] + Array(docType.utf8)
        return [0x1A, 0x45, 0xDF, 0xA3, 0x80 | UInt8(element.count)] + element
    }

    func testFileStarts() {
        XCTAssertEqual(MimeTypes.mimeType(fileStart: ftyp("isom", ["isom", "avc1"])), "video/mp4")
        XCTAssertEqual(MimeTypes.mimeType(fileStart: ftyp("mp42", ["mp41"])), "video/mp4")
        XCTAssertEqual(MimeTypes.mimeType(fileStart: ftyp("qt  ", ["qt  "])), "video/quicktime")
        XCTAssertEqual(MimeTypes.mimeType(fileStart: ftyp("3gp5", ["3gp5"])), "video/3gpp")
        XCTAssertEqual(MimeTypes.mimeType(fileStart: ftyp("3g2a", ["3g2a"])), "video/3gpp2")
        XCTAssertNil(MimeTypes.mimeType(fileStart: ftyp("M4A ", ["isom"])), "audio")
        XCTAssertNil(MimeTypes.mimeType(fileStart: ftyp("heic", ["mif1"])), "a HEIF picture is type-found")
        XCTAssertEqual(MimeTypes.mimeType(fileStart: ebml("webm")), "video/webm")
        XCTAssertEqual(MimeTypes.mimeType(fileStart: ebml("matroska")), "video/x-matroska")
        XCTAssertNil(MimeTypes.mimeType(fileStart: ebml("other")))
        XCTAssertEqual(MimeTypes.mimeType(fileStart: ebml("webm\0")), "video/webm", "GStreamer's webmmux")
        // An eight-byte header size (0x01 then seven bytes), as webmmux writes it.
        let long: [UInt8] =
            [0x1A, 0x45, 0xDF, 0xA3, 0x01, 0, 0, 0, 0, 0, 0, 0x07, 0x42, 0x82, 0x84] + Array("webm".utf8)
        XCTAssertEqual(MimeTypes.mimeType(fileStart: long), "video/webm")
        XCTAssertNil(MimeTypes.mimeType(fileStart: Array(ebml("webm").prefix(8))), "cut inside the DocType")
        XCTAssertNil(MimeTypes.mimeType(fileStart: [0x47] + [UInt8](repeating: 0, count: 200)), "TS: type-found")
        XCTAssertNil(MimeTypes.mimeType(fileStart: []))
    }

    func testTypeFinderCaps() {
        func caps(_ name: String, variant: String? = nil) -> CapsStructure {
            CapsStructure(name: name, fields: variant.map { ["variant": .string($0)] } ?? [:])
        }
        XCTAssertEqual(MimeTypes.mimeType(container: caps("video/quicktime", variant: "iso")), "video/mp4")
        XCTAssertEqual(MimeTypes.mimeType(container: caps("video/quicktime", variant: "3gpp")), "video/3gpp")
        XCTAssertEqual(MimeTypes.mimeType(container: caps("video/quicktime")), "video/quicktime")
        XCTAssertNil(MimeTypes.mimeType(container: caps("video/quicktime", variant: "heif")))
        XCTAssertEqual(MimeTypes.mimeType(container: caps("video/mpegts")), "video/mp2t")
        XCTAssertEqual(MimeTypes.mimeType(container: caps("video/webm")), "video/webm")
        XCTAssertEqual(MimeTypes.mimeType(container: caps("image/gif")), "image/gif")
        XCTAssertNil(MimeTypes.mimeType(container: caps("application/ogg")), "audio or video: not for sure")
        XCTAssertNil(MimeTypes.mimeType(container: caps("video/mpeg")))
    }
}
