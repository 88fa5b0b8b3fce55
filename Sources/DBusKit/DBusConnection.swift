internal import CGio
import FilmtoneCore
import Foundation
import Synchronization

/// Why a D-Bus call or connection failed.
public struct DBusError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// No session bus to connect to (no address, or nothing listening there).
        case noBus
        /// The call or the connection outran its deadline.
        case timedOut
        /// The peer answered with a D-Bus error (`name` says which).
        case remote
        /// Anything else (a value GLib refused, a closed connection).
        case failed
    }

    public var kind: Kind
    /// The D-Bus error name for `.remote` (`org.freedesktop.DBus.Error.ServiceUnknown`…), else nil.
    public var name: String?
    public var message: String

    public var description: String { message }

    /// The peer is not there: no owner of the name, no such object, interface, method or property.
    public var isMissingService: Bool {
        guard kind == .remote, let name else { return false }
        return [
            "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
            "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownInterface",
            "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownProperty",
            "org.freedesktop.DBus.Error.InvalidArgs",
        ].contains(name)
    }
}

/// One connection of ftgst's own to the session bus (`GDBusConnection`), with a thread of its own that dispatches
/// the signals it subscribes to. Private, not GIO's shared singleton: it lives as long as its owner (a pick, an
/// export), and closing it ends whatever the bus holds for it (an inhibitor, name watches).
///
/// Every call has a deadline: connecting, each method call. A signal handler runs on the connection's thread.
///
/// `@unchecked Sendable`: the connection pointer never changes, GDBus's calls are thread-safe, and the mutable
/// state (subscriptions) is behind a Mutex.
public final class DBusConnection: @unchecked Sendable {
    private let connection: OpaquePointer  // GDBusConnection*, owned
    private let dispatch: DispatchThread  // where signal handlers run
    private let subscriptions = Mutex<[UInt32]>([])
    private let closed = Atomic<Bool>(false)

    /// This connection's unique name on the bus (`:1.42`).
    public let uniqueName: String

