import FilmtoneTestSupport
import XCTest

/// The frame-exactness matrix through the built binary (issue 28): the clips the in-process matrix
/// (`FrameMatrixTests`) found defects in, through `thumb` with several times, `preview` and `storyboard`. Each
/// picture's barcode (`FrameBarcode`) and time must be the frame on screen at the time asked.
final class FrameMatrixCLITests: XCTestCase {
    static let clips = [
        "matrix-hevc10.mov", "matrix-hevc8.mp4", "matrix-h264.avi", "matrix-mpeg4.avi", "matrix-h264.ts",
        "matrix-av1.mkv", "matrix-mjpeg.mov", "matrix-h264-to-high10.ts", "matrix-h264-to-444.ts",
    ]

    private func lines(_ result: ProcessResult, _ what: String) throws -> [[String: Any]] {
        XCTAssertEqual(result.status, 0, "\(what): \(result.stderr)")
        return try result.stdout.split(separator: "\n").map {
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    private func number(_ path: String) throws -> Int? { FrameBarcode.number(try DecodedImage.read(path)) }

    func testThumbPreviewAndStoryboardAreExact() throws {
        let dir = try TestEnvironment.temporaryDirectory(self)
        for clip in Self.clips {
            let source = try TestEnvironment.fixture(clip)
            let base = dir.appendingPathComponent(clip).path
            // Several times, unsorted: one kept pipeline, visited ascending.
            let thumbs = try lines(
                try Run.ftgst([
                    "thumb", source, "--time-ms", "940,20,540,1580", "--tolerance-ms", "0", "-o", base + "-t%d.png",
                ]), "\(clip) thumb")
            XCTAssertEqual(thumbs.map { $0["timeMs"] as? Int }, [920, 0, 520, 1560], clip)
            for (index, frame) in [23, 0, 13, 39].enumerated() {
                XCTAssertEqual(try number(base + "-t\(index + 1).png"), frame, "\(clip) thumb \(index + 1)")
            }
            // A one-shot preview.
            let preview = try lines(
                try Run.ftgst(["preview", source, "--time-ms", "740", "-o", base + "-p.png"]), "\(clip) preview")
            XCTAssertEqual(preview.first?["timeMs"] as? Int, 720, clip)
            XCTAssertEqual(try number(base + "-p.png"), 18, "\(clip) preview")
            // A storyboard: a tile every 200 ms, frames 0, 5, … 35, on one 4×2 sheet of 160×120 tiles. The short TS
            // does not say its duration, which a storyboard needs: that is said.
            let storyboard = try Run.ftgst([
                "storyboard", source, "-o", base + "-sb", "--every", "0.2", "--width", "160", "--columns", "4",
                "--rows", "2",
            ])
            if clip.hasSuffix(".ts") {
                assertFailure(storyboard, code: "DECODE_FAILED", status: 68)
                continue
            }
            let board = try lines(storyboard, "\(clip) storyboard")
            XCTAssertEqual(board.first?["frameTimesMs"] as? [Int], Array(stride(from: 0, to: 1600, by: 200)), clip)
            let sheet = try DecodedImage.read(base + "-sb/sheet-001.jpg")
            for tile in 0..<8 {
                var rgb: [UInt8] = []
                for row in (tile / 4 * 120)..<(tile / 4 * 120 + 120) {
                    let start = (row * sheet.width + tile % 4 * 160) * 3
                    rgb += sheet.rgb[start..<(start + 160 * 3)]
                }
                XCTAssertEqual(
                    FrameBarcode.number(width: 160, height: 120, rgb: rgb), tile * 5, "\(clip) storyboard tile \(tile)")
            }
        }
    }

    /// fth264dec's ways back through the binary: a libavcodec that cannot be opened (`FTGST_LIBAVCODEC` names one
    /// that does not exist) leaves every H.264 picture to avdec_h264, exact; and a stream whose caps change to High
    /// 10 mid-stream is read across the change by `thumb` with several times (above, in the clips).
    func testLibavcodecThatCannotBeOpenedStillGivesExactFrames() throws {
        let dir = try TestEnvironment.temporaryDirectory(self)
        let result = try Run.ftgst(
            [
                "thumb", try TestEnvironment.fixture("matrix-h264-bframes.mp4"), "--time-ms", "540,940",
                "--tolerance-ms",
                "0", "-o", dir.appendingPathComponent("t%d.png").path,
            ], environment: ["FTGST_LIBAVCODEC": "/nonexistent/libavcodec.so.59"])
        XCTAssertEqual(try lines(result, "thumb").map { $0["timeMs"] as? Int }, [520, 920])
        XCTAssertEqual(try number(dir.appendingPathComponent("t1.png").path), 13)
        XCTAssertEqual(try number(dir.appendingPathComponent("t2.png").path), 23)
    }
}
