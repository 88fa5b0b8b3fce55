import FilmtoneGst
import Foundation
import Synchronization

/// `ftgst serve`: the engine (`MediaEngine`) over stdio: one JSON-RPC 2.0 message per line on stdin, one per line
/// on stdout (nothing else goes there; each line is written whole, at once), logs on stderr.
enum ServeCommand {
    static let spec = CommandSpec(
        path: ["serve"], synopsis: "serve", summary: "a long-lived engine speaking JSON-RPC 2.0 on stdin/stdout",
        usage: [
            "ftgst serve [--looks DIR] [--memory-mb N]",
            "ftgst serve --listen 127.0.0.1:PORT [--allow DIR]... [--studio DIR] [--looks DIR] [--memory-mb N]",
        ],
        options: [
            .init(
                name: "memory-mb", value: "N",
                help:
                    "what the warm previews' decoded frames, look tables and kept pipelines may hold (least recently used evicted past it; let go after 60 s idle)",
                defaultValue: "512"),
            .init(
                name: "listen", value: "127.0.0.1:PORT",
                help:
                    "also serve the protocol over a WebSocket at /rpc and the studio's page, on the loopback interface only (PORT 0: a free one); the first stdout line is {\"url\":…}"
            ),
            .flag(
                "no-notify",
                "no desktop notification (with Cancel), dock progress or suspend inhibitor while an export runs"),
            .init(
                name: "allow", value: "DIR",
                help:
                    "a folder whose files WebSocket clients may name as sources, LUTs and outputs, and see in listFiles (symbolic links resolved); stdio is not limited",
                defaultValue: "the current folder", repeatable: true, completion: .folder),
            .init(
                name: "studio", value: "DIR", help: "the folder of the studio's page",
                defaultValue: "PREFIX/share/ftgst/studio, else <checkout>/studio", completion: .folder),
            .init(
                name: "looks", value: "DIR",
                help: "the folder of .cube looks listLooks lists (with --listen, the page may read it too)",
                defaultValue: "$XDG_DATA_HOME/ftgst/looks (~/.local/share/ftgst/looks)", completion: .folder),
        ],
        notes: #"""
            reads one JSON-RPC 2.0 request per line on stdin and writes one answer per line on stdout (docs/RPC.md):
            pickSource, pickLutFile (the desktop's file chooser, as ftgst pick), probeSource, renderPreviewFrame,
            runExport (with exportProgress notifications), saveToPhotos, shareOutput, cancelExport, and ftgst's own
            listFiles, listLooks, listPresets and desktop. Logs go to stderr. With --listen, every request needs the token of the url
            line, and a WebSocket only from the page's own Origin; a WebSocket that closes stops the export it
            started. It ends when stdin closes, on SIGTERM or
            SIGINT, and when its parent exits, stopping a running export first (nothing left at its output) and
            closing the WebSockets; exit 0.
            """#)

    /// The longest message: a line longer than this is answered -32700 and skipped.
    static let maxMessageBytes = 16 << 20
    /// How long closing may take before the process exits anyway: an export stops within a second, a preview or
    /// probe left to answer after stdin closed has its own deadline (30 s by default).
    static let closeDeadline: Duration = .seconds(60)

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return
        }
        guard arguments.positionals.isEmpty else { throw usage("serve takes no arguments") }
        let listen = arguments.string("listen")
        if listen == nil, !arguments.all("allow").isEmpty || arguments.string("studio") != nil {
            throw usage("--allow and --studio go with --listen")
        }
        try await serve(
            Setup(
                listen: listen,
                allowed: arguments.all("allow").isEmpty
                    ? [FileManager.default.currentDirectoryPath] : arguments.all("allow"),
                studio: arguments.string("studio"), looks: arguments.string("looks"),
                memoryBudgetBytes: try memoryBudget(arguments), notify: !arguments.has("no-notify")))
    }

    /// What `serve` (and `studio`) start with.
    struct Setup {
        var listen: String?
        var allowed: [String]
        var studio: String?
        /// The looks folder `listLooks` lists (nil: `MediaEngine.defaultLooksFolder`).
        var looks: String?
        var memoryBudgetBytes: Int
        var notify: Bool
        /// Whether stdin is read as the stdio channel (and its end closes the engine). `studio` started by a desktop
        /// has /dev/null there, which would end it at once.
        var readsStdin = true
        /// The page URL's extra query (`&source=…`), after the token.
        var pageQuery = ""
        /// Called with the page URL once the url line is out (`studio` opens the browser there).
        var listening: (@Sendable (String) -> Void)? = nil
    }

    static func memoryBudget(_ arguments: Arguments) throws -> Int {
        guard let megabytes = try arguments.int("memory-mb") else { return MediaEngine.defaultMemoryBudgetBytes }
        guard (0...1_048_576).contains(megabytes) else { throw usage("--memory-mb must be 0…1048576") }
        return Int(megabytes) << 20
    }

    static func serve(_ setup: Setup) async throws {
        // A client that closes its end of stdout makes writes fail with EPIPE instead of killing the engine.
        signal(SIGPIPE, SIG_IGN)
        let output = LineWriter()
        let engine = MediaEngine(
            memoryBudgetBytes: setup.memoryBudgetBytes, notify: setup.notify, looks: setup.looks,
            send: { output.write($0) })
        var transport: ListenTransport?
        if let listen = setup.listen {
            // The looks folder is readable by the page too, when it exists (it is listed by `listLooks`).
            let looks = FileAccess.isFolder(engine.looksFolder) ? [engine.looksFolder] : []
            let allowed = try FileAccess(folders: setup.allowed + looks)
            let studio = try ListenTransport.studioFolder(setup.studio)
            let server = try ListenTransport(address: listen, studio: studio, allowed: allowed, engine: engine)
            let page = server.pageURL + setup.pageQuery
            output.write(.object([("url", .string(page))]))
            log(
                "listening: \(server.pageURL.prefix(while: { $0 != "?" })) (studio: \(studio.path); allowed: \(allowed.folders.joined(separator: ", ")))"
            )
            transport = server
            setup.listening?(page)
        }
        let closing = Closing(engine)
        output.onBroken = { closing.close(.disconnected, "stdout closed", cancelRequests: true) }
        // SIGTERM and SIGINT stop the running export (as for `ftgst export`) and close the engine; a second one exits
        // at once. The parent's exit is a SIGTERM.
        ExportSignals.install(onSignal: { closing.close($0, nil, cancelRequests: true) })
        try ParentProcess.signalOnExit(SIGTERM)
        if setup.readsStdin {
            log("ready: JSON-RPC 2.0, one message per line on stdin/stdout (pid \(getpid()))")
            Thread.detachNewThread {
                readLines(into: engine)
                // The client's last requests still get their answers; an export is stopped.
                closing.close(.disconnected, "stdin closed", cancelRequests: false)
            }
        } else {
            log("ready: the page's WebSocket only; SIGTERM or SIGINT ends it (pid \(getpid()))")
        }
        await engine.closed()
        // Every answer is sent: now the WebSockets close (1001, going away).
        transport?.stop()
        log("closed")
    }

    /// Closes the engine, and gives it `closeDeadline` to answer what runs: an answer that never comes must not
    /// keep the process alive (its staged files are removed, as on a second Ctrl-C).
    final class Closing: Sendable {
        private let engine: MediaEngine
        private let started = Mutex(false)

        init(_ engine: MediaEngine) { self.engine = engine }

        func close(_ reason: CancelReason, _ detail: String?, cancelRequests: Bool) {
            let first = started.withLock { started in
                defer { started = true }
                return !started
            }
            log("closing (\(reason.rawValue)\(detail.map { ": \($0)" } ?? ""))")
            engine.close(reason: reason, detail: detail, cancelRequests: cancelRequests)
            guard first else { return }
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: Double(closeDeadline.components.seconds))
                log("requests still running \(closeDeadline) after closing; exiting")
                StagedFile.removeAllInFlight()
                exit(FilmtoneError.Code.internalError.exitStatus)
            }
        }
    }

    /// Reads stdin to its end, handing each line (without its newline; blank lines skipped) to the engine.
    static func readLines(into engine: MediaEngine) {
        var pending: [UInt8] = []
        var skipping = false
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            var start = 0
            for index in 0..<count where buffer[index] == UInt8(ascii: "\n") {
                if !skipping {
                    pending += buffer[start..<index]
                    deliver(pending, to: engine)
                }
                pending = []
                skipping = false
                start = index + 1
            }
            if !skipping { pending += buffer[start..<count] }
            if pending.count > maxMessageBytes {
                engine.refuseOversized(limit: maxMessageBytes)
                pending = []
                skipping = true
            }
        }
        if !skipping { deliver(pending, to: engine) }
    }

    private static func deliver(_ line: [UInt8], to engine: MediaEngine) {
        guard line.contains(where: { ![0x20, 0x09, 0x0D].contains($0) }) else { return }
        // A line that ended within the chunk that took it past the limit.
        guard line.count <= maxMessageBytes else { return engine.refuseOversized(limit: maxMessageBytes) }
        engine.receive(line)
    }

    static func log(_ text: String) {
        FileHandle.standardError.write(Data("ftgst serve: \(text)\n".utf8))
    }
}

/// Writes each message as one line on stdout with one `write` loop under a lock, so lines never interleave and
/// each is out before the call returns (no buffering to flush). A failed write (the reader is gone) calls
/// `onBroken` once and drops later messages.
final class LineWriter: Sendable {
    private let state = Mutex((broken: false, onBroken: (@Sendable () -> Void)?.none))

    var onBroken: (@Sendable () -> Void)? {
        get { state.withLock { $0.onBroken } }
        set { state.withLock { $0.onBroken = newValue } }
    }

    func write(_ message: JSONValue) {
        let bytes = Array((message.serialized + "\n").utf8)
        let broken = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.broken else { return nil }
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    state.broken = true
                    return state.onBroken
                }
                written += count
            }
            return nil
        }
        broken?()
    }
}
