import CGst
import FilmtoneTestSupport
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneElements
@testable import FilmtoneGst
@testable import FilmtoneLooks
@testable import GstKit

/// `ftlut` on 8-bit 4:2:0 YUV (I420, NV12) inside this process: against the naive block composition
/// (`YUVKernelTests`), an identity LUT, and the conversion path it replaces (`videoconvert ! BGRx ! ftlut !
/// videoconvert`).
final class LUTFilterElementYUVTests: XCTestCase {
    /// ftlut is registered by the features before they build a pipeline; these tests build their own.
    override func setUpWithError() throws {
        try super.setUpWithError()
        try FilmtonePlugin.ensureRegistered()
    }

    static let look = SharedLUTs.look

    /// Prerolls `description` (which ends in `appsink name=sink`) and returns its frame as compact planes, with the
    /// colorimetry the caps carried.
    private func frame420(_ description: String) throws -> (frame: Frame420, colorimetry: YUVColorimetry) {
        let pipeline = try Pipeline(launch: description)
        defer { pipeline.stop() }
        pipeline.pause()
        switch pipeline.waitForAsyncDone(deadline: Deadline(after: 20_000), isCancelled: { false }) {
        case .done: break
        case .error(let cause): throw ErrorClassifier.classify(cause, remote: false)
        default: throw FilmtoneError(.internalError, "no preroll")
        }
        let sample = try XCTUnwrap(
            AppSink(element: try pipeline.element(named: "sink"))
                .pullPreroll(timeout: .milliseconds(5000)))
        return try Self.planes(of: sample)
    }

    /// The sample's frame mapped with its caps (and video meta): Y, U, V copied out without padding.
    private static func planes(of sample: Sample) throws -> (frame: Frame420, colorimetry: YUVColorimetry) {
        let caps = try XCTUnwrap(gst_sample_get_caps(sample.pointer))
        let buffer = try XCTUnwrap(gst_sample_get_buffer(sample.pointer))
        var info = GstVideoInfo()
        XCTAssertNotEqual(gst_video_info_from_caps(&info, caps), 0)
        var frame = GstVideoFrame()
        guard gst_video_frame_map(&frame, &info, buffer, GST_MAP_READ) != 0 else {
            throw FilmtoneError(.internalError, "frame does not map")
        }
        defer { gst_video_frame_unmap(&frame) }
        let name = GLib.borrowString(info.finfo.pointee.name) ?? ""
        let (width, height) = (Int(info.width), Int(info.height))
        let (chromaWidth, chromaHeight) = ((width + 1) / 2, (height + 1) / 2)
        guard name == "NV12" || name == "I420" else {
            XCTFail("the sink got \(name), not I420 or NV12")
            throw FilmtoneError(.internalError, "unexpected format \(name)")
        }
        // A plane GStreamer did not map would be a nil pointer: a failed test, not a crash.
        let pointers = [frame.data.0, frame.data.1, frame.data.2].prefix(name == "NV12" ? 2 : 3)
        let data = try pointers.enumerated().map { plane, pointer in
            UnsafeRawPointer(try XCTUnwrap(pointer, "\(name) plane \(plane) not mapped"))
                .assumingMemoryBound(to: UInt8.self)
        }
        let strides = [Int(frame.info.stride.0), Int(frame.info.stride.1), Int(frame.info.stride.2)]
        var (y, u, v) = ([UInt8](), [UInt8](), [UInt8]())
        for row in 0..<height { y += UnsafeBufferPointer(start: data[0] + strides[0] * row, count: width) }
        for row in 0..<chromaHeight {
            for x in 0..<chromaWidth {
                if name == "NV12" {
                    u.append(data[1][strides[1] * row + 2 * x])
                    v.append(data[1][strides[1] * row + 2 * x + 1])
                } else {
                    u.append(data[1][strides[1] * row + x])
                    v.append(data[2][strides[2] * row + x])
                }
            }
        }
        return (Frame420(width: width, height: height, y: y, u: u, v: v), LUTFilterElement.colorimetry(of: info))
    }

