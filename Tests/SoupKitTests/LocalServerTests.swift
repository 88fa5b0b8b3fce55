import FilmtoneCore
import FilmtoneTestSupport
import Foundation
import SoupKit
import Synchronization
import XCTest

/// The loopback server over real sockets on 127.0.0.1 (port 0, the port it reports): static files fetched with curl,
/// the token, the WebSocket through libsoup's client, the Origin check, binding and stopping.
final class LocalServerTests: XCTestCase {
    // MARK: - Static files

    func testServesFilesWithTheTokenAndTheirContentType() throws {
        let site = try makeSite()
        let server = try LocalServer(staticFolder: site.folder, onMessage: { _, _ in })
        defer { server.stop() }
        let token = "?token=\(server.token.hex)"

        let page = try fetch(server, "/\(token)")
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.contentType, "text/html; charset=utf-8")
        XCTAssertEqual(page.body, Data(site.indexHTML.utf8))

        let script = try fetch(server, "/app.js\(token)")
        XCTAssertEqual(script.status, 200)
        XCTAssertEqual(script.contentType, "text/javascript; charset=utf-8")
        XCTAssertEqual(String(decoding: script.body, as: UTF8.self), "console.log('studio')\n")

        let image = try fetch(server, "/img/logo.png\(token)")
        XCTAssertEqual(image.status, 200)
        XCTAssertEqual(image.contentType, "image/png")
        XCTAssertEqual(image.body, site.pngBytes)

