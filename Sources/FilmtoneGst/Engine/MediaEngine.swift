import FilmtoneCore
import Foundation
import Synchronization

/// The engine an editor drives: JSON-RPC 2.0 messages in (`receive`), messages out (the `send` closure), whatever
/// carries them. `ftgst serve` carries them as lines on stdin and stdout; another transport (a WebSocket) hands
/// the same messages to the same object, each connection as an `RPCClient` of its own: its answers and the
/// `exportProgress` notifications of the export it started go to it alone, while the engine's state (the one
/// export, the previews it wrote) is shared, so `cancelExport` from any client stops the running export. One engine
/// lives as long as its transports.
///
/// Each request runs as a task of its own, so requests run side by side (a preview answers while an export runs)
/// and answers come in the order they finish, matched by id. Notifications (no id) are run and never answered.
/// Methods and their params are `docs/RPC.md`'s; every error is a JSON-RPC error whose `message` is `[CODE] text`
/// and `data.code` the stable code (`RPCError`), and the engine keeps serving after any of them.
public final class MediaEngine: Sendable {
    /// Called with each message to send, from any thread, one call at a time per message; a transport writes it
    /// whole (one line) before the next.
    public typealias Sink = @Sendable (JSONValue) -> Void

    private struct State {
        var closing = false
        /// Why it is closing: the message of an export refused because it came too late.
        var closeMessage = "the engine is closing"
        /// Set once closing and every request has been answered.
        var finished = false
        var tasks: [UInt64: Task<Void, Never>] = [:]
        var nextTask: UInt64 = 0
        /// The running export's stop point: one export at a time (`EXPORT_BUSY`, never a queue).
        var export: ExportCancelToken? = nil
        /// The connection that started it (`RPCClient.connection`), nil for stdio's.
        var exportConnection: Int? = nil
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// The files each connection's user picked (`pickSource`, `pickLutFile`): that connection may name them
        /// even outside its `--allow` folders. Real paths, by connection number.
        var picked: [Int: Set<String>] = [:]
        /// The folders each connection's user picked (`pickFolder`), as `picked`.
        var pickedFolders: [Int: [String]] = [:]
    }

    private let state = Mutex(State())
    /// The client of `receive(_:)` without one: the stdio transport's, which may name any file.
    let primary: RPCClient
    let previews: PreviewFolder
    /// The frames and looks kept between previews (`WarmPreviews`).
    let warm: WarmPreviews

    /// The default of `memoryBudgetBytes` (`ftgst serve --memory-mb`): 512 MiB.
    public static let defaultMemoryBudgetBytes = 512 << 20

    /// `previewParent`: where the folder for previews asked without an `output` is made; nil: `$XDG_RUNTIME_DIR`,
    /// else the temporary folder. `send`: where the answers to messages received without a client go.
    /// `memoryBudgetBytes`: what the warm previews' frames, look tables and kept pipelines may hold (least recently used evicted
    /// past it); `idleRelease`: how long without a preview before they are let go.
    /// Whether its exports show on the desktop (`ExportOptions.notify`): `ftgst serve`'s default, `--no-notify`.
    let notify: Bool

    /// The folder of `.cube` looks `listLooks` lists (absolute; it need not exist).
    public let looksFolder: String

