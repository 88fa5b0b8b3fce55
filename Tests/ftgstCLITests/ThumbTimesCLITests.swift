import FilmtoneTestSupport
import XCTest

/// `ftgst thumb` with several times (issue 13, item 2), on `numbered.mp4`, whose frame n is a flat grey that encodes
/// n: each picture's number is read back from its pixels.
final class ThumbTimesCLITests: XCTestCase {
    private let numbered = Result { try NumberedClip() }

    /// The frame number a picture of `numbered.mp4` shows (`NumberedClip`).
    private func frameNumber(_ path: String, near expected: Int) throws -> Int {
        try numbered.get().frameNumber(path, near: expected)
    }

    private func lines(_ result: ProcessResult) throws -> [[String: Any]] {
        XCTAssertEqual(result.status, 0, result.stderr)
        return try result.stdout.split(separator: "\n").map {
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// Unsorted times come out in input order, each the exact frame and the same pixels as a single-time call;
    /// one source open for all.
    func testSeveralExactTimesInInputOrderMatchSingleCalls() throws {
        let clip = try TestEnvironment.fixture("numbered.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        let times = [2000, 500, 1000, 1010]
        let out = try lines(
            try Run.ftgst([
                "thumb", clip, "--tolerance-ms", "0", "--time-ms", times.map(String.init).joined(separator: ","), "-o",
                dir.appendingPathComponent("t-%02d.png").path,
            ]))
        XCTAssertEqual(out.count, 4)
        XCTAssertEqual(out.map { $0["requestedMs"] as? Int }, times)
        XCTAssertEqual(out.map { $0["timeMs"] as? Int }, [2000, 500, 1000, 1000])
        XCTAssertEqual(Set(out.map { $0["sourceOpens"] as? Int }), [1])
        for (index, time) in times.enumerated() {
            let path = dir.appendingPathComponent(String(format: "t-%02d.png", index + 1)).path
            XCTAssertEqual(try frameNumber(path, near: time * 30 / 1000), time * 30 / 1000, "picture \(index + 1)")
            let single = dir.appendingPathComponent("single-\(index).png").path
            let one = try Run.ftgst(["thumb", clip, "--tolerance-ms", "0", "--time-ms", String(time), "-o", single])
            XCTAssertEqual(one.status, 0, one.stderr)
            XCTAssertEqual(try DecodedImage.read(path).rgb, try DecodedImage.read(single).rgb, "picture \(index + 1)")
        }
    }

    /// `--time` syntaxes and `--count`'s middles ((i+0.5)/N of the 3 s clip).
    func testTimeSyntaxesAndCount() throws {
        let clip = try TestEnvironment.fixture("numbered.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        let out = try lines(
            try Run.ftgst([
                "thumb", clip, "--tolerance-ms", "0", "--time", "1.5s,0:02.5,0:00:01,50%", "-o",
                dir.appendingPathComponent("a-%d.png").path,
            ]))
        XCTAssertEqual(out.map { $0["requestedMs"] as? Int }, [1500, 2500, 1000, 1500])
        XCTAssertEqual(try frameNumber(dir.appendingPathComponent("a-2.png").path, near: 75), 75)
        let counted = try lines(
            try Run.ftgst([
                "thumb", clip, "--tolerance-ms", "0", "--count", "3", "-o", dir.appendingPathComponent("c-%d.png").path,
            ]))
        XCTAssertEqual(counted.map { $0["requestedMs"] as? Int }, [500, 1500, 2500])
    }

    /// With a tolerance, a decoded frame answers later times it is acceptable for: the JSON names it.
    func testToleranceReusesTheDecodedFrame() throws {
        let clip = try TestEnvironment.fixture("numbered.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        let out = try lines(
            try Run.ftgst([
                "thumb", clip, "--tolerance-ms", "100", "--time-ms", "1000,1050", "-o",
                dir.appendingPathComponent("r-%d.png").path,
            ]))
        XCTAssertEqual(out.map { $0["frame"] as? Int }, [1, 1])
        XCTAssertEqual(out.map { $0["timeMs"] as? Int }, [1000, 1000])
    }

    func testBadTimesAndNamesAreInvalidArgumentBeforeAnyWork() throws {
        let clip = try TestEnvironment.fixture("numbered.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        for options in [
            ["--time", "1s,1:xx", "-o", dir.appendingPathComponent("x-%d.png").path],
            ["--time-ms", "1000,-5", "-o", dir.appendingPathComponent("x-%d.png").path],
            ["--time-ms", "1000,2000", "-o", dir.appendingPathComponent("x.png").path],
            ["--count", "2", "--time-ms", "1000"],
        ] {
            assertFailure(try Run.ftgst(["thumb", clip] + options), code: "INVALID_ARGUMENT", status: 64)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [])
    }

    /// A time past the end fails the whole call, as the single-time path does, and leaves no file of any picture.
    func testPastTheEndLeavesNoFile() throws {
        let clip = try TestEnvironment.fixture("numbered.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        let result = try Run.ftgst([
            "thumb", clip, "--time-ms", "1000,9000", "--tolerance-ms", "0", "-o",
            dir.appendingPathComponent("p-%d.png").path,
        ])
        assertFailure(result, code: "DECODE_FAILED", status: 68)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [])
    }

    /// Each picture is its own cache entry: a second call with one time more decodes only that one.
    func testCachePartialHitsDecodeOnlyTheMisses() throws {
        let clip = try TestEnvironment.fixture("numbered.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        func run(_ times: String) throws -> [[String: Any]] {
            try lines(
                try Run.ftgst([
                    "thumb", clip, "--tolerance-ms", "0", "--time-ms", times, "--cache-dir", dir.path, "--cache-name",
                    "k-%d",
                ]))
        }
        XCTAssertEqual(try run("500,1500").map { $0["cached"] as? Bool }, [false, false])
        let second = try run("500,1500,2500")
        XCTAssertEqual(second.map { $0["cached"] as? Bool }, [true, true, false])
        XCTAssertEqual(second.map { $0["frame"] as? Int }, [nil, nil, 1])
        let hits = try run("500,1500,2500")
        XCTAssertEqual(hits.map { $0["cached"] as? Bool }, [true, true, true])
        XCTAssertEqual(hits.first?["sourceOpens"] as? Int, 0)
    }

    /// Once two consecutive keyframes have entered the decoder (numbered.mp4: every 1 s), a time further ahead than
    /// that interval is sought (from the keyframe before it) instead of stepped to; the frames stay exact.
    func testATimeMoreThanAGOPAheadIsSoughtNotSteppedTo() throws {
        let clip = try TestEnvironment.fixture("numbered.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        let times = [100, 1200, 2900]
        let out = try lines(
            try Run.ftgst([
                "thumb", clip, "--tolerance-ms", "0", "--time-ms", times.map(String.init).joined(separator: ","), "-o",
                dir.appendingPathComponent("g-%d.png").path,
            ]))
        // 100: a seek; 1200: a step (no interval known yet; it passes the keyframe at 1 s); 2900: 1.7 s > 1 s, a seek.
        XCTAssertEqual(Set(out.map { $0["seeks"] as? Int }), [2], "\(out)")
        XCTAssertEqual(out.map { $0["frame"] as? Int }, [1, 2, 3])
        for (index, time) in times.enumerated() {
            let path = dir.appendingPathComponent("g-\(index + 1).png").path
            XCTAssertEqual(try frameNumber(path, near: time * 30 / 1000), time * 30 / 1000, "picture \(index + 1)")
        }
    }
}
