import FilmtoneTestSupport
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneGst

/// `ftgst batch`'s pure parts (issue 13, item 4): a jobs-file line read strictly, the shard rule, the plan's
/// decode groups and the exit status. No media.
final class BatchJobTests: XCTestCase {
    private func job(_ text: String, line: Int = 1) -> BatchJob { BatchJob.parse(line: line, text: Array(text.utf8)) }

    private func code(_ job: BatchJob) -> FilmtoneError.Code? {
        if case .failure(let error) = job.work { return error.code }
        return nil
    }

    func testAThumbnailLineBecomesAStampedEntryOfItsOutputFolder() throws {
        let parsed = job(
            #"{"id":"a","kind":"thumbnail","source":"/m/c.mp4","output":"/out/x/a.PNG","time":"1:02.5","toleranceMs":0,"maxWidth":320,"headers":["X-A: 1"],"toneMap":"off"}"#
        )
        XCTAssertEqual(parsed.id, "a")
        XCTAssertEqual(parsed.kind, "thumbnail")
        guard case .success(.thumbnail(let options, let time)) = parsed.work else {
            return XCTFail("\(parsed.work)")
        }
        XCTAssertEqual(time, .milliseconds(62_500))
        XCTAssertEqual(options.cacheDirectory, "/out/x")
        XCTAssertEqual(options.cacheName, "a.PNG")
        XCTAssertEqual(options.format, .png, "the output's extension decides when no format is given")
        XCTAssertEqual(options.toleranceMilliseconds, 0)
        XCTAssertEqual(options.maxWidth, 320)
        XCTAssertEqual(options.maxHeight, 512, "thumb's default")
        XCTAssertEqual(options.headers, ["X-A: 1"])
        XCTAssertEqual(options.toneMap, .off)
        XCTAssertEqual(options.cacheCapMegabytes, ThumbnailOptions.uncappedMegabytes)
        XCTAssertNil(options.output, "not thumb -o: that file would carry no stamp")
    }

