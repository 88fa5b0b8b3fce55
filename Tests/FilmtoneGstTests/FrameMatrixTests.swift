import FilmtoneTestSupport
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneGst
@testable import GstKit

/// The frame-exactness matrix (issue 28): every `matrix-*` clip (pipelines/fixtures: one barcode source encoded by
/// ffmpeg into each codec, container and GOP shape a user brings) asked for frames at a keyframe, just after one,
/// mid-GOP, just before the next keyframe and the last, through each way the grabber reaches a frame: the one-shot
/// grab with every fast path on (a known demuxer seeking before the first preroll, `fth264dec`, skipped pictures),
/// the same with every `FTGST_NO_*` switch set (the plain path), and a kept pipeline visiting the times forward
/// (steps and seeks) and backward. The oracle is the number the picture shows (`FrameBarcode`) and the time
/// reported: frame n, at n × 40 ms.
final class FrameMatrixTests: XCTestCase {
    /// Every clip of the matrix.
    static let clips = [
        "matrix-h264-bframes.mp4", "matrix-h264-opengop.mkv", "matrix-h264-high10.mp4", "matrix-hevc8.mp4",
        "matrix-hevc10.mov", "matrix-hevc10.mkv", "matrix-vp9.webm", "matrix-av1.mkv", "matrix-mjpeg.avi",
        "matrix-mjpeg.mov", "matrix-prores.mov", "matrix-late.mp4", "matrix-h264.ts", "matrix-mpeg2.ts",
        "matrix-h264.avi", "matrix-mpeg4.avi", "matrix-frag.mp4", "matrix-frag-ip.mp4", "matrix-h264-interlaced.mp4",
        "matrix-h264-to-high10.ts", "matrix-h264-to-444.ts", "matrix-h264-to-interlaced.ts",
    ]

    /// (frame, time asked in ms): the first frame (mid-frame), a keyframe (at its start), just after it (mid-frame),
    /// mid-GOP, just before the next keyframe (mid-frame), the last frame (mid-frame). GOPs are 12 frames.
    static let cells: [(frame: Int, ms: Int64)] = [(0, 20), (12, 480), (13, 540), (18, 720), (23, 940), (39, 1580)]

    /// The `FTGST_NO_*` switches that turn every fast path off.
    static let plainSwitches = [
        "FTGST_NO_KNOWN_DEMUXER", "FTGST_NO_OWN_DECODER", "FTGST_NO_REFERENCE_SKIP", "FTGST_NO_PRESCALE",
    ]

    private func request(_ clip: String, ms: Int64) throws -> FrameRequest {
        FrameRequest(
            source: .local(path: try TestEnvironment.fixture(clip)), headers: [], time: .milliseconds(ms),
            tolerance: .zero, maxWidth: 4096, maxHeight: 4096, timeoutMilliseconds: 20_000)
    }

    /// "n@t" for a grabbed frame: the number it shows (? when none) and the time reported.
    private func reading(_ frame: GrabbedFrame) -> String {
        let number = FrameBarcode.number(width: frame.image.width, height: frame.image.height, rgb: frame.image.pixels)
        return "\(number.map(String.init) ?? "?")@\(frame.time.milliseconds)"
    }

    private func expected(_ frame: Int) -> String { "\(frame)@\(Int64(frame) * FrameBarcode.frameMilliseconds)" }

    private func withSwitches<T>(_ on: Bool, _ body: () throws -> T) rethrows -> T {
        if on { for name in Self.plainSwitches { setenv(name, "1", 1) } }
        defer { if on { for name in Self.plainSwitches { unsetenv(name) } } }
        return try body()
    }

    /// The one-shot grab, fast and plain, at every cell of every clip.
    func testOneShotGrabIsExactOnEveryClip() throws {
        for clip in Self.clips {
            for plain in [false, true] {
                for cell in Self.cells {
                    let what = "\(clip) at \(cell.ms) ms\(plain ? " (plain path)" : "")"
                    let got = withSwitches(plain) {
                        Result {
                            try FrameGrabber(request: try request(clip, ms: cell.ms), isCancelled: { false }).grab()
                        }
                    }
                    switch got {
                    case .success(let frame): XCTAssertEqual(reading(frame), expected(cell.frame), what)
                    case .failure(let error): XCTFail("\(what): \(error)")
                    }
                }
            }
        }
    }

