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
            let outcome = BrowserOpener.tryRoutes(
                environment, timeoutMilliseconds: 10_000, xdgOpenArgument: Share.fileURI(path: folder),
                portal: { bus in
                    try DesktopOpener.openThroughPortal(
                        path, folder: true, ask: false, on: bus, timeoutMilliseconds: 10_000)
                })
            if let handler = outcome.handler {
                return .object([("handler", .string(handler)), ("folder", .string(folder))])
            }
            guard !outcome.failures.isEmpty else { throw Share.noDesktop(environment) }
            throw FilmtoneError(
                .shareUnavailable, "could not show the folder: " + outcome.failures.joined(separator: "; "))
        }
    }
}
