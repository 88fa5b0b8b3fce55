import FilmtoneTestSupport
import XCTest

/// `ftgst thumb --time auto` (issue 13, item 6): a frame worth showing, picked from keyframes of the first third.
final class ThumbAutoCLITests: XCTestCase {
    private func line(_ result: ProcessResult, file: StaticString = #filePath, line: UInt = #line) throws
        -> [String: Any]
    {
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        XCTAssertEqual(result.stdout.filter { $0 == "\n" }.count, 1, "one JSON line", file: file, line: line)
        return try result.json(file: file, line: line)
    }

    /// `thumb CLIP --time auto` as a PNG named `a` in `dir`'s cache.
    private func autoPNG(_ clip: String, into dir: URL) throws -> ProcessResult {
        try Run.ftgst([
            "thumb", clip, "--time", "auto", "--format", "png", "--cache-dir", dir.path, "--cache-name", "a",
        ])
    }

    /// Luma standard deviation of a decoded picture (BT.709 weights), as `FrameInterest` measures it.
    private func deviation(_ image: DecodedImage) -> Double {
        let luma = stride(from: 0, to: image.rgb.count, by: 3).map {
            0.2126 * Double(image.rgb[$0]) + 0.7152 * Double(image.rgb[$0 + 1]) + 0.0722 * Double(image.rgb[$0 + 2])
        }
        let mean = luma.reduce(0, +) / Double(luma.count)
        return (luma.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(luma.count)).squareRoot()
    }

    /// `dull-start.mp4`'s keyframes at 0, 1 and 2 s are black, white and flat grey: the one at 3 s is shown, it is
    /// ffmpeg's frame 30, and the JSON says which time was picked (nothing was asked: `requestedMs` null).
    func testADullStartIsSkippedForTheFirstKeyframeWorthShowing() throws {
        let clip = try TestEnvironment.fixture("dull-start.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        let out = try line(try autoPNG(clip, into: dir))
        XCTAssertEqual(out["timeMs"] as? Int, 3000)
        XCTAssertTrue(out["requestedMs"] is NSNull, "\(out)")
        XCTAssertEqual(out["frame"] as? Int, 4, "four distinct keyframes looked at: 0, 1, 2, 3 s")
        XCTAssertEqual(out["cached"] as? Bool, false)
        let picture = try DecodedImage.read(dir.appendingPathComponent("a.png").path)
        XCTAssertGreaterThan(deviation(picture), 30, "the moving ramp, not a flat frame")
        let reference = try DecodedImage.frame(of: clip, index: 30, width: 160, height: 120)
        XCTAssertLessThan(picture.meanDifference(reference), 3)

        // The same request again is a hit with the picked time; an explicit time under that name is not.
        let again = try line(
            try Run.ftgst([
                "thumb", clip, "--time", "auto", "--format", "png", "--cache-dir", dir.path, "--cache-name", "a",
            ]))
        XCTAssertEqual(again["cached"] as? Bool, true)
        XCTAssertEqual(again["timeMs"] as? Int, 3000)
        let explicit = try line(
            try Run.ftgst([
                "thumb", clip, "--time-ms", "3000", "--format", "png", "--cache-dir", dir.path, "--cache-name", "a",
            ]))
        XCTAssertEqual(explicit["cached"] as? Bool, false, "auto's entry is keyed apart from any time")
    }

    /// One `--time auto` picture seeks to its first sample's keyframe before the first preroll where the file's
    /// demuxer allows (no second decode of that keyframe): the picture, the time and the frame count are those of
    /// the type-finding path's (`FTGST_NO_KNOWN_DEMUXER=1`, which prerolls on the first frame, then seeks).
    func testTheFirstSampleIsSoughtBeforeThePrerollWithTheSamePicture() throws {
        for fixture in [
            "dull-start.mp4", "clip.mp4", "clip.mkv", "bframes.mp4", "black-start.mp4", "longgop.mp4", "numbered.mp4",
            "hdr-hlg.mp4", "rotated.mp4", "matrix-frag.mp4",
        ] {
            let clip = try TestEnvironment.fixture(fixture)
            let dir = try TestEnvironment.temporaryDirectory(self)
            var outputs: [(json: [String: Any], bytes: Data)] = []
            for plain in [false, true] {
                let result = try Run.ftgst(
                    ["thumb", clip, "--time", "auto", "-o", dir.appendingPathComponent("\(plain).png").path],
                    environment: plain ? ["FTGST_NO_KNOWN_DEMUXER": "1"] : [:])
                let json = try line(result)
                outputs.append((json, try Data(contentsOf: dir.appendingPathComponent("\(plain).png"))))
            }
            XCTAssertEqual(outputs[0].json["timeMs"] as? Int, outputs[1].json["timeMs"] as? Int, fixture)
            XCTAssertEqual(outputs[0].json["frame"] as? Int, outputs[1].json["frame"] as? Int, fixture)
            XCTAssertTrue(outputs[0].bytes == outputs[1].bytes, "\(fixture): not the plain path's picture")
        }
    }

    /// A clip whose every frame is flat (`numbered.mp4`) still gets a picture: the busiest of its samples (the first
    /// third's, then the rest's), here its keyframe at 2 s. A normal clip shows its first keyframe; a photo shows
    /// itself.
    func testWithoutAFrameWorthShowingTheBusiestSampleIsShown() throws {
        let dir = try TestEnvironment.temporaryDirectory(self)
        for (fixture, size, time) in [
            ("numbered.mp4", (160, 120), 2000), ("clip.mp4", (320, 240), 0), ("photo.png", (200, 150), 0),
        ] {
            let out = try line(
                try Run.ftgst([
                    "thumb", try TestEnvironment.fixture(fixture), "--time", "auto", "--cache-dir", dir.path,
                ]))
            XCTAssertEqual(out["timeMs"] as? Int, time, fixture)
            XCTAssertEqual(out["width"] as? Int, size.0, fixture)
            XCTAssertEqual(out["height"] as? Int, size.1, fixture)
        }
    }

    /// `auto` stands alone: in a list it is INVALID_ARGUMENT before any work.
    func testAutoInAListIsAnInvalidArgument() throws {
        let dir = try TestEnvironment.temporaryDirectory(self)
        let result = try Run.ftgst([
            "thumb", try TestEnvironment.fixture("clip.mp4"), "--time", "auto,1s", "--cache-dir", dir.path,
        ])
        XCTAssertEqual(result.status, 64)
        XCTAssertTrue(result.stderr.hasPrefix("[INVALID_ARGUMENT] "), result.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [])
    }

    /// `black-start.mp4` is black for its first 4 s of 10: every sample of the first third is black, so the other two
    /// thirds are sampled and the keyframe at 4 s, the first not black, is shown, by `thumb --time auto` and by the
    /// desktop thumbnailer (both gave a black picture, issue 28).
    func testABlackStartLongerThanAThirdIsLookedPast() throws {
        let clip = try TestEnvironment.fixture("black-start.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        let out = try line(try autoPNG(clip, into: dir))
        XCTAssertEqual(out["timeMs"] as? Int, 4000)
        XCTAssertGreaterThan(deviation(try DecodedImage.read(dir.appendingPathComponent("a.png").path)), 30)
        let desktop = dir.appendingPathComponent("desktop.png").path
        let made = try Run.ftgst(["thumbnailer", "-i", clip, "-o", desktop, "-s", "128"])
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertGreaterThan(deviation(try DecodedImage.read(desktop)), 30, "not the black start")
    }
}
