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
        options.format = .png
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
        XCTAssertNil(code { $0.toneMap = .off })
    }

    func testFormatAndURLErrors() {
        XCTAssertEqual(code { $0.source = "gopher://x/y" }, .invalidURL)
        XCTAssertNil(code { $0.quality = 0 })
    }

    func testTheCacheKeyChangesWithEverythingThePictureDependsOn() throws {
        let identity = SourceIdentity(location: "/tmp/x.mp4", size: 10, modifiedNanoseconds: 20, inode: 30)
        func key(_ change: (inout ThumbnailOptions) -> Void = { _ in }, source: SourceIdentity = identity) throws
            -> String
        {
            var options = ThumbnailOptions(source: "/tmp/x.mp4")
            options.cacheName = "same"
            change(&options)
            return try ThumbnailRequest(options).cacheKey(source: source)
        }
        let base = try key()
        XCTAssertEqual(try key(), base, "the same request, the same key")
        var others = [
            try key { $0.timeMilliseconds = 1 }, try key { $0.toleranceMilliseconds = 0 },
            try key { $0.maxWidth = 100 }, try key { $0.maxHeight = 100 }, try key { $0.quality = 0.5 },
            try key { $0.format = .png }, try key { $0.toneMap = .off },
        ]
        for changed in [
            SourceIdentity(location: "/tmp/y.mp4", size: 10, modifiedNanoseconds: 20, inode: 30),
            SourceIdentity(location: "/tmp/x.mp4", size: 11, modifiedNanoseconds: 20, inode: 30),
            SourceIdentity(location: "/tmp/x.mp4", size: 10, modifiedNanoseconds: 21, inode: 30),
            SourceIdentity(location: "/tmp/x.mp4", size: 10, modifiedNanoseconds: 20, inode: 31),
        ] {
            others.append(try key(source: changed))
        }
        XCTAssertEqual(Set(others + [base]).count, others.count + 1, "every change gives another key")
        // PNG ignores the quality, so it does not split the cache.
        XCTAssertEqual(
            try key { $0.format = .png },
            try key {
                $0.format = .png
                $0.quality = 0.2
            })
    }

    func testCacheNameKeepsItsOwnExtensionAndOutputNamesTheFormat() throws {
        var options = ThumbnailOptions(source: "/tmp/x.mp4")
        options.cacheDirectory = "/c"
        options.cacheName = "x.jpg"
        XCTAssertEqual(try ThumbnailRequest(options).output.path, "/c/x.jpg")
        options.cacheName = "x.JPEG"
        XCTAssertEqual(try ThumbnailRequest(options).output.path, "/c/x.JPEG")
        options.cacheName = "x.v2"
        XCTAssertEqual(try ThumbnailRequest(options).output.path, "/c/x.v2.jpg")
        XCTAssertEqual(code { $0.cacheName = "x.png" }, .invalidArgument, "a PNG name for a JPEG")

        var own = ThumbnailOptions(source: "/tmp/x.mp4")
        own.output = "/out/a.png"
        own.format = .png
        let request = try ThumbnailRequest(own)
        XCTAssertTrue(request.isOwnFile)
        XCTAssertEqual(request.output.path, "/out/a.png")
        XCTAssertEqual(code { $0.output = "/out/a.png" }, .invalidArgument, "a PNG file for a JPEG")
        XCTAssertEqual(code { $0.output = "/out/a.gif" }, .unsupportedFormat)
        XCTAssertEqual(
            code {
                $0.output = "/out/a.jpg"
                $0.cacheName = "n"
            }, .invalidArgument)
        XCTAssertEqual(
            code {
                $0.output = "/out/a.jpg"
                $0.cacheDirectory = "/c"
            }, .invalidArgument)
        XCTAssertEqual(code { $0.output = "" }, .invalidArgument)
        XCTAssertEqual(
            code {
                $0.source = "/tmp/x.jpg"
                $0.output = "/tmp/x.jpg"
            }, .invalidArgument)
    }
}
