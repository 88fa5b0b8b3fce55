import FilmtoneTestSupport
import Foundation
import XCTest

/// The pickers through the real `xdg-desktop-portal` (Debian's 1.16) and its GTK backend, on a private session bus
/// and a virtual X display (Xvfb) of the test's own: the dialog the user would see is GTK's own file chooser,
/// driven by `xdotool` as a user would (Ctrl+L, the path, Return). What the stand-in portal of the other tests
/// answers by decree, here the real services do.
final class RealPortalCLITests: XCTestCase {
    private var bus: PrivateSessionBus!
    private var work: URL!
    private var display = ""
    private var environment: [String: String] = [:]

    override func setUpWithError() throws {
        try super.setUpWithError()
        bus = try PrivateSessionBus(self)
        work = try TestEnvironment.temporaryDirectory(self)
        display = try startXvfb()
        let runtime = work.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        chmod(runtime.path, 0o700)
        environment = [
            "DBUS_SESSION_BUS_ADDRESS": bus.address, "DISPLAY": display, "WAYLAND_DISPLAY": "",
            "XDG_CURRENT_DESKTOP": "GNOME", "XDG_RUNTIME_DIR": runtime.path, "HOME": work.path,
            "XDG_STATE_HOME": work.appendingPathComponent("state").path, "GSETTINGS_BACKEND": "memory",
            "GTK_A11Y": "none", "NO_AT_BRIDGE": "1",
        ]
        try startService("/usr/libexec/xdg-desktop-portal-gtk", owning: "org.freedesktop.impl.portal.desktop.gtk")
        try startService("/usr/libexec/xdg-desktop-portal", owning: "org.freedesktop.portal.Desktop")
    }

    /// `Xvfb :N` on the first display number free here; returns `:N` once its socket exists.
    private func startXvfb() throws -> String {
        guard let number = (90...189).first(where: { !FileManager.default.fileExists(atPath: "/tmp/.X\($0)-lock") })
        else { throw XCTSkip("no free X display number") }
        let process = try launch("/usr/bin/Xvfb", [":\(number)", "-nolisten", "tcp", "-screen", "0", "1280x800x24"])
        try waitUntil("Xvfb :\(number)") {
            process.isRunning && FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)")
        }
        return ":\(number)"
    }

    private func startService(_ path: String, owning name: String) throws {
        let process = try launch(path, [], environment: environment)
        try waitUntil("\(path) on the bus") { process.isRunning && ((try? bus.hasOwner(name)) ?? false) }
    }

    /// A background process, stopped when the test ends.
    private func launch(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        addTeardownBlock {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        return process
    }

    private func xdotool(_ arguments: [String]) throws -> ProcessResult {
        try Run.process(
            URL(fileURLWithPath: "/usr/bin/xdotool"), arguments, environment: ["DISPLAY": display], timeout: 20)
    }

    /// The ids of the windows titled `title`.
    private func windows(_ title: String) throws -> [String] {
        try xdotool(["search", "--name", "^\(title)$"]).stdout.split(separator: "\n").map(String.init)
    }

    /// `ftgst pick …` as a running process, its stdout and stderr in files.
    private func startPick(_ arguments: [String]) throws -> (Process, URL, URL) {
        let out = work.appendingPathComponent("pick-\(UUID().uuidString).out")
        let err = work.appendingPathComponent("pick-\(UUID().uuidString).err")
        for file in [out, err] { FileManager.default.createFile(atPath: file.path, contents: nil) }
        let process = Process()
        process.executableURL = TestEnvironment.binary
        process.arguments = ["pick"] + arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        addTeardownBlock {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        return (process, out, err)
    }

    func testDesktopListsWhatTheRealPortalServes() throws {
        var env = environment
        env["DISPLAY"] = ""
        let result = try Run.ftgst(["desktop"], environment: env)
        XCTAssertEqual(result.status, 0, result.stderr)
        let portal = try result.json()["portal"] as? [String: Int] ?? [:]
        for name in ["FileChooser", "OpenURI", "Notification", "Inhibit", "MemoryMonitor"] {
            XCTAssertGreaterThanOrEqual(portal[name] ?? 0, 1, "\(name) in \(portal)")
        }
    }

    /// GTK's own dialog opens with ftgst's title; typing a path and Return picks that file.
    func testAPickThroughTheRealPortalsGTKDialog() throws {
        // ASCII: xdotool types a letter outside the keymap by remapping a spare key, which a loaded machine can lose
        // (the stand-in portal's tests cover other scripts in names).
        let clip = work.appendingPathComponent("my clip.mp4")
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: clip.path)
        let (pick, out, err) = try startPick(["source", "--timeout-ms", "60000"])
        var dialog: [String] = []
        try waitUntil("GTK's file chooser titled 'Open a video or photo'") {
            dialog = (try? windows("Open a video or photo")) ?? []
            return !dialog.isEmpty
        }
        let window = try XCTUnwrap(dialog.first)
        // As a user would: the location entry (Ctrl+L), everything in it replaced by the path, Return. Keys sent
        // before GTK has the entry up are lost, and how soon it is up depends on the machine: so the same keys
        // again until the pick ends (each round waits for that, not for a fixed time).
        var rounds = 0
        while pick.isRunning, rounds < 20 {
            rounds += 1
            _ = try xdotool(["windowfocus", "--sync", window])
            _ = try xdotool(["key", "--window", window, "ctrl+l"])
            _ = try xdotool(["key", "--window", window, "ctrl+a"])
            _ = try xdotool(["type", "--window", window, clip.path])
            _ = try xdotool(["key", "--window", window, "Return"])
            let deadline = Date().addingTimeInterval(3)
            while pick.isRunning, Date() < deadline { usleep(50_000) }
        }
        try waitUntil("the pick's end", timeout: 30) { !pick.isRunning }
        let stderr = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
        XCTAssertEqual(pick.terminationStatus, 0, stderr)
        let answer = try JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any]
        XCTAssertEqual(answer?["path"] as? String, clip.path)
        XCTAssertEqual(answer?["handler"] as? String, "portal")
    }

    /// A chooser left open past `--timeout-ms` is closed through the real portal's `Request.Close`: the dialog goes.
    func testAChooserLeftOpenIsClosedByTheRealPortal() throws {
        let (pick, _, err) = try startPick(["lut", "--timeout-ms", "3000"])
        try waitUntil("GTK's file chooser titled 'Choose a look (.cube)'") {
            !((try? windows("Choose a look \\(\\.cube\\)")) ?? []).isEmpty
        }
        try waitUntil("the pick's end", timeout: 30) { !pick.isRunning }
        XCTAssertEqual(pick.terminationStatus, 130)
        XCTAssertTrue(
            ((try? String(contentsOf: err, encoding: .utf8)) ?? "").hasPrefix("[CANCELLED] no file was chosen"))
        try waitUntil("the dialog closed") { ((try? windows("Choose a look \\(\\.cube\\)")) ?? ["x"]).isEmpty }
    }
}
