import FilmtoneCore
import Foundation

// The methods, under the names and shapes of the original plugin's TypeScript interface (`FilmtoneMediaPlugin`).
// Params are read with the request files' reader (`JSONRequest`, `PreviewOptions.fromJSON`,
// `ExportOptions.fromJSON`), so a renderPreviewFrame or runExport params object is exactly a request file's object.

extension MediaEngine {
    typealias Method = @Sendable (MediaEngine, JSONValue, RPCClient) async throws -> JSONValue

    static let methods: [String: Method] = [
        "pickSource": { engine, params, client in try await engine.pickSource(params, client) },
        "pickLutFile": { engine, params, client in try await engine.pickLUTFile(params, client) },
        // ftgst's own: a folder the studio's folder browser then lists (with the allowed ones) and may use.
        "pickFolder": { engine, params, client in try await engine.pickFolder(params, client) },
        "probeSource": { _, params, client in try await probe(params, client) },
        "renderPreviewFrame": { engine, params, client in try await engine.renderPreviewFrame(params, client) },
        "runExport": { engine, params, client in try await engine.export(params, client) },
        "saveToPhotos": { _, params, client in try await save(params, client) },
        "shareOutput": { _, params, client in try await share(params, client) },
        "cancelExport": { engine, params, _ in try await engine.cancel(params) },
        "showInFolder": { _, params, client in try await showInFolder(params, client) },
        // ftgst's own, not the plugin's: what the studio offers to choose from (FileListing.swift).
        "listFiles": { _, params, client in try await listFiles(params, client) },
        "listPresets": { _, params, client in try await listPresets(params, client) },
        "listLooks": { engine, params, client in try await engine.listLooks(params, client) },
        "renderStoryboard": { engine, params, client in try await engine.renderStoryboard(params, client) },
        "desktop": { _, params, _ in
            try request(params).refuseUnknownKeys([])
            return await desktopReport().json
        },
    ]

    /// The `exportProgress` notification's params.
    static func progressParams(_ event: ExportProgress) -> JSONValue {
        .object([
            ("stage", .string(event.stage.rawValue)), ("progress", .double((event.progress * 10000).rounded() / 10000)),
            ("currentFrame", .int(event.currentFrame)), ("totalFrames", event.totalFrames.map { .int($0) } ?? .null),
        ])
    }

    // MARK: - Pickers

    /// The desktop's file chooser (`pickFile`): `{uri, path, handler}`, or null when the user cancelled.
    func pickSource(_ params: JSONValue, _ client: RPCClient) async throws -> JSONValue {
        let request = try MediaEngine.request(params)
        try request.refuseUnknownKeys(["title", "timeoutMs"])
        guard let picked = try await pick(.source, request, client) else { return .null }
        return picked.json
    }

