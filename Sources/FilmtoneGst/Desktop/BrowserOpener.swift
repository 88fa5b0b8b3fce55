import DBusKit
import FilmtoneCore
import Foundation

/// Opens a web page (`ftgst studio`'s) in the user's default browser: the portal's `OpenURI.OpenURI` (it takes
/// `http://` URIs; only `file://` is refused there), else `xdg-open` where there is a display, the routes `share`
/// tries (`Share.routes`).
public enum BrowserOpener {
    /// Which handler took `url`: `"portal"` or `"xdg-open"`; nil with the reasons when none could.
    public static func open(
        _ url: String, environment: [String: String] = ProcessInfo.processInfo.environment,
        timeoutMilliseconds: Int = 10_000
    ) -> (handler: String?, failures: [String]) {
        let outcome = tryRoutes(
            environment, timeoutMilliseconds: timeoutMilliseconds, xdgOpenArgument: url,
            portal: { bus in
                _ = try bus.call(
                    ExportDesktop.portal, ExportDesktop.portalPath, "org.freedesktop.portal.OpenURI", "OpenURI",
                    .tuple([.string(""), .string(url), .vardict([:])]), timeoutMilliseconds: timeoutMilliseconds)
            })
        if outcome.handler == nil && outcome.failures.isEmpty {
            return (nil, ["no desktop: no session bus, and no xdg-open with a display"])
        }
        return outcome
    }

    /// `share`'s routes for something other than a file to share (`Share.routes`): `portal` called on a connection
    /// to the session bus, else `xdg-open xdgOpenArgument`, in order, until one takes it. The handler
    /// (`"portal"`, `"xdg-open"`), or nil with each route's failure (none: no route at all).
    static func tryRoutes(
        _ environment: [String: String], timeoutMilliseconds: Int, xdgOpenArgument: String,
        portal: (DBusConnection) throws -> Void
    ) -> (handler: String?, failures: [String]) {
        var failures: [String] = []
        for route in Share.routes(environment) {
            switch route {
            case .portal(let address):
                do {
                    let bus = try DBusConnection(address: address, timeoutMilliseconds: timeoutMilliseconds)
                    defer { bus.close() }
                    try portal(bus)
                    return ("portal", failures)
                } catch let error as DBusError {
                    failures.append("desktop portal: " + (error.name.map { "\($0): " } ?? "") + error.message)
                } catch {
                    failures.append("desktop portal: \(error)")
                }
            case .xdgOpen(let program):
                let outcome = try? Subprocess.run(
                    program, [xdgOpenArgument], environment: environment,
                    timeoutMilliseconds: Int64(timeoutMilliseconds))
                if outcome?.status == 0 { return ("xdg-open", failures) }
                failures.append("xdg-open failed (status \(outcome?.status.map { String($0) } ?? "none"))")
            }
        }
        return (nil, failures)
    }
}
