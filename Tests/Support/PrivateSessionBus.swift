import Foundation
import XCTest

/// A D-Bus session bus of the test's own (`dbus-daemon` with a configuration written here: no service directories,
/// so nothing of the machine's desktop is activated on it), stopped when the test ends. Processes get it through
/// `environment`, which also clears `DISPLAY` and `WAYLAND_DISPLAY` so no real dialog can open.
package final class PrivateSessionBus {
    package let address: String
    private let folder: URL

    package init(_ testCase: XCTestCase) throws {
        folder = try TestEnvironment.temporaryDirectory(testCase)
        let socket = folder.appendingPathComponent("bus").path
        let config = folder.appendingPathComponent("bus.conf")
        try Data(
            """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """.utf8
        ).write(to: config)
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        daemon.arguments = ["--config-file=\(config.path)", "--nofork", "--nopidfile"]
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice  // "Failed to set fd limit" as a non-root user
        daemon.standardInput = FileHandle.nullDevice
        try daemon.run()
        testCase.addTeardownBlock {
            if daemon.isRunning { daemon.terminate() }
            daemon.waitUntilExit()
        }
        address = "unix:path=" + socket
        // It listens once the socket exists.
        try waitUntil("dbus-daemon listening at \(socket)", timeout: 20) {
            FileManager.default.fileExists(atPath: socket) || !daemon.isRunning
        }
        guard daemon.isRunning else {
            XCTFail("dbus-daemon ended before listening at \(socket)")
            throw CocoaError(.executableLoad)
        }
    }

    /// The bus as the session bus, and no display.
    package var environment: [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": address, "DISPLAY": "", "WAYLAND_DISPLAY": ""]
    }

    /// Whether `name` has an owner on the bus now.
    package func hasOwner(_ name: String) throws -> Bool {
        let result = try Run.process(
            URL(fileURLWithPath: "/usr/bin/gdbus"),
            [
                "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                "--method", "org.freedesktop.DBus.NameHasOwner", name,
            ], environment: ["DBUS_SESSION_BUS_ADDRESS": address], timeout: 10)
        return result.stdout.contains("true")
    }

    /// Has the stand-in at `destination` emit a signal (dbusmock's `org.freedesktop.DBus.Mock.EmitSignal`): `arguments`
    /// is the signal's values in GVariant text, as an `av` (`[<'id'>, <'cancel'>]`).
    package func emitSignal(
        from destination: String, path: String, interface: String, member: String, signature: String,
        _ arguments: String
    ) throws {
        let result = try Run.process(
            URL(fileURLWithPath: "/usr/bin/gdbus"),
            [
                "call", "--session", "--dest", destination, "--object-path", path, "--method",
                "org.freedesktop.DBus.Mock.EmitSignal", interface, member, signature, arguments,
            ], environment: ["DBUS_SESSION_BUS_ADDRESS": address], timeout: 10)
        XCTAssertEqual(result.status, 0, "EmitSignal \(member): \(result.stderr)")
    }

    /// Records every signal of `interface` on the bus, as `dbus-monitor` prints them, into a file read by
    /// `BusMonitor.text`; stopped when the test ends. Returns once it records: a probe signal
    /// (`interface.member` with the one string `ftgst-monitor-probe`, from `/probe`) has come through.
    package func monitor(_ testCase: XCTestCase, interface: String, member: String) throws -> BusMonitor {
        let rule = "type='signal',interface='\(interface)'"
        let file = folder.appendingPathComponent("monitor-\(UUID().uuidString).txt")
        FileManager.default.createFile(atPath: file.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-monitor")
        process.arguments = ["--address", address, rule]
        process.standardOutput = try FileHandle(forWritingTo: file)
        process.standardError = FileHandle.nullDevice
        try process.run()
        testCase.addTeardownBlock {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        try waitUntil("dbus-monitor recording its probe", timeout: 20) {
            _ = try? Run.process(
                URL(fileURLWithPath: "/usr/bin/gdbus"),
                [
                    "emit", "--session", "--object-path", "/probe", "--signal", "\(interface).\(member)",
                    "'ftgst-monitor-probe'",
                ], environment: ["DBUS_SESSION_BUS_ADDRESS": address], timeout: 10)
            return ((try? String(contentsOf: file, encoding: .utf8)) ?? "").contains("ftgst-monitor-probe")
        }
        return BusMonitor(file: file)
    }

    /// Starts a python-dbusmock stand-in from `Tests/Resources/desktop/TEMPLATE.py` (else dbusmock's own template
    /// of that name) with `parameters`, and waits (20 s at most) until it owns `name`.
    package func startMock(
        _ testCase: XCTestCase, template: String, name: String, parameters: [String: Any] = [:]
    ) throws -> MockService {
        let log = folder.appendingPathComponent("\(template)-\(UUID().uuidString).log")
        let script = TestEnvironment.packageRoot.appendingPathComponent("Tests/Resources/desktop/\(template).py")
        let templateArgument = FileManager.default.fileExists(atPath: script.path) ? script.path : template
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-m", "dbusmock", "--session", "-t", templateArgument, "-l", log.path, "-p",
            String(decoding: try JSONSerialization.data(withJSONObject: parameters), as: UTF8.self),
        ]
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        testCase.addTeardownBlock {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        try waitUntil("stand-in \(template) owning \(name) on the test's bus", timeout: 20) {
            ((try? hasOwner(name)) ?? false) || !process.isRunning
        }
        guard process.isRunning else {
            XCTFail("the stand-in \(template) ended before taking \(name)")
            throw CocoaError(.executableLoad)
        }
        return MockService(log: log, process: process)
    }
}

/// A running stand-in and the calls it logged.
package final class MockService {
    let log: URL
    let process: Process

    init(log: URL, process: Process) {
        self.log = log
        self.process = process
    }

    /// The log's lines (dbusmock's own: `TIME METHOD ARGS`).
    package var lines: [String] {
        ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// The calls the template recorded as JSON (`ftgst-call {"method":…,"args":[…]}`), `method` ones only.
    package func calls(_ method: String) -> [[String: Any]] {
        lines.compactMap { line -> [String: Any]? in
            guard let start = line.range(of: "ftgst-call ") else { return nil }
            let json = Data(line[start.upperBound...].utf8)
            guard let call = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any],
                call["method"] as? String == method
            else { return nil }
            return call
        }
    }

    /// Whether a logged line's method (its second word) is `method`.
    package func called(_ method: String) -> Bool {
        lines.contains { $0.split(separator: " ").dropFirst().first.map(String.init) == method }
    }

    /// Stops the stand-in (its name leaves the bus).
    package func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// What `dbus-monitor` printed so far.
package struct BusMonitor {
    let file: URL
    package var text: String { (try? String(contentsOf: file, encoding: .utf8)) ?? "" }
}
