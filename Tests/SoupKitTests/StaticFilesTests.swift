import FilmtoneTestSupport
import Foundation
import SoupKit
import XCTest

/// The pure rules: which request path names which file, and the token's shape and comparison.
final class StaticFilesTests: XCTestCase {
    func testResolvesOnlyServedTypesInsideTheFolder() throws {
        let base = try TestEnvironment.temporaryDirectory(self)
        let root = try XCTUnwrap(StaticFiles.resolvedFolder(base.path))
        try FileManager.default.createDirectory(atPath: root + "/sub", withIntermediateDirectories: true)
        for name in ["index.html", "sub/index.html", "sub/a.CSS", "b.txt"] {
            try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/" + name))
        }
        XCTAssertEqual(StaticFiles.resolve("/", in: root)?.path, root + "/index.html")
        XCTAssertEqual(StaticFiles.resolve("/sub/", in: root)?.path, root + "/sub/index.html")
        XCTAssertEqual(StaticFiles.resolve("//sub//a.CSS", in: root)?.contentType, "text/css; charset=utf-8")
        for refused in ["/b.txt", "/sub", "/sub/../index.html", "/./index.html", "index.html", "/sub\\a.CSS", ""] {
            XCTAssertNil(StaticFiles.resolve(refused, in: root), refused)
        }
    }

    func testTokenIsThirtyTwoRandomBytesAndMatchesOnlyItself() throws {
        let first = try AccessToken.random()
        let second = try AccessToken.random()
        XCTAssertEqual(first.hex.count, 64)
        XCTAssertTrue(first.hex.allSatisfy { "0123456789abcdef".contains($0) })
        XCTAssertNotEqual(first, second)
        XCTAssertTrue(first.matches(first.hex))
        XCTAssertFalse(first.matches(second.hex))
        XCTAssertFalse(first.matches(String(first.hex.dropLast())))
        XCTAssertFalse(first.matches(first.hex.uppercased()))
        XCTAssertFalse(first.matches(nil))
    }
}
