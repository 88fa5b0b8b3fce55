import FilmtoneTestSupport
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneGst

final class CacheDirectoryTests: XCTestCase {
    private func entry(_ name: String, _ size: Int64, _ age: TimeInterval) -> CacheEntry {
        CacheEntry(name: name, size: size, modified: Date(timeIntervalSince1970: 1_000_000 - age))
    }

    func testEvictsOldestUntilUnderCap() {
        let entries = [entry("new", 40, 1), entry("old", 40, 300), entry("mid", 40, 100), entry("kept", 40, 0)]
        XCTAssertEqual(CacheDirectory.evictionPlan(entries: entries, capBytes: 100, keep: "kept"), ["old", "mid"])
        XCTAssertEqual(CacheDirectory.evictionPlan(entries: entries, capBytes: 160, keep: "kept"), [])
    }

    func testNeverEvictsTheFileJustWrittenEvenIfOverCapAlone() {
        let entries = [entry("big", 500, 0), entry("a", 10, 5)]
        XCTAssertEqual(CacheDirectory.evictionPlan(entries: entries, capBytes: 100, keep: "big"), ["a"])
    }

    func testTiesBreakByName() {
        let entries = [entry("b", 10, 5), entry("a", 10, 5), entry("k", 10, 0)]
        XCTAssertEqual(CacheDirectory.evictionPlan(entries: entries, capBytes: 20, keep: "k"), ["a"])
    }

    func testWriteUnderARegularFileFailsWithWriteFailed() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let file = folder.appendingPathComponent("plain")
        FileManager.default.createFile(atPath: file.path, contents: Data([0]))
        XCTAssertThrowsError(try CacheDirectory.prepare(file.appendingPathComponent("cache"))) {
            XCTAssertEqual(($0 as? FilmtoneError)?.code, .writeFailed)
        }
    }

    func testEvictIgnoresTemporariesAndFolders() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        FileManager.default.createFile(
            atPath: folder.appendingPathComponent(".x.jpg.ftgst-1-2.part").path,
            contents: Data(count: 5000))
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("sub"),
            withIntermediateDirectories: false)
        FileManager.default.createFile(
            atPath: folder.appendingPathComponent("old.jpg").path, contents: Data(count: 3000))
        FileManager.default.createFile(
            atPath: folder.appendingPathComponent("new.jpg").path, contents: Data(count: 3000))
        XCTAssertEqual(Set(CacheDirectory.entries(in: folder).map(\.name)), ["old.jpg", "new.jpg"])
        CacheDirectory.evict(in: folder, capBytes: 4000, keep: "new.jpg")
        XCTAssertEqual(
            Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)),
            [".x.jpg.ftgst-1-2.part", "sub", "new.jpg"])
    }
}
