import FilmtoneCore
import Foundation

/// One file in a cache folder, as eviction sees it.
struct CacheEntry: Equatable {
    var name: String
    var size: Int64
    var modified: Date
}

/// Size-capped cache folder: oldest-first eviction of the files ftgst can prove it wrote (files are written through
/// `StagedFile`). A cache folder may be shared with other files and with other ftgst processes, so:
///
/// - only files a caller recognises as its own (`owned`: a thumbnail's stamp, a mezzanine's manifest) are counted
///   and ever deleted; anything else in the folder is left alone;
/// - writes, hits and evictions of one folder take its lock (`flock` on the folder), so an eviction never deletes a
///   file between another run's look at it and its use;
/// - a run never evicts a file modified at or after its own start (`runStart`): that is another run's fresh file
///   or hit, whose path may not have been returned yet;
/// - nor a file another process holds a `CacheFileLease` on (a path not yet handed over, or still being read).
enum CacheDirectory {
    /// How long a run waits for another run's write or eviction (both short) before `WRITE_FAILED` "cache busy".
    static let lockTimeoutMilliseconds: Int64 = 10_000

    /// Which files to delete so the folder's total is at most `capBytes`: oldest modification first (name as a
    /// tie-break, so the choice is deterministic), never `keep` (the file just written), even if `keep` alone
    /// is over the cap, and never a file modified at or after `startedAt` (another run's, newer than this run).
    /// Pure: unit-tested without a file system.
    static func evictionPlan(entries: [CacheEntry], capBytes: Int64, keep: String, startedAt: Date? = nil)
        -> [String]
    {
        var total = entries.reduce(Int64(0)) { $0 + $1.size }
        var victims: [String] = []
        let oldestFirst = entries.filter { entry in
            entry.name != keep && startedAt.map { entry.modified < $0 } ?? true
        }.sorted {
            ($0.modified, $0.name) < ($1.modified, $1.name)
        }
        for entry in oldestFirst where total > capBytes {
            victims.append(entry.name)
            total -= entry.size
        }
        return victims
    }

    /// Checks a cache folder value before anything is touched: `INVALID_ARGUMENT` if it is empty (which would mean
    /// the current folder) or holds a NUL byte (no such path can exist).
    static func validate(_ value: String?, option: String) throws {
        guard let value else { return }
        guard !value.isEmpty, !value.contains("\0") else {
            throw FilmtoneError(.invalidArgument, "\(option) must name a folder (not empty, no NUL byte)")
        }
    }

    /// Creates the folder (and parents). `WRITE_FAILED` if it cannot exist as a folder.
    static func prepare(_ directory: URL) throws {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw FilmtoneError(.writeFailed, "cannot create cache folder \(directory.path): \(reason(error))")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue
        else { throw FilmtoneError(.writeFailed, "cache folder is not a folder: \(directory.path)") }
    }

    /// Lists the folder's regular files that `owned` recognises (temporaries and the lock excluded).
    static func entries(in directory: URL, owned: (URL) -> Bool) -> [CacheEntry] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.compactMap { name in
            guard !StagedFile.isStaging(name) else { return nil }
            let url = directory.appendingPathComponent(name)
            var info = stat()
            guard lstat(url.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, owned(url) else { return nil }
            return CacheEntry(name: name, size: Int64(info.st_size), modified: modificationDate(info))
        }
    }

    /// Evicts per `evictionPlan`, among the files `owned` recognises, skipping any file under a lease (one it
    /// cannot lock exclusively). Call it holding the folder's lock: leases are taken under it too, so no lease can
    /// start between the check and the unlink. A file another process removed first is not an error.
    static func evict(in directory: URL, capBytes: Int64, keep: String, startedAt: Date?, owned: (URL) -> Bool) {
        // No cap (a batch's named outputs): not even listed, which would cost a stat per file per commit.
        guard capBytes < ThumbnailOptions.uncappedMegabytes * 1024 * 1024 else { return }
        for name in evictionPlan(
            entries: entries(in: directory, owned: owned), capBytes: capBytes, keep: keep, startedAt: startedAt)
        {
            let path = directory.appendingPathComponent(name).path
            guard let file = try? POSIXFile(path: path, flags: O_RDONLY), flock(file.descriptor, LOCK_EX | LOCK_NB) == 0
            else { continue }
            unlink(path)
        }
    }

    /// The start of a run in the clock file times are stamped with (the kernel's coarse clock, which can lag the
    /// clock `Date()` reads by a tick): the modification time of a file the run has just created (its staged
    /// file). nil when it cannot be read.
    static func runStart(createdFile path: String) -> Date? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return modificationDate(info)
    }

    /// Runs `body` holding the folder's lock: `flock(LOCK_EX)` on the folder itself (Linux locks a directory's
    /// descriptor like a file's, so no lock file is left in a folder that may be the user's), released when `body`
    /// ends or the process dies. Waits at most `lockTimeoutMilliseconds`, then `WRITE_FAILED` "cache busy".
    static func withLock<T>(in directory: URL, isCancelled: () -> Bool, _ body: () throws -> T) throws -> T {
        let path = directory.path
        let folder: POSIXFile
        do {
            folder = try POSIXFile(path: path, flags: O_RDONLY | O_DIRECTORY)
        } catch let error as SystemCallError {
            throw FilmtoneError(.writeFailed, "cannot open the cache folder \(path) to lock it: \(error.reason)")
        }
        return try folder.withExclusiveLock(
            busy: "cache", timeoutMilliseconds: lockTimeoutMilliseconds, pollMilliseconds: 5, isCancelled: isCancelled,
            body)
    }

    /// Marks a cache hit as recently used (eviction is by modification time).
    static func touch(_ file: URL) {
        utimes(file.path, nil)
    }

    private static func modificationDate(_ info: stat) -> Date {
        Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
    }

    private static func reason(_ error: Error) -> String {
        (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
    }
}

/// A shared `flock` on one cache file, held from the moment a run places (or hits) it until the caller is done with
/// its path: `CacheDirectory.evict` never deletes a file it cannot lock exclusively. Released when the lease goes
/// (or the process ends).
// @unchecked Sendable: `file` is private and never used after `init`; its descriptor is only closed by its deinit.
final class CacheFileLease: @unchecked Sendable {
    private let file: POSIXFile

    /// Takes the lease on `url`; nil if the file cannot be opened or is being evicted right now. Take it holding
    /// the folder's lock.
    init?(_ url: URL) {
        guard let file = try? POSIXFile(path: url.path, flags: O_RDONLY), flock(file.descriptor, LOCK_SH | LOCK_NB) == 0
        else { return nil }
        self.file = file
    }
}
