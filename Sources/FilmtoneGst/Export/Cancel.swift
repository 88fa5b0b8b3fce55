import FilmtoneCore
import Foundation
import Glibc
import Synchronization

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
    /// `ftgst serve`: its client went away (stdin reached its end, or stdout could no longer be written).
    case disconnected
    /// The Cancel button of the export's desktop notification (`ExportDesktop`).
    case notification
}

/// One export's stop point. Everything that may stop this export records a reason here: its own deadline, its
/// task, its workspace's cancel request, and (through `RunningExports`) `cancelExport` and the signals. The first
/// reason wins. The export's loop reads it from its thread; the others write from theirs. A `detail` (the text an
/// engine client gave `cancelExport`) travels with the reason into the error message and the record.
final class ExportCancelToken: Sendable {
    private let recorded = Mutex<(reason: CancelReason, detail: String?)?>(nil)

    /// Records `reason` (and `detail`) unless a reason is already recorded.
    func cancel(_ reason: CancelReason, detail: String? = nil) {
        recorded.withLock { if $0 == nil { $0 = (reason, detail) } }
    }

    var reason: CancelReason? { recorded.withLock { $0?.reason } }

    /// The detail recorded with the reason, if any.
    var detail: String? { recorded.withLock { $0?.detail } }

    /// The export's error message: the reason, then `: detail` when one was given.
    var message: String? {
        recorded.withLock { recorded in
            recorded.map { recorded in recorded.reason.rawValue + (recorded.detail.map { ": \($0)" } ?? "") }
        }
    }
}

/// The exports running in this process: what is meant for all of them (`cancelExport`, SIGINT, SIGTERM) reaches
/// each of their tokens, and only that does. An export is running from `register` to `unregister`.
final class RunningExports: Sendable {
    static let shared = RunningExports()

    private struct State {
        var tokens: [ExportCancelToken] = []
        /// The first signal since exports were last idle. Kept for an export that registers after it (a Ctrl-C
        /// while it was starting stops it at its first check); a second of the same kind means "exit now".
        var signal: CancelReason? = nil
    }

    private let state = Mutex(State())

    func register(_ token: ExportCancelToken) {
        state.withLock { state in
            state.tokens.append(token)
            if let signal = state.signal { token.cancel(signal) }
        }
    }

    /// The last export to go also forgets the signal, so it cannot stop a later one.
    func unregister(_ token: ExportCancelToken) {
        state.withLock { state in
            state.tokens.removeAll { $0 === token }
            if state.tokens.isEmpty { state.signal = nil }
        }
    }

    /// Cancels every running export for `reason`. False when none is running.
    func cancelAll(_ reason: CancelReason) -> Bool {
        state.withLock { state in
            for token in state.tokens { token.cancel(reason) }
            return !state.tokens.isEmpty
        }
    }

    /// A signal for `reason`: cancels every running export, or is kept for the next one to register. Returns
    /// true when a signal of the same kind is already pending: the user insists, the caller exits.
    func signal(_ reason: CancelReason) -> Bool {
        state.withLock { state in
            if state.signal == reason { return true }
            if state.signal == nil { state.signal = reason }
            for token in state.tokens { token.cancel(reason) }
            return false
        }
    }
}

/// Stops the exports running in this process, for `reason`. Returns false when none is running. Each stops
/// within a second, removes its partial output and throws `CANCELLED`. To stop one export of several, cancel
/// its task (or give it a `timeoutMilliseconds`).
@discardableResult
public func cancelExport(reason: CancelReason = .api) -> Bool {
    RunningExports.shared.cancelAll(reason)
}

/// Routes SIGINT (`userInterrupt`) and SIGTERM (`terminated`) to the exports running in this process (or the
/// next to start), for programs that run exports (the CLI does). The handler only writes the signal number to a
/// pipe (async-signal-safe); a thread reads it and records the reason in `RunningExports`. A second signal of the
/// same kind while one is pending exits at once (130), as a user pressing Ctrl-C twice expects.
public enum ExportSignals {
    private static let installed = AtomicFlag()
    // Written once before the handlers are installed, then only read (from the handler).
    nonisolated(unsafe) private static var writeEnd: Int32 = -1

    /// `beforeForcedExit` runs on the signal thread just before a second signal exits the process (the CLI ends
    /// its progress stream with it); `onSignal` runs on that thread for a first signal, after the running exports
    /// were told (`ftgst serve` closes its engine with it). The first call's hooks are kept.
    public static func install(
        beforeForcedExit: (@Sendable (CancelReason) -> Void)? = nil,
        onSignal: (@Sendable (CancelReason) -> Void)? = nil
    ) {
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
                if RunningExports.shared.signal(reason) {
                    // The user insists: stop now, but still leave no half-written file behind.
                    StagedFile.removeAllInFlight()
                    beforeForcedExit?(reason)
                    exit(130)
                }
                onSignal?(reason)
            }
        }
    }
}
