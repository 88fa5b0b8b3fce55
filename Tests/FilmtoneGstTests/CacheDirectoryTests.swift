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

    func testNeverEvictsWhatIsNewerThanTheRun() {
        // Another run's file written (or hit) at or after this run's start may not have been returned yet.
        let entries = [entry("old", 40, 300), entry("sibling", 40, 10), entry("same-tick", 40, 20), entry("k", 40, 0)]
        let started = Date(timeIntervalSince1970: 1_000_000 - 20)
        XCTAssertEqual(
            CacheDirectory.evictionPlan(entries: entries, capBytes: 0, keep: "k", startedAt: started), ["old"])
    }

    func testEvictTouchesOnlyOwnedFilesAndIgnoresTemporariesAndFolders() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        FileManager.default.createFile(
            atPath: folder.appendingPathComponent(".x.jpg.ftgst-1-2.part").path,
            contents: Data(count: 5000))
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("sub"),
            withIntermediateDirectories: false)
        let stamped = ImageStamp.insert(timeMilliseconds: 0, into: [0xFF, 0xD8, 0xFF, 0xD9], format: .jpeg)
        for name in ["old.jpg", "new.jpg"] {
            FileManager.default.createFile(
                atPath: folder.appendingPathComponent(name).path,
                contents: Data(stamped + [UInt8](repeating: 0, count: 3000)))
        }
        FileManager.default.createFile(
            atPath: folder.appendingPathComponent("holiday.jpg").path,
            contents: Data([0xFF, 0xD8] + [UInt8](repeating: 0, count: 9000)))
        let owned = ImageStamp.isStamped(file:)
        XCTAssertEqual(Set(CacheDirectory.entries(in: folder, owned: owned).map(\.name)), ["old.jpg", "new.jpg"])
        let never: () -> Bool = { false }
        try CacheDirectory.withLock(in: folder, isCancelled: never) {
            CacheDirectory.evict(in: folder, capBytes: 4000, keep: "new.jpg", startedAt: nil, owned: owned)
        }
        XCTAssertEqual(
            Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)),
            [".x.jpg.ftgst-1-2.part", "sub", "new.jpg", "holiday.jpg"])
    }

    func testEmptyFolderValueIsInvalid() {
        for value in ["", "a\0b"] {
            XCTAssertThrowsError(try CacheDirectory.validate(value, option: "--cache-dir")) {
                XCTAssertEqual(($0 as? FilmtoneError)?.code, .invalidArgument)
            }
        }
        XCTAssertNoThrow(try CacheDirectory.validate(nil, option: "--cache-dir"))
        XCTAssertNoThrow(try CacheDirectory.validate(".", option: "--cache-dir"))
    }

    func testAThumbnailHeldByItsCallerIsNotEvictedBySiblings() async throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        // Each thumbnail of the noise fixture at full size is alone over the 1 MiB cap.
        let big = [
            "--cache-dir", folder.path, "--cache-cap-mb", "1", "--format", "png", "--max-width", "1200",
            "--max-height", "1200",
        ]
        var options = ThumbnailOptions(source: try TestEnvironment.fixture("noise.png"))
        options.cacheDirectory = folder.path
        options.cacheCapMegabytes = 1
        options.format = .png
        options.maxWidth = 1200
        options.maxHeight = 1200
        let noise = try TestEnvironment.fixture("noise.png")
        let path = try await Thumbnails.withThumbnail(options) { held in
            // Older than any sibling's start, so only the hold keeps it: a sibling evicts everything else.
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -100)], ofItemAtPath: held.path)
            let sibling = try Run.ftgst(["thumb", noise] + big)
            XCTAssertEqual(sibling.status, 0, sibling.stderr)
            XCTAssertTrue(FileManager.default.fileExists(atPath: held.path), "evicted while its caller held it")
            return held.path
        }
        // Released: the next run may evict it.
        let later = try Run.ftgst(["thumb", noise] + big)
        XCTAssertEqual(later.status, 0, later.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }
}
