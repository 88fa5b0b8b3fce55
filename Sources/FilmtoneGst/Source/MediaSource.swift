import FilmtoneCore
import Foundation

/// Where media comes from: a local file or an http(s) URL. Parsing is pure (no file system access).
public enum MediaSource: Equatable, Sendable {
    case local(path: String)
    case remote(url: URL)

    /// Parses what a user typed: an absolute or relative path, a `file://` URI, or an `http(s)://` URL.
    /// Throws `INVALID_URL` for anything else (another scheme, a malformed URI, an empty string).
    public static func parse(_ text: String, relativeTo directory: String = FileManager.default.currentDirectoryPath)
        throws -> MediaSource
    {
        guard !text.isEmpty else { throw FilmtoneError(.invalidURL, "empty source") }
        try refuseControlCharacters(text, as: "source", code: .invalidURL)
        guard let scheme = schemePrefix(of: text) else {
            let path = text.hasPrefix("/") ? text : (directory as NSString).appendingPathComponent(text)
            return .local(path: (path as NSString).standardizingPath)
        }
        try checkEscapes(text)
        switch scheme.lowercased() {
        case "file":
            guard let url = URL(string: text), url.scheme?.lowercased() == "file" else {
                throw FilmtoneError(.invalidURL, "malformed file URI: \(text)")
            }
            let host = url.host ?? ""
            guard host.isEmpty || host == "localhost" else {
                throw FilmtoneError(.invalidURL, "file URI names a remote host '\(host)': \(text)")
            }
            guard url.port == nil else { throw FilmtoneError(.invalidURL, "a file URI has no port: \(text)") }
            let encoded = url.path(percentEncoded: true)
            // An escaped NUL would cut the path short, an escaped '/' would be a separator the URI hid: GLib's
            // g_filename_from_uri refuses both, and so does ftgst.
            let lowered = encoded.lowercased()
            guard !lowered.contains("%00"), !lowered.contains("%2f") else {
                throw FilmtoneError(.invalidURL, "file URI escapes a NUL or '/' in its path: \(text)")
            }
            guard let path = encoded.removingPercentEncoding else {
                throw FilmtoneError(.invalidURL, "file URI's path is not UTF-8 once unescaped: \(text)")
            }
            guard path.hasPrefix("/") else { throw FilmtoneError(.invalidURL, "file URI has no path: \(text)") }
            // `%0A` is a newline once decoded: the path is held to the same rule as one typed as it is.
            try refuseControlCharacters(path, as: "source", code: .invalidURL)
            return .local(path: path)
        case "http", "https":
            guard let url = URL(string: text), let host = url.host, !host.isEmpty else {
                throw FilmtoneError(.invalidURL, "malformed URL: \(text)")
            }
            if let port = url.port, !(1...65535).contains(port) {
                throw FilmtoneError(.invalidURL, "port \(port) is out of range (1…65535): \(text)")
            }
            return .remote(url: url)
        default:
            throw FilmtoneError(
                .invalidURL, "unsupported scheme '\(scheme)' (use a path, file://, http:// or https://)")
        }
    }