    /// A kept pipeline (`thumb` with several times, storyboards, batches, the engine's warm previews) visiting the
    /// cells forward, then backward, with the fast paths on and off.
    func testKeptPipelineIsExactForwardAndBackward() throws {
        for clip in Self.clips {
            for plain in [false, true] {
                try withSwitches(plain) {
                    var source = try open(clip)
                    defer { source.stop() }
                    for cell in Self.cells + Self.cells.reversed() {
                        let what = "\(clip) at \(cell.ms) ms, kept\(plain ? " (plain path)" : "")"
                        do {
                            func ask() throws -> GrabbedFrame {
                                try source.frame(
                                    at: .milliseconds(cell.ms), tolerance: .zero, deadline: Deadline(after: 20_000),
                                    isCancelled: { false })
                            }
                            let frame: GrabbedFrame
                            do {
                                frame = try ask()
                            } catch is OpenedFrameSource.CannotGoBack {
                                // A source that cannot seek (a short TS) read past the time: as the engine does,
                                // a new pipeline reads it from the start.
                                source.stop()
                                source = try open(clip)
                                frame = try ask()
                            }
                            XCTAssertEqual(reading(frame), expected(cell.frame), what)
                        } catch {
                            XCTFail("\(what): \(error)")
                            return
                        }
                    }
                }
            }
        }
    }

    private func open(_ clip: String) throws -> OpenedFrameSource {
        try OpenedFrameSource(
            try request(clip, ms: 0), watching: PictureFormatWatch(), deadline: Deadline(after: 60_000), keeps: true,
            isCancelled: { false })
    }

    /// The oracle itself: every frame of the lossless source reads as its own number, and a grey picture as none.
    func testBarcodeReadsEveryFrameOfTheSource() throws {
        let source = try TestEnvironment.fixture("matrix-src.nut")
        for index in [0, 1, 2, 13, 39] {
            let image = try DecodedImage.frame(of: source, index: index, width: 320, height: 240)
            XCTAssertEqual(FrameBarcode.number(image), index)
        }
        XCTAssertNil(FrameBarcode.number(width: 320, height: 240, rgb: [UInt8](repeating: 128, count: 320 * 240 * 3)))
    }
}

extension FrameMatrixTests {
    /// ffmpeg's fragmented MP4 with B-frames writes each `tfra` time as the keyframe's presentation time, 80 ms after
    /// its fragment's `tfdt`: qtdemux's seeks would be 80 ms late, so they are not trusted. Without B-frames the two
    /// agree; a plain MP4 has no index to mislead.
    func testFragmentIndexTellsMisleadingSeeks() throws {
        XCTAssertTrue(FragmentIndex.inspect(.local(path: try TestEnvironment.fixture("matrix-frag.mp4"))).misleadsSeeks)
        XCTAssertFalse(
            FragmentIndex.inspect(.local(path: try TestEnvironment.fixture("matrix-frag-ip.mp4"))).misleadsSeeks)
        XCTAssertFalse(
            FragmentIndex.inspect(.local(path: try TestEnvironment.fixture("matrix-h264-bframes.mp4"))).misleadsSeeks)
        XCTAssertFalse(FragmentIndex.inspect(.local(path: "/nonexistent")).misleadsSeeks)
        // The end, in stream time: the last entry's time plus its fragment's samples (4 frames of 40 ms), not the
        // entry's time alone. With B-frames stream time starts 80 ms in (the first frame's composition delay): the
        // 0-based duration is 1.6 s either way (`FrameDefectsCLITests`).
        for (clip, end) in [("matrix-frag.mp4", 1_680_000_000), ("matrix-frag-ip.mp4", 1_600_000_000)] {
            XCTAssertEqual(
                FragmentIndex.inspect(.local(path: try TestEnvironment.fixture(clip))).end, UInt64(end), clip)
        }
        XCTAssertNil(FragmentIndex.inspect(.local(path: try TestEnvironment.fixture("matrix-h264-bframes.mp4"))).end)
        // A truncated index is no proof: trusted.
        XCTAssertFalse(
            FragmentIndex.inspect(size: 20) { _, count in [UInt8](repeating: 0xFF, count: count) }.misleadsSeeks)
    }
}
