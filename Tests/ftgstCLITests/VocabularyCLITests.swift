import FilmtoneTestSupport
import XCTest

/// One vocabulary across commands (issue 28, item 5): `--max-width N` and `--tolerance-ms N` / `--tolerance SECONDS`
/// mean the same in `thumb`, `preview` and `storyboard`; the older spellings (`storyboard --width`, `--tolerance
/// SECONDS`) still work and give the same files.
final class VocabularyCLITests: XCTestCase {
    private func json(_ result: ProcessResult, _ what: String) throws -> [String: Any] {
        XCTAssertEqual(result.status, 0, "\(what): \(result.stderr)")
        let line = try XCTUnwrap(result.stdout.split(separator: "\n").first, what)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], what)
    }

    func testStoryboardTakesTheSharedSpellingsAndItsOldOnes() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        var sheets: [Data?] = []
        for (name, options) in [
            ("new", ["--max-width", "100", "--tolerance-ms", "500"]),
            ("old", ["--width", "100", "--tolerance", "0.5"]),
            ("mixed", ["--width=100", "--tolerance", "500ms"]),
        ] {
            let folder = dir.appendingPathComponent(name).path
            if name == "mixed" {
                // Seconds only: "500ms" is not a number of seconds.
                assertFailure(
                    try Run.ftgst(["storyboard", clip, "-o", folder, "--every", "1"] + options),
                    code: "INVALID_ARGUMENT", status: 64)
                continue
            }
            let board = try json(
                try Run.ftgst(["storyboard", clip, "-o", folder, "--every", "1"] + options), name)
            XCTAssertEqual(board["tileWidth"] as? Int, 100, name)
            XCTAssertEqual(board["toleranceMs"] as? Int, 500, name)
            sheets.append(FileManager.default.contents(atPath: folder + "/sheet-001.jpg"))
        }
        XCTAssertEqual(sheets[0], sheets[1], "the same sheet either way")
        assertFailure(
            try Run.ftgst([
                "storyboard", clip, "-o", dir.appendingPathComponent("both").path, "--tolerance", "1",
                "--tolerance-ms", "5",
            ]), code: "INVALID_ARGUMENT", status: 64)
    }

    func testThumbAndPreviewTakeToleranceInSeconds() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        for command in ["thumb", "preview"] {
            var times: [Int?] = []
            for (name, tolerance) in [("ms", ["--tolerance-ms", "600"]), ("s", ["--tolerance", "0.6"])] {
                let out = dir.appendingPathComponent("\(command)-\(name).png").path
                let result = try json(
                    try Run.ftgst([command, clip, "--time-ms", "1500", "-o", out] + tolerance), "\(command) \(name)")
                times.append(result["timeMs"] as? Int)
            }
            XCTAssertEqual(times[0], times[1], command)
            XCTAssertEqual(times[0], 1000, "\(command): the keyframe at 1 s is within 0.6 s")
            assertFailure(
                try Run.ftgst([
                    command, clip, "-o", dir.appendingPathComponent("x.png").path, "--tolerance", "1",
                    "--tolerance-ms", "5",
                ]), code: "INVALID_ARGUMENT", status: 64)
            assertFailure(
                try Run.ftgst([command, clip, "-o", dir.appendingPathComponent("y.png").path, "--tolerance", "-1"]),
                code: "INVALID_ARGUMENT", status: 64)
        }
    }
}