    /// The rule for control characters, the same in every command: a source, an output or a LUT path holding one
    /// (U+0000–U+001F or U+007F: a tab, a newline, an escape…; typed, or percent-encoded in a `file://` URI) is
    /// refused before anything runs, with the character named. No such file name is needed in practice, and each
    /// one breaks some reader downstream (a terminal, a record's line, a `gst-launch-1.0` command).
    package static func refuseControlCharacters(_ text: String, as what: String, code: FilmtoneError.Code) throws {
        // Scalars, not Characters: "\r\n" is one Character that equals neither "\r" nor "\n".
        guard let bad = text.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return }
        let name = String(format: "U+%04X", bad.value)
        throw FilmtoneError(
            code,
            "the \(what) contains a control character (\(name)), which ftgst does not accept: \(text.debugDescription)")
    }

    /// An http(s) URL as files on disk may keep it: the password (or a user name given alone, the `TOKEN@host`
    /// form) and every query value replaced by `***` (`http://user:***@host/a.mp4?token=***`), as header values
    /// are. Anything else is returned as it is.
    package static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return text }
        if components.percentEncodedPassword != nil {
            components.percentEncodedPassword = "***"
        } else if components.percentEncodedUser != nil {
            components.percentEncodedUser = "***"
        }
        if let query = components.percentEncodedQuery {
            components.percentEncodedQuery = query.split(separator: "&", omittingEmptySubsequences: false).map {
                item -> String in
                guard !item.isEmpty else { return "" }
                guard let equals = item.firstIndex(of: "=") else { return "***" }
                return item[..<equals] + "=***"
            }.joined(separator: "&")
        }
        return components.string ?? text

    }

    /// Every `%` of a URI starts an escape of two hex digits (RFC 3986 §2.1); `%zz` or a `%` at the end is not a
    /// URI, whatever a lenient parser would make of it. Plain paths are not checked: `50%.mp4` is a file name.
    private static func checkEscapes(_ text: String) throws {
        let scalars = Array(text.unicodeScalars)
        for (offset, scalar) in scalars.enumerated() where scalar == "%" {
            let digits = scalars.dropFirst(offset + 1).prefix(2)
            guard digits.count == 2, digits.allSatisfy({ $0.properties.isASCIIHexDigit }) else {
                throw FilmtoneError(
                    .invalidURL,
                    "malformed %-escape '\(String(String.UnicodeScalarView(scalars.dropFirst(offset).prefix(3))))' (a '%' must be followed by two hex digits): \(text)"
                )
            }
        }
    }

    /// RFC 3986 scheme: a letter, then letters, digits, `+`, `-`, `.`, then `:`.
    private static func schemePrefix(of text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        return String(scheme)
    }

    /// The URI GStreamer's `uridecodebin` takes (percent-encoded for files).
    public var uri: String {
        switch self {
        case .local(let path): return URL(fileURLWithPath: path).absoluteString
        case .remote(let url): return url.absoluteString
        }
    }

    public var isRemote: Bool {
        if case .remote = self { return true }
        return false
    }

    /// For a local source: throws `FILE_NOT_FOUND` unless it is an existing regular file that can be read (checked
    /// before any decoder starts, so the user gets the precise reason rather than a pipeline error).
    public func checkExists() throws {
        guard case .local(let path) = self else { return }
        try MediaSource.checkReadableFile(path)
    }

    /// The one check of a local file every command reads (`thumb`, `preview`, `probe`, `export`, `mezzanine`,
    /// `save`, `share`), so that each gives the same `FILE_NOT_FOUND` for the same file: it must exist (symbolic
    /// links followed), be a regular file (a FIFO or device would block `filesrc`'s open() inside a state change,
    /// beyond any deadline, and the library's copy too), and give its first byte to `read` (no permission, or a
    /// file the kernel refuses to read, such as `/proc/self/mem`, would otherwise fail later as a decoding error).
    static func checkReadableFile(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { throw FilmtoneError(.fileNotFound, "no such file: \(path)") }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw FilmtoneError(.fileNotFound, "is a directory, not a file: \(path)")
        default: throw FilmtoneError(.fileNotFound, "not a regular file: \(path)")
        }
        do {
            let file = try POSIXFile(path: path, flags: O_RDONLY | O_NONBLOCK)
            var byte: UInt8 = 0
            _ = try withUnsafeMutableBytes(of: &byte) { try file.read(into: $0) }
        } catch let error as SystemCallError {
            throw FilmtoneError(.fileNotFound, "cannot read \(path): \(error.reason)")
        }
    }
}

/// One HTTP request header a remote source sends on every request (redirects included).
public struct HTTPHeader: Equatable, Sendable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Parses `Name: value`. Throws `INVALID_ARGUMENT` for a missing colon, a name that is not an HTTP token,
    /// or a CR/LF anywhere (header injection).
    public static func parse(_ line: String) throws -> HTTPHeader {
        // Scalars, not Characters: "\r\n" is one Character that equals neither "\r" nor "\n".
        guard !line.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw FilmtoneError(.invalidArgument, "header contains CR or LF: \(line.debugDescription)")
        }
        guard let colon = line.firstIndex(of: ":") else {
            throw FilmtoneError(.invalidArgument, "header is not 'Name: value': \(line)")
        }
        let name = String(line[..<colon])
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        guard !name.isEmpty, name.allSatisfy({ tokenCharacters.contains($0) }) else {
            throw FilmtoneError(.invalidArgument, "header name is not a valid HTTP token: \(name.debugDescription)")
        }
        return HTTPHeader(name: name, value: value)
    }
}
