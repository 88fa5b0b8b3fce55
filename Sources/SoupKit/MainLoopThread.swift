internal import CSoup
import FilmtoneCore
import Foundation
import Synchronization

/// A `GMainContext` of its own, iterated by a `GMainLoop` on a thread of its own (`g_main_loop_run`): libsoup does
/// all its work on the context it was started under, so every server and client in SoupKit lives on one of these and
/// other threads only hand it work (`invoke`). The context is the thread-default one on that thread
/// (`g_main_context_push_thread_default`), which is where libsoup attaches the sources of each new connection.
///
/// `@unchecked Sendable`: the two pointers never change, and what other threads call on them —
/// `g_main_context_invoke_full`, `g_main_loop_quit` — is documented as thread-safe by GLib.
final class MainLoopThread: @unchecked Sendable {
    private let context: OpaquePointer  // GMainContext*, owned (g_main_context_new)
    private let loop: OpaquePointer  // GMainLoop*, owned (g_main_loop_new)
    private let ended = DispatchSemaphore(value: 0)
    private let stopped = AtomicFlag()

    /// Creates the context and starts the loop on a new thread named `name`.
    init(name: String) {
        context = g_main_context_new()
        loop = g_main_loop_new(context, 0)
        // The thread holds `self` until the loop returns, so deinit (which frees the loop) never races it.
        let thread = Thread { [self] in
            g_main_context_push_thread_default(context)
            g_main_loop_run(loop)
            g_main_context_pop_thread_default(context)
            ended.signal()
        }
        thread.name = name
        thread.start()
    }

    deinit {
        // Unreffing the context destroys the idle sources still queued on it (invoked after the loop ended), which
        // releases their boxes.
        g_main_loop_unref(loop)
        g_main_context_unref(context)
    }

    /// Runs `body` on the loop's thread, soon (`g_main_context_invoke_full`: an idle source unless called from that
    /// thread itself, when it runs at once). After `stop`, nothing runs any more.
    func invoke(_ body: @escaping @Sendable () -> Void) {
        let box = CallbackBox<Void, Void>(body)
        g_main_context_invoke_full(
            context, ftgst_priority_default(),
            { data in
                if let data { CallbackBox<Void, Void>.borrow(data).body(()) }
                return ftgst_source_remove()
            }, box.retained(), releaseCallbackBox)
    }

    /// Runs `body` on the loop's thread and waits for its result until `deadline`; nil if the loop did not get to it
    /// in time (it may still run later).
    func invokeAndWait<T: Sendable>(until deadline: DispatchTime, _ body: @escaping @Sendable () -> T) -> T? {
        let result = Handoff<T>()
        invoke { result.put(body()) }
        return result.take(until: deadline)
    }

    /// Quits the loop after what is already queued, and waits for its thread to end until `deadline`. Returns whether
    /// it ended. Idempotent.
    @discardableResult
    func stop(until deadline: DispatchTime) -> Bool {
        if !stopped.isSet() {
            stopped.set()
            invoke { [loop = LoopPointer(loop)] in g_main_loop_quit(loop.pointer) }
        }
        guard ended.wait(timeout: deadline) == .success else { return false }
        ended.signal()  // a later stop() sees it ended too
        return true
    }

    /// Whether `stop` was called.
    var isStopped: Bool { stopped.isSet() }
}

/// A `GMainLoop*` carried into a closure for `g_main_loop_quit`, which may be called from any thread.
private struct LoopPointer: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}

/// One value handed from the loop's thread to a thread waiting for it with a deadline.
final class Handoff<T: Sendable>: Sendable {
    private let value = Mutex<T?>(nil)
    private let arrived = DispatchSemaphore(value: 0)

    func put(_ newValue: T) {
        value.withLock { $0 = newValue }
        arrived.signal()
    }

    /// The value, or nil if none was put before `deadline`.
    func take(until deadline: DispatchTime) -> T? {
        guard arrived.wait(timeout: deadline) == .success else { return nil }
        return value.withLock { $0 }
    }
}
