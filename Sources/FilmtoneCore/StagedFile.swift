internal import CLinux
import Foundation
import Glibc
import Synchronization

/// A file written under a temporary name beside its target and given the target's name only once it is complete:
/// the one way ftgst writes a file that a user or another reader may see (thumbnails in a cache, previews, exports
/// and their sidecars, mezzanines and their manifests, the library's copies and its ledger, cancel requests).
///
/// - The temporary file is `.NAME.ftgst-PID-RANDOM.part` in the target's folder, created with `O_CREAT | O_EXCL`
///   (never an existing file), so the final move is a `rename(2)` or `link(2)` within one file system.
/// - `commit` flushes the data (`fsync`, which flushes the file's inode: also what another writer such as
///   `filesink` wrote at `path`), moves it into place, then flushes the folder.
/// - Until `commit` succeeds, the temporary file is removed again: by `discard()`, by `deinit` (a thrown error
///   that unwinds past it), or by `removeAllInFlight()` when the process must exit at once (a second Ctrl-C).
///   Nothing else is ever deleted: the type only removes a name it created itself.
package final class StagedFile {
    /// The name the file gets on `commit`.
    package let target: URL
    /// The temporary file, in the target's folder.
    package let url: URL
    package var path: String { url.path }

    private var descriptor: POSIXFile?
    private var inFlight = true
    /// The temporary file's device and inode, which its name at the target keeps (`rename` and `link` move names,
    /// not files): how `withdraw()` tells the file it placed from one someone put there since.
    private var identity: (device: UInt64, inode: UInt64)?
    /// A read-only descriptor held for this object's life: while it is open the inode stays allocated, so no other
    /// file can be given the same inode number and pass for this one (file systems reuse freed numbers at once).
    private var pin: POSIXFile?
    /// Where `commit` placed the file.
    private var placed: URL?
    /// `commit(…, keepingPrevious: true)` exchanged the names: the temporary name now holds the file that was at
    /// the target, until `withdraw()` puts it back or this object goes (then it is removed).
    private var holdsPrevious = false

    /// Creates the temporary file beside `target`. `WRITE_FAILED` if the folder does not exist or cannot be
    /// written.
    package init(beside target: URL) throws {
        self.target = target
        let folder = target.deletingLastPathComponent()
        url = folder.appendingPathComponent(
            ".\(target.lastPathComponent).ftgst-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).part")
        // Created and registered under the lock `removeAllInFlight` sweeps with, so no file exists unregistered
        // while a signal stops the process; once it is stopping (after the sweep) nothing new is created.
        let path = url.path
        let created = StagedFile.registry.withLock { registry -> Result<POSIXFile, FilmtoneError> in
            if StagedFile.stopped.isSet() {
                return .failure(FilmtoneError(.cancelled, "stopping: \(target.path) is not written"))
            }
            do {
                let file = try POSIXFile(path: path, flags: O_WRONLY | O_CREAT | O_EXCL, mode: 0o644)
                registry.insert(path)
                return .success(file)
            } catch {
                let reason = (error as? SystemCallError)?.reason ?? "\(error)"
                return .failure(FilmtoneError(.writeFailed, "cannot write in \(folder.path): \(reason)"))
            }
        }
        switch created {
        case .success(let file): descriptor = file
        case .failure(let error):
            inFlight = false
            throw error
        }
        StagedFile.clearAbandoned(in: folder)
        pin = try? POSIXFile(path: url.path, flags: O_RDONLY)
        identity = pin == nil ? nil : StagedFile.identity(of: url.path)
    }

    deinit {
        discard()
        releasePrevious()
    }

    /// Whether `name` is a temporary file of this type (in flight, or left by a process that was killed): never a
    /// finished file, so caches skip it.
    package static func isStaging(_ name: String) -> Bool {
        name.hasPrefix(".") && name.hasSuffix(".part") && name.contains(".ftgst-")
    }

    /// Appends `bytes` to the temporary file.
    package func write(_ bytes: some Collection<UInt8>) throws {
        guard let descriptor else { throw FilmtoneError(.internalError, "staged file already closed: \(path)") }
        do {
            try Array(bytes).withUnsafeBytes { try descriptor.writeAll($0) }
        } catch let error as SystemCallError {
            throw FilmtoneError(.writeFailed, "cannot write \(target.path): \(error.reason)")
        }
    }

    /// Appends the bytes in `buffer` (a streaming copy's chunk).
    package func write(_ buffer: UnsafeRawBufferPointer) throws {
        guard let descriptor else { throw FilmtoneError(.internalError, "staged file already closed: \(path)") }
        do {
            try descriptor.writeAll(buffer)
        } catch let error as SystemCallError {
            throw FilmtoneError(.writeFailed, "cannot write \(target.path): \(error.reason)")
        }
    }

    /// Flushes the data to the disk (`fsync`) and closes the descriptor; `commit` calls it if it has not run.
    /// Call it early when the flushed file is read before it is placed (a hash, a probe).
    package func sync() throws {
        guard let descriptor else { return }
        do {
            try descriptor.sync()
            try descriptor.close()
        } catch let error as SystemCallError {
            throw FilmtoneError(.writeFailed, "cannot write \(target.path): \(error.reason)")
        }
        self.descriptor = nil
    }

    /// Thrown by `commit(replacing: false)` when a file already has the target's name.
    package struct TargetExists: Error {
        package let path: String
    }

    /// Gives the finished file its name: `target`, or `name` in the same folder.
    ///
    /// - `replacing: true`: `rename(2)`, which replaces an existing file atomically (a reader sees the old file or
    ///   the new one, never half of one).
    /// - `replacing: false`: `link(2)` then `unlink(2)`, which fails with `TargetExists` rather than replace a file
    ///   that is already there (even one that appeared a moment ago). On a file system without hard links (FAT,
    ///   exFAT, some FUSE mounts) it falls back to check-then-rename.
    ///
    /// Other failures are `WRITE_FAILED`; on any failure the temporary file is still in flight.
    ///
    /// `keepingPrevious` (with `replacing`), for a set of files placed all or nothing: a regular file at the target
    /// is not unlinked but exchanged with this one (`renameat2` `RENAME_EXCHANGE`, atomic), so that `withdraw()`
    /// can put it back; it is removed when this object goes. Where the file system cannot exchange, a plain rename.
    package func commit(as name: String? = nil, replacing: Bool, keepingPrevious: Bool = false) throws {
        let destination = name.map { target.deletingLastPathComponent().appendingPathComponent($0) } ?? target
        guard inFlight else { throw FilmtoneError(.internalError, "staged file already placed or removed: \(path)") }
        try sync()
        var existing = stat()
        if replacing, keepingPrevious, lstat(destination.path, &existing) == 0,
            (existing.st_mode & S_IFMT) == S_IFREG, ftgst_rename_exchange(path, destination.path) == 0
        {
            // The previous file now has the temporary name, still registered: a signal's sweep removes it too.
            inFlight = false
            holdsPrevious = true
            placed = destination
            StagedFile.syncFolder(destination.deletingLastPathComponent())
            return
        }
        if replacing {
            guard rename(path, destination.path) == 0 else { throw writeFailed(destination, errno) }
        } else if link(path, destination.path) == 0 {
            unlink(path)
        } else {
            let linkError = errno
            if linkError == EEXIST { throw TargetExists(path: destination.path) }
            guard [EPERM, EOPNOTSUPP, ENOSYS, EMLINK].contains(linkError) else {
                throw writeFailed(destination, linkError)
            }
            var info = stat()
            if lstat(destination.path, &info) == 0 { throw TargetExists(path: destination.path) }
            guard rename(path, destination.path) == 0 else { throw writeFailed(destination, errno) }
        }
        settle()
        placed = destination
        StagedFile.syncFolder(destination.deletingLastPathComponent())
    }

    /// Commits `files` in order, all or nothing: a failure part way takes back those already placed, latest first
    /// (`withdraw`: only while each name is still the file it wrote; with `keepingPrevious`, the file it replaced is
    /// put back), and rethrows.
    package static func commitAll(_ files: [StagedFile], replacing: Bool, keepingPrevious: Bool = false) throws {
        var placed: [StagedFile] = []
        do {
            for file in files {
                try file.commit(replacing: replacing, keepingPrevious: keepingPrevious)
                placed.append(file)
            }
        } catch {
            for file in placed.reversed() { file.withdraw() }
            throw error
        }
    }

    /// Fails (`WRITE_FAILED`) when `commit` could not place the file: its target is a folder. For a set of files
    /// placed together, checked for every one before any is placed, so that none replaces an existing file and
    /// then the set stops half way.
    package func checkCommittable() throws {
        var info = stat()
        if lstat(target.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { throw writeFailed(target, EISDIR) }
    }

    /// Takes a committed file back, for a set of files that is placed all or nothing: removes the name `commit`
    /// gave it only while that name is still this file (the same device and inode), so a file someone put there
    /// since is left alone. True when it removed the name; false when nothing was placed or the name is no longer
    /// ours.
    /// A file `commit` exchanged with the one it replaced gets that one back under its name (exchanged again),
    /// then the temporary name, ours again, is removed.
    @discardableResult
    package func withdraw() -> Bool {
        guard let placed, let identity, let current = StagedFile.identity(of: placed.path),
            current == identity
        else { return false }
        if holdsPrevious {
            guard ftgst_rename_exchange(path, placed.path) == 0 else { return false }
            holdsPrevious = false
            unlink(path)
            settle()
        } else {
            guard unlink(placed.path) == 0 else { return false }
        }
        self.placed = nil
        StagedFile.syncFolder(placed.deletingLastPathComponent())
        return true
    }

    /// Removes the file a committed exchange replaced (the set it belongs to is placed for good).
    private func releasePrevious() {
        guard holdsPrevious else { return }
        holdsPrevious = false
        unlink(path)
        settle()
    }

    /// The device and inode of the file at `path` (not following a symlink), nil when there is none.
    package static func identity(of path: String) -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// Removes the temporary file unless it was placed; safe to call more than once.
    package func discard() {
        guard inFlight else { return }
        descriptor = nil  // closes it
        unlink(path)
        settle()
    }

    /// Writes `bytes` to `target` in one go: staged, flushed, renamed over any existing file.
    package static func write(_ bytes: some Collection<UInt8>, to target: URL) throws {
        let file = try StagedFile(beside: target)
        try file.write(bytes)
        try file.commit(replacing: true)
    }

    /// Removes every temporary file of this process still in flight: for an exit that cannot unwind (a second
    /// Ctrl-C, a signal). `unlink` only, so it is safe on any thread. `stopping`: the process is ending, and no
    /// file is staged after this (`init` throws `CANCELLED`), so none created during the sweep outlives it.
    package static func removeAllInFlight(stopping: Bool = false) {
        registry.withLock { paths in
            if stopping { stopped.set() }
            for path in paths { unlink(path) }
            paths.removeAll()
        }
    }

    /// Flushes a folder's entries (a new name) to the disk. Best effort: some file systems refuse `fsync` on a
    /// folder.
    package static func syncFolder(_ folder: URL) {
        let fd = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// The process that created a temporary file of this type, from its name (`.NAME.ftgst-PID-RANDOM.part`).
    package static func creator(ofStaging name: String) -> Glibc.pid_t? {
        guard isStaging(name), let marker = name.range(of: ".ftgst-", options: .backwards) else { return nil }
        let fields = name[marker.upperBound...].dropLast(".part".count).split(separator: "-")
        guard fields.count == 2, let pid = Int32(fields[0]), pid > 0, UInt32(fields[1]) != nil else { return nil }
        return pid
    }

    /// Removes, once per folder and process, the temporary files of this type in `folder` that a process which is
    /// gone left behind (killed with SIGKILL, or before this rule): regular files of this user whose name says which
    /// process created them, where no such process exists any more. A live process's, another user's, anything not
    /// named so: left alone.
    package static func clearAbandoned(in folder: URL) {
        guard cleared.withLock({ $0.insert(folder.path).inserted }),
            let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path)
        else { return }
        for name in names {
            guard let pid = creator(ofStaging: name), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else {
                continue
            }
            let path = folder.appendingPathComponent(name).path
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == getuid() else {
                continue
            }
            unlink(path)
        }
    }

    private static let cleared = Mutex<Set<String>>([])
    /// Set by `removeAllInFlight(stopping: true)`: the process is ending, no new file is staged.
    private static let stopped = AtomicFlag()

    // MARK: - Private

    private static let registry = Mutex<Set<String>>([])

    private func settle() {
        inFlight = false
        _ = StagedFile.registry.withLock { $0.remove(path) }
    }

    private func writeFailed(_ destination: URL, _ code: Int32) -> FilmtoneError {
        FilmtoneError(.writeFailed, "cannot write \(destination.path): \(String(cString: strerror(code)))")
    }
}
