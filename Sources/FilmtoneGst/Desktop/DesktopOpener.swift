import DBusKit
import FilmtoneCore
import Foundation

/// Opens a file, or shows it in its folder, through the portal's `OpenURI` (`OpenFile`/`OpenDirectory` take the
/// file as an open descriptor: `OpenURI.OpenURI` refuses `file://` by design); else `xdg-open` (the file, or its
/// folder) where there is a display. What the last notification's Open and Show in folder do.
struct DesktopOpener {
    var bus: DBusConnection
    var environment: [String: String] = ProcessInfo.processInfo.environment

    /// Whether the session has a display (`DISPLAY` or `WAYLAND_DISPLAY` set): what the fallback programs
    /// (`xdg-open`, `zenity`, `kdialog`) need.
    static func hasDisplay(_ environment: [String: String]) -> Bool {
        !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// Hands `path` to the portal's `OpenURI`: `OpenFile` (`ask`: its application chooser) or, for `folder`,
    /// `OpenDirectory`, the file opened read-only and passed as a descriptor. Throws `FILE_NOT_FOUND` when it
    /// cannot be opened, else the call's `DBusError`.
    static func openThroughPortal(
        _ path: String, folder: Bool, ask: Bool, on bus: DBusConnection, timeoutMilliseconds: Int
    ) throws {
        guard let file = FileHandle(forReadingAtPath: path) else {
            throw FilmtoneError(.fileNotFound, "cannot open \(path)")
        }
        defer { try? file.close() }
        let options: [String: DBusValue] = folder ? [:] : ["ask": .bool(ask)]
        _ = try bus.call(
            ExportDesktop.portal, ExportDesktop.portalPath, "org.freedesktop.portal.OpenURI",
            folder ? "OpenDirectory" : "OpenFile", .tuple([.string(""), .handle(0), .vardict(options)]),
            fileDescriptors: [file.fileDescriptor], timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Which handler took it, nil when none could.
    @discardableResult
    func open(_ path: String, folder: Bool, ask: Bool = false) -> ShareResult.Handler? {
        if (try? Self.openThroughPortal(path, folder: folder, ask: ask, on: bus, timeoutMilliseconds: 10_000)) != nil {
            return .portal
        }
        guard Self.hasDisplay(environment), let program = Subprocess.find("xdg-open", environment: environment) else {
            return nil
        }
        let target = folder ? (path as NSString).deletingLastPathComponent : path
        let outcome = try? Subprocess.run(
            program, [Share.fileURI(path: target)], environment: environment, timeoutMilliseconds: 10_000)
        return outcome?.status == 0 ? .xdgOpen : nil
    }
}
