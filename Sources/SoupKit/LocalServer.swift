internal import CSoup
import FilmtoneCore
import Foundation
import Synchronization

/// The engine's HTTP and WebSocket server on the loopback interface, on libsoup 3's `SoupServer`.
///
/// It serves two things, both only to a request that carries the token (`?token=…`, see `token`):
/// - `GET` of the static files in one folder (`StaticFiles`: only files inside it, only the listed types; 404
///   otherwise, 405 for another method);
/// - a WebSocket at `/rpc`, whose handshake is also refused (403) when it has an `Origin` other than the server's
///   own (`origin`); each text message goes to `onMessage` with its connection, which answers with `send(text:)`.
///
/// The server runs on a `GMainContext` of its own, iterated on a thread of its own (`MainLoopThread`); the
/// closures are called on that thread, so they must hand long work elsewhere and return.
package final class LocalServer: Sendable {
    /// The address bound: always 127.0.0.1.
    package let host: String
    /// The port bound (the one asked for, or the free one the system picked for 0).
    package let port: Int
    /// The secret every request must carry as its `token` query parameter.
    package let token: AccessToken

    /// `http://127.0.0.1:PORT`: the origin of the server's own pages, the only `Origin` a WebSocket may come from.
    package var origin: String { "http://\(host):\(port)" }

    /// `http://127.0.0.1:PORT/?token=…`: the page to open.
    package var pageURL: String { "\(origin)/?token=\(token.hex)" }

    /// `ws://127.0.0.1:PORT/rpc?token=…`: the RPC WebSocket.
    package var rpcURL: String { "ws://\(host):\(port)/rpc?token=\(token.hex)" }

    private let loop: MainLoopThread
    private let core: ServerCore

    /// How long start and stop wait for the loop's thread.
    private static let loopDeadline: Double = 10

    /// Binds `host:port` (`port` 0: a free one) and starts serving `staticFolder` and `/rpc`.
    ///
    /// Throws `INVALID_ARGUMENT` for a host other than `127.0.0.1` (nothing but the loopback interface is ever
    /// bound), a port outside 0…65535, or a port that cannot be bound (in use); `FILE_NOT_FOUND` if `staticFolder`
    /// is not a folder.
    ///
    /// `files`: a file served from outside the folder (the engine's previews), for a request path; asked first (on
    /// the loop's thread), nil: the folder's file. Its Content-Type comes from its extension as for the folder's
    /// (`StaticFiles.contentTypes`), and a file of another type is not served.
    package init(
        host: String = "127.0.0.1", port: Int = 0, staticFolder: URL,
        files: @escaping @Sendable (String) -> String? = { _ in nil },
        onMessage: @escaping @Sendable (WebSocketConnection, String) -> Void,
        onClose: @escaping @Sendable (WebSocketConnection) -> Void = { _ in }
    ) throws {
        guard host == "127.0.0.1" else {
            throw FilmtoneError(.invalidArgument, "the server binds 127.0.0.1 only, not \(host)")
        }
        guard (0...65535).contains(port) else {
            throw FilmtoneError(.invalidArgument, "port \(port) is outside 0…65535")
        }
        guard let root = StaticFiles.resolvedFolder(staticFolder.path) else {
            throw FilmtoneError(.fileNotFound, "static folder \(staticFolder.path) is not a folder")
        }
        let token = try AccessToken.random()
        let loop = MainLoopThread(name: "ftgst-server")
        let core = ServerCore(
            root: root, token: token, loop: loop, handlers: .init(files: files, onMessage: onMessage, onClose: onClose))
        let deadline = DispatchTime.now() + Self.loopDeadline
        let started = loop.invokeAndWait(until: deadline) { core.start(port: port) }
        guard case .success(let bound)? = started else {
            loop.invokeAndWait(until: deadline) { core.stop() }
            loop.stop(until: deadline)
            if case .failure(let error)? = started { throw error }
            throw FilmtoneError(.internalError, "the server's main loop did not start within \(Self.loopDeadline) s")
        }
        self.host = host
        self.port = bound
        self.token = token
        self.loop = loop
        self.core = core
    }

    deinit { stop() }

    /// How long `stop` waits for the clients' half of the closing handshake.
    static let closingHandshakeDeadline: Double = 2

    /// Closes every WebSocket (1001, going away; `onClose` for each), stops listening (the port is free once this
    /// returns) and ends the loop's thread. Idempotent.
    ///
    /// The closing handshake is completed (RFC 6455 §7.1.1): after its close frame the server waits, at most
    /// `closingHandshakeDeadline`, for each client's own before it drops the TCP connection. A client that reads
    /// its messages asynchronously (Node's WebSocket inflates compressed ones off the socket's thread) would
    /// otherwise see the connection end first, report 1006 and drop the answers sent just before the close.
    package func stop() {
        guard !loop.isStopped else { return }
        let deadline = DispatchTime.now() + Self.loopDeadline
        loop.invokeAndWait(until: deadline) { [core] in core.startClosing() }
        let handshake = DispatchTime.now() + Self.closingHandshakeDeadline
        while DispatchTime.now() < handshake {
            let open = loop.invokeAndWait(until: handshake) { [core] in core.openCount } ?? 0
            guard open > 0 else { break }
            usleep(10_000)
        }
        loop.invokeAndWait(until: deadline) { [core] in core.stop() }
        loop.stop(until: deadline)
    }
}

