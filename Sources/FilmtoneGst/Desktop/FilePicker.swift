import DBusKit
import FilmtoneCore
import Foundation
import Synchronization

/// What `pickSource`, `pickLutFile` and `ftgst pick` ask the desktop for.
public struct PickOptions: Sendable {
    /// What the user is asked to choose.
    public enum Kind: String, Sendable {
        /// A video or photo (the chooser filters by MIME type).
        case source
        /// A look: a `.cube` file.
        case lut
        /// A folder (the portal's `directory` option, version 3), whose files the engine's client may then use.
        case folder
    }

    public var kind: Kind
    /// How long the user has to choose before the chooser is closed (`CANCELLED`).
    public var timeoutMilliseconds: Int64 = 600_000
    /// How long the portal has to answer each call (its version, the request itself): one that does not is
    /// treated as missing.
    public var portalTimeoutMilliseconds: Int = 5_000
    /// The folder the chooser opens in; nil: the one the last pick of this kind came from, if it still exists.
    public var folder: String?
    /// The chooser's title; nil: one naming the kind.
    public var title: String?

    public init(kind: Kind) {
        self.kind = kind
    }
}

/// The file (or folder) the user chose, and who asked them.
public struct PickedFile: Equatable, Sendable {
    public enum Handler: String, Sendable {
        /// `org.freedesktop.portal.FileChooser.OpenFile`: GNOME's, KDE's or wlroots' own dialog.
        case portal
        case zenity
        case kdialog
    }

    /// `file://` URI, percent-encoded.
    public var uri: String
    /// Absolute path.
    public var path: String
    public var handler: Handler

    /// The `pickSource` answer (and `ftgst pick source`'s): `{"uri", "path", "handler"}`.
    public var json: JSONValue {
        .object([("uri", .string(uri)), ("path", .string(path)), ("handler", .string(handler.rawValue))])
    }
}

/// Asks the user to choose a file: through the desktop portal's file chooser where the session bus has one that
/// answers, else `zenity` or `kdialog` where there is a display. nil when the user cancelled.
///
/// Throws `NOT_SUPPORTED` when no chooser is reachable (the message says what was tried and why each failed),
/// within about `portalTimeoutMilliseconds` — never a hang; `CANCELLED` when the user did not choose within
/// `timeoutMilliseconds` (the chooser is closed) or the task was cancelled.
public func pickFile(_ options: PickOptions) async throws -> PickedFile? {
    guard options.timeoutMilliseconds > 0, options.portalTimeoutMilliseconds > 0 else {
        throw FilmtoneError(.invalidArgument, "the pick timeouts must be positive")
    }
    let environment = ProcessInfo.processInfo.environment
    return try await runDetached { isCancelled in
        try FilePicker(options: options, environment: environment, isCancelled: isCancelled).pick()
    }
}

/// One pick: the portal first, then the fallbacks, remembering the folder of what was chosen.
struct FilePicker {
    var options: PickOptions
    var environment: [String: String]
    var isCancelled: @Sendable () -> Bool

    /// A chooser's outcome.
    enum Outcome {
        case picked(path: String, PickedFile.Handler)
        case cancelled
        /// This chooser is not there or failed; why, for the message.
        case unavailable(String)
    }

    func pick() throws -> PickedFile? {
        var reasons: [String] = []
        let folder = options.folder ?? PickFolders(environment: environment).last(options.kind)
        for chooser in [portal, program] {
            switch try chooser(folder) {
            case .picked(let path, let handler):
                let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
                if options.kind == .folder, !FileAccess.isFolder(absolute) {
                    throw FilmtoneError(.fileNotFound, "the chosen folder \(absolute) is not a folder")
                }
                PickFolders(environment: environment).remember(
                    (absolute as NSString).deletingLastPathComponent, for: options.kind)
                return PickedFile(uri: Share.fileURI(path: absolute), path: absolute, handler: handler)
            case .cancelled:
                return nil
            case .unavailable(let reason):
                reasons.append(reason)
            }
        }
        throw FilmtoneError(
            .notSupported,
            "no file chooser: " + reasons.joined(separator: "; ")
                + "; pass the file's path or URL instead, or choose one from listFiles")
    }

    private var title: String {
        if let title = options.title { return title }
        switch options.kind {
        case .source: return "Open a video or photo"
        case .lut: return "Choose a look (.cube)"
        case .folder: return "Choose a folder"
        }
    }

    // MARK: - The portal

    static let portalName = "org.freedesktop.portal.Desktop"
    static let portalPath = "/org/freedesktop/portal/desktop"
    static let fileChooser = "org.freedesktop.portal.FileChooser"