    /// Pushes `frame` laid out as I420 or NV12 with padded rows (padding 0xA5, announced by a GstVideoMeta, so the
    /// element must walk the planes by their strides) through `appsrc ! filter ! appsink`; returns the output
    /// frame, and whether every byte outside the picture (padding, NV12's unused plane area) came back unchanged.
    private func pushed(_ frame: Frame420, nv12: Bool, colorimetry: String?, filter: String) throws
        -> (frame: Frame420, paddingKept: Bool)
    {
        let (width, height) = (frame.width, frame.height)
        let (chromaWidth, chromaHeight) = (frame.chromaWidth, frame.chromaHeight)
        let lumaStride = width + 7
        let chromaStride = chromaWidth * (nv12 ? 2 : 1) + 5
        var offsets = [gsize](repeating: 0, count: Int(GST_VIDEO_MAX_PLANES))
        var strides = [gint](repeating: 0, count: Int(GST_VIDEO_MAX_PLANES))
        strides[0] = gint(lumaStride)
        strides[1] = gint(chromaStride)
        offsets[1] = gsize(lumaStride * height)
        // I420's V plane 3 bytes wider than its U plane: each plane is walked by its own stride.
        let crStride = chromaStride + 3
        if !nv12 {
            strides[2] = gint(crStride)
            offsets[2] = offsets[1] + gsize(chromaStride * chromaHeight)
        }
        var bytes = [UInt8](
            repeating: 0xA5,
            count: lumaStride * height + chromaStride * chromaHeight
                + (nv12 ? 0 : crStride * chromaHeight))
        var picture = Set<Int>()
        for row in 0..<height {
            for x in 0..<width {
                bytes[row * lumaStride + x] = frame.y[row * width + x]
                picture.insert(row * lumaStride + x)
            }
        }
        for row in 0..<chromaHeight {
            for x in 0..<chromaWidth {
                let (u, v) = (frame.u[row * chromaWidth + x], frame.v[row * chromaWidth + x])
                let at = Int(offsets[1]) + row * chromaStride + (nv12 ? 2 * x : x)
                let vAt = nv12 ? at + 1 : Int(offsets[2]) + row * crStride + x
                (bytes[at], bytes[vAt]) = (u, v)
                picture.formUnion([at, vAt])
            }
        }
        let format = nv12 ? "NV12" : "I420"
        let caps =
            "video/x-raw,format=\(format),width=\(width),height=\(height),framerate=0/1"
            + (colorimetry.map { ",colorimetry=\($0)" } ?? "")
        let pipeline = try Pipeline(
            launch: "appsrc name=src format=time caps=\(caps) ! \(filter) ! "
                + "appsink name=sink sync=false")
        defer { pipeline.stop() }
        pipeline.pause()
        let source = try pipeline.element(named: "src")
        let buffer = try XCTUnwrap(gst_buffer_new_allocate(nil, gsize(bytes.count), nil))
        bytes.withUnsafeBytes { _ = gst_buffer_fill(buffer, 0, $0.baseAddress, gsize($0.count)) }
        XCTAssertNotNil(
            gst_buffer_add_video_meta_full(
                buffer, GST_VIDEO_FRAME_FLAG_NONE, gst_video_format_from_string(format), guint(width), guint(height),
                nv12 ? 2 : 3, &offsets, &strides))
        buffer.pointee.pts = 0
        // push_buffer takes the buffer (transfer full).
        XCTAssertEqual(gst_app_src_push_buffer(GLib.cast(source.pointer, to: GstAppSrc.self), buffer), GST_FLOW_OK)
        _ = gst_app_src_end_of_stream(GLib.cast(source.pointer, to: GstAppSrc.self))
        switch pipeline.waitForAsyncDone(deadline: Deadline(after: 20_000), isCancelled: { false }) {
        case .done: break
        case .error(let cause): throw ErrorClassifier.classify(cause, remote: false)
        default: throw FilmtoneError(.internalError, "no preroll")
        }
        let sample = try XCTUnwrap(
            AppSink(element: try pipeline.element(named: "sink"))
                .pullPreroll(timeout: .milliseconds(5000)))
        let output = try Self.planes(of: sample).frame
        // The whole output buffer, to check the bytes outside the picture.
        let outBuffer = try XCTUnwrap(gst_sample_get_buffer(sample.pointer))
        var outBytes = [UInt8](repeating: 0, count: Int(gst_buffer_get_size(outBuffer)))
        outBytes.withUnsafeMutableBytes { _ = gst_buffer_extract(outBuffer, 0, $0.baseAddress, gsize($0.count)) }
        XCTAssertEqual(outBytes.count, bytes.count)
        let kept =
            outBytes.count == bytes.count
            && bytes.indices.allSatisfy { picture.contains($0) || outBytes[$0] == bytes[$0] }
        return (output, kept)
    }

