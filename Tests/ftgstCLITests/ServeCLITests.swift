// End-to-end tests of `ftgst serve`: a test client starts the built binary with pipes, writes JSON-RPC requests on
// its stdin and reads its stdout line by line on a thread of its own; every wait has a deadline. Exports that must
// still be running when they are stopped read `SlowRemoteClip` (≥ 180 s to arrive by construction).

import FilmtoneCore
import FilmtoneTestSupport
import Foundation
import Synchronization
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

final class ServeCLITests: XCTestCase {
    private var work: URL!
    private var runtime: URL!
    private var workspace: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        work = try TestEnvironment.temporaryDirectory(self)
        runtime = work.appendingPathComponent("runtime")
        workspace = work.appendingPathComponent("workspace")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
    }

    /// The longest a stop may take, from the cancel (stdin's end, a signal, the parent's death) to the answer or the
    /// exit: the export loop checks every 50 ms; 10 s leaves room for a debug build on a loaded machine and is far
    /// below the ≥ 180 s the slow clip takes to arrive.
    private static let promptStop: TimeInterval = 10

    /// `ftgst serve` with `XDG_RUNTIME_DIR` in the test's folder (where its preview folder goes).
    private func startEngine(environment: [String: String] = [:], removing: [String] = []) throws -> EngineProcess {
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = runtime.path
        for key in removing { env[key] = nil }
        for (key, value) in environment { env[key] = value }
        let engine = try EngineProcess(executable: TestEnvironment.binary, arguments: ["serve"], environment: env)
        addTeardownBlock { engine.kill() }
        return engine
    }

    /// Files in `folder`, hidden ones (staging files) included.
    private func names(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    private func exportParams(_ source: String, _ output: String) -> JSONValue {
        .object([("source", .string(source)), ("output", .string(output)), ("workspace", .string(workspace.path))])
    }

    /// Starts exporting the slow clip through `engine` as request `id` and waits for a rendering notification with
    /// frames done: whatever stops it next stops it mid-render.
    private func startSlowExport(_ engine: EngineProcess, id: Int64, output: String) throws {
        let clip = try SlowRemoteClip(self)
        engine.request(id: id, "runExport", exportParams(clip.url, output))
        _ = try engine.waitFor(timeout: 60, "a rendering exportProgress with frames done") {
            $0["method"]?.string == "exportProgress" && $0["params"]?["stage"]?.string == "rendering"
                && ($0["params"]?["currentFrame"]?.int ?? 0) > 0
        }
    }

    /// The export answered `[CANCELLED] message`, left nothing in `work` but the workspace and runtime folders, and
    /// its record in the workspace says why.
    private func assertCancelled(
        _ answer: JSONValue, message: String, reason: String, detail: String?, file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        XCTAssertNil(answer["result"], "\(answer.serialized)", file: file, line: line)
        XCTAssertEqual(answer["error"]?["code"]?.int, 130, file: file, line: line)
        XCTAssertEqual(answer["error"]?["message"]?.string, "[CANCELLED] \(message)", file: file, line: line)
        XCTAssertEqual(answer["error"]?["data"]?["code"]?.string, "CANCELLED", file: file, line: line)
        XCTAssertEqual(
            names(in: work).filter { !["workspace", "runtime"].contains($0) }, [], "nothing at OUT, no staging file",
            file: file, line: line)
        let records = workspace.appendingPathComponent("records")
        let cancelled = names(in: records).filter { $0.hasSuffix("-cancelled.json") }
        XCTAssertEqual(cancelled.count, 1, "\(names(in: records))", file: file, line: line)
        let name = try XCTUnwrap(cancelled.first, file: file, line: line)
        let record = try JSONValue.parse(
            try XCTUnwrap(FileManager.default.contents(atPath: records.appendingPathComponent(name).path)))
        XCTAssertEqual(record["cancelReason"]?.string, reason, file: file, line: line)
        XCTAssertEqual(record["cancelDetail"]?.string, detail, file: file, line: line)
        let frames = record["frames"]?.int ?? 0
        XCTAssertGreaterThan(frames, 0, "cancelled mid-render", file: file, line: line)
        XCTAssertLessThan(frames, Int64(SlowRemoteClip.frames), "cancelled mid-render", file: file, line: line)
    }

    // MARK: - Methods

    func testProbePreviewAndExportAnswerTheCLIsObjectsAndProgressComesFirst() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let engine = try startEngine()

        engine.request(id: 1, "probeSource", .object([("uri", .string(clip))]))
        let probe = try engine.response(id: 1)
        let cli = try Run.ftgst(["probe", clip])
        XCTAssertEqual(cli.status, 0, cli.stderr)
        XCTAssertEqual(probe["result"], try JSONValue.parse(Array(cli.stdout.utf8)), "the CLI's probe object")

        // Without output: a file in the engine's own folder under XDG_RUNTIME_DIR.
        engine.request(id: 2, "renderPreviewFrame", .object([("source", .string(clip)), ("timeMs", .int(1000))]))
        let preview = try engine.response(id: 2)
        let path = try XCTUnwrap(preview["result"]?["path"]?.string, preview.serialized)
        XCTAssertTrue(path.hasPrefix(runtime.path + "/ftgst-serve-"), path)
        XCTAssertTrue(path.hasSuffix(".png"), path)
        XCTAssertEqual(preview["result"]?["width"]?.int, 320)
        XCTAssertEqual(preview["result"]?["timeMs"]?.int, 1000)
        let image = try DecodedImage.read(path)
        XCTAssertEqual([image.width, image.height], [320, 240])

        // With output: the request file's object, written where it says.
        let named = work.appendingPathComponent("frame.jpg").path
        engine.request(
            id: 3, "renderPreviewFrame",
            .object([("source", .string(clip)), ("output", .string(named)), ("maxWidth", .int(160))]))
        XCTAssertEqual(try engine.response(id: 3)["result"]?["path"]?.string, named)
        XCTAssertEqual(try DecodedImage.read(named).width, 160)

        let out = work.appendingPathComponent("out.mp4").path
        engine.request(id: 4, "runExport", exportParams(clip, out))
        let export = try engine.response(id: 4, timeout: 120)
        let result = try XCTUnwrap(export["result"], export.serialized)
        XCTAssertEqual(result["event"]?.string, "result")
        XCTAssertEqual(result["path"]?.string, out)
        XCTAssertEqual(result["frames"]?.int, 90)
        XCTAssertTrue(FileManager.default.fileExists(atPath: out))
        // Every exportProgress came before the answer, never decreasing, ending at 1.
        let messages = engine.messages
        let answerIndex = try XCTUnwrap(messages.firstIndex { $0["id"]?.int == 4 })
        let progress = messages.enumerated().filter { $0.element["method"]?.string == "exportProgress" }
        XCTAssertFalse(progress.isEmpty)
        XCTAssertTrue(progress.allSatisfy { $0.offset < answerIndex }, "progress before the answer")
        let fractions = progress.compactMap { $0.element["params"]?["progress"]?.number }
        XCTAssertEqual(fractions, fractions.sorted())
        XCTAssertEqual(fractions.last, 1)
        let last = try XCTUnwrap(progress.last?.element["params"])
        XCTAssertEqual(last.keys, ["stage", "progress", "currentFrame", "totalFrames"])
        XCTAssertEqual(last["totalFrames"]?.int, 90)

        // stdin's end: the answers are all in, the process ends, its own previews go, the named one stays.
        engine.closeInput()
        XCTAssertTrue(engine.waitForExit(timeout: Self.promptStop), "ended after stdin closed")
        XCTAssertEqual(engine.exitStatus, 0, engine.stderr)
        XCTAssertEqual(names(in: runtime), [], "the engine's preview folder is removed")
        XCTAssertTrue(FileManager.default.fileExists(atPath: named))
        XCTAssertEqual(engine.unreadable, [], "stdout carries only JSON-RPC messages")
    }

    func testRequestsSentJustBeforeStdinClosesAreStillAnswered() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let engine = try startEngine()
        engine.request(id: 1, "probeSource", .object([("uri", .string(clip))]))
        engine.request(id: 2, "renderPreviewFrame", .object([("source", .string(clip))]))
        engine.closeInput()
        XCTAssertNotNil(try engine.response(id: 1)["result"])
        XCTAssertNotNil(try engine.response(id: 2)["result"])
        XCTAssertTrue(engine.waitForExit(timeout: Self.promptStop))
        XCTAssertEqual(engine.exitStatus, 0, engine.stderr)
    }

    // MARK: - Errors

    func testEveryProtocolErrorIsAnsweredAndTheEngineKeepsServing() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        // No session bus and no display: no file chooser, whatever desktop runs the tests (PickCLITests has one).
        let engine = try startEngine(environment: [
            "DBUS_SESSION_BUS_ADDRESS": "", "DISPLAY": "", "WAYLAND_DISPLAY": "",
        ])
        var id: Int64 = 100
        /// The engine still answers a probe.
        func assertStillServing(file: StaticString = #filePath, line: UInt = #line) throws {
            id += 1
            engine.request(id: id, "probeSource", .object([("uri", .string(clip))]))
            XCTAssertEqual(
                try engine.response(id: id)["result"]?["container"]?.string, "mp4", file: file, line: line)
        }
        func assertError(
            _ answer: JSONValue, _ code: Int64, _ stable: String, _ fragment: String, file: StaticString = #filePath,
            line: UInt = #line
        ) {
            XCTAssertEqual(answer["jsonrpc"]?.string, "2.0", file: file, line: line)
            XCTAssertEqual(answer["error"]?["code"]?.int, code, answer.serialized, file: file, line: line)
            XCTAssertEqual(answer["error"]?["data"]?["code"]?.string, stable, file: file, line: line)
            let message = answer["error"]?["message"]?.string ?? ""
            XCTAssertTrue(message.hasPrefix("[\(stable)] "), message, file: file, line: line)
            XCTAssertTrue(message.contains(fragment), message, file: file, line: line)
        }
        /// The next message with a null id (the errors whose request's id cannot be read).
        var seenNull = 0
        func nextNullAnswer() throws -> JSONValue {
            seenNull += 1
            let count = seenNull
            var found = 0
            return try engine.waitFor(timeout: 30, "answer #\(count) with a null id") {
                guard $0["id"] == .null else { return false }
                found += 1
                return found == count
            }
        }

        engine.sendLine("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"probeSource\"")
        assertError(try nextNullAnswer(), -32700, "INVALID_ARGUMENT", "not JSON")
        try assertStillServing()

        engine.sendLine("{\"jsonrpc\":\"2.0\",\"id\":2,\"id\":3,\"method\":\"probeSource\"}")
        assertError(try nextNullAnswer(), -32700, "INVALID_ARGUMENT", "duplicate key 'id'")

        engine.sendLine("42")
        assertError(try nextNullAnswer(), -32600, "INVALID_ARGUMENT", "a request is a JSON object")
        engine.send(.object([("id", .int(4)), ("method", .string("probeSource"))]))
        assertError(try engine.response(id: 4), -32600, "INVALID_ARGUMENT", "'jsonrpc' must be \"2.0\"")
        engine.send(.object([("jsonrpc", .string("2.0")), ("id", .int(5)), ("method", .int(7))]))
        assertError(try engine.response(id: 5), -32600, "INVALID_ARGUMENT", "'method' must be a string")
        engine.sendLine("[]")
        assertError(try nextNullAnswer(), -32600, "INVALID_ARGUMENT", "an empty batch")
        try assertStillServing()

        engine.request(id: 6, "renderThumbnail", .object([]))
        assertError(try engine.response(id: 6), -32601, "INVALID_ARGUMENT", "no method 'renderThumbnail'")
        // The pickers exist (not -32601) but have no chooser here: NOT_SUPPORTED, exit status 79 as the code.
        engine.request(id: 7, "pickSource", nil)
        assertError(try engine.response(id: 7), 79, "NOT_SUPPORTED", "no file chooser: no desktop portal")
        engine.request(id: 8, "pickLutFile", .object([("slot", .string("creativeLut"))]))
        assertError(try engine.response(id: 8), 79, "NOT_SUPPORTED", "no display for zenity or kdialog")
        try assertStillServing()

        engine.request(id: 9, "probeSource", .array([.string(clip)]))
        assertError(try engine.response(id: 9), -32602, "INVALID_ARGUMENT", "params must be an object")
        engine.request(id: 10, "probeSource", .object([("uri", .int(5))]))
        assertError(try engine.response(id: 10), -32602, "INVALID_ARGUMENT", "'uri' must be a string")
        engine.request(id: 11, "probeSource", .object([("url", .string(clip))]))
        assertError(try engine.response(id: 11), -32602, "INVALID_ARGUMENT", "unknown key 'url'")
        engine.request(id: 12, "pickLutFile", .object([("slot", .string("lut"))]))
        assertError(try engine.response(id: 12), -32602, "INVALID_ARGUMENT", "inputLut")
        // The request file's own checks: the same INVALID_ARGUMENT as `ftgst preview --request`.
        engine.request(id: 13, "renderPreviewFrame", .object([("source", .string(clip)), ("intensity", .int(5))]))
        assertError(try engine.response(id: 13), -32602, "INVALID_ARGUMENT", "intensity")
        engine.request(id: 14, "runExport", .object([("source", .string(clip)), ("preset", .int(1))]))
        assertError(try engine.response(id: 14), -32602, "INVALID_ARGUMENT", "'preset' must be a string")
        try assertStillServing()

        // A notification is never answered, not even its error; a batch is answered by one array, without them.
        let before = engine.messages.count
        engine.send(.object([("jsonrpc", .string("2.0")), ("method", .string("nothing"))]))
        engine.send(
            .array([
                .object([("jsonrpc", .string("2.0")), ("method", .string("nothing"))]),
                .object([("jsonrpc", .string("2.0")), ("id", .int(15)), ("method", .string("nothing"))]),
                .object([
                    ("jsonrpc", .string("2.0")), ("id", .string("p")), ("method", .string("probeSource")),
                    ("params", .object([("uri", .string(clip))])),
                ]),
            ]))
        let batch = try engine.waitFor(timeout: 30, "the batch's answer") { $0.array != nil }
        XCTAssertEqual(batch.array?.count, 2, batch.serialized)
        XCTAssertEqual(batch.array?.first?["id"]?.int, 15)
        XCTAssertEqual(batch.array?.first?["error"]?["code"]?.int, -32601)
        XCTAssertEqual(batch.array?.last?["id"]?.string, "p")
        XCTAssertEqual(batch.array?.last?["result"]?["container"]?.string, "mp4")
        try assertStillServing()
        XCTAssertEqual(engine.messages.count, before + 2, "the batch's answer and the probe's, nothing else")
        XCTAssertEqual(engine.unreadable, [])
    }

    func testALineLongerThan16MiBIsRefusedAndTheNextOneServed() throws {
        let engine = try startEngine()
        // A string of 17 MiB in an otherwise valid request: refused unread, without its id.
        let long = String(repeating: "a", count: 17 << 20)
        engine.request(id: 1, "probeSource", .object([("uri", .string(long))]))
        engine.request(id: 2, "probeSource", .object([("uri", .string(try TestEnvironment.fixture("clip.mp4")))]))
        XCTAssertEqual(try engine.response(id: 2)["result"]?["container"]?.string, "mp4")
        let refused = try engine.waitFor(timeout: 30, "the long line's error") { $0["id"] == .null }
        XCTAssertEqual(refused["error"]?["code"]?.int, -32700)
        XCTAssertTrue(
            refused["error"]?["message"]?.string?.contains("longer than 16777216 bytes") == true, refused.serialized)
        XCTAssertNil(engine.message(id: 1), "never read, so never answered")
    }

    func testFailuresKeepTheirStableCodes() throws {
        let engine = try startEngine(removing: ["DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY"])
        let missing = work.appendingPathComponent("missing.mp4").path
        engine.request(id: 1, "probeSource", .object([("uri", .string(missing))]))
        let probe = try engine.response(id: 1)
        XCTAssertEqual(probe["error"]?["code"]?.int, 66)
        XCTAssertEqual(probe["error"]?["data"]?["code"]?.string, "FILE_NOT_FOUND")
        XCTAssertTrue(probe["error"]?["message"]?.string?.hasPrefix("[FILE_NOT_FOUND] ") == true, probe.serialized)

        engine.request(id: 2, "runExport", exportParams(missing, work.appendingPathComponent("o.mp4").path))
        XCTAssertEqual(try engine.response(id: 2)["error"]?["data"]?["code"]?.string, "FILE_NOT_FOUND")

        engine.request(id: 3, "renderPreviewFrame", .object([("source", .string("ftp://example.com/a.mp4"))]))
        XCTAssertEqual(try engine.response(id: 3)["error"]?["data"]?["code"]?.string, "INVALID_URL")

        // No desktop in this environment: the share has nobody to hand the file to.
        let file = work.appendingPathComponent("clip.mp4")
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: file.path)
        engine.request(id: 4, "shareOutput", .object([("uri", .string(file.absoluteString))]))
        let share = try engine.response(id: 4)
        XCTAssertEqual(share["error"]?["data"]?["code"]?.string, "SHARE_UNAVAILABLE", share.serialized)
        XCTAssertEqual(share["error"]?["code"]?.int, 78)
        engine.request(id: 5, "shareOutput", .object([("uri", .string("https://example.com/a.mp4"))]))
        XCTAssertEqual(try engine.response(id: 5)["error"]?["code"]?.int, -32602)

        // The codes the request's checks and the decoding find, each with its exit status as the error's code.
        let bad = work.appendingPathComponent("bad.cube")
        try Data("LUT_3D_SIZE 2\n0 0 0\n".utf8).write(to: bad)
        let source = try TestEnvironment.fixture("clip.mp4")
        let cases: [(JSONValue, String, Int64)] = [
            (.object([("source", .string(source)), ("creativeLut", .string(bad.path))]), "LUT_INVALID", 76),
            (.object([("source", .string(source)), ("format", .string("webp"))]), "UNSUPPORTED_FORMAT", 67),
            (.object([("source", .string(try TestEnvironment.fixture("garbage.bin")))]), "DECODE_FAILED", 68),
            (
                .object([
                    ("source", .string(source)),
                    ("output", .string(work.appendingPathComponent("no/such/folder/p.png").path)),
                ]), "WRITE_FAILED", 73
            ),
        ]
        for (index, (params, code, number)) in cases.enumerated() {
            engine.request(id: 10 + Int64(index), "renderPreviewFrame", params)
            let answer = try engine.response(id: 10 + Int64(index))
            XCTAssertEqual(answer["error"]?["data"]?["code"]?.string, code, answer.serialized)
            XCTAssertEqual(answer["error"]?["code"]?.int, number, answer.serialized)
            XCTAssertTrue(answer["error"]?["message"]?.string?.hasPrefix("[\(code)] ") == true, answer.serialized)
        }
    }

    func testSavingTheSameContentTwiceIsSaveFailed() throws {
        let engine = try startEngine()
        let file = work.appendingPathComponent("clip.mp4")
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: file.path)
        let library = work.appendingPathComponent("library").path
        engine.request(
            id: 1, "saveToPhotos", .object([("uri", .string(file.absoluteString)), ("library", .string(library))]))
        let saved = try engine.response(id: 1)
        let path = try XCTUnwrap(saved["result"]?["path"]?.string, saved.serialized)
        XCTAssertEqual(path, library + "/clip.mp4")
        XCTAssertEqual(FileManager.default.contents(atPath: path), FileManager.default.contents(atPath: file.path))

        engine.request(id: 2, "saveToPhotos", .object([("uri", .string(file.path)), ("library", .string(library))]))
        let again = try engine.response(id: 2)
        XCTAssertEqual(again["error"]?["code"]?.int, 77)
        XCTAssertEqual(again["error"]?["data"]?["code"]?.string, "SAVE_FAILED")
        XCTAssertEqual(again["error"]?["message"]?.string, "[SAVE_FAILED] already saved as \(path)")
        XCTAssertEqual(names(in: URL(fileURLWithPath: library)).filter { !$0.hasPrefix(".") }, ["clip.mp4"])
    }

    /// Over stdio listFiles is not limited (the parent could read the folder itself): any folder it names, its
    /// current folder without `dir`, and a parent up to `/`.
    func testListFilesOverStdioListsAnyFolderAndPresetsMatchTheCLI() throws {
        try FileManager.default.copyItem(
            atPath: try TestEnvironment.fixture("photo.jpg"), toPath: work.appendingPathComponent("photo.jpg").path)
        let engine = try startEngine()
        engine.request(id: 1, "listFiles", .object([("dir", .string(work.path))]))
        let listing = try engine.response(id: 1)
        XCTAssertEqual(
            listing["result"]?["entries"]?.array?.compactMap { $0["name"]?.string },
            ["runtime", "photo.jpg"], listing.serialized)
        XCTAssertNotEqual(listing["result"]?["parent"], .null, "stdio may go up")
        engine.request(id: 2, "listFiles", nil)
        let here = try engine.response(id: 2)
        XCTAssertEqual(
            here["result"]?["dir"]?.string, FileManager.default.currentDirectoryPath, "the engine's current folder")
        engine.request(id: 3, "listFiles", .object([("dir", .string("/"))]))
        XCTAssertEqual(try engine.response(id: 3)["result"]?["parent"], .null)
        engine.request(id: 4, "listFiles", .object([("dir", .string(work.appendingPathComponent("photo.jpg").path))]))
        let notFolder = try engine.response(id: 4)
        XCTAssertEqual(notFolder["error"]?["data"]?["code"]?.string, "FILE_NOT_FOUND", notFolder.serialized)
        XCTAssertTrue(notFolder["error"]?["message"]?.string?.hasPrefix("[FILE_NOT_FOUND] no folder ") == true)

        engine.request(id: 5, "listPresets", nil)
        let presets = try engine.response(id: 5)
        let cli = try Run.ftgst(["presets"])
        XCTAssertEqual(
            presets["result"]?["presets"]?.array,
            try cli.stdout.split(separator: "\n").map { try JSONValue.parse(Array($0.utf8)) })
        engine.request(id: 6, "listPresets", .object([("presets", .string(work.appendingPathComponent("no").path))]))
        XCTAssertEqual(try engine.response(id: 6)["error"]?["data"]?["code"]?.string, "FILE_NOT_FOUND")
    }

    // MARK: - One export at a time, cancel

    func testSecondExportIsBusyAPreviewAnswersMeanwhileAndCancelExportStopsIt() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let engine = try startEngine()
        let out = work.appendingPathComponent("long.mp4").path
        try startSlowExport(engine, id: 1, output: out)

        engine.request(id: 2, "runExport", exportParams(clip, work.appendingPathComponent("second.mp4").path))
        let busy = try engine.response(id: 2)
        XCTAssertEqual(busy["error"]?["code"]?.int, 75)
        XCTAssertEqual(busy["error"]?["data"]?["code"]?.string, "EXPORT_BUSY")
        XCTAssertTrue(busy["error"]?["message"]?.string?.hasPrefix("[EXPORT_BUSY] ") == true)

        engine.request(id: 3, "renderPreviewFrame", .object([("source", .string(clip)), ("timeMs", .int(500))]))
        XCTAssertEqual(try engine.response(id: 3)["result"]?["width"]?.int, 320)
        XCTAssertNil(engine.message(id: 1), "the export is still running")

        engine.request(id: 4, "cancelExport", .object([("reason", .string("user pressed stop"))]))
        XCTAssertEqual(try engine.response(id: 4, timeout: Self.promptStop)["result"]?["cancelled"], .bool(true))
        let answer = try engine.response(id: 1, timeout: Self.promptStop)
        try assertCancelled(answer, message: "api: user pressed stop", reason: "api", detail: "user pressed stop")
        let answerIndex = try XCTUnwrap(engine.messages.firstIndex { $0["id"]?.int == 1 })
        XCTAssertFalse(
            engine.messages[answerIndex...].contains { $0["method"]?.string == "exportProgress" },
            "no progress after the answer")

        engine.request(id: 5, "cancelExport", nil)
        XCTAssertEqual(try engine.response(id: 5)["result"]?["cancelled"], .bool(false), "none runs now")
        // The slot is free again.
        engine.request(id: 6, "runExport", exportParams(clip, work.appendingPathComponent("after.mp4").path))
        XCTAssertEqual(try engine.response(id: 6, timeout: 120)["result"]?["frames"]?.int, 90)
    }

    // MARK: - Lifecycle

    func testClosingStdinDuringAnExportStopsItAndLeavesNothing() throws {
        let engine = try startEngine()
        try startSlowExport(engine, id: 1, output: work.appendingPathComponent("eof.mp4").path)
        engine.closeInput()
        XCTAssertTrue(engine.waitForExit(timeout: Self.promptStop), "ended after stdin closed")
        XCTAssertEqual(engine.exitStatus, 0, engine.stderr)
        let answer = try engine.response(id: 1, timeout: 5)
        try assertCancelled(
            answer, message: "disconnected: stdin closed", reason: "disconnected", detail: "stdin closed")
    }

    func testSIGTERMDuringAnExportStopsItAndLeavesNothing() throws {
        let engine = try startEngine()
        try startSlowExport(engine, id: 1, output: work.appendingPathComponent("term.mp4").path)
        kill(engine.process.processIdentifier, SIGTERM)
        XCTAssertTrue(engine.waitForExit(timeout: Self.promptStop), "ended after SIGTERM")
        XCTAssertEqual(engine.exitStatus, 0, engine.stderr)
        try assertCancelled(
            try engine.response(id: 1, timeout: 5), message: "terminated", reason: "terminated", detail: nil)
    }

    func testKillingItsParentEndsTheEngineAndItsExport() throws {
        // A real parent between the test and the engine: a shell that starts it in the background (stdin given
        // explicitly, else a background job reads /dev/null) and writes its pid.
        let pidFile = runtime.appendingPathComponent("engine.pid").path
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = runtime.path
        let parent = try EngineProcess(
            executable: URL(fileURLWithPath: "/bin/bash"),
            arguments: ["-c", #""$0" serve <&0 & echo $! > "$1"; wait"#, TestEnvironment.binary.path, pidFile],
            environment: env)
        addTeardownBlock { parent.kill() }
        let deadline = Date().addingTimeInterval(30)
        var enginePID: pid_t? = nil
        while enginePID == nil, Date() < deadline {
            let text = (try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? ""
            if text.hasSuffix("\n") { enginePID = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) }
            if enginePID == nil { usleep(20_000) }
        }
        let pid = try XCTUnwrap(enginePID, "the shell never wrote the engine's pid")
        addTeardownBlock { if ServeCLITests.isAlive(pid) { kill(pid, SIGKILL) } }
        XCTAssertNotEqual(pid, parent.process.processIdentifier)

        try startSlowExport(parent, id: 1, output: work.appendingPathComponent("orphan.mp4").path)
        kill(parent.process.processIdentifier, SIGKILL)
        let gone = Date().addingTimeInterval(Self.promptStop)
        while ServeCLITests.isAlive(pid), Date() < gone { usleep(20_000) }
        XCTAssertFalse(ServeCLITests.isAlive(pid), "the engine outlived its parent")
        // It ended the export as SIGTERM does, answering on the stdout it still had.
        try assertCancelled(
            try parent.response(id: 1, timeout: 5), message: "terminated", reason: "terminated", detail: nil)
    }

    // The session of a hundred mixed calls under the leak tracer is ServeLifecycleCLITests'.

    /// Whether `pid` is a live process: not gone, and not a zombie nobody reaped (an orphan's new parent may not).
    static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        // pid (comm) STATE …: the state follows the last ')'.
        guard let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }
}

