import FilmtoneGst
import Foundation
import SoupKit
import Synchronization

/// `ftgst serve --listen`: the engine's WebSocket transport. A `LocalServer` on 127.0.0.1 serves the studio's
/// files, the previews the engine wrote (`/previews/NAME`), and `/rpc`, where each connection is an `RPCClient` of
/// the one engine: its answers and its export's `exportProgress` go back on it alone, the files it names must be
/// inside the `--allow` folders, and an export it started is stopped when it closes.
final class ListenTransport: Sendable {
    /// Where the previews are served: `/previews/` + the file name the engine wrote.
    static let previewPrefix = "/previews/"

    private let server: LocalServer

    /// Binds `address` (`127.0.0.1:PORT`); `INVALID_ARGUMENT` for any other host, a bad or busy port.
    init(address: String, studio: URL, allowed: FileAccess, engine: MediaEngine) throws {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]) else {
            throw usage("--listen takes 127.0.0.1:PORT (0: a free port), not \(address)")
        }
        let host = String(address[..<colon])
        // The page URL needs the bound port and the token, known once the server is up; messages come only then.
        let page = Mutex<(origin: String, token: String)?>(nil)
        server = try LocalServer(
            host: host, port: port, staticFolder: studio,
            files: { path in
                guard path.hasPrefix(Self.previewPrefix) else { return nil }
                let name = String(path.dropFirst(Self.previewPrefix.count))
                return name.contains("/") ? nil : engine.previewFile(named: name)
            },
            onMessage: { connection, text in
                let (origin, token) = page.withLock { $0 } ?? ("", "")
                let client = RPCClient(
                    send: { [weak connection] message in connection?.send(text: message.serialized) },
                    allowed: allowed,
                    previewURL: { name in "\(origin)\(Self.previewPrefix)\(name)?token=\(token)" },
                    connection: connection.id,
                    isConnected: { [weak connection] in connection.map { !$0.isClosed } ?? false })
                engine.receive(Array(text.utf8), from: client)
            },
            // An export belongs to the connection that started it: it stops when that one goes away.
            onClose: { connection in engine.disconnected(connection: connection.id) })
        page.withLock { [server] in $0 = (server.origin, server.token.hex) }
    }

    /// The studio's page, with the token: the first line `ftgst serve --listen` writes.
    var pageURL: String { server.pageURL }

    /// Closes every WebSocket (1001, going away) and stops listening.
    func stop() { server.stop() }

    /// The studio's folder: `--studio`, else `PREFIX/share/ftgst/studio` beside an installed `PREFIX/bin/ftgst`
    /// (where `make install` puts it), else `<repo>/studio` for a binary in a checkout's `.build`. The installed
    /// folder comes first: a tree staged under `.build/stage` serves its own copy. The binary is found through
    /// `/proc/self/exe`.
    static func studioFolder(_ explicit: String?) throws -> URL {
        if let explicit { return URL(fileURLWithPath: explicit, isDirectory: true) }
        let running =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments.first ?? "."
        let folder = URL(fileURLWithPath: running).resolvingSymlinksInPath().deletingLastPathComponent()
        var candidates = [folder.deletingLastPathComponent().appendingPathComponent("share/ftgst/studio")]
        var ancestor = folder
        while ancestor.path != "/" {
            if ancestor.lastPathComponent == ".build" {
                candidates.append(ancestor.deletingLastPathComponent().appendingPathComponent("studio"))
                break
            }
            ancestor.deleteLastPathComponent()
        }
        var isFolder: ObjCBool = false
        guard
            let found = candidates.first(where: {
                FileManager.default.fileExists(atPath: $0.path, isDirectory: &isFolder) && isFolder.boolValue
            })
        else {
            throw FilmtoneError(
                .fileNotFound,
                "no studio folder (looked in \(candidates.map(\.path).joined(separator: ", "))): pass --studio DIR")
        }
        return found.standardizedFileURL
    }
}
