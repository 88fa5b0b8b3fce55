import CGst
import FilmtoneTestSupport
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneElements
@testable import FilmtoneGst
@testable import FilmtoneLooks
@testable import GstKit

/// The `ftlut` element inside this process (registered statically by GstRuntime), against the reference
/// evaluation of the same look.
final class LUTFilterElementTests: XCTestCase {
    /// ftlut is registered by the features before they build a pipeline; these tests build their own.
    override func setUpWithError() throws {
        try super.setUpWithError()
        try FilmtonePlugin.ensureRegistered()
    }

    static let look = SharedLUTs.look
    static let gains = SharedLUTs.gains

    /// Runs `videotestsrc ! caps ! [filter] ! appsink` to preroll and returns the frame's packed bytes.
    private func frame(format: String, filter: String?, width: Int = 64, height: Int = 48) throws -> [UInt8] {
        let bytesPerPixel: Int
        switch LUTFilterElement.pixelFormat(named: format) {
        case .packed8(let layout): bytesPerPixel = layout.bytesPerPixel
        case .packed16(let layout): bytesPerPixel = layout.bytesPerPixel
        case .yuv420, .yuv420x10, nil: throw FilmtoneError(.internalError, "not a packed ftlut format: \(format)")
        }
        let description =
            "videotestsrc num-buffers=1 pattern=smpte ! video/x-raw,format=\(format),width=\(width),"
            + "height=\(height) ! \(filter.map { "\($0) ! " } ?? "")appsink name=sink sync=false"
        let pipeline = try Pipeline(launch: description)
        defer { pipeline.stop() }
        pipeline.pause()
        switch pipeline.waitForAsyncDone(deadline: Deadline(after: 10_000), isCancelled: { false }) {
        case .done: break
        case .error(let cause): throw ErrorClassifier.classify(cause, remote: false)
        default: throw FilmtoneError(.internalError, "no preroll")
        }
        let sample = try XCTUnwrap(
            AppSink(element: try pipeline.element(named: "sink")).pullPreroll(timeout: .milliseconds(5000)))
        return try sample.withMappedFrame { view in
            var bytes: [UInt8] = []
            for y in 0..<view.height {
                bytes += UnsafeBufferPointer(start: view.row(y), count: view.width * bytesPerPixel)
            }
            return bytes
        }
    }

    func testEveryFormatMatchesTheReferenceWithinOneCode() throws {
        let look = try Look(
            inputLUT: nil, creativeLUT: try CubeLUT.load(path: Self.look), intensity: 1,
            interpolation: .tetrahedral)
        for (format, layout) in LUTFilterElement.formats {
            let input = try frame(format: format, filter: nil)
            let output = try frame(format: format, filter: "ftlut creative-lut=\(Self.look)")
            XCTAssertNotEqual(input, output, "\(format): the look must change the picture")
            XCTAssertLessThanOrEqual(
                maxByteDifference(output, look.referenceApply(toPacked: input, layout: layout)), 1, format)
        }
    }

    func testTwoSlotsIntensityAndInterpolation() throws {
        let input = try frame(format: "RGBx", filter: nil)
        for (intensity, interpolation) in [(0.5, Interpolation.trilinear), (0.25, .nearest), (1, .tetrahedral)] {
            let look = try Look(
                inputLUT: try CubeLUT.load(path: Self.gains), creativeLUT: try CubeLUT.load(path: Self.look),
                intensity: intensity, interpolation: interpolation)
            let output = try frame(
                format: "RGBx",
                filter: "ftlut input-lut=\(Self.gains) creative-lut=\(Self.look) "
                    + "intensity=\(intensity) interpolation=\(interpolation.rawValue)")
            XCTAssertLessThanOrEqual(
                maxByteDifference(output, look.referenceApply(toPacked: input, layout: .rgbx)), 1,
                "\(intensity) \(interpolation)")
        }
    }

    func testNoLUTIsAPassThroughAndIntensityZeroKeepsTheInputSlot() throws {
        let input = try frame(format: "BGRx", filter: nil)
        XCTAssertEqual(try frame(format: "BGRx", filter: "ftlut"), input)
        XCTAssertEqual(try frame(format: "BGRx", filter: "ftlut creative-lut=\(Self.look) intensity=0"), input)
    }

