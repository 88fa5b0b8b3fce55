import Foundation
import XCTest

/// `long-faststart.mp4` (600 frames, 20 s) served from `/slow/` by an `HTTPTestServer`, for tests that must stop
/// an export while it is still rendering.
///
/// The pace, not the machine, makes the export slow: the moov and the first ~1.5 s of frames arrive at once (so
/// rendering starts within a second or two, and the probe sees the whole index), every later byte at a rate that
/// makes the whole clip take `minimumSeconds` (≥ 180 s) to arrive. No encoder, however fast, can finish earlier, and
/// a slow or loaded machine only makes it later; the tests' own deadlines are all far below `minimumSeconds`.
package struct SlowRemoteClip {
    /// Frames in the clip (`pipelines/fixtures/long-faststart.mp4.gst`).
    package static let frames = 600
    /// Bytes sent at full speed: the 8 KB moov plus the first ~50 frames.
    package static let fullSpeedBytes: Int64 = 64 * 1024
    /// The least time the whole clip can take to arrive.
    package static let targetSeconds: Int64 = 180

    package let server: HTTPTestServer
    /// The clip's `/slow/` URL.
    package let url: String
    /// Seconds a client needs at least to receive the whole clip.
    package let minimumSeconds: Double

    /// Serves a copy of the fixture; the server stops when the test ends.
    package init(_ testCase: XCTestCase, file: StaticString = #filePath, line: UInt = #line) throws {
        let root = try TestEnvironment.temporaryDirectory(testCase)
        let name = "long-faststart.mp4"
        try FileManager.default.copyItem(
            atPath: try TestEnvironment.fixture(name, file: file, line: line),
            toPath: root.appendingPathComponent(name).path)
        let size = try XCTUnwrap(
            try FileManager.default.attributesOfItem(atPath: root.appendingPathComponent(name).path)[.size]
                as? Int64, file: file, line: line)
        let server = try HTTPTestServer(root: root)
        testCase.addTeardownBlock { server.stop() }
        server.slowPace = HTTPTestServer.Pace(
            fullSpeedBytes: SlowRemoteClip.fullSpeedBytes,
            bytesPerSecond: max(1, (size - SlowRemoteClip.fullSpeedBytes) / SlowRemoteClip.targetSeconds))
        self.server = server
        url = server.url("/slow/\(name)")
        minimumSeconds = server.slowPace.minimumSeconds(forFileOfSize: size)
        XCTAssertGreaterThan(minimumSeconds, 120, "the clip must be slow by construction", file: file, line: line)
    }
}
