// A small, real HTTP/1.1 server on 127.0.0.1 for integration tests that drive GStreamer's souphttpsrc.
//
// It is deliberately built on plain POSIX sockets and Foundation `Thread`s (no outside packages: the build
// machines cannot fetch them). Every socket is non-blocking and every wait is a `poll()` with a short timeout,
// so `stop()` can end any handler, even one that is stalling on purpose, within a few tens of milliseconds.

import Foundation
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP/1.1 file server bound to 127.0.0.1 on a kernel-chosen port, with routes that misbehave on purpose.
///
/// Routes (FILE is a path relative to `root`; a query string is ignored for routing):
/// - `/media/FILE`: GET/HEAD with full single-range support (`bytes=a-b`, `bytes=a-`, `bytes=-n`): 206 with
///   `Content-Range`, 416 when unsatisfiable, 200 without `Range`. `Accept-Ranges: bytes` on every response.
/// - `/norange/FILE`: ignores `Range`; always 200 with the whole body and no `Accept-Ranges`.
/// - `/auth/FILE`: like `/media` but needs the header in `requiredHeader` (default `X-Token: secret`), else 401.
/// - `/redirect/REST`: 302 with `Location: /REST`.
/// - `/status/CODE/ANY`: answers status CODE with a small text body.
/// - `/slow/FILE`: like `/media/` (same Range support), but throttled: the file's first `slowPace.fullSpeedBytes`
///   bytes go out at full speed, every later byte at `slowPace.bytesPerSecond`, in slices of 1/20 s. A client can
///   never get the rest sooner, however fast it is, so "still running" is true by construction; stop() ends a
///   throttled transfer between two slices (within ~50 ms).
/// - `/stall/FILE`: 200 headers (full `Content-Length`) and the first 4096 bytes, then silence until `stop()`
///   or until the client closes.
/// - `/reset/FILE`: 200 headers (full `Content-Length`) and the first 4096 bytes, then a TCP RST.
/// - `/gate/FILE`: like `/media/`, but every request is held (its connection open, nothing sent) until `openGate()`
///   or `stop()`: a barrier that lets a test start many clients and know that none got past its first request
///   before all of them had made one.
/// - `/html/ANY`: 200 `text/html` with a tiny page.
/// - anything else: 404.
///
/// Connections are persistent (keep-alive) unless the client asks for `Connection: close` or speaks HTTP/1.0
/// without `Connection: keep-alive`. Each connection is served on its own thread.
package final class HTTPTestServer: @unchecked Sendable {
    /// One request as the server parsed it.
    package struct Request: Sendable {
        /// The request method, e.g. "GET" or "HEAD".
        package let method: String
        /// The request target exactly as sent (path plus any query string), e.g. "/media/clip.mp4".
        package let path: String
        /// Request headers with lowercased names; repeated headers are joined with ", ".
        package let headers: [String: String]
    }

    /// Failure to set up the listening socket.
    package struct SocketError: Error, CustomStringConvertible {
        package let description: String
    }

    // All state and all threads live in `Core`. The threads retain the core, not this object, so dropping the
    // last reference to an `HTTPTestServer` runs `deinit`, which stops the core and its threads.
    private let core: Core

    /// Starts serving files below `root` on 127.0.0.1 with a kernel-chosen port.
    package init(root: URL) throws {
        core = try Core(root: root)
        core.start()
    }

    deinit {
        core.stop()
    }

    /// A server whose root is a fresh folder of `testCase` (removed when the test ends) holding a copy of the
    /// fixture `fixture` under `name`: what the remote tests serve. Returns the folder too, for tests that add
    /// files to it.
    package static func serving(_ fixture: String, as name: String = "clip.mp4", in testCase: XCTestCase) throws
        -> (server: HTTPTestServer, root: URL)
    {
        let root = try TestEnvironment.temporaryDirectory(testCase)
        try FileManager.default.copyItem(
            atPath: try TestEnvironment.fixture(fixture), toPath: root.appendingPathComponent(name).path)
        return (try HTTPTestServer(root: root), root)
    }

    /// The TCP port the server listens on (on 127.0.0.1).
    package var port: Int { core.port }

    /// "http://127.0.0.1:PORT" followed by `path` (which should begin with "/").
    package func url(_ path: String) -> String {
        "http://127.0.0.1:\(core.port)\(path)"
    }

    /// A snapshot of every request received so far, in arrival order (thread-safe).
    package var requests: [Request] { core.requestsSnapshot() }

    /// Forgets the requests recorded so far.
    package func clearRequests() { core.clearRequests() }

    /// Waits (at most `timeout` seconds) until a request for `path` has arrived, so a test can act while the
    /// server is answering it rather than after a guessed sleep. Returns whether it arrived.
    package func waitForRequest(to path: String, timeout: TimeInterval) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !requests.contains(where: { $0.path == path }) {
            guard Date() < deadline else { return false }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return true
    }

    /// Connections whose handler thread has not ended yet (0 once `stop()` has returned in time).
    package var openConnections: Int { core.openConnections }

    /// How `/slow/` throttles a body.
    package struct Pace: Sendable, Equatable {
        /// Bytes of the file (counted from offset 0, whatever the range asked for) sent at full speed: enough for
        /// a container's header and its first frames.
        package var fullSpeedBytes: Int64
        /// The rate of every byte after those.
        package var bytesPerSecond: Int64

        package init(fullSpeedBytes: Int64, bytesPerSecond: Int64) {
            self.fullSpeedBytes = fullSpeedBytes
            self.bytesPerSecond = bytesPerSecond
        }

        /// Seconds a client needs at least to receive a whole file of `size` bytes from `/slow/`.
        package func minimumSeconds(forFileOfSize size: Int64) -> Double {
            Double(max(0, size - fullSpeedBytes)) / Double(max(1, bytesPerSecond))
        }
    }

    /// The pace of `/slow/` responses (default: 64 KiB at full speed, then 16 KiB/s). Read at the start of each
    /// response, so set it before the request.
    package var slowPace: Pace {
        get { core.slowPace }
        set { core.slowPace = newValue }
    }

    /// The header (name, value) that `/auth/` requires. The name is matched case-insensitively, the value exactly.
    package var requiredHeader: (String, String) {
        get { core.requiredHeader }
        set { core.requiredHeader = newValue }
    }

    /// Lets every request to `/gate/` through, those waiting and those to come.
    package func openGate() { core.gateOpen = true }

    /// Closes the listening socket and every open connection and waits (up to 2 s, normally a few ms) for all
    /// server threads to end. Safe to call more than once.
    package func stop() {
        core.stop()
    }
}

