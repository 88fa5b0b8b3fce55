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
        var failures: [String] = []
        for route in Share.routes(environment) {
            switch route {
            case .portal(let address):
                do {
                    let bus = try DBusConnection(address: address, timeoutMilliseconds: timeoutMilliseconds)
                    defer { bus.close() }
                    _ = try bus.call(
                        ExportDesktop.portal, ExportDesktop.portalPath, "org.freedesktop.portal.OpenURI", "OpenURI",
                        .tuple([.string(""), .string(url), .vardict([:])]), timeoutMilliseconds: timeoutMilliseconds)
                    return ("portal", failures)
                } catch let error as DBusError {
                    failures.append("desktop portal: " + (error.name.map { "\($0): " } ?? "") + error.message)
                } catch {
                    failures.append("desktop portal: \(error)")
                }
            case .xdgOpen(let program):
                let outcome = try? Subprocess.run(
                    program, [url], environment: environment, timeoutMilliseconds: Int64(timeoutMilliseconds))
                if outcome?.status == 0 { return ("xdg-open", failures) }
                failures.append("xdg-open failed (status \(outcome?.status.map { String($0) } ?? "none"))")
            }
        }
        if failures.isEmpty { failures.append("no desktop: no session bus, and no xdg-open with a display") }
        return (nil, failures)
    }
}
