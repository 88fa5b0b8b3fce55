internal import CSoup
import FilmtoneCore
import Foundation
import Synchronization

/// One WebSocket a client opened at a `LocalServer`'s `/rpc`: a handle the engine keeps to answer on. `send(text:)`
/// and `close()` may be called from any thread: they hop onto the server's main context
/// (`g_main_context_invoke_full`), where libsoup must be called.
///
/// `@unchecked Sendable`: `pointer` (one reference of our own to the `SoupWebsocketConnection`, released in
/// deinit) is only used on the loop's thread, and `closedFlag` is atomic.
package final class WebSocketConnection: @unchecked Sendable, Hashable {
    /// A number unique among the connections of this process, for the engine's own tables and logs.
    package let id: Int

    private let pointer: OpaquePointer  // SoupWebsocketConnection*
    private let loop: MainLoopThread
    private let closedFlag = AtomicFlag()

    private static let nextID = Atomic<Int>(1)

    /// Adds a reference to `connection`, which libsoup lends to the WebSocket handler (it unrefs it afterwards).
    init(borrowing connection: OpaquePointer, loop: MainLoopThread) {
        g_object_ref(UnsafeMutableRawPointer(connection))
        pointer = connection
        self.loop = loop
        id = Self.nextID.add(1, ordering: .relaxed).oldValue
    }

    deinit {
        // The server holds every open connection's handle until its `closed` signal (or the server's stop), so the
        // last reference goes once the connection is closed or the loop has ended: nothing runs on it any more.
        g_object_unref(UnsafeMutableRawPointer(pointer))
    }

    /// Sends one text message (`soup_websocket_connection_send_text`). Dropped once the connection is closed.
    package func send(text: String) {
        loop.invoke { [self] in
            guard !closedFlag.isSet(), soup_websocket_connection_get_state(pointer) == SOUP_WEBSOCKET_STATE_OPEN
            else { return }
            soup_websocket_connection_send_text(pointer, text)
        }
    }

    /// Starts the closing handshake with code 1000, normal closure (`soup_websocket_connection_close`); the server's
    /// `onClose` follows when it completes.
    package func close() {
        loop.invoke { [self] in
            guard soup_websocket_connection_get_state(pointer) == SOUP_WEBSOCKET_STATE_OPEN else { return }
            soup_websocket_connection_close(pointer, gushort(SOUP_WEBSOCKET_CLOSE_NORMAL.rawValue), nil)
        }
    }

    /// Whether the connection has closed (its `closed` signal came, or the server stopped).
    package var isClosed: Bool { closedFlag.isSet() }

    // MARK: - On the loop's thread

    /// Connects `message` and `closed`: text messages go to `onMessage`; a binary one is not part of the protocol and
    /// closes the connection (1003, unsupported data). `onClosed` runs once, when the connection closes, unless
    /// `markClosed` came first.
    func watch(onMessage: @escaping @Sendable (String) -> Void, onClosed: @escaping @Sendable () -> Void) {
        typealias MessageHandler = @convention(c) (OpaquePointer?, gint, OpaquePointer?, gpointer?) -> Void
        let message: MessageHandler = { connection, type, bytes, data in
            guard let connection, let data else { return }
            guard type == gint(SOUP_WEBSOCKET_DATA_TEXT.rawValue), let bytes else {
                soup_websocket_connection_close(
                    connection, gushort(SOUP_WEBSOCKET_CLOSE_UNSUPPORTED_DATA.rawValue), "text messages only")
                return
            }
            var size = 0
            let text = g_bytes_get_data(bytes, &size).map {
                String(decoding: UnsafeRawBufferPointer(start: $0, count: size), as: UTF8.self)
            }
            CallbackBox<String, Void>.borrow(data).body(text ?? "")
        }
        typealias ClosedHandler = @convention(c) (OpaquePointer?, gpointer?) -> Void
        let closed: ClosedHandler = { _, data in
            guard let data else { return }
            CallbackBox<Void, Void>.borrow(data).body(())
        }
        connect("message", unsafeBitCast(message, to: GCallback.self), CallbackBox(onMessage))
        // Weak: the box lives as long as the libsoup connection, which this handle owns.
        connect(
            "closed", unsafeBitCast(closed, to: GCallback.self),
            CallbackBox<Void, Void> { [weak self] in if self?.markClosed() == true { onClosed() } })
    }

    /// Marks the connection closed; true the first time only, so `onClose` is called once.
    func markClosed() -> Bool {
        guard !closedFlag.isSet() else { return false }
        closedFlag.set()
        return true
    }

    /// Closes with 1001, going away, when the server stops.
    func closeGoingAway() {
        guard soup_websocket_connection_get_state(pointer) == SOUP_WEBSOCKET_STATE_OPEN else { return }
        soup_websocket_connection_close(pointer, gushort(SOUP_WEBSOCKET_CLOSE_GOING_AWAY.rawValue), "server stopped")
    }

    /// `g_signal_connect_data` with `box` as the user data, released by GLib when the connection is finalised.
    private func connect<A, R>(_ signal: String, _ handler: GCallback, _ box: CallbackBox<A, R>) {
        g_signal_connect_data(
            UnsafeMutableRawPointer(pointer), signal, handler, box.retained(), releaseSignalBox,
            GConnectFlags(rawValue: 0))
    }

    package static func == (lhs: WebSocketConnection, rhs: WebSocketConnection) -> Bool { lhs === rhs }
    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// The `GClosureNotify` of a signal connected with a `CallbackBox`: drops GLib's reference to the box.
let releaseSignalBox: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
    releaseCallbackBox(data)
}