// MARK: - Core

private final class Core: @unchecked Sendable {
    package typealias Request = HTTPTestServer.Request

    package let root: URL
    package let port: Int

    /// Guards everything below. NSCondition is an NSLock plus a condition; `stop()` waits on it for the thread
    /// count to reach zero.
    private let cond = NSCondition()
    private var listenFD: Int32
    private var stopped = false
    private var connections = Set<Int32>()
    private var liveThreads = 0
    private var recorded: [Request] = []
    private var gate = false
    private var authHeader: (String, String) = ("X-Token", "secret")
    private var pace = HTTPTestServer.Pace(fullSpeedBytes: 64 * 1024, bytesPerSecond: 16 * 1024)

    /// How long each poll() sleeps before re-checking `stopped`. Keeps stop() latency well under 100 ms even if
    /// the shutdown() wake-up were somehow missed.
    package static let pollMillis: Int32 = 50

    package init(root: URL) throws {
        self.root = root.standardizedFileURL.resolvingSymlinksInPath()

        // Non-blocking so that accept() after a spurious poll() wake-up never blocks the accept thread.
        let fd = socket(
            AF_INET,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPTestServer.SocketError(description: "socket(): \(Core.errnoText())") }

        // SO_REUSEADDR so that many servers started and stopped in quick succession never trip over sockets
        // that are still in TIME_WAIT.
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))

        // Loopback only, port 0: the kernel picks a free port. Never bind any other address.
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let text = Core.errnoText()
            close(fd)
            throw HTTPTestServer.SocketError(description: "bind(127.0.0.1:0): \(text)")
        }
        guard listen(fd, 128) == 0 else {
            let text = Core.errnoText()
            close(fd)
            throw HTTPTestServer.SocketError(description: "listen(): \(text)")
        }
        var actual = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        guard named == 0 else {
            let text = Core.errnoText()
            close(fd)
            throw HTTPTestServer.SocketError(description: "getsockname(): \(text)")
        }
        listenFD = fd
        port = Int(UInt16(bigEndian: actual.sin_port))
    }

    // MARK: State access

    package var isStopped: Bool {
        cond.lock()
        defer { cond.unlock() }
        return stopped
    }

    package var requiredHeader: (String, String) {
        get {
            cond.lock()
            defer { cond.unlock() }
            return authHeader
        }
        set {
            cond.lock()
            authHeader = newValue
            cond.unlock()
        }
    }

    package var slowPace: HTTPTestServer.Pace {
        get {
            cond.lock()
            defer { cond.unlock() }
            return pace
        }
        set {
            cond.lock()
            pace = newValue
            cond.unlock()
        }
    }

    package var gateOpen: Bool {
        get {
            cond.lock()
            defer { cond.unlock() }
            return gate
        }
        set {
            cond.lock()
            gate = newValue
            cond.unlock()
        }
    }

    package var openConnections: Int {
        cond.lock()
        defer { cond.unlock() }
        return connections.count
    }

    package func requestsSnapshot() -> [Request] {
        cond.lock()
        defer { cond.unlock() }
        return recorded
    }

    package func clearRequests() {
        cond.lock()
        recorded.removeAll()
        cond.unlock()
    }

    private func record(_ request: Request) {
        cond.lock()
        recorded.append(request)
        cond.unlock()
    }

    // MARK: Lifecycle

    package func start() {
        cond.lock()
        liveThreads += 1
        cond.unlock()
        let thread = Thread { [self] in self.acceptLoop() }
        thread.name = "HTTPTestServer.accept:\(port)"
        thread.start()
    }

    package func stop() {
        cond.lock()
        if !stopped {
            stopped = true
            // shutdown() (not close()) wakes any thread blocked in poll() on these sockets at once, while the
            // descriptors stay owned by their threads. Closing them here could race with a thread that is still
            // using the number, which the kernel may already have handed to an unrelated new socket.
            if listenFD >= 0 { shutdown(listenFD, Int32(SHUT_RDWR)) }
            for fd in connections { shutdown(fd, Int32(SHUT_RDWR)) }
        }
        // "Join": wait until every accept/connection thread has left its loop.
        let deadline = Date(timeIntervalSinceNow: 2)
        while liveThreads > 0 {
            if !cond.wait(until: deadline) { break }
        }
        cond.unlock()
    }

    private func threadEnded() {
        cond.lock()
        liveThreads -= 1
        cond.broadcast()
        cond.unlock()
    }

    private func acceptLoop() {
        defer { threadEnded() }
        let fd = listenFD  // only this thread closes it, so reading it once is safe
        while !isStopped {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&pfd, 1, Core.pollMillis) <= 0 { continue }
            // accept4() is not visible to Swift (it needs _GNU_SOURCE), so set the flags with fcntl() instead.
            let client = accept(fd, nil, nil)
            if client < 0 { continue }  // EAGAIN, ECONNABORTED, or EINVAL after shutdown(); loop re-checks stop
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            var one: Int32 = 1
            // Small responses (headers, 401/404 bodies) should not wait for Nagle.
            _ = setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))

            cond.lock()
            if stopped {
                cond.unlock()
                close(client)
                break
            }
            connections.insert(client)
            liveThreads += 1
            cond.unlock()

            let thread = Thread { [self] in self.serveConnection(client) }
            thread.name = "HTTPTestServer.conn:\(client)"
            thread.start()
        }
        cond.lock()
        close(listenFD)
        listenFD = -1
        cond.unlock()
    }

    private func serveConnection(_ fd: Int32) {
        defer {
            // Unregister under the lock before closing, so stop() never shuts down a recycled descriptor number.
            cond.lock()
            connections.remove(fd)
            cond.unlock()
            close(fd)
            threadEnded()
        }
        let conn = Connection(fd: fd, core: self)
        while let parsed = conn.readRequest() {
            switch parsed {
            case .malformed(let status):
                conn.sendSimple(status: status, body: "bad request\n", head: false, keepAlive: false)
                conn.lingeringClose()
                return
            case .request(let request, let keepAlive):
                record(request)
                switch handle(request, keepAlive: keepAlive, conn: conn) {
                case .keepAlive:
                    continue
                case .close:
                    conn.lingeringClose()
                    return
                case .closeNow:
                    return
                }
            }
        }
    }

    // MARK: Routing

    package enum Outcome {
        /// Response complete; read the next request on this connection.
        case keepAlive
        /// Response complete; close politely (FIN, then drain what the client still sends).
        case close
        /// Close at once (client gone, stop() called, or a deliberate reset).
        case closeNow
    }

    package enum FileMode {
        case media, slow, norange, stall, reset
    }

    private func handle(_ request: Request, keepAlive: Bool, conn: Connection) -> Outcome {
        var target = request.path
        if let q = target.firstIndex(where: { $0 == "?" || $0 == "#" }) { target = String(target[..<q]) }
        let isHead = request.method == "HEAD"

        func after(_ prefix: String) -> String? {
            target.hasPrefix(prefix) ? String(target.dropFirst(prefix.count)) : nil
        }

        if let rest = after("/media/") {
            return serveFile(rest, mode: .media, request: request, keepAlive: keepAlive, conn: conn)
        }
        if let rest = after("/gate/") {
            while !gateOpen {
                if isStopped { return .closeNow }
                usleep(UInt32(Core.pollMillis) * 1000)
            }
            return serveFile(rest, mode: .media, request: request, keepAlive: keepAlive, conn: conn)
        }
        if let rest = after("/slow/") {
            return serveFile(rest, mode: .slow, request: request, keepAlive: keepAlive, conn: conn)
        }
        if let rest = after("/norange/") {
            return serveFile(rest, mode: .norange, request: request, keepAlive: keepAlive, conn: conn)
        }
        if let rest = after("/auth/") {
            let (name, value) = requiredHeader
            guard request.headers[name.lowercased()] == value else {
                return conn.sendSimple(
                    status: 401, body: "unauthorized: missing or wrong \(name)\n", head: isHead,
                    keepAlive: keepAlive)
            }
            return serveFile(rest, mode: .media, request: request, keepAlive: keepAlive, conn: conn)
        }
        if let rest = after("/stall/") {
            return serveFile(rest, mode: .stall, request: request, keepAlive: keepAlive, conn: conn)
        }
        if let rest = after("/reset/") {
            return serveFile(rest, mode: .reset, request: request, keepAlive: keepAlive, conn: conn)
        }
        if target.hasPrefix("/redirect/") {
            // Keep the query string: only the "/redirect" segment is removed from the original target.
            let location = String(request.path.dropFirst("/redirect".count))
            return conn.sendSimple(
                status: 302, extra: [("Location", location)], body: "redirecting to \(location)\n",
                head: isHead, keepAlive: keepAlive)
        }
        if let rest = after("/status/") {
            let codeText = rest.split(separator: "/", omittingEmptySubsequences: false).first.map(String.init) ?? ""
            guard let code = Int(codeText), (200...599).contains(code) else {
                return conn.sendSimple(
                    status: 400, body: "bad status code '\(codeText)'\n", head: isHead,
                    keepAlive: keepAlive)
            }
            if code == 204 || code == 304 {  // these must not carry a body
                return conn.sendHeaderOnly(status: code, keepAlive: keepAlive)
            }
            return conn.sendSimple(
                status: code, body: "status \(code) \(Core.reason(code))\n", head: isHead,
                keepAlive: keepAlive)
        }
        if target.hasPrefix("/html/") {
            return conn.sendSimple(
                status: 200, contentType: "text/html",
                body: "<!DOCTYPE html><html><body>not media</body></html>", head: isHead,
                keepAlive: keepAlive)
        }
        return conn.sendSimple(status: 404, body: "not found\n", head: isHead, keepAlive: keepAlive)
    }

    /// Maps a route remainder to a regular file inside `root`, refusing anything that would escape it.
    private func resolveFile(_ rest: String) -> URL? {
        guard let decoded = rest.removingPercentEncoding, !decoded.isEmpty else { return nil }
        let parts = decoded.split(separator: "/")
        guard !parts.isEmpty, !parts.contains(where: { $0 == ".." || $0 == "." }) else { return nil }
        var url = root
        for part in parts { url.appendPathComponent(String(part)) }
        let resolved = url.resolvingSymlinksInPath()
        guard resolved.path.hasPrefix(root.path + "/") else { return nil }
        var st = stat()
        guard stat(resolved.path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return resolved
    }

    private func serveFile(
        _ rest: String, mode: FileMode, request: Request, keepAlive: Bool,
        conn: Connection
    ) -> Outcome {
        let isHead = request.method == "HEAD"
        guard request.method == "GET" || isHead else {
            return conn.sendSimple(
                status: 405, extra: [("Allow", "GET, HEAD")], body: "method not allowed\n",
                head: false, keepAlive: keepAlive)
        }
        guard let file = resolveFile(rest) else {
            return conn.sendSimple(status: 404, body: "not found\n", head: isHead, keepAlive: keepAlive)
        }
        let fileFD = open(file.path, O_RDONLY | O_CLOEXEC)
        guard fileFD >= 0 else {
            return conn.sendSimple(status: 404, body: "not found\n", head: isHead, keepAlive: keepAlive)
        }
        defer { close(fileFD) }
        var st = stat()
        guard fstat(fileFD, &st) == 0 else {
            return conn.sendSimple(status: 500, body: "stat failed\n", head: isHead, keepAlive: keepAlive)
        }
        let size = Int64(st.st_size)
        let type = Core.contentType(for: file.pathExtension)

        switch mode {
        case .media, .slow:
            let pace = mode == .slow ? slowPace : nil
            let accept = ("Accept-Ranges", "bytes")
            switch Core.parseRange(request.headers["range"], size: size) {
            case .none:
                let headers = [("Content-Type", type), ("Content-Length", "\(size)"), accept]
                guard conn.sendHead(status: 200, headers: headers, keepAlive: keepAlive) else { return .closeNow }
                if isHead { return keepAlive ? .keepAlive : .close }
                guard conn.sendFile(fileFD, from: 0, count: size, pace: pace) else { return .closeNow }
            case .unsatisfiable:
                let headers = [("Content-Range", "bytes */\(size)"), ("Content-Length", "0"), accept]
                guard conn.sendHead(status: 416, headers: headers, keepAlive: keepAlive) else { return .closeNow }
            case .range(let start, let end):
                let length = end - start + 1
                let headers = [
                    ("Content-Type", type), ("Content-Length", "\(length)"),
                    ("Content-Range", "bytes \(start)-\(end)/\(size)"), accept,
                ]
                guard conn.sendHead(status: 206, headers: headers, keepAlive: keepAlive) else { return .closeNow }
                if isHead { return keepAlive ? .keepAlive : .close }
                guard conn.sendFile(fileFD, from: start, count: length, pace: pace) else { return .closeNow }
            }
            return keepAlive ? .keepAlive : .close

        case .norange:
            // Deliberately no Accept-Ranges and no Range handling: a server that cannot seek.
            let headers = [("Content-Type", type), ("Content-Length", "\(size)")]
            guard conn.sendHead(status: 200, headers: headers, keepAlive: keepAlive) else { return .closeNow }
            if isHead { return keepAlive ? .keepAlive : .close }
            guard conn.sendFile(fileFD, from: 0, count: size) else { return .closeNow }
            return keepAlive ? .keepAlive : .close

        case .stall, .reset:
            // Promise the whole file, deliver only a prefix.
            let headers = [("Content-Type", type), ("Content-Length", "\(size)")]
            guard conn.sendHead(status: 200, headers: headers, keepAlive: keepAlive) else { return .closeNow }
            if isHead { return keepAlive ? .keepAlive : .close }
            guard conn.sendFile(fileFD, from: 0, count: min(4096, size)) else { return .closeNow }
            if mode == .stall {
                conn.holdUntilClosedOrStopped()
            } else {
                conn.reset()
            }
            return .closeNow
        }
    }

    // MARK: Helpers

    package enum RangeResult: Equatable {
        case none
        case unsatisfiable
        case range(Int64, Int64)
    }

    /// Parses a single `bytes=` range. Syntactically invalid or multi-range headers yield `.none`, which means
    /// "serve the full 200 body" (RFC 9110 §14.2 allows a server to ignore Range).
    package static func parseRange(_ header: String?, size: Int64) -> RangeResult {
        guard let header else { return .none }
        let value = header.trimmingCharacters(in: .whitespaces).lowercased()
        guard value.hasPrefix("bytes=") else { return .none }
        let spec = value.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .none }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)

        if first.isEmpty {  // bytes=-n: the last n bytes
            guard let n = digits(last) else { return .none }
            if n == 0 || size == 0 { return .unsatisfiable }
            return .range(max(0, size - n), size - 1)
        }
        guard let start = digits(first) else { return .none }
        var end = Int64.max
        if !last.isEmpty {
            guard let e = digits(last), e >= start else { return .none }
            end = e
        }
        if start >= size { return .unsatisfiable }
        return .range(start, min(end, size - 1))
    }

    /// A non-negative decimal number; values too large for Int64 saturate rather than fail.
    private static func digits(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text) ?? Int64.max
    }

    package static func contentType(for ext: String) -> String {
        switch ext.lowercased() {
        case "mp4": return "video/mp4"
        case "jpg", "jpeg": return "image/jpeg"
        case "png": return "image/png"
        case "html", "htm": return "text/html"
        default: return "application/octet-stream"
        }
    }

    package static func reason(_ code: Int) -> String {
        switch code {
        case 200: return "OK"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 410: return "Gone"
        case 416: return "Range Not Satisfiable"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return "Status \(code)"
        }
    }

    package static func errnoText() -> String {
        String(cString: strerror(errno))
    }
}