    /// The portal's `filters` option: (name, [(0 = glob | 1 = MIME type, pattern)]); nil for a folder (the
    /// chooser shows folders only).
    var portalFilters: DBusValue? {
        func filter(_ name: String, _ patterns: [(UInt32, String)]) -> DBusValue {
            .tuple([
                .string(name),
                .array(elementType: "(us)", patterns.map { .tuple([.uint32($0.0), .string($0.1)]) }),
            ])
        }
        switch options.kind {
        case .source:
            return .array(
                elementType: "(sa(us))",
                [
                    filter("Videos and photos", [(1, "video/*"), (1, "image/*")]),
                    filter("Videos", [(1, "video/*")]), filter("Photos", [(1, "image/*")]),
                ])
        case .lut:
            return .array(elementType: "(sa(us))", [filter("Looks (.cube)", [(0, "*.cube"), (0, "*.CUBE")])])
        case .folder:
            return nil
        }
    }

    func portal(_ folder: String?) throws -> Outcome {
        let wait = options.portalTimeoutMilliseconds
        let bus: DBusConnection
        do {
            bus = try DBusConnection.session(environment: environment, timeoutMilliseconds: wait)
        } catch let error as DBusError {
            return .unavailable("no desktop portal (\(error.message))")
        }
        defer { bus.close() }
        // Its version, with a short deadline: tells "no portal" from "a portal that hangs".
        do {
            _ = try bus.property(
                Self.portalName, Self.portalPath, Self.fileChooser, "version", timeoutMilliseconds: wait)
        } catch let error as DBusError {
            if error.isMissingService {
                return .unavailable("the session bus has no desktop portal file chooser (\(error.name ?? ""))")
            }
            return .unavailable("the desktop portal did not answer (\(error.message))")
        }

        let token = "ftgst_" + String(UInt64.random(in: 1...UInt64.max), radix: 16)
        let expected = bus.portalRequestPath(token: token)
        let answer = PortalAnswer()
        // Subscribed before the call, so an answer that comes at once is not lost.
        bus.subscribe(interface: "org.freedesktop.portal.Request", member: "Response", path: expected) { signal in
            answer.offer(signal)
        }
        var portalOptions: [String: DBusValue] = [
            "handle_token": .string(token), "modal": .bool(true), "multiple": .bool(false),
        ]
        if let filters = portalFilters {
            portalOptions["filters"] = filters
            portalOptions["current_filter"] = filters.elements[0]
        }
        if options.kind == .folder { portalOptions["directory"] = .bool(true) }
        if let folder, FileAccess.isFolder(folder) { portalOptions["current_folder"] = .byteString(folder) }
        let handle: String
        do {
            let reply = try bus.call(
                Self.portalName, Self.portalPath, Self.fileChooser, "OpenFile",
                .tuple([.string(""), .string(title), .vardict(portalOptions)]), timeoutMilliseconds: wait)
            handle = reply.elements.first?.string ?? expected
        } catch let error as DBusError {
            return .unavailable("the desktop portal's file chooser failed (\(error.message))")
        }
        if handle != expected {
            // A portal older than 0.9 chose its own path: follow that one too.
            bus.subscribe(interface: "org.freedesktop.portal.Request", member: "Response", path: handle) { signal in
                answer.offer(signal)
            }
        }

        let deadline = ContinuousClock.now + .milliseconds(options.timeoutMilliseconds)
        while true {
            if let (response, results) = answer.take(waitingMilliseconds: 100) {
                switch response {
                case 0:
                    let uri = results["uris"]?.elements.first?.string ?? ""
                    guard case .local(let path)? = try? MediaSource.parse(uri), uri.hasPrefix("file://") else {
                        return .unavailable("the desktop portal answered with no local file (\(uri))")
                    }
                    return .picked(path: path, .portal)
                case 1:
                    return .cancelled
                default:
                    return .unavailable("the desktop portal's file chooser failed (response \(response))")
                }
            }
            if isCancelled() || ContinuousClock.now >= deadline {
                _ = try? bus.call(
                    Self.portalName, handle, "org.freedesktop.portal.Request", "Close", timeoutMilliseconds: wait)
                if isCancelled() { throw FilmtoneError(.cancelled, "the pick was cancelled") }
                throw FilmtoneError(
                    .cancelled, "no file was chosen within \(options.timeoutMilliseconds) ms (the chooser was closed)")
            }
        }
    }

    // MARK: - zenity, kdialog

    /// The fallbacks' glob filter: the extensions `listFiles` shows for the kind (none for a folder).
    private var globs: [String] {
        switch options.kind {
        case .source:
            return (LibraryKind.videoExtensions.union(FileListing.pictureExtensions)).sorted().map { "*." + $0 }
        case .lut:
            return ["*.cube", "*.CUBE"]
        case .folder:
            return []
        }
    }

