import FilmtoneCore
import Foundation

// `listFiles` and `listPresets`: what the studio offers to choose from. ftgst extensions, not methods of the
// original plugin's interface (which has the pickers instead).

/// One folder's entries a client may choose from: sub-folders, media files (by extension: the library's video and
/// picture types) and `.cube` LUTs; hidden names and everything else left out.
///
/// For a client limited to the `--allow` folders, the folder must resolve inside one of them, and an entry that is a
/// symbolic link is listed only when its real path does too (never a link out of them); without `dir` the answer
/// is the allowed folders themselves. A client that may name any file (stdio) lists any folder, by default the
/// engine's current folder.
struct FileListing {
    enum Kind: String {
        case folder, media, lut
    }

    struct Entry {
        var name: String
        var path: String
        var kind: Kind
        var sizeBytes: Int64?

        var json: JSONValue {
            var fields: [(String, JSONValue)] = [
                ("name", .string(name)), ("path", .string(path)), ("kind", .string(kind.rawValue)),
            ]
            if let sizeBytes { fields.append(("sizeBytes", .int(sizeBytes))) }
            return .object(fields)
        }
    }

    /// The folder listed (its real path), nil for the allowed folders' list.
    var folder: String?
    /// The folder above, when the client may list it too.
    var parent: String?
    var entries: [Entry]
    /// More than `limit` entries: the first `limit` (folders first, then by name) are listed.
    var truncated: Bool

    /// The most entries one answer lists.
    static let limit = 5000

    /// Picture extensions a preview or export reads (the video ones are `LibraryKind.videoExtensions`).
    static let pictureExtensions: Set<String> = [
        "jpg", "jpeg", "png", "webp", "tif", "tiff", "bmp", "gif", "heic", "heif", "avif",
    ]

    /// What an entry named `name` is, from its extension (`isFolder`: it resolves to a folder); nil: not listed.
    static func kind(name: String, isFolder: Bool) -> Kind? {
        if isFolder { return .folder }
        let ext = (name as NSString).pathExtension.lowercased()
        if ext == "cube" { return .lut }
        if LibraryKind.videoExtensions.contains(ext) || pictureExtensions.contains(ext) { return .media }
        return nil
    }

    /// The listing of `dir` (nil: the allowed folders, or the current folder for a client that may name any file).
    /// `INVALID_ARGUMENT` for a folder outside `allowed`, `FILE_NOT_FOUND` for one that does not exist, is not a
    /// folder or cannot be read.
    static func list(_ dir: String?, allowed: FileAccess?) throws -> FileListing {
        guard let dir = dir ?? (allowed == nil ? FileManager.default.currentDirectoryPath : nil) else {
            let roots = allowed?.roots ?? []
            return FileListing(
                folder: nil, parent: nil,
                entries: roots.map {
                    Entry(name: ($0 as NSString).lastPathComponent, path: $0, kind: .folder, sizeBytes: nil)
                }, truncated: false)
        }
        try allowed?.check(path: dir, "dir")
        let absolute = dir.hasPrefix("/") ? dir : FileManager.default.currentDirectoryPath + "/" + dir
        var isFolder: ObjCBool = false
        guard let real = FileAccess.realPath(absolute),
            FileManager.default.fileExists(atPath: real, isDirectory: &isFolder), isFolder.boolValue
        else { throw FilmtoneError(.fileNotFound, "no folder \(dir)") }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: real)
        } catch {
            throw FilmtoneError(.fileNotFound, "cannot read the folder \(dir)")
        }
        var entries: [Entry] = []
        for name in names where !name.hasPrefix(".") {
            let path = (real == "/" ? "" : real) + "/" + name
            if let entry = entry(name: name, path: path, allowed: allowed) { entries.append(entry) }
        }
        entries.sort { ($0.kind == .folder ? 0 : 1, $0.name) < ($1.kind == .folder ? 0 : 1, $1.name) }
        let truncated = entries.count > limit
        if truncated { entries.removeLast(entries.count - limit) }
        var parent: String? = real == "/" ? nil : (real as NSString).deletingLastPathComponent
        if let above = parent, let allowed, (try? allowed.check(path: above, "dir")) == nil { parent = nil }
        return FileListing(folder: real, parent: parent, entries: entries, truncated: truncated)
    }

    /// The entry for `path` (inside the listed folder), following a symbolic link only to check where it leads.
    private static func entry(name: String, path: String, allowed: FileAccess?) -> Entry? {
        var link = stat()
        guard lstat(path, &link) == 0 else { return nil }
        var target = link
        if link.st_mode & S_IFMT == S_IFLNK {
            // A link is listed only if it resolves, and for a limited client only if it resolves inside its folders.
            guard stat(path, &target) == 0 else { return nil }
            if let allowed, (try? allowed.check(path: path, "entry")) == nil { return nil }
        }
        let type = target.st_mode & S_IFMT
        guard type == S_IFDIR || type == S_IFREG, let kind = kind(name: name, isFolder: type == S_IFDIR) else {
            return nil
        }
        return Entry(name: name, path: path, kind: kind, sizeBytes: type == S_IFREG ? Int64(target.st_size) : nil)
    }

    /// `{"dir": …, "parent": …, "entries": [{"name","path","kind","sizeBytes"?}…], "truncated": bool}`.
    var json: JSONValue {
        .object([
            ("dir", folder.map { .string($0) } ?? .null), ("parent", parent.map { .string($0) } ?? .null),
            ("entries", .array(entries.map(\.json))), ("truncated", .bool(truncated)),
        ])
    }
}

