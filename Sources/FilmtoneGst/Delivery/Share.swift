import DBusKit
import FilmtoneCore
import Foundation

/// What `shareOutput` is asked for. Defaults match `ftgst share`'s.
public struct ShareOptions: Sendable {
    /// The file to share: a path, absolute or relative to the current directory. Must be a regular file.
    public var file: String
    /// Only work out the file's `file://` URI; hand nothing to the desktop.
    public var printOnly: Bool = false
    /// Deadline for each handler (the portal call, `xdg-open`); one that has not returned by then is killed.
    public var timeoutMilliseconds: Int64 = 10_000

    public init(file: String) {
        self.file = file
    }
}

/// A file handed to the desktop (or, with `printOnly`, just its URI).
public struct ShareResult: Equatable, Sendable {
    /// Which desktop mechanism took the file.
    public enum Handler: String, Sendable {
        /// The XDG desktop portal (`org.freedesktop.portal.OpenURI.OpenFile` with `ask`: its application chooser),
        /// through GIO's D-Bus client.
        case portal
        /// `xdg-open FILE-URI`.
        case xdgOpen = "xdg-open"
    }

    /// `file://` URI of the file, percent-encoded.
    public var uri: String
    /// Absolute path of the file.
    public var path: String
    /// nil with `printOnly`.
    public var handler: Handler?

    /// The CLI's result object: `{"uri":…}` with `printOnly`, else `{"uri":…,"handler":"portal"|"xdg-open"}`.
    public var json: JSONValue {
        guard let handler else { return .object([("uri", .string(uri))]) }
        return .object([("uri", .string(uri)), ("handler", .string(handler.rawValue))])
    }
}

/// Hands a file to the desktop's share/open handler: the XDG desktop portal where a session bus offers one,
/// else `xdg-open` where there is a display. Throws `FILE_NOT_FOUND` (missing or not a regular file),
/// `SHARE_UNAVAILABLE` (no desktop, or every handler failed or outran `timeoutMilliseconds`; the message says
/// which and why), `INVALID_ARGUMENT`. Never waits longer than the deadline per handler.
public func shareOutput(_ options: ShareOptions) async throws -> ShareResult {
    let request = try ShareRequest(options)
    let environment = ProcessInfo.processInfo.environment
    return try await runDetached { _ in try Share.run(request, environment: environment) }
}

/// A validated share request.
struct ShareRequest {
    var path: String
    var printOnly: Bool
    var timeoutMilliseconds: Int64

    /// Throws `INVALID_ARGUMENT`; touches no file.
    init(_ options: ShareOptions) throws {
        guard !options.file.isEmpty, !options.file.contains("\0") else {
            throw FilmtoneError(.invalidArgument, "FILE must be a path")
        }
        guard options.timeoutMilliseconds > 0 else {
            throw FilmtoneError(.invalidArgument, "the share timeout must be positive")
        }
        path = URL(fileURLWithPath: options.file).standardizedFileURL.path
        printOnly = options.printOnly
        timeoutMilliseconds = options.timeoutMilliseconds
    }
}

/// The share job: which handlers exist (a pure decision over the environment) and trying them in order.
enum Share {
    /// A way to hand the file over, with the program that does it.
    enum Route: Equatable {
        /// The session bus at this address.
        case portal(String)
        case xdgOpen(URL)
    }

    /// The handlers to try, in order: the portal when there is a session bus (`DBusConnection.sessionAddress`);
    /// `xdg-open` when it is on PATH and `DISPLAY` or `WAYLAND_DISPLAY` is set. Empty: no desktop.
    static func routes(_ environment: [String: String]) -> [Route] {
        var routes: [Route] = []
        if let address = DBusConnection.sessionAddress(environment) { routes.append(.portal(address)) }
        if DesktopOpener.hasDisplay(environment),
            let open = Subprocess.find("xdg-open", environment: environment)
        {
            routes.append(.xdgOpen(open))
        }
        return routes
    }

