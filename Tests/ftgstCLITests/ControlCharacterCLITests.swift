import FilmtoneTestSupport
import XCTest

/// One rule for control characters in every path a command writes to (issue 28): `thumb -o`, `--cache-dir`,
/// `--cache-name`, `thumbnailer -o` and a batch line's `output` refuse U+0000–U+001F and U+007F with
/// INVALID_ARGUMENT, naming the character, and write nothing, as `preview` and `storyboard` already did.
final class ControlCharacterCLITests: XCTestCase {
    private let characters: [(String, String)] = [
        ("\n", "U+000A"), ("\u{1B}", "U+001B"), ("\u{7F}", "U+007F"), ("\t", "U+0009"),
    ]

    private func assertRefused(_ result: ProcessResult, _ name: String, _ what: String) {
        assertFailure(result, code: "INVALID_ARGUMENT", status: 64)
        XCTAssertTrue(result.stderr.contains("control character (\(name))"), "\(what): \(result.stderr)")
    }

    func testEveryOutputPathRefusesControlCharacters() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        for (character, name) in characters {
            let bad = dir.appendingPathComponent("a\(character)b.jpg").path
            assertRefused(try Run.ftgst(["thumb", clip, "-o", bad]), name, "thumb -o")
            assertRefused(
                try Run.ftgst(["thumb", clip, "--cache-dir", dir.appendingPathComponent("c\(character)d").path]), name,
                "--cache-dir")
            assertRefused(
                try Run.ftgst(["thumb", clip, "--cache-dir", dir.path, "--cache-name", "n\(character)m.jpg"]), name,
                "--cache-name")
            assertRefused(
                try Run.ftgst(["thumbnailer", "-i", clip, "-o", bad, "-s", "128"]), name, "thumbnailer -o")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [], "nothing was written")
    }

    /// A batch line's `output` with a control character (a tab, or `\u0000` in the JSON, which became `%00`) is
    /// that job's INVALID_ARGUMENT; the other lines run.
    func testABatchLinesOutputRefusesControlCharacters() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        func line(_ output: String) throws -> String {
            let object: [String: Any] = ["kind": "thumbnail", "source": clip, "output": output, "timeMs": 0]
            return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }
        let good = dir.appendingPathComponent("good.jpg").path
        // Strings joined by hand: Foundation's URL would cut a path at its NUL.
        let lines = [try line(dir.path + "/a\tb.jpg"), try line(dir.path + "/a\u{0}b.jpg"), try line(good)]
        let jobs = dir.appendingPathComponent("jobs.jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: jobs, atomically: true, encoding: .utf8)
        let result = try Run.ftgst(["batch", jobs.path], timeout: 120)
        XCTAssertEqual(result.status, 65, result.stderr)
        let results = try result.stdout.split(separator: "\n").map {
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        XCTAssertEqual(results.count, 3)
        for (index, name) in [(0, "U+0009"), (1, "U+0000")] {
            let error = try XCTUnwrap(results[index]["error"] as? [String: Any], "\(results[index])")
            XCTAssertEqual(error["code"] as? String, "INVALID_ARGUMENT")
            XCTAssertTrue((error["message"] as? String ?? "").contains("control character (\(name))"), "\(error)")
        }
        XCTAssertNil(results[2]["error"], "\(results[2])")
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(), ["good.jpg", "jobs.jsonl"])
    }
}