    /// The session bus's address: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus` where that socket exists
    /// (as GLib and libdbus look it up); nil when neither (no X11 autolaunch: that would start a bus).
    public static func sessionAddress(_ environment: [String: String]) -> String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return address }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            var info = stat()
            let path = runtime + "/bus"
            if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK { return "unix:path=" + path }
        }
        return nil
    }

    /// Connects to the session bus (`sessionAddress`) and registers with it, within `timeoutMilliseconds`.
    public static func session(
        environment: [String: String] = ProcessInfo.processInfo.environment, timeoutMilliseconds: Int
    ) throws -> DBusConnection {
        guard let address = sessionAddress(environment) else {
            throw DBusError(kind: .noBus, message: "no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
        }
        return try DBusConnection(address: address, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Connects to the bus at `address` (a D-Bus address) as a client, within `timeoutMilliseconds`.
    public init(address: String, timeoutMilliseconds: Int) throws {
        // Cancelled by a timer at the deadline; the timer's closure keeps it alive until then.
        let cancellable = Cancellable()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(timeoutMilliseconds)) {
            cancellable.cancel()
        }
        var error: UnsafeMutablePointer<GError>?
        let flags = GDBusConnectionFlags(
            rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
                | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        guard let made = g_dbus_connection_new_for_address_sync(address, flags, nil, cancellable.pointer, &error) else {
            let cancelled = cancellable.isCancelled
            let detail = takeError(error)
            if cancelled {
                throw DBusError(
                    kind: .timedOut,
                    message: "the session bus did not accept a connection within \(timeoutMilliseconds) ms")
            }
            throw DBusError(kind: .noBus, message: "cannot connect to the session bus at \(address): \(detail.message)")
        }
        connection = made
        g_dbus_connection_set_exit_on_close(connection, 0)
        uniqueName = String(cString: g_dbus_connection_get_unique_name(connection))
        dispatch = DispatchThread()
    }

    deinit {
        close()
        g_object_unref(UnsafeMutableRawPointer(connection))
    }

    /// Unsubscribes every handler, closes the connection (the bus then drops what it held for it) and stops the
    /// dispatch thread. Idempotent.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for id in subscriptions.withLock({ ids in
            defer { ids = [] }
            return ids
        }) {
            g_dbus_connection_signal_unsubscribe(connection, guint(id))
        }
        var error: UnsafeMutablePointer<GError>?
        g_dbus_connection_flush_sync(connection, nil, &error)
        if let error { g_error_free(error) }
        g_dbus_connection_close_sync(connection, nil, nil)
        dispatch.stop()
    }

    /// Calls `interface.method` on `path` at `destination` with `arguments` (a tuple, or nil for none), and waits
    /// for the reply at most `timeoutMilliseconds`. The reply's values as a `.tuple`.
    public func call(
        _ destination: String, _ path: String, _ interface: String, _ method: String,
        _ arguments: DBusValue? = nil, timeoutMilliseconds: Int
    ) throws -> DBusValue {
        let parameters: OpaquePointer?
        if let arguments {
            guard case .tuple = arguments, let made = arguments.makeVariant() else {
                throw DBusError(kind: .failed, message: "\(interface).\(method): arguments D-Bus cannot carry")
            }
            parameters = made
        } else {
            parameters = nil
        }
        var error: UnsafeMutablePointer<GError>?
        let reply = g_dbus_connection_call_sync(
            connection, destination, path, interface, method, parameters, nil, G_DBUS_CALL_FLAGS_NONE,
            gint(clamping: timeoutMilliseconds), nil, &error)
        guard let reply else { throw takeError(error, what: "\(interface).\(method)", timeout: timeoutMilliseconds) }
        defer { g_variant_unref(reply) }
        return DBusValue(variant: reply)
    }

    /// `call` with open file descriptors passed along (`GUnixFDList`): the arguments name them as `.handle(i)`, `i`
    /// the index in `fileDescriptors`. The descriptors stay the caller's (GIO sends duplicates).
    public func call(
        _ destination: String, _ path: String, _ interface: String, _ method: String, _ arguments: DBusValue,
        fileDescriptors: [Int32], timeoutMilliseconds: Int
    ) throws -> DBusValue {
        guard case .tuple = arguments, let parameters = arguments.makeVariant() else {
            throw DBusError(kind: .failed, message: "\(interface).\(method): arguments D-Bus cannot carry")
        }
        let list = g_unix_fd_list_new()!
        defer { g_object_unref(list) }
        for descriptor in fileDescriptors {
            var error: UnsafeMutablePointer<GError>?
            if g_unix_fd_list_append(list, descriptor, &error) < 0 {
                g_variant_unref(g_variant_ref_sink(parameters))
                throw takeError(error, what: "\(interface).\(method)")
            }
        }
        var error: UnsafeMutablePointer<GError>?
        let reply = g_dbus_connection_call_with_unix_fd_list_sync(
            connection, destination, path, interface, method, parameters, nil, G_DBUS_CALL_FLAGS_NONE,
            gint(clamping: timeoutMilliseconds), list, nil, nil, &error)
        guard let reply else { throw takeError(error, what: "\(interface).\(method)", timeout: timeoutMilliseconds) }
        defer { g_variant_unref(reply) }
        return DBusValue(variant: reply)
    }

    /// A property's value (`org.freedesktop.DBus.Properties.Get`), unwrapped from its variant.
    public func property(
        _ destination: String, _ path: String, _ interface: String, _ name: String, timeoutMilliseconds: Int
    ) throws -> DBusValue {
        let reply = try call(
            destination, path, "org.freedesktop.DBus.Properties", "Get",
            .tuple([.string(interface), .string(name)]), timeoutMilliseconds: timeoutMilliseconds)
        guard let value = reply.elements.first else {
            throw DBusError(kind: .failed, message: "\(interface).\(name): an empty reply")
        }
        return value.unwrapped
    }

    /// Calls `handler` with each signal `interface.member` emitted on `path` (nil: any path), from any sender
    /// (matching on the sender's well-known name is left out: the path and member name it), with the signal's
    /// values as a `.tuple`. Returns the subscription, for `unsubscribe`; `close` ends them all.
    @discardableResult
    public func subscribe(
        interface: String, member: String, path: String?, _ handler: @escaping @Sendable (DBusValue) -> Void
    ) -> UInt32 {
        let box = CallbackBox<DBusValue, Void>(handler)
        // GDBus dispatches a subscription's signals on the thread-default context of the subscribing thread: so
        // it is made on the dispatch thread.
        let made = dispatch.perform { [connection = ConnectionPointer(connection)] in
            g_dbus_connection_signal_subscribe(
                connection.pointer, nil, interface, member, path, nil, G_DBUS_SIGNAL_FLAGS_NONE,
                { _, _, _, _, _, parameters, data in
                    guard let data, let parameters else { return }
                    CallbackBox<DBusValue, Void>.borrow(data).body(DBusValue(variant: parameters))
                }, box.retained(), releaseCallbackBox)
        }
        guard let id = made else { return 0 }
        subscriptions.withLock { $0.append(UInt32(id)) }
        return UInt32(id)
    }

    public func unsubscribe(_ id: UInt32) {
        let known = subscriptions.withLock { ids in
            guard let index = ids.firstIndex(of: id) else { return false }
            ids.remove(at: index)
            return true
        }
        if known { g_dbus_connection_signal_unsubscribe(connection, guint(id)) }
    }

    /// Emits signal `interface.member` from `path` to every listener.
    public func emitSignal(path: String, interface: String, member: String, _ arguments: DBusValue) throws {
        guard case .tuple = arguments, let parameters = arguments.makeVariant() else {
            throw DBusError(kind: .failed, message: "\(interface).\(member): arguments D-Bus cannot carry")
        }
        var error: UnsafeMutablePointer<GError>?
        guard g_dbus_connection_emit_signal(connection, nil, path, interface, member, parameters, &error) != 0 else {
            throw takeError(error, what: "\(interface).\(member)", timeout: 0)
        }
    }

    /// The portal's request handle for `token` on this connection: `/org/freedesktop/portal/desktop/request/`,
    /// the unique name without its `:` and with `.` as `_`, `/`, the token.
    public func portalRequestPath(token: String) -> String {
        let sender = uniqueName.dropFirst().replacingOccurrences(of: ".", with: "_")
        return "/org/freedesktop/portal/desktop/request/\(sender)/\(token)"
    }
}

