import XCTest

@testable import FilmtoneCore
@testable import FilmtoneGst

final class ThumbnailRequestTests: XCTestCase {
    private func code(_ change: (inout ThumbnailOptions) -> Void) -> FilmtoneError.Code? {
        var options = ThumbnailOptions(source: "/tmp/x.mp4")
        change(&options)
        do {
            _ = try ThumbnailRequest(options)
            return nil
        } catch {
            return (error as? FilmtoneError)?.code
        }
    }

    func testDefaultsAreValid() throws {
        let request = try ThumbnailRequest(ThumbnailOptions(source: "/tmp/x.mp4"), environment: ["HOME": "/home/u"])
        XCTAssertEqual(request.cacheDirectory.path, "/home/u/.cache/ftgst/thumbnails")
        XCTAssertTrue(request.fileName.hasPrefix("thumb-") && request.fileName.hasSuffix(".jpg"))
        XCTAssertEqual(request.tolerance, .milliseconds(2000))
        XCTAssertEqual(request.cacheCapBytes, 100 * 1024 * 1024)
    }

    func testXDGCacheHome() throws {
        var options = ThumbnailOptions(source: "/tmp/x.mp4")
        options.cacheName = "n"
        options.format = "png"
        let request = try ThumbnailRequest(options, environment: ["XDG_CACHE_HOME": "/xdg", "HOME": "/home/u"])
        XCTAssertEqual(request.output.path, "/xdg/ftgst/thumbnails/n.png")
    }

    func testBadValuesAreInvalidArguments() {
        XCTAssertEqual(code { $0.timeMilliseconds = -1 }, .invalidArgument)
        XCTAssertEqual(code { $0.toleranceMilliseconds = -5 }, .invalidArgument)
        XCTAssertEqual(code { $0.quality = 1.5 }, .invalidArgument)
        XCTAssertEqual(code { $0.quality = -0.1 }, .invalidArgument)
        XCTAssertEqual(code { $0.maxWidth = 0 }, .invalidArgument)
        XCTAssertEqual(code { $0.cacheCapMegabytes = 0 }, .invalidArgument)
        XCTAssertEqual(code { $0.timeoutMilliseconds = 0 }, .invalidArgument)
        for name in ["a/b", "..", "x..y", ".hidden", ""] {
            XCTAssertEqual(code { $0.cacheName = name }, .invalidArgument, name)
        }
        XCTAssertEqual(code { $0.headers = ["X: a\r\nY: b"] }, .invalidArgument)
    }

    func testFormatAndURLErrors() {
        XCTAssertEqual(code { $0.format = "webp" }, .unsupportedFormat)
        XCTAssertEqual(code { $0.source = "gopher://x/y" }, .invalidURL)
        XCTAssertNil(code { $0.quality = 0 })
    }
}
