import Foundation
import Glibc

/// A failed system call: which call, on what, and `errno`. Features map it to their own `FilmtoneError` code
/// (a read failure is `FILE_NOT_FOUND` for a source, `WRITE_FAILED` for a destination).
package struct SystemCallError: Error, CustomStringConvertible {
    package var call: String
    package var path: String
    package var errno: Int32

    /// `strerror`'s text, e.g. "Permission denied".
    package var reason: String { String(cString: strerror(errno)) }
    package var description: String { "\(call) \(path): \(reason)" }
}

/// One open file descriptor and its only owner: opened in `init` (throws on failure), closed in `deinit`
/// unless `close()` already did (whose result matters after writing: NFS reports write errors there).
/// EINTR is retried in every call.
package final class POSIXFile {
    package let descriptor: Int32
    package let path: String
    private var isOpen = true

    /// `open(2)` with `O_CLOEXEC` added, so no child process (a share handler) inherits the descriptor.
    package init(path: String, flags: Int32, mode: mode_t = 0o644) throws {
        var fd: Int32
        repeat { fd = open(path, flags | O_CLOEXEC, mode) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw SystemCallError(call: "open", path: path, errno: errno) }
        descriptor = fd
        self.path = path
    }

    deinit {
        if isOpen { _ = Glibc.close(descriptor) }
    }

    /// Reads up to `buffer.count` bytes; 0 is the end of the file.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if errno != EINTR { throw SystemCallError(call: "read", path: path, errno: errno) }
        }
    }

    /// `pread(2)`: up to `count` bytes at `offset`, without moving the file position; fewer at the end of the file.
    package func read(at offset: Int64, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: max(0, count))
        var filled = 0
        while filled < bytes.count {
            let got = bytes.withUnsafeMutableBytes {
                Glibc.pread(descriptor, $0.baseAddress! + filled, $0.count - filled, off_t(offset) + off_t(filled))
            }
            if got == 0 { break }
            if got < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(call: "pread", path: path, errno: errno)
            }
            filled += got
        }
        return Array(bytes.prefix(filled))
    }

    /// `fstat(2)`'s size of the open file.
    package var size: Int64? {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? Int64(info.st_size) : nil
    }

    /// Writes all of `bytes` (a short write is continued, not an error).
    package func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(call: "write", path: path, errno: errno)
            }
            offset += written
        }
    }

    /// `fsync(2)`: the data is on the disk before the file is renamed into place.
    package func sync() throws {
        guard fsync(descriptor) == 0 else { throw SystemCallError(call: "fsync", path: path, errno: errno) }
    }

    /// Runs `body` holding `flock(LOCK_EX)` on this file (a folder's descriptor locks like a file's), released when
    /// `body` ends or the process dies. Polls every `pollMilliseconds` until `timeoutMilliseconds`, then
    /// `WRITE_FAILED` "`busy` busy: another process held PATH for over N ms"; `isCancelled` is checked between
    /// polls (`CANCELLED`). The one lock wait the cache folder and the library share.
    package func withExclusiveLock<T>(
        busy: String, timeoutMilliseconds: Int64, pollMilliseconds: UInt32, isCancelled: () -> Bool,
        _ body: () throws -> T
    ) throws -> T {
        let deadline = ContinuousClock.now + .milliseconds(timeoutMilliseconds)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let lockError = errno
            if lockError == EINTR { continue }
            guard lockError == EWOULDBLOCK else {
                throw FilmtoneError(.writeFailed, "cannot lock \(path): \(String(cString: strerror(lockError)))")
            }
            if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }
            guard ContinuousClock.now < deadline else {
                throw FilmtoneError(
                    .writeFailed, "\(busy) busy: another process held \(path) for over \(timeoutMilliseconds) ms")
            }
            usleep(pollMilliseconds * 1000)
        }
        // Closing the descriptor would release it too; unlocking first says so explicitly.
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    /// Closes now and reports the error `close(2)` returns.
    package func close() throws {
        guard isOpen else { return }
        isOpen = false
        guard Glibc.close(descriptor) == 0 else { throw SystemCallError(call: "close", path: path, errno: errno) }
    }
}