/// Takes a transfer-full `GError*` from a GDBus call: its D-Bus error name when the peer sent one, and a kind.
private func takeError(_ error: UnsafeMutablePointer<GError>?, what: String = "", timeout: Int = 0) -> DBusError {
    guard let error else { return DBusError(kind: .failed, message: "\(what): unknown error") }
    defer { g_error_free(error) }
    var name: String?
    if g_dbus_error_is_remote_error(error) != 0, let remote = g_dbus_error_get_remote_error(error) {
        name = String(cString: remote)
        g_free(remote)
        g_dbus_error_strip_remote_error(error)
    }
    let message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
    let prefix = what.isEmpty ? "" : "\(what): "
    if error.pointee.domain == ftgst_io_error_quark(), error.pointee.code == G_IO_ERROR_TIMED_OUT.rawValue {
        return DBusError(kind: .timedOut, name: name, message: "\(prefix)no answer within \(timeout) ms")
    }
    if name == "org.freedesktop.DBus.Error.NoReply" || name == "org.freedesktop.DBus.Error.Timeout" {
        return DBusError(kind: .timedOut, name: name, message: "\(prefix)no answer within \(timeout) ms")
    }
    return DBusError(kind: name == nil ? .failed : .remote, name: name, message: prefix + message)
}

private struct ConnectionPointer: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}

/// A `GCancellable` that a timer on another thread may cancel (`g_cancellable_cancel` is thread-safe).
private final class Cancellable: @unchecked Sendable {
    let pointer = g_cancellable_new()!
    deinit { g_object_unref(pointer) }
    func cancel() { g_cancellable_cancel(pointer) }
    var isCancelled: Bool { g_cancellable_is_cancelled(pointer) != 0 }
}

/// A `GMainContext` of its own, iterated on a thread of its own until `stop`: GDBus dispatches each subscription's
/// signals there. The thread holds this object, not the connection, so a connection nobody closed is still freed.
private final class DispatchThread: @unchecked Sendable {
    let context = g_main_context_new()!
    private let running = Atomic<Bool>(true)
    private let ended = DispatchSemaphore(value: 0)
    private let thread = Mutex<pthread_t?>(nil)

    init() {
        let thread = Thread { [self] in
            self.thread.withLock { $0 = pthread_self() }
            g_main_context_push_thread_default(context)
            while running.load(ordering: .acquiring) { g_main_context_iteration(context, 1) }
            g_main_context_pop_thread_default(context)
            ended.signal()
        }
        thread.name = "ftgst-dbus"
        thread.start()
    }

    deinit { g_main_context_unref(context) }

    /// Runs `body` on the dispatch thread and returns its result; nil when the thread did not get to it within 5 s
    /// (stopped, or stuck in a handler).
    func perform<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T? {
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let box = CallbackBox<Void, Void> {
            result.withLock { $0 = body() }
            done.signal()
        }
        g_main_context_invoke_full(
            context, G_PRIORITY_DEFAULT,
            { data in
                if let data { CallbackBox<Void, Void>.borrow(data).body(()) }
                return 0  // G_SOURCE_REMOVE
            }, box.retained(), releaseCallbackBox)
        guard done.wait(timeout: .now() + 5) == .success else { return nil }
        return result.withLock { $0 }
    }

    /// Ends the thread after the handler it may be running (waits 5 s at most; not at all from a handler).
    func stop() {
        running.store(false, ordering: .releasing)
        g_main_context_wakeup(context)
        if let own = thread.withLock({ $0 }), pthread_equal(own, pthread_self()) != 0 { return }
        _ = ended.wait(timeout: .now() + 5)
    }
}
