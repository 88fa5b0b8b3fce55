import Synchronization
import XCTest

@testable import FilmtoneGst
@testable import GstKit

/// The steps the drivers share (`PipelineStart.swift`), on real pipelines.
final class PipelineStartTests: XCTestCase {
    /// What the element after the size filter saw, and how the pipeline's wait for EOS ended.
    private func run(_ source: String) throws -> (framesAfter: Int, endOfStreamAfter: Bool, outcome: WaitOutcome) {
        let pipeline = try Pipeline(launch: "\(source) ! capsfilter name=size ! identity name=after ! fakesink")
        defer { pipeline.stop() }
        try pipeline.endWithoutFrames()
        let seen = SeenItems()
        try XCTUnwrap(pipeline.element(named: "after").staticPad("sink")).onData { item in
            seen.record(item)
            return .pass
        }
        pipeline.play()
        let outcome = pipeline.waitForEndOfStream(deadline: Deadline(after: 20_000), isCancelled: { false })
        return (seen.frames, seen.endOfStream, outcome)
    }

    /// A stream that ends before its first frame (a picture whose decoder failed or was refused) used to reach the
    /// muxer as EOS; qtmux then finished a file for a stream without caps while the pipeline was being stopped and
    /// copied NULL caps (GStreamer-CRITICAL in `mezzanine` and `export` of a CMYK JPEG, now and then). The EOS stops
    /// at the size filter, and the bus still says the stream ended.
    func testAnEndBeforeAnyFrameStopsAtTheSizeFilterAndIsPostedOnTheBus() throws {
        let result = try run("fakesrc num-buffers=0")
        guard case .done = result.outcome else { return XCTFail("the wait ended with \(result.outcome)") }
        XCTAssertFalse(result.endOfStreamAfter, "the EOS went on downstream")
        XCTAssertEqual(result.framesAfter, 0)
    }

    /// After a frame, EOS flows as usual: the sinks end the stream.
    func testAnEndAfterFramesFlowsDownstream() throws {
        let result = try run("videotestsrc num-buffers=3")
        guard case .done = result.outcome else { return XCTFail("the wait ended with \(result.outcome)") }
        XCTAssertTrue(result.endOfStreamAfter)
        XCTAssertEqual(result.framesAfter, 3)
    }
}

private final class SeenItems: Sendable {
    private let state = Mutex((frames: 0, endOfStream: false))

    func record(_ item: PadItem) {
        switch item {
        case .buffer: state.withLock { $0.frames += 1 }
        case .endOfStream: state.withLock { $0.endOfStream = true }
        default: break
        }
    }

    var frames: Int { state.withLock { $0.frames } }
    var endOfStream: Bool { state.withLock { $0.endOfStream } }
}
