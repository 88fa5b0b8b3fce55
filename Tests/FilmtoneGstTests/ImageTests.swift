import FilmtoneTestSupport
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneGst
@testable import ImageCodecs

final class ImageTests: XCTestCase {
    /// A gradient with a distinct colour per quadrant, so orientation and channel order both show.
    private func sample(width: Int = 64, height: Int = 48) -> RGBImage {
        var pixels = [UInt8]()
        for y in 0..<height {
            for x in 0..<width {
                pixels += [UInt8(x * 255 / (width - 1)), UInt8(y * 255 / (height - 1)), x < width / 2 ? 40 : 200]
            }
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    private func decode(_ bytes: [UInt8], ext: String) throws -> DecodedImage {
        let url = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("image.\(ext)")
        try Data(bytes).write(to: url)
        return try DecodedImage.read(url.path)
    }

    func testPNGIsLossless() throws {
        let image = sample()
        let bytes = try ImageEncoder.encode(image, format: .png, quality: 0.1)
        XCTAssertEqual(Array(bytes.prefix(4)), [0x89, 0x50, 0x4E, 0x47])
        let decoded = try decode(bytes, ext: "png")
        XCTAssertEqual(decoded.width, 64)
        XCTAssertEqual(decoded.height, 48)
        XCTAssertEqual(decoded.rgb, image.pixels)
    }

    /// Noise does not compress: its PNG outgrows the first buffer (an eighth of the raw size) many times over, and
    /// the file is still whole and lossless. A gradient is written as ffmpeg writes PNGs: no row filters (each
    /// row's filter byte 0).
    func testPNGOfAnyContentIsWholeAndUnfiltered() throws {
        var generator = SplitMix(seed: 29)
        let width = 300
        let height = 300
        let noise = RGBImage(
            width: width, height: height,
            pixels: (0..<width * height * 3).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let noisy = try ImageEncoder.encode(noise, format: .png, quality: 0.9)
        XCTAssertGreaterThan(noisy.count, noise.pixels.count, "noise does not compress")
        XCTAssertEqual(try decode(noisy, ext: "png").rgb, noise.pixels)

        let gradient = sample(width: 640, height: 360)
        let smooth = try ImageEncoder.encode(gradient, format: .png, quality: 0.9)
        XCTAssertLessThan(smooth.count, gradient.pixels.count / 2, "it compresses")
        XCTAssertEqual(try decode(smooth, ext: "png").rgb, gradient.pixels)
        // The IDAT inflated: every row starts with its filter type, 0 (none).
        let rows = try inflatedRows(smooth)
        XCTAssertEqual(rows.count, 360 * (640 * 3 + 1))
        XCTAssertEqual(Set(stride(from: 0, to: rows.count, by: 640 * 3 + 1).map { rows[$0] }), [0])
    }

    /// The concatenated IDAT data of a PNG, inflated (zlib through `python3`'s standard library).
    private func inflatedRows(_ png: [UInt8]) throws -> [UInt8] {
        var idat: [UInt8] = []
        var offset = 8
        while offset + 8 <= png.count {
            let length =
                Int(png[offset]) << 24 | Int(png[offset + 1]) << 16 | Int(png[offset + 2]) << 8
                | Int(png[offset + 3])
            let type = String(decoding: png[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if type == "IDAT" { idat += png[(offset + 8)..<(offset + 8 + length)] }
            offset += 12 + length
        }
        let folder = try TestEnvironment.temporaryDirectory(self)
        let input = folder.appendingPathComponent("idat.z")
        let output = folder.appendingPathComponent("rows.raw")
        try Data(idat).write(to: input)
        let result = try Run.process(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [
                "-c",
                "import sys, zlib; open(sys.argv[2], 'wb').write(zlib.decompress(open(sys.argv[1], 'rb').read()))",
                input.path, output.path,
            ])
        XCTAssertEqual(result.status, 0, result.stderr)
        return Array(try Data(contentsOf: output))
    }

    func testJPEGIsCloseAndQualityMatters() throws {
        let image = sample()
        let high = try ImageEncoder.encode(image, format: .jpeg, quality: 1.0)
        let low = try ImageEncoder.encode(image, format: .jpeg, quality: 0.05)
        XCTAssertEqual(Array(high.prefix(2)), [0xFF, 0xD8])
        XCTAssertGreaterThan(high.count, low.count)
        let decoded = try decode(high, ext: "jpg")
        XCTAssertEqual(decoded.width, 64)
        XCTAssertEqual(decoded.height, 48)
        let reference = DecodedImage(width: 64, height: 48, rgb: image.pixels)
        XCTAssertLessThan(decoded.meanDifference(reference), 3)
        XCTAssertLessThan(
            try decode(high, ext: "jpg").meanDifference(reference),
            try decode(low, ext: "jpg").meanDifference(reference))
    }

    func testQualityMapsToLibjpegScale() {
        XCTAssertEqual(ImageEncoder.jpegQuality(0.9), 90)
        XCTAssertEqual(ImageEncoder.jpegQuality(0), 1)
        XCTAssertEqual(ImageEncoder.jpegQuality(1), 100)
        XCTAssertEqual(ImageEncoder.jpegQuality(0.555), 56)
    }

    func testOddSizesEncode() throws {
        let image = sample(width: 33, height: 17)
        XCTAssertEqual(try decode(try ImageEncoder.encode(image, format: .jpeg, quality: 0.9), ext: "jpg").width, 33)
        XCTAssertEqual(
            try decode(try ImageEncoder.encode(image, format: .png, quality: 0.9), ext: "png").rgb,
            image.pixels)
    }

    func testStampRoundTripsInBothFormats() throws {
        for format in ImageFormat.allCases {
            let encoded = try ImageEncoder.encode(sample(), format: format, quality: 0.8)
            XCTAssertNil(ImageStamp.read(encoded), "an unstamped file is not a cache entry")
            let stamped = ImageStamp.insert(timeMilliseconds: 1234, into: encoded, format: format)
            XCTAssertEqual(
                ImageStamp.read(stamped),
                ImageStamp(format: format, width: 64, height: 48, timeMilliseconds: 1234))
            // Still a valid image for an independent decoder.
            XCTAssertEqual(try decode(stamped, ext: format.fileExtension).width, 64)
            // Truncated: not trusted.
            XCTAssertNil(ImageStamp.read(Array(stamped.prefix(stamped.count - 10))))
            // With the request's key, which a hit compares.
            let key = String(repeating: "ab", count: 32)
            let keyed = ImageStamp.insert(timeMilliseconds: 7, request: key, into: encoded, format: format)
            XCTAssertEqual(
                ImageStamp.read(keyed),
                ImageStamp(format: format, width: 64, height: 48, timeMilliseconds: 7, request: key))
            XCTAssertTrue(ImageStamp.isStamped(head: Array(keyed.prefix(64))))
        }
    }

    func testCRC32MatchesPNGsIENDChunk() {
        XCTAssertEqual(CRC32.checksum(Array("IEND".utf8)), 0xAE42_6082)
    }

    func testFormatParsing() throws {
        XCTAssertEqual(try ImageFormat.parse("JPG"), .jpeg)
        XCTAssertEqual(try ImageFormat.parse("png"), .png)
        XCTAssertThrowsError(try ImageFormat.parse("gif")) {
            XCTAssertEqual(($0 as? FilmtoneError)?.code, .unsupportedFormat)
        }
    }

    func testJSONKeepsOrderAndEscapes() {
        let value = JSONValue.object([
            ("b", .int(1)), ("a", .string("x\"\n\u{1}")), ("c", .array([.bool(true), .null])),
        ])
        XCTAssertEqual(value.serialized, #"{"b":1,"a":"x\"\n\u0001","c":[true,null]}"#)
    }

    func testOwnFilesAreToldFromOthersByTheirFirstBytes() throws {
        let image = sample()
        for format in [ImageFormat.jpeg, .png] {
            let plain = try ImageEncoder.encode(image, format: format, quality: 0.9)
            let stamped = ImageStamp.insert(timeMilliseconds: 5, into: plain, format: format)
            XCTAssertTrue(ImageStamp.isStamped(head: Array(stamped.prefix(64))), "\(format)")
            XCTAssertFalse(ImageStamp.isStamped(head: Array(plain.prefix(64))), "a viewer's or camera's file")
        }
        XCTAssertFalse(ImageStamp.isStamped(head: []))
        XCTAssertFalse(ImageStamp.isStamped(head: Array("ftgst:timeMs=1".utf8)))
    }
}
