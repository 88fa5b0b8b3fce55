import FilmtoneCore
import Foundation
import Glibc

/// An export workspace: the folder that makes "one export at a time" true across processes.
///
/// - `export.lock`: held with `flock(LOCK_EX)` for the whole export. The kernel releases it when the holder's
///   descriptor closes, so a crashed or killed export never leaves the workspace locked. The file is never
///   removed (two processes would otherwise lock two different files). It holds the holder's pid, for people.
/// - `cancel-request`: written by `ftgst cancel`; the running export polls for it and stops with the reason
///   `externalCommand`. A file rather than a signal: an export running inside another program (the library)
///   must not be killed by a signal it never asked for.
/// - `records/`: the benchmark records of failed and cancelled exports.
struct Workspace {
    let folder: URL

    static let lockName = "export.lock"
    static let cancelName = "cancel-request"

    var lockPath: String { folder.appendingPathComponent(Workspace.lockName).path }
    var cancelPath: String { folder.appendingPathComponent(Workspace.cancelName).path }
    var records: URL { folder.appendingPathComponent("records") }

    /// `$XDG_RUNTIME_DIR/ftgst` when the session has one, else `$XDG_CACHE_HOME/ftgst/workspace`
    /// (`~/.cache/ftgst/workspace`).
    static func defaultFolder(_ environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/"),
            FileManager.default.fileExists(atPath: runtime)
        {
            return runtime + "/ftgst"
        }
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + "/ftgst/workspace" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.cache/ftgst/workspace"
    }

    func prepare() throws {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw FilmtoneError(
                .writeFailed, "cannot create the workspace \(folder.path): \((error as NSError).localizedDescription)")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue
        else { throw FilmtoneError(.writeFailed, "the workspace is not a folder: \(folder.path)") }
    }

    /// Takes the workspace's lock without waiting: `EXPORT_BUSY` when another export holds it.
    func lock() throws -> WorkspaceLock {
        try prepare()
        let file: POSIXFile
        do {
            file = try POSIXFile(path: lockPath, flags: O_RDWR | O_CREAT, mode: 0o644)
        } catch let error as SystemCallError {
            throw FilmtoneError(.writeFailed, "cannot open the workspace lock: \(error)")
        }
        while flock(file.descriptor, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK {
                let holder =
                    (try? String(contentsOfFile: lockPath, encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
                throw FilmtoneError(
                    .exportBusy,
                    "another export is running in \(folder.path)"
                        + (holder.isEmpty ? "" : " (pid \(holder))"))
            }
            throw FilmtoneError(.writeFailed, "cannot lock \(lockPath): \(String(cString: strerror(errno)))")
        }
        ftruncate(file.descriptor, 0)
        let pid = "\(getpid())\n"
        try? pid.utf8CString.dropLast().withUnsafeBytes { try file.writeAll($0) }
        // A request left by a `ftgst cancel` that found nothing to stop must not stop this export.
        unlink(cancelPath)
        return WorkspaceLock(file: file)
    }

    /// Whether an export holds the lock now (a non-blocking attempt that is released at once).
    func isBusy() -> Bool {
        guard let file = try? POSIXFile(path: lockPath, flags: O_RDWR) else { return false }
        if flock(file.descriptor, LOCK_EX | LOCK_NB) == 0 {
            flock(file.descriptor, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    /// Written by `ftgst cancel`.
    func requestCancel() throws {
        let bytes = Array("\(CancelReason.externalCommand.rawValue) \(getpid())\n".utf8)
        try StagedFile.write(bytes, to: URL(fileURLWithPath: cancelPath))
    }

    var cancelRequested: Bool { access(cancelPath, F_OK) == 0 }
}

/// The held workspace lock, released when this goes (the kernel releases it too if the process dies).
final class WorkspaceLock {
    private let file: POSIXFile

    init(file: POSIXFile) {
        self.file = file
    }

    deinit {
        flock(file.descriptor, LOCK_UN)
    }
}

/// `ftgst cancel`'s answer.
public struct CancelResult: Sendable {
    /// An export was running and has stopped.
    public var cancelled: Bool
    public var workspace: String

    public var json: JSONValue {
        .object([("cancelled", .bool(cancelled)), ("workspace", .string(workspace))])
    }
}

/// Asks the export running in `workspace` (default: the default workspace) to stop, and waits up to
/// `timeoutMilliseconds` for it to release the workspace. `cancelled: false` when none was running.
public func cancelRunningExport(
    workspace: String? = nil, timeoutMilliseconds: Int64 = 5000,
    environment: [String: String] = ProcessInfo.processInfo.environment
) async throws
    -> CancelResult
{
    let space = Workspace(folder: URL(fileURLWithPath: workspace ?? Workspace.defaultFolder(environment)))
    guard space.isBusy() else { return CancelResult(cancelled: false, workspace: space.folder.path) }
    try space.requestCancel()
    let deadline = ContinuousClock.now + .milliseconds(timeoutMilliseconds)
    while space.isBusy() {
        guard ContinuousClock.now < deadline else {
            throw FilmtoneError(
                .internalError,
                "the export in \(space.folder.path) did not stop within "
                    + "\(timeoutMilliseconds) ms")
        }
        try await Task.sleep(for: .milliseconds(20))
    }
    return CancelResult(cancelled: true, workspace: space.folder.path)
}
