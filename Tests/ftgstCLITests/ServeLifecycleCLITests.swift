// `ftgst serve`'s lifecycle over a long session: 100 mixed calls (probes, previews with and without looks at
// various times, errors, exports, a cancelled export, saves, shares, listings) through stdio and through WebSockets,
// then the engine's end (stdin closing, SIGTERM). GStreamer's leak tracer must report nothing alive, the process
// must exit 0, and no process it started (the share handler, xdg-user-dir) may outlive its call.

import FilmtoneCore
import FilmtoneTestSupport
import Foundation
import SoupKit
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

final class ServeLifecycleCLITests: XCTestCase {
    private var work: URL!
    private var runtime: URL!
    private var workspace: URL!
    private var library: URL!
    private var shares: URL!
    private var standIns: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        work = try TestEnvironment.temporaryDirectory(self)
        runtime = try TestEnvironment.temporaryDirectory(self)
        standIns = try TestEnvironment.temporaryDirectory(self)
        workspace = work.appendingPathComponent("workspace")
        library = work.appendingPathComponent("library")
        shares = work.appendingPathComponent("shares.txt")
        // The desktop's share handler: a stand-in xdg-open that records the URI it was given and ends.
        let open = standIns.appendingPathComponent("xdg-open")
        try Data("#!/bin/sh\necho \"$1\" >> '\(shares.path)'\n".utf8).write(to: open)
        chmod(open.path, 0o755)
    }

    private static let promptStop: TimeInterval = 10

    private func environment() -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = runtime.path
        env["PATH"] = standIns.path + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        env["DISPLAY"] = ":99"
        env["DBUS_SESSION_BUS_ADDRESS"] = nil
        env["GST_TRACERS"] = "leaks"
        env["GST_DEBUG"] = "GST_TRACER:7"
        env["GST_DEBUG_NO_COLOR"] = "1"
        return env
    }

    /// The fixtures the calls name, copied inside the work folder (the WebSocket clients' `--allow`).
    private struct Media {
        var clip: String
        var photo: String
        var lut: String
    }

    private func media() throws -> Media {
        func copy(_ from: String, _ name: String) throws -> String {
            let path = work.appendingPathComponent(name).path
            try FileManager.default.copyItem(atPath: from, toPath: path)
            return path
        }
        return Media(
            clip: try copy(try TestEnvironment.fixture("clip.mp4"), "clip.mp4"),
            photo: try copy(try TestEnvironment.fixture("photo.jpg"), "photo.jpg"),
            lut: try copy(
                SharedLUTs.root.appendingPathComponent("colour-science/resolve_cube/Colour_Correct.cube").path,
                "look.cube"))
    }

    /// Call `id` of the session (3…101; 1 and 2 are the cancelled export and its cancel): its method, params, and
    /// the code it must fail with (nil: it must succeed). In each wave of four consecutive ids at most one is an
    /// export or a cancel (they repeat every ten), so a cancel never meets an export of its own wave.
    private func call(_ id: Int64, _ media: Media) -> (method: String, params: JSONValue, fails: String?) {
        func path(_ name: String) -> String { work.appendingPathComponent(name).path }
        switch id % 10 {
        case 0: return ("probeSource", .object([("uri", .string(id % 20 == 0 ? media.clip : media.photo))]), nil)
        case 1:
            return (
                "renderPreviewFrame",
                .object([
                    ("source", .string(media.clip)), ("timeMs", .int(id * 29 % 3000)),
                    ("creativeLut", .string(media.lut)), ("intensity", .double(Double(id % 7) / 6)),
                ]), nil
            )
        case 2:
            return (
                "renderPreviewFrame",
                .object([
                    ("source", .string(media.photo)), ("format", .string("jpeg")),
                    ("inputLut", .string(media.lut)), ("output", .string(path("p\(id).jpg"))),
                ]), nil
            )
        case 3: return ("probeSource", .object([("uri", .string(path("none.mp4")))]), "FILE_NOT_FOUND")
        case 4:
            guard id % 40 == 24 else { return ("cancelExport", .object([]), nil) }
            return (
                "runExport",
                .object([
                    ("source", .string(media.clip)), ("output", .string(path("e\(id).mp4"))),
                    ("workspace", .string(workspace.path)), ("creativeLut", .string(media.lut)),
                ]), nil
            )
        case 5:
            return ("renderPreviewFrame", .object([("source", .string(media.clip)), ("maxWidth", .int(64))]), nil)
        case 6:
            // The first save of the clip succeeds; every later one is the same content.
            return (
                "saveToPhotos", .object([("uri", .string(media.clip)), ("library", .string(library.path))]),
                id == 6 ? nil : "SAVE_FAILED"
            )
        case 7: return ("shareOutput", .object([("uri", .string(media.photo))]), nil)
        case 8:
            switch id % 30 {
            case 8: return ("pickSource", .object([]), "NOT_SUPPORTED")
            case 18: return ("listPresets", .object([]), nil)
            default: return ("listFiles", .object([("dir", .string(work.path))]), nil)
            }
        default:
            return (
                "renderPreviewFrame",
                .object([
                    ("source", .string(media.clip)), ("timeMs", .int(id * 31 % 3000)),
                    ("toleranceMs", .int(0)), ("maxWidth", .int(160)),
                ]), nil
            )
        }
    }

    private func check(_ answer: JSONValue, _ expected: (method: String, params: JSONValue, fails: String?)) {
        if let code = expected.fails {
            XCTAssertEqual(answer["error"]?["data"]?["code"]?.string, code, "\(expected.method): \(answer.serialized)")
            XCTAssertTrue(
                answer["error"]?["message"]?.string?.hasPrefix("[\(code)] ") ?? false,
                "\(expected.method): \(answer.serialized)")
        } else {
            XCTAssertNotNil(answer["result"], "\(expected.method): \(answer.serialized)")
        }
    }

    /// The processes whose parent is `pid` (`/proc/PID/task/*/children`).
    static func children(of pid: pid_t) -> [pid_t] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task -> [pid_t] in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    /// Nothing left of the session: no child process while it still runs (a share handler or `xdg-user-dir` that
    /// outlived its call), every share recorded, the process ended 0, and the leak tracer ran and found nothing.
    private func assertEndedClean(
        _ engine: EngineProcess, shared: Int, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(engine.exitStatus, 0, engine.stderr, file: file, line: line)
        let recorded = ((try? String(contentsOf: shares, encoding: .utf8)) ?? "").split(separator: "\n")
        XCTAssertEqual(recorded.count, shared, "each share ran the handler once", file: file, line: line)
        let stderr = engine.stderr
        XCTAssertTrue(
            stderr.contains("new format string: object-alive"), "leak tracer did not run: \(stderr.prefix(500))",
            file: file, line: line)
        let leaks = stderr.split(separator: "\n").filter {
            $0.contains("object-alive, type-name=(string)") && !$0.contains("new format string")
        }
        XCTAssertEqual(leaks, [], "leaked objects", file: file, line: line)
    }

    // MARK: - stdio

    func testAStdioSessionOfAHundredMixedCallsLeavesNothingBehind() throws {
        let media = try media()
        let clip = try SlowRemoteClip(self)
        let engine = try EngineProcess(
            executable: TestEnvironment.binary, arguments: ["serve"], environment: environment())
        addTeardownBlock { engine.kill() }
        // A slow export cancelled mid-render.
        engine.request(
            id: 1, "runExport",
            .object([
                ("source", .string(clip.url)), ("output", .string(work.appendingPathComponent("slow.mp4").path)),
                ("workspace", .string(workspace.path)),
            ]))
        _ = try engine.waitFor(timeout: 60, "a rendering exportProgress") {
            $0["method"]?.string == "exportProgress" && $0["params"]?["stage"]?.string == "rendering"
        }
        engine.request(id: 2, "cancelExport", nil)
        XCTAssertEqual(try engine.response(id: 2, timeout: Self.promptStop)["result"]?["cancelled"], .bool(true))
        XCTAssertEqual(
            try engine.response(id: 1, timeout: Self.promptStop)["error"]?["data"]?["code"], .string("CANCELLED"))
        // Then 99 calls, four at a time.
        var shared = 0
        var wave: [Int64] = []
        for id in Int64(3)...101 {
            let expected = call(id, media)
            if expected.method == "shareOutput" { shared += 1 }
            engine.request(id: id, expected.method, expected.params)
            wave.append(id)
            if wave.count == 4 || id == 101 {
                for sent in wave { check(try engine.response(id: sent, timeout: 120), call(sent, media)) }
                wave = []
            }
        }
        XCTAssertEqual(engine.messages.filter { $0["id"] != nil }.count, 101, "one answer per call")
        XCTAssertEqual(Self.children(of: engine.process.processIdentifier), [], "no process outlived its call")
        engine.closeInput()
        XCTAssertTrue(engine.waitForExit(timeout: Self.promptStop), "ended after stdin closed")
        assertEndedClean(engine, shared: shared)
    }

    // MARK: - WebSockets

    func testAListenSessionOfAHundredMixedCallsEndedBySIGTERMLeavesNothingBehind() throws {
        let media = try media()
        let clip = try SlowRemoteClip(self)
        let engine = try EngineProcess(
            executable: TestEnvironment.binary,
            arguments: ["serve", "--listen", "127.0.0.1:0", "--allow", work.path], environment: environment())
        addTeardownBlock { engine.kill() }
        let url = try XCTUnwrap(try engine.waitFor(timeout: 30, "the url line") { _ in true }["url"]?.string)
        let split = try XCTUnwrap(url.range(of: "/?token="), url)
        let origin = String(url[..<split.lowerBound])
        let token = String(url[split.upperBound...])
        let rpc = "ws://" + origin.dropFirst("http://".count) + "/rpc?token=" + token
        func connect() throws -> RPCSocket { RPCSocket(try WebSocketClient(connectingTo: rpc, origin: origin)) }

        // A slow export whose WebSocket goes away mid-render: stopped by the disconnection.
        let leaving = try connect()
        leaving.request(
            id: 1, "runExport",
            .object([
                ("source", .string(clip.url)), ("output", .string(work.appendingPathComponent("gone.mp4").path)),
                ("workspace", .string(workspace.path)),
            ]))
        _ = try leaving.waitFor(timeout: 60, "a rendering exportProgress") {
            $0["method"]?.string == "exportProgress" && $0["params"]?["stage"]?.string == "rendering"
        }
        leaving.close()
        // Two clients share the rest; the first waits until the slot is free again (cancelExport answers once the
        // export stopped: false once it has).
        let sockets = [try connect(), try connect()]
        let deadline = Date().addingTimeInterval(Self.promptStop)
        var request: Int64 = 1000
        while Date() < deadline {
            request += 1
            if try sockets[0].call(id: request, "cancelExport", nil)["result"]?["cancelled"] == .bool(false) { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        var shared = 0
        var wave: [Int64] = []
        for id in Int64(3)...101 {
            let expected = call(id, media)
            if expected.method == "shareOutput" { shared += 1 }
            sockets[Int(id % 2)].request(id: id, expected.method, expected.params)
            wave.append(id)
            if wave.count == 4 || id == 101 {
                for sent in wave {
                    let answer = try sockets[Int(sent % 2)].waitFor(timeout: 120, "the answer to \(sent)") {
                        $0["id"]?.int == sent
                    }
                    check(answer, call(sent, media))
                }
                wave = []
            }
        }
        // Previews asked without an output answer a url the server serves, and the listing shows the files.
        let preview = try sockets[1].call(id: 102, "renderPreviewFrame", .object([("source", .string(media.photo))]))
        XCTAssertNotNil(preview["result"]?["url"]?.string, preview.serialized)
        XCTAssertEqual(Self.children(of: engine.process.processIdentifier), [], "no process outlived its call")
        kill(engine.process.processIdentifier, SIGTERM)
        XCTAssertTrue(engine.waitForExit(timeout: Self.promptStop), "ended after SIGTERM")
        for socket in sockets { XCTAssertTrue(socket.waitForClose(timeout: 5), "the sockets are closed") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: work.appendingPathComponent("gone.mp4").path))
        assertEndedClean(engine, shared: shared)
    }
}
