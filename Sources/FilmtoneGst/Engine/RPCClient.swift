import FilmtoneCore
import Foundation

/// One client of a `MediaEngine`: where the answers to its requests (and the `exportProgress` notifications of an
/// export it started) go, which files it may name, and how it reaches the previews the engine writes for it.
///
/// The stdio client (the parent process, which could read and write any of the user's files itself) may name any
/// file; a WebSocket client (anything on the machine that has the token) only files inside the `--allow` folders.
public struct RPCClient: Sendable {
    /// Called with each message for this client, from any thread; the transport writes it whole.
    public var send: MediaEngine.Sink
    /// The folders the files this client names must be inside (each a resolved path); nil: any file.
    public var allowed: FileAccess?
    /// The URL at which a preview the engine wrote (by its file name) is served to this client; nil: none.
    public var previewURL: (@Sendable (String) -> String)?
    /// The transport's number for the connection this client speaks on (a WebSocket's), nil for stdio. An export
    /// belongs to the connection that started it: `MediaEngine.disconnected(connection:)` stops it.
    public var connection: Int?
    /// Whether that connection is still open: an export whose connection closed before it was registered is
    /// stopped as it starts (nil: always open).
    public var isConnected: (@Sendable () -> Bool)?

    public init(
        send: @escaping MediaEngine.Sink, allowed: FileAccess? = nil,
        previewURL: (@Sendable (String) -> String)? = nil, connection: Int? = nil,
        isConnected: (@Sendable () -> Bool)? = nil
    ) {
        self.send = send
        self.allowed = allowed
        self.previewURL = previewURL
        self.connection = connection
        self.isConnected = isConnected
    }
}

/// The folders a client's files must be inside (`ftgst serve --allow DIR`), and the check of each path a request
/// names: its real path (symbolic links resolved, `realpath`) must be one of the folders or below one. A path that
/// does not exist yet (an output) is checked through its parent folder's real path, which must exist.
///
/// The check is made when the request is read; a link swapped in by someone who can already write inside an
/// allowed folder between the check and the open is not guarded against (they could write there anyway).
public struct FileAccess: Sendable, Equatable {
    /// The resolved folders.
    public let folders: [String]
    /// Files outside them the client may name all the same: those its user picked (real paths).
    var picked: Set<String> = []
    /// Folders its user picked (`pickFolder`, real paths): used as the allowed ones are, for this client alone.
    var pickedFolders: [String] = []

    /// The folders listed as the client's own (`listFiles` without `dir`): the allowed ones, then those picked.
    var roots: [String] { folders + pickedFolders.filter { !folders.contains($0) } }

    /// Resolves each folder (a folder named twice, by whatever path, is kept once); `INVALID_ARGUMENT` for one that
    /// is not an existing folder.
    public init(folders: [String]) throws {
        var seen: Set<String> = []
        self.folders = try folders.compactMap { folder in
            var isFolder: ObjCBool = false
            guard let real = FileAccess.realPath(folder),
                FileManager.default.fileExists(atPath: real, isDirectory: &isFolder), isFolder.boolValue
            else { throw FilmtoneError(.invalidArgument, "--allow \(folder): not a folder") }
            return seen.insert(real).inserted ? real : nil
        }
    }

    /// Throws `INVALID_ARGUMENT` unless `path` (as the request gave it, relative to the current folder) resolves
    /// inside one of the folders; `what` names the field in the message, with `shown` (default: `path`), never
    /// where a link leads.
    public func check(path: String, _ what: String, shown: String? = nil) throws {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        guard let real = FileAccess.resolve(absolute),
            picked.contains(real)
                || roots.contains(where: { real == $0 || real.hasPrefix($0 == "/" ? "/" : $0 + "/") })
        else {
            throw FilmtoneError(
                .invalidArgument,
                "\(what) \(shown ?? path) is outside the folders this engine may use (ftgst serve --allow): "
                    + folders.joined(separator: ", "))
        }
    }

    /// `check(path:)` for what `MediaSource.parse` reads as a local file; an http(s) URL passes.
    public func check(source: String, _ what: String) throws {
        if case .local(let path) = try MediaSource.parse(source) { try check(path: path, what, shown: source) }
    }

    /// The files a preview or export request names: its source (unless remote), LUTs and output.
    func check(render: RenderOptions) throws {
        try check(source: render.source, "source")
        if let lut = render.inputLUT { try check(path: lut, "inputLut") }
        if let lut = render.creativeLUT { try check(path: lut, "creativeLut") }
        if let output = render.output { try check(path: output, "output") }
    }

    /// The real path of `path`, or of its parent joined with its last name when it does not exist (an output to
    /// be written); nil when neither resolves, or the last name is `.` or `..`.
    static func resolve(_ path: String) -> String? {
        if let real = realPath(path) { return real }
        let url = URL(fileURLWithPath: path)
        let name = url.lastPathComponent
        guard !name.isEmpty, name != ".", name != "..", let parent = realPath(url.deletingLastPathComponent().path)
        else { return nil }
        return (parent == "/" ? "" : parent) + "/" + name
    }

    /// Whether `path` is an existing folder (links followed).
    package static func isFolder(_ path: String) -> Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
