import DBusKit
import FilmtoneCore
import Foundation

extension MediaEngine {
    /// `showInFolder` (`{uri}`): the file's folder in the file manager, the file selected where the portal does it
    /// (`OpenURI.OpenDirectory`, the file as a descriptor), else `xdg-open` on the folder with a display, the routes
    /// `share` uses. `{"handler": "portal"|"xdg-open", "folder": …}`; `SHARE_UNAVAILABLE` when no route took it.
    static func showInFolder(_ params: JSONValue, _ client: RPCClient) async throws -> JSONValue {
        let request = try request(params)
        try request.refuseUnknownKeys(["uri"])
        guard let uri = try request.string("uri"), case .local(let file) = try MediaSource.parse(uri) else {
            throw FilmtoneError(.invalidArgument, "showInFolder needs 'uri', a local file (a path or a file:// URI)")
        }
        try client.allowed?.check(path: file, "uri")
        try MediaSource.checkReadableFile(file)
        let path = URL(fileURLWithPath: file).standardizedFileURL.path
        let folder = (path as NSString).deletingLastPathComponent
        return try await runDetached { _ in
            let environment = ProcessInfo.processInfo.environment
            var failures: [String] = []
            for route in Share.routes(environment) {
                switch route {
                case .portal(let address):
                    do {
                        let bus = try DBusConnection(address: address, timeoutMilliseconds: 10_000)
                        defer { bus.close() }
                        try DesktopOpener.openThroughPortal(
                            path, folder: true, ask: false, on: bus, timeoutMilliseconds: 10_000)
                        return .object([("handler", .string("portal")), ("folder", .string(folder))])
                    } catch {
                        failures.append("desktop portal: \(error)")
                    }
                case .xdgOpen(let program):
                    let outcome = try? Subprocess.run(
                        program, [Share.fileURI(path: folder)], environment: environment, timeoutMilliseconds: 10_000)
                    if outcome?.status == 0 {
                        return .object([("handler", .string("xdg-open")), ("folder", .string(folder))])
                    }
                    failures.append("xdg-open failed")
                }
            }
            guard !failures.isEmpty else { throw Share.noDesktop(environment) }
            throw FilmtoneError(.shareUnavailable, "could not show the folder: " + failures.joined(separator: "; "))
        }
    }
}
