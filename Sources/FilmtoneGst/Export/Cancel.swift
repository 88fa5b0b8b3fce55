import Foundation
import Glibc
import FilmtoneCore

/// Why an export stopped early. One vocabulary for every way of stopping one; the CLI prints it as
/// `[CANCELLED] reason` and the record keeps it.
public enum CancelReason: String, Sendable, CaseIterable {
    /// Ctrl-C / SIGINT.
    case userInterrupt
    /// SIGTERM.
    case terminated
    /// `ftgst cancel` from another process.
    case externalCommand
    /// `cancelExport(reason:)` or cancelling the Swift task.
    case api
    /// The export's `--timeout-ms` ran out.
    case timeout
}

/// The one stop point of this process's export: signals, `ftgst cancel` (through the workspace), the library
/// call and task cancellation all end here, and the first reason wins.
final class ExportCancelController: @unchecked Sendable {
    static let shared = ExportCancelController()

    private let lock = NSLock()
    private var running = false
    private var pending: CancelReason? = nil

    /// An export starts. Reasons from earlier runs were forgotten by `end()`; a signal that arrived while this
    /// one was starting is kept and stops it at its first check.
    func begin() {
        lock.lock()
        running = true
        lock.unlock()
    }

    func end() {
        lock.lock()
        running = false
        pending = nil
        lock.unlock()
    }

    /// Records `reason` unless one is already recorded. An API call with no export running does nothing
    /// (returns false); a signal (`evenIfIdle`) is kept for the export that is about to start.
    @discardableResult
    func cancel(_ reason: CancelReason, evenIfIdle: Bool = false) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard running || evenIfIdle else { return false }
        if pending == nil { pending = reason }
        return true
    }

    var reason: CancelReason? {
        lock.lock()
        defer { lock.unlock() }
        return pending
    }
}

/// Stops the export running in this process, for `reason`. Returns false when none is running. The export
/// stops within a second, removes its partial output and throws `CANCELLED`.
@discardableResult
public func cancelExport(reason: CancelReason = .api) -> Bool {
    ExportCancelController.shared.cancel(reason)
}

/// Routes SIGINT (`userInterrupt`) and SIGTERM (`terminated`) to the cancel controller, for programs that run
/// exports (the CLI does). The handler only writes the signal number to a pipe (async-signal-safe); a thread
/// reads it and records the reason. A second signal of the same kind while one is pending exits at once (130),
/// as a user pressing Ctrl-C twice expects.
public enum ExportSignals {
    private static let installed = AtomicFlag()
    // Written once before the handlers are installed, then only read (from the handler).
    nonisolated(unsafe) private static var writeEnd: Int32 = -1

    public static func install() {
        guard !installed.isSet() else { return }
        installed.set()
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        writeEnd = fds[1]
        let readEnd = fds[0]
        let handler: @convention(c) (Int32) -> Void = { signal in
            var byte = UInt8(truncatingIfNeeded: signal)
            _ = Glibc.write(ExportSignals.writeEnd, &byte, 1)
        }
        for signal in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = handler
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signal, &action, nil)
        }
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while true {
                let count = Glibc.read(readEnd, &byte, 1)
                if count < 0, errno == EINTR { continue }
                guard count == 1 else { return }
                let reason: CancelReason = Int32(byte) == SIGINT ? .userInterrupt : .terminated
                if ExportCancelController.shared.reason == reason {
                    // The user insists: stop now, but still leave no half-written file behind.
                    StagedFile.removeAllInFlight()
                    exit(130)
                }
                ExportCancelController.shared.cancel(reason, evenIfIdle: true)
            }
        }
    }
}
