import XCTest

@testable import FilmtoneCore
@testable import FilmtoneGst

final class MediaSourceTests: XCTestCase {
    func testPathsAndFileURIs() throws {
        XCTAssertEqual(try MediaSource.parse("/tmp/a b.mp4"), .local(path: "/tmp/a b.mp4"))
        XCTAssertEqual(try MediaSource.parse("clips/x.mp4", relativeTo: "/work"), .local(path: "/work/clips/x.mp4"))
        XCTAssertEqual(try MediaSource.parse("file:///tmp/a%20b.mp4"), .local(path: "/tmp/a b.mp4"))
        XCTAssertEqual(try MediaSource.parse("file://localhost/tmp/x.mp4"), .local(path: "/tmp/x.mp4"))
        XCTAssertEqual(try MediaSource.parse("/tmp/it's \"q\" ! a=b.mp4"), .local(path: "/tmp/it's \"q\" ! a=b.mp4"))
        XCTAssertEqual(MediaSource.local(path: "/tmp/a b.mp4").uri, "file:///tmp/a%20b.mp4")
    }

    func testHTTPURLs() throws {
        let source = try MediaSource.parse("https://example.com/v.mp4?x=1")
        XCTAssertTrue(source.isRemote)
        XCTAssertEqual(source.uri, "https://example.com/v.mp4?x=1")
        XCTAssertTrue(try MediaSource.parse("HTTP://127.0.0.1:8080/a.mp4").isRemote)
    }

    func testInvalidURLs() {
        for text in [
            "", "http://", "https:///nohost", "ftp://example.com/a.mp4", "rtsp://cam/1", "file://host/x",
            "data:video/mp4;base64,AA", "/tmp/a\nb.mp4", "http://exa mple.com/x",
            // Control characters, typed or percent-encoded in a file URI: refused, the same in every command.
            "/tmp/a\tb.mp4", "/tmp/a\u{1B}b.mp4", "/tmp/a\u{7F}b.mp4", "file:///tmp/a%0Ab.mp4", "file:///tmp/a%09b.mp4",
        ] {
            XCTAssertThrowsError(try MediaSource.parse(text), text) { error in
                XCTAssertEqual((error as? FilmtoneError)?.code, .invalidURL, text)
            }
        }
    }

    func testRedactedURLsHideThePasswordAndQueryValues() {
        XCTAssertEqual(
            MediaSource.redacted("http://user:PASSWORD@host/a.mp4?token=T&x=1&flag"),
            "http://user:***@host/a.mp4?token=***&x=***&***")
        XCTAssertEqual(MediaSource.redacted("https://TOKEN@host/a.mp4"), "https://***@host/a.mp4")
        XCTAssertEqual(MediaSource.redacted("https://host/a.mp4"), "https://host/a.mp4")
        XCTAssertEqual(MediaSource.redacted("/media/a?token=T.mp4"), "/media/a?token=T.mp4", "a path is no URL")
    }

    func testPortsOutOfRangeAndMalformedEscapesAreInvalidURLs() throws {
        for text in [
            "http://example.com:99999/a.mp4", "http://example.com:65536/a.mp4", "https://example.com:0/a.mp4",
            "http://example.com/a%zz.mp4", "http://example.com/a%2", "http://example.com/a.mp4?x=%", "file:///a%g1.mp4",
            "file:///tmp/a%00.mp4", "file:///tmp/a%2Fb.mp4", "file:///tmp/a%2f..%2fb.mp4", "file:///tmp/%FF.mp4",
            "file://localhost:80/tmp/a.mp4",
        ] {
            XCTAssertThrowsError(try MediaSource.parse(text), text) { error in
                XCTAssertEqual((error as? FilmtoneError)?.code, .invalidURL, "\(text): \(error)")
            }
        }
        XCTAssertEqual(try MediaSource.parse("http://example.com:65535/a.mp4").uri, "http://example.com:65535/a.mp4")
        XCTAssertEqual(try MediaSource.parse("http://example.com:1/a%20b.mp4").uri, "http://example.com:1/a%20b.mp4")
        XCTAssertEqual(try MediaSource.parse("file:///tmp/caf%C3%A9%25.mp4"), .local(path: "/tmp/café%.mp4"))
        XCTAssertEqual(
            try MediaSource.parse("50%.mp4", relativeTo: "/work"), .local(path: "/work/50%.mp4"),
            "a path is not a URI: its '%' is a character")
    }

    func testUnreadableFilesAreFileNotFound() throws {
        // As root no mode makes a file unreadable; the kernel refuses the first byte of /proc/self/mem (EIO).
        XCTAssertThrowsError(try MediaSource.local(path: "/proc/self/mem").checkExists()) {
            XCTAssertEqual(($0 as? FilmtoneError)?.code, .fileNotFound)
            XCTAssertEqual(($0 as? FilmtoneError)?.message.hasPrefix("cannot read /proc/self/mem: "), true, "\($0)")
        }
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("ftgst-empty-\(UUID().uuidString)")
        try Data().write(to: empty)
        defer { try? FileManager.default.removeItem(at: empty) }
        XCTAssertNoThrow(try MediaSource.local(path: empty.path).checkExists(), "empty is readable: decoding says more")
    }

    func testMissingFilesAndFolders() throws {
        XCTAssertThrowsError(try MediaSource.local(path: "/nonexistent/x.mp4").checkExists()) {
            XCTAssertEqual(($0 as? FilmtoneError)?.code, .fileNotFound)
        }
        XCTAssertThrowsError(try MediaSource.local(path: NSTemporaryDirectory()).checkExists()) {
            XCTAssertEqual(($0 as? FilmtoneError)?.code, .fileNotFound)
        }
    }

    func testHeaders() throws {
        XCTAssertEqual(try HTTPHeader.parse("X-Token:  secret "), HTTPHeader(name: "X-Token", value: "secret"))
        XCTAssertEqual(
            try HTTPHeader.parse("Authorization: Bearer a:b"),
            HTTPHeader(name: "Authorization", value: "Bearer a:b"))
        for bad in ["NoColon", ": empty name", "Bad Name: x", "X-A: b\r\nX-Evil: 1", "X-A: b\nc", "X\rA: b"] {
            XCTAssertThrowsError(try HTTPHeader.parse(bad), bad) {
                XCTAssertEqual(($0 as? FilmtoneError)?.code, .invalidArgument, bad)
            }
        }
    }
}
