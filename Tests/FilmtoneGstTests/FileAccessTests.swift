import FilmtoneGst
import FilmtoneTestSupport
import Foundation
import XCTest

/// `FileAccess`, the `--allow` check of the files a WebSocket client names: real paths, links resolved.
final class FileAccessTests: XCTestCase {
    func testOnlyPathsWhoseRealPathIsInsideAnAllowedFolderPass() throws {
        let allowed = try TestEnvironment.temporaryDirectory(self)
        let other = try TestEnvironment.temporaryDirectory(self)
        let inside = allowed.appendingPathComponent("a.mp4").path
        let outside = other.appendingPathComponent("b.mp4").path
        for path in [inside, outside] { FileManager.default.createFile(atPath: path, contents: Data()) }
        let sub = allowed.appendingPathComponent("sub")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: allowed.appendingPathComponent("out-link").path, withDestinationPath: other.path)
        try FileManager.default.createSymbolicLink(
            atPath: allowed.appendingPathComponent("file-link.mp4").path, withDestinationPath: outside)
        // A sibling whose name starts with the allowed folder's is not inside it.
        let sibling = allowed.path + "-sibling"
        try FileManager.default.createDirectory(atPath: sibling, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: sibling) }
        let access = try FileAccess(folders: [allowed.path])

        for path in [inside, allowed.path, sub.appendingPathComponent("new-output.mp4").path, "file://" + inside] {
            XCTAssertNoThrow(try access.check(source: path, "source"), path)
        }
        XCTAssertNoThrow(try access.check(source: "https://example.com/clip.mp4", "source"), "remote sources pass")
        for path in [
            outside, allowed.appendingPathComponent("file-link.mp4").path,
            allowed.appendingPathComponent("out-link/new.mp4").path, allowed.appendingPathComponent("../x.mp4").path,
            allowed.appendingPathComponent("sub/../../x.mp4").path, sibling + "/x.mp4",
            allowed.appendingPathComponent("missing/deeper.mp4").path, "file://" + outside,
        ] {
            XCTAssertThrowsError(try access.check(source: path, "source"), path) { error in
                XCTAssertEqual((error as? FilmtoneError)?.code, .invalidArgument, "\(error)")
            }
        }
        XCTAssertThrowsError(try FileAccess(folders: [inside]), "a file is not a folder")
    }
}