    /// `$XDG_DATA_HOME/ftgst/looks`, else `$HOME/.local/share/ftgst/looks` (the XDG base directory rule: a relative
    /// `XDG_DATA_HOME` is ignored).
    public static func defaultLooksFolder(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        -> String
    {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/ftgst/looks" }
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
        return home + "/.local/share/ftgst/looks"
    }

    /// `notify`: each export shows a notification with Cancel, dock progress, keeps the machine awake
    /// (`ExportDesktop`), where the session bus offers them. `looks`: the looks folder (nil: `defaultLooksFolder`).
    public init(
        previewParent: String? = nil, memoryBudgetBytes: Int = MediaEngine.defaultMemoryBudgetBytes,
        idleRelease: Duration = .seconds(60), notify: Bool = false, looks: String? = nil, send: @escaping Sink
    ) {
        let looks = looks ?? Self.defaultLooksFolder()
        looksFolder = looks.hasPrefix("/") ? looks : FileManager.default.currentDirectoryPath + "/" + looks
        self.notify = notify
        primary = RPCClient(send: send)
        previews = PreviewFolder(parent: previewParent)
        warm = WarmPreviews(budgetBytes: memoryBudgetBytes, idleRelease: idleRelease)
    }

    // MARK: - Messages

    /// Handles one message: a request, a notification, or a batch of them (an array, answered by one array of the
    /// answers in the batch's order, or by nothing when it held only notifications). Returns at once; the answers
    /// are sent when ready, to `client` (nil: the engine's own `send`). Text that is not JSON is answered `-32700`,
    /// an empty batch `-32600`.
    public func receive(_ message: some Collection<UInt8>, from client: RPCClient? = nil) {
        let client = client ?? primary
        let send = client.send
        let value: JSONValue
        do {
            value = try JSONValue.parse(message)
        } catch {
            send(RPCMessage.error(id: .null, RPCError(code: RPCError.parseError, "not JSON: \(error)")))
            return
        }
        // Received after `close`: answered, never run.
        let refused = state.withLock { $0.closing }
        guard case .array(let items) = value else {
            spawn { [self] in
                if let answer = await answer(value, refused: refused, client) { send(answer) }
            }
            return
        }
        guard !items.isEmpty else {
            send(RPCMessage.error(id: .null, RPCError(code: RPCError.invalidRequest, "an empty batch")))
            return
        }
        spawn { [self] in
            let answers = await withTaskGroup(of: (Int, JSONValue?).self) { group in
                for (index, item) in items.enumerated() {
                    group.addTask { (index, await self.answer(item, refused: refused, client)) }
                }
                var answers: [(Int, JSONValue)] = []
                for await (index, answer) in group {
                    if let answer { answers.append((index, answer)) }
                }
                return answers.sorted { $0.0 < $1.0 }.map(\.1)
            }
            if !answers.isEmpty { send(.array(answers)) }
        }
    }

    /// Answers a message the transport did not read whole because it is longer than `limit` bytes: `-32700`
    /// (its id cannot be known), to `client` (nil: the engine's own `send`).
    public func refuseOversized(limit: Int, from client: RPCClient? = nil) {
        (client ?? primary).send(
            RPCMessage.error(
                id: .null, RPCError(code: RPCError.parseError, "a message longer than \(limit) bytes: not read")))
    }

    /// The answer to one request, nil for a notification.
    private func answer(_ message: JSONValue, refused: Bool, _ client: RPCClient) async -> JSONValue? {
        let call: RPCCall
        do {
            call = try RPCCall(message)
        } catch {
            return RPCMessage.error(id: error.id, error.error)
        }
        do {
            if refused { throw FilmtoneError(.cancelled, "the engine is closing") }
            let result = try await perform(call, client)
            return call.id.map { RPCMessage.result(id: $0, result) }
        } catch {
            return call.id.map { RPCMessage.error(id: $0, RPCError(error)) }
        }
    }

    private func perform(_ call: RPCCall, _ client: RPCClient) async throws -> JSONValue {
        var client = client
        if let connection = client.connection, client.allowed != nil {
            let (files, folders) = state.withLock { ($0.picked[connection] ?? [], $0.pickedFolders[connection] ?? []) }
            client.allowed?.picked = files
            client.allowed?.pickedFolders = folders
        }
        guard let method = MediaEngine.methods[call.method] else {
            throw RPCError(
                code: RPCError.methodNotFound,
                "no method '\(call.method)' (the methods: \(MediaEngine.methods.keys.sorted().joined(separator: ", ")))"
            )
        }
        switch call.params {
        case nil: return try await method(self, .object([]), client)
        case .object(let fields)?: return try await method(self, .object(fields), client)
        default: throw RPCError(code: RPCError.invalidParams, "params must be an object (by name), not a list")
        }
    }

    /// Runs `work` as a task the engine waits for when closing.
    private func spawn(_ work: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            let id = state.nextTask
            state.nextTask += 1
            // The task ends by removing itself, which needs this lock: it cannot do so before it is inserted.
            let task = Task { [self] in
                await work()
                ended(id)
            }
            state.tasks[id] = task
        }
    }

    private func ended(_ id: UInt64) {
        state.withLock { $0.tasks[id] = nil }
        finishIfIdle()
    }

    // MARK: - Exports

