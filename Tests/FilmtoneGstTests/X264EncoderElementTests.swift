import FilmtoneElements
import FilmtoneTestSupport
import XCTest

@testable import FilmtoneCore
@testable import GstKit

/// `ftx264enc` in process, where its counters can be read and an error in preroll cannot hang a gst-launch-1.0.
/// Its stream against ffmpeg's is `PluginTests.testX264EncoderGivesFfmpegsLibx264StreamByteForByte`.
final class X264EncoderElementTests: XCTestCase {
    /// Runs `launch` to its end; the encoder is the element named `enc`.
    private func run(_ launch: String) throws -> (outcome: WaitOutcome, state: X264EncoderState) {
        try FilmtonePlugin.ensureRegistered()
        let pipeline = try Pipeline(launch: launch)
        defer { pipeline.stop() }
        let state = X264EncoderElement.state(of: UnsafeMutableRawPointer(try pipeline.element(named: "enc").pointer))
        pipeline.play()
        return (pipeline.waitForEndOfStream(deadline: Deadline(after: 60_000), isCancelled: { false }), state)
    }

    /// A picture is held only until x264 has copied it, not until its encoded frame comes out: x264 at veryfast
    /// keeps ≈ 15 pictures in its lookahead, B-frames and threads, which GstVideoEncoder (and x264enc) would keep
    /// alive too. All 90 pictures are encoded, and none is left mapped at the end.
    func testPicturesAreReleasedOnceX264HasCopiedThem() throws {
        let (outcome, state) = try run(
            "videotestsrc num-buffers=90 pattern=ball ! video/x-raw,format=I420,width=640,height=360,framerate=30/1 "
                + "! ftx264enc name=enc speed-preset=veryfast ! h264parse ! fakesink name=sink")
        guard case .done = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(state.heldPeak.load(ordering: .relaxed), 1, "pictures held at once")
        XCTAssertEqual(state.held.load(ordering: .relaxed), 0, "pictures still mapped")
    }

    /// Settings x264 refuses and pictures it cannot take fail in preroll, naming what was refused.
    func testRefusedSettingsAndOddSizesFailWithTheReason() throws {
        for (launch, reason) in [
            ("width=640,height=360 ! ftx264enc name=enc speed-preset=warp", "preset warp"),
            ("width=640,height=360 ! ftx264enc name=enc tune=loud", "tune loud"),
            ("width=641,height=361 ! ftx264enc name=enc", "641×361"),
        ] {
            let (outcome, _) = try run(
                "videotestsrc num-buffers=5 ! video/x-raw,format=I420,framerate=30/1,\(launch) ! fakesink")
            guard case .error(let cause) = outcome else {
                XCTFail("\(launch): \(outcome)")
                continue
            }
            XCTAssertTrue(cause.message.contains("x264 refused") && cause.message.contains(reason), "\(cause)")
            XCTAssertEqual(cause.element, "enc", "\(cause)")
        }
    }
}