    /// The portal call: `OpenURI.OpenFile` (`OpenURI.OpenURI` refuses `file://` URIs by design) with the file as an
    /// open descriptor, read-only, and `ask`: the portal's application chooser, the nearest thing to a share sheet
    /// (there is no share portal). nil on success, else why it failed.
    static func portal(_ address: String, _ request: ShareRequest) -> String? {
        let wait = Int(clamping: request.timeoutMilliseconds)
        do {
            let bus = try DBusConnection(address: address, timeoutMilliseconds: wait)
            defer { bus.close() }
            try DesktopOpener.openThroughPortal(
                request.path, folder: false, ask: true, on: bus, timeoutMilliseconds: wait)
            return nil
        } catch let error as DBusError {
            if error.kind == .timedOut { return "desktop portal did not return within \(wait) ms (stopped)" }
            return "desktop portal failed: " + (error.name.map { "\($0): " } ?? "") + error.message
        } catch let error as FilmtoneError {
            return error.message
        } catch {
            return "desktop portal failed: \(error)"
        }
    }

    static func run(_ request: ShareRequest, environment: [String: String]) throws -> ShareResult {
        try LibrarySave.checkSource(request.path)
        let uri = fileURI(path: request.path)
        if request.printOnly { return ShareResult(uri: uri, path: request.path, handler: nil) }

        let routes = routes(environment)
        guard !routes.isEmpty else { throw noDesktop(environment) }
        var failures: [String] = []
        for route in routes {
            switch route {
            case .portal(let address):
                if let failure = portal(address, request) {
                    failures.append(failure)
                } else {
                    return ShareResult(uri: uri, path: request.path, handler: .portal)
                }
            case .xdgOpen(let program):
                if let failure = attempt("xdg-open", program, [uri], request, environment) {
                    failures.append(failure)
                } else {
                    return ShareResult(uri: uri, path: request.path, handler: .xdgOpen)
                }
            }
        }
        throw FilmtoneError(.shareUnavailable, failures.joined(separator: "; ") + "; use --print to get the URI")
    }

    /// Runs one handler; nil on success, else why it failed.
    private static func attempt(
        _ label: String, _ program: URL, _ arguments: [String], _ request: ShareRequest,
        _ environment: [String: String]
    ) -> String? {
        let outcome: SubprocessOutcome
        do {
            outcome = try Subprocess.run(
                program, arguments, environment: environment, timeoutMilliseconds: request.timeoutMilliseconds)
        } catch {
            return "\(label) could not be started (\(program.path): \(error))"
        }
        if outcome.timedOut {
            return "\(label) did not return within \(request.timeoutMilliseconds) ms (stopped)"
        }
        guard let status = outcome.status else { return "\(label) was killed by a signal" }
        guard status == 0 else {
            let detail = outcome.diagnostic
            return "\(label) failed with exit status \(status)" + (detail.isEmpty ? "" : ": \(detail)")
        }
        return nil
    }

    /// `SHARE_UNAVAILABLE` with a hint fitting what is missing.
    static func noDesktop(_ environment: [String: String]) -> FilmtoneError {
        if DesktopOpener.hasDisplay(environment) {
            return FilmtoneError(
                .shareUnavailable,
                "no share handler: xdg-open is not on PATH (Debian package "
                    + "xdg-utils) and no desktop portal is reachable over a session bus; use --print")
        }
        return FilmtoneError(
            .shareUnavailable,
            "no desktop session (no display, no desktop portal on a session bus): "
                + "set DISPLAY/WAYLAND_DISPLAY or use --print")
    }

    /// `file://` + the path, every byte other than RFC 3986 unreserved characters and `/` percent-encoded
    /// (`%20` for a space, UTF-8 bytes for other scripts): always a valid URI, whatever the name. Pure.
    static func fileURI(path: String) -> String {
        var out = "file://"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }
}
