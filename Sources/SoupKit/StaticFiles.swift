import Foundation

/// Which file of a static folder an HTTP request path names, and its Content-Type: pure rules, no I/O but the
/// `realpath`/`stat` that decide where a path really leads.
///
/// Only files inside the folder are served: a path with a `.` or `..` segment, a NUL or a backslash is refused
/// before the file system is asked, and what is left must resolve (symbolic links followed, `realpath`) to a regular
/// file below the folder's own resolved path, so a link pointing out of the folder is refused too. Only the types
/// below are served; any other file is as good as missing.
package enum StaticFiles {
    /// The Content-Type for each extension served (lower case).
    package static let contentTypes: [String: String] = [
        "html": "text/html; charset=utf-8",
        "css": "text/css; charset=utf-8",
        "js": "text/javascript; charset=utf-8",
        "json": "application/json",
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "svg": "image/svg+xml",
    ]

    /// The file `requestPath` (decoded, starting with `/`; a path ending in `/` names its `index.html`) stands for
    /// inside `root` (a folder's resolved path, as from `resolvedFolder`), with its Content-Type; nil when it names
    /// nothing servable.
    package static func resolve(_ requestPath: String, in root: String) -> (path: String, contentType: String)? {
        guard requestPath.hasPrefix("/") else { return nil }
        var segments = requestPath.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if requestPath.hasSuffix("/") { segments.append("index.html") }
        guard !segments.isEmpty,
            segments.allSatisfy({ $0 != "." && $0 != ".." && !$0.contains("\0") && !$0.contains("\\") })
        else { return nil }
        guard let name = segments.last, let dot = name.lastIndex(of: "."),
            let type = contentTypes[name[name.index(after: dot)...].lowercased()]
        else { return nil }
        guard let real = realPath(root + "/" + segments.joined(separator: "/")), real.hasPrefix(root + "/") else {
            return nil
        }
        var info = stat()
        guard stat(real, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return (real, type)
    }

    /// `path` with its Content-Type, nil when its extension is not one served.
    package static func typed(_ path: String) -> (path: String, contentType: String)? {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/"),
            let type = contentTypes[path[path.index(after: dot)...].lowercased()]
        else { return nil }
        return (path, type)
    }

    /// The resolved path of an existing folder (`realpath`), nil if it is not one.
    package static func resolvedFolder(_ path: String) -> String? {
        guard let real = realPath(path) else { return nil }
        var info = stat()
        guard stat(real, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return nil }
        return real
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
