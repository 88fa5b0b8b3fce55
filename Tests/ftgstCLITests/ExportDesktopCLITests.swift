import FilmtoneCore
import FilmtoneTestSupport
import Foundation
import XCTest

/// An export on the desktop (`export --notify`, `serve`'s exports): its notification with Cancel, the dock
/// progress, the suspend inhibitor and the low-memory warnings, through a real private session bus with
/// python-dbusmock stand-ins for the portal (`Tests/Resources/desktop/portal.py`) and for the freedesktop
/// notification server (dbusmock's own `notification_daemon` template).
final class ExportDesktopCLITests: XCTestCase {
    private var work: URL!
    private var workspace: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        work = try TestEnvironment.temporaryDirectory(self)
        workspace = work.appendingPathComponent("workspace")
    }

    private static let portalName = "org.freedesktop.portal.Desktop"
    private static let portalPath = "/org/freedesktop/portal/desktop"

    /// `ftgst export SOURCE -o OUT --notify` as a running process; its stderr in a file.
    private func startExport(_ bus: PrivateSessionBus, _ source: String, _ output: String) throws -> (Process, URL) {
        let stderr = work.appendingPathComponent("stderr-\(UUID().uuidString).txt")
        FileManager.default.createFile(atPath: stderr.path, contents: nil)
        let process = Process()
        process.executableURL = TestEnvironment.binary
        process.arguments = [
            "export", source, "-o", output, "--workspace", workspace.path, "--progress", "none", "--notify",
        ]
        var env = ProcessInfo.processInfo.environment
        for (key, value) in bus.environment { env[key] = value }
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
        addTeardownBlock {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        return (process, stderr)
    }

    private func exit(of process: Process) -> Int32? {
        process.waitForExit(timeout: 30) ? process.terminationStatus : nil
    }

    private func records() -> [[String: Any]] {
        let folder = workspace.appendingPathComponent("records")
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted().compactMap {
            guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent($0).path) else {
                return nil
            }
            return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        }
    }

    /// The portal's notification: one id, updated in place at most once a second, a Cancel button that stops the
    /// export (`CANCELLED`, reason `notification`, nothing at OUT); suspend inhibited with the file's name and
    /// released at the end; two low-memory warnings counted into the record.
    func testThePortalNotificationsCancelStopsTheExportAndTheInhibitorIsReleased() throws {
        let bus = try PrivateSessionBus(self)
        let portal = try bus.startMock(
            self, template: "portal", name: Self.portalName,
            parameters: ["interfaces": ["Notification", "Inhibit", "MemoryMonitor"]])
        let clip = try SlowRemoteClip(self)
        let output = work.appendingPathComponent("holiday.mp4").path
        let (export, stderr) = try startExport(bus, clip.url, output)

        try waitUntil("three notifications", timeout: 60) { portal.calls("Notification.AddNotification").count >= 3 }
        for level in ["50", "255"] {
            try bus.emitSignal(
                from: Self.portalName, path: Self.portalPath, interface: "org.freedesktop.portal.MemoryMonitor",
                member: "LowMemoryWarning", signature: "y", "[<byte \(level)>]")
        }
        let shown = portal.calls("Notification.AddNotification")
        let id = try XCTUnwrap((shown.first?["args"] as? [Any])?.first as? String)
        try bus.emitSignal(
            from: Self.portalName, path: Self.portalPath, interface: "org.freedesktop.portal.Notification",
            member: "ActionInvoked", signature: "ssav", "[<'\(id)'>, <'cancel'>, <@av []>]")
        XCTAssertEqual(exit(of: export), 130, (try? String(contentsOf: stderr, encoding: .utf8)) ?? "")
        XCTAssertEqual(try String(contentsOf: stderr, encoding: .utf8), "[CANCELLED] notification\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output), "nothing at OUT")

        let notifications = portal.calls("Notification.AddNotification")
        let ids = Set(notifications.compactMap { ($0["args"] as? [Any])?.first as? String })
        XCTAssertEqual(ids, [id], "one notification, updated in place")
        func fields(_ call: [String: Any]) -> [String: Any] {
            ((call["args"] as? [Any])?.last as? [String: Any]) ?? [:]
        }
        XCTAssertEqual(fields(notifications[0])["title"] as? String, "Exporting holiday.mp4")
        let buttons = fields(notifications[0])["buttons"] as? [[String: Any]]
        XCTAssertEqual(buttons?.map { $0["action"] as? String }, ["cancel"])
        XCTAssertEqual(buttons?.map { $0["label"] as? String }, ["Cancel"])
        XCTAssertTrue(
            notifications.dropFirst().contains { (fields($0)["body"] as? String ?? "").contains(" %") },
            "the progress in the body: \(notifications.map(fields))")
        // The updates between the first and the last: at most one a second.
        let times = notifications.compactMap { $0["time"] as? Double }
        for (earlier, later) in zip(times.dropFirst(), times.dropFirst(2).dropLast()) {
            XCTAssertGreaterThanOrEqual(later - earlier, 0.95, "updates \(times)")
        }
        XCTAssertEqual(fields(notifications.last!)["title"] as? String, "Export cancelled")
        XCTAssertNil(fields(notifications.last!)["buttons"], "no button on the last one")

        let inhibit = try XCTUnwrap(portal.calls("Inhibit.Inhibit").first)
        XCTAssertEqual((inhibit["args"] as? [Any])?[1] as? Int, 4, "suspend")
        XCTAssertEqual(
            ((inhibit["args"] as? [Any])?.last as? [String: Any])?["reason"] as? String, "Exporting holiday.mp4")
        XCTAssertTrue(portal.called("Close"), "the inhibitor is released: \(portal.lines.suffix(5))")

        let record = try XCTUnwrap(records().first)
        XCTAssertEqual(record["cancelReason"] as? String, "notification")
        XCTAssertEqual(record["memoryWarningCount"] as? Int, 2)
    }

    /// Without the portal's notifications, the freedesktop server's: `Notify` with a Cancel action, `replaces_id`
    /// after the first; its `ActionInvoked` cancels too.
    func testTheFreedesktopServersCancelActionStopsTheExport() throws {
        let bus = try PrivateSessionBus(self)
        let server = try bus.startMock(self, template: "notification_daemon", name: "org.freedesktop.Notifications")
        let clip = try SlowRemoteClip(self)
        let output = work.appendingPathComponent("clip.mp4").path
        let (export, stderr) = try startExport(bus, clip.url, output)

        let notify = { server.lines.filter { $0.split(separator: " ").dropFirst().first == "Notify" } }
        try waitUntil("two notifications", timeout: 60) { notify().count >= 2 }
        XCTAssertTrue(notify()[0].contains(#""ftgst" 0 "video-x-generic" "Exporting clip.mp4""#), notify()[0])
        XCTAssertTrue(notify()[0].contains(#"["cancel", "Cancel"]"#), notify()[0])
        XCTAssertTrue(notify()[1].contains(#""ftgst" 1 "#), "replaces the first (id 1): \(notify()[1])")
        try bus.emitSignal(
            from: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
            interface: "org.freedesktop.Notifications", member: "ActionInvoked", signature: "us",
            "[<uint32 1>, <'cancel'>]")
        XCTAssertEqual(exit(of: export), 130)
        XCTAssertEqual(try String(contentsOf: stderr, encoding: .utf8), "[CANCELLED] notification\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        XCTAssertTrue(notify().last?.contains("Export cancelled") ?? false, "\(notify().last ?? "")")
    }

    /// A portal that serves `Notification` but refuses this program (outside a sandbox it may want an application
    /// id): the freedesktop server shows the export instead, from the first notification on.
    func testAPortalThatRefusesNotificationsLeavesThemToTheFreedesktopServer() throws {
        let bus = try PrivateSessionBus(self)
        let portal = try bus.startMock(
            self, template: "portal", name: Self.portalName,
            parameters: ["interfaces": ["Notification"], "refuse_notifications": true])
        let server = try bus.startMock(self, template: "notification_daemon", name: "org.freedesktop.Notifications")
        let output = work.appendingPathComponent("refused.mp4").path
        let (export, stderr) = try startExport(bus, try TestEnvironment.fixture("clip.mp4"), output)
        XCTAssertEqual(exit(of: export), 0, (try? String(contentsOf: stderr, encoding: .utf8)) ?? "")
        XCTAssertEqual(portal.calls("Notification.AddNotification").count, 1, "asked once, then not again")
        let notify = server.lines.filter { $0.split(separator: " ").dropFirst().first == "Notify" }
        XCTAssertGreaterThanOrEqual(notify.count, 2, server.lines.joined(separator: "\n"))
        XCTAssertTrue(notify.first?.contains("Exporting refused.mp4") ?? false, notify.first ?? "")
        XCTAssertTrue(notify.last?.contains("Exported refused.mp4") ?? false, notify.last ?? "")
    }

    /// A finished export: the dock shows progress and clears it; the last notification says it is done (no
    /// buttons from a one-shot CLI, which is not there to answer them).
    func testAFinishedExportClearsTheDockAndSaysItIsDone() throws {
        let bus = try PrivateSessionBus(self)
        let portal = try bus.startMock(
            self, template: "portal", name: Self.portalName, parameters: ["interfaces": ["Notification"]])
        let dock = try bus.monitor(self, interface: "com.canonical.Unity.LauncherEntry", member: "Update")
        let output = work.appendingPathComponent("done.mp4").path
        let (export, stderr) = try startExport(bus, try TestEnvironment.fixture("clip.mp4"), output)
        XCTAssertEqual(exit(of: export), 0, (try? String(contentsOf: stderr, encoding: .utf8)) ?? "")
        XCTAssertTrue(FileManager.default.fileExists(atPath: output))

        let last = try XCTUnwrap(portal.calls("Notification.AddNotification").last)
        let fields = ((last["args"] as? [Any])?.last as? [String: Any]) ?? [:]
        XCTAssertEqual(fields["title"] as? String, "Exported done.mp4")
        XCTAssertNil(fields["buttons"])

        let updates = dock.text.components(separatedBy: "signal time=").filter {
            $0.contains("application://io.github.ftgst.Studio.desktop")
        }
        XCTAssertGreaterThanOrEqual(updates.count, 2, dock.text)
        XCTAssertTrue(updates.first?.contains("\"progress-visible\"\n") ?? false, updates.first ?? "")
        XCTAssertTrue(
            updates.first?.range(of: #""progress-visible"\s+variant\s+boolean true"#, options: .regularExpression)
                != nil, updates.first ?? "")
        XCTAssertTrue(
            updates.last?.range(of: #""progress-visible"\s+variant\s+boolean false"#, options: .regularExpression)
                != nil, updates.last ?? "")
    }

    /// The engine's export: the last notification has Open and Show in folder, and Show in folder hands the file
    /// to the portal's `OpenURI.OpenDirectory` (the engine is still there to answer).
    func testTheEnginesLastNotificationShowsTheFileInItsFolder() throws {
        let bus = try PrivateSessionBus(self)
        let portal = try bus.startMock(
            self, template: "portal", name: Self.portalName, parameters: ["interfaces": ["Notification", "OpenURI"]])
        var env = ProcessInfo.processInfo.environment
        for (key, value) in bus.environment { env[key] = value }
        env["XDG_RUNTIME_DIR"] = work.path
        let engine = try EngineProcess(executable: TestEnvironment.binary, arguments: ["serve"], environment: env)
        addTeardownBlock { engine.kill() }
        let output = work.appendingPathComponent("engine.mp4").path
        engine.request(
            id: 1, "runExport",
            .object([
                ("source", .string(try TestEnvironment.fixture("clip.mp4"))), ("output", .string(output)),
                ("workspace", .string(workspace.path)),
            ]))
        XCTAssertEqual(try engine.response(id: 1, timeout: 120)["result"]?["path"]?.string, output, engine.stderr)

        let last = try XCTUnwrap(portal.calls("Notification.AddNotification").last)
        let id = try XCTUnwrap((last["args"] as? [Any])?.first as? String)
        let buttons = (((last["args"] as? [Any])?.last as? [String: Any])?["buttons"] as? [[String: Any]]) ?? []
        XCTAssertEqual(buttons.map { $0["action"] as? String }, ["open", "show"])
        XCTAssertEqual(buttons.map { $0["label"] as? String }, ["Open", "Show in folder"])
        try bus.emitSignal(
            from: Self.portalName, path: Self.portalPath, interface: "org.freedesktop.portal.Notification",
            member: "ActionInvoked", signature: "ssav", "[<'\(id)'>, <'show'>, <@av []>]")
        try waitUntil("OpenURI.OpenDirectory", timeout: 30) { !portal.calls("OpenURI.OpenDirectory").isEmpty }
        let opened = try XCTUnwrap(portal.calls("OpenURI.OpenDirectory").first)
        XCTAssertEqual((opened["args"] as? [Any])?[1] as? String, output, "the file itself, as a descriptor")
    }

    /// No session bus: `--notify` changes nothing, the export succeeds.
    func testNoBusLeavesTheExportAlone() throws {
        let output = work.appendingPathComponent("quiet.mp4").path
        let result = try Run.ftgst(
            [
                "export", try TestEnvironment.fixture("clip.mp4"), "-o", output, "--workspace", workspace.path,
                "--progress", "none", "--notify",
            ], environment: ["DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": work.path], timeout: 120)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: output))
    }
}
