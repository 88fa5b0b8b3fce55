import FilmtoneTestSupport
import Foundation
import Synchronization
import XCTest

/// `ftgst save` end to end through the built binary: the copy and its hash, names and collisions, the once-only
/// promise (sequential and with racing processes), the default library, the lock's deadline and the errors.
final class SaveCLITests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = try TestEnvironment.temporaryDirectory(self)
    }

    // MARK: - Saving

    func testSavesACopyKeepingTheNameAndPrintsPathAndHash() throws {
        let source = try makeFile("look export.mp4", count: 200_000, seed: 1)
        let library = folder.appendingPathComponent("library")
        let result = try save(source, library: library)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        let json = try result.json()
        XCTAssertEqual(Array(json.keys).sorted(), ["path", "sha256"])
        let saved = library.appendingPathComponent("look export.mp4").path
        XCTAssertEqual(json["path"] as? String, saved)
        XCTAssertEqual(json["sha256"] as? String, try sha256sum(source.path))
        XCTAssertEqual(FileManager.default.contents(atPath: saved), FileManager.default.contents(atPath: source.path))
        XCTAssertTrue(result.stdout.hasSuffix("}\n") && result.stdout.split(separator: "\n").count == 1)
        XCTAssertEqual(try visibleNames(library), ["look export.mp4"])
        XCTAssertEqual(try ledger(library).map { $0["name"] as? String }, ["look export.mp4"])
        try assertNoTemporaries(library)
    }

    func testADifferentFileWithTheSameNameGetsASuffix() throws {
        let library = folder.appendingPathComponent("library")
        var paths: [String] = []
        for seed in 1...3 {
            let source = try makeFile("clip.mp4", count: 1000, seed: UInt64(seed), subfolder: "take\(seed)")
            let result = try save(source, library: library)
            XCTAssertEqual(result.status, 0, result.stderr)
            paths.append(try result.json()["path"] as? String ?? "")
        }
        XCTAssertEqual(
            paths.map { URL(fileURLWithPath: $0).lastPathComponent }, ["clip.mp4", "clip-2.mp4", "clip-3.mp4"])
        XCTAssertEqual(try visibleNames(library), ["clip-2.mp4", "clip-3.mp4", "clip.mp4"])
        XCTAssertEqual(try ledger(library).count, 3)
        // Each copy is its own source's content.
        for seed in 1...3 {
            XCTAssertEqual(
                FileManager.default.contents(atPath: paths[seed - 1]),
                Data(TestBytes.pseudoRandom(count: 1000, seed: UInt64(seed))))
        }
        try assertNoTemporaries(library)
    }

    func testTheSameContentIsNeverSavedTwice() throws {
        let source = try makeFile("clip.mp4", count: 5000, seed: 9)
        let library = folder.appendingPathComponent("library")
        let first = try save(source, library: library)
        XCTAssertEqual(first.status, 0, first.stderr)
        let saved = library.appendingPathComponent("clip.mp4").path

        let second = try save(source, library: library)
        assertFailure(second, code: "SAVE_FAILED", status: 77)
        XCTAssertEqual(second.stderr, "[SAVE_FAILED] already saved as \(saved)\n")

        // Content is the key, not the name: a renamed copy elsewhere is refused too.
        let renamed = try makeFile("renamed.mov", count: 5000, seed: 9, subfolder: "other")
        let third = try save(renamed, library: library)
        assertFailure(third, code: "SAVE_FAILED", status: 77)
        XCTAssertTrue(third.stderr.contains("already saved as \(saved)"), third.stderr)

        XCTAssertEqual(try visibleNames(library), ["clip.mp4"])
        XCTAssertEqual(try ledger(library).count, 1)
        try assertNoTemporaries(library)
    }

    func testARemovedCopyStillCountsAsSaved() throws {
        let source = try makeFile("clip.mp4", count: 100, seed: 3)
        let library = folder.appendingPathComponent("library")
        XCTAssertEqual(try save(source, library: library).status, 0)
        try FileManager.default.removeItem(at: library.appendingPathComponent("clip.mp4"))
        let again = try save(source, library: library)
        assertFailure(again, code: "SAVE_FAILED", status: 77)
        XCTAssertTrue(again.stderr.contains("since removed"), again.stderr)
        XCTAssertEqual(try visibleNames(library), [])
    }

    /// Six real processes save the same file at the same moment: exactly one copy, one ledger entry, one
    /// success and five `SAVE_FAILED`.
    func testConcurrentSavesOfTheSameFileMakeExactlyOneCopy() throws {
        // Large enough that the hashing and copying of the six processes overlap.
        let source = try makeFile("race.mp4", count: 4 * 1024 * 1024, seed: 5)
        let library = folder.appendingPathComponent("library")
        let results = try runConcurrently(6, ["save", source.path, "--library", library.path])
        let successes = results.filter { $0.status == 0 }
        let refusals = results.filter { $0.status == 77 }
        XCTAssertEqual(successes.count, 1, results.map { "\($0.status): \($0.stderr)" }.joined(separator: "\n"))
        XCTAssertEqual(refusals.count, 5, results.map { "\($0.status): \($0.stderr)" }.joined(separator: "\n"))
        let saved = library.appendingPathComponent("race.mp4").path
        for refusal in refusals {
            assertFailure(refusal, code: "SAVE_FAILED", status: 77)
            XCTAssertTrue(refusal.stderr.contains("already saved as \(saved)"), refusal.stderr)
        }
        XCTAssertEqual(try successes.first?.json()["path"] as? String, saved)
        XCTAssertEqual(try visibleNames(library), ["race.mp4"])
        XCTAssertEqual(try ledger(library).count, 1)
        XCTAssertEqual(FileManager.default.contents(atPath: saved), FileManager.default.contents(atPath: source.path))
        try assertNoTemporaries(library)
    }

    // MARK: - Default library

    func testDefaultLibraryComesFromXdgUserDir() throws {
        let pictures = folder.appendingPathComponent("My Pictures")
        let tools = try standIn(
            "xdg-user-dir",
            """
            #!/bin/sh
            [ "$1" = PICTURES ] || exit 2
            echo '\(pictures.path)'
            """)
        let home = folder.appendingPathComponent("home")
        let source = try copyFixture("photo.jpg", as: "still.jpg")
        let result = try Run.ftgst(
            ["save", source.path],
            environment: ["PATH": "\(tools.path):/usr/bin:/bin", "HOME": home.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try result.json()["path"] as? String, pictures.appendingPathComponent("Filmtone/still.jpg").path)
        XCTAssertFalse(FileManager.default.fileExists(atPath: home.path))
    }

    func testDefaultLibraryIsHomePicturesWhenXdgUserDirIsAbsentOrAnswersHome() throws {
        let home = folder.appendingPathComponent("home")
        let expected = home.appendingPathComponent("Pictures/Filmtone")
        let noTools = folder.appendingPathComponent("empty-bin")
        try FileManager.default.createDirectory(at: noTools, withIntermediateDirectories: true)
        let first = try copyFixture("photo.png", as: "a.png")
        let absent = try Run.ftgst(["save", first.path], environment: ["PATH": noTools.path, "HOME": home.path])
        XCTAssertEqual(absent.status, 0, absent.stderr)
        XCTAssertEqual(try absent.json()["path"] as? String, expected.appendingPathComponent("a.png").path)

        // xdg-user-dir prints $HOME when no pictures folder is configured.
        let tools = try standIn("xdg-user-dir", "#!/bin/sh\necho \"$HOME\"\n")
        let second = try copyFixture("photo.jpg", as: "b.jpg")
        let answersHome = try Run.ftgst(
            ["save", second.path],
            environment: ["PATH": "\(tools.path):/usr/bin:/bin", "HOME": home.path])
        XCTAssertEqual(answersHome.status, 0, answersHome.stderr)
        XCTAssertEqual(try answersHome.json()["path"] as? String, expected.appendingPathComponent("b.jpg").path)
    }

    /// `ftgst save` put videos into the pictures folder; a video goes to `$(xdg-user-dir VIDEOS)/Filmtone`, audio to
    /// `MUSIC`'s, a picture to `PICTURES`'s, each told from the file's content, whatever its name says.
    func testDefaultLibraryFollowsWhatTheFileHolds() throws {
        let videos = folder.appendingPathComponent("My Videos")
        let pictures = folder.appendingPathComponent("My Pictures")
        let music = folder.appendingPathComponent("My Music")
        let tools = try standIn(
            "xdg-user-dir",
            """
            #!/bin/sh
            case "$1" in
              VIDEOS) echo '\(videos.path)' ;;
              PICTURES) echo '\(pictures.path)' ;;
              MUSIC) echo '\(music.path)' ;;
              *) exit 2 ;;
            esac
            """)
        let home = folder.appendingPathComponent("home")
        let environment = ["PATH": "\(tools.path):/usr/bin:/bin", "HOME": home.path]
        let cases: [(fixture: String, name: String, folder: URL)] = [
            ("clip.mp4", "clip.mp4", videos), ("rotated.mp4", "take.mov", videos), ("ramp10.mkv", "ramp.mkv", videos),
            ("photo.jpg", "photo.jpg", pictures), ("photo.png", "photo.png", pictures),
            ("photo.avif", "photo.avif", pictures), ("animated.webp", "anim.webp", pictures),
            ("tone.m4a", "tone.m4a", music),
            // The content decides, not the name.
            ("longgop.mp4", "clip.jpg", videos), ("photo-exif.jpg", "still.mp4", pictures),
        ]
        for (fixture, name, expected) in cases {
            let source = try copyFixture(fixture, as: name)
            let result = try Run.ftgst(["save", source.path], environment: environment)
            XCTAssertEqual(result.status, 0, "\(name): \(result.stderr)")
            XCTAssertEqual(
                (try? result.json())?["path"] as? String, expected.appendingPathComponent("Filmtone/\(name)").path,
                name)
        }
        // Without xdg-user-dir: $HOME/Videos.
        let noTools = folder.appendingPathComponent("empty-bin")
        try FileManager.default.createDirectory(at: noTools, withIntermediateDirectories: true)
        let video = try copyFixture("clip-faststart.mp4", as: "fast.mp4")
        let plain = try Run.ftgst(["save", video.path], environment: ["PATH": noTools.path, "HOME": home.path])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertEqual(
            try plain.json()["path"] as? String, home.appendingPathComponent("Videos/Filmtone/fast.mp4").path)
        XCTAssertFalse(FileManager.default.fileExists(atPath: home.appendingPathComponent("Pictures").path))
    }

    // MARK: - Lock

    /// Another holder of the library's lock: the save waits at most FTGST_LIBRARY_LOCK_TIMEOUT_MS, fails with
    /// "library busy" and leaves nothing; once the lock is free, the same save works.
    func testAHeldLockIsLibraryBusyWithinTheDeadline() throws {
        let library = folder.appendingPathComponent("library")
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        let lock = library.appendingPathComponent(".ftgst-ledger.lock").path
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = [lock, "sleep", "30"]
        holder.standardInput = FileHandle.nullDevice
        try holder.run()
        // Process starts each child in a process group of its own: -pid reaches flock and its sleep.
        defer {
            kill(-holder.processIdentifier, SIGKILL)
            holder.waitForExit(timeout: 10)
        }
        // Wait (at most 10 s) until flock(1) really holds it.
        let start = Date()
        while try Run.process(URL(fileURLWithPath: "/usr/bin/flock"), ["-n", lock, "true"]).status == 0 {
            guard Date().timeIntervalSince(start) < 10 else {
                XCTFail("flock(1) never took the lock")
                return
            }
            usleep(20_000)
        }
        let source = try makeFile("clip.mp4", count: 1000, seed: 4)
        let began = Date()
        let busy = try Run.ftgst(
            ["save", source.path, "--library", library.path],
            environment: ["FTGST_LIBRARY_LOCK_TIMEOUT_MS": "300"])
        assertFailure(busy, code: "WRITE_FAILED", status: 73)
        XCTAssertTrue(busy.stderr.contains("library busy"), busy.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(began), 10)
        // The deadline is an option too, and the option wins over the environment.
        let optionBegan = Date()
        let byOption = try Run.ftgst(
            ["save", source.path, "--library", library.path, "--lock-timeout-ms", "300"],
            environment: ["FTGST_LIBRARY_LOCK_TIMEOUT_MS": "600000"])
        assertFailure(byOption, code: "WRITE_FAILED", status: 73)
        XCTAssertTrue(byOption.stderr.contains("library busy"), byOption.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(optionBegan), 10, "--lock-timeout-ms 300 must be kept")
        for bad in ["0", "-5", "soon"] {
            assertFailure(
                try Run.ftgst(["save", source.path, "--library", library.path, "--lock-timeout-ms", bad]),
                code: "INVALID_ARGUMENT", status: 64)
        }
        XCTAssertEqual(try visibleNames(library), [])
        try assertNoTemporaries(library)

        kill(-holder.processIdentifier, SIGKILL)
        XCTAssertTrue(holder.waitForExit(timeout: 10), "flock(1) outlived SIGKILL")
        let free = try save(source, library: library)
        XCTAssertEqual(free.status, 0, free.stderr)
    }

    // MARK: - Errors

    func testMissingSourceOrDirectoryIsFileNotFound() throws {
        let library = folder.appendingPathComponent("library")
        let missing = try Run.ftgst(["save", folder.appendingPathComponent("nope.mp4").path, "--library", library.path])
        assertFailure(missing, code: "FILE_NOT_FOUND", status: 66)
        let directory = try Run.ftgst(["save", folder.path, "--library", library.path])
        assertFailure(directory, code: "FILE_NOT_FOUND", status: 66)
        XCTAssertTrue(directory.stderr.contains("is a directory"), directory.stderr)
    }

    func testLibraryUnderARegularFileIsWriteFailed() throws {
        let blocker = try makeFile("blocker", count: 3, seed: 1)
        let source = try makeFile("clip.mp4", count: 10, seed: 2)
        let result = try save(source, library: blocker.appendingPathComponent("lib"))
        assertFailure(result, code: "WRITE_FAILED", status: 73)
        let itself = try save(source, library: blocker)
        assertFailure(itself, code: "WRITE_FAILED", status: 73)
    }

    func testADamagedLedgerIsWriteFailedAndLeftAlone() throws {
        let library = folder.appendingPathComponent("library")
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        let ledgerFile = library.appendingPathComponent(".ftgst-ledger.json")
        try Data("{not json".utf8).write(to: ledgerFile)
        let result = try save(try makeFile("clip.mp4", count: 10, seed: 2), library: library)
        assertFailure(result, code: "WRITE_FAILED", status: 73)
        XCTAssertTrue(result.stderr.contains("ledger"), result.stderr)
        XCTAssertEqual(FileManager.default.contents(atPath: ledgerFile.path), Data("{not json".utf8))
        XCTAssertEqual(try visibleNames(library), [])
        try assertNoTemporaries(library)
    }

    func testUsageErrors() throws {
        assertFailure(try Run.ftgst(["save"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try Run.ftgst(["save", "a", "b"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try Run.ftgst(["save", "a", "--bogus"]), code: "INVALID_ARGUMENT", status: 64)
        let source = try makeFile("clip.mp4", count: 10, seed: 2)
        assertFailure(
            try Run.ftgst(["save", source.path], environment: ["FTGST_LIBRARY_LOCK_TIMEOUT_MS": "soon"]),
            code: "INVALID_ARGUMENT", status: 64)
        let help = try Run.ftgst(["save", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("usage: ftgst save FILE"))
    }

    // MARK: - Helpers

    private func save(_ source: URL, library: URL) throws -> ProcessResult {
        try Run.ftgst(["save", source.path, "--library", library.path])
    }

    /// A copy of a generated fixture under another name, in a folder of its own.
    private func copyFixture(_ fixture: String, as name: String) throws -> URL {
        let directory = folder.appendingPathComponent("fixture-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture(fixture), toPath: url.path)
        return url
    }

    private func makeFile(_ name: String, count: Int, seed: UInt64, subfolder: String = "src") throws -> URL {
        let directory = folder.appendingPathComponent(subfolder)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(TestBytes.pseudoRandom(count: count, seed: seed)).write(to: url)
        return url
    }

    /// An executable stand-in script in a folder of its own (put on PATH by the caller).
    private func standIn(_ name: String, _ script: String) throws -> URL {
        let tools = folder.appendingPathComponent("bin-\(name)")
        try FileManager.default.createDirectory(at: tools, withIntermediateDirectories: true)
        let path = tools.appendingPathComponent(name).path
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o755)
        return tools
    }

    /// The library's names other than its hidden bookkeeping (ledger, lock).
    private func visibleNames(_ library: URL) throws -> [String] {
        guard FileManager.default.fileExists(atPath: library.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: library.path).filter { !$0.hasPrefix(".") }.sorted()
    }

    private func assertNoTemporaries(_ library: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: library.path)
        let allowed: Set<String> = [".ftgst-ledger.json", ".ftgst-ledger.lock"]
        let stray = names.filter { $0.hasPrefix(".") && !allowed.contains($0) }
        XCTAssertEqual(stray, [], "temporary files left in the library", file: file, line: line)
    }

    private func ledger(_ library: URL) throws -> [[String: Any]] {
        let data = try Data(contentsOf: library.appendingPathComponent(".ftgst-ledger.json"))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return object?["entries"] as? [[String: Any]] ?? []
    }

    private func sha256sum(_ path: String) throws -> String {
        String(try Run.tool("sha256sum", [path]).stdout.prefix(64))
    }

    /// Starts `count` ftgst processes back to back (all are running before any is waited for), then collects
    /// them, each within a deadline.
    private func runConcurrently(_ count: Int, _ arguments: [String]) throws -> [ProcessResult] {
        // @unchecked for Process and Pipe; the output, written by the reader threads and read by the test, is
        // behind the Mutex.
        final class Slot: @unchecked Sendable {
            let process = Process()
            let out = Pipe()
            let err = Pipe()
            let output = Mutex((out: Data(), err: Data()))
        }
        let slots = (0..<count).map { _ in Slot() }
        let drained = DispatchGroup()
        for slot in slots {
            slot.process.executableURL = TestEnvironment.binary
            slot.process.arguments = arguments
            slot.process.standardInput = FileHandle.nullDevice
            slot.process.standardOutput = slot.out
            slot.process.standardError = slot.err
            drained.enter()
            DispatchQueue.global().async {
                let data = slot.out.fileHandleForReading.readDataToEndOfFile()
                try? slot.out.fileHandleForReading.close()  // Foundation's Pipe would leave it open
                slot.output.withLock { $0.out = data }
                drained.leave()
            }
            drained.enter()
            DispatchQueue.global().async {
                let data = slot.err.fileHandleForReading.readDataToEndOfFile()
                try? slot.err.fileHandleForReading.close()
                slot.output.withLock { $0.err = data }
                drained.leave()
            }
        }
        for slot in slots { try slot.process.run() }
        let deadline = Date().addingTimeInterval(120)
        for slot in slots {
            slot.process.waitForExit(timeout: max(0, deadline.timeIntervalSinceNow))
            if slot.process.isRunning {
                kill(slot.process.processIdentifier, SIGKILL)
                XCTFail("ftgst save did not finish within the deadline")
            }
        }
        if drained.wait(timeout: .now() + 10) == .timedOut { XCTFail("output pipes still open 10 s after the exits") }
        return slots.map { slot in
            // terminationStatus traps while the process runs: -1 for one that outlived even SIGKILL.
            let exited = slot.process.waitForExit(timeout: 5)
            let (out, err) = slot.output.withLock { ($0.out, $0.err) }
            return ProcessResult(
                status: exited ? slot.process.terminationStatus : -1,
                stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
        }
    }
}