    /// I420 and NV12 buffers of odd and even sizes with padded strides, through the element: every sample within
    /// 1 code of the naive block composition, padding untouched; the caps' colorimetry is the one used.
    func testPaddedI420AndNV12FramesMatchTheBlockReference() throws {
        let look = try Look(creativeLUT: try CubeLUT.load(path: Self.look), intensity: 0.8)
        let cases: [(Int, Int, Bool, String?, YUVColorimetry)] = [
            (37, 21, false, "bt709", .bt709),
            (37, 21, true, nil, .bt601),  // GStreamer's default for 21 lines
            (40, 8, true, "bt709", .bt709),
            (9, 7, false, "1:4:0:0", .bt601.fullRange(true)),  // full range, BT.601 matrix
        ]
        for (width, height, nv12, caps, colorimetry) in cases {
            let input = Frame420(width: width, height: height, seed: UInt64(width * height + (nv12 ? 1 : 0)))
            let label = "\(width)×\(height) \(nv12 ? "NV12" : "I420") \(caps ?? "default")"
            let (output, paddingKept) = try pushed(
                input, nv12: nv12, colorimetry: caps,
                filter: "ftlut creative-lut=\(Self.look) intensity=0.8")
            XCTAssertTrue(paddingKept, "\(label): bytes outside the picture changed")
            XCTAssertNotEqual(output, input, label)
            XCTAssertLessThanOrEqual(output.maxDifference(input.reference(look, colorimetry)), 1, label)
            // Another matrix gives other results: the caps' colorimetry is really the one used.
            let other: YUVColorimetry = colorimetry == .bt709 ? .bt601 : .bt709
            XCTAssertGreaterThan(output.maxDifference(input.reference(look, other)), 1, label)
        }
        // Without a LUT the element passes YUV through untouched.
        let input = Frame420(width: 9, height: 5, seed: 7)
        let (untouched, kept) = try pushed(input, nv12: false, colorimetry: nil, filter: "ftlut")
        XCTAssertEqual(untouched, input)
        XCTAssertTrue(kept)
    }