// MARK: - Connection

/// One accepted socket: request parsing and response writing. Used by exactly one thread.
private final class Connection {
    package enum Parsed {
        case request(HTTPTestServer.Request, keepAlive: Bool)
        case malformed(status: Int)
    }

    package let fd: Int32
    package let core: Core
    private var buffer: [UInt8] = []
    private static let maxHeaderBytes = 64 * 1024

    package init(fd: Int32, core: Core) {
        self.fd = fd
        self.core = core
    }

    // MARK: Reading

    /// Waits for readable data and appends it to `buffer`. Returns false on EOF, error, or stop().
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while !core.isStopped {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Core.pollMillis)
            if ready < 0 && errno != EINTR { return false }
            if ready <= 0 { continue }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer.append(contentsOf: chunk[0..<n])
                return true
            }
            if n == 0 { return false }
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
            return false
        }
        return false
    }

    /// Reads the next request head. Returns nil when the client closed the connection or stop() was called.
    package func readRequest() -> Parsed? {
        while true {
            // RFC 9112 §2.2: ignore empty lines before the request line (some clients send CRLF after a body).
            while let first = buffer.first, first == 0x0D || first == 0x0A { buffer.removeFirst() }
            if let (headEnd, consumed) = Connection.findHeadEnd(buffer) {
                // Split into lines on the bytes: Swift treats "\r\n" as one Character, so splitting a String
                // on "\n" would not work.
                let lines = buffer[0..<headEnd].split(separator: 0x0A, omittingEmptySubsequences: false).map {
                    String(decoding: $0.last == 0x0D ? $0.dropLast() : $0, as: UTF8.self)
                }
                buffer.removeFirst(consumed)
                return parse(lines)
            }
            if buffer.count > Connection.maxHeaderBytes { return .malformed(status: 431) }
            if !fill() { return nil }
        }
    }

    /// Finds the blank line ending the head: CRLFCRLF, or bare LFLF from sloppy clients.
    private static func findHeadEnd(_ bytes: [UInt8]) -> (headEnd: Int, consumed: Int)? {
        var i = 0
        while i + 1 < bytes.count {
            if bytes[i] == 0x0A {
                if bytes[i + 1] == 0x0A { return (i, i + 2) }
                if bytes[i + 1] == 0x0D, i + 2 < bytes.count, bytes[i + 2] == 0x0A { return (i, i + 3) }
            }
            i += 1
        }
        return nil
    }

    private func parse(_ headLines: [String]) -> Parsed? {
        var lines = headLines
        guard !lines.isEmpty else { return .malformed(status: 400) }
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: true)
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/") else { return .malformed(status: 400) }
        let method = String(requestLine[0]).uppercased()
        var target = String(requestLine[1])
        let version = String(requestLine[2])

        // Absolute-form target ("GET http://host/path"): keep just the path.
        if let schemeEnd = target.range(of: "://"), !target.hasPrefix("/") {
            let afterScheme = target[schemeEnd.upperBound...]
            target = afterScheme.firstIndex(of: "/").map { String(afterScheme[$0...]) } ?? "/"
        }

        var headers: [String: String] = [:]
        var lastName: String?
        for line in lines where !line.isEmpty {
            if line.first == " " || line.first == "\t", let name = lastName {
                // Obsolete line folding: continuation of the previous header value.
                headers[name, default: ""] += " " + line.trimmingCharacters(in: .whitespaces)
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { continue }
            if let existing = headers[name] {
                headers[name] = existing + ", " + value
            } else {
                headers[name] = value
            }
            lastName = name
        }

        let tokens = Set(
            (headers["connection"] ?? "").lowercased().split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            })
        var keepAlive = version == "HTTP/1.0" ? tokens.contains("keep-alive") : !tokens.contains("close")

        // Only GET/HEAD are expected, but skip any body so the next request on the connection parses cleanly.
        if headers["transfer-encoding"] != nil {
            keepAlive = false  // not worth decoding chunked bodies here; the connection ends after the response
        } else if let lengthText = headers["content-length"], let length = Int(lengthText), length > 0 {
            if !discardBody(length) { return nil }
        }
        return .request(
            HTTPTestServer.Request(method: method, path: target, headers: headers),
            keepAlive: keepAlive)
    }

    private func discardBody(_ length: Int) -> Bool {
        var remaining = length
        while true {
            let take = min(remaining, buffer.count)
            buffer.removeFirst(take)
            remaining -= take
            if remaining == 0 { return true }
            if !fill() { return false }
        }
    }

    // MARK: Writing

    /// Writes all bytes, waiting in short polls while the socket buffer is full. MSG_NOSIGNAL because a client
    /// that hung up must give EPIPE here, not a SIGPIPE that kills the whole test process.
    private func sendAll(_ base: UnsafeRawPointer, _ count: Int) -> Bool {
        var offset = 0
        while offset < count {
            if core.isStopped { return false }
            let n = send(fd, base + offset, count - offset, Int32(MSG_NOSIGNAL))
            if n > 0 {
                offset += n
                continue
            }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&pfd, 1, Core.pollMillis)
                continue
            }
            if n < 0 && errno == EINTR { continue }
            return false
        }
        return true
    }

    private func sendBytes(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return true }
            return sendAll(base, raw.count)
        }
    }

    /// Sends the status line and headers; `Connection` is added from `keepAlive`.
    package func sendHead(status: Int, headers: [(String, String)], keepAlive: Bool) -> Bool {
        var text = "HTTP/1.1 \(status) \(Core.reason(status))\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "Connection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n"
        return sendBytes(Array(text.utf8))
    }

    /// Sends a small complete response. For HEAD only the head goes out, with the Content-Length of the body.
    @discardableResult
    package func sendSimple(
        status: Int, contentType: String = "text/plain; charset=utf-8", extra: [(String, String)] = [],
        body: String, head: Bool, keepAlive: Bool
    ) -> Core.Outcome {
        let bodyBytes = Array(body.utf8)
        let headers = [("Content-Type", contentType), ("Content-Length", "\(bodyBytes.count)")] + extra
        guard sendHead(status: status, headers: headers, keepAlive: keepAlive) else { return .closeNow }
        if !head {
            guard sendBytes(bodyBytes) else { return .closeNow }
        }
        return keepAlive ? .keepAlive : .close
    }

    /// For 204/304, which have no body and no Content-Length.
    package func sendHeaderOnly(status: Int, keepAlive: Bool) -> Core.Outcome {
        guard sendHead(status: status, headers: [], keepAlive: keepAlive) else { return .closeNow }
        return keepAlive ? .keepAlive : .close
    }

    /// Streams `count` bytes of the file from `offset` in 64 KiB chunks (files may be ~100 MB). With a `pace`,
    /// bytes from `pace.fullSpeedBytes` on go out in slices of 1/20 s of the rate, each sent only once the
    /// average since the first throttled slice stays at or under the rate (so the pace does not drift).
    package func sendFile(_ fileFD: Int32, from offset: Int64, count: Int64, pace: HTTPTestServer.Pace? = nil) -> Bool {
        let chunkSize = 64 * 1024
        let chunk = UnsafeMutableRawPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { chunk.deallocate() }
        var position = offset
        var remaining = count
        var throttledStart: ContinuousClock.Instant? = nil
        var throttledSent: Int64 = 0
        while remaining > 0 {
            var want = Int(min(Int64(chunkSize), remaining))
            if let pace, position + Int64(want) > pace.fullSpeedBytes {
                if position < pace.fullSpeedBytes {
                    want = Int(pace.fullSpeedBytes - position)  // the rest of the full-speed part, then the pace
                } else {
                    let rate = max(1, pace.bytesPerSecond)
                    want = Int(min(Int64(want), max(1, rate / 20)))
                    let start = throttledStart ?? ContinuousClock.now
                    throttledStart = start
                    throttledSent += Int64(want)
                    // Due when the bytes sent so far, this slice included, average exactly the rate.
                    let due = start + .nanoseconds(throttledSent * 1_000_000_000 / rate)
                    guard sleep(until: due) else { return false }
                }
            }
            let got = pread(fileFD, chunk, want, off_t(position))
            if got < 0 && errno == EINTR { continue }
            if got <= 0 { return false }  // read error or file shrank: abandon the connection
            guard sendAll(chunk, got) else { return false }
            position += Int64(got)
            remaining -= Int64(got)
        }
        return true
    }

    /// Sleeps until `instant` in slices of at most `Core.pollMillis`, so that stop() is seen between them.
    /// Returns false if the server was stopped.
    private func sleep(until instant: ContinuousClock.Instant) -> Bool {
        while !core.isStopped {
            let left = instant - ContinuousClock.now
            if left <= .zero { return true }
            let micros = min(left, .milliseconds(Int(Core.pollMillis))) / .microseconds(1)
            usleep(useconds_t(max(1, micros)))
        }
        return false
    }

    // MARK: Ending

    /// Polite close for `Connection: close`: send FIN, then briefly read and drop what the client still sends.
    /// Closing with unread input would make the kernel send RST, which can destroy the tail of our response
    /// before the client has read it.
    package func lingeringClose() {
        shutdown(fd, Int32(SHUT_WR))
        var scratch = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<4 {  // at most ~200 ms
            if core.isStopped { return }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Core.pollMillis)
            if ready < 0 && errno != EINTR { return }
            if ready <= 0 { continue }
            let n = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return }
            if n < 0 && errno != EAGAIN && errno != EINTR { return }
        }
    }

    /// For /stall/: keep the connection open and silent until stop() or until the client goes away.
    package func holdUntilClosedOrStopped() {
        var scratch = [UInt8](repeating: 0, count: 4096)
        while !core.isStopped {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Core.pollMillis)
            if ready < 0 && errno != EINTR { return }
            if ready <= 0 { continue }
            // Anything the client sends (e.g. a pipelined request) is dropped; EOF or an error means it left.
            let n = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return }
            if n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { return }
        }
    }

    /// For /reset/: abort the connection with a TCP RST instead of a FIN.
    ///
    /// SO_LINGER {on, 0 s} makes the coming close() discard the socket at once and send RST: the client sees
    /// ECONNRESET ("connection reset by peer") rather than a clean EOF. The caller's close() does the actual
    /// reset. First wait (briefly) until the 4096-byte prefix is acknowledged, because an abortive close also
    /// throws away any data still queued for sending, and the tests want the prefix to arrive.
    package func reset() {
        let tiocoutq: UInt = 0x5411  // TIOCOUTQ == SIOCOUTQ: bytes not yet sent or not yet acknowledged
        for _ in 0..<100 {  // at most ~1 s; loopback normally acknowledges immediately
            if core.isStopped { break }
            var pending: Int32 = 0
            if ioctl(fd, tiocoutq, &pending) != 0 || pending == 0 { break }
            usleep(10_000)
        }
        var lin = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &lin, socklen_t(MemoryLayout<linger>.size))
    }
}
