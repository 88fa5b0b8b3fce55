// `ftgst studio` end to end (issue 31, item 1): the built binary with its url line, the page over HTTP, the engine
// over a real WebSocket, the browser opened through a stand-in portal on a private session bus or a stand-in
// xdg-open, and the launcher entry through the freedesktop validator. Every wait has a deadline.

import FilmtoneCore
import FilmtoneTestSupport
import Foundation
import SoupKit
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

final class StudioCLITests: XCTestCase {
    private var home: URL!
    private var tools: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        home = try TestEnvironment.temporaryDirectory(self)
        tools = try TestEnvironment.temporaryDirectory(self)
        for folder in ["Videos", "Pictures", ".local/share/ftgst/looks", "runtime"] {
            try FileManager.default.createDirectory(
                at: home.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        let looks = home.appendingPathComponent(".local/share/ftgst/looks")
        for (name, file) in [("Warm.cube", "Three_Dimensional_Table.cube"), ("Demo.cube", "Demo.cube")] {
            try FileManager.default.copyItem(
                at: SharedLUTs.root.appendingPathComponent("colour-science/resolve_cube/\(file)"),
                to: looks.appendingPathComponent(name))
        }
        try Data("not a look".utf8).write(to: looks.appendingPathComponent("notes.txt"))
    }

    /// No desktop unless a test adds one: no session bus, no display.
    private func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        environment["XDG_DATA_HOME"] = nil
        environment["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
        environment["XDG_RUNTIME_DIR"] = home.appendingPathComponent("runtime").path
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + home.appendingPathComponent("no-bus").path
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        environment["PATH"] = tools.path + ":/usr/bin:/bin"
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    private func start(_ arguments: [String], _ extra: [String: String] = [:], nullInput: Bool = false) throws
        -> (EngineProcess, String)
    {
        let engine = try EngineProcess(
            executable: TestEnvironment.binary, arguments: ["studio"] + arguments, environment: environment(extra),
            nullInput: nullInput)
        addTeardownBlock { engine.kill() }
        let first = try engine.waitFor(timeout: 30, "the url line") { _ in true }
        XCTAssertEqual(first.keys, ["url"], first.serialized)
        return (engine, try XCTUnwrap(first["url"]?.string))
    }

    private func socket(_ page: String) throws -> RPCSocket {
        let origin = String(page[..<page.range(of: "/?token=")!.lowerBound])
        let token = page[page.range(of: "?token=")!.upperBound...].prefix(64)
        return RPCSocket(
            try WebSocketClient(
                connectingTo: "ws://" + origin.dropFirst("http://".count) + "/rpc?token=" + token, origin: origin))
    }

    /// The url line, the page, and the engine behind it: `listLooks` lists the looks folder's `.cube` files, and
    /// the default folders (~/Videos, ~/Pictures, the current folder) and the looks folder are the page's.
    func testTheStudioServesItsPageWithTheLooksLibrary() throws {
        let (engine, page) = try start(["--no-open"])
        XCTAssertNotNil(
            page.range(of: #"^http://127\.0\.0\.1:[0-9]+/\?token=[0-9a-f]{64}$"#, options: .regularExpression), page)
        let fetched = try Run.tool("curl", ["-s", "--max-time", "10", "-w", "\n%{http_code}", page], timeout: 20)
        XCTAssertTrue(fetched.stdout.hasSuffix("\n200"), fetched.stdout)
        XCTAssertTrue(fetched.stdout.contains("ftgst studio"), fetched.stdout)

        let rpc = try socket(page)
        let looks = try rpc.call(id: 1, "listLooks", .object([]))
        let listed = looks["result"]?["looks"]?.array?.compactMap { $0["name"]?.string } ?? []
        XCTAssertEqual(listed, ["Demo.cube", "Warm.cube"], looks.serialized)
        XCTAssertEqual(looks["result"]?["dir"]?.string, home.appendingPathComponent(".local/share/ftgst/looks").path)
        let roots = try rpc.call(id: 2, "listFiles", .object([]))
        let folders = roots["result"]?["entries"]?.array?.compactMap { $0["path"]?.string } ?? []
        for folder in ["Videos", "Pictures", ".local/share/ftgst/looks"] {
            XCTAssertTrue(folders.contains(home.appendingPathComponent(folder).path), "\(folder): \(folders)")
        }
        XCTAssertTrue(folders.contains(FileManager.default.currentDirectoryPath), "the current folder: \(folders)")
        // A look of the library renders a preview: the page may read the folder.
        let clip = home.appendingPathComponent("Videos/clip.mp4")
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: clip.path)
        let preview = try rpc.call(
            id: 3, "renderPreviewFrame",
            .object([
                ("source", .string(clip.path)), ("timeMs", .int(500)), ("maxWidth", .int(160)),
                ("maxHeight", .int(160)),
                ("creativeLut", .string(looks["result"]?["looks"]?.array?.last?["path"]?.string ?? "")),
            ]))
        XCTAssertNotNil(preview["result"], preview.serialized)

        engine.closeInput()
        XCTAssertTrue(engine.waitForExit(timeout: 20))
        XCTAssertEqual(engine.exitStatus, 0, engine.stderr)
    }

    /// `renderStoryboard`: the sheets served like previews, and the WebVTT text whose cues name them, a tile every
    /// `everyMs` over the clip; a source outside the page's folders is refused.
    func testTheStoryboardIsServedWithCuesNamingItsSheets() throws {
        let clip = home.appendingPathComponent("Videos/clip.mp4")
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: clip.path)
        let (engine, page) = try start(["--no-open"])
        let rpc = try socket(page)
        let answer = try rpc.call(
            id: 1, "renderStoryboard",
            .object([
                ("source", .string(clip.path)), ("everyMs", .int(500)), ("tileWidth", .int(80)),
                ("toleranceMs", .int(250)),
            ]))
        let result = try XCTUnwrap(answer["result"], answer.serialized)
        XCTAssertEqual(result["tiles"]?.int, 6, "3 s, one every 500 ms")
        let sheet = try XCTUnwrap(result["sheets"]?.array?.first?["url"]?.string)
        let saved = home.appendingPathComponent("sheet.jpg")
        let fetched = try Run.tool("curl", ["-s", "--max-time", "10", "-o", saved.path, sheet], timeout: 20)
        XCTAssertEqual(fetched.status, 0, fetched.stderr)
        XCTAssertEqual(Array(try Data(contentsOf: saved).prefix(2)), [0xFF, 0xD8], "a JPEG")
        let vtt = try XCTUnwrap(result["vtt"]?.string)
        XCTAssertTrue(vtt.hasPrefix("WEBVTT"), vtt)
        XCTAssertTrue(vtt.contains("00:00:01.000 --> 00:00:01.500\n\(sheet)#xywh=160,0,80,60\n"), vtt)
        XCTAssertFalse(vtt.contains("sheet-001.jpg"), "every cue names the served sheet")

        let elsewhere = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("clip.mp4")
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: elsewhere.path)
        let outside = try rpc.call(
            id: 2, "renderStoryboard", .object([("source", .string(elsewhere.path)), ("everyMs", .int(500))]))
        XCTAssertEqual(outside["error"]?["data"]?["code"]?.string, "INVALID_ARGUMENT", outside.serialized)
        engine.closeInput()
        XCTAssertTrue(engine.waitForExit(timeout: 20))
    }

    /// `ftgst studio FILE` (a file manager's Open with): the page's URL names it as `source`, and its folder,
    /// though none of the defaults, is the page's to read.
    func testAFileGivenIsThePagesSourceAndItsFolderIsAllowed() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let clip = folder.appendingPathComponent("phone clip.mp4")
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: clip.path)
        let (engine, page) = try start(["--no-open", clip.path])
        let query = try XCTUnwrap(URLComponents(string: page)?.queryItems)
        XCTAssertEqual(query.first { $0.name == "source" }?.value, clip.path)
        let probe = try socket(page).call(id: 1, "probeSource", .object([("uri", .string(clip.path))]))
        XCTAssertEqual(probe["result"]?["video"]?["width"]?.int, 320, probe.serialized)
        engine.closeInput()
        XCTAssertTrue(engine.waitForExit(timeout: 20))
    }

    /// The page opens in the default browser: through the portal's `OpenURI.OpenURI` when there is a session bus
    /// (a stand-in portal on a private bus), else through `xdg-open` with a display (a stand-in that records it).
    func testThePageOpensThroughThePortalElseXdgOpen() throws {
        let record = tools.appendingPathComponent("xdg-open.txt")
        let script = tools.appendingPathComponent("xdg-open")
        try Data("#!/bin/sh\nprintf '%s' \"$1\" > '\(record.path)'\n".utf8).write(to: script)
        chmod(script.path, 0o755)

        let (first, page) = try start([], ["DISPLAY": ":99"])
        XCTAssertTrue(
            try waitUntil(timeout: 20) { (try? String(contentsOf: record, encoding: .utf8)) == page },
            "xdg-open got the page: \(first.stderr)")

        try FileManager.default.removeItem(at: record)
        let bus = try PrivateSessionBus(self)
        let portal = try bus.startMock(
            self, template: "portal", name: "org.freedesktop.portal.Desktop", parameters: ["interfaces": ["OpenURI"]])
        let (second, secondPage) = try start([], ["DBUS_SESSION_BUS_ADDRESS": bus.address, "DISPLAY": ":99"])
        XCTAssertTrue(try waitUntil(timeout: 20) { !portal.calls("OpenURI.OpenURI").isEmpty }, second.stderr)
        let arguments = portal.calls("OpenURI.OpenURI").first?["args"] as? [Any] ?? []
        XCTAssertEqual(arguments.count, 3)
        XCTAssertEqual(arguments.dropFirst().first as? String, secondPage, "the page itself, not a file")
        XCTAssertFalse(FileManager.default.fileExists(atPath: record.path), "xdg-open must not run after the portal")
    }

    /// `showInFolder`: an export's folder through the portal's `OpenURI.OpenDirectory` (the file as a descriptor, on
    /// a stand-in portal); a missing file is `FILE_NOT_FOUND`, one outside the page's folders `INVALID_ARGUMENT`.
    func testShowInFolderHandsTheFileToThePortal() throws {
        let clip = home.appendingPathComponent("Videos/out.mp4")
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: clip.path)
        let bus = try PrivateSessionBus(self)
        let portal = try bus.startMock(
            self, template: "portal", name: "org.freedesktop.portal.Desktop", parameters: ["interfaces": ["OpenURI"]])
        let (_, page) = try start(["--no-open"], ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        let rpc = try socket(page)
        let shown = try rpc.call(id: 1, "showInFolder", .object([("uri", .string(clip.path))]))
        XCTAssertEqual(shown["result"]?["handler"]?.string, "portal", shown.serialized)
        XCTAssertEqual(shown["result"]?["folder"]?.string, clip.deletingLastPathComponent().path)
        let call = try XCTUnwrap(portal.calls("OpenURI.OpenDirectory").first)
        XCTAssertEqual((call["args"] as? [Any])?[1] as? String, clip.path, "the file itself, as a descriptor")
        let missing = try rpc.call(
            id: 2, "showInFolder", .object([("uri", .string(home.appendingPathComponent("Videos/none.mp4").path))]))
        XCTAssertEqual(missing["error"]?["data"]?["code"]?.string, "FILE_NOT_FOUND", missing.serialized)
        let outside = try rpc.call(id: 3, "showInFolder", .object([("uri", .string("/etc/hostname"))]))
        XCTAssertEqual(outside["error"]?["data"]?["code"]?.string, "INVALID_ARGUMENT", outside.serialized)
    }

    /// The new methods' refusals, as the page sees them: `showInFolder` with no desktop at all (no session bus, no
    /// display) is `SHARE_UNAVAILABLE`; `renderStoryboard` without `everyMs` and `listLooks` with params are
    /// `INVALID_ARGUMENT`, each `[CODE] message`.
    func testTheStudioMethodsRefusalsCarryTheirCodes() throws {
        let clip = home.appendingPathComponent("Videos/out.mp4")
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: clip.path)
        let (_, page) = try start(["--no-open"])
        let rpc = try socket(page)
        let cases: [(String, JSONValue, String)] = [
            ("showInFolder", .object([("uri", .string(clip.path))]), "SHARE_UNAVAILABLE"),
            ("renderStoryboard", .object([("source", .string(clip.path))]), "INVALID_ARGUMENT"),
            ("listLooks", .object([("dir", .string(home.path))]), "INVALID_ARGUMENT"),
        ]
        for (index, (method, params, code)) in cases.enumerated() {
            let answer = try rpc.call(id: Int64(index + 1), method, params)
            XCTAssertEqual(answer["error"]?["data"]?["code"]?.string, code, "\(method): \(answer.serialized)")
            XCTAssertTrue(
                answer["error"]?["message"]?.string?.hasPrefix("[\(code)] ") == true, "\(method): \(answer.serialized)")
        }
    }

    /// Started by a desktop's launcher, stdin is /dev/null: the studio stays up (its end would close a stdio
    /// channel at once) until SIGTERM, which ends it with status 0.
    func testWithoutAChannelOnStdinItRunsUntilSIGTERM() throws {
        let (engine, _) = try start(["--no-open"], nullInput: true)
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertNil(engine.exitStatus, "still running with stdin at its end: \(engine.stderr)")
        kill(engine.process.processIdentifier, SIGTERM)
        XCTAssertTrue(engine.waitForExit(timeout: 20))
        XCTAssertEqual(engine.exitStatus, 0, engine.stderr)
    }

    /// A missing file is `FILE_NOT_FOUND`, a URL `INVALID_URL`, before anything listens.
    func testAMissingFileOrAURLIsRefused() throws {
        let missing = try Run.ftgst(["studio", "--no-open", home.appendingPathComponent("none.mp4").path])
        assertFailure(missing, code: "FILE_NOT_FOUND", status: 66)
        let remote = try Run.ftgst(["studio", "--no-open", "https://example.com/clip.mp4"])
        assertFailure(remote, code: "INVALID_URL", status: 65)
    }

    /// The launcher entry passes the freedesktop validator and runs `ftgst studio` with the file.
    func testTheLauncherEntryIsValid() throws {
        let entry = TestEnvironment.packageRoot.appendingPathComponent("data/ftgst-studio.desktop").path
        let validated = try Run.tool("desktop-file-validate", [entry])
        XCTAssertEqual(validated.status, 0, validated.stdout + validated.stderr)
        let text = try String(contentsOfFile: entry, encoding: .utf8)
        XCTAssertTrue(text.contains("\nExec=ftgst studio %f\n"), text)
        XCTAssertTrue(text.contains("video/quicktime;") && text.contains("image/jpeg;"), text)
    }

    private func waitUntil(timeout: TimeInterval, _ condition: () throws -> Bool) throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return true }
            usleep(50_000)
        }
        return try condition()
    }
}
