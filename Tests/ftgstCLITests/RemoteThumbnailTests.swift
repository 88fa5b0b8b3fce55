// End-to-end tests of `ftgst thumb` on remote (HTTP) sources, driven through the built CLI against a real HTTP
// server on 127.0.0.1 (HTTPTestServer). The only other address ever named is under the reserved `.invalid` TLD
// (RFC 6761), which never resolves, so no test reaches the network.

import FilmtoneTestSupport
import Foundation
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

final class RemoteThumbnailTests: XCTestCase {
    /// Fixtures copied into the served folder (copies, not symlinks: the server refuses paths leaving its root).
    private static let servedFixtures = ["clip.mp4", "clip-faststart.mp4", "photo-exif.jpg", "notmedia.html"]

    private var server: HTTPTestServer!
    private var root: URL!
    private var work: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        root = try TestEnvironment.temporaryDirectory(self)
        for name in Self.servedFixtures {
            try FileManager.default.copyItem(
                atPath: try TestEnvironment.fixture(name),
                toPath: root.appendingPathComponent(name).path)
        }
        work = try TestEnvironment.temporaryDirectory(self)
        server = try HTTPTestServer(root: root)
    }

    override func tearDown() {
        server?.stop()
        server = nil
        super.tearDown()
    }

    // MARK: - Helpers

    /// A cache folder that does not exist yet (ftgst creates it), unique per call.
    private func newCacheDir() -> URL {
        work.appendingPathComponent("cache-\(UUID().uuidString)")
    }

    private struct Timed {
        var result: ProcessResult
        var seconds: TimeInterval
    }

    /// `ftgst thumb SOURCE --cache-dir DIR EXTRA…`, timed.
    private func thumb(_ source: String, _ extra: [String] = [], cacheDir: URL, timeout: TimeInterval = 60) throws
        -> Timed
    {
        let start = Date()
        let result = try Run.ftgst(["thumb", source, "--cache-dir", cacheDir.path] + extra, timeout: timeout)
        return Timed(result: result, seconds: Date().timeIntervalSince(start))
    }

    /// The cache folder holds no file at all (hidden `.part` files included); a folder that was never created
    /// counts as empty.
    private func assertCacheEmpty(_ dir: URL, file: StaticString = #filePath, line: UInt = #line) {
        guard FileManager.default.fileExists(atPath: dir.path) else { return }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? ["<unreadable>"]
        XCTAssertEqual(entries, [], "cache folder must hold no file after a failure", file: file, line: line)
    }

    /// A REMOTE_FETCH_FAILED (or other) failure, plus an empty cache folder.
    private func assertFailed(
        _ run: Timed, code: String, status: Int32, cacheDir: URL,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        assertFailure(run.result, code: code, status: status, file: file, line: line)
        assertCacheEmpty(cacheDir, file: file, line: line)
    }

    /// Checks a successful run: the JSON, the file inside the cache folder, JPEG magic, and the real pixel size
    /// (read back with ffprobe, independent of what ftgst claims).
    @discardableResult
    private func assertThumbnail(
        _ run: Timed, width: Int, height: Int, timeMs: Int?, cacheDir: URL,
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> [String: Any] {
        XCTAssertEqual(run.result.status, 0, "stderr: \(run.result.stderr)", file: file, line: line)
        XCTAssertEqual(run.result.stderr, "", file: file, line: line)
        guard run.result.status == 0 else { throw CocoaError(.coderReadCorrupt) }
        let json = try run.result.json(file: file, line: line)
        XCTAssertEqual(json["width"] as? Int, width, "\(json)", file: file, line: line)
        XCTAssertEqual(json["height"] as? Int, height, "\(json)", file: file, line: line)
        if let timeMs { XCTAssertEqual(json["timeMs"] as? Int, timeMs, "\(json)", file: file, line: line) }
        XCTAssertEqual(json["format"] as? String, "jpeg", file: file, line: line)
        XCTAssertEqual(json["cached"] as? Bool, false, file: file, line: line)
        guard let path = json["path"] as? String else {
            XCTFail("no path in \(json)", file: file, line: line)
            throw CocoaError(.coderReadCorrupt)
        }
        XCTAssertEqual(
            URL(fileURLWithPath: path).deletingLastPathComponent().standardizedFileURL.path,
            cacheDir.standardizedFileURL.path, "thumbnail must be written in --cache-dir",
            file: file, line: line)
        guard let data = FileManager.default.contents(atPath: path) else {
            XCTFail("thumbnail \(path) does not exist", file: file, line: line)
            throw CocoaError(.fileNoSuchFile)
        }
        XCTAssertEqual(Array(data.prefix(3)), [0xFF, 0xD8, 0xFF], "not a JPEG", file: file, line: line)
        XCTAssertEqual(Array(data.suffix(2)), [0xFF, 0xD9], "JPEG has no EOI", file: file, line: line)
        let decoded = try DecodedImage.read(path)
        XCTAssertEqual(decoded.width, width, "decoded width", file: file, line: line)
        XCTAssertEqual(decoded.height, height, "decoded height", file: file, line: line)
        return json
    }

    /// The start offset of a `bytes=N-…` Range header, if it is one.
    private func rangeStart(_ value: String) -> Int64? {
        let lower = value.lowercased().trimmingCharacters(in: .whitespaces)
        guard lower.hasPrefix("bytes="), let dash = lower.firstIndex(of: "-") else { return nil }
        return Int64(lower[lower.index(lower.startIndex, offsetBy: 6)..<dash])
    }

    // MARK: - 1. Success

    func testFaststartClipFromMediaRoute() throws {
        let cache = newCacheDir()
        let run = try thumb(
            server.url("/media/clip-faststart.mp4"), ["--time-ms", "1000", "--tolerance-ms", "0"],
            cacheDir: cache)
        try assertThumbnail(run, width: 320, height: 240, timeMs: 1000, cacheDir: cache)
        XCTAssertFalse(server.requests.isEmpty, "the server must have been asked")
    }

    func testMoovAtEndClipIsStreamedWithRangeRequests() throws {
        let cache = newCacheDir()
        let run = try thumb(
            server.url("/media/clip.mp4"), ["--time-ms", "1000", "--tolerance-ms", "0"],
            cacheDir: cache)
        try assertThumbnail(run, width: 320, height: 240, timeMs: 1000, cacheDir: cache)

        let requests = server.requests
        XCTAssertTrue(requests.allSatisfy { $0.path == "/media/clip.mp4" }, "\(requests.map(\.path))")
        let ranges = requests.compactMap { $0.headers["range"] }
        XCTAssertFalse(ranges.isEmpty, "no request carried a Range header: the file was not streamed")
        // The moov is at the end: the demuxer must have jumped forward, i.e. asked for a range not starting at 0.
        XCTAssertTrue(ranges.contains { (rangeStart($0) ?? 0) > 0 }, "no seek past the start: \(ranges)")
    }

    // MARK: - 2. Headers

    func testAuthHeaderIsSent() throws {
        let cache = newCacheDir()
        let run = try thumb(server.url("/auth/clip-faststart.mp4"), ["--header", "X-Token: secret"], cacheDir: cache)
        try assertThumbnail(run, width: 320, height: 240, timeMs: nil, cacheDir: cache)
        let requests = server.requests
        XCTAssertFalse(requests.isEmpty)
        for request in requests {
            XCTAssertEqual(request.headers["x-token"], "secret", "\(request.method) \(request.path)")
        }
    }

    func testAuthWithoutHeaderFails() throws {
        let cache = newCacheDir()
        let run = try thumb(
            server.url("/auth/clip-faststart.mp4"), ["--timeout-ms", "10000"], cacheDir: cache,
            timeout: 30)
        assertFailed(run, code: "REMOTE_FETCH_FAILED", status: 69, cacheDir: cache)
        XCTAssertFalse(server.requests.isEmpty, "the server must have been asked")
        XCTAssertTrue(server.requests.allSatisfy { $0.headers["x-token"] == nil })
    }

    func testHeadersAreSentOnEveryRequestAcrossRedirects() throws {
        let cache = newCacheDir()
        let run = try thumb(
            server.url("/redirect/auth/clip.mp4"),
            [
                "--header", "X-Token: secret", "--header", "X-Trace: 42",
                "--time-ms", "1000", "--tolerance-ms", "0",
            ],
            cacheDir: cache)
        try assertThumbnail(run, width: 320, height: 240, timeMs: 1000, cacheDir: cache)

        let requests = server.requests
        XCTAssertTrue(
            requests.contains { $0.path.hasPrefix("/redirect/") }, "no /redirect request: \(requests.map(\.path))")
        XCTAssertTrue(requests.contains { $0.path.hasPrefix("/auth/") }, "no /auth request: \(requests.map(\.path))")
        for request in requests {
            XCTAssertEqual(request.headers["x-token"], "secret", "\(request.method) \(request.path)")
            XCTAssertEqual(request.headers["x-trace"], "42", "\(request.method) \(request.path)")
            XCTAssertTrue(
                request.headers["user-agent"]?.hasPrefix("ftgst/") == true,
                "user-agent: \(request.headers["user-agent"] ?? "none")")
        }
    }

    // MARK: - 3. HTTP error statuses

    func testHTTPErrorStatusesAreRemoteFetchFailures() throws {
        let cases: [(String, Int)] = [
            ("/auth/clip.mp4", 401),
            ("/status/403/x.mp4", 403),
            ("/status/404/x.mp4", 404),
            ("/status/500/x.mp4", 500),
        ]
        for (path, status) in cases {
            let cache = newCacheDir()
            let run = try thumb(server.url(path), ["--timeout-ms", "10000"], cacheDir: cache, timeout: 30)
            assertFailed(run, code: "REMOTE_FETCH_FAILED", status: 69, cacheDir: cache)
            XCTAssertTrue(
                run.result.stderr.contains("HTTP \(status)"),
                "message should name the HTTP status \(status): \(run.result.stderr)")
            print(
                "status \(status) (\(path)): \(String(format: "%.2f", run.seconds)) s: \(run.result.stderr)",
                terminator: "")
        }
    }

    // MARK: - 4–7. Network failures

    func testConnectionRefused() throws {
        // A port that was free a moment ago: bind 127.0.0.1:0, read the port, close.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        XCTAssertEqual(bound, 0)
        var actual = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        XCTAssertEqual(named, 0)
        let port = Int(UInt16(bigEndian: actual.sin_port))
        close(fd)
        XCTAssertGreaterThan(port, 0)

        let cache = newCacheDir()
        let run = try thumb(
            "http://127.0.0.1:\(port)/clip.mp4", ["--timeout-ms", "20000"], cacheDir: cache,
            timeout: 60)
        assertFailed(run, code: "REMOTE_FETCH_FAILED", status: 69, cacheDir: cache)
        // At once, not at the 20 s deadline: 10 s leaves room for a debug binary on a loaded machine.
        XCTAssertLessThan(run.seconds, 10, "a refused connection should fail at once, not at the deadline")
        XCTAssertTrue(run.result.stderr.contains("could not connect to or read from the server"), run.result.stderr)
        print("connection refused: \(String(format: "%.2f", run.seconds)) s: \(run.result.stderr)", terminator: "")
    }

    func testUnknownHostFailsFast() throws {
        let cache = newCacheDir()
        let run = try thumb(
            "http://ftgst-test.invalid/x.mp4", ["--timeout-ms", "5000"], cacheDir: cache,
            timeout: 30)
        assertFailed(run, code: "REMOTE_FETCH_FAILED", status: 69, cacheDir: cache)
        // Bounded by --timeout-ms plus process start and teardown (5 s for those on a loaded machine), whatever
        // the resolver does.
        XCTAssertLessThan(run.seconds, 10, "unknown host must fail within the deadline")
        print("unknown host: \(String(format: "%.2f", run.seconds)) s: \(run.result.stderr)", terminator: "")
    }

    func testStalledServerTimesOut() throws {
        let cache = newCacheDir()
        let run = try thumb(server.url("/stall/clip.mp4"), ["--timeout-ms", "1500"], cacheDir: cache, timeout: 30)
        assertFailed(run, code: "REMOTE_FETCH_FAILED", status: 69, cacheDir: cache)
        XCTAssertGreaterThanOrEqual(run.seconds, 1.4, "failed before the deadline: \(run.result.stderr)")
        XCTAssertLessThan(run.seconds, 10, "the deadline was not kept")
        XCTAssertTrue(run.result.stderr.lowercased().contains("timed out"), "message: \(run.result.stderr)")
        XCTAssertTrue(server.requests.contains { $0.path == "/stall/clip.mp4" })
        print("stall: \(String(format: "%.2f", run.seconds)) s: \(run.result.stderr)", terminator: "")
    }

    func testConnectionResetFails() throws {
        let cache = newCacheDir()
        let run = try thumb(server.url("/reset/clip.mp4"), ["--timeout-ms", "5000"], cacheDir: cache, timeout: 30)
        assertFailed(run, code: "REMOTE_FETCH_FAILED", status: 69, cacheDir: cache)
        XCTAssertTrue(server.requests.contains { $0.path == "/reset/clip.mp4" })
        print("reset: \(String(format: "%.2f", run.seconds)) s: \(run.result.stderr)", terminator: "")
    }

    // MARK: - 8. No Range support

    /// A server without Range (`python3 -m http.server`) answers the seek's Range request with the whole body, and
    /// `souphttpsrc` failed with "Server does not support seeking". The grab now reads forward from the start, and
    /// the frame is still the exact one: at 1510 ms the frame shown from 1500 ms, pixel for pixel ffmpeg's.
    func testNoRangeFaststartReadsForwardToTheExactFrame() throws {
        let clip = try TestEnvironment.fixture("clip-faststart.mp4")
        for (time, index) in [(1510, 45), (2990, 89)] {
            let cache = newCacheDir()
            let run = try thumb(
                server.url("/norange/clip-faststart.mp4"),
                ["--time-ms", "\(time)", "--tolerance-ms", "0", "--timeout-ms", "10000", "--format", "png"],
                cacheDir: cache, timeout: 30)
            XCTAssertEqual(run.result.status, 0, "\(time) ms: \(run.result.stderr)")
            let json = try run.result.json()
            XCTAssertEqual(json["timeMs"] as? Int, index * 100 / 3, "\(time) ms")
            let ours = try DecodedImage.read(try XCTUnwrap(json["path"] as? String))
            XCTAssertLessThan(
                ours.meanDifference(try DecodedImage.frame(of: clip, index: index, width: 320, height: 240)), 2)
            XCTAssertGreaterThan(
                ours.meanDifference(try DecodedImage.frame(of: clip, index: index - 1, width: 320, height: 240)), 2)
        }
        XCTAssertTrue(server.requests.allSatisfy { $0.path == "/norange/clip-faststart.mp4" })
        // A time past the end is still DECODE_FAILED, not a frame.
        let cache = newCacheDir()
        let past = try thumb(
            server.url("/norange/clip-faststart.mp4"), ["--time-ms", "5000", "--timeout-ms", "10000"],
            cacheDir: cache, timeout: 30)
        assertFailed(past, code: "DECODE_FAILED", status: 68, cacheDir: cache)
    }

    /// The moov at the end: qtdemux keeps the `mdat` it reads past (it cannot seek back), so reading forward still
    /// gives the exact frame; the server is never asked for a range it ignores a second time.
    func testNoRangeMoovAtEndReadsForwardToo() throws {
        let cache = newCacheDir()
        let run = try thumb(
            server.url("/norange/clip.mp4"),
            ["--time-ms", "2000", "--tolerance-ms", "0", "--timeout-ms", "10000", "--format", "png"],
            cacheDir: cache, timeout: 30)
        XCTAssertEqual(run.result.status, 0, run.result.stderr)
        let json = try run.result.json()
        XCTAssertEqual(json["timeMs"] as? Int, 2000)
        let ours = try DecodedImage.read(try XCTUnwrap(json["path"] as? String))
        let exact = try DecodedImage.frame(
            of: try TestEnvironment.fixture("clip.mp4"), index: 60, width: 320, height: 240)
        XCTAssertLessThan(ours.meanDifference(exact), 2)
    }

    func testNoRangeFaststartFirstFrameNeedsNoSeek() throws {
        let cache = newCacheDir()
        let run = try thumb(
            server.url("/norange/clip-faststart.mp4"),
            ["--time-ms", "0", "--tolerance-ms", "0", "--timeout-ms", "10000"],
            cacheDir: cache, timeout: 30)
        try assertThumbnail(run, width: 320, height: 240, timeMs: 0, cacheDir: cache)
    }

    // MARK: - 9. Remote photo

    func testRemotePhotoAppliesExifOrientation() throws {
        let cache = newCacheDir()
        let run = try thumb(server.url("/media/photo-exif.jpg"), [], cacheDir: cache)
        try assertThumbnail(run, width: 240, height: 320, timeMs: 0, cacheDir: cache)
    }

    // MARK: - 10. Not media

    func testHTMLPageIsUnsupportedFormat() throws {
        let cache = newCacheDir()
        let run = try thumb(server.url("/html/x"), ["--timeout-ms", "10000"], cacheDir: cache, timeout: 30)
        assertFailed(run, code: "UNSUPPORTED_FORMAT", status: 67, cacheDir: cache)
        print("html: \(String(format: "%.2f", run.seconds)) s: \(run.result.stderr)", terminator: "")
    }

    // MARK: - 11. Invalid inputs (rejected before any request)

    func testURLWithoutHostIsInvalidURL() throws {
        let cache = newCacheDir()
        let run = try thumb("http://", [], cacheDir: cache, timeout: 30)
        assertFailed(run, code: "INVALID_URL", status: 65, cacheDir: cache)
    }

    func testBadHeaderNameIsInvalidArgument() throws {
        let cache = newCacheDir()
        let run = try thumb(
            server.url("/media/clip-faststart.mp4"), ["--header", "Bad Name: x"], cacheDir: cache,
            timeout: 30)
        assertFailed(run, code: "INVALID_ARGUMENT", status: 64, cacheDir: cache)
        XCTAssertTrue(server.requests.isEmpty, "an invalid header must be rejected before any request")
    }

    /// Header injection. Note "\r\n" is ONE Swift Character (a grapheme cluster), distinct from "\r" and "\n":
    /// a check written as `contains { $0 == "\r" || $0 == "\n" }` misses exactly the CRLF case, so all three
    /// line breaks are tried.
    func testHeaderWithCRLFIsInvalidArgument() throws {
        for lineBreak in ["\r\n", "\n", "\r"] {
            server.clearRequests()
            let cache = newCacheDir()
            let header = "X-A: b\(lineBreak)X-Evil: 1"
            let run = try thumb(
                server.url("/media/clip-faststart.mp4"), ["--header", header], cacheDir: cache,
                timeout: 30)
            assertFailed(run, code: "INVALID_ARGUMENT", status: 64, cacheDir: cache)
            XCTAssertTrue(
                server.requests.isEmpty,
                "header \(header.debugDescription) must be rejected before any request; requests: "
                    + "\(server.requests.map { "\($0.method) \($0.path) \($0.headers)" })")
            XCTAssertFalse(server.requests.contains { $0.headers["x-evil"] != nil }, "header injected")
        }
    }

    /// The same grapheme-cluster trap for the source: a URL with CR/LF in it is INVALID_URL, never fetched.
    func testSourceWithCRLFIsInvalidURL() throws {
        for lineBreak in ["\r\n", "\n", "\r"] {
            server.clearRequests()
            let cache = newCacheDir()
            let source = server.url("/media/clip-faststart.mp4") + lineBreak + "X-Evil: 1"
            let run = try thumb(source, ["--timeout-ms", "5000"], cacheDir: cache, timeout: 30)
            assertFailed(run, code: "INVALID_URL", status: 65, cacheDir: cache)
            XCTAssertTrue(
                server.requests.isEmpty,
                "source \(source.debugDescription) must not be fetched; requests: "
                    + "\(server.requests.map { "\($0.method) \($0.path)" })")
        }
    }
}