// MARK: - The test client

/// A process speaking JSON-RPC on its stdin/stdout: requests are written as lines, and a thread reads stdout line
/// by line, parsing each with `JSONValue.parse` (a line that does not parse is kept in `unreadable`).
// @unchecked Sendable: the reader threads touch only `state` (a Mutex); the process and the input pipe are used
// from the test's thread.
final class EngineProcess: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    private let state = Mutex<(messages: [JSONValue], unreadable: [String], stderr: String, open: Int)>(([], [], "", 2))

    /// `nullInput`: stdin is /dev/null (as a desktop's launcher gives), not a pipe the test writes to.
    init(executable: URL, arguments: [String], environment: [String: String], nullInput: Bool = false) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardInput = nullInput ? FileHandle.nullDevice : input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let stdout = output.fileHandleForReading
        let stderr = errors.fileHandleForReading
        Thread.detachNewThread { [self] in
            var pending: [UInt8] = []
            while true {
                let chunk = stdout.availableData  // blocks until data or the end; empty at the end
                if chunk.isEmpty { break }
                pending += chunk
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = Array(pending[..<newline])
                    pending.removeSubrange(...newline)
                    state.withLock { state in
                        if let value = try? JSONValue.parse(line) {
                            state.messages.append(value)
                        } else {
                            state.unreadable.append(String(decoding: line, as: UTF8.self))
                        }
                    }
                }
            }
            try? stdout.close()  // at its end; Foundation's Pipe would leave it open
            state.withLock { state in
                if !pending.isEmpty { state.unreadable.append(String(decoding: pending, as: UTF8.self)) }
                state.open -= 1
            }
        }
        Thread.detachNewThread { [self] in
            while true {
                let chunk = stderr.availableData
                if chunk.isEmpty { break }
                state.withLock { $0.stderr += String(decoding: chunk, as: UTF8.self) }
            }
            try? stderr.close()  // at its end; Foundation's Pipe would leave it open
            state.withLock { $0.open -= 1 }
        }
    }

    var messages: [JSONValue] { state.withLock { $0.messages } }
    var unreadable: [String] { state.withLock { $0.unreadable } }
    var stderr: String { state.withLock { $0.stderr } }
    var exitStatus: Int32? { process.isRunning ? nil : process.terminationStatus }

    func sendLine(_ text: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((text + "\n").utf8))
    }

    func send(_ message: JSONValue) { sendLine(message.serialized) }

    /// Sends a request (`id` given) or a notification (`id` nil); `params` nil leaves them out.
    func request(id: Int64?, _ method: String, _ params: JSONValue?) {
        var fields: [(String, JSONValue)] = [("jsonrpc", .string("2.0"))]
        if let id { fields.append(("id", .int(id))) }
        fields.append(("method", .string(method)))
        if let params { fields.append(("params", params)) }
        send(.object(fields))
    }

    func closeInput() { try? input.fileHandleForWriting.close() }

    /// The answer to request `id`, if it came.
    func message(id: Int64) -> JSONValue? { messages.first { $0["id"]?.int == id } }

    /// Waits (at most `timeout` s) for the answer to request `id`.
    func response(id: Int64, timeout: TimeInterval = 60, file: StaticString = #filePath, line: UInt = #line) throws
        -> JSONValue
    {
        try waitFor(timeout: timeout, "the answer to request \(id)", file: file, line: line) { $0["id"]?.int == id }
    }

    /// Waits (at most `timeout` s) for a message matching `predicate` (tried on each message, in order, once).
    func waitFor(
        timeout: TimeInterval, _ what: String, file: StaticString = #filePath, line: UInt = #line,
        _ predicate: (JSONValue) -> Bool
    ) throws -> JSONValue {
        let deadline = Date().addingTimeInterval(timeout)
        var tried = 0
        while true {
            let (messages, ended) = state.withLock { ($0.messages, $0.open == 0) }
            for message in messages[tried...] {
                if predicate(message) { return message }
            }
            tried = messages.count
            guard Date() < deadline, !ended else { break }
            usleep(10_000)
        }
        XCTFail("no \(what) within \(timeout) s; stderr: \(stderr)", file: file, line: line)
        throw CocoaError(.executableLoad)
    }

    /// Waits (at most `timeout` s) for the process to end and for its output to be read to the end.
    func waitForExit(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        let drained = Date().addingTimeInterval(5)
        while state.withLock({ $0.open > 0 }), Date() < drained { usleep(10_000) }
        return !process.isRunning
    }

    /// SIGKILL, then waits (at most 5 s) for the exit.
    func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitForExit(timeout: 5)
    }
}

extension JSONValue {
    subscript(_ key: String) -> JSONValue? {
        guard case .object(let fields) = self else { return nil }
        return fields.first { $0.0 == key }?.1
    }

    var keys: [String] {
        guard case .object(let fields) = self else { return [] }
        return fields.map(\.0)
    }

    var string: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }

    var int: Int64? {
        guard case .int(let number) = self else { return nil }
        return number
    }

    var number: Double? {
        switch self {
        case .int(let number): return Double(number)
        case .double(let number): return number
        default: return nil
        }
    }

    var array: [JSONValue]? {
        guard case .array(let items) = self else { return nil }
        return items
    }
}
