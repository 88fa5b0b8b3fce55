internal import CSoup
import FilmtoneCore
import Foundation
import Synchronization

/// A WebSocket client on libsoup's `SoupSession` (`soup_session_websocket_connect_async`), on a main loop of its
/// own: how the tests, and any Swift caller, talk to a `LocalServer` over a real socket. Every wait has a deadline.
package final class WebSocketClient: Sendable {
    /// The server refused the handshake (or nothing answered): the HTTP status it gave, 0 when none came.
    package struct Refused: Error, CustomStringConvertible {
        package let status: Int
        package let message: String
        package var description: String { "WebSocket handshake refused (HTTP \(status)): \(message)" }
    }

    private let loop: MainLoopThread
    private let session: SessionObjects
    private let connection: WebSocketConnection
    private let inbox: Inbox

    /// Opens `url` (`ws://…`), sending `origin` as the `Origin` header when given; waits at most `timeout` seconds.
    /// Throws `Refused` when the server does not upgrade the connection.
    package init(connectingTo url: String, origin: String?, timeout: Double = 10) throws {
        let loop = MainLoopThread(name: "ftgst-ws-client")
        let inbox = Inbox()
        let session = SessionObjects()
        let handoff = Handoff<Result<WebSocketConnection, Refused>>()
        let deadline = DispatchTime.now() + timeout
        loop.invoke {
            guard session.start(url: url, origin: origin, loop: loop, inbox: inbox, handoff: handoff) else {
                return handoff.put(.failure(Refused(status: 0, message: "not a URL libsoup accepts: \(url)")))
            }
        }
        let outcome = handoff.take(until: deadline)
        guard case .success(let connection)? = outcome else {
            loop.invokeAndWait(until: deadline) { session.release() }
            loop.stop(until: deadline)
            if case .failure(let refused)? = outcome { throw refused }
            throw Refused(status: 0, message: "no answer within \(timeout) s")
        }
        self.loop = loop
        self.session = session
        self.connection = connection
        self.inbox = inbox
    }

    deinit {
        close()
        let deadline = DispatchTime.now() + 5
        loop.invokeAndWait(until: deadline) { [session] in session.release() }
        loop.stop(until: deadline)
    }

    /// Sends one text message.
    package func send(text: String) { connection.send(text: text) }

    /// The next text message, waiting at most `timeout` seconds; nil when the connection closed first or none came.
    package func receive(timeout: Double = 10) -> String? { inbox.next(until: .now() + timeout) }

    /// Starts the closing handshake and waits (at most `timeout` seconds) for the connection to close.
    package func close(timeout: Double = 5) {
        connection.close()
        _ = inbox.waitForClose(until: .now() + timeout)
    }

    /// Whether the connection has closed (the server closed it, or `close` did).
    package var isClosed: Bool { connection.isClosed }
}

/// The texts received and whether the connection closed, filled on the loop's thread and read by the test's.
private final class Inbox: Sendable {
    private let state = Mutex<(texts: [String], closed: Bool)>(([], false))
    private let changed = DispatchSemaphore(value: 0)

    func append(_ text: String) {
        state.withLock { $0.texts.append(text) }
        changed.signal()
    }

    func markClosed() {
        state.withLock { $0.closed = true }
        changed.signal()
    }

    func next(until deadline: DispatchTime) -> String? {
        while true {
            let (text, closed) = state.withLock { state -> (String?, Bool) in
                state.texts.isEmpty ? (nil, state.closed) : (state.texts.removeFirst(), state.closed)
            }
            if let text { return text }
            if closed || changed.wait(timeout: deadline) == .timedOut { return nil }
        }
    }

    func waitForClose(until deadline: DispatchTime) -> Bool {
        while !state.withLock({ $0.closed }) {
            if changed.wait(timeout: deadline) == .timedOut { return false }
        }
        return true
    }
}

/// The `SoupSession` and the handshake's `SoupMessage`.
///
/// `@unchecked Sendable`: both pointers are set and released on the loop's thread only (`start`, `release`).
private final class SessionObjects: @unchecked Sendable {
    private var session: UnsafeMutablePointer<SoupSession>?
    private var message: OpaquePointer?  // SoupMessage*

    /// Starts the handshake; nil if libsoup does not take `url`.
    func start(
        url: String, origin: String?, loop: MainLoopThread, inbox: Inbox,
        handoff: Handoff<Result<WebSocketConnection, WebSocketClient.Refused>>
    ) -> Bool {
        guard let message = soup_message_new("GET", url) else { return false }
        let session = soup_session_new()
        self.session = session
        self.message = message
        typealias Ready = (source: UnsafeMutablePointer<GObject>?, result: OpaquePointer?)
        let box = CallbackBox<Ready, Void> { [self] ready in
            var error: UnsafeMutablePointer<GError>?
            guard let pointer = soup_session_websocket_connect_finish(self.session, ready.result, &error) else {
                let text = takeErrorMessage(error)
                let status = self.message.map { Int(soup_message_get_status($0).rawValue) } ?? 0
                return handoff.put(.failure(.init(status: status, message: text)))
            }
            // connect_finish: transfer full; the handle adds its own reference, so drop this one.
            let connection = WebSocketConnection(borrowing: pointer, loop: loop)
            g_object_unref(UnsafeMutableRawPointer(pointer))
            connection.watch(onMessage: { inbox.append($0) }, onClosed: { inbox.markClosed() })
            handoff.put(.success(connection))
        }
        // The async callback has no destroy notify: it is called exactly once, and releases the box itself.
        soup_session_websocket_connect_async(
            session, message, origin, nil, ftgst_priority_default(), nil,
            { source, result, data in
                guard let data else { return }
                CallbackBox<Ready, Void>.borrow(data).body((source, result))
                releaseCallbackBox(data)
            }, box.retained())
        return true
    }

    func release() {
        if let session { g_object_unref(UnsafeMutableRawPointer(session)) }
        if let message { g_object_unref(UnsafeMutableRawPointer(message)) }
        session = nil
        message = nil
    }
}