/// What the server calls: on the loop's thread.
struct ServerHandlers: Sendable {
    let files: @Sendable (String) -> String?
    let onMessage: @Sendable (WebSocketConnection, String) -> Void
    let onClose: @Sendable (WebSocketConnection) -> Void
}

/// The `SoupServer` and its open connections.
///
/// `@unchecked Sendable`: after init, `server` and `connections` are only touched on the loop's thread (in
/// `start`, `stop` and the handlers libsoup calls there), so no two threads ever use them at once.
final class ServerCore: @unchecked Sendable {
    private let root: String
    private let token: AccessToken
    private let loop: MainLoopThread
    private let handlers: ServerHandlers
    private var server: UnsafeMutablePointer<SoupServer>?
    private var connections: [Int: WebSocketConnection] = [:]
    private var origin = ""

    init(root: String, token: AccessToken, loop: MainLoopThread, handlers: ServerHandlers) {
        self.root = root
        self.token = token
        self.loop = loop
        self.handlers = handlers
    }

    /// Creates the server, adds the handlers and listens on 127.0.0.1:`port`; the bound port.
    func start(port: Int) -> Result<Int, FilmtoneError> {
        guard let server = ftgst_soup_server_new() else {
            return .failure(FilmtoneError(.internalError, "soup_server_new failed"))
        }
        self.server = server
        addHandlers(server)
        var error: UnsafeMutablePointer<GError>?
        // IPV4_ONLY with listen_local: 127.0.0.1 and nothing else (without it, ::1 as well).
        guard soup_server_listen_local(server, guint(port), SOUP_SERVER_LISTEN_IPV4_ONLY, &error) != 0 else {
            let message = takeErrorMessage(error)
            return .failure(FilmtoneError(.invalidArgument, "cannot listen on 127.0.0.1:\(port): \(message)"))
        }
        guard let bound = boundPort(server) else {
            return .failure(FilmtoneError(.internalError, "the server reports no address after listening"))
        }
        origin = "http://127.0.0.1:\(bound)"
        return .success(bound)
    }

    /// Sends each open connection's close frame (1001); each leaves `connections` when its `closed` signal comes.
    func startClosing() {
        for connection in connections.values { connection.closeGoingAway() }
    }

    /// How many connections have not closed yet.
    var openCount: Int { connections.count }

    /// Closes the connections (calling `onClose` for each still open), the listening socket and the server.
    func stop() {
        for connection in connections.values {
            connection.closeGoingAway()
            if connection.markClosed() { handlers.onClose(connection) }
        }
        connections.removeAll()
        guard let server else { return }
        soup_server_disconnect(server)
        g_object_unref(server)
        self.server = nil
    }

    // MARK: - Handlers

    /// One HTTP request as a handler gets it: the message (borrowed), its decoded path, its decoded query table.
    typealias Request = (message: OpaquePointer, path: String, query: OpaquePointer?)

    private func addHandlers(_ server: UnsafeMutablePointer<SoupServer>) {
        let request: SoupServerCallback = { _, message, path, query, data in
            guard let message, let path, let data else { return }
            CallbackBox<Request, Void>.borrow(data).body((message, String(cString: path), query))
        }
        // The default handler (path NULL): every path but /rpc.
        let files = CallbackBox<Request, Void> { [weak self] in self?.serveFile($0) }
        soup_server_add_handler(server, nil, request, files.retained(), releaseCallbackBox)
        // /rpc's HTTP handler runs before libsoup's WebSocket handshake: a status set here refuses the handshake.
        let gate = CallbackBox<Request, Void> { [weak self] in self?.gateWebSocket($0) }
        soup_server_add_handler(server, "/rpc", request, gate.retained(), releaseCallbackBox)
        // Origin NULL: the gate above checks it, as libsoup's own check would also refuse a handshake without one.
        let accepted = CallbackBox<OpaquePointer, Void> { [weak self] in self?.accept($0) }
        soup_server_add_websocket_handler(
            server, "/rpc", nil, nil,
            { _, _, _, connection, data in
                guard let connection, let data else { return }
                CallbackBox<OpaquePointer, Void>.borrow(data).body(connection)
            }, accepted.retained(), releaseCallbackBox)
    }

