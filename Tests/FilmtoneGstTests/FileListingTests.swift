import FilmtoneTestSupport
import Foundation
import XCTest

@testable import FilmtoneGst

/// `FileListing`, what `listFiles` answers: the kinds by extension (pure), and a folder's listing with links.
final class FileListingTests: XCTestCase {
    func testKindsComeFromTheExtension() {
        XCTAssertEqual(FileListing.kind(name: "a.MP4", isFolder: false), .media)
        XCTAssertEqual(FileListing.kind(name: "a.mkv", isFolder: false), .media)
        XCTAssertEqual(FileListing.kind(name: "p.jpeg", isFolder: false), .media)
        XCTAssertEqual(FileListing.kind(name: "look.CUBE", isFolder: false), .lut)
        XCTAssertEqual(FileListing.kind(name: "looks.cube", isFolder: true), .folder, "a folder is a folder")
        XCTAssertNil(FileListing.kind(name: "notes.txt", isFolder: false))
        XCTAssertNil(FileListing.kind(name: "Makefile", isFolder: false))
    }

    func testALimitedListingLeavesOutLinksThatLeadOutAndDanglingOnes() throws {
        let allowed = try TestEnvironment.temporaryDirectory(self)
        let other = try TestEnvironment.temporaryDirectory(self)
        FileManager.default.createFile(atPath: allowed.appendingPathComponent("in.mp4").path, contents: Data([1]))
        FileManager.default.createFile(atPath: other.appendingPathComponent("out.mp4").path, contents: Data([2]))
        try FileManager.default.createSymbolicLink(
            atPath: allowed.appendingPathComponent("to-out.mp4").path,
            withDestinationPath: other.appendingPathComponent("out.mp4").path)
        try FileManager.default.createSymbolicLink(
            atPath: allowed.appendingPathComponent("to-in.mp4").path,
            withDestinationPath: allowed.appendingPathComponent("in.mp4").path)
        try FileManager.default.createSymbolicLink(
            atPath: allowed.appendingPathComponent("dangling.mp4").path, withDestinationPath: "/nonexistent/x.mp4")
        let access = try FileAccess(folders: [allowed.path])

        let limited = try FileListing.list(allowed.path, allowed: access)
        XCTAssertEqual(limited.entries.map(\.name), ["in.mp4", "to-in.mp4"])
        XCTAssertEqual(limited.entries.map(\.sizeBytes), [1, 1], "a link's size is its target's")
        XCTAssertNil(limited.parent, "the allowed folder's parent is outside")
        // Unlimited (stdio): the link out too, never a dangling one.
        let any = try FileListing.list(allowed.path, allowed: nil)
        XCTAssertEqual(any.entries.map(\.name), ["in.mp4", "to-in.mp4", "to-out.mp4"])
        XCTAssertNotNil(any.parent)
        XCTAssertThrowsError(try FileListing.list(other.path, allowed: access)) { error in
            XCTAssertEqual((error as? FilmtoneError)?.code, .invalidArgument)
        }
        XCTAssertEqual(try FileListing.list(nil, allowed: access).entries.map(\.path), access.folders)
    }
}