    func testStoryboardSecondsAsANumberOrTheCLIsText() throws {
        let parsed = job(
            #"{"kind":"storyboard","source":"c.mp4","output":"sb","every":2.5,"tolerance":"1:00","toneMap":"off"}"#)
        guard case .success(.storyboard(let options)) = parsed.work else { return XCTFail("\(parsed.work)") }
        XCTAssertEqual(options.intervalMilliseconds, 2500)
        XCTAssertEqual(options.toleranceMilliseconds, 60_000)
        XCTAssertEqual(options.toneMap, .off)
        XCTAssertNil(parsed.id)
    }

    /// The shared vocabulary in batch lines: `maxWidth` and `toleranceMs` for a storyboard as for a thumbnail,
    /// `tolerance` in seconds for a thumbnail as for a storyboard; the old keys still read; both spellings of one
    /// value refuse the line.
    func testBatchLinesTakeTheSharedKeys() throws {
        let board = job(#"{"kind":"storyboard","source":"c.mp4","output":"sb","maxWidth":100,"toleranceMs":250}"#)
        guard case .success(.storyboard(let options)) = board.work else { return XCTFail("\(board.work)") }
        XCTAssertEqual(options.tileWidth, 100)
        XCTAssertEqual(options.toleranceMilliseconds, 250)
        let old = job(#"{"kind":"storyboard","source":"c.mp4","output":"sb","width":100,"tolerance":0.25}"#)
        guard case .success(.storyboard(let same)) = old.work else { return XCTFail("\(old.work)") }
        XCTAssertEqual([same.tileWidth, Int(same.toleranceMilliseconds)], [100, 250])
        let thumb = job(#"{"kind":"thumbnail","source":"c.mp4","output":"t.jpg","tolerance":"1.5s"}"#)
        guard case .success(.thumbnail(let thumbOptions, _)) = thumb.work else { return XCTFail("\(thumb.work)") }
        XCTAssertEqual(thumbOptions.toleranceMilliseconds, 1500)
        for text in [
            #"{"kind":"storyboard","source":"c","output":"sb","width":1,"maxWidth":2}"#,
            #"{"kind":"storyboard","source":"c","output":"sb","tolerance":1,"toleranceMs":2}"#,
            #"{"kind":"thumbnail","source":"c","output":"t.jpg","tolerance":1,"toleranceMs":2}"#,
        ] {
            XCTAssertEqual(code(job(text)), .invalidArgument, text)
        }
    }

    func testAPreviewLineTakesTheRequestFilesKeys() throws {
        let parsed = job(#"{"kind":"preview","source":"c.mp4","output":"p.png","timeMs":2000,"intensity":0.5}"#)
        guard case .success(.preview(let options)) = parsed.work else { return XCTFail("\(parsed.work)") }
        XCTAssertEqual(options.timeMilliseconds, 2000)
        XCTAssertEqual(options.intensity, 0.5)
        XCTAssertEqual(code(job(#"{"kind":"preview","source":"c.mp4","output":"p.png","timMs":1}"#)), .invalidArgument)
    }

    func testBadLinesAreInvalidArgumentWithTheirIdWhenReadable() {
        let cases = [
            "{", "[1]", "42", #"{"id":"x"}"#, #"{"id":"x","kind":"poster"}"#, #"{"id":"x","kind":7}"#,
            #"{"id":"x","kind":"thumbnail","kind":"thumbnail","source":"a","output":"a.jpg"}"#,
            #"{"id":"x","kind":"thumbnail","source":"a"}"#,
            #"{"id":"x","kind":"thumbnail","source":"a","output":"dir/"}"#,
            #"{"id":"x","kind":"thumbnail","source":"a","output":"a.jpg","timeMs":1,"time":"1s"}"#,
            #"{"id":"x","kind":"thumbnail","source":"a","output":"a.jpg","time":"1s,2s"}"#,
            #"{"id":"x","kind":"thumbnail","source":"a","output":"a.jpg","timeMs":"1"}"#,
            #"{"id":"x","kind":"storyboard","source":"a","output":"d","every":true}"#,
            #"{"id":"x","kind":"storyboard","source":"a","output":"d","every":-1}"#,
        ]
        for text in cases { XCTAssertEqual(code(job(text)), .invalidArgument, text) }
        XCTAssertEqual(job(#"{"id":"x","kind":"poster"}"#).id, "x")
        XCTAssertEqual(
            code(job(#"{"kind":"thumbnail","source":"a","output":"a.gif"}"#)), .unsupportedFormat)
    }

    func testShardsSplitByLineNumber() throws {
        let shards = try (0..<3).map { try BatchShard.parse("\($0)/3") }
        for line in 1...30 { XCTAssertEqual(shards.filter { $0.owns(line: line) }.count, 1, "line \(line)") }
        XCTAssertTrue(shards[0].owns(line: 1) && shards[1].owns(line: 2) && shards[0].owns(line: 4))
        for text in ["3/3", "1/0", "a/3", "1/3/4", "-1/3", "/3", "1/", "0/1000000", " 1/3"] {
            XCTAssertThrowsError(try BatchShard.parse(text), text)
        }
        XCTAssertEqual(
            try BatchShard.fromEnvironment(shards: "4", environment: ["JOB_COMPLETION_INDEX": "3"]),
            BatchShard(index: 3, count: 4))
        for environment in [[:], ["JOB_COMPLETION_INDEX": "4"], ["JOB_COMPLETION_INDEX": ""]] {
            XCTAssertThrowsError(try BatchShard.fromEnvironment(shards: "4", environment: environment))
        }
    }

    func testThumbnailsOfOneSourceAndBoxShareAUnitOfAtMost32() {
        var lines: [BatchJob] = []
        for index in 0..<40 {
            lines.append(
                job(
                    #"{"kind":"thumbnail","source":"a.mp4","timeMs":\#(index),"output":"/o/a\#(index).jpg"}"#,
                    line: index + 1))
        }
        lines.append(job(#"{"kind":"thumbnail","source":"b.mp4","output":"/o/b.jpg"}"#, line: 41))
        lines.append(job(#"{"kind":"thumbnail","source":"a.mp4","maxWidth":64,"output":"/o/small.jpg"}"#, line: 42))
        lines.append(job(#"{"kind":"thumbnail","source":"a.mp4","output":"/other/a.jpg"}"#, line: 43))
        lines.append(job(#"{"kind":"thumbnail","source":"a.mp4","toneMap":"off","output":"/o/sdr.jpg"}"#, line: 44))
        let sizes = Batch.plan(lines).map { unit -> Int in
            if case .thumbnails(let members) = unit { return members.count }
            return 0
        }
        XCTAssertEqual(sizes.sorted(), [1, 1, 1, 1, 8, 32])
    }

    func testALaterLineNamingTheSameOutputIsRefused() {
        let jobs = Batch.refuseSharedOutputs([
            job(#"{"kind":"thumbnail","source":"a","output":"/o/x.jpg"}"#, line: 1),
            job(#"{"kind":"thumbnail","source":"b","output":"/o/./x.jpg"}"#, line: 2),
            job(#"{"kind":"preview","source":"b","output":"/o/y.png"}"#, line: 3),
        ])
        XCTAssertEqual(jobs.map(code), [nil, .invalidArgument, nil])
    }

    /// Claims compare resolved paths: a folder link is followed, a file's own link is not (a file is placed by
    /// `rename`, which replaces the link); a storyboard owns only its own names in its folder; a file owns what
    /// would lie inside it, whichever line comes first.
    func testOutputClaimsMeetAsFilesNotSpellings() throws {
        let root = try TestEnvironment.temporaryDirectory(self).resolvingSymlinksInPath().path
        try FileManager.default.createDirectory(atPath: root + "/real", withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: root + "/real")
        try Data([1]).write(to: URL(fileURLWithPath: root + "/real/target.png"))
        try FileManager.default.createSymbolicLink(
            atPath: root + "/real/alias.png", withDestinationPath: root + "/real/target.png")
        var claims = OutputClaims()
        XCTAssertNil(claims.claim(root + "/real/a.png", isFolder: false, line: 1))
        XCTAssertEqual(claims.claim(root + "/link/a.png", isFolder: false, line: 2), 1)
        XCTAssertNil(claims.claim(root + "/real/target.png", isFolder: false, line: 3))
        XCTAssertNil(claims.claim(root + "/real/alias.png", isFolder: false, line: 4), "the link itself is replaced")
        XCTAssertNil(claims.claim(root + "/new/deeper/x.png", isFolder: false, line: 5))
        XCTAssertEqual(claims.claim(root + "/new/deeper", isFolder: false, line: 6), 5, "a file holding a claim")
        XCTAssertEqual(claims.claim(root + "/real/a.png/b.png", isFolder: false, line: 7), 1, "inside a file")
        XCTAssertNil(claims.claim(root + "/sb/storyboard.vtt", isFolder: false, line: 8))
        XCTAssertEqual(claims.claim(root + "/sb", isFolder: true, line: 9), 8, "its own VTT is another line's")
        XCTAssertNil(claims.claim(root + "/sb2", isFolder: true, line: 10))
        XCTAssertEqual(claims.claim(root + "/sb2/sheet-0012.jpg", isFolder: false, line: 11), 10)
        XCTAssertNil(claims.claim(root + "/sb2/sheet-1.jpg", isFolder: false, line: 12), "not a name it writes")
        XCTAssertTrue(OutputClaims.isStoryboardName("storyboard.ftgst.json"))
        XCTAssertFalse(OutputClaims.isStoryboardName("sheet-abc.jpg"))
    }

    func testExitStatusTellsPermanentFromTransient() {
        XCTAssertEqual(BatchExitStatus.status(failures: []), 0)
        XCTAssertEqual(BatchExitStatus.status(failures: [.decodeFailed, .invalidArgument, .fileNotFound]), 65)
        XCTAssertEqual(BatchExitStatus.status(failures: [.decodeFailed, .remoteFetchFailed]), 75)
        XCTAssertEqual(BatchExitStatus.status(failures: [.writeFailed]), 75)
        XCTAssertEqual(
            Set(FilmtoneError.Code.allCases.filter(\.isTransient)),
            [.remoteFetchFailed, .writeFailed, .internalError, .cancelled, .exportBusy])
    }

    func testBlankLinesKeepTheirNumber() {
        let lines = Batch.lines(of: Data("a\n\n  \r\nb\r\n".utf8))
        XCTAssertEqual(lines.map(\.number), [1, 4])
        XCTAssertEqual(lines.map { String(decoding: $0.text, as: UTF8.self) }, ["a", "b"])
    }
}
