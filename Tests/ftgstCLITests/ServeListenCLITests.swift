// End-to-end tests of `ftgst serve --listen`: the built binary started with pipes, its url line read from stdout,
// then real WebSocket connections (SoupKit's client) and HTTP requests (curl) to 127.0.0.1. Every wait has a deadline.

import FilmtoneCore
import FilmtoneTestSupport
import Foundation
import SoupKit
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

final class ServeListenCLITests: XCTestCase {
    private var work: URL!
    private var runtime: URL!
    private var workspace: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        work = try TestEnvironment.temporaryDirectory(self)
        runtime = try TestEnvironment.temporaryDirectory(self)
        workspace = work.appendingPathComponent("workspace")
    }

    /// The longest a stop may take (as in ServeCLITests): far below the ≥ 180 s the slow clip takes to arrive.
    private static let promptStop: TimeInterval = 10

    /// A running `ftgst serve --listen 127.0.0.1:0 --allow WORK` and the page URL of its first stdout line.
    private struct Listening {
        let engine: EngineProcess
        let pageURL: String
        /// `http://127.0.0.1:PORT`.
        var origin: String { String(pageURL[..<pageURL.range(of: "/?token=")!.lowerBound]) }
        var token: String { String(pageURL[pageURL.range(of: "?token=")!.upperBound...]) }
        var rpcURL: String { "ws://" + origin.dropFirst("http://".count) + "/rpc?token=" + token }
    }

    private func startListening(_ extra: [String] = []) throws -> Listening {
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = runtime.path
        let engine = try EngineProcess(
            executable: TestEnvironment.binary,
            arguments: ["serve", "--listen", "127.0.0.1:0", "--allow", work.path] + extra, environment: env)
        addTeardownBlock { engine.kill() }
        let first = try engine.waitFor(timeout: 30, "the url line") { _ in true }
        XCTAssertEqual(first.keys, ["url"], "the first line is the url line: \(first.serialized)")
        let url = try XCTUnwrap(first["url"]?.string)
        XCTAssertTrue(url.hasPrefix("http://127.0.0.1:"), url)
        XCTAssertNotNil(
            url.range(of: #"^http://127\.0\.0\.1:[0-9]+/\?token=[0-9a-f]{64}$"#, options: .regularExpression), url)
        return Listening(engine: engine, pageURL: url)
    }

    private func connect(_ listening: Listening) throws -> RPCSocket {
        RPCSocket(try WebSocketClient(connectingTo: listening.rpcURL, origin: listening.origin))
    }

    private func names(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    /// Copies a fixture into the allowed folder.
    private func inside(_ fixture: String) throws -> String {
        let path = work.appendingPathComponent(fixture).path
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture(fixture), toPath: path)
        return path
    }

    private func assertInvalidArgument(
        _ answer: JSONValue, mentioning text: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertNil(answer["result"], answer.serialized, file: file, line: line)
        // INVALID_ARGUMENT is JSON-RPC's invalid params.
        XCTAssertEqual(answer["error"]?["code"]?.int, -32602, answer.serialized, file: file, line: line)
        XCTAssertEqual(answer["error"]?["data"]?["code"]?.string, "INVALID_ARGUMENT", file: file, line: line)
        let message = answer["error"]?["message"]?.string ?? ""
        XCTAssertTrue(message.hasPrefix("[INVALID_ARGUMENT] "), message, file: file, line: line)
        XCTAssertTrue(message.contains(text), message, file: file, line: line)
        XCTAssertTrue(
            message.contains("is outside the folders this engine may use (ftgst serve --allow)"), message, file: file,
            line: line)
    }

    // MARK: - The protocol over the WebSocket

    func testProbeAndPreviewOverTheWebSocketAndThePreviewsURLServesThePNG() throws {
        let clip = try inside("clip.mp4")
        let listening = try startListening()
        let socket = try connect(listening)

        let probe = try socket.call(id: 1, "probeSource", .object([("uri", .string(clip))]))
        let cli = try Run.ftgst(["probe", clip])
        XCTAssertEqual(cli.status, 0, cli.stderr)
        XCTAssertEqual(probe["result"], try JSONValue.parse(Array(cli.stdout.utf8)), "the CLI's probe object")

        let preview = try socket.call(
            id: 2, "renderPreviewFrame", .object([("source", .string(clip)), ("timeMs", .int(1000))]))
        let path = try XCTUnwrap(preview["result"]?["path"]?.string, preview.serialized)
        let url = try XCTUnwrap(preview["result"]?["url"]?.string, preview.serialized)
        XCTAssertEqual(
            url, "\(listening.origin)/previews/\((path as NSString).lastPathComponent)?token=\(listening.token)")
        let fetched = try fetch(url)
        XCTAssertEqual(fetched.status, 200)
        XCTAssertEqual(fetched.contentType, "image/png")
        XCTAssertEqual(fetched.body, try Data(contentsOf: URL(fileURLWithPath: path)), "the preview's own bytes")
        let image = try DecodedImage.read(path)
        XCTAssertEqual([image.width, image.height], [320, 240])

        // The token guards the previews too; only files the engine wrote are served.
        XCTAssertEqual(
            try fetch(url.replacingOccurrences(of: listening.token, with: String(repeating: "0", count: 64))).status,
            403)
        XCTAssertEqual(try fetch("\(listening.origin)/previews/preview-999.png?token=\(listening.token)").status, 404)
        // The studio's page.
        let page = try fetch(listening.pageURL)
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.contentType, "text/html; charset=utf-8")
        XCTAssertTrue(String(decoding: page.body, as: UTF8.self).contains("studio"))

        // Over stdio a preview has a path and no url: nothing serves it to the parent, which reads the file.
        listening.engine.request(id: 3, "renderPreviewFrame", .object([("source", .string(clip))]))
        let stdio = try listening.engine.response(id: 3)
        XCTAssertNotNil(stdio["result"]?["path"]?.string, stdio.serialized)
        XCTAssertNil(stdio["result"]?["url"], stdio.serialized)
        XCTAssertFalse(socket.received.contains { $0["id"]?.int == 3 }, "stdio's answer stays on stdio")
        // …and the server does not serve it: stdio may preview files outside --allow, which a token holder must not
        // fetch by guessing its name.
        let stdioName = try XCTUnwrap(stdio["result"]?["path"]?.string).split(separator: "/").last.map(String.init)
        XCTAssertEqual(
            try fetch("\(listening.origin)/previews/\(try XCTUnwrap(stdioName))?token=\(listening.token)").status, 404)
    }

    func testAnExportsProgressAndAnswerGoToItsConnectionOnly() throws {
        let clip = try inside("clip.mp4")
        let listening = try startListening()
        let first = try connect(listening)
        let second = try connect(listening)
        let out = work.appendingPathComponent("out.mp4").path
        let answer = try first.call(
            id: 1, "runExport",
            .object([("source", .string(clip)), ("output", .string(out)), ("workspace", .string(workspace.path))]),
            timeout: 120)
        XCTAssertEqual(answer["result"]?["frames"]?.int, 90, answer.serialized)
        let progress = first.received.filter { $0["method"]?.string == "exportProgress" }
        XCTAssertFalse(progress.isEmpty, "progress on the exporting connection")
        let answerIndex = try XCTUnwrap(first.received.firstIndex { $0["id"]?.int == 1 })
        XCTAssertFalse(
            first.received[answerIndex...].contains { $0["method"]?.string == "exportProgress" },
            "none after the answer")
        XCTAssertTrue(FileManager.default.fileExists(atPath: out))
        // The other connection is open and served, and got nothing of the export.
        XCTAssertEqual(try second.call(id: 2, "cancelExport", nil)["result"]?["cancelled"], .bool(false))
        XCTAssertEqual(second.received.map { $0["id"]?.int }, [2], "the second connection got its own answer only")
        XCTAssertFalse(
            listening.engine.messages.contains { $0["method"]?.string == "exportProgress" }, "none on stdout")
    }

    func testExportProgressGoesToItsConnectionAndACancelFromAnotherStopsIt() throws {
        let clip = try SlowRemoteClip(self)
        let listening = try startListening()
        let first = try connect(listening)
        let second = try connect(listening)
        let out = work.appendingPathComponent("long.mp4")
        first.request(
            id: 1, "runExport",
            .object([
                ("source", .string(clip.url)), ("output", .string(out.path)), ("workspace", .string(workspace.path)),
            ]))
        _ = try first.waitFor(timeout: 60, "a rendering exportProgress with frames done") {
            $0["method"]?.string == "exportProgress" && $0["params"]?["stage"]?.string == "rendering"
                && ($0["params"]?["currentFrame"]?.int ?? 0) > 0
        }
        // The second connection is served meanwhile, and sees none of the first's progress.
        let busy = try second.call(
            id: 7, "runExport",
            .object([("source", .string(clip.url)), ("output", .string(work.appendingPathComponent("b.mp4").path))]))
        XCTAssertEqual(busy["error"]?["data"]?["code"]?.string, "EXPORT_BUSY", busy.serialized)
        let cancel = try second.call(id: 8, "cancelExport", .object([("reason", .string("stop from the second tab"))]))
        XCTAssertEqual(cancel["result"]?["cancelled"], .bool(true), cancel.serialized)

        let answer = try first.waitFor(timeout: Self.promptStop, "the export's answer") { $0["id"]?.int == 1 }
        XCTAssertEqual(answer["error"]?["data"]?["code"]?.string, "CANCELLED", answer.serialized)
        XCTAssertEqual(answer["error"]?["message"]?.string, "[CANCELLED] api: stop from the second tab")
        XCTAssertEqual(names(in: work).filter { $0 != "workspace" }, [], "nothing at OUT, no staging file")
        XCTAssertEqual(second.received.map { $0["id"]?.int }, [7, 8], "the second connection got its answers only")
        XCTAssertFalse(
            listening.engine.messages.contains { $0["method"]?.string == "exportProgress" }, "none on stdout")
    }

    /// An export belongs to the connection that started it: when that WebSocket closes, the export stops through its
    /// cancel token (`disconnected: WebSocket closed` in its record), nothing is left at OUT, and the engine keeps
    /// serving: another connection can start an export at once (not `EXPORT_BUSY`).
    func testAWebSocketThatClosesStopsTheExportItStarted() throws {
        let clip = try SlowRemoteClip(self)
        let local = try inside("clip.mp4")
        let listening = try startListening()
        let exporting = try connect(listening)
        let watching = try connect(listening)
        let out = work.appendingPathComponent("gone.mp4")
        exporting.request(
            id: 1, "runExport",
            .object([
                ("source", .string(clip.url)), ("output", .string(out.path)), ("workspace", .string(workspace.path)),
            ]))
        _ = try exporting.waitFor(timeout: 60, "a rendering exportProgress with frames done") {
            $0["method"]?.string == "exportProgress" && $0["params"]?["stage"]?.string == "rendering"
                && ($0["params"]?["currentFrame"]?.int ?? 0) > 0
        }
        exporting.close()

        // The record is written once the export has stopped.
        let records = workspace.appendingPathComponent("records")
        let deadline = Date().addingTimeInterval(Self.promptStop)
        var cancelled: [String] = []
        while Date() < deadline {
            cancelled = names(in: records).filter { $0.hasSuffix("-cancelled.json") }
            if !cancelled.isEmpty { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let name = try XCTUnwrap(cancelled.first, "a cancelled record within \(Self.promptStop) s")
        let record = try JSONValue.parse(
            try XCTUnwrap(FileManager.default.contents(atPath: records.appendingPathComponent(name).path)))
        XCTAssertEqual(record["cancelReason"]?.string, "disconnected", record.serialized)
        XCTAssertEqual(record["cancelDetail"]?.string, "WebSocket closed", record.serialized)
        XCTAssertLessThan(record["frames"]?.int ?? .max, Int64(SlowRemoteClip.frames), "stopped mid-render")
        XCTAssertEqual(
            names(in: work).filter { !["workspace", "clip.mp4"].contains($0) }, [], "nothing at OUT, no staging file")

        // The engine serves on, and the one export slot is free again.
        let next = work.appendingPathComponent("next.mp4").path
        let answer = try watching.call(
            id: 2, "runExport",
            .object([("source", .string(local)), ("output", .string(next)), ("workspace", .string(workspace.path))]),
            timeout: 120)
        XCTAssertEqual(answer["result"]?["frames"]?.int, 90, answer.serialized)
        XCTAssertTrue(FileManager.default.fileExists(atPath: next))
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.path), "the closed connection's output never appears")
        XCTAssertNil(listening.engine.exitStatus, "still serving")
    }

    // MARK: - Nobody else gets in

    func testAWrongTokenOrAnotherOriginIsRefused() throws {
        let listening = try startListening()
        let wrongToken = listening.rpcURL.replacingOccurrences(
            of: listening.token, with: String(repeating: "a", count: 64))
        XCTAssertThrowsError(try WebSocketClient(connectingTo: wrongToken, origin: listening.origin)) { error in
            XCTAssertEqual((error as? WebSocketClient.Refused)?.status, 403, "\(error)")
        }
        let noToken = String(listening.rpcURL[..<listening.rpcURL.range(of: "?")!.lowerBound])
        XCTAssertThrowsError(try WebSocketClient(connectingTo: noToken, origin: listening.origin)) { error in
            XCTAssertEqual((error as? WebSocketClient.Refused)?.status, 403, "\(error)")
        }
        XCTAssertThrowsError(try WebSocketClient(connectingTo: listening.rpcURL, origin: "http://evil.example")) {
            error in XCTAssertEqual((error as? WebSocketClient.Refused)?.status, 403, "\(error)")
        }
        XCTAssertEqual(try fetch(listening.origin + "/").status, 403, "the page needs the token too")
        // The engine's own page's Origin gets in.
        let socket = try connect(listening)
        XCTAssertEqual(try socket.call(id: 1, "cancelExport", nil)["result"]?["cancelled"], .bool(false))
    }

    func testFilesOutsideTheAllowedFoldersAreRefusedOverTheWebSocketOnly() throws {
        let outside = try TestEnvironment.fixture("clip.mp4")
        let clip = try inside("clip.mp4")
        let link = work.appendingPathComponent("link.mp4").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: outside)
        let elsewhere = try TestEnvironment.temporaryDirectory(self)
        let listening = try startListening()
        let socket = try connect(listening)

        assertInvalidArgument(
            try socket.call(id: 1, "probeSource", .object([("uri", .string(outside))])), mentioning: outside)
        assertInvalidArgument(
            try socket.call(id: 2, "probeSource", .object([("uri", .string("file://" + outside))])),
            mentioning: "file://" + outside
        )
        XCTAssertEqual(
            try socket.call(id: 3, "probeSource", .object([("uri", .string(clip))]))["result"]?["container"]?.string,
            "mp4"
        )
        // A link inside to a file outside: its target is what counts (the message names only the link).
        let refused = try socket.call(id: 4, "probeSource", .object([("uri", .string(link))]))
        assertInvalidArgument(refused, mentioning: link)
        XCTAssertFalse(
            refused["error"]?["message"]?.string?.contains(outside) ?? true, "where the link leads stays unsaid")
        // Outputs and LUTs too.
        let output = elsewhere.appendingPathComponent("frame.png").path
        assertInvalidArgument(
            try socket.call(
                id: 5, "renderPreviewFrame", .object([("source", .string(clip)), ("output", .string(output))])),
            mentioning: output)
        XCTAssertEqual(names(in: elsewhere), [], "nothing written outside")
        let lut = elsewhere.appendingPathComponent("look.cube").path
        try Data("LUT_3D_SIZE 2\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n0 0 1\n1 0 1\n0 1 1\n1 1 1\n".utf8).write(
            to: URL(fileURLWithPath: lut))
        assertInvalidArgument(
            try socket.call(
                id: 6, "renderPreviewFrame", .object([("source", .string(clip)), ("creativeLut", .string(lut))])),
            mentioning: lut)
        assertInvalidArgument(
            try socket.call(
                id: 7, "runExport",
                .object([("source", .string(outside)), ("output", .string(work.appendingPathComponent("o.mp4").path))])),
            mentioning: outside)
        let inOut = work.appendingPathComponent("frame.png").path
        let written = try socket.call(
            id: 8, "renderPreviewFrame",
            .object([
                ("source", .string(clip)), ("output", .string(inOut)),
                ("creativeLut", .string(try inside("look.cube", from: lut))),
            ]))
        XCTAssertEqual(written["result"]?["path"]?.string, inOut, written.serialized)

        // The parent on stdio is not limited: it could read the file itself.
        listening.engine.request(id: 9, "probeSource", .object([("uri", .string(outside))]))
        XCTAssertEqual(try listening.engine.response(id: 9)["result"]?["container"]?.string, "mp4")
    }

    /// listFiles over the WebSocket: without `dir` the allowed folders; a folder's sub-folders, media and LUTs
    /// (folders first), hidden and other files left out; a link out of the allowed folders is never listed, and a
    /// folder outside them (or reached through a link out) is refused as any other file.
    func testListFilesShowsOnlyWhatIsInsideTheAllowedFolders() throws {
        let clip = try inside("clip.mp4")
        let sub = work.appendingPathComponent("looks")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        try Data("LUT_3D_SIZE 2\n".utf8).write(to: sub.appendingPathComponent("a.cube"))
        try Data("notes".utf8).write(to: work.appendingPathComponent("notes.txt"))
        try Data("x".utf8).write(to: work.appendingPathComponent(".hidden.mp4"))
        let outside = try TestEnvironment.temporaryDirectory(self)
        try FileManager.default.copyItem(
            atPath: try TestEnvironment.fixture("photo.jpg"), toPath: outside.appendingPathComponent("secret.jpg").path)
        try FileManager.default.createSymbolicLink(
            atPath: work.appendingPathComponent("out-link.jpg").path,
            withDestinationPath: outside.appendingPathComponent("secret.jpg").path)
        try FileManager.default.createSymbolicLink(
            atPath: work.appendingPathComponent("out-folder").path, withDestinationPath: outside.path)
        try FileManager.default.createSymbolicLink(
            atPath: work.appendingPathComponent("in-link.mp4").path, withDestinationPath: clip)
        let real = try XCTUnwrap(
            realpath(work.path, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            })
        let listening = try startListening()
        let socket = try connect(listening)

        let roots = try socket.call(id: 1, "listFiles", nil)
        XCTAssertEqual(roots["result"]?["dir"], .null, roots.serialized)
        XCTAssertEqual(roots["result"]?["entries"]?.array?.compactMap { $0["path"]?.string }, [real])
        XCTAssertEqual(roots["result"]?["entries"]?.array?.first?["kind"]?.string, "folder")

        let listing = try socket.call(id: 2, "listFiles", .object([("dir", .string(work.path))]))
        let result = try XCTUnwrap(listing["result"], listing.serialized)
        XCTAssertEqual(result["dir"]?.string, real)
        XCTAssertEqual(result["parent"], .null, "the allowed folder's parent is not offered")
        XCTAssertEqual(result["truncated"], .bool(false))
        let entries = result["entries"]?.array ?? []
        XCTAssertEqual(
            entries.compactMap { $0["name"]?.string }, ["looks", "clip.mp4", "in-link.mp4"],
            "folders first; no hidden file, no .txt, no link out: \(listing.serialized)")
        XCTAssertEqual(entries.compactMap { $0["kind"]?.string }, ["folder", "media", "media"])
        XCTAssertEqual(entries[1]["path"]?.string, real + "/clip.mp4")
        XCTAssertEqual(
            entries[1]["sizeBytes"]?.int,
            (try FileManager.default.attributesOfItem(atPath: clip)[.size] as? NSNumber)?.int64Value)

        let looks = try socket.call(id: 3, "listFiles", .object([("dir", .string(sub.path))]))
        XCTAssertEqual(looks["result"]?["parent"]?.string, real, "a sub-folder's parent is allowed")
        XCTAssertEqual(looks["result"]?["entries"]?.array?.compactMap { $0["kind"]?.string }, ["lut"])
        XCTAssertEqual(looks["result"]?["entries"]?.array?.first?["path"]?.string, real + "/looks/a.cube")

        assertInvalidArgument(
            try socket.call(id: 4, "listFiles", .object([("dir", .string(outside.path))])), mentioning: "dir ")
        assertInvalidArgument(
            try socket.call(
                id: 5, "listFiles", .object([("dir", .string(work.appendingPathComponent("out-folder").path))])),
            mentioning: "out-folder")
        let missing = try socket.call(
            id: 6, "listFiles", .object([("dir", .string(work.appendingPathComponent("none").path))]))
        XCTAssertEqual(missing["error"]?["data"]?["code"]?.string, "FILE_NOT_FOUND", missing.serialized)
        XCTAssertEqual(missing["error"]?["code"]?.int, 66)
        let unknown = try socket.call(id: 7, "listFiles", .object([("folder", .string(work.path))]))
        XCTAssertEqual(unknown["error"]?["code"]?.int, -32602, unknown.serialized)
    }

    /// listPresets answers `ftgst presets`' objects; a presets folder a WebSocket client names must be allowed.
    func testListPresetsAnswersThePresetsExportKnows() throws {
        let listening = try startListening()
        let socket = try connect(listening)
        let answer = try socket.call(id: 1, "listPresets", nil)
        let cli = try Run.ftgst(["presets"])
        XCTAssertEqual(cli.status, 0, cli.stderr)
        let expected = try cli.stdout.split(separator: "\n").map { try JSONValue.parse(Array($0.utf8)) }
        XCTAssertEqual(answer["result"]?["presets"]?.array, expected, answer.serialized)
        XCTAssertTrue(expected.contains { $0["name"]?.string == "h264-mp4" })
        let outside = try TestEnvironment.temporaryDirectory(self)
        assertInvalidArgument(
            try socket.call(id: 2, "listPresets", .object([("presets", .string(outside.path))])), mentioning: "presets")
        // A folder of its own inside --allow: only its presets.
        let folder = work.appendingPathComponent("presets")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: TestEnvironment.packageRoot.appendingPathComponent("pipelines/presets/png.preset"),
            to: folder.appendingPathComponent("mine.preset"))
        let own = try socket.call(id: 3, "listPresets", .object([("presets", .string(folder.path))]))
        XCTAssertEqual(own["result"]?["presets"]?.array?.compactMap { $0["name"]?.string }, ["mine"], own.serialized)
    }

    /// saveToPhotos' `library`, when a WebSocket client names one, must be inside --allow like any other path.
    func testASaveLibraryOutsideTheAllowedFoldersIsRefused() throws {
        let clip = try inside("clip.mp4")
        let outside = try TestEnvironment.temporaryDirectory(self)
        let listening = try startListening()
        let socket = try connect(listening)
        assertInvalidArgument(
            try socket.call(
                id: 1, "saveToPhotos",
                .object([("uri", .string(clip)), ("library", .string(outside.appendingPathComponent("lib").path))])),
            mentioning: "library")
        XCTAssertEqual(names(in: outside), [], "nothing saved outside")
    }

    func testAllowIsRepeatableAndEachFolderMustExist() throws {
        let other = try TestEnvironment.temporaryDirectory(self)
        let clip = other.appendingPathComponent("clip.mp4").path
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: clip)
        let listening = try startListening(["--allow", other.path])
        let socket = try connect(listening)
        let probe = try socket.call(id: 1, "probeSource", .object([("uri", .string(clip))]))
        XCTAssertEqual(probe["result"]?["container"]?.string, "mp4", probe.serialized)

        let missing = work.appendingPathComponent("missing").path
        let refused = try Run.ftgst(["serve", "--listen", "127.0.0.1:0", "--allow", missing], timeout: 30)
        XCTAssertEqual(refused.status, 64, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("[INVALID_ARGUMENT] --allow \(missing): not a folder"), refused.stderr)
        XCTAssertEqual(refused.stdout, "")
        let alone = try Run.ftgst(["serve", "--allow", work.path], timeout: 30)
        XCTAssertEqual(alone.status, 64, alone.stderr)
        XCTAssertTrue(alone.stderr.contains("--allow and --studio go with --listen"), alone.stderr)
    }

    private func inside(_ name: String, from path: String) throws -> String {
        let copy = work.appendingPathComponent(name).path
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        return copy
    }

    func testListeningOnAnotherHostIsRefused() throws {
        for (address, reason) in [
            ("0.0.0.0:0", "binds 127.0.0.1 only, not 0.0.0.0"), ("localhost:0", "binds 127.0.0.1 only, not localhost"),
            ("127.0.0.1:70000", "port 70000 is outside 0…65535"), ("127.0.0.1", "--listen takes 127.0.0.1:PORT"),
        ] {
            let result = try Run.ftgst(["serve", "--listen", address], timeout: 30)
            XCTAssertEqual(result.status, 64, "\(address): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("[INVALID_ARGUMENT] "), "\(address): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(reason), "\(address): \(result.stderr)")
            XCTAssertEqual(result.stdout, "", "no url line")
        }
    }

    // MARK: - Lifecycle

    func testClosingStdinStopsTheExportAnswersItAndClosesTheSockets() throws {
        let clip = try SlowRemoteClip(self)
        let listening = try startListening()
        let socket = try connect(listening)
        let idle = try connect(listening)
        let out = work.appendingPathComponent("eof.mp4")
        socket.request(
            id: 1, "runExport",
            .object([
                ("source", .string(clip.url)), ("output", .string(out.path)), ("workspace", .string(workspace.path)),
            ]))
        _ = try socket.waitFor(timeout: 60, "a rendering exportProgress") {
            $0["method"]?.string == "exportProgress" && $0["params"]?["stage"]?.string == "rendering"
        }
        listening.engine.closeInput()
        XCTAssertTrue(listening.engine.waitForExit(timeout: Self.promptStop), "ended after stdin closed")
        XCTAssertEqual(listening.engine.exitStatus, 0, listening.engine.stderr)
        let answer = try socket.waitFor(timeout: 5, "the export's answer") { $0["id"]?.int == 1 }
        XCTAssertEqual(answer["error"]?["message"]?.string, "[CANCELLED] disconnected: stdin closed", answer.serialized)
        XCTAssertEqual(names(in: work).filter { $0 != "workspace" }, [], "nothing at OUT")
        XCTAssertTrue(socket.waitForClose(timeout: 5), "the export's socket is closed")
        XCTAssertTrue(idle.waitForClose(timeout: 5), "an idle socket is closed")
        XCTAssertEqual(idle.received.count, 0)
    }

    func testSIGTERMStopsTheExportAndClosesTheSockets() throws {
        let clip = try SlowRemoteClip(self)
        let listening = try startListening()
        let socket = try connect(listening)
        socket.request(
            id: 1, "runExport",
            .object([
                ("source", .string(clip.url)), ("output", .string(work.appendingPathComponent("term.mp4").path)),
                ("workspace", .string(workspace.path)),
            ]))
        _ = try socket.waitFor(timeout: 60, "a rendering exportProgress") {
            $0["method"]?.string == "exportProgress" && $0["params"]?["stage"]?.string == "rendering"
        }
        kill(listening.engine.process.processIdentifier, SIGTERM)
        XCTAssertTrue(listening.engine.waitForExit(timeout: Self.promptStop), "ended after SIGTERM")
        XCTAssertEqual(listening.engine.exitStatus, 0, listening.engine.stderr)
        let answer = try socket.waitFor(timeout: 5, "the export's answer") { $0["id"]?.int == 1 }
        XCTAssertEqual(answer["error"]?["message"]?.string, "[CANCELLED] terminated", answer.serialized)
        XCTAssertEqual(names(in: work).filter { $0 != "workspace" }, [], "nothing at OUT")
        XCTAssertTrue(socket.waitForClose(timeout: 5), "the socket is closed")
    }

    // MARK: - HTTP
    // MARK: - HTTP

    private struct Response {
        var status: Int
        var contentType: String
        var body: Data
    }

    /// One real HTTP GET with curl.
    private func fetch(_ url: String) throws -> Response {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let body = folder.appendingPathComponent("body")
        let result = try Run.tool(
            "curl", ["-s", "--max-time", "10", "-o", body.path, "-w", "%{http_code}\n%{content_type}", url],
            timeout: 20)
        XCTAssertEqual(result.status, 0, "curl: \(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return Response(
            status: Int(lines.first ?? "") ?? -1, contentType: lines.count > 1 ? String(lines[1]) : "",
            body: (try? Data(contentsOf: body)) ?? Data())
    }
}