    func testPaddedRowsAreWalkedByStride() throws {
        // 33 RGB pixels = 99 bytes a row, padded to 100 by GStreamer: a kernel that ignores the stride shears.
        let look = try Look(
            inputLUT: nil, creativeLUT: try CubeLUT.load(path: Self.look), intensity: 1,
            interpolation: .tetrahedral)
        let input = try frame(format: "RGB", filter: nil, width: 33, height: 7)
        let output = try frame(format: "RGB", filter: "ftlut creative-lut=\(Self.look)", width: 33, height: 7)
        XCTAssertLessThanOrEqual(maxByteDifference(output, look.referenceApply(toPacked: input, layout: .rgb)), 1)
    }

    func testBadAndMissingFilesBecomeLUTInvalidAndFileNotFound() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let bad = folder.appendingPathComponent("bad.cube")
        try Data("LUT_3D_SIZE 2\n0 0 0\n".utf8).write(to: bad)
        XCTAssertThrowsError(try frame(format: "RGBx", filter: "ftlut creative-lut=\(bad.path)")) { error in
            let error = error as? FilmtoneError
            XCTAssertEqual(error?.code, .lutInvalid)
            XCTAssertEqual(error?.cause?.factory, "ftlut")
            XCTAssertTrue(error?.message.contains("bad.cube:2:") == true, error?.message ?? "")
        }
        XCTAssertThrowsError(try frame(format: "RGBx", filter: "ftlut input-lut=\(folder.path)/missing.cube")) {
            XCTAssertEqual(($0 as? FilmtoneError)?.code, .fileNotFound)
        }
    }

    /// A look table that cannot be allocated (here: the tests' allocation limit) is an ERROR from the element on
    /// the first frame, CORE/FAILED, which ftgst reports as INTERNAL: never a crash. Once memory is there again,
    /// the element works.
    func testATableThatCannotBeAllocatedIsAnInternalErrorFromTheElement() throws {
        let filter = "ftlut creative-lut=\(Self.look)"
        for (format, message) in [
            ("RGBx", "cannot allocate 64 MiB for the look's colour table"),
            ("RGBA64_LE", "cannot allocate 2.3 MiB for the look's grid cells"),
        ] {
            try TableAllocation.withLimit(1 << 20) {
                XCTAssertThrowsError(try frame(format: format, filter: filter)) { error in
                    let error = error as? FilmtoneError
                    XCTAssertEqual(error?.code, .internalError, format)
                    XCTAssertEqual(error?.cause?.factory, "ftlut", format)
                    XCTAssertEqual(error?.cause?.domain, "core", format)
                    XCTAssertEqual(error?.cause?.code, Int(GST_CORE_ERROR_FAILED.rawValue), format)
                    XCTAssertTrue(error?.message.hasPrefix(message) == true, error?.message ?? format)
                    XCTAssertTrue(error?.cause?.debug?.contains("INTERNAL: \(message)") == true, format)
                }
            }
            XCTAssertNotEqual(try frame(format: format, filter: filter), try frame(format: format, filter: nil), format)
        }
    }

    // MARK: - LUT paths set while PLAYING

    /// A PLAYING `appsrc ! ftlut name=look … ! appsink` fed 16×8 RGBx frames one at a time.
    private final class LiveLook {
        let pipeline: Pipeline
        let look: Element
        private let source: Element
        private let sink: Element
        let input: [UInt8]
        private var next: GstClockTime = 0

        init(properties: String) throws {
            let caps = "video/x-raw,format=RGBx,width=16,height=8,framerate=0/1"
            pipeline = try Pipeline(
                launch: "appsrc name=src format=time caps=\(caps) ! ftlut name=look \(properties) ! "
                    + "appsink name=sink sync=false")
            (look, source, sink) = (
                try pipeline.element(named: "look"), try pipeline.element(named: "src"),
                try pipeline.element(named: "sink")
            )
            var random = PixelRandom(seed: 17)
            input = (0..<(16 * 8 * 4)).map { _ in UInt8.random(in: 0...255, using: &random) }
            pipeline.play()
        }

        deinit { pipeline.stop() }

        /// Pushes the input frame and pulls what comes out (nil when nothing comes within 10 s).
        func roundTrip() throws -> [UInt8]? {
            let buffer = try XCTUnwrap(gst_buffer_new_allocate(nil, gsize(input.count), nil))
            input.withUnsafeBytes { _ = gst_buffer_fill(buffer, 0, $0.baseAddress, gsize($0.count)) }
            buffer.pointee.pts = next * 40_000_000
            next += 1
            // push_buffer takes the buffer (transfer full).
            _ = gst_app_src_push_buffer(GLib.cast(source.pointer, to: GstAppSrc.self), buffer)
            let appsink = GLib.cast(sink.pointer, to: GstAppSink.self)
            guard let pulled = gst_app_sink_try_pull_sample(appsink, 10 * 1_000_000_000) else { return nil }
            return try Sample(takingFull: pulled).withMappedFrame { view in
                (0..<view.height).flatMap { Array(UnsafeBufferPointer(start: view.row($0), count: view.width * 4)) }
            }
        }

        /// The reference for `creative` (nil: no LUT) on the input frame.
        func expected(_ creative: String?) throws -> [UInt8] {
            guard let creative else { return input }
            return try Look(creativeLUT: try CubeLUT.load(path: creative)).referenceApply(
                toPacked: input, layout: .rgbx)
        }
    }

    /// `creative-lut` set while PLAYING applies from the next frame: from pass-through (no LUT at start) to a look,
    /// from one look to another, and back to none; in both slots.
    func testALUTPathSetWhilePlayingAppliesFromTheNextFrame() throws {
        let live = try LiveLook(properties: "")
        let first = try XCTUnwrap(try live.roundTrip(), "no frame through the pass-through element")
        XCTAssertEqual(first, live.input, "no LUT: pass-through")
        for creative in [Self.look, Self.gains, nil] {
            try live.look.setProperty("creative-lut", .string(creative ?? ""))
            let output = try XCTUnwrap(try live.roundTrip(), "no frame after creative-lut=\(creative ?? "")")
            XCTAssertLessThanOrEqual(
                maxByteDifference(output, try live.expected(creative)), 1, "creative-lut=\(creative ?? "")")
        }
        XCTAssertEqual(try live.roundTrip(), live.input, "cleared again: pass-through")
        // The input slot too, while a creative look is set.
        try live.look.setProperty("creative-lut", .string(Self.look))
        try live.look.setProperty("input-lut", .string(Self.gains))
        let both = try XCTUnwrap(try live.roundTrip(), "no frame after input-lut")
        let reference = try Look(
            inputLUT: try CubeLUT.load(path: Self.gains), creativeLUT: try CubeLUT.load(path: Self.look))
        XCTAssertLessThanOrEqual(
            maxByteDifference(both, reference.referenceApply(toPacked: live.input, layout: .rgbx)), 1)
    }

    /// A bad file set while PLAYING is reported on its first frame as a bad file is in start(): the element's
    /// RESOURCE/SETTINGS error with the file and line, LUT_INVALID in ftgst; a missing one FILE_NOT_FOUND.
    func testABadLUTSetWhilePlayingPostsTheElementsLUTError() throws {
        let bad = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("bad.cube")
        try Data("LUT_3D_SIZE 2\n0 0 0\n".utf8).write(to: bad)
        for (path, code) in [(bad.path, FilmtoneError.Code.lutInvalid), (bad.path + ".missing", .fileNotFound)] {
            let live = try LiveLook(properties: "creative-lut=\(Self.look)")
            XCTAssertNotNil(try live.roundTrip(), "no frame before the change")
            try live.look.setProperty("creative-lut", .string(path))
            XCTAssertNil(try live.roundTrip()?.count, "a frame came out after creative-lut=\(path)")
            guard
                case .error(let cause) = live.pipeline.waitForEndOfStream(
                    deadline: Deadline(after: 10_000), isCancelled: { false })
            else { return XCTFail("no error after creative-lut=\(path)") }
            let error = ErrorClassifier.classify(cause, remote: false)
            XCTAssertEqual(error.code, code, error.message)
            XCTAssertEqual(error.cause?.factory, "ftlut")
            if code == .lutInvalid { XCTAssertTrue(error.message.contains("bad.cube:2:"), error.message) }
        }
    }

    // MARK: - 16-bit formats

    /// Pushes one frame of `bytes` (rows `stride` bytes apart, announced by a GstVideoMeta, so the element must
    /// walk them by stride) through `appsrc ! [filter] ! appsink` and returns the output frame's bytes, rows still
    /// `stride` apart (padding included, except after the last row), and the stride it came back with.
    private func pushed(_ bytes: [UInt8], format: String, width: Int, height: Int, stride: Int, filter: String?)
        throws -> (bytes: [UInt8], stride: Int)
    {
        let caps = "video/x-raw,format=\(format),width=\(width),height=\(height),framerate=0/1"
        let pipeline = try Pipeline(
            launch: "appsrc name=src format=time caps=\(caps) ! "
                + "\(filter.map { "\($0) ! " } ?? "")appsink name=sink sync=false")
        defer { pipeline.stop() }
        pipeline.pause()
        let source = try pipeline.element(named: "src")
        let buffer = try XCTUnwrap(gst_buffer_new_allocate(nil, gsize(bytes.count), nil))
        bytes.withUnsafeBytes { _ = gst_buffer_fill(buffer, 0, $0.baseAddress, gsize($0.count)) }
        var offsets = [gsize](repeating: 0, count: Int(GST_VIDEO_MAX_PLANES))
        var strides = [gint](repeating: 0, count: Int(GST_VIDEO_MAX_PLANES))
        strides[0] = gint(stride)
        XCTAssertNotNil(
            gst_buffer_add_video_meta_full(
                buffer, GST_VIDEO_FRAME_FLAG_NONE, gst_video_format_from_string(format), guint(width), guint(height), 1,
                &offsets, &strides))
        buffer.pointee.pts = 0
        // push_buffer takes the buffer (transfer full).
        XCTAssertEqual(gst_app_src_push_buffer(GLib.cast(source.pointer, to: GstAppSrc.self), buffer), GST_FLOW_OK)
        _ = gst_app_src_end_of_stream(GLib.cast(source.pointer, to: GstAppSrc.self))
        switch pipeline.waitForAsyncDone(deadline: Deadline(after: 10_000), isCancelled: { false }) {
        case .done: break
        case .error(let cause): throw ErrorClassifier.classify(cause, remote: false)
        default: throw FilmtoneError(.internalError, "no preroll")
        }
        let sink = AppSink(element: try pipeline.element(named: "sink"))
        let sample = try XCTUnwrap(sink.pullPreroll(timeout: .milliseconds(5000)))
        return try sample.withMappedFrame { view in
            let lastRow = bytes.count - stride * (height - 1)
            var out: [UInt8] = []
            for y in 0..<view.height {
                out += UnsafeBufferPointer(start: view.row(y), count: y == view.height - 1 ? lastRow : view.stride)
            }
            return (out, view.stride)
        }
    }

    /// A 16-bit test frame: random colours with the 10-bit grey ramp mixed in, random alpha, padding bytes 0xA5.
    /// Returns the frame's bytes and its pixels' R, G, B in frame order.
    private func frame16(width: Int, height: Int, stride: Int, layout: PackedRGB16Layout, seed: UInt64)
        -> (bytes: [UInt8], pixels: [SIMD3<UInt16>])
    {
        var random = PixelRandom(seed: seed)
        var bytes = [UInt8](repeating: 0xA5, count: stride * (height - 1) + width * 8)
        var pixels: [SIMD3<UInt16>] = []
        for y in 0..<height {
            for x in 0..<width {
                let index = y * width + x
                let grey = widened10(index * 7 % 1024)
                let pixel =
                    index % 3 == 0
                    ? SIMD3(repeating: grey)
                    : SIMD3(
                        UInt16.random(in: 0...65535, using: &random), UInt16.random(in: 0...65535, using: &random),
                        UInt16.random(in: 0...65535, using: &random))
                pixels.append(pixel)
                let alpha = UInt16.random(in: 0...65535, using: &random)
                var samples = [alpha, alpha, alpha, alpha]
                (samples[layout.red], samples[layout.green], samples[layout.blue]) = (pixel.x, pixel.y, pixel.z)
                for (sample, value) in samples.enumerated() {
                    bytes[y * stride + x * 8 + sample * 2] = UInt8(value & 0xFF)
                    bytes[y * stride + x * 8 + sample * 2 + 1] = UInt8(value >> 8)
                }
            }
        }
        return (bytes, pixels)
    }

    /// The reference applied to a 16-bit frame: R, G, B replaced by the reference's, everything else kept.
    private func expected16(
        _ bytes: [UInt8], _ pixels: [SIMD3<UInt16>], look: Look, width: Int, stride: Int,
        layout: PackedRGB16Layout
    ) -> [UInt8] {
        var out = bytes
        for (index, pixel) in pixels.enumerated() {
            let result = look.reference16(pixel)
            for (channel, sample) in [layout.red, layout.green, layout.blue].enumerated() {
                let at = (index / width) * stride + (index % width) * 8 + sample * 2
                (out[at], out[at + 1]) = (UInt8(result[channel] & 0xFF), UInt8(result[channel] >> 8))
            }
        }
        return out
    }

    /// The largest difference between two 16-bit frames' little-endian samples (alpha and padding must be equal
    /// too: the samples are compared two bytes at a time, padding included).
    private func maxSampleDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        XCTAssertEqual(a.count, b.count)
        var worst = 0
        for at in Swift.stride(from: 0, to: min(a.count, b.count) - 1, by: 2) {
            let x = Int(a[at]) | Int(a[at + 1]) << 8
            let y = Int(b[at]) | Int(b[at + 1]) << 8
            worst = max(worst, abs(x - y))
        }
        return worst
    }

    /// Half a 10-bit code in 16-bit units.
    private static let contract16 = 32

    func testSixteenBitFormatsWithPaddedRowsMatchTheReference() throws {
        let look = try Look(creativeLUT: try CubeLUT.load(path: Self.look))
        let (width, height) = (67, 40)
        let stride = width * 8 + 24
        for (format, layout) in LUTFilterElement.formats16 {
            let (input, pixels) = frame16(width: width, height: height, stride: stride, layout: layout, seed: 31)
            let (output, outStride) = try pushed(
                input, format: format, width: width, height: height, stride: stride,
                filter: "ftlut creative-lut=\(Self.look)")
            XCTAssertEqual(outStride, stride, "\(format): the padded stride reaches the sink")
            XCTAssertNotEqual(output, input, "\(format): the look must change the picture")
            let expected = expected16(input, pixels, look: look, width: width, stride: stride, layout: layout)
            // Alpha and padding are compared too: any change there is a difference of at least 1 sample value,
            // and a sheared row far more than the contract.
            XCTAssertLessThanOrEqual(maxSampleDifference(output, expected), Self.contract16, format)
            let alpha = [0, 1, 2, 3].first { ![layout.red, layout.green, layout.blue].contains($0) }
            XCTAssertNotNil(alpha, "\(format): a 16-bit layout has one sample that is not R, G or B")
            let untouched = zip(output, input).enumerated().filter { index, _ in
                index % stride >= width * 8 || (index % stride % 8) / 2 == alpha
            }
            XCTAssertTrue(untouched.allSatisfy { $0.1.0 == $0.1.1 }, "\(format): alpha or padding changed")
        }
    }

    func testSixteenBitTwoSlotsIntensityAndInterpolation() throws {
        let (width, height) = (50, 20)
        let stride = width * 8 + 16
        let (input, pixels) = frame16(width: width, height: height, stride: stride, layout: .rgba64, seed: 32)
        for (intensity, interpolation) in [(0.5, Interpolation.trilinear), (0.25, .nearest), (0.8, .tetrahedral)] {
            let look = try Look(
                inputLUT: try CubeLUT.load(path: Self.gains),
                creativeLUT: try CubeLUT.load(path: Self.look), intensity: intensity,
                interpolation: interpolation)
            let (output, _) = try pushed(
                input, format: "RGBA64_LE", width: width, height: height, stride: stride,
                filter: "ftlut input-lut=\(Self.gains) creative-lut=\(Self.look) "
                    + "intensity=\(intensity) interpolation=\(interpolation.rawValue)")
            let expected = expected16(input, pixels, look: look, width: width, stride: stride, layout: .rgba64)
            XCTAssertLessThanOrEqual(
                maxSampleDifference(output, expected), Self.contract16,
                "\(intensity) \(interpolation)")
        }
    }

    func testSixteenBitNoLUTIsAPassThroughAndIntensityZeroKeepsTheInputSlot() throws {
        let (width, height) = (31, 9)
        let stride = width * 8 + 8
        let (input, _) = frame16(width: width, height: height, stride: stride, layout: .rgba64, seed: 33)
        for filter in ["ftlut", "ftlut creative-lut=\(Self.look) intensity=0"] {
            let (output, _) = try pushed(
                input, format: "RGBA64_LE", width: width, height: height, stride: stride,
                filter: filter)
            XCTAssertEqual(output, input, filter)
        }
        // The frame with only the input slot, and with it plus a creative LUT at intensity 0: the same.
        let inputSlot = try pushed(
            input, format: "RGBA64_LE", width: width, height: height, stride: stride,
            filter: "ftlut input-lut=\(Self.gains)"
        ).bytes
        let blendedOff = try pushed(
            input, format: "RGBA64_LE", width: width, height: height, stride: stride,
            filter: "ftlut input-lut=\(Self.gains) creative-lut=\(Self.look) intensity=0"
        ).bytes
        XCTAssertNotEqual(inputSlot, input)
        XCTAssertEqual(blendedOff, inputSlot)
    }

    /// A source that produces RGBA64_LE itself (videotestsrc) through the element, against the reference.
    func testSixteenBitFromVideotestsrcMatchesTheReference() throws {
        let look = try Look(creativeLUT: try CubeLUT.load(path: Self.look))
        let input = try frame(format: "RGBA64_LE", filter: nil)
        let output = try frame(format: "RGBA64_LE", filter: "ftlut creative-lut=\(Self.look)")
        XCTAssertNotEqual(input, output)
        func sample(_ at: Int) -> UInt16 { UInt16(input[at]) | UInt16(input[at + 1]) << 8 }
        let pixels = Swift.stride(from: 0, to: input.count, by: 8).map {
            SIMD3(sample($0), sample($0 + 2), sample($0 + 4))
        }
        let expected = expected16(input, pixels, look: look, width: 64, stride: 64 * 8, layout: .rgba64)
        XCTAssertLessThanOrEqual(maxSampleDifference(output, expected), Self.contract16)
    }

    /// The format `videotestsrc ! <upstream> ! ftlut` settles on.
    private func negotiated(after upstream: String) throws -> String {
        let pipeline = try Pipeline(
            launch: "videotestsrc num-buffers=1 ! \(upstream) ! "
                + "ftlut creative-lut=\(Self.look) ! appsink name=sink sync=false")
        defer { pipeline.stop() }
        pipeline.pause()
        guard case .done = pipeline.waitForAsyncDone(deadline: Deadline(after: 10_000), isCancelled: { false }) else {
            throw FilmtoneError(.internalError, "no preroll after \(upstream)")
        }
        let sink = AppSink(element: try pipeline.element(named: "sink"))
        let sample = try XCTUnwrap(sink.pullPreroll(timeout: .milliseconds(5000)))
        return try XCTUnwrap(sample.caps?.video?.format)
    }

    /// Pipelines that negotiated an 8-bit RGB format before the element took 16-bit and YUV ones still do, the same
    /// one (the formats in the comments were measured with the 8-bit-RGB-only element), except a YUV source through
    /// videoconvert, which now stays YUV: videotestsrc, which lists 16-bit
    /// formats first and fixates the first one the element accepts, gets ABGR because the element answers caps
    /// queries 8-bit RGB first; videoconvert after an 8-bit RGB source keeps 8-bit RGB (it scores formats by what they lose,
    /// not by their order). After a 10-bit source videoconvert picked a 16-bit format before the element took
    /// I420; now it picks I420 (see below), and a 16-bit format must be pinned to keep 10 bits.
    func testEightBitRGBPipelinesNegotiateAsBeforeAndYUVSourcesStayYUV() throws {
        XCTAssertEqual(try negotiated(after: "video/x-raw,width=32,height=16"), "ABGR")
        XCTAssertEqual(try negotiated(after: "video/x-raw,width=32,height=16 ! videoconvert"), "ABGR")
        // An I420 source through videoconvert stays I420: the element takes it as it is (it negotiated xBGR before
        // the element took YUV).
        XCTAssertEqual(try negotiated(after: "video/x-raw,format=I420,width=32,height=16 ! videoconvert"), "I420")
        XCTAssertEqual(try negotiated(after: "video/x-raw,format=NV12,width=32,height=16"), "NV12")
        // An RGB-only source after videoconvert still gets RGB.
        XCTAssertEqual(try negotiated(after: "video/x-raw,format=RGB,width=32,height=16 ! videoconvert"), "RGB")
        for tenBit in ["I420_10LE", "P010_10LE"] {
            // The element takes 10-bit 4:2:0 as it is: videoconvert passes it through (it picked 8-bit I420 before,
            // a depth loss it ranks above a change to RGB); a 16-bit RGB format can still be pinned.
            XCTAssertEqual(
                try negotiated(after: "video/x-raw,format=\(tenBit),width=32,height=16 ! videoconvert"), tenBit)
            // A peer offering only deep formats gets the 10-bit YUV tier first.
            XCTAssertEqual(
                try negotiated(after: "video/x-raw,format={RGBA64_LE,\(tenBit)},width=32,height=16"), tenBit)
            let format = try negotiated(
                after: "video/x-raw,format=\(tenBit),width=32,height=16 ! videoconvert ! "
                    + "video/x-raw,format={RGBA64_LE,BGRA64_LE}")
            guard case .packed16 = LUTFilterElement.pixelFormat(named: format) else {
                return XCTFail("\(tenBit) negotiated \(format), not a 16-bit format")
            }
        }
        let listed = LUTFilterElement.capsDescription
        func positions(_ formats: [String], followedBy end: String) throws -> [String.Index] {
            try formats.map { try XCTUnwrap(listed.range(of: " \($0)\(end)")?.lowerBound, "\($0) not in \(listed)") }
        }
        let eightBit = try positions(LUTFilterElement.formats.map(\.0), followedBy: ",")
        let sixteenBit = try positions(LUTFilterElement.formats16.map(\.0), followedBy: "")
        let yuv = try positions(
            LUTFilterElement.formatsYUV.map(\.0) + LUTFilterElement.formatsYUV10.map(\.0), followedBy: ",")
        let (lastEightBit, firstSixteenBit) = (try XCTUnwrap(eightBit.max()), try XCTUnwrap(sixteenBit.min()))
        XCTAssertLessThan(lastEightBit, try XCTUnwrap(yuv.min()), listed)
        XCTAssertLessThan(try XCTUnwrap(yuv.max()), firstSixteenBit, listed)
    }

    /// The format `<launch> ! ftlut … ! appsink` settles on, for a file source.
    private func negotiatedFromFile(_ launch: String) throws -> String {
        let pipeline = try Pipeline(
            launch: "\(launch) ! ftlut creative-lut=\(Self.look) ! appsink name=sink sync=false")
        defer { pipeline.stop() }
        pipeline.pause()
        switch pipeline.waitForAsyncDone(deadline: Deadline(after: 20_000), isCancelled: { false }) {
        case .done: break
        case .error(let cause): throw ErrorClassifier.classify(cause, remote: false)
        default: throw FilmtoneError(.internalError, "no preroll: \(launch)")
        }
        let sink = AppSink(element: try pipeline.element(named: "sink"))
        let sample = try XCTUnwrap(sink.pullPreroll(timeout: .milliseconds(5000)))
        return try XCTUnwrap(sample.caps?.video?.format)
    }

    /// A 10-bit HEVC decoder links to the element directly (it did not negotiate at all before: it only gives
    /// I420_10LE), and `decodebin ! videoconvert ! ftlut` keeps the 10 bits (it silently gave 8-bit I420 before).
    func testTenBitDecodersNegotiateTenBitYUV() throws {
        let clip = try TestEnvironment.fixture("hevc10.mp4")
        XCTAssertEqual(
            try negotiatedFromFile("filesrc location=\(clip) ! qtdemux ! h265parse ! avdec_h265"), "I420_10LE")
        XCTAssertEqual(try negotiatedFromFile("filesrc location=\(clip) ! decodebin ! videoconvert"), "I420_10LE")
    }

    /// The look after scaling and after the tone map's way back to 8-bit RGB; without a look, only the tone map's
    /// `ftlut` (in pass-through for SDR sources).
    func testPreviewRecipeCarriesTheLookAfterScaling() {
        let withLook = FrameRecipe.launchDescription(withLook: true)
        XCTAssertTrue(
            withLook.contains(
                "name=size caps=video/x-raw,format=RGB,pixel-aspect-ratio=1/1 ! ftlut name=tonemap ! videoconvert "
                    + "! video/x-raw,format=RGB ! ftlut name=look ! appsink"),
            withLook)
        let plain = FrameRecipe.launchDescription(withLook: false)
        XCTAssertFalse(plain.contains("name=look"), plain)
        XCTAssertEqual(plain.components(separatedBy: "ftlut").count, 2, plain)
    }
}
