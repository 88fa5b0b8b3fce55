import XCTest

@testable import FilmtoneGst
@testable import GstKit

final class FrameRecipeTests: XCTestCase {
    func testScalesDisplaySizeDownKeepingAspect() {
        let size = FrameRecipe.outputSize(
            width: 1920, height: 1080, pixelAspect: Fraction(1, 1), maxWidth: 320,
            maxHeight: 320)
        XCTAssertEqual(size.width, 320)
        XCTAssertEqual(size.height, 180)
    }

    func testHeightCanBeTheLimitingSide() {
        let size = FrameRecipe.outputSize(
            width: 1080, height: 1920, pixelAspect: Fraction(1, 1), maxWidth: 512,
            maxHeight: 512)
        XCTAssertEqual(size.width, 288)
        XCTAssertEqual(size.height, 512)
    }

    func testNeverUpscales() {
        let size = FrameRecipe.outputSize(
            width: 200, height: 150, pixelAspect: Fraction(1, 1), maxWidth: 512,
            maxHeight: 512)
        XCTAssertEqual(size.width, 200)
        XCTAssertEqual(size.height, 150)
    }

    func testNonSquarePixelsBecomeSquareAtDisplaySize() {
        // 360×240 with PAR 16/9 displays as 640×240.
        let full = FrameRecipe.outputSize(
            width: 360, height: 240, pixelAspect: Fraction(16, 9), maxWidth: 1000,
            maxHeight: 1000)
        XCTAssertEqual(full.width, 640)
        XCTAssertEqual(full.height, 240)
        let fitted = FrameRecipe.outputSize(
            width: 360, height: 240, pixelAspect: Fraction(16, 9), maxWidth: 512,
            maxHeight: 512)
        XCTAssertEqual(fitted.width, 512)
        XCTAssertEqual(fitted.height, 192)
    }

    func testTinyTargetsStayAtLeastOnePixel() {
        let size = FrameRecipe.outputSize(
            width: 4000, height: 10, pixelAspect: Fraction(1, 1), maxWidth: 40,
            maxHeight: 40)
        XCTAssertEqual(size.width, 40)
        XCTAssertEqual(size.height, 1)
    }

    func testOutputCapsPinRGBSquarePixels() {
        XCTAssertEqual(
            FrameRecipe.outputCaps(width: 320, height: 180),
            "video/x-raw,format=RGB,width=320,height=180,pixel-aspect-ratio=1/1")
    }

    func testAcceptsTheFrameOnScreenAtTheTarget() {
        let frame = ClockTime.milliseconds(1000)
        let duration = ClockTime(nanoseconds: 33_333_333)
        XCTAssertTrue(
            FrameRecipe.accepts(
                frame: frame, duration: duration, target: .milliseconds(1010),
                tolerance: .zero))
        XCTAssertTrue(
            FrameRecipe.accepts(
                frame: frame, duration: duration, target: .milliseconds(1000),
                tolerance: .zero))
        XCTAssertFalse(
            FrameRecipe.accepts(
                frame: frame, duration: duration, target: .milliseconds(1034),
                tolerance: .zero))
        XCTAssertFalse(
            FrameRecipe.accepts(
                frame: frame, duration: duration, target: .milliseconds(999),
                tolerance: .zero))
    }

    func testAcceptsFramesWithinTolerance() {
        let keyframe = ClockTime.zero
        XCTAssertTrue(
            FrameRecipe.accepts(
                frame: keyframe, duration: nil, target: .milliseconds(1500),
                tolerance: .milliseconds(2000)))
        XCTAssertFalse(
            FrameRecipe.accepts(
                frame: keyframe, duration: nil, target: .milliseconds(2500),
                tolerance: .milliseconds(2000)))
    }

    func testSeekPlanTriesKeyframeFirstOnlyWhenToleranceAllows() {
        XCTAssertEqual(FrameRecipe.seekPlan(tolerance: .zero), [[.flush, .accurate]])
        XCTAssertEqual(
            FrameRecipe.seekPlan(tolerance: .milliseconds(500)),
            [[.flush, .keyUnit, .snapBefore], [.flush, .accurate]])
    }
}

extension FrameRecipeTests {
    func testUnclippedStartRecoversTheFrameStartAfterAnAccurateSeek() {
        let fps = Fraction(30, 1)
        // Frame 30 (1000…1033.3 ms) clipped at a segment start of 1010 ms.
        let clipped = FrameRecipe.unclippedStart(
            time: .milliseconds(1010), duration: ClockTime(nanoseconds: 23_333_333),
            frameRate: fps)
        XCTAssertEqual(clipped.milliseconds, 1000)
        // An unclipped frame keeps its time.
        XCTAssertEqual(
            FrameRecipe.unclippedStart(
                time: .milliseconds(1400), duration: ClockTime(nanoseconds: 33_333_333),
                frameRate: fps), .milliseconds(1400))
        // No frame rate (variable): nothing to recover from.
        XCTAssertEqual(
            FrameRecipe.unclippedStart(
                time: .milliseconds(1010), duration: ClockTime(nanoseconds: 1_000_000),
                frameRate: Fraction(0, 1)), .milliseconds(1010))
    }

    func testReadingForwardTakesTheFrameOnScreenAtTheTarget() {
        let frame = ClockTime(nanoseconds: 33_333_333)
        func step(_ ms: Int64, previous: Bool = true, target: Int64 = 1510, tolerance: Int64 = 0)
            -> FrameRecipe.ForwardStep
        {
            FrameRecipe.forwardStep(
                frame: .milliseconds(ms), duration: frame, hasPrevious: previous, target: .milliseconds(target),
                tolerance: .milliseconds(tolerance))
        }
        XCTAssertEqual(step(1467), .keepReading)
        XCTAssertEqual(step(1500), .take, "on screen at 1510")
        XCTAssertEqual(step(1533), .takePrevious, "past the target: the one before was on screen")
        XCTAssertEqual(step(1533, previous: false), .take, "the stream starts after the target")
        XCTAssertEqual(step(1000, tolerance: 600), .take, "within the tolerance")
        // No duration: the frame after the target is what shows the previous one was on screen.
        XCTAssertEqual(
            FrameRecipe.forwardStep(
                frame: .milliseconds(1533), duration: nil, hasPrevious: true, target: .milliseconds(1510),
                tolerance: .zero), .takePrevious)
    }

    func testOnlySouphttpsrcsSeekRefusalMeansReadForward() {
        func cause(_ domain: String, _ code: Int, _ factory: String?) -> FilmtoneError.GStreamerCause {
            FilmtoneError.GStreamerCause(
                domain: domain, code: code, message: "Server does not support seeking.", debug: nil, element: "source",
                factory: factory, httpStatus: 200)
        }
        XCTAssertTrue(FrameRecipe.isRangeRefusal(cause("resource", 11, "souphttpsrc")))
        XCTAssertFalse(FrameRecipe.isRangeRefusal(cause("resource", 5, "souphttpsrc")), "a read failure")
        XCTAssertFalse(FrameRecipe.isRangeRefusal(cause("resource", 11, "filesrc")))
        XCTAssertFalse(FrameRecipe.isRangeRefusal(cause("stream", 11, "souphttpsrc")))
        XCTAssertFalse(FrameRecipe.isRangeRefusal(nil))
    }
}