extension MediaEngine {
    /// `listFiles` (`{dir?}`): `FileListing.list` for the client's folders.
    static func listFiles(_ params: JSONValue, _ client: RPCClient) async throws -> JSONValue {
        let request = try request(params)
        try request.refuseUnknownKeys(["dir"])
        let dir = try request.string("dir")
        if let dir, dir.isEmpty { throw FilmtoneError(.invalidArgument, "'dir' is empty") }
        return try await runDetached { _ in try FileListing.list(dir, allowed: client.allowed).json }
    }

    /// `listLooks` (`{}`): the `.cube` files of the engine's looks folder (`ftgst serve --looks`), by name:
    /// `{"dir": …, "looks": [{"name","path","sizeBytes"}…]}`; an empty list when the folder does not exist. Sub-folders
    /// are not walked. For a limited client the folder must be allowed (`serve --listen` allows it when it exists).
    func listLooks(_ params: JSONValue, _ client: RPCClient) async throws -> JSONValue {
        let request = try MediaEngine.request(params)
        try request.refuseUnknownKeys([])
        let folder = looksFolder
        return try await runDetached { _ in
            guard FileAccess.isFolder(folder) else {
                return .object([("dir", .string(folder)), ("looks", .array([]))])
            }
            let listing = try FileListing.list(folder, allowed: client.allowed)
            let looks = listing.entries.filter { $0.kind == .lut }.map(\.json)
            return .object([("dir", .string(listing.folder ?? folder)), ("looks", .array(looks))])
        }
    }

    /// `listPresets` (`{presets?}`): the export presets `runExport` chooses among, `ftgst presets`' objects in
    /// `{"presets": […]}`: those of the folder given (which a limited client must be allowed), else of
    /// `$FTGST_PRESETS`, else the built-in ones.
    static func listPresets(_ params: JSONValue, _ client: RPCClient) async throws -> JSONValue {
        let request = try request(params)
        try request.refuseUnknownKeys(["presets"])
        let folder = try request.string("presets")
        if let folder { try client.allowed?.check(path: folder, "presets") }
        return try await runDetached { _ in
            .object([("presets", .array(try ExportPresets.all(folder: folder).map(\.json)))])
        }
    }
}