    /// An identity 3D LUT changes an I420 picture by at most 1 code wherever the picture is inside the RGB gamut:
    /// the conversion to RGB and back loses nothing else. (videotestsrc's bars are not all in gamut: the -I and +Q
    /// patches of `smpte` are defined in YUV, and blocks across a bar edge pair one bar's luma with the other's
    /// chroma; 100 % bars sit on the gamut's faces. RGB clamps those, in this element as on the BGRx path.)
    func testIdentityLUTLeavesI420WithinOneCode() throws {
        let cube = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("identity.cube")
        var text = "LUT_3D_SIZE 2\n"
        for b in 0..<2 { for g in 0..<2 { for r in 0..<2 { text += "\(r) \(g) \(b)\n" } } }
        try Data(text.utf8).write(to: cube)
        for (pattern, width, height) in [
            ("smpte75", 320, 240), ("smpte75", 1280, 720), ("ball", 97, 55), ("smpte", 320, 240),
        ] {
            let source =
                "videotestsrc num-buffers=1 pattern=\(pattern) ! "
                + "video/x-raw,format=I420,width=\(width),height=\(height)"
            let (input, colorimetry) = try frame420("\(source) ! appsink name=sink sync=false")
            let output = try frame420("\(source) ! ftlut creative-lut=\(cube.path) ! appsink name=sink sync=false")
                .frame
            let label = "\(pattern) \(width)×\(height)"
            guard output.width == input.width, output.height == input.height else {
                XCTFail("\(label): the output is \(output.width)×\(output.height)")
                continue
            }
            var (inGamut, blocksInGamut, worstY, worstChroma, worstOutside) = (0, 0, 0, 0, 0)
            for row in 0..<input.chromaHeight {
                for column in 0..<input.chromaWidth {
                    let chroma = row * input.chromaWidth + column
                    var blockInGamut = true
                    for dy in 0..<2 where 2 * row + dy < height {
                        for dx in 0..<2 where 2 * column + dx < width {
                            let at = (2 * row + dy) * width + 2 * column + dx
                            let rgb = colorimetry.rgb(
                                y: Double(input.y[at]), u: Double(input.u[chroma]), v: Double(input.v[chroma]))
                            guard rgb.min() >= -0.5 && rgb.max() <= 255.5 else {
                                worstOutside = max(worstOutside, abs(Int(output.y[at]) - Int(input.y[at])))
                                blockInGamut = false
                                continue
                            }
                            inGamut += 1
                            worstY = max(worstY, abs(Int(output.y[at]) - Int(input.y[at])))
                        }
                    }
                    if blockInGamut {
                        blocksInGamut += 1
                        worstChroma = max(
                            worstChroma, abs(Int(output.u[chroma]) - Int(input.u[chroma])),
                            abs(Int(output.v[chroma]) - Int(input.v[chroma])))
                    }
                }
            }
            XCTAssertGreaterThan(inGamut, width * height * (pattern == "smpte" ? 1 : 3) / 4, label)
            XCTAssertLessThanOrEqual(worstY, 1, label)
            XCTAssertLessThanOrEqual(worstChroma, 1, label)
            XCTAssertGreaterThan(blocksInGamut, 0, label)
            if pattern == "smpte" {
                // The element did run: the out-of-gamut patches were clamped through RGB.
                XCTAssertGreaterThan(worstOutside, 10, label)
            }
        }
    }

