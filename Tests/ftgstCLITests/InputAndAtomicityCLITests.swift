import FilmtoneTestSupport
import XCTest

/// Files and input issue 28 found: several pictures of one `thumb` call are placed all or nothing, and `batch`
/// reads any readable stream, bounded.
final class InputAndAtomicityCLITests: XCTestCase {
    private var bin: String { TestEnvironment.binary.path }

    /// `-o 'x-%03d.jpg'` with `x-002.jpg` a folder: WRITE_FAILED before any picture is placed, so the existing
    /// `x-001.jpg` is left as it was (it was replaced before the second failed), and no temporary file is left.
    func testSeveralPicturesAreAllOrNothing() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        try Data("old".utf8).write(to: dir.appendingPathComponent("x-001.jpg"))
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("x-002.jpg"), withIntermediateDirectories: false)
        let result = try Run.ftgst([
            "thumb", clip, "--time-ms", "0,500", "-o", dir.appendingPathComponent("x-%03d.jpg").path,
        ])
        assertFailure(result, code: "WRITE_FAILED", status: 73)
        XCTAssertEqual(try String(contentsOf: dir.appendingPathComponent("x-001.jpg"), encoding: .utf8), "old")
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(), ["x-001.jpg", "x-002.jpg"])
    }

    /// `ftgst batch <(…)` (a pipe at /dev/fd/N) and a named FIFO are read like files; a folder is FILE_NOT_FOUND.
    func testBatchReadsAProcessSubstitutionAndAFIFO() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        let line = "{\"kind\":\"thumbnail\",\"source\":\"\(clip)\",\"output\":\"\(dir.path)/a.jpg\",\"timeMs\":0}"
        let jobs = dir.appendingPathComponent("jobs.jsonl")
        try Data((line + "\n").utf8).write(to: jobs)
        let substituted = try Run.process(
            URL(fileURLWithPath: "/bin/bash"), ["-c", "\"$0\" batch <(cat \"$1\")", bin, jobs.path], timeout: 60)
        XCTAssertEqual(substituted.status, 0, substituted.stderr)
        XCTAssertTrue(substituted.stdout.contains("\"status\":\"ok\""), substituted.stdout)
        let fifo = dir.appendingPathComponent("jobs.fifo").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let named = try Run.process(
            URL(fileURLWithPath: "/bin/bash"),
            ["-c", "cat \"$2\" > \"$1\" & \"$0\" batch \"$1\"", bin, fifo, jobs.path],
            timeout: 60)
        XCTAssertEqual(named.status, 0, named.stderr)
        XCTAssertTrue(named.stdout.contains("\"status\":\"ok\""), named.stdout)
        assertFailure(try Run.ftgst(["batch", dir.path]), code: "FILE_NOT_FOUND", status: 66)
    }

    /// A jobs stream with no line end (`cat /dev/zero | ftgst batch -`, here 40 MB of it) is refused once its
    /// line passes 16 MiB, as `serve` refuses a message: it grew without bound (3.9 GB in 13 s).
    func testBatchRefusesALineOverTheCap() throws {
        let result = try Run.process(
            URL(fileURLWithPath: "/bin/bash"), ["-c", "head -c 40000000 /dev/zero 2>/dev/null | \"$0\" batch -", bin],
            timeout: 60)
        assertFailure(result, code: "INVALID_ARGUMENT", status: 64)
        XCTAssertTrue(result.stderr.contains("jobs line 1 is over 16 MiB"), result.stderr)
    }

    /// One `--time-ms 1000` with `-o t-%03d.jpg` (or such a `--cache-name`) writes `t-001.jpg`, as one `--time 1s`
    /// does, not a file literally named `t-%03d.jpg`.
    func testOneTimeMsNumbersAnIndexedName() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        for (words, name) in [
            (["--time-ms", "1000", "-o", dir.appendingPathComponent("t-%03d.jpg").path], "t-001.jpg"),
            (["--time", "1s", "-o", dir.appendingPathComponent("u-%03d.jpg").path], "u-001.jpg"),
            (["--time-ms", "1000", "--cache-dir", dir.path, "--cache-name", "c-%d.jpg"], "c-1.jpg"),
        ] {
            let result = try Run.ftgst(["thumb", clip] + words)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path), name)
        }
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains("%") }, [],
            "no file named with its pattern")
    }

    /// Ctrl-C or SIGTERM while `thumb --count 1000` writes: its 1,000 `.part` files are removed and the signal ends
    /// it (the shell's 130 or 143), with no error line; they were all left behind.
    func testASignalRemovesTheFilesBeingWritten() throws {
        let clip = try TestEnvironment.fixture("long.mp4")
        for (signal, status) in [("INT", 130), ("TERM", 143)] {
            let dir = try TestEnvironment.temporaryDirectory(self)
            // Sent once the staged files exist (polled, 10 s at most); the shell reports how the process ended.
            let script = """
                "$0" thumb "$1" --count 1000 --tolerance-ms 0 -o "$2/x-%03d.jpg" >/dev/null 2>"$2.err" & P=$!
                for i in $(seq 200); do ls -A "$2" | grep -q part && break; sleep 0.05; done
                kill -\(signal) $P; wait $P; echo "status=$?"
                """
            let result = try Run.process(
                URL(fileURLWithPath: "/bin/bash"), ["-c", script, bin, clip, dir.path], timeout: 60)
            XCTAssertTrue(result.stdout.contains("status=\(status)"), "SIG\(signal): \(result.stdout) \(result.stderr)")
            let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".part") }
            XCTAssertEqual(left, [], "SIG\(signal)")
            XCTAssertEqual(try String(contentsOfFile: dir.path + ".err", encoding: .utf8), "", "no error line")
        }
    }

    /// A jobs stream of short lines past 256 MiB in all is refused once it passes the cap, not read to its end.
    func testBatchRefusesAJobsFileOverTheCap() throws {
        let result = try Run.process(
            URL(fileURLWithPath: "/bin/bash"),
            ["-c", "yes '{}' 2>/dev/null | head -c 300000000 2>/dev/null | \"$0\" batch -", bin],
            timeout: 120)
        assertFailure(result, code: "INVALID_ARGUMENT", status: 64)
        XCTAssertTrue(result.stderr.contains("the jobs file is over 256 MiB"), result.stderr)
    }

    /// A rerun into a folder clears the `.part` files a killed ftgst left (its process is gone), and keeps one
    /// whose process lives, and any other file.
    func testARerunClearsFilesAKilledProcessLeft() throws {
        let dir = try TestEnvironment.temporaryDirectory(self)
        let gone = try Run.process(URL(fileURLWithPath: "/bin/sh"), ["-c", "echo $$"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let names = [
            ".x-001.jpg.ftgst-\(gone)-12345.part", ".x-002.jpg.ftgst-\(getpid())-777.part", "keep.part", "keep.jpg",
        ]
        for name in names { try Data("junk".utf8).write(to: dir.appendingPathComponent(name)) }
        let result = try Run.ftgst([
            "thumb", try TestEnvironment.fixture("clip.mp4"), "-o", dir.appendingPathComponent("y.jpg").path,
        ])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(),
            [".x-002.jpg.ftgst-\(getpid())-777.part", "keep.jpg", "keep.part", "y.jpg"])
    }
}
