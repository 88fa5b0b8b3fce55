import FilmtoneTestSupport
import Foundation
import XCTest

@testable import FilmtoneCore

/// StagedFile: the one way ftgst writes a file that others may see.
final class StagedFileTests: XCTestCase {
    private func contents(_ folder: URL) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
    }

    func testWriteReplacesAndLeavesOnlyTheFinalFile() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let target = folder.appendingPathComponent("x.jpg")
        try StagedFile.write([1, 2, 3], to: target)
        try StagedFile.write([4, 5], to: target)
        XCTAssertEqual(try contents(folder), ["x.jpg"])
        XCTAssertEqual(FileManager.default.contents(atPath: target.path), Data([4, 5]))
    }

    func testTheTemporaryNameIsHiddenBesideTheTargetAndRecognised() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let file = try StagedFile(beside: folder.appendingPathComponent("clip.mp4"))
        XCTAssertEqual(file.url.deletingLastPathComponent().path, folder.path)
        XCTAssertTrue(file.url.lastPathComponent.hasPrefix(".clip.mp4.ftgst-\(getpid())-"), file.path)
        XCTAssertTrue(StagedFile.isStaging(file.url.lastPathComponent))
        XCTAssertFalse(StagedFile.isStaging("clip.mp4"))
        XCTAssertFalse(StagedFile.isStaging(".hidden.part"), "only ftgst's own names")
        file.discard()
    }

    func testAStagedFileThatIsNeverCommittedIsRemoved() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        func failingWrite() throws {
            let file = try StagedFile(beside: folder.appendingPathComponent("out.png"))
            try file.write([1, 2, 3])
            XCTAssertEqual(try contents(folder).count, 1, "the temporary file exists while in flight")
            throw FilmtoneError(.decodeFailed, "something later failed")
        }
        XCTAssertThrowsError(try failingWrite())
        XCTAssertEqual(try contents(folder), [], "deinit removed the temporary file")
    }

    func testCommitWithoutReplacingKeepsAnExistingFile() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let target = folder.appendingPathComponent("out.mp4")
        FileManager.default.createFile(atPath: target.path, contents: Data([9]))
        let file = try StagedFile(beside: target)
        try file.write([1])
        XCTAssertThrowsError(try file.commit(replacing: false)) { error in
            XCTAssertEqual((error as? StagedFile.TargetExists)?.path, target.path)
        }
        XCTAssertEqual(FileManager.default.contents(atPath: target.path), Data([9]), "not replaced")
        try file.commit(as: "other.mp4", replacing: false)
        XCTAssertEqual(try contents(folder), ["out.mp4", "other.mp4"])
        XCTAssertEqual(FileManager.default.contents(atPath: folder.appendingPathComponent("other.mp4").path), Data([1]))
    }

    func testAFolderThatCannotBeWrittenIsWriteFailed() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let plain = folder.appendingPathComponent("plain")
        FileManager.default.createFile(atPath: plain.path, contents: Data([0]))
        // Tests run as root: a path under a regular file (ENOTDIR) is what cannot be written.
        XCTAssertThrowsError(try StagedFile.write([1], to: plain.appendingPathComponent("x.jpg"))) {
            XCTAssertEqual(($0 as? FilmtoneError)?.code, .writeFailed)
        }
        XCTAssertEqual(try contents(folder), ["plain"])
    }

    func testRemoveAllInFlightRemovesOnlyUnplacedFiles() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let placed = try StagedFile(beside: folder.appendingPathComponent("placed.txt"))
        try placed.write(Array("done".utf8))
        try placed.commit(replacing: true)
        let pending = try StagedFile(beside: folder.appendingPathComponent("pending.txt"))
        try pending.write(Array("half".utf8))
        StagedFile.removeAllInFlight()
        XCTAssertEqual(try contents(folder), ["placed.txt"])
        pending.discard()  // already gone: no error, nothing else touched
        XCTAssertEqual(try contents(folder), ["placed.txt"])
    }

    func testWithdrawRemovesOnlyTheFileItPlaced() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let target = folder.appendingPathComponent("a.json")
        let file = try StagedFile(beside: target)
        XCTAssertFalse(file.withdraw(), "nothing placed yet")
        try file.write([1])
        try file.commit(replacing: false)
        XCTAssertTrue(file.withdraw())
        XCTAssertEqual(try contents(folder), [])

        // Someone replaced the placed file: it is theirs now, and stays.
        let second = try StagedFile(beside: target)
        try second.write([2])
        try second.commit(replacing: false)
        try FileManager.default.removeItem(at: target)
        try Data([9]).write(to: target)
        XCTAssertFalse(second.withdraw())
        XCTAssertEqual(FileManager.default.contents(atPath: target.path), Data([9]))
    }

    /// A set placed all or nothing keeps what it replaced: withdrawn, the previous file is back under its name
    /// (the same bytes, the same inode); kept, the previous file is gone once the staged file goes, and no
    /// temporary name is left either way. A new name (nothing replaced) is withdrawn as before.
    func testKeepingPreviousPutsTheReplacedFileBack() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let target = folder.appendingPathComponent("sheet-001.jpg")
        try Data([1, 1]).write(to: target)
        let before = StagedFile.identity(of: target.path)

        var file: StagedFile? = try StagedFile(beside: target)
        try file!.write([2])
        try file!.commit(replacing: true, keepingPrevious: true)
        XCTAssertEqual(FileManager.default.contents(atPath: target.path), Data([2]), "the new file is in place")
        XCTAssertTrue(file!.withdraw())
        XCTAssertEqual(FileManager.default.contents(atPath: target.path), Data([1, 1]), "the previous file is back")
        XCTAssertTrue(StagedFile.identity(of: target.path)! == before!, "the very file, not a copy")
        file = nil
        XCTAssertEqual(try contents(folder), ["sheet-001.jpg"])

        file = try StagedFile(beside: target)
        try file!.write([3])
        try file!.commit(replacing: true, keepingPrevious: true)
        file = nil
        XCTAssertEqual(FileManager.default.contents(atPath: target.path), Data([3]))
        XCTAssertEqual(try contents(folder), ["sheet-001.jpg"], "the previous file went with the staged file")

        let fresh = folder.appendingPathComponent("sheet-002.jpg")
        let new = try StagedFile(beside: fresh)
        try new.write([4])
        try new.commit(replacing: true, keepingPrevious: true)
        XCTAssertTrue(new.withdraw())
        XCTAssertEqual(try contents(folder), ["sheet-001.jpg"])
    }
}