    private var filterName: String { options.kind == .source ? "Videos and photos" : "Looks" }

    /// zenity (GNOME's and most desktops'), else kdialog (KDE's), where there is a display.
    func program(_ folder: String?) throws -> Outcome {
        guard DesktopOpener.hasDisplay(environment) else { return .unavailable("no display for zenity or kdialog") }
        let start = folder.flatMap { FileAccess.isFolder($0) ? $0 : nil }
        if let zenity = Subprocess.find("zenity", environment: environment) {
            var arguments = ["--file-selection", "--title=\(title)"]
            arguments.append(
                options.kind == .folder
                    ? "--directory" : "--file-filter=\(filterName) | \(globs.joined(separator: " "))")
            if let start { arguments.append("--filename=\(start)/") }
            return try runChooser(zenity, arguments, .zenity)
        }
        if let kdialog = Subprocess.find("kdialog", environment: environment) {
            let folder = start ?? (environment["HOME"] ?? "/")
            if options.kind == .folder {
                return try runChooser(kdialog, ["--title", title, "--getexistingdirectory", folder], .kdialog)
            }
            let filter = "\(globs.joined(separator: " "))|\(filterName)"
            return try runChooser(kdialog, ["--title", title, "--getopenfilename", folder, filter], .kdialog)
        }
        return .unavailable("neither zenity nor kdialog is installed")
    }

    /// Runs a chooser program: exit 0 with the path on its first line is a pick; exit 1 with nothing on stderr a
    /// cancel (both exit 1 when they cannot open the display, which they say on stderr).
    private func runChooser(_ program: URL, _ arguments: [String], _ handler: PickedFile.Handler) throws -> Outcome {
        let outcome: SubprocessOutcome
        do {
            outcome = try Subprocess.run(
                program, arguments, environment: environment, timeoutMilliseconds: options.timeoutMilliseconds)
        } catch {
            return .unavailable("\(handler.rawValue) could not be started (\(error))")
        }
        if outcome.timedOut {
            throw FilmtoneError(
                .cancelled, "no file was chosen within \(options.timeoutMilliseconds) ms (the chooser was closed)")
        }
        let path = outcome.stdout.split(separator: "\n").first.map(String.init) ?? ""
        if outcome.status == 0, path.hasPrefix("/") { return .picked(path: path, handler) }
        if outcome.status == 1, outcome.stderr.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            return .cancelled
        }
        return .unavailable("\(handler.rawValue) failed: \(outcome.diagnostic)")
    }

}

/// The portal's `Response` for one request, handed from the connection's thread to the waiting one.
final class PortalAnswer: Sendable {
    private let signals = Mutex<[DBusValue]>([])
    private let arrived = DispatchSemaphore(value: 0)

    func offer(_ signal: DBusValue) {
        signals.withLock { $0.append(signal) }
        arrived.signal()
    }

    /// The response code and results, if one arrived within `waitingMilliseconds`.
    func take(waitingMilliseconds: Int) -> (UInt32, [String: DBusValue])? {
        _ = arrived.wait(timeout: .now() + .milliseconds(waitingMilliseconds))
        return signals.withLock { signals -> (UInt32, [String: DBusValue])? in
            guard !signals.isEmpty else { return nil }
            let values = signals.removeFirst().elements
            guard values.count == 2, let code = values[0].uint32 else { return nil }
            return (code, values[1].dictionary)
        }
    }
}

/// The folder each kind's last pick came from, kept in `$XDG_STATE_HOME/ftgst/pick-folders.json` (else
/// `~/.local/state/…`), so the next chooser opens there. Losing it loses nothing but that convenience.
struct PickFolders {
    var environment: [String: String]

    var file: URL? {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return URL(fileURLWithPath: state + "/ftgst/pick-folders.json")
        }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return URL(fileURLWithPath: home + "/.local/state/ftgst/pick-folders.json")
    }

    private func read() -> [String: String] {
        guard let file, let data = try? Data(contentsOf: file),
            case .object(let fields)? = try? JSONValue.parse(Array(data))
        else { return [:] }
        var folders: [String: String] = [:]
        for (key, value) in fields { if case .string(let text) = value { folders[key] = text } }
        return folders
    }

    func last(_ kind: PickOptions.Kind) -> String? {
        read()[kind.rawValue].flatMap { FileAccess.isFolder($0) ? $0 : nil }
    }

    func remember(_ folder: String, for kind: PickOptions.Kind) {
        guard let file else { return }
        var folders = read()
        folders[kind.rawValue] = folder
        let json = JSONValue.object(folders.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) })
        try? FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? StagedFile.write(Array((json.serialized + "\n").utf8), to: file)
    }
}
