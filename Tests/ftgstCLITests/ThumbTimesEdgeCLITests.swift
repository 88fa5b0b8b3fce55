import FilmtoneTestSupport
import XCTest

/// `ftgst thumb` with several times (issue 13, item 2) at its edges: photos, a cache name without an index, the
/// man page, completions and `--help`, and a remote server that ignores `Range`.
final class ThumbTimesEdgeCLITests: XCTestCase {
    private func lines(_ result: ProcessResult, file: StaticString = #filePath, line: UInt = #line) throws
        -> [[String: Any]]
    {
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        return try result.stdout.split(separator: "\n").map {
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    // MARK: - Photos

    /// A photo has no timeline: every time gives the same picture from one decode (`frame` 1 on every line, no
    /// seek, `timeMs` 0), `requestedMs` is the time asked (a `%` or `--count` time resolves to 0), and it is the
    /// single call's picture: the same size, orientation and pixels (both from the photo path, `ScaledPhoto`,
    /// without starting GStreamer: `gst_init` would open `GST_DEBUG_FILE`), a 16-bit RGB PNG included.
    func testAPhotoGivesTheSamePictureForEveryTime() throws {
        let dir = try TestEnvironment.temporaryDirectory(self)
        let debugLog = dir.appendingPathComponent("gst.log").path
        for (fixture, size) in [
            ("photo.png", (200, 150)), ("photo.jpg", (512, 384)), ("photo-exif.jpg", (240, 320)),
            ("photo.webp", (320, 240)), ("deep16.png", (64, 48)),
        ] {
            let photo = try TestEnvironment.fixture(fixture)
            let stem = fixture.replacingOccurrences(of: ".", with: "-")
            let single = dir.appendingPathComponent("\(stem)-single.png").path
            let one = try Run.ftgst(["thumb", photo, "--time-ms", "5000", "-o", single])
            XCTAssertEqual(one.status, 0, one.stderr)
            let reference = try DecodedImage.read(single)
            XCTAssertEqual([reference.width, reference.height], [size.0, size.1], fixture)

            for (name, options, requested) in [
                ("ms", ["--time-ms", "5000,0,1000"], [5000, 0, 1000]),
                ("time", ["--time", "2.5s,50%"], [2500, 0]),
                ("count", ["--count", "3"], [0, 0, 0]),
            ] {
                let pattern = dir.appendingPathComponent("\(stem)-\(name)-%d.png").path
                let out = try lines(
                    try Run.ftgst(
                        ["thumb", photo] + options + ["-o", pattern],
                        environment: ["GST_DEBUG": "1", "GST_DEBUG_FILE": debugLog]))
                XCTAssertFalse(FileManager.default.fileExists(atPath: debugLog), "\(fixture) \(name) started GStreamer")
                XCTAssertEqual(out.map { $0["requestedMs"] as? Int }, requested, "\(fixture) \(name)")
                XCTAssertEqual(Set(out.map { $0["timeMs"] as? Int }), [0], "\(fixture) \(name)")
                XCTAssertEqual(Set(out.map { $0["frame"] as? Int }), [1], "\(fixture) \(name): one decode")
                XCTAssertEqual(Set(out.map { $0["seeks"] as? Int }), [0], "\(fixture) \(name)")
                XCTAssertEqual(Set(out.map { $0["sourceOpens"] as? Int }), [1], "\(fixture) \(name)")
                let first = try DecodedImage.read(dir.appendingPathComponent("\(stem)-\(name)-1.png").path)
                XCTAssertEqual([first.width, first.height], [size.0, size.1], "\(fixture) \(name)")
                XCTAssertEqual(first.rgb, reference.rgb, "\(fixture) \(name): the single call's pixels")
                for index in 2...requested.count {
                    let path = dir.appendingPathComponent("\(stem)-\(name)-\(index).png").path
                    XCTAssertEqual(try DecodedImage.read(path).rgb, first.rgb, "\(fixture) \(name) picture \(index)")
                }
            }
        }
    }

    // MARK: - Names

    /// Several times need an index in `--cache-name` (and `-o`): refused as `INVALID_ARGUMENT` (status 64) before
    /// any work, the cache folder neither created nor written to.
    func testACacheNameWithoutAnIndexIsRefusedBeforeAnyWork() throws {
        let clip = try TestEnvironment.fixture("numbered.mp4")
        let root = try TestEnvironment.temporaryDirectory(self)
        let existing = root.appendingPathComponent("existing")
        try FileManager.default.createDirectory(at: existing, withIntermediateDirectories: false)
        let absent = root.appendingPathComponent("absent")
        for (times, name) in [
            (["--time-ms", "500,1500"], "plain"), (["--time", "1s,2s"], "plain.jpg"), (["--count", "2"], "k-%s"),
            (["--time-ms", "500,1500"], "two-%d-%d"), (["--count", "3"], "wide-%05000d"),
        ] {
            for dir in [existing, absent] {
                let result = try Run.ftgst(
                    ["thumb", clip] + times + ["--cache-dir", dir.path, "--cache-name", name], timeout: 30)
                assertFailure(result, code: "INVALID_ARGUMENT", status: 64)
                XCTAssertTrue(result.stderr.contains("index pattern"), result.stderr)
            }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: existing.path), [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: absent.path), "the cache folder must not be created")
        // The same names with one time are plain names, and an index makes several work in the same folder.
        let one = try lines(
            try Run.ftgst(["thumb", clip, "--time-ms", "500", "--cache-dir", existing.path, "--cache-name", "plain"]))
        XCTAssertEqual(one.count, 1)
        let several = try lines(
            try Run.ftgst([
                "thumb", clip, "--time-ms", "500,1500", "--cache-dir", existing.path, "--cache-name", "i-%d",
            ]))
        XCTAssertEqual(
            several.map { ($0["path"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent } },
            ["i-1.jpg", "i-2.jpg"])
    }

    // MARK: - Help, man page, completions

    /// `--time` and `--count` are in thumb's `--help`, its man page section and every shell's completion, and
    /// `--help` names the fields each picture's line adds.
    func testTimeAndCountAreInHelpManPageAndCompletions() throws {
        let help = try Run.ftgst(["thumb", "--help"])
        XCTAssertEqual(help.status, 0, help.stderr)
        let column = OptionColumn(help.stdout, indent: "  ")
        XCTAssertTrue(column.long.isSuperset(of: ["--time", "--time-ms", "--count"]), "\(column.long)")
        XCTAssertTrue(help.stdout.contains("--time T[,T…]"), help.stdout)
        XCTAssertTrue(help.stdout.contains("--count N"), help.stdout)
        let flat = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for field in ["\"requestedMs\"", "\"frame\"", "\"sourceOpens\"", "\"seeks\"", "%03d"] {
            XCTAssertTrue(flat.contains(field), "thumb --help names \(field): \(help.stdout)")
        }

        let manPage = try ManPageText.render(self)
        let section = try XCTUnwrap(manPage.section("ftgst thumb"))
        let manColumn = OptionColumn(section, indent: "       ")
        XCTAssertTrue(manColumn.long.isSuperset(of: ["--time", "--count"]), "\(manColumn.long)")
        let manFlat = section.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        XCTAssertTrue(manFlat.contains("requestedMs"), section)

        let bash = try ShellCompletion(self)
        XCTAssertEqual(try bash.complete(["thumb", "--co"]), ["--count"])
        XCTAssertEqual(try bash.complete(["thumb", "--tim"]), ["--time", "--time-ms", "--timeout-ms"])
        XCTAssertEqual(try bash.complete(["thumb", "--count", ""]), [], "a number: nothing to offer")
        // zsh: the `(thumb)` branch of the script's `case` lists them; fish completes them as fish itself does.
        let zsh = try Run.ftgst(["completion", "zsh"])
        XCTAssertEqual(zsh.status, 0, zsh.stderr)
        let branch = try XCTUnwrap(
            zsh.stdout.components(separatedBy: "    (thumb)\n").dropFirst().first?.components(separatedBy: ";;").first)
        XCTAssertTrue(branch.contains("'--time=["), branch)
        XCTAssertTrue(branch.contains("'--count=["), branch)
        let fish = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("ftgst.fish")
        let fishScript = try Run.ftgst(["completion", "fish"])
        XCTAssertEqual(fishScript.status, 0, fishScript.stderr)
        try fishScript.stdout.write(to: fish, atomically: true, encoding: .utf8)
        for (line, expected) in [
            ("thumb --co", ["--count"]), ("thumb --time", ["--time", "--time-ms", "--timeout-ms"]),
        ] {
            let result = try Run.tool(
                "fish",
                ["-c", "source $argv[1]; complete -C $argv[2]", fish.path, "\(TestEnvironment.binary.path) \(line)"])
            XCTAssertEqual(result.status, 0, result.stderr)
            let offered = result.stdout.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }.sorted()
            XCTAssertEqual(offered, expected, "fish: \(line)")
        }
    }

    // MARK: - A server without Range

    /// A server that ignores `Range` (`python3 -m http.server`): times the first frame answers need no seek and are
    /// made; a time that needs a seek is a clean `REMOTE_FETCH_FAILED` (status 69, "does not support seeking")
    /// promptly, with no file left, where one time alone reads forward to the exact frame. Every wait has a deadline.
    func testAServerWithoutRangeMakesFirstFramePicturesOrFailsCleanly() throws {
        let (server, _) = try HTTPTestServer.serving("clip-faststart.mp4", as: "clip.mp4", in: self)
        defer { server.stop() }
        let work = try TestEnvironment.temporaryDirectory(self)
        let source = server.url("/norange/clip.mp4")

        let near = work.appendingPathComponent("near")
        let made = try lines(
            try Run.ftgst(
                [
                    "thumb", source, "--time-ms", "20,0", "--tolerance-ms", "100", "--timeout-ms", "10000",
                    "--cache-dir", near.path,
                ], timeout: 30))
        XCTAssertEqual(made.map { $0["requestedMs"] as? Int }, [20, 0])
        XCTAssertEqual(made.map { $0["timeMs"] as? Int }, [0, 0])
        XCTAssertEqual(made.map { $0["seeks"] as? Int }, [0, 0])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: near.path).count, 2)

        for (extra, label) in [
            (["--time-ms", "2000,500,1500", "--tolerance-ms", "0"], "exact"),
            (["--time-ms", "0,2500"], "tolerance"), (["--count", "3"], "count"),
        ] {
            let cache = work.appendingPathComponent("cache-\(label)")
            let start = Date()
            let result = try Run.ftgst(
                ["thumb", source] + extra + ["--timeout-ms", "10000", "--cache-dir", cache.path], timeout: 30)
            let seconds = Date().timeIntervalSince(start)
            assertFailure(result, code: "REMOTE_FETCH_FAILED", status: 69)
            XCTAssertTrue(result.stderr.contains("does not support seeking"), "\(label): \(result.stderr)")
            XCTAssertLessThan(seconds, 10, "\(label): failed as soon as the server answered, not at the deadline")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: cache.path)) ?? []
            XCTAssertEqual(left, [], "\(label): no picture, no staged file")
        }

        // One of those times alone is read forward to the exact frame, as before.
        let alone = work.appendingPathComponent("alone")
        let single = try lines(
            try Run.ftgst(
                [
                    "thumb", source, "--time-ms", "1500", "--tolerance-ms", "0", "--timeout-ms", "10000",
                    "--cache-dir", alone.path,
                ], timeout: 30))
        XCTAssertEqual(single.first?["timeMs"] as? Int, 1500)
    }
}
