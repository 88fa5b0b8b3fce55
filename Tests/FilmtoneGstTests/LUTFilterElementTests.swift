import XCTest
@testable import FilmtoneGst

/// The `ftlut` element inside this process (registered statically by GstRuntime), against the reference
/// evaluation of the same look.
final class LUTFilterElementTests: XCTestCase {
    static let look = SharedLUTs.root.appendingPathComponent("colour-science/iridas_cube/Colour_Correct.cube").path
    static let gains = SharedLUTs.root.appendingPathComponent("colour-science/iridas_cube/RGB_1_0.5_0.25.cube").path

    /// Runs `videotestsrc ! caps ! [filter] ! appsink` to preroll and returns the frame's packed bytes.
    private func frame(format: String, filter: String?, width: Int = 64, height: Int = 48) throws -> [UInt8] {
        let bytesPerPixel = format.count == 3 ? 3 : 4
        let description = "videotestsrc num-buffers=1 pattern=smpte ! video/x-raw,format=\(format),width=\(width),"
            + "height=\(height) ! \(filter.map { "\($0) ! " } ?? "")appsink name=sink sync=false"
        let pipeline = try Pipeline(launch: description)
        defer { pipeline.stop() }
        pipeline.pause()
        switch pipeline.waitForAsyncDone(deadline: Deadline(after: 10_000), isCancelled: { false }) {
        case .done: break
        case .error(let cause): throw ErrorClassifier.classify(cause, remote: false)
        default: throw FilmtoneError(.internalError, "no preroll")
        }
        let sample = try XCTUnwrap(AppSink(element: try pipeline.element(named: "sink")).pullPreroll(timeout: .milliseconds(5000)))
        return try sample.withMappedFrame { view in
            var bytes: [UInt8] = []
            for y in 0..<view.height { bytes += UnsafeBufferPointer(start: view.row(y), count: view.width * bytesPerPixel) }
            return bytes
        }
    }

    func testEveryFormatMatchesTheReferenceWithinOneCode() throws {
        let look = try Look(inputLUT: nil, creativeLUT: try CubeLUT.load(path: Self.look), intensity: 1,
                            interpolation: .tetrahedral)
        for (format, layout) in LUTFilterElement.formats {
            let input = try frame(format: format, filter: nil)
            let output = try frame(format: format, filter: "ftlut creative-lut=\(Self.look)")
            XCTAssertNotEqual(input, output, "\(format): the look must change the picture")
            XCTAssertLessThanOrEqual(maxByteDifference(output, look.referenceApply(toPacked: input, layout: layout)), 1, format)
        }
    }

    func testTwoSlotsIntensityAndInterpolation() throws {
        let input = try frame(format: "RGBx", filter: nil)
        for (intensity, interpolation) in [(0.5, Interpolation.trilinear), (0.25, .nearest), (1, .tetrahedral)] {
            let look = try Look(inputLUT: try CubeLUT.load(path: Self.gains), creativeLUT: try CubeLUT.load(path: Self.look),
                                intensity: intensity, interpolation: interpolation)
            let output = try frame(format: "RGBx", filter: "ftlut input-lut=\(Self.gains) creative-lut=\(Self.look) "
                + "intensity=\(intensity) interpolation=\(interpolation.rawValue)")
            XCTAssertLessThanOrEqual(maxByteDifference(output, look.referenceApply(toPacked: input, layout: .rgbx)), 1,
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
        let look = try Look(inputLUT: nil, creativeLUT: try CubeLUT.load(path: Self.look), intensity: 1,
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

    func testPreviewRecipeCarriesTheLookAfterScaling() {
        let withLook = FrameRecipe.launchDescription(withLook: true)
        XCTAssertTrue(withLook.contains("name=size caps=video/x-raw,format=RGB,pixel-aspect-ratio=1/1 ! ftlut name=look ! appsink"),
                      withLook)
        XCTAssertFalse(FrameRecipe.launchDescription(withLook: false).contains("ftlut"))
    }
}
