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
        daemon.standardInput = FileHandle.nullDevice
        try daemon.run()
        testCase.addTeardownBlock {
            if daemon.isRunning { daemon.terminate() }
            daemon.waitUntilExit()
        }
        address = "unix:path=" + socket
        // It listens once the socket exists.
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: socket) {
            guard Date() < deadline, daemon.isRunning else {
                XCTFail("dbus-daemon did not start listening at \(socket)")
                throw CocoaError(.executableLoad)
            }
            usleep(20_000)
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

    /// Starts a python-dbusmock stand-in from `Tests/Resources/desktop/TEMPLATE.py` with `parameters`, and waits
    /// (20 s at most) until it owns `name`.
    package func startMock(
        _ testCase: XCTestCase, template: String, name: String, parameters: [String: Any] = [:]
    ) throws -> MockService {
        let log = folder.appendingPathComponent("\(template)-\(UUID().uuidString).log")
        let script = TestEnvironment.packageRoot.appendingPathComponent("Tests/Resources/desktop/\(template).py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-m", "dbusmock", "--session", "-t", script.path, "-l", log.path, "-p",
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
        let deadline = Date().addingTimeInterval(20)
        while try !hasOwner(name) {
            guard Date() < deadline, process.isRunning else {
                XCTFail("the stand-in \(template) did not take \(name) on the test's bus")
                throw CocoaError(.executableLoad)
            }
            usleep(50_000)
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