    /// Runs `body` as the engine's one export, with `token` as its stop point: `EXPORT_BUSY` while another runs.
    /// It belongs to `client`'s connection: stopped (`disconnected: WebSocket closed`) if that one has closed or
    /// closes while it runs (`disconnected(connection:)`).
    func runningExport<T>(
        _ token: ExportCancelToken, for client: RPCClient, _ body: () async throws -> T
    ) async throws -> T {
        try state.withLock { state in
            // An export read before closing whose task starts after it ends as a running one would.
            if state.closing { throw FilmtoneError(.cancelled, state.closeMessage) }
            guard state.export == nil else {
                throw FilmtoneError(
                    .exportBusy,
                    "an export is already running in this engine (one at a time, none queued): wait for its answer, "
                        + "or stop it with cancelExport")
            }
            state.export = token
            state.exportConnection = client.connection
        }
        defer {
            state.withLock { state in
                state.export = nil
                state.exportConnection = nil
            }
        }
        // Registered first, then checked: a close before this is seen here, one after it by `disconnected`.
        if let isConnected = client.isConnected, !isConnected() { token.cancel(.disconnected, detail: Self.goneDetail) }
        return try await body()
    }

    /// The cancel detail of an export whose WebSocket closed.
    static let goneDetail = "WebSocket closed"

    /// The transport's connection `connection` closed: the export it started, if one runs, is stopped for
    /// `disconnected` (detail `WebSocket closed`, in its record; nothing left at its output). Its other requests
    /// run to their end, their answers dropped. An export belongs to the connection that started it: another
    /// client watching it does not keep it alive.
    public func disconnected(connection: Int) {
        let export = state.withLock { state in
            state.picked[connection] = nil
            state.pickedFolders[connection] = nil
            return state.exportConnection == connection ? state.export : nil
        }
        export?.cancel(.disconnected, detail: Self.goneDetail)
    }

    /// Lets `client`'s connection name `path` from now on, though it may be outside its `--allow` folders: the
    /// user chose it in a picker. Nothing for a client that may name any file.
    func userPicked(_ path: String, for client: RPCClient) {
        guard client.allowed != nil, let connection = client.connection, let real = FileAccess.realPath(path) else {
            return
        }
        state.withLock { _ = $0.picked[connection, default: []].insert(real) }
    }

    /// As `userPicked`, for a folder: everything inside it, and it is listed with the allowed folders.
    func userPickedFolder(_ path: String, for client: RPCClient) {
        guard client.allowed != nil, let connection = client.connection, let real = FileAccess.realPath(path) else {
            return
        }
        state.withLock { state in
            if !(state.pickedFolders[connection] ?? []).contains(real) {
                state.pickedFolders[connection, default: []].append(real)
            }
        }
    }

    /// The running export's stop point, if one runs.
    var runningExportToken: ExportCancelToken? { state.withLock { $0.export } }

    // MARK: - Previews

    /// The path of the preview the engine wrote under the file name `name` (as in the path it answered) for a client
    /// with a `previewURL`, if it is still there and still the file it wrote; nil for any other name, and for a
    /// preview written for a client without one (stdio's). What a transport serves a preview's `url` from.
    public func previewFile(named name: String) -> String? { previews.file(named: name) }

    // MARK: - Closing

    /// Stops serving: requests received from now on are answered `CANCELLED` without running, and the running export
    /// (or one about to start) is stopped for `reason`, with `detail` (nothing left at its output; its request is
    /// answered `CANCELLED` with the reason). The other requests received before are cancelled too when
    /// `cancelRequests` (a signal: stop now), else they run to their answer (the client closed its end after its
    /// last request: it still gets every answer). `closed()` returns once every request has been answered. Only
    /// the first call counts; a later one with `cancelRequests` still cancels what runs.
    public func close(reason: CancelReason, detail: String? = nil, cancelRequests: Bool = true) {
        let (tasks, export) = state.withLock { state -> ([Task<Void, Never>], ExportCancelToken?) in
            if !state.closing { state.closeMessage = reason.rawValue + (detail.map { ": \($0)" } ?? "") }
            state.closing = true
            return (cancelRequests ? Array(state.tasks.values) : [], state.export)
        }
        // The export's token first: its reason wins over the `api` its task's cancellation would record.
        export?.cancel(reason, detail: detail)
        for task in tasks { task.cancel() }
        finishIfIdle()
    }

    /// Waits until `close` was called and every request has been answered, then removes the previews the engine
    /// wrote in its folder (only those still its own files) and the folder.
    public func closed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.finished { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
        previews.removeAll()
        warm.removeAll()
    }

    private func finishIfIdle() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard state.closing, state.tasks.isEmpty else { return [] }
            state.finished = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