    /// As `pickSource`, for a `.cube` look: `{slot, uri, path, handler}` (the slot as asked), or null.
    func pickLUTFile(_ params: JSONValue, _ client: RPCClient) async throws -> JSONValue {
        let request = try MediaEngine.request(params)
        try request.refuseUnknownKeys(["slot", "title", "timeoutMs"])
        guard let slot = try request.string("slot"), ["inputLut", "creativeLut"].contains(slot) else {
            throw FilmtoneError(.invalidArgument, #"pickLutFile needs 'slot': "inputLut" or "creativeLut""#)
        }
        guard let picked = try await pick(.lut, request, client) else { return .null }
        guard case .object(let fields) = picked.json else { return picked.json }
        return .object([("slot", .string(slot))] + fields)
    }

    /// The desktop's folder chooser: `{uri, path, handler}`, or null when the user cancelled. The client may name
    /// anything inside the folder from then on, and `listFiles` lists it with the allowed folders.
    func pickFolder(_ params: JSONValue, _ client: RPCClient) async throws -> JSONValue {
        let request = try MediaEngine.request(params)
        try request.refuseUnknownKeys(["title", "timeoutMs"])
        guard let picked = try await pick(.folder, request, client) else { return .null }
        return picked.json
    }

    /// A file picked for `client`, which may name it from then on (`userPicked`; a folder: `userPickedFolder`).
    private func pick(_ kind: PickOptions.Kind, _ request: JSONRequest, _ client: RPCClient) async throws
        -> PickedFile?
    {
        var options = PickOptions(kind: kind)
        if let title = try request.string("title") {
            guard title.count <= 200,
                !title.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else { throw FilmtoneError(.invalidArgument, "'title' must be one line of at most 200 characters") }
            options.title = title
        }
        if let timeout = try request.whole("timeoutMs") {
            guard timeout > 0 else { throw FilmtoneError(.invalidArgument, "'timeoutMs' must be positive") }
            options.timeoutMilliseconds = timeout
        }
        guard let picked = try await pickFile(options) else { return nil }
        if kind == .folder { userPickedFolder(picked.path, for: client) } else { userPicked(picked.path, for: client) }
        return picked
    }

    // MARK: - Sources, previews, exports

    static func probe(_ params: JSONValue, _ client: RPCClient) async throws -> JSONValue {
        let request = try request(params)
        try request.refuseUnknownKeys(["uri", "headers", "timeoutMs"])
        var options = ProbeOptions(source: try required(request, "uri", of: "probeSource"))
        try client.allowed?.check(source: options.source, "uri")
        if let headers = try request.strings("headers") { options.headers = headers }
        if let timeout = try request.whole("timeoutMs") { options.timeoutMilliseconds = timeout }
        return try await probeSource(options).json
    }

    /// `ftgst preview --request`'s object; without `output`, a new file in the engine's preview folder (and, for a
    /// client that reaches previews by URL, its `url`). Rendered with the engine's warm state (`WarmPreviews`): the
    /// same pixels as `ftgst preview`, within 1 code value; the answer is the CLI's object with `warm` added
    /// (`{"frame": reused?, "look": reused? or null}`).
    func renderPreviewFrame(_ params: JSONValue, _ client: RPCClient) async throws -> JSONValue {
        var options = try PreviewOptions.fromJSON(Data(params.serialized.utf8))
        if let allowed = client.allowed {
            try allowed.check(render: options.render)
            if let folder = options.mezzanineDirectory { try allowed.check(path: folder, "mezzanineDir") }
        }
        let chosen = options.output == nil
        if chosen {
            // The format's extension, so the name says what the file holds.
            let ext = options.format?.fileExtension ?? "png"
            options.output = try previews.nextPath(extension: ext)
        }
        let (result, reuse) = try await warm.render(options)
        guard case .object(var fields) = result.json else { return result.json }
        fields.append(("warm", reuse.json))
        guard chosen else { return .object(fields) }
        previews.wrote(result.path, served: client.previewURL != nil)
        if let url = client.previewURL {
            fields.append(("url", .string(url((result.path as NSString).lastPathComponent))))
        }
        return .object(fields)
    }

    /// `ftgst export --request`'s object; `exportProgress` notifications while it runs, the result event at the end.
    /// They go to `client` alone.
    func export(_ params: JSONValue, _ client: RPCClient) async throws -> JSONValue {
        var options = try ExportOptions.fromJSON(Data(params.serialized.utf8))
        options.notify = notify
        options.notifyAnswersButtons = true
        if let allowed = client.allowed {
            try allowed.check(render: options.render)
            if let folder = options.presets { try allowed.check(path: folder, "presets") }
            if let folder = options.workspace { try allowed.check(path: folder, "workspace") }
        }
        let token = ExportCancelToken()
        let send = client.send
        return try await runningExport(token, for: client) {
            try await runExport(options, token: token) { event in
                send(RPCMessage.notification("exportProgress", MediaEngine.progressParams(event)))
            }
        }.json
    }

    /// Stops the running export through its token (reason `api`, the text given as the detail), and answers once
    /// it has stopped (10 s at most): `{"cancelled":true}`, or `false` when none was running.
    func cancel(_ params: JSONValue) async throws -> JSONValue {
        let request = try MediaEngine.request(params)
        try request.refuseUnknownKeys(["reason"])
        let reason = try request.string("reason")
        if let reason, reason.count > 1000 { throw FilmtoneError(.invalidArgument, "'reason' is longer than 1000") }
        guard let token = runningExportToken else { return .object([("cancelled", .bool(false))]) }
        token.cancel(.api, detail: reason)
        let deadline = ContinuousClock.now + .seconds(10)
        while runningExportToken === token, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return .object([("cancelled", .bool(true))])
    }

    // MARK: - Delivery

    static func save(_ params: JSONValue, _ client: RPCClient) async throws -> JSONValue {
        let request = try request(params)
        try request.refuseUnknownKeys(["uri", "library"])
        var options = SaveOptions(file: try localPath(required(request, "uri", of: "saveToPhotos")))
        try client.allowed?.check(path: options.file, "uri")
        options.library = try request.string("library")
        // A library the client names must be allowed; the default one is the engine's choice, not the client's.
        if let library = options.library { try client.allowed?.check(path: library, "library") }
        return try await saveToLibrary(options).json
    }

    static func share(_ params: JSONValue, _ client: RPCClient) async throws -> JSONValue {
        let request = try request(params)
        try request.refuseUnknownKeys(["uri"])
        let file = try localPath(required(request, "uri", of: "shareOutput"))
        try client.allowed?.check(path: file, "uri")
        return try await shareOutput(ShareOptions(file: file)).json
    }

    // MARK: - Params

    static func request(_ params: JSONValue) throws -> JSONRequest {
        try JSONRequest(Data(params.serialized.utf8))
    }

    private static func required(_ request: JSONRequest, _ key: String, of method: String) throws -> String {
        guard let value = try request.string(key) else {
            throw FilmtoneError(.invalidArgument, "\(method) needs '\(key)'")
        }
        return value
    }

    /// A path or `file://` URI of a local file (`MediaSource.parse`); a remote URL is `INVALID_ARGUMENT`.
    private static func localPath(_ uri: String) throws -> String {
        guard case .local(let path) = try MediaSource.parse(uri) else {
            throw FilmtoneError(.invalidArgument, "'uri' must be a local file (a path or a file:// URI): \(uri)")
        }
        return path
    }
}