        let json = try fetch(server, "/data.json\(token)")
        XCTAssertEqual(json.status, 200)
        XCTAssertEqual(json.contentType, "application/json")
        XCTAssertEqual(json.headers["referrer-policy"], "no-referrer")
    }

    func testServesFilesTheLookupNamesFromOutsideTheFolderWithTheTokenOnly() throws {
        let site = try makeSite()
        let elsewhere = try TestEnvironment.temporaryDirectory(self)
        let preview = elsewhere.appendingPathComponent("preview-1.png")
        let text = elsewhere.appendingPathComponent("preview-2.txt")
        try site.pngBytes.write(to: preview)
        try Data("text\n".utf8).write(to: text)
        let server = try LocalServer(
            staticFolder: site.folder,
            files: { path in
                switch path {
                case "/previews/preview-1.png": return preview.path
                case "/previews/preview-2.txt": return text.path
                default: return nil
                }
            }, onMessage: { _, _ in })
        defer { server.stop() }
        let token = "?token=\(server.token.hex)"

        let served = try fetch(server, "/previews/preview-1.png\(token)")
        XCTAssertEqual(served.status, 200)
        XCTAssertEqual(served.contentType, "image/png")
        XCTAssertEqual(served.body, site.pngBytes)
        XCTAssertEqual(try fetch(server, "/previews/preview-1.png").status, 403, "the token is still needed")
        XCTAssertEqual(try fetch(server, "/previews/preview-2.txt\(token)").status, 404, "not a served type")
        XCTAssertEqual(try fetch(server, "/previews/preview-3.png\(token)").status, 404, "nothing there")
        XCTAssertEqual(try fetch(server, "/app.js\(token)").status, 200, "the folder's files as before")
    }

    func testRefusesARequestWithoutTheRightToken() throws {
        let site = try makeSite()
        let server = try LocalServer(staticFolder: site.folder, onMessage: { _, _ in })
        defer { server.stop() }
        var nearMiss = Array(server.token.hex)
        nearMiss[nearMiss.count - 1] = nearMiss.last == "0" ? "1" : "0"
        for query in ["", "?token=", "?token=wrong", "?token=\(String(nearMiss))", "?tok=\(server.token.hex)"] {
            let response = try fetch(server, "/index.html\(query)")
            XCTAssertEqual(response.status, 403, "query \(query)")
            XCTAssertFalse(response.text.contains("studio page"), "query \(query) got the page")
        }
    }

    func testServesNothingOutsideTheFolder() throws {
        let site = try makeSite()
        let server = try LocalServer(staticFolder: site.folder, onMessage: { _, _ in })
        defer { server.stop() }
        let token = "?token=\(server.token.hex)"
        // libsoup itself refuses (400) a path whose decoding brings a `..` segment, before any handler runs.
        for path in ["/..%2fsecret.html", "/img/..%2f..%2fsecret.html"] {
            let response = try fetch(server, path + token)
            XCTAssertEqual(response.status, 400, path)
            XCTAssertFalse(response.text.contains("secret"), path)
        }
        // A plain `..` (or `%2e%2e`, an escaped unreserved character) is resolved away by the URI parser (RFC 3986),
        // so it stays inside the folder: not found.
        // A symbolic link out of the folder, a folder without index.html, a type not served, a missing file: 404.
        for path in [
            "/../secret.html", "/%2e%2e/secret.html", "/escape.html", "/img/", "/notes.txt", "/missing.html", "/img",
        ] {
            let response = try fetch(server, path + token)
            XCTAssertEqual(response.status, 404, path)
            XCTAssertFalse(response.text.contains("secret"), path)
        }
    }

    func testRefusesMethodsOtherThanGET() throws {
        let site = try makeSite()
        let server = try LocalServer(staticFolder: site.folder, onMessage: { _, _ in })
        defer { server.stop() }
        let response = try fetch(server, "/index.html?token=\(server.token.hex)", method: "POST")
        XCTAssertEqual(response.status, 405)
    }

    // MARK: - The WebSocket

    func testWebSocketDeliversTextAndTheReplyComesBack() throws {
        let site = try makeSite()
        // The reply is sent from another thread than the server's, as the engine will.
        let server = try LocalServer(
            staticFolder: site.folder,
            onMessage: { connection, text in
                DispatchQueue.global().async { connection.send(text: "echo:" + text) }
            })
        defer { server.stop() }
        let client = try WebSocketClient(connectingTo: server.rpcURL, origin: server.origin)
        client.send(text: #"{"jsonrpc":"2.0","id":1,"method":"probeSource"}"#)
        XCTAssertEqual(client.receive(), #"echo:{"jsonrpc":"2.0","id":1,"method":"probeSource"}"#)
        client.send(text: "second")
        XCTAssertEqual(client.receive(), "echo:second")
    }

    func testWebSocketWithoutOriginIsAcceptedWithTheToken() throws {
        let site = try makeSite()
        let server = try LocalServer(
            staticFolder: site.folder, onMessage: { connection, text in connection.send(text: text.uppercased()) })
        defer { server.stop() }
        let client = try WebSocketClient(connectingTo: server.rpcURL, origin: nil)
        client.send(text: "no origin")
        XCTAssertEqual(client.receive(), "NO ORIGIN")
    }

    func testWebSocketFromAnotherOriginIsRefused() throws {
        let site = try makeSite()
        let messages = Counter()
        let server = try LocalServer(staticFolder: site.folder, onMessage: { _, _ in messages.increment() })
        defer { server.stop() }
        let others = [
            "http://evil.example", "http://localhost:\(server.port)", "http://127.0.0.1:\(server.port + 1)",
            "https://127.0.0.1:\(server.port)", "null",
        ]
        for origin in others {
            XCTAssertThrowsError(try WebSocketClient(connectingTo: server.rpcURL, origin: origin), origin) { error in
                XCTAssertEqual((error as? WebSocketClient.Refused)?.status, 403, "\(origin): \(error)")
            }
        }
        XCTAssertEqual(messages.value, 0)
    }

    func testWebSocketWithoutTheRightTokenIsRefused() throws {
        let site = try makeSite()
        let server = try LocalServer(staticFolder: site.folder, onMessage: { _, _ in })
        defer { server.stop() }
        for url in ["ws://127.0.0.1:\(server.port)/rpc", "ws://127.0.0.1:\(server.port)/rpc?token=0123"] {
            XCTAssertThrowsError(try WebSocketClient(connectingTo: url, origin: server.origin), url) { error in
                XCTAssertEqual((error as? WebSocketClient.Refused)?.status, 403, "\(url): \(error)")
            }
        }
    }

    func testClosingEitherSideIsSeenByTheOther() throws {
        let site = try makeSite()
        let closed = Counter()
        let server = try LocalServer(
            staticFolder: site.folder,
            onMessage: { connection, text in if text == "bye" { connection.close() } },
            onClose: { _ in closed.increment() })
        defer { server.stop() }

        let first = try WebSocketClient(connectingTo: server.rpcURL, origin: server.origin)
        first.close()
        XCTAssertTrue(first.isClosed)
        XCTAssertTrue(closed.wait(for: 1), "onClose after the client closed")

        let second = try WebSocketClient(connectingTo: server.rpcURL, origin: server.origin)
        second.send(text: "bye")
        XCTAssertNil(second.receive(), "the server closed the connection: no message")
        XCTAssertTrue(second.isClosed)
        XCTAssertTrue(closed.wait(for: 2), "onClose after the server closed")
    }

    func testAMessageAboveLibsoupsLimitClosesTheConnection() throws {
        let site = try makeSite()
        let messages = Counter()
        let server = try LocalServer(
            staticFolder: site.folder,
            onMessage: { c, t in
                messages.increment()
                c.send(text: "\(t.utf8.count)")
            })
        defer { server.stop() }
        let client = try WebSocketClient(connectingTo: server.rpcURL, origin: server.origin)
        let limit = 128 * 1024
        client.send(text: String(repeating: "a", count: limit))
        XCTAssertEqual(client.receive(), "\(limit)")
        client.send(text: String(repeating: "a", count: limit + 1))
        XCTAssertNil(client.receive())
        XCTAssertTrue(client.isClosed)
        XCTAssertEqual(messages.value, 1)
    }

    func testStopClosesOpenConnections() throws {
        let site = try makeSite()
        let closed = Counter()
        let server = try LocalServer(
            staticFolder: site.folder, onMessage: { c, t in c.send(text: t) }, onClose: { _ in closed.increment() })
        let client = try WebSocketClient(connectingTo: server.rpcURL, origin: server.origin)
        client.send(text: "up")
        XCTAssertEqual(client.receive(), "up")
        server.stop()
        XCTAssertEqual(closed.value, 1)
        XCTAssertNil(client.receive(timeout: 5))
        XCTAssertTrue(client.isClosed)
    }

    // MARK: - Binding

    func testBindsLoopbackOnly() throws {
        let site = try makeSite()
        for host in ["0.0.0.0", "localhost", "::1", "::", "192.168.1.10", ""] {
            XCTAssertThrowsError(try LocalServer(host: host, staticFolder: site.folder, onMessage: { _, _ in }), host) {
                XCTAssertEqual(($0 as? FilmtoneError)?.code, .invalidArgument, host)
            }
        }
    }

    func testStopFreesThePort() throws {
        let site = try makeSite()
        let first = try LocalServer(staticFolder: site.folder, onMessage: { _, _ in })
        let port = first.port
        XCTAssertGreaterThan(port, 0)
        XCTAssertThrowsError(try LocalServer(port: port, staticFolder: site.folder, onMessage: { _, _ in })) {
            XCTAssertEqual(($0 as? FilmtoneError)?.code, .invalidArgument, "the port is in use")
        }
        first.stop()
        let second = try LocalServer(port: port, staticFolder: site.folder, onMessage: { _, _ in })
        defer { second.stop() }
        XCTAssertEqual(second.port, port)
        XCTAssertEqual(try fetch(second, "/index.html?token=\(second.token.hex)").status, 200)
        XCTAssertNotEqual(first.token, second.token)
    }

    func testRefusesAStaticFolderThatIsNotOne() throws {
        let site = try makeSite()
        let file = site.folder.appendingPathComponent("index.html")
        XCTAssertThrowsError(try LocalServer(staticFolder: file, onMessage: { _, _ in })) {
            XCTAssertEqual(($0 as? FilmtoneError)?.code, .fileNotFound)
        }
    }

    // MARK: - Helpers

    private struct Site {
        var folder: URL
        var indexHTML: String
        var pngBytes: Data
    }

    /// A static folder (`site/`) with a page, a script, a PNG, a JSON file, a text file (not a served type) and a
    /// link to `secret.html` beside the folder.
    private func makeSite() throws -> Site {
        let base = try TestEnvironment.temporaryDirectory(self)
        let folder = base.appendingPathComponent("site")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("img"), withIntermediateDirectories: true)
        let index = "<!doctype html><title>studio page</title>\n"
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 1, 2, 3, 0xFF])
        try Data(index.utf8).write(to: folder.appendingPathComponent("index.html"))
        try Data("console.log('studio')\n".utf8).write(to: folder.appendingPathComponent("app.js"))
        try png.write(to: folder.appendingPathComponent("img/logo.png"))
        try Data(#"{"a":1}"#.utf8).write(to: folder.appendingPathComponent("data.json"))
        try Data("notes\n".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        try Data("<p>secret</p>\n".utf8).write(to: base.appendingPathComponent("secret.html"))
        try FileManager.default.createSymbolicLink(
            atPath: folder.appendingPathComponent("escape.html").path, withDestinationPath: "../secret.html")
        return Site(folder: folder, indexHTML: index, pngBytes: png)
    }

    private struct Response {
        var status: Int
        var contentType: String
        var headers: [String: String]
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// One real HTTP request with curl (`--path-as-is`: the path goes out exactly as written, `..` included).
    private func fetch(_ server: LocalServer, _ pathAndQuery: String, method: String = "GET") throws -> Response {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let body = folder.appendingPathComponent("body")
        let headers = folder.appendingPathComponent("headers")
        let result = try Run.tool(
            "curl",
            [
                "-s", "--path-as-is", "--max-time", "10", "-X", method, "-o", body.path, "-D", headers.path,
                "-w", "%{http_code}\n%{content_type}", "\(server.origin)\(pathAndQuery)",
            ], timeout: 20)
        XCTAssertEqual(result.status, 0, "curl: \(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        var fields: [String: String] = [:]
        for line in (try? String(contentsOf: headers, encoding: .utf8))?.split(separator: "\r\n") ?? [] {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Response(
            status: Int(lines.first ?? "") ?? -1, contentType: lines.count > 1 ? String(lines[1]) : "",
            headers: fields, body: (try? Data(contentsOf: body)) ?? Data())
    }
}

/// A count bumped from the server's thread and waited for (with a deadline) on the test's.
private final class Counter: Sendable {
    private let count = Mutex(0)
    private let bumped = DispatchSemaphore(value: 0)

    func increment() {
        count.withLock { $0 += 1 }
        bumped.signal()
    }

    var value: Int { count.withLock { $0 } }

    /// Waits until the count reaches `target`, at most 10 s.
    func wait(for target: Int) -> Bool {
        let deadline = DispatchTime.now() + 10
        while value < target {
            if bumped.wait(timeout: deadline) == .timedOut { return value >= target }
        }
        return true
    }
}
