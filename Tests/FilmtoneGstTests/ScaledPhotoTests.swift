import FilmtoneLooks
import FilmtoneTestSupport
import Foundation
import GstKit
import ImageCodecs
import XCTest

@testable import FilmtoneGst

/// The photo path (`ScaledPhoto`: TurboJPEG's reduced decode, Lanczos resize, EXIF orientation; libpng's simplified
/// read; libwebp's scaled decode) against GStreamer's full decode of the same file, and the JPEG orientation against
/// the EXIF definition itself.
final class ScaledPhotoTests: XCTestCase {
    private func request(_ path: String, box: Int) -> FrameRequest {
        FrameRequest(
            source: .local(path: path), headers: [], time: .zero, tolerance: .zero, maxWidth: box, maxHeight: box,
            timeoutMilliseconds: 20_000)
    }

    /// PSNR in dB of two equal-sized RGB images (infinity when equal).
    private func psnr(_ a: RGBImage, _ b: RGBImage) -> Double {
        XCTAssertEqual(a.width, b.width)
        XCTAssertEqual(a.height, b.height)
        guard a.pixels.count == b.pixels.count else { return 0 }
        var sum = 0.0
        for (x, y) in zip(a.pixels, b.pixels) {
            let d = Double(x) - Double(y)
            sum += d * d
        }
        let mse = sum / Double(a.pixels.count)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    /// The mean colour of a 6×6 block inset 4 pixels from a corner (0 top-left, 1 top-right, 2 bottom-left,
    /// 3 bottom-right), clear of the JPEG's edge blocks.
    private func corner(_ image: RGBImage, _ which: Int) -> SIMD3<Double> {
        let x0 = which % 2 == 0 ? 4 : image.width - 10
        let y0 = which < 2 ? 4 : image.height - 10
        var sum = SIMD3<Double>(0, 0, 0)
        for y in y0..<y0 + 6 {
            for x in x0..<x0 + 6 {
                let i = (y * image.width + x) * 3
                sum += SIMD3(Double(image.pixels[i]), Double(image.pixels[i + 1]), Double(image.pixels[i + 2]))
            }
        }
        return sum / 36
    }

    private func distance(_ v: SIMD3<Double>) -> Double { (v * v).sum().squareRoot() }

    /// `photo.jpg` (JFIF, no EXIF) with an EXIF APP1 holding Orientation `value` inserted after its APP0, in the
    /// TIFF byte order given (`II` little-endian, `MM` big-endian), written to `directory`.
    private func withOrientation(_ value: UInt16, littleEndian: Bool, in directory: URL) throws -> String {
        let jpeg = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try TestEnvironment.fixture("photo.jpg"))))
        XCTAssertEqual(Array(jpeg[0..<4]), [0xFF, 0xD8, 0xFF, 0xE0], "photo.jpg starts with SOI, APP0")
        let app0End = 4 + (Int(jpeg[4]) << 8 | Int(jpeg[5]))
        func u16(_ v: UInt16) -> [UInt8] {
            littleEndian ? [UInt8(v & 0xFF), UInt8(v >> 8)] : [UInt8(v >> 8), UInt8(v & 0xFF)]
        }
        func u32(_ v: UInt32) -> [UInt8] {
            littleEndian
                ? u16(UInt16(v & 0xFFFF)) + u16(UInt16(v >> 16)) : u16(UInt16(v >> 16)) + u16(UInt16(v & 0xFFFF))
        }
        // TIFF header, IFD0 at 8: one entry (Orientation, SHORT, 1, value), no next IFD.
        var tiff: [UInt8] = littleEndian ? [0x49, 0x49] : [0x4D, 0x4D]
        tiff += u16(42) + u32(8) + u16(1) + u16(0x0112) + u16(3) + u32(1) + u16(value) + u16(0) + u32(0)
        let body = Array("Exif\0\0".utf8) + tiff
        let length = body.count + 2
        let app1: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + body
        let out = directory.appendingPathComponent("orientation-\(value)-\(littleEndian ? "II" : "MM").jpg")
        try Data(Array(jpeg[0..<app0End]) + app1 + Array(jpeg[app0End...])).write(to: out)
        return out.path
    }

    func testReducedDecodeMatchesAFullDecodeThenLanczos() throws {
        let photo = try TestEnvironment.fixture("photo.jpg")  // 640×480
        // 512: no reduction (needs ≥ 512 wide); 300: 1/2 then a resize; 160: 1/4 exactly; 77: 1/8 then a resize.
        for box in [512, 300, 160, 77] {
            let request = request(photo, box: box)
            let ours = try XCTUnwrap(ScaledPhoto.grab(request), "box \(box)")
            XCTAssertTrue(ours.isStill)
            XCTAssertEqual(ours.time, .zero)
            XCTAssertEqual(ours.image.width, box == 512 ? 512 : box)
            // The reference: ffmpeg's full-size decode, to RGB, then its Lanczos to the same size.
            let reference = try DecodedImage.frame(
                of: photo, index: 0, width: ours.image.width, height: ours.image.height, scaler: "lanczos")
            let full = RGBImage(width: reference.width, height: reference.height, pixels: reference.rgb)
            XCTAssertGreaterThan(psnr(ours.image, full), 31, "box \(box): reduced decode vs full decode")
            if box >= 160 {
                // GStreamer's own path (full decode, videoscale lanczos) agrees too; at 77 px its videoscale
                // aliases (20 dB against the same reference), so it is no reference there.
                let theirs = try FrameGrabber(request: request, isCancelled: { false }).grab()
                XCTAssertGreaterThan(psnr(ours.image, theirs.image), 33, "box \(box): vs GStreamer's path")
            }
        }
    }

    func testEXIFOrientationsFollowTheirDefinition() throws {
        let directory = try TestEnvironment.temporaryDirectory(self)
        let upright = try XCTUnwrap(ScaledPhoto.grab(request(try TestEnvironment.fixture("photo.jpg"), box: 1000)))
        XCTAssertEqual([upright.image.width, upright.image.height], [640, 480])
        let stored = (0..<4).map { corner(upright.image, $0) }
        // Which stored corner (0 TL, 1 TR, 2 BL, 3 BR) each displayed corner shows, read off EXIF's definitions
        // ("the 0th row is the visual right-hand side, the 0th column the visual top" for 6, and so on).
        let shows: [UInt16: [Int]] = [
            1: [0, 1, 2, 3], 2: [1, 0, 3, 2], 3: [3, 2, 1, 0], 4: [2, 3, 0, 1],
            5: [0, 2, 1, 3], 6: [2, 0, 3, 1], 7: [3, 1, 2, 0], 8: [1, 3, 0, 2],
        ]
        // SMPTE bars: the four corners are four different colours, so each mapping is told apart.
        for a in 0..<4 {
            for b in 0..<a { XCTAssertGreaterThan(distance(stored[a] - stored[b]), 40, "corners \(a), \(b)") }
        }
        for (value, corners) in shows.sorted(by: { $0.key < $1.key }) {
            for littleEndian in [true, false] {
                let path = try withOrientation(value, littleEndian: littleEndian, in: directory)
                let frame = try XCTUnwrap(ScaledPhoto.grab(request(path, box: 1000)), "orientation \(value)")
                let expected = value >= 5 ? [480, 640] : [640, 480]
                XCTAssertEqual([frame.image.width, frame.image.height], expected, "orientation \(value)")
                for (display, source) in corners.enumerated() {
                    XCTAssertLessThan(
                        distance(corner(frame.image, display) - stored[source]), 12,
                        "orientation \(value) \(littleEndian ? "II" : "MM"): corner \(display) shows \(source)")
                }
            }
        }
    }

    func testRotatedPhotoMatchesGStreamersUprightFrame() throws {
        // photo-exif.jpg: 320×240 stored, Orientation 6 written by jifmux; GStreamer turns it with videoflip.
        let request = request(try TestEnvironment.fixture("photo-exif.jpg"), box: 200)
        let ours = try XCTUnwrap(ScaledPhoto.grab(request))
        let theirs = try FrameGrabber(request: request, isCancelled: { false }).grab()
        XCTAssertEqual([ours.image.width, ours.image.height], [150, 200])
        XCTAssertGreaterThan(psnr(ours.image, theirs.image), 30)
    }

    func testWhatThePathLeavesToGStreamer() throws {
        let directory = try TestEnvironment.temporaryDirectory(self)
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: try TestEnvironment.fixture("photo.jpg")))
        let truncated = directory.appendingPathComponent("truncated.jpg")
        try jpeg.prefix(jpeg.count / 2).write(to: truncated)
        XCTAssertNil(
            ScaledPhoto.grab(request(truncated.path, box: 100)), "a truncated JPEG (a warning) goes to GStreamer")
        XCTAssertNil(ScaledPhoto.grab(request(try TestEnvironment.fixture("cmyk.jpg"), box: 100)), "CMYK")
        XCTAssertNil(ScaledPhoto.grab(request(try TestEnvironment.fixture("animated.webp"), box: 100)), "animated")
        for name in ["photo.png", "photo.webp"] {
            // Cut inside the picture data: libpng reports a read error, libwebp NOT_ENOUGH_DATA.
            let whole = try Data(contentsOf: URL(fileURLWithPath: try TestEnvironment.fixture(name)))
            let cut = directory.appendingPathComponent("truncated-\(name)")
            try whole.prefix(whole.count * 2 / 3).write(to: cut)
            XCTAssertNil(ScaledPhoto.grab(request(cut.path, box: 100)), "a truncated \(name) goes to GStreamer")
        }
        XCTAssertNil(ScaledPhoto.grab(request(try TestEnvironment.fixture("clip.mp4"), box: 100)), "video")
        var preview = request(try TestEnvironment.fixture("photo.jpg"), box: 100)
        preview.look = LookSettings(inputLUT: nil, creativeLUT: nil, intensity: 1, interpolation: .tetrahedral)
        XCTAssertNil(ScaledPhoto.grab(preview), "a preview's look runs in ftlut")
    }

    /// PNG through libpng (one full-size RGB buffer, then Lanczos) and still WebP through libwebp's scaled decode
    /// give GStreamer's picture: RGB, grey, RGBA (alpha dropped on both sides), 16-bit RGBA, lossy WebP, at sizes
    /// that shrink and at the picture's own size.
    func testPNGAndWebPMatchGStreamersPath() throws {
        let cases: [(name: String, boxes: [Int])] = [
            ("photo.png", [200, 100]), ("grey.png", [160, 80]), ("alpha.png", [160, 100]), ("deep16a.png", [64, 40]),
            ("photo.webp", [320, 160, 100]),
        ]
        for (name, boxes) in cases {
            for box in boxes {
                let request = request(try TestEnvironment.fixture(name), box: box)
                let ours = try XCTUnwrap(ScaledPhoto.grab(request), "\(name) box \(box)")
                XCTAssertTrue(ours.isStill)
                XCTAssertEqual(ours.time, .zero)
                let theirs = try FrameGrabber(request: request, isCancelled: { false }).grab()
                XCTAssertEqual([ours.image.width, ours.image.height], [theirs.image.width, theirs.image.height])
                // The same pixels at the picture's own size (nothing to resample); different scalers otherwise.
                let floor: Double = ours.image.width == box && box == boxes[0] ? 45 : 35
                XCTAssertGreaterThan(psnr(ours.image, theirs.image), floor, "\(name) box \(box): vs GStreamer's path")
            }
        }
    }

    /// A 16-bit RGB PNG, which GStreamer 1.22's pngdec decodes with wrong colours (and ftgst refuses there), decodes
    /// right through libpng: ffmpeg's colours.
    func testA16BitRGBPNGDecodesRightThroughLibpng() throws {
        let photo = try TestEnvironment.fixture("deep16.png")  // 64×48 SMPTE bars
        for box in [64, 32] {
            let ours = try XCTUnwrap(ScaledPhoto.grab(request(photo, box: box)), "box \(box)")
            let reference = try DecodedImage.frame(
                of: photo, index: 0, width: ours.image.width, height: ours.image.height, scaler: "lanczos")
            let full = RGBImage(width: reference.width, height: reference.height, pixels: reference.rgb)
            XCTAssertGreaterThan(psnr(ours.image, full), box == 64 ? 45 : 33, "box \(box)")
        }
    }

    func testReductionIsTheLargestThatCoversTheOutput() {
        XCTAssertEqual(JPEGDecoder.reduction(width: 6000, height: 4000, minWidth: 512, minHeight: 341), 8)
        XCTAssertEqual(JPEGDecoder.reduction(width: 6000, height: 4000, minWidth: 751, minHeight: 500), 4)
        XCTAssertEqual(JPEGDecoder.reduction(width: 640, height: 480, minWidth: 160, minHeight: 120), 4)
        XCTAssertEqual(JPEGDecoder.reduction(width: 641, height: 481, minWidth: 81, minHeight: 61), 8)  // rounds up
        XCTAssertEqual(JPEGDecoder.reduction(width: 640, height: 480, minWidth: 321, minHeight: 10), 1)
    }

    func testResamplerKeepsFlatColourAndAverages() {
        let flat = RGBImage(
            width: 37, height: 23,
            pixels: [UInt8](repeating: 0, count: 37 * 23 * 3).enumerated().map {
                [200, 100, 30][$0.offset % 3]
            })
        let small = ImageResampler.resized(flat, width: 10, height: 7)
        XCTAssertEqual([small.width, small.height], [10, 7])
        XCTAssertTrue(small.pixels.enumerated().allSatisfy { $0.element == [200, 100, 30][$0.offset % 3] })
        // A one-pixel checkerboard shrunk by 4 is mid-grey: the filter averages instead of picking samples.
        let board = RGBImage(
            width: 64, height: 64,
            pixels: (0..<64 * 64 * 3).map { i in
                let p = i / 3
                return (p % 64 + p / 64) % 2 == 0 ? 255 : 0
            })
        let grey = ImageResampler.resized(board, width: 16, height: 16)
        XCTAssertTrue(grey.pixels.allSatisfy { abs(Int($0) - 128) <= 3 }, "\(grey.pixels.min()!)…\(grey.pixels.max()!)")
    }
}
