// The test server's throttled `/slow/` route, which the cancel and signal tests rely on to keep an export running:
// its pace is a ceiling no client can beat, Range requests still work, and stop() ends a throttled transfer.

import FilmtoneTestSupport
import Foundation
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

final class HTTPTestServerTests: XCTestCase {
    private var server: HTTPTestServer!
    private var body: [UInt8] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        let root = try TestEnvironment.temporaryDirectory(self)
        // 200 KB that differ from byte to byte, so a wrong offset is seen.
        var generator = SystemRandomNumberGenerator()
        body = (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try Data(body).write(to: root.appendingPathComponent("file.bin"))
        server = try HTTPTestServer(root: root)
        let server = server!
        addTeardownBlock { server.stop() }
    }

    func testSlowSendsTheFullSpeedPartAtOnceAndNeverMoreThanThePaceAfterIt() throws {
        let pace = HTTPTestServer.Pace(fullSpeedBytes: 16_384, bytesPerSecond: 20_000)
        server.slowPace = pace
        let client = try RawHTTPClient(port: server.port)
        let sent = Date()
        try client.send("GET /slow/file.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        // Generous: the first part is sent without any pacing, so only a stalled machine takes long.
        XCTAssertTrue(
            client.read(deadline: Date().addingTimeInterval(10)) { ($0.body?.count ?? 0) >= 16_384 },
            "the full-speed part arrives at once")
        XCTAssertEqual(client.response.head?.hasPrefix("HTTP/1.1 200 "), true, client.response.head ?? "")
        XCTAssertTrue(client.response.head?.contains("Content-Length: 200000") == true)
        XCTAssertTrue(client.response.head?.contains("Accept-Ranges: bytes") == true)

        // Read for a second more. The pace is a ceiling: whatever the machine's speed, no more than the rate times
        // the time since the request (plus one 1/20 s slice) can have arrived. A loaded machine only gets less.
        _ = client.read(deadline: Date().addingTimeInterval(1)) { _ in false }
        let elapsed = Date().timeIntervalSince(sent)
        let received = client.response.body?.count ?? 0
        XCTAssertLessThanOrEqual(received, 16_384 + Int(elapsed * 20_000) + 1_000, "after \(elapsed) s")
        XCTAssertEqual(client.response.body ?? [], Array(body[0..<received]), "the bytes of the file, in order")
        XCTAssertEqual(pace.minimumSeconds(forFileOfSize: 200_000), Double(200_000 - 16_384) / 20_000)
    }

    func testSlowServesRangesWithTheRightBytes() throws {
        server.slowPace = HTTPTestServer.Pace(fullSpeedBytes: 0, bytesPerSecond: 400_000)
        let client = try RawHTTPClient(port: server.port)
        try client.send(
            "GET /slow/file.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=150000-159999\r\n"
                + "Connection: close\r\n\r\n")
        // 10 000 bytes at 400 kB/s: 25 ms by the pace; the deadline only guards against a hang.
        _ = client.read(deadline: Date().addingTimeInterval(30)) { _ in false }
        XCTAssertTrue(client.sawEOF, "Connection: close ends the response")
        XCTAssertEqual(client.response.head?.hasPrefix("HTTP/1.1 206 "), true, client.response.head ?? "")
        XCTAssertTrue(
            client.response.head?.contains("Content-Range: bytes 150000-159999/200000") == true,
            client.response.head ?? "")
        XCTAssertEqual(client.response.body ?? [], Array(body[150_000..<160_000]))
    }

    func testStopEndsAThrottledTransferPromptly() throws {
        server.slowPace = HTTPTestServer.Pace(fullSpeedBytes: 1_000, bytesPerSecond: 100)  // ~33 minutes in all
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /slow/file.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertTrue(client.read(deadline: Date().addingTimeInterval(10)) { ($0.body?.count ?? 0) >= 1_000 })
        XCTAssertEqual(server.openConnections, 1, "the handler is pacing the rest")
        // stop() waits at most 2 s for the handlers; a throttled one checks for it every 50 ms, so it is gone by the
        // time stop() returns (a handler still open would mean stop() gave up).
        server.stop()
        XCTAssertEqual(server.openConnections, 0, "stop() ended the throttled handler")
        _ = client.read(deadline: Date().addingTimeInterval(10)) { _ in false }
        XCTAssertTrue(client.sawEOF, "the client sees the connection end")
    }
}

// MARK: - Client

/// One HTTP/1.1 exchange over a raw socket to 127.0.0.1, every read bounded by a deadline (no URLSession: it
/// would hide how many bytes arrived when).
private final class RawHTTPClient {
    struct Response {
        var bytes: [UInt8] = []

        /// The status line and headers, once complete.
        var head: String? {
            headEnd.map { String(decoding: bytes[..<$0], as: UTF8.self) }
        }

        /// The body bytes received so far, once the head is complete.
        var body: [UInt8]? {
            headEnd.map { Array(bytes[($0 + 4)...]) }
        }

        private var headEnd: Int? {
            guard bytes.count >= 4 else { return nil }
            for index in 0...(bytes.count - 4)
            where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
                return index
            }
            return nil
        }
    }

    private let fd: Int32
    private(set) var response = Response()
    private(set) var sawEOF = false

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CocoaError(.fileReadUnknown) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw CocoaError(.fileReadUnknown)
        }
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw CocoaError(.fileWriteUnknown) }
    }

    /// Reads until `done(response)` holds (true), or the server closes the connection or `deadline` passes
    /// (false).
    func read(deadline: Date, until done: (Response) -> Bool) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while !done(response) {
            if sawEOF { return false }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return false }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(min(left, 0.05) * 1000) + 1)
            if ready < 0 && errno != EINTR {
                sawEOF = true
                continue
            }
            if ready <= 0 { continue }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                response.bytes += chunk[0..<count]
            } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                sawEOF = true  // FIN or RST: either way the response is over
            }
        }
        return true
    }
}