    private func serveFile(_ request: Request) {
        let message = request.message
        setSecurityHeaders(message)
        guard token.matches(queryValue(request.query, "token")) else {
            return soup_server_message_set_status(message, guint(SOUP_STATUS_FORBIDDEN.rawValue), nil)
        }
        let method = soup_server_message_get_method(message).map { String(cString: $0) }
        guard method == "GET" else {
            return soup_server_message_set_status(message, guint(SOUP_STATUS_METHOD_NOT_ALLOWED.rawValue), nil)
        }
        guard
            let file = handlers.files(request.path).map(StaticFiles.typed)
                ?? StaticFiles.resolve(request.path, in: root),
            let body = FileManager.default.contents(atPath: file.path)
        else {
            return soup_server_message_set_status(message, guint(SOUP_STATUS_NOT_FOUND.rawValue), nil)
        }
        soup_server_message_set_status(message, guint(SOUP_STATUS_OK.rawValue), nil)
        body.withUnsafeBytes { bytes in
            // SOUP_MEMORY_COPY: libsoup copies the bytes, which live only as long as this closure.
            soup_server_message_set_response(
                message, file.contentType, SOUP_MEMORY_COPY, bytes.baseAddress?.assumingMemoryBound(to: CChar.self),
                gsize(bytes.count))
        }
    }

    private func gateWebSocket(_ request: Request) {
        let message = request.message
        setSecurityHeaders(message)
        let headers = soup_server_message_get_request_headers(message)
        let requestOrigin = soup_message_headers_get_one(headers, "Origin").map { String(cString: $0) }
        // A browser always sends Origin with a WebSocket handshake, so only a page elsewhere brings another one; a
        // client without one is not a browser, could send any Origin it liked, and has proved itself with the token.
        guard token.matches(queryValue(request.query, "token")), requestOrigin == nil || requestOrigin == origin
        else {
            return soup_server_message_set_status(message, guint(SOUP_STATUS_FORBIDDEN.rawValue), nil)
        }
    }

    private func accept(_ pointer: OpaquePointer) {
        let connection = WebSocketConnection(borrowing: pointer, loop: loop)
        connections[connection.id] = connection
        let handlers = handlers
        // Weak: the boxes live as long as the libsoup connection, which the handle owns.
        connection.watch(
            onMessage: { [weak connection] text in
                if let connection { handlers.onMessage(connection, text) }
            },
            onClosed: { [weak self, weak connection] in
                guard let self, let connection else { return }
                connections[connection.id] = nil
                handlers.onClose(connection)
            })
    }

    // MARK: - Helpers

    /// Headers on every response: no page elsewhere learns the token from a Referer, no type is guessed, nothing
    /// is cached.
    private func setSecurityHeaders(_ message: OpaquePointer) {
        let headers = soup_server_message_get_response_headers(message)
        soup_message_headers_replace(headers, "Referrer-Policy", "no-referrer")
        soup_message_headers_replace(headers, "X-Content-Type-Options", "nosniff")
        soup_message_headers_replace(headers, "Cache-Control", "no-store")
    }

    /// A value of the decoded query (libsoup's `soup_form_decode` table, char* to char*, borrowed).
    private func queryValue(_ query: OpaquePointer?, _ key: String) -> String? {
        guard let query else { return nil }
        return key.withCString { name in
            g_hash_table_lookup(query, name).map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
        }
    }

    /// The port of the first URI the server listens on (`soup_server_get_uris`: a list of new `GUri`s).
    private func boundPort(_ server: UnsafeMutablePointer<SoupServer>) -> Int? {
        let head = soup_server_get_uris(server)
        defer { g_slist_free(head) }
        var list = head
        var port: Int?
        while let node = list {
            if let uri = node.pointee.data {
                if port == nil { port = Int(g_uri_get_port(OpaquePointer(uri))) }
                g_uri_unref(OpaquePointer(uri))
            }
            list = node.pointee.next
        }
        return port
    }
}
