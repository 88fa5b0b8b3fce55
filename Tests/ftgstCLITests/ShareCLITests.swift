import FilmtoneTestSupport
import Foundation
import XCTest

/// `ftgst share` end to end through the built binary, with a stand-in `xdg-open` on PATH, a stand-in portal on a
/// private session bus, and a controlled environment: the URI, which handler is chosen, what it receives,
/// failures, time-outs, no desktop.
final class ShareCLITests: XCTestCase {
    private var folder: URL!
    private var tools: URL!
    private var record: URL!
    private var file: URL!

    override func setUpWithError() throws {
        folder = try TestEnvironment.temporaryDirectory(self)
        tools = folder.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: tools, withIntermediateDirectories: true)
        record = folder.appendingPathComponent("record.txt")
        file = folder.appendingPathComponent("my look #1.mp4")
        try Data("export".utf8).write(to: file)
    }

    private var expectedURI: String {
        "file://" + file.path.replacingOccurrences(of: " ", with: "%20").replacingOccurrences(of: "#", with: "%23")
    }

    // MARK: - URI

    func testPrintGivesThePercentEncodedURIAndRunsNoHandler() throws {
        try standIn("xdg-open", "#!/bin/sh\necho \"$@\" > '\(record.path)'\n")
        let result = try share([file.path, "--print"], ["DISPLAY": ":99"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        XCTAssertEqual(result.stdout, "{\"uri\":\"\(expectedURI)\"}\n")
        XCTAssertEqual(URL(string: expectedURI)?.path, file.path)
        XCTAssertFalse(FileManager.default.fileExists(atPath: record.path))
    }

    func testPrintResolvesARelativePath() throws {
        let result = try Run.process(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "cd '\(folder.path)' && exec '\(TestEnvironment.binary.path)' share --print './my look #1.mp4'"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "{\"uri\":\"\(expectedURI)\"}\n")
    }

    // MARK: - Handlers

    func testXdgOpenGetsTheURIWhenThereIsADisplay() throws {
        try standIn("xdg-open", "#!/bin/sh\nprintf '%s\\n' \"$#\" \"$@\" > '\(record.path)'\n")
        let result = try share([file.path], ["DISPLAY": ":99"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "{\"uri\":\"\(expectedURI)\",\"handler\":\"xdg-open\"}\n")
        XCTAssertEqual(try String(contentsOf: record, encoding: .utf8), "1\n\(expectedURI)\n")
    }

    func testWaylandDisplayCountsAsADisplay() throws {
        try standIn("xdg-open", "#!/bin/sh\nexit 0\n")
        let result = try share([file.path], ["WAYLAND_DISPLAY": "wayland-0"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try result.json()["handler"] as? String, "xdg-open")
    }

    /// With a session bus, the portal's `OpenURI.OpenFile` gets the file as an open descriptor, with `ask` (its
    /// application chooser), through a real bus to a stand-in portal; xdg-open is not run.
    func testThePortalGetsTheFileAsADescriptorAndAsks() throws {
        let bus = try PrivateSessionBus(self)
        let portal = try bus.startMock(
            self, template: "portal", name: "org.freedesktop.portal.Desktop", parameters: ["interfaces": ["OpenURI"]])
        let xdgRecord = folder.appendingPathComponent("xdg.txt")
        try standIn("xdg-open", "#!/bin/sh\necho \"$@\" > '\(xdgRecord.path)'\n")
        let result = try share([file.path], ["DBUS_SESSION_BUS_ADDRESS": bus.address, "DISPLAY": ":99"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "{\"uri\":\"\(expectedURI)\",\"handler\":\"portal\"}\n")
        let call = try XCTUnwrap(portal.calls("OpenURI.OpenFile").first)
        let arguments = call["args"] as? [Any] ?? []
        XCTAssertEqual(arguments.first as? String, "", "no parent window")
        XCTAssertEqual(arguments[1] as? String, file.path, "the file itself, as a descriptor")
        XCTAssertEqual((arguments.last as? [String: Any])?["ask"] as? Bool, true, "the application chooser")
        XCTAssertFalse(FileManager.default.fileExists(atPath: xdgRecord.path), "xdg-open must not run after the portal")
    }

    /// A portal whose OpenFile never returns is stopped at the deadline; with no display there is nothing after it.
    func testAPortalThatNeverReturnsIsShareUnavailableAtTheDeadline() throws {
        let bus = try PrivateSessionBus(self)
        let portal = try bus.startMock(
            self, template: "portal", name: "org.freedesktop.portal.Desktop",
            parameters: ["interfaces": ["OpenURI"], "open_uri": "hang"])
        let result = try share([file.path, "--timeout-ms", "1000"], ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        assertFailure(result, code: "SHARE_UNAVAILABLE", status: 78)
        XCTAssertTrue(result.stderr.contains("desktop portal did not return within 1000 ms"), result.stderr)
        XCTAssertEqual(portal.calls("OpenURI.OpenFile").count, 1)
    }

    func testAMissingPortalFallsBackToXdgOpen() throws {
        let bus = try PrivateSessionBus(self)
        try standIn("xdg-open", "#!/bin/sh\necho \"$@\" > '\(record.path)'\n")
        let result = try share([file.path], ["DBUS_SESSION_BUS_ADDRESS": bus.address, "DISPLAY": ":99"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try result.json()["handler"] as? String, "xdg-open")
        XCTAssertEqual(try String(contentsOf: record, encoding: .utf8), expectedURI + "\n")
    }

    // MARK: - Failures

    func testAFailingXdgOpenIsShareUnavailable() throws {
        try standIn("xdg-open", "#!/bin/sh\necho 'xdg-open: no method available for opening' >&2\nexit 3\n")
        let result = try share([file.path], ["DISPLAY": ":99"])
        assertFailure(result, code: "SHARE_UNAVAILABLE", status: 78)
        XCTAssertTrue(result.stderr.contains("exit status 3"), result.stderr)
        XCTAssertTrue(result.stderr.contains("no method available for opening"), result.stderr)
    }

    func testAMissingPortalWithoutDisplayIsShareUnavailable() throws {
        let bus = try PrivateSessionBus(self)
        let result = try share([file.path], ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        assertFailure(result, code: "SHARE_UNAVAILABLE", status: 78)
        XCTAssertTrue(result.stderr.contains("desktop portal failed"), result.stderr)
        XCTAssertTrue(result.stderr.contains("org.freedesktop.DBus.Error.ServiceUnknown"), result.stderr)
        XCTAssertTrue(result.stderr.contains("--print"), result.stderr)
    }

    /// A handler that never returns (here a script waiting on a child of its own) is stopped at the deadline.
    func testAHandlerThatNeverReturnsIsStoppedAtTheDeadline() throws {
        try standIn("xdg-open", "#!/bin/sh\nsleep 1000\n")
        let began = Date()
        let result = try share([file.path], ["DISPLAY": ":99", "FTGST_SHARE_TIMEOUT_MS": "500"], timeout: 30)
        let elapsed = Date().timeIntervalSince(began)
        assertFailure(result, code: "SHARE_UNAVAILABLE", status: 78)
        XCTAssertTrue(result.stderr.contains("did not return within 500 ms"), result.stderr)
        // 500 ms deadline, a handler that would sleep 1000 s: 10 s covers starting and ending a debug binary on a
        // loaded machine and still shows the deadline was kept.
        XCTAssertLessThan(elapsed, 10, "ftgst share must give up at the deadline")
    }

    /// The deadline is an option too (`--timeout-ms`), and the option wins over `FTGST_SHARE_TIMEOUT_MS`.
    func testTheDeadlineIsAnOptionThatWinsOverTheEnvironment() throws {
        try standIn("xdg-open", "#!/bin/sh\nsleep 1000\n")
        let began = Date()
        let result = try share(
            [file.path, "--timeout-ms", "500"], ["DISPLAY": ":99", "FTGST_SHARE_TIMEOUT_MS": "600000"], timeout: 30)
        assertFailure(result, code: "SHARE_UNAVAILABLE", status: 78)
        XCTAssertTrue(result.stderr.contains("did not return within 500 ms"), result.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(began), 10, "ftgst share must give up at the option's deadline")
        for bad in ["0", "-1", "x"] {
            assertFailure(
                try share([file.path, "--timeout-ms", bad], ["DISPLAY": ":99"]), code: "INVALID_ARGUMENT", status: 64)
        }
    }

    func testNoDesktopAtAllIsShareUnavailableWithAHint() throws {
        // No handlers on PATH, no display, no session bus.
        let result = try share([file.path], [:], path: tools.path)
        assertFailure(result, code: "SHARE_UNAVAILABLE", status: 78)
        XCTAssertTrue(result.stderr.contains("no desktop session"), result.stderr)
        XCTAssertTrue(result.stderr.contains("DISPLAY/WAYLAND_DISPLAY or use --print"), result.stderr)
        // A handler on PATH does not help without a display.
        try standIn("xdg-open", "#!/bin/sh\necho \"$@\" > '\(record.path)'\n")
        assertFailure(try share([file.path], [:]), code: "SHARE_UNAVAILABLE", status: 78)
        XCTAssertFalse(FileManager.default.fileExists(atPath: record.path))
    }

    func testADisplayWithoutXdgOpenNamesThePackage() throws {
        let result = try share([file.path], ["DISPLAY": ":99"], path: tools.path)
        assertFailure(result, code: "SHARE_UNAVAILABLE", status: 78)
        XCTAssertTrue(result.stderr.contains("xdg-utils"), result.stderr)
    }

    func testMissingFileIsFileNotFound() throws {
        let missing = folder.appendingPathComponent("nope.mp4").path
        assertFailure(try share([missing], ["DISPLAY": ":99"]), code: "FILE_NOT_FOUND", status: 66)
        assertFailure(try share([missing, "--print"], [:]), code: "FILE_NOT_FOUND", status: 66)
        assertFailure(try share([folder.path, "--print"], [:]), code: "FILE_NOT_FOUND", status: 66)
    }

    func testUsageErrors() throws {
        assertFailure(try share([], [:]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try share([file.path, "--print=yes"], [:]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try share([file.path], ["FTGST_SHARE_TIMEOUT_MS": "0"]), code: "INVALID_ARGUMENT", status: 64)
    }

    // MARK: - Helpers

    /// Runs `ftgst share` with PATH = the stand-in folder + /usr/bin:/bin and no display or session bus unless
    /// `environment` sets them (empty counts as unset, so the developer's own desktop never leaks in).
    private func share(
        _ arguments: [String], _ environment: [String: String], path: String? = nil,
        timeout: TimeInterval = 60
    ) throws -> ProcessResult {
        var env = [
            "PATH": path ?? "\(tools.path):/usr/bin:/bin", "DISPLAY": "", "WAYLAND_DISPLAY": "",
            "DBUS_SESSION_BUS_ADDRESS": "",
        ]
        for (key, value) in environment { env[key] = value }
        return try Run.ftgst(["share"] + arguments, environment: env, timeout: timeout)
    }

    private func standIn(_ name: String, _ script: String) throws {
        let path = tools.appendingPathComponent(name).path
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o755)
    }
}