    /// The element on I420 against the path it replaces, on a real look: `I420 ! ftlut` and
    /// `I420 ! videoconvert ! BGRx ! ftlut ! videoconvert ! I420`. Luma agrees to about a code on average; chroma
    /// differs a little more, because videoconvert interpolates chroma up and filters it down where this element
    /// uses each block's own sample.
    func testI420MatchesTheBGRxConversionPath() throws {
        let caps = "video/x-raw,format=I420,width=320,height=240"
        let look = "ftlut creative-lut=\(Self.look) intensity=0.8"
        let direct = try frame420(
            "videotestsrc num-buffers=1 pattern=smpte ! \(caps) ! \(look) ! "
                + "appsink name=sink sync=false"
        ).frame
        let converted = try frame420(
            "videotestsrc num-buffers=1 pattern=smpte ! \(caps) ! videoconvert ! "
                + "video/x-raw,format=BGRx ! \(look) ! videoconvert ! \(caps) ! appsink name=sink sync=false"
        ).frame
        let source = try frame420("videotestsrc num-buffers=1 pattern=smpte ! \(caps) ! appsink name=sink sync=false")
            .frame
        func meanAbsolute(_ a: [UInt8], _ b: [UInt8]) -> Double {
            Double(zip(a, b).map { abs(Int($0) - Int($1)) }.reduce(0, +)) / Double(a.count)
        }
        func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
            var squares = 0
            for (x, y) in zip(a, b) { squares += (Int(x) - Int(y)) * (Int(x) - Int(y)) }
            let mse = Double(squares) / Double(a.count)
            return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
        }
        let figures = [("Y", direct.y, converted.y), ("U", direct.u, converted.u), ("V", direct.v, converted.v)].map {
            ($0.0, meanAbsolute($0.1, $0.2), psnr($0.1, $0.2))
        }
        print(
            "I420 direct vs BGRx conversion path: "
                + figures.map {
                    "\($0.0) mean |Δ| \(String(format: "%.3f", $0.1)), PSNR \(String(format: "%.1f", $0.2)) dB"
                }
                .joined(separator: "; "))
        XCTAssertGreaterThan(meanAbsolute(direct.y, source.y), 5, "the look must change the picture")
        // Measured (320×240 smpte, Colour_Correct.cube at 0.8): Y mean |Δ| 1.17, PSNR 44.0 dB; U 0.57, 49.2 dB;
        // V 0.50, 49.6 dB. The bars' sharp edges are where the paths differ most.
        XCTAssertLessThanOrEqual(figures[0].1, 1.5, "luma within about a code on average")
        for (plane, mean, psnr) in figures {
            XCTAssertLessThanOrEqual(mean, 1.5, plane)
            XCTAssertGreaterThan(psnr, 40, plane)
        }
    }

    // MARK: - 10-bit

    /// The raw bytes of the prerolled buffer of `videotestsrc ! caps ! [ftlut] ! appsink`.
    private func tenBitBytes(_ caps: String, filter: String?) throws -> [UInt8] {
        let pipeline = try Pipeline(
            launch: "videotestsrc num-buffers=1 pattern=smpte ! \(caps) ! \(filter.map { "\($0) ! " } ?? "")"
                + "appsink name=sink sync=false")
        defer { pipeline.stop() }
        pipeline.pause()
        switch pipeline.waitForAsyncDone(deadline: Deadline(after: 20_000), isCancelled: { false }) {
        case .done: break
        case .error(let cause): throw ErrorClassifier.classify(cause, remote: false)
        default: throw FilmtoneError(.internalError, "no preroll")
        }
        let sample = try XCTUnwrap(
            AppSink(element: try pipeline.element(named: "sink")).pullPreroll(timeout: .milliseconds(5000)))
        let buffer = try XCTUnwrap(gst_sample_get_buffer(sample.pointer))
        var bytes = [UInt8](repeating: 0, count: Int(gst_buffer_get_size(buffer)))
        bytes.withUnsafeMutableBytes { _ = gst_buffer_extract(buffer, 0, $0.baseAddress, gsize($0.count)) }
        return bytes
    }

    /// ftlut on I420_10LE and P010_10LE frames is `YUV10Kernel` with the caps' colorimetry on the right planes:
    /// 64×48 rows need no padding, so the buffers are compact planes and the kernel can be run on the input here.
    func testTenBitFramesAreTheTenBitKernelInPlace() throws {
        let look = try Look(creativeLUT: try CubeLUT.load(path: Self.look), intensity: 0.7)
        let kernel = YUV10Kernel(rgb: try LUTKernel16(look: look), colorimetry: .bt709.fullRange(true))
        for (format, layout) in [("I420_10LE", YUV10Layout.i420), ("P010_10LE", .p010)] {
            let caps = "video/x-raw,format=\(format),width=64,height=48,colorimetry=(string)1:3:5:1"
            let input = try tenBitBytes(caps, filter: nil)
            let output = try tenBitBytes(caps, filter: "ftlut creative-lut=\(Self.look) intensity=0.7")
            guard input.count == 64 * 48 * 3, output.count == input.count else {
                return XCTFail("\(format): \(input.count) and \(output.count) bytes, not one compact 64×48 frame")
            }
            XCTAssertNotEqual(output, input, format)
            var expected = input
            expected.withUnsafeMutableBytes { frame in
                let base = frame.baseAddress!
                let planes: YUV10Planes =
                    layout == .i420
                    ? .i420(luma: base, lumaStride: 128, cb: base + 6144, cr: base + 6144 + 1536, chromaStride: 64)
                    : .p010(luma: base, lumaStride: 128, chroma: base + 6144, chromaStride: 128)
                kernel.apply(to: planes, width: 64, height: 48)
            }
            XCTAssertEqual(output, expected, "\(format): the element against the kernel on the same frame")
        }
    }
}