/// A WebSocket client of the engine: requests out, every message in kept (`received`), in order.
// @unchecked Sendable is not needed: used from the test's thread only.
final class RPCSocket {
    private let client: WebSocketClient
    private(set) var received: [JSONValue] = []

    init(_ client: WebSocketClient) { self.client = client }

    func request(id: Int64, _ method: String, _ params: JSONValue?) {
        var fields: [(String, JSONValue)] = [
            ("jsonrpc", .string("2.0")), ("id", .int(id)), ("method", .string(method)),
        ]
        if let params { fields.append(("params", params)) }
        client.send(text: JSONValue.object(fields).serialized)
    }

    /// Sends a request and waits (at most `timeout` s) for its answer.
    func call(id: Int64, _ method: String, _ params: JSONValue?, timeout: TimeInterval = 60) throws -> JSONValue {
        request(id: id, method, params)
        return try waitFor(timeout: timeout, "the answer to request \(id)") { $0["id"]?.int == id }
    }

    /// Waits (at most `timeout` s) for a message matching `predicate`, among those already in and those to come.
    func waitFor(
        timeout: TimeInterval, _ what: String, file: StaticString = #filePath, line: UInt = #line,
        _ predicate: (JSONValue) -> Bool
    ) throws -> JSONValue {
        if let found = received.first(where: predicate) { return found }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let text = client.receive(timeout: max(0.01, deadline.timeIntervalSinceNow)) else { break }
            let message = try JSONValue.parse(Array(text.utf8))
            received.append(message)
            if predicate(message) { return message }
        }
        XCTFail("no \(what) within \(timeout) s", file: file, line: line)
        throw CocoaError(.executableLoad)
    }

    /// Closes the connection from this end (1000, normal closure).
    func close() { client.close() }

    /// Reads what is left until the server closes the connection (at most `timeout` s); whether it closed.
    func waitForClose(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let text = client.receive(timeout: max(0.01, deadline.timeIntervalSinceNow)) else { break }
            if let message = try? JSONValue.parse(Array(text.utf8)) { received.append(message) }
        }
        return client.isClosed
    }
}
