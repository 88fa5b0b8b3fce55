import FilmtoneTestSupport
import Foundation
import Synchronization
import XCTest

/// `ftgst batch JOBS.jsonl` (issue 13, item 4) through the built binary: results in line order (or not), failures
/// that do not stop the others, exact frames of `numbered.mp4` (whose frames show their number), reruns that skip
/// valid outputs, shards run side by side, and the exit statuses that tell bad media from a transient failure.
final class BatchCLITests: XCTestCase {
    private var numbered: NumberedClip!
    private var dir: URL!

    override func setUpWithError() throws {
        numbered = try NumberedClip()
        dir = try TestEnvironment.temporaryDirectory(self)
    }

    // MARK: - Helpers

    /// One job line, written with JSONSerialization (never by hand).
    private func line(_ fields: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]), as: UTF8.self)
    }

    /// A thumbnail job of `numbered.mp4` at `ms`, exact, into `name` in the test's folder.
    private func thumbnail(_ id: String, ms: Int, _ name: String, source: String? = nil) throws -> String {
        try line([
            "id": id, "kind": "thumbnail", "source": source ?? numbered.path, "timeMs": ms, "toleranceMs": 0,
            "output": path(name),
        ])
    }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    private func jobsFile(_ lines: [String], name: String = "jobs.jsonl") throws -> String {
        let file = path(name)
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: file))
        return file
    }

    /// The result lines, each a JSON object.
    private func results(_ run: ProcessResult, file: StaticString = #filePath, line: UInt = #line) throws
        -> [[String: Any]]
    {
        try run.stdout.split(separator: "\n").map {
            try XCTUnwrap(
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], "not an object: \($0)",
                file: file, line: line)
        }
    }

    private func errorCode(_ result: [String: Any]) -> String? {
        (result["error"] as? [String: Any])?["code"] as? String
    }

    private func batch(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        try Run.ftgst(["batch"] + arguments, environment: environment, timeout: 120)
    }

    // MARK: - Order, failures, exact frames

    /// Line order; the four thumbnails of one clip come from one decode and are its exact frames; a truncated
    /// clip, a line that is not JSON, an unknown key and an unknown kind are each their own error; the storyboard
    /// and preview lines still run, into folders made for them. Exit 65: failures, none transient.
    func testResultsInLineOrderWithExactFramesAndFailuresThatDoNotStopTheRest() throws {
        let times = [2000, 500, 1000, 1500]
        var lines = try times.enumerated().map { try thumbnail("t\($0.offset)", ms: $0.element, "t\($0.offset).png") }
        lines.insert(
            try thumbnail("bad", ms: 500, "bad.png", source: try TestEnvironment.fixture("truncated.mp4")), at: 2)
        lines.insert("{not json", at: 3)
        lines.append("")  // blank: no job, but its number counts
        lines.append(
            try line(["id": "typo", "kind": "thumbnail", "source": numbered.path, "output": path("x.png"), "timMs": 5]))
        lines.append(try line(["id": "odd", "kind": "poster", "source": numbered.path]))
        lines.append(
            try line([
                "id": "sb", "kind": "storyboard", "source": numbered.path, "output": path("deep/er/sb"), "every": 1,
            ]))
        lines.append(
            try line([
                "id": "pv", "kind": "preview", "source": numbered.path, "output": path("p/pv.png"), "timeMs": 2000,
            ]))
        let run = try batch([try jobsFile(lines)])
        XCTAssertEqual(run.status, 65, run.stderr)
        XCTAssertTrue(run.stderr.contains("4 failed (4 permanently, 0 transiently)"), run.stderr)
        let out = try results(run)
        XCTAssertEqual(out.map { $0["line"] as? Int }, [1, 2, 3, 4, 5, 6, 8, 9, 10, 11])
        XCTAssertEqual(
            out.map { $0["id"] as? String }, ["t0", "t1", "bad", nil, "t2", "t3", "typo", "odd", "sb", "pv"])
        XCTAssertEqual(
            out.map { $0["status"] as? String },
            ["ok", "ok", "error", "error", "ok", "ok", "error", "error", "ok", "ok"])
        XCTAssertEqual(errorCode(out[2]), "DECODE_FAILED")
        for index in [3, 6, 7] { XCTAssertEqual(errorCode(out[index]), "INVALID_ARGUMENT", "\(out[index])") }
        XCTAssertTrue(((out[6]["error"] as? [String: Any])?["message"] as? String)?.contains("timMs") == true)
        let thumbs = [out[0], out[1], out[4], out[5]]
        for (index, ms) in times.enumerated() {
            let result = try XCTUnwrap(thumbs[index]["result"] as? [String: Any])
            XCTAssertEqual(result["decodeGroup"] as? Int, 4, "one decode for the four times of one clip")
            XCTAssertEqual(result["sourceOpens"] as? Int, 1)
            XCTAssertEqual(thumbs[index]["outputs"] as? [String], [path("t\(index).png")])
            XCTAssertEqual(thumbs[index]["skipped"] as? Bool, false)
            XCTAssertEqual(try numbered.frameNumber(path("t\(index).png"), near: ms * 30 / 1000), ms * 30 / 1000)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("bad.png")))
        // Their folders are made with their parents, as a thumbnail's are.
        XCTAssertTrue(FileManager.default.fileExists(atPath: path("deep/er/sb/storyboard.vtt")))
        XCTAssertEqual(try numbered.frameNumber(path("p/pv.png"), near: 60), 60)
    }

    /// `--unordered -j 2`: every job once, whatever the order.
    func testUnorderedGivesEveryJobExactlyOnce() throws {
        let lines = try (0..<8).map { try thumbnail("u\($0)", ms: $0 * 300, "u\($0).png") } + ["[]"]
        let run = try batch([try jobsFile(lines), "--unordered", "--jobs", "2"])
        XCTAssertEqual(run.status, 65, run.stderr)
        let out = try results(run)
        XCTAssertEqual(out.compactMap { $0["line"] as? Int }.sorted(), Array(1...9))
        XCTAssertEqual(out.filter { $0["status"] as? String == "ok" }.count, 8)
        for index in 0..<8 {
            XCTAssertEqual(try numbered.frameNumber(path("u\(index).png"), near: index * 9), index * 9)
        }
        // Two workers at once: the same pixels as `thumb`'s own decode.
        let single = try Run.ftgst([
            "thumb", numbered.path, "--tolerance-ms", "0", "--time-ms", "900", "-o", path("one.png"),
        ])
        XCTAssertEqual(single.status, 0, single.stderr)
        XCTAssertEqual(try DecodedImage.read(path("u3.png")).rgb, try DecodedImage.read(path("one.png")).rgb)
    }

    /// A time past the end fails its group's one decode: each job is then run on its own, so only that job fails.
    func testAFailingTimeInAGroupFailsOnlyItsJob() throws {
        let jobs = try jobsFile([
            try thumbnail("a", ms: 500, "a.png"), try thumbnail("late", ms: 9000, "late.png"),
            try thumbnail("c", ms: 1000, "c.png"),
        ])
        let run = try batch([jobs])
        XCTAssertEqual(run.status, 65, run.stderr)
        let out = try results(run)
        XCTAssertEqual(out.map { $0["status"] as? String }, ["ok", "error", "ok"])
        XCTAssertEqual(errorCode(out[1]), "DECODE_FAILED")
        XCTAssertEqual(try numbered.frameNumber(path("a.png"), near: 15), 15)
        XCTAssertEqual(try numbered.frameNumber(path("c.png"), near: 30), 30)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("late.png")))
    }

    /// `-` reads the jobs from stdin (a pipe from another program).
    func testJobsFromStandardInput() throws {
        let jobs = try jobsFile([try thumbnail("in", ms: 1000, "in.png")])
        // The paths are the shell's arguments ($0, $1), never part of its command text.
        let run = try Run.process(
            URL(fileURLWithPath: "/bin/sh"), ["-c", #"exec "$0" batch - < "$1""#, TestEnvironment.binary.path, jobs])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try results(run).map { $0["id"] as? String }, ["in"])
        XCTAssertEqual(try numbered.frameNumber(path("in.png"), near: 30), 30)
    }

    // MARK: - Reruns

    /// A rerun skips every valid output (byte for byte the same file), redoes a corrupted one, a deleted one and
    /// one whose line now asks for another time, and exits 0.
    func testRerunSkipsValidOutputsAndRedoesInvalidOnes() throws {
        var lines = try (0..<4).map { try thumbnail("r\($0)", ms: 500 + $0 * 500, "r\($0).jpg") }
        let first = try batch([try jobsFile(lines)])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(try results(first).map { $0["skipped"] as? Bool }, [false, false, false, false])
        let before = try (0..<4).map { try Data(contentsOf: URL(fileURLWithPath: path("r\($0).jpg"))) }

        let again = try batch([try jobsFile(lines)])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(try results(again).map { $0["skipped"] as? Bool }, [true, true, true, true])
        XCTAssertTrue(again.stderr.contains("4 ok (4 skipped)"), again.stderr)
        for index in 0..<4 {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("r\(index).jpg"))), before[index])
        }

        try Data(before[1].prefix(200)).write(to: URL(fileURLWithPath: path("r1.jpg")))  // cut short
        try FileManager.default.removeItem(atPath: path("r2.jpg"))
        lines[3] = try thumbnail("r3", ms: 2500, "r3.jpg")  // same file, another time
        let third = try batch([try jobsFile(lines)])
        XCTAssertEqual(third.status, 0, third.stderr)
        XCTAssertEqual(try results(third).map { $0["skipped"] as? Bool }, [true, false, false, false])
        XCTAssertEqual(try numbered.frameNumber(path("r1.jpg"), near: 30), 30)
        XCTAssertEqual(try numbered.frameNumber(path("r2.jpg"), near: 45), 45)
        XCTAssertEqual(try numbered.frameNumber(path("r3.jpg"), near: 75), 75)
    }

    /// A storyboard's record (`storyboard.ftgst.json`) makes its rerun a skip, until a file it names changes or the
    /// line asks for something else.
    func testAStoryboardRerunIsSkippedUntilItsFilesOrItsLineChange() throws {
        func storyboard(every: Double) throws -> String {
            try jobsFile([
                try line([
                    "id": "sb", "kind": "storyboard", "source": numbered.path, "output": path("sb"), "every": every,
                ])
            ])
        }
        func run(_ jobs: String) throws -> [String: Any] {
            let run = try batch([jobs])
            XCTAssertEqual(run.status, 0, run.stderr)
            return try XCTUnwrap(try results(run).first)
        }
        let jobs = try storyboard(every: 1)
        XCTAssertEqual(try run(jobs)["skipped"] as? Bool, false)
        let sheet = path("sb/sheet-001.jpg")
        let made = try Data(contentsOf: URL(fileURLWithPath: sheet))
        let again = try run(jobs)
        XCTAssertEqual(again["skipped"] as? Bool, true)
        XCTAssertEqual(again["outputs"] as? [String], [sheet, path("sb/storyboard.vtt")])
        XCTAssertEqual((again["result"] as? [String: Any])?["tiles"] as? Int, 3, "the recorded result")

        var changed = made
        changed[changed.count / 2] ^= 0xFF  // one byte of the sheet
        try changed.write(to: URL(fileURLWithPath: sheet))
        XCTAssertEqual(try run(jobs)["skipped"] as? Bool, false)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: sheet)), made, "made again, the same pixels")
        XCTAssertEqual(try run(jobs)["skipped"] as? Bool, true)

        let denser = try run(try storyboard(every: 0.5))
        XCTAssertEqual(denser["skipped"] as? Bool, false, "another request")
        XCTAssertEqual((denser["result"] as? [String: Any])?["tiles"] as? Int, 6)
    }

    /// A preview's stamp makes its rerun a skip (the same pixels as `preview` writes), until its LUT file changes.
    func testAPreviewRerunIsSkippedUntilItsLUTChanges() throws {
        let cube = path("look.cube")
        func writeCube(red: String) throws {
            let rows = ["0 0 0", "\(red) 0 0", "0 1 0", "\(red) 1 0", "0 0 1", "\(red) 0 1", "0 1 1", "\(red) 1 1"]
            try Data((["LUT_3D_SIZE 2"] + rows).joined(separator: "\n").appending("\n").utf8).write(
                to: URL(fileURLWithPath: cube))
        }
        try writeCube(red: "1")
        let jobs = try jobsFile([
            try line([
                "id": "pv", "kind": "preview", "source": numbered.path, "output": path("pv.png"), "timeMs": 1000,
                "creativeLut": cube,
            ])
        ])
        func skipped() throws -> Bool? {
            let run = try batch([jobs])
            XCTAssertEqual(run.status, 0, run.stderr)
            return try results(run).first?["skipped"] as? Bool
        }
        XCTAssertEqual(try skipped(), false)
        let plain = try Run.ftgst([
            "preview", numbered.path, "--time-ms", "1000", "--creative-lut", cube, "-o", path("plain.png"),
        ])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertEqual(try DecodedImage.read(path("pv.png")).rgb, try DecodedImage.read(path("plain.png")).rgb)
        XCTAssertEqual(try skipped(), true)
        let before = try DecodedImage.read(path("pv.png"))
        try writeCube(red: "0.5")  // another look in the same file
        XCTAssertEqual(try skipped(), false)
        XCTAssertNotEqual(try DecodedImage.read(path("pv.png")).rgb, before.rgb)
        XCTAssertEqual(try skipped(), true)
    }

    // MARK: - Shards

    /// Three `--shard i/3` processes at once on one jobs file: every job done exactly once (by the results and by
    /// the files: each output exists, shows its frame, and was made — not skipped — by exactly one process), each by
    /// the shard its line number names.
    func testThreeShardProcessesSideBySideDoEveryJobExactlyOnce() throws {
        let count = 14
        let jobs = try jobsFile(try (0..<count).map { try thumbnail("s\($0)", ms: $0 * 200, "s\($0).png") })
        // Plain values out of the threads (the three processes run at once, each waited for with a deadline).
        // A thread each (not a pool, which on 2 cores would run two at a time).
        let finished = Mutex<[Int: (status: Int32, stdout: String, stderr: String)]>([:])
        let done = DispatchSemaphore(value: 0)
        for shard in 0..<3 {
            Thread.detachNewThread {
                if let run = try? Run.ftgst(["batch", jobs, "--shard", "\(shard)/3"], timeout: 120) {
                    finished.withLock { $0[shard] = (run.status, run.stdout, run.stderr) }
                }
                done.signal()
            }
        }
        for _ in 0..<3 { XCTAssertEqual(done.wait(timeout: .now() + 180), .success, "a shard outlived 180 s") }
        let runs = finished.withLock { $0 }
        var seen: [Int: Int] = [:]
        for shard in 0..<3 {
            let value = try XCTUnwrap(runs[shard], "shard \(shard) did not run")
            let run = ProcessResult(status: value.status, stdout: value.stdout, stderr: value.stderr)
            XCTAssertEqual(run.status, 0, "shard \(shard): \(run.stderr)")
            for result in try results(run) {
                let line = try XCTUnwrap(result["line"] as? Int)
                XCTAssertEqual((line - 1) % 3, shard, "line \(line) run by shard \(shard)")
                XCTAssertEqual(result["skipped"] as? Bool, false)
                XCTAssertEqual(result["outputs"] as? [String], [path("s\(line - 1).png")])
                seen[line, default: 0] += 1
            }
        }
        XCTAssertEqual(seen, Dictionary(uniqueKeysWithValues: (1...count).map { ($0, 1) }))
        for index in 0..<count {
            XCTAssertEqual(try numbered.frameNumber(path("s\(index).png"), near: index * 6), index * 6)
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }
        XCTAssertEqual(leftovers, [], "no staged file left behind")
    }

    /// `--shards N` takes its index from `JOB_COMPLETION_INDEX`, as the pods of a Kubernetes Indexed Job get it:
    /// the four indexes together do each line once.
    func testShardsFromJobCompletionIndex() throws {
        let jobs = try jobsFile(try (0..<7).map { try thumbnail("k\($0)", ms: $0 * 100, "k\($0).png") })
        var lines: [Int] = []
        for index in 0..<4 {
            let run = try batch([jobs, "--shards", "4"], environment: ["JOB_COMPLETION_INDEX": String(index)])
            XCTAssertEqual(run.status, 0, run.stderr)
            let mine = try results(run).compactMap { $0["line"] as? Int }
            XCTAssertEqual(mine, Array(stride(from: index + 1, through: 7, by: 4)), "index \(index)")
            lines += mine
        }
        XCTAssertEqual(lines.sorted(), Array(1...7))
        for index in 0..<7 { XCTAssertTrue(FileManager.default.fileExists(atPath: path("k\(index).png"))) }
    }

    /// The shipped Indexed Job (docs/examples/batch-indexed-job.yaml) asks for as many shards as completions, and
    /// its failure policy names the exit statuses batch really uses.
    func testTheKubernetesExampleMatchesBatchsShardsAndStatuses() throws {
        let text = try String(
            contentsOf: TestEnvironment.packageRoot.appendingPathComponent("docs/examples/batch-indexed-job.yaml"),
            encoding: .utf8)
        let completions = try XCTUnwrap(
            text.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("completions:") })
        let count = try XCTUnwrap(completions.split(separator: ":").last?.trimmingCharacters(in: .whitespaces))
        XCTAssertTrue(text.contains("completionMode: Indexed"))
        XCTAssertTrue(text.contains("ftgst batch /data/jobs.jsonl --shards \(count)"), "--shards equals completions")
        XCTAssertTrue(
            text.contains("values: [65]") && text.contains("values: [75]") && text.contains("values: [64, 66]"))
        XCTAssertTrue(text.contains("restartPolicy: Never"), "podFailurePolicy needs it")
    }

    /// Bad usage of the batch itself: one `[CODE]` line, nothing on stdout, its exit status.
    func testBadShardsJobsAndFilesAreRefusedWithTheirCode() throws {
        let jobs = try jobsFile([try thumbnail("a", ms: 0, "a.png")])
        let cases: [([String], [String: String])] = [
            ([jobs, "--shard", "3/3"], [:]), ([jobs, "--shard", "1/0"], [:]), ([jobs, "--shard", "one/3"], [:]),
            ([jobs, "--shard", "1/3/4"], [:]), ([jobs, "--shard", "-1/3"], [:]), ([jobs, "--shards", "0"], [:]),
            ([jobs, "--shards", "3"], ["JOB_COMPLETION_INDEX": "3"]),
            ([jobs, "--shards", "3"], ["JOB_COMPLETION_INDEX": "x"]),
            ([jobs, "--shards", "3", "--shard", "0/3"], [:]), ([jobs, "--jobs", "0"], [:]), ([], [:]),
            ([jobs, jobs], [:]),
        ]
        for (arguments, environment) in cases {
            assertFailure(try batch(arguments, environment: environment), code: "INVALID_ARGUMENT", status: 64)
        }
        // No JOB_COMPLETION_INDEX at all (a clean environment, so that the test's own cannot leak in).
        let bare = try Run.process(
            TestEnvironment.binary, ["batch", jobs, "--shards", "2"], environment: ["PATH": "/usr/bin:/bin"],
            onlyEnvironment: true)
        assertFailure(bare, code: "INVALID_ARGUMENT", status: 64)
        XCTAssertTrue(bare.stderr.contains("JOB_COMPLETION_INDEX"), bare.stderr)
        assertFailure(try batch([path("none.jsonl")]), code: "FILE_NOT_FOUND", status: 66)
    }

    // MARK: - Job errors and exit statuses

    /// Each job error code in its result line, the others going on: a missing source, an output that is not a
    /// picture, a truncated clip, a line that is not an object, a second job naming the same output, and an output
    /// under a regular file (a write that fails: transient, so the run exits 75).
    func testEachJobErrorCodeIsReportedAndTheExitStatusSaysWhetherToRetry() throws {
        try Data("x".utf8).write(to: URL(fileURLWithPath: path("plain")))
        let permanent = [
            try thumbnail("missing", ms: 0, "m.png", source: path("nope.mp4")),
            try line(["id": "gif", "kind": "thumbnail", "source": numbered.path, "output": path("g.gif")]),
            try thumbnail("cut", ms: 0, "c.png", source: try TestEnvironment.fixture("truncated.mp4")),
            "42",
            try thumbnail("first", ms: 0, "same.png"),
            try thumbnail("second", ms: 100, "same.png"),
        ]
        let run = try batch([try jobsFile(permanent)])
        XCTAssertEqual(run.status, 65, run.stderr)
        let out = try results(run)
        XCTAssertEqual(
            out.map(errorCode),
            ["FILE_NOT_FOUND", "UNSUPPORTED_FORMAT", "DECODE_FAILED", "INVALID_ARGUMENT", nil, "INVALID_ARGUMENT"])
        XCTAssertEqual(
            out.map { ($0["error"] as? [String: Any])?["transient"] as? Bool },
            [
                false, false, false, false, nil, false,
            ])

        let unwritable = try thumbnail("under-a-file", ms: 0, "plain/t.png")
        let retry = try batch([try jobsFile(permanent + [unwritable], name: "retry.jsonl")])
        XCTAssertEqual(retry.status, 75, "a transient failure wins: retrying can cure it; \(retry.stderr)")
        let last = try XCTUnwrap(try results(retry).last)
        XCTAssertEqual(errorCode(last), "WRITE_FAILED")
        XCTAssertEqual((last["error"] as? [String: Any])?["transient"] as? Bool, true)
        XCTAssertEqual(try results(retry)[4]["skipped"] as? Bool, true, "the job already done is skipped")
    }

    /// Outputs are compared as the files they are: the same file through a folder link, or spelled with `..`, is
    /// one output; a file inside another job's file, or under a storyboard's own names in its folder, meets it.
    /// Each later line is refused with the earlier line's number, and nothing of it is written; a file beside a
    /// storyboard's own files is another job's.
    func testOutputsThatMeetAreRefusedHoweverSpelled() throws {
        try FileManager.default.createDirectory(atPath: path("real"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: path("link"), withDestinationPath: path("real"))
        let jobs = [
            try thumbnail("real", ms: 0, "real/l.png"),
            try thumbnail("through-link", ms: 100, "link/l.png"),
            try thumbnail("dotdot", ms: 200, "real/../real/l.png"),
            try line(["id": "board", "kind": "storyboard", "source": numbered.path, "output": path("sb")]),
            try thumbnail("sheet", ms: 300, "sb/sheet-001.jpg"),
            try thumbnail("vtt-beside", ms: 300, "sb/notes.png"),
            try thumbnail("file", ms: 400, "f.png"),
            try thumbnail("inside-file", ms: 500, "f.png/x.png"),
        ]
        let run = try batch([try jobsFile(jobs)])
        XCTAssertEqual(run.status, 65, run.stderr)
        let out = try results(run)
        XCTAssertEqual(
            out.map(errorCode),
            [nil, "INVALID_ARGUMENT", "INVALID_ARGUMENT", nil, "INVALID_ARGUMENT", nil, nil, "INVALID_ARGUMENT"])
        for (index, first) in [(1, 1), (2, 1), (4, 4), (7, 7)] {
            let message = (out[index]["error"] as? [String: Any])?["message"] as? String ?? ""
            XCTAssertTrue(message.contains("meets line \(first)'s output"), message)
        }
        XCTAssertEqual(
            Set(try FileManager.default.contentsOfDirectory(atPath: path("real"))), ["l.png"], "one file, the first's")
        XCTAssertEqual(
            Set(try FileManager.default.contentsOfDirectory(atPath: path("sb"))),
            ["sheet-001.jpg", "storyboard.vtt", "storyboard.ftgst.json", "notes.png"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("f.png/x.png")))
    }

    /// A thumbnail or preview whose output is its own source is refused: the photo is left as it was.
    func testAnOutputThatIsTheSourceIsRefusedAndTheSourceKept() throws {
        let photo = path("photo.png")
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("photo.png"), toPath: photo)
        let before = try Data(contentsOf: URL(fileURLWithPath: photo))
        let run = try batch([
            try jobsFile([
                try line(["id": "self", "kind": "thumbnail", "source": photo, "output": dir.path + "/./photo.png"]),
                try line(["id": "look", "kind": "preview", "source": photo, "output": photo]),
            ])
        ])
        XCTAssertEqual(run.status, 65, run.stderr)
        XCTAssertEqual(try results(run).map(errorCode), ["INVALID_ARGUMENT", "INVALID_ARGUMENT"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: photo)), before)
    }

    /// A server answering 503 is a transient `REMOTE_FETCH_FAILED` (exit 75) while a served clip succeeds.
    func testARemoteSourceAnswering503IsTransient() throws {
        let (server, _) = try HTTPTestServer.serving("numbered.mp4", as: "clip.mp4", in: self)
        let run = try batch([
            try jobsFile([
                try thumbnail("busy", ms: 0, "busy.png", source: server.url("/status/503/clip.mp4")),
                try thumbnail("fine", ms: 1000, "fine.png", source: server.url("/media/clip.mp4")),
            ])
        ])
        XCTAssertEqual(run.status, 75, run.stderr)
        let out = try results(run)
        XCTAssertEqual(errorCode(out[0]), "REMOTE_FETCH_FAILED")
        XCTAssertEqual((out[0]["error"] as? [String: Any])?["transient"] as? Bool, true)
        XCTAssertEqual(out[1]["status"] as? String, "ok")
        XCTAssertEqual(try numbered.frameNumber(path("fine.png"), near: 30), 30)
    }
}
