import FilmtoneCore
import FilmtoneTestSupport
import Foundation
import SoupKit
import XCTest

/// `ftgst pick` and the engine's `pickSource`/`pickLutFile` through a real D-Bus session bus of the test's own,
/// against a python-dbusmock stand-in for xdg-desktop-portal (`Tests/Resources/desktop/portal.py`) that records
/// each call and answers as the test asks: a pick, a cancel, a chooser left open, a portal that never answers, no
/// portal at all.
final class PickCLITests: XCTestCase {
    private var work: URL!
    private var state: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        work = try TestEnvironment.temporaryDirectory(self)
        state = try TestEnvironment.temporaryDirectory(self)
    }

    /// A file with a space and a non-ASCII letter in its name, and its percent-encoded `file://` URI.
    private func chosenFile(_ name: String = "holiday é.mp4") throws -> (path: String, uri: String) {
        let path = work.appendingPathComponent(name).path
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: path)
        let encoded = path.addingPercentEncoding(
            withAllowedCharacters: .urlPathAllowed.subtracting(.init(charactersIn: "'")))!
        return (path, "file://" + encoded)
    }

    private func pick(_ bus: PrivateSessionBus, _ arguments: [String]) throws -> ProcessResult {
        var env = bus.environment
        env["XDG_STATE_HOME"] = state.path
        return try Run.ftgst(["pick"] + arguments, environment: env, timeout: 60)
    }

    private func options(of call: [String: Any]?) -> [String: Any] {
        ((call?["args"] as? [Any])?.last as? [String: Any]) ?? [:]
    }

    func testAPickThroughThePortalPrintsTheFileAndTheNextOpensInItsFolder() throws {
        let bus = try PrivateSessionBus(self)
        let file = try chosenFile()
        let portal = try bus.startMock(
            self, template: "portal", name: "org.freedesktop.portal.Desktop", parameters: ["uris": [file.uri]])

        let first = try pick(bus, ["source"])
        XCTAssertEqual(first.status, 0, first.stderr)
        let json = try first.json()
        XCTAssertEqual(json["path"] as? String, file.path)
        XCTAssertEqual(json["uri"] as? String, file.uri)
        XCTAssertEqual(json["handler"] as? String, "portal")

        let calls = portal.calls("FileChooser.OpenFile")
        XCTAssertEqual(calls.count, 1)
        let sent = options(of: calls.first)
        XCTAssertEqual((calls.first?["args"] as? [Any])?.first as? String, "", "no parent window")
        XCTAssertTrue((sent["handle_token"] as? String ?? "").hasPrefix("ftgst_"), "\(sent)")
        XCTAssertEqual(sent["multiple"] as? Bool, false)
        // Videos and photos by MIME type.
        let filters = sent["filters"] as? [[Any]] ?? []
        XCTAssertEqual(filters.first?.first as? String, "Videos and photos")
        XCTAssertEqual((filters.first?.last as? [[Any]])?.map { $0.last as? String }, ["video/*", "image/*"])
        XCTAssertEqual((filters.first?.last as? [[Any]])?.map { $0.first as? Int }, [1, 1], "1: a MIME type")
        XCTAssertNil(sent["current_folder"], "no folder chosen before")

        let second = try pick(bus, ["source"])
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertEqual(
            options(of: portal.calls("FileChooser.OpenFile").last)["current_folder"] as? String, work.path,
            "the last pick's folder, as the portal's byte string")
    }

    func testALookPickFiltersCubeFiles() throws {
        let bus = try PrivateSessionBus(self)
        let look = work.appendingPathComponent("look.cube").path
        try Data("LUT_3D_SIZE 2\n".utf8).write(to: URL(fileURLWithPath: look))
        let portal = try bus.startMock(
            self, template: "portal", name: "org.freedesktop.portal.Desktop", parameters: ["uris": ["file://" + look]])
        let result = try pick(bus, ["lut", "--title", "Choose the input look"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try result.json()["path"] as? String, look)
        let call = portal.calls("FileChooser.OpenFile").first
        XCTAssertEqual((call?["args"] as? [Any])?[1] as? String, "Choose the input look")
        let filters = options(of: call)["filters"] as? [[Any]] ?? []
        XCTAssertEqual(filters.count, 1)
        XCTAssertEqual((filters.first?.last as? [[Any]])?.map { $0.last as? String }, ["*.cube", "*.CUBE"])
        XCTAssertEqual((filters.first?.last as? [[Any]])?.map { $0.first as? Int }, [0, 0], "0: a glob")
    }

    func testACancelledPickPrintsNullAndExitsWithOne() throws {
        let bus = try PrivateSessionBus(self)
        _ = try bus.startMock(
            self, template: "portal", name: "org.freedesktop.portal.Desktop", parameters: ["response": 1])
        let result = try pick(bus, ["source"])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertEqual(result.stdout, "null\n")
        XCTAssertEqual(result.stderr, "")
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: state.appendingPathComponent("ftgst/pick-folders.json").path),
            "a cancel remembers no folder")
    }

    func testAChooserLeftOpenIsClosedAtTheDeadline() throws {
        let bus = try PrivateSessionBus(self)
        let portal = try bus.startMock(
            self, template: "portal", name: "org.freedesktop.portal.Desktop", parameters: ["delay_ms": -1])
        let result = try pick(bus, ["source", "--timeout-ms", "1000"])
        assertFailure(result, code: "CANCELLED", status: 130)
        XCTAssertTrue(result.stderr.contains("no file was chosen within 1000 ms"), result.stderr)
        XCTAssertTrue(portal.called("Close"), "the request is withdrawn (Request.Close): \(portal.lines)")
    }

    func testAPortalThatNeverAnswersIsNotSupportedWithinSeconds() throws {
        let bus = try PrivateSessionBus(self)
        _ = try bus.startMock(
            self, template: "portal", name: "org.freedesktop.portal.Desktop", parameters: ["file_chooser": "hang"])
        let result = try pick(bus, ["source"])
        assertFailure(result, code: "NOT_SUPPORTED", status: 79)
        XCTAssertTrue(result.stderr.contains("no answer within 5000 ms"), result.stderr)
        XCTAssertTrue(result.stderr.contains("no display for zenity or kdialog"), result.stderr)
    }

    func testNoPortalOrNoBusIsNotSupportedAtOnce() throws {
        let bus = try PrivateSessionBus(self)
        let result = try pick(bus, ["lut"])
        assertFailure(result, code: "NOT_SUPPORTED", status: 79)
        XCTAssertTrue(result.stderr.contains("org.freedesktop.DBus.Error.ServiceUnknown"), result.stderr)

        let noBus = try Run.ftgst(
            ["pick", "source"],
            environment: [
                "DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": work.path, "DISPLAY": "", "WAYLAND_DISPLAY": "",
            ])
        assertFailure(noBus, code: "NOT_SUPPORTED", status: 79)
        XCTAssertTrue(noBus.stderr.contains("no session bus"), noBus.stderr)
    }

    /// No portal but a display: zenity (a stand-in on PATH speaking its protocol: the path on stdout and exit 0, exit
    /// 1 and nothing on stderr for a cancel, exit 1 with a message when it cannot open the display).
    /// A stand-in `zenity` first on `PATH` (it writes its arguments to `record`, a line each, then runs what
    /// `standIn` last gave it), and the environment to run `ftgst pick` in: `bus`'s, with a display.
    private func zenityStandIn(_ bus: PrivateSessionBus) throws -> (
        env: [String: String], record: URL, standIn: (String) throws -> Void
    ) {
        let tools = try TestEnvironment.temporaryDirectory(self)
        let record = tools.appendingPathComponent("arguments.txt")
        let zenity = tools.appendingPathComponent("zenity")
        var env = bus.environment
        env["XDG_STATE_HOME"] = state.path
        env["DISPLAY"] = ":99"
        env["PATH"] = tools.path + ":/usr/bin:/bin"
        return (
            env, record,
            { body in
                try Data("#!/bin/sh\nprintf '%s\\n' \"$@\" > '\(record.path)'\n\(body)\n".utf8).write(to: zenity)
                chmod(zenity.path, 0o755)
            }
        )
    }

    func testWithoutAPortalZenityAsksWhereThereIsADisplay() throws {
        let bus = try PrivateSessionBus(self)
        let file = try chosenFile()
        let (env, record, standIn) = try zenityStandIn(bus)

        try standIn("echo '\(file.path)'")
        let picked = try Run.ftgst(["pick", "source", "--folder", work.path], environment: env)
        XCTAssertEqual(picked.status, 0, picked.stderr)
        XCTAssertEqual(try picked.json()["handler"] as? String, "zenity")
        XCTAssertEqual(try picked.json()["path"] as? String, file.path)
        let arguments = try String(contentsOf: record, encoding: .utf8).split(separator: "\n").map(String.init)
        XCTAssertEqual(arguments.first, "--file-selection")
        XCTAssertTrue(arguments.contains("--filename=\(work.path)/"), "\(arguments)")
        let filter = arguments.first { $0.hasPrefix("--file-filter=Videos and photos | ") } ?? ""
        XCTAssertTrue(filter.contains("*.mov") && filter.contains("*.jpg"), filter)

        try standIn("exit 1")
        let cancelled = try Run.ftgst(["pick", "lut"], environment: env)
        XCTAssertEqual(cancelled.status, 1, cancelled.stderr)
        XCTAssertEqual(cancelled.stdout, "null\n")

        try standIn("echo 'cannot open display: :99' >&2; exit 1")
        let failed = try Run.ftgst(["pick", "lut"], environment: env)
        assertFailure(failed, code: "NOT_SUPPORTED", status: 79)
        XCTAssertTrue(failed.stderr.contains("zenity failed"), failed.stderr)
        XCTAssertTrue(failed.stderr.contains("cannot open display"), failed.stderr)
    }

    func testDesktopTakesNoArguments() throws {
        assertFailure(try Run.ftgst(["desktop", "extra"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try Run.ftgst(["desktop", "--verbose"]), code: "INVALID_ARGUMENT", status: 64)
    }

    func testAPickWithABadKindIsAUsageError() throws {
        assertFailure(try Run.ftgst(["pick", "movie"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try Run.ftgst(["pick"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try Run.ftgst(["pick", "lut", "--timeout-ms", "0"]), code: "INVALID_ARGUMENT", status: 64)
    }

    /// `pick folder`: the portal's chooser with `directory` set and no file filters; zenity with `--directory`. A
    /// chooser that answers a file instead of a folder is `FILE_NOT_FOUND`, as a folder that is not there.
    func testAFolderPickAsksForAFolder() throws {
        let bus = try PrivateSessionBus(self)
        let folder = work.appendingPathComponent("Clips é")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let uri = "file://" + folder.path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)!
        let file = try chosenFile()
        let portal = try bus.startMock(
            self, template: "portal", name: "org.freedesktop.portal.Desktop",
            parameters: ["answers": [[uri], [file.uri]]])
        let picked = try pick(bus, ["folder"])
        XCTAssertEqual(picked.status, 0, picked.stderr)
        XCTAssertEqual(try picked.json()["path"] as? String, folder.path)
        XCTAssertEqual(try picked.json()["handler"] as? String, "portal")
        let call = portal.calls("FileChooser.OpenFile").first
        XCTAssertEqual((call?["args"] as? [Any])?[1] as? String, "Choose a folder")
        XCTAssertEqual(options(of: call)["directory"] as? Bool, true)
        XCTAssertNil(options(of: call)["filters"], "a folder chooser filters no files")
        assertFailure(try pick(bus, ["folder"]), code: "FILE_NOT_FOUND", status: 66)

        portal.stop()
        let (env, record, standIn) = try zenityStandIn(bus)
        try standIn("echo '\(folder.path)'")
        let fallback = try Run.ftgst(["pick", "folder"], environment: env)
        XCTAssertEqual(fallback.status, 0, fallback.stderr)
        XCTAssertEqual(try fallback.json()["handler"] as? String, "zenity")
        let arguments = try String(contentsOf: record, encoding: .utf8).split(separator: "\n").map(String.init)
        XCTAssertEqual(Array(arguments.prefix(3)), ["--file-selection", "--title=Choose a folder", "--directory"])
        XCTAssertFalse(arguments.contains { $0.hasPrefix("--file-filter") }, "\(arguments)")
    }

    // MARK: - The engine

    func testTheEnginesPickersAnswerTheFileOrNull() throws {
        let bus = try PrivateSessionBus(self)
        let file = try chosenFile("look one.cube")
        var env = ProcessInfo.processInfo.environment
        for (key, value) in bus.environment { env[key] = value }
        env["XDG_STATE_HOME"] = state.path
        env["XDG_RUNTIME_DIR"] = work.path
        let portal = try bus.startMock(
            self, template: "portal", name: "org.freedesktop.portal.Desktop", parameters: ["uris": [file.uri]])
        let engine = try EngineProcess(executable: TestEnvironment.binary, arguments: ["serve"], environment: env)
        addTeardownBlock { engine.kill() }

        engine.request(id: 1, "pickLutFile", .object([("slot", .string("creativeLut"))]))
        let lut = try engine.response(id: 1)["result"]
        XCTAssertEqual(lut?["slot"]?.string, "creativeLut", engine.stderr)
        XCTAssertEqual(lut?["uri"]?.string, file.uri)
        XCTAssertEqual(lut?["path"]?.string, file.path)
        engine.request(id: 2, "pickSource", .object([("title", .string("Open a clip"))]))
        XCTAssertEqual(try engine.response(id: 2)["result"]?["uri"]?.string, file.uri)
        XCTAssertEqual(portal.calls("FileChooser.OpenFile").count, 2)
        XCTAssertEqual((portal.calls("FileChooser.OpenFile").last?["args"] as? [Any])?[1] as? String, "Open a clip")

        portal.stop()
        _ = try bus.startMock(
            self, template: "portal", name: "org.freedesktop.portal.Desktop", parameters: ["response": 1])
        engine.request(id: 3, "pickSource", .object([]))
        let cancelled = try engine.response(id: 3)
        XCTAssertEqual(cancelled["result"], .null, cancelled.serialized)
        XCTAssertNil(cancelled["error"])
        engine.request(id: 4, "pickLutFile", .object([("slot", .string("look"))]))
        XCTAssertEqual(try engine.response(id: 4)["error"]?["data"]?["code"]?.string, "INVALID_ARGUMENT")
    }

    /// The engine's pickers refuse a title that is not one short line and a deadline that is not positive, before
    /// asking anyone (the stand-in portal sees no call).
    func testTheEnginesPickersRefuseBadParams() throws {
        let bus = try PrivateSessionBus(self)
        let portal = try bus.startMock(self, template: "portal", name: "org.freedesktop.portal.Desktop")
        var env = ProcessInfo.processInfo.environment
        for (key, value) in bus.environment { env[key] = value }
        env["XDG_RUNTIME_DIR"] = work.path
        let engine = try EngineProcess(executable: TestEnvironment.binary, arguments: ["serve"], environment: env)
        addTeardownBlock { engine.kill() }
        let cases: [(JSONValue, String)] = [
            (.object([("title", .string("two\nlines"))]), "'title' must be one line"),
            (.object([("title", .string(String(repeating: "x", count: 201)))]), "'title' must be one line"),
            (.object([("timeoutMs", .int(0))]), "'timeoutMs' must be positive"),
        ]
        for (index, (params, message)) in cases.enumerated() {
            engine.request(id: Int64(index + 1), "pickSource", params)
            let error = try engine.response(id: Int64(index + 1))["error"]
            XCTAssertEqual(error?["data"]?["code"]?.string, "INVALID_ARGUMENT", "\(params.serialized)")
            XCTAssertEqual(error?["code"]?.int, -32602)
            XCTAssertTrue(error?["message"]?.string?.contains(message) ?? false, "\(String(describing: error))")
        }
        XCTAssertTrue(portal.calls("FileChooser.OpenFile").isEmpty)
    }

    /// `ftgst serve --listen` allowing `work`, on `bus` with a stand-in portal whose chooser answers `portalAnswer`,
    /// and two WebSocket connections to it (stopped at teardown).
    private func twoConnections(_ bus: PrivateSessionBus, portalAnswer: String) throws -> (RPCSocket, RPCSocket) {
        _ = try bus.startMock(
            self, template: "portal", name: "org.freedesktop.portal.Desktop", parameters: ["uris": [portalAnswer]])
        var env = ProcessInfo.processInfo.environment
        for (key, value) in bus.environment { env[key] = value }
        env["XDG_STATE_HOME"] = state.path
        env["XDG_RUNTIME_DIR"] = state.path
        let engine = try EngineProcess(
            executable: TestEnvironment.binary, arguments: ["serve", "--listen", "127.0.0.1:0", "--allow", work.path],
            environment: env)
        addTeardownBlock { engine.kill() }
        let page = try XCTUnwrap(try engine.waitFor(timeout: 30, "the url line") { _ in true }["url"]?.string)
        let origin = String(page[..<page.range(of: "/?token=")!.lowerBound])
        let token = String(page[page.range(of: "?token=")!.upperBound...])
        let rpc = "ws://" + origin.dropFirst("http://".count) + "/rpc?token=" + token
        return (
            RPCSocket(try WebSocketClient(connectingTo: rpc, origin: origin)),
            RPCSocket(try WebSocketClient(connectingTo: rpc, origin: origin))
        )
    }

    /// A WebSocket client may name only files inside `--allow`, except a file its own user picked: that one, by
    /// that connection, and no other file beside it nor another connection.
    func testAPickedFileOutsideTheAllowedFoldersIsUsableByThatConnectionOnly() throws {
        let bus = try PrivateSessionBus(self)
        let outside = try TestEnvironment.temporaryDirectory(self)
        let picked = outside.appendingPathComponent("picked.mp4").path
        let beside = outside.appendingPathComponent("beside.mp4").path
        for path in [picked, beside] {
            try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: path)
        }
        let (first, second) = try twoConnections(bus, portalAnswer: "file://" + picked)
        func probe(_ socket: RPCSocket, id: Int64, _ path: String) throws -> JSONValue {
            try socket.call(id: id, "probeSource", .object([("uri", .string(path))]))
        }

        XCTAssertEqual(try probe(first, id: 1, picked)["error"]?["data"]?["code"]?.string, "INVALID_ARGUMENT")
        XCTAssertEqual(try first.call(id: 2, "pickSource", .object([]))["result"]?["path"]?.string, picked)
        XCTAssertEqual(try probe(first, id: 3, picked)["result"]?["durationMs"]?.int, 3000, "the user chose it")
        XCTAssertEqual(
            try probe(first, id: 4, beside)["error"]?["data"]?["code"]?.string, "INVALID_ARGUMENT", "only that file")
        XCTAssertEqual(
            try probe(second, id: 5, picked)["error"]?["data"]?["code"]?.string, "INVALID_ARGUMENT",
            "only for the connection whose user chose it")
    }

    /// `pickFolder`: the folder the user chose is listed with the allowed ones and everything inside it may be
    /// named, by that connection alone; a folder beside it stays out.
    func testAPickedFolderIsListedAndUsableByThatConnectionOnly() throws {
        let bus = try PrivateSessionBus(self)
        let outside = try TestEnvironment.temporaryDirectory(self)
        let folder = outside.appendingPathComponent("Holiday")
        let beside = outside.appendingPathComponent("Other")
        for dir in [folder, beside] {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: try TestEnvironment.fixture("clip.mp4"), toPath: dir.appendingPathComponent("clip.mp4").path)
        }
        let real = folder.resolvingSymlinksInPath().path
        let (first, second) = try twoConnections(bus, portalAnswer: "file://" + folder.path)
        func roots(_ socket: RPCSocket, id: Int64) throws -> [String] {
            let listing = try socket.call(id: id, "listFiles", .object([]))
            return listing["result"]?["entries"]?.array?.compactMap { $0["path"]?.string } ?? []
        }
        func probe(_ socket: RPCSocket, id: Int64, _ path: String) throws -> JSONValue {
            try socket.call(id: id, "probeSource", .object([("uri", .string(path))]))
        }
        let inside = folder.appendingPathComponent("clip.mp4").path

        XCTAssertEqual(try probe(first, id: 1, inside)["error"]?["data"]?["code"]?.string, "INVALID_ARGUMENT")
        let picked = try first.call(id: 2, "pickFolder", .object([]))
        XCTAssertEqual(picked["result"]?["path"]?.string, folder.path, picked.serialized)
        XCTAssertEqual(try roots(first, id: 3), [work.resolvingSymlinksInPath().path, real])
        XCTAssertEqual(try probe(first, id: 4, inside)["result"]?["durationMs"]?.int, 3000, "inside the chosen folder")
        let listing = try first.call(id: 5, "listFiles", .object([("dir", .string(folder.path))]))
        XCTAssertEqual(listing["result"]?["entries"]?.array?.first?["path"]?.string, real + "/clip.mp4")
        XCTAssertEqual(
            try probe(first, id: 6, beside.appendingPathComponent("clip.mp4").path)["error"]?["data"]?["code"]?
                .string, "INVALID_ARGUMENT", "not the folder beside it")
        XCTAssertEqual(try roots(second, id: 7), [work.resolvingSymlinksInPath().path])
        XCTAssertEqual(
            try probe(second, id: 8, inside)["error"]?["data"]?["code"]?.string, "INVALID_ARGUMENT",
            "only for the connection whose user chose it")
        let bad = try first.call(id: 9, "pickFolder", .object([("slot", .string("x"))]))
        XCTAssertEqual(bad["error"]?["data"]?["code"]?.string, "INVALID_ARGUMENT", bad.serialized)
    }

    // MARK: - What the desktop offers

    func testDesktopSaysWhatTheSessionServes() throws {
        let bus = try PrivateSessionBus(self)
        _ = try bus.startMock(
            self, template: "portal", name: "org.freedesktop.portal.Desktop",
            parameters: ["interfaces": ["Notification", "OpenURI"]])
        _ = try bus.startMock(self, template: "notification_daemon", name: "org.freedesktop.Notifications")
        var env = bus.environment
        env["PATH"] = "/usr/bin:/bin"
        let result = try Run.ftgst(["desktop"], environment: env)
        XCTAssertEqual(result.status, 0, result.stderr)
        let json = try result.json()
        XCTAssertEqual(json["sessionBus"] as? Bool, true)
        XCTAssertEqual(
            json["portal"] as? [String: Int], ["FileChooser": 4, "Notification": 1, "OpenURI": 1],
            "the interfaces served, not Inhibit or MemoryMonitor")
        let server = try XCTUnwrap(json["notificationServer"] as? [String: Any])
        XCTAssertFalse((server["name"] as? String ?? "").isEmpty, "\(server)")
        XCTAssertTrue((server["capabilities"] as? [String] ?? []).contains("body"), "\(server)")
        XCTAssertEqual(json["display"] as? Bool, false)
        XCTAssertNotNil(json["programs"] as? [String: Any])

        // The engine's `desktop` answers the same object.
        var engineEnv = ProcessInfo.processInfo.environment
        for (key, value) in env { engineEnv[key] = value }
        engineEnv["XDG_RUNTIME_DIR"] = work.path
        let engine = try EngineProcess(executable: TestEnvironment.binary, arguments: ["serve"], environment: engineEnv)
        addTeardownBlock { engine.kill() }
        engine.request(id: 1, "desktop", nil)
        let answer = try engine.response(id: 1)["result"]
        XCTAssertEqual(answer?["portal"]?["FileChooser"]?.int, 4, engine.stderr)
        XCTAssertEqual(answer?["sessionBus"], .bool(true))

        let alone = try Run.ftgst(
            ["desktop"], environment: ["DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": work.path])
        XCTAssertEqual(alone.status, 0, alone.stderr)
        XCTAssertEqual(try alone.json()["sessionBus"] as? Bool, false)
        XCTAssertEqual(try alone.json()["portal"] as? [String: Int], [:])
    }
}
