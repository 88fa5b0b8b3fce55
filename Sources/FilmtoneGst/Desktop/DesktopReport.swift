import DBusKit
import FilmtoneCore
import Foundation

/// What this session's desktop offers ftgst (`ftgst desktop`, the engine's `desktop` method): the portal
/// interfaces and their versions, the notification server and its capabilities, the fallback programs found.
public struct DesktopReport: Sendable {
    /// Whether a session bus answered.
    public var sessionBus: Bool
    /// Each portal interface ftgst uses that the session serves, with its `version`.
    public var portal: [(name: String, version: UInt32)]
    /// `org.freedesktop.Notifications`' `GetServerInformation` and `GetCapabilities`, when one answers.
    public var notificationServer: (name: String, vendor: String, version: String, capabilities: [String])?
    /// `DISPLAY` or `WAYLAND_DISPLAY` is set (what the fallback programs need).
    public var display: Bool
    /// The fallback programs found on PATH, by name (nil: not found).
    public var programs: [(name: String, path: String?)]

    /// The portal interfaces ftgst uses, in the order reported.
    static let portalInterfaces = ["FileChooser", "OpenURI", "Notification", "Inhibit", "MemoryMonitor"]

    public var json: JSONValue {
        .object([
            ("sessionBus", .bool(sessionBus)),
            ("portal", .object(portal.map { ($0.name, .int(Int64($0.version))) })),
            (
                "notificationServer",
                notificationServer.map { server in
                    .object([
                        ("name", .string(server.name)), ("vendor", .string(server.vendor)),
                        ("version", .string(server.version)),
                        ("capabilities", .array(server.capabilities.map { .string($0) })),
                    ])
                } ?? .null
            ),
            ("display", .bool(display)),
            ("programs", .object(programs.map { ($0.name, $0.path.map { .string($0) } ?? .null) })),
        ])
    }
}

/// Asks the session bus what it offers; each question has a 2-s deadline, so a hung portal costs seconds, not a
/// hang.
public func desktopReport() async -> DesktopReport {
    let environment = ProcessInfo.processInfo.environment
    return (try? await runDetached { _ in DesktopReport.make(environment) })
        ?? DesktopReport(sessionBus: false, portal: [], notificationServer: nil, display: false, programs: [])
}

extension DesktopReport {
    static func make(_ environment: [String: String]) -> DesktopReport {
        let display = DesktopOpener.hasDisplay(environment)
        let programs = ["zenity", "kdialog", "xdg-open"].map {
            (name: $0, path: Subprocess.find($0, environment: environment)?.path)
        }
        let wait = ExportDesktop.callTimeout
        guard let bus = try? DBusConnection.session(environment: environment, timeoutMilliseconds: wait) else {
            return DesktopReport(
                sessionBus: false, portal: [], notificationServer: nil, display: display, programs: programs)
        }
        defer { bus.close() }
        var portal: [(name: String, version: UInt32)] = []
        for name in portalInterfaces {
            guard
                let version = try? bus.property(
                    ExportDesktop.portal, ExportDesktop.portalPath, "org.freedesktop.portal.\(name)", "version",
                    timeoutMilliseconds: wait
                ).uint32
            else { continue }
            portal.append((name, version))
        }
        var server: (name: String, vendor: String, version: String, capabilities: [String])?
        if let information = try? bus.call(
            ExportDesktop.notifications, ExportDesktop.notificationsPath, ExportDesktop.notifications,
            "GetServerInformation", timeoutMilliseconds: wait)
        {
            let values = information.elements.map { $0.string ?? "" }
            let capabilities = try? bus.call(
                ExportDesktop.notifications, ExportDesktop.notificationsPath, ExportDesktop.notifications,
                "GetCapabilities", timeoutMilliseconds: wait)
            server = (
                values.count > 0 ? values[0] : "", values.count > 1 ? values[1] : "",
                values.count > 2 ? values[2] : "",
                capabilities?.elements.first?.elements.compactMap(\.string) ?? []
            )
        }
        return DesktopReport(
            sessionBus: true, portal: portal, notificationServer: server, display: display, programs: programs)
    }
}
