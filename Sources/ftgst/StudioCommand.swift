import FilmtoneGst
import Foundation

/// `ftgst studio [--no-open] [--allow DIR]... [--looks DIR] [FILE]`: the studio as a desktop app. The engine on the
/// loopback interface with a fresh token (`serve --listen 127.0.0.1:0`), its page opened in the default browser;
/// what `share/applications/ftgst-studio.desktop` runs, with the file a file manager's "Open with" gives.
enum StudioCommand {
    static let spec = CommandSpec(
        path: ["studio"], synopsis: "studio [FILE]",
        summary: "the studio: the engine on 127.0.0.1 and its page in the default browser",
        usage: ["ftgst studio [--no-open] [--allow DIR]... [--looks DIR] [--memory-mb N] [FILE]"],
        positionals: [
            .init(
                name: "FILE", help: "a video or photo to open (a file manager's Open with); its folder is allowed",
                completion: .anyFile)
        ],
        options: [
            .flag("no-open", "print the url line only; open no browser"),
            .init(
                name: "allow", value: "DIR",
                help: "a folder the page may open files from and write exports to (symbolic links resolved)",
                defaultValue: "~/Videos, ~/Pictures (those that exist) and the current folder", repeatable: true,
                completion: .folder),
            .init(
                name: "looks", value: "DIR", help: "the folder of .cube looks the page shows as its library",
                defaultValue: "$XDG_DATA_HOME/ftgst/looks (~/.local/share/ftgst/looks)", completion: .folder),
            .init(
                name: "memory-mb", value: "N", help: "as for serve: what warm previews may hold",
                defaultValue: "512"),
        ],
        notes: #"""
            prints {"url":…} as its first stdout line (the page with its token; with FILE, &source= names it and its
            folder is allowed too), then opens that page through the desktop portal's OpenURI, else xdg-open (a
            failure to open is logged on stderr; the url line still works). It is `ftgst serve --listen
            127.0.0.1:0` otherwise (docs/RPC.md, docs/STUDIO.md): stdin, when it is a pipe or a terminal, is the stdio
            channel and its end closes the studio; started with no such stdin (a desktop's launcher gives
            /dev/null) it runs until SIGTERM or SIGINT. Exit 0.
            """#)

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return
        }
        guard arguments.positionals.count <= 1 else { throw usage("studio takes at most one FILE") }
        var allowed = arguments.all("allow")
        if allowed.isEmpty { allowed = defaultFolders(ProcessInfo.processInfo.environment) }
        var query = ""
        if let file = arguments.positionals.first {
            let source = try MediaSource.parse(file)
            guard case .local(let path) = source else {
                throw FilmtoneError(.invalidURL, "the studio opens local files: \(file)")
            }
            try MediaSource.local(path: path).checkExists()
            let absolute = URL(fileURLWithPath: path).standardizedFileURL
            allowed.append(absolute.deletingLastPathComponent().path)
            query =
                "&source="
                + (absolute.path.addingPercentEncoding(withAllowedCharacters: CharacterSet.alphanumerics) ?? "")
        }
        let opens = !arguments.has("no-open")
        try await ServeCommand.serve(
            ServeCommand.Setup(
                listen: "127.0.0.1:0", allowed: allowed, studio: nil, looks: arguments.string("looks"),
                memoryBudgetBytes: try ServeCommand.memoryBudget(arguments), notify: true,
                readsStdin: stdinIsAChannel(), pageQuery: query,
                listening: { page in
                    guard opens else { return }
                    Thread.detachNewThread {
                        let opened = BrowserOpener.open(page)
                        if let handler = opened.handler {
                            ServeCommand.log("opened the studio's page with \(handler)")
                        } else {
                            ServeCommand.log(
                                "could not open a browser (\(opened.failures.joined(separator: "; "))): open the url line's page"
                            )
                        }
                    }
                }))
    }

    /// `~/Videos` and `~/Pictures` (as `xdg-user-dir` names them, else the English names) that exist, and the
    /// current folder.
    static func defaultFolders(_ environment: [String: String]) -> [String] {
        userMediaFolders(environment).filter(FileAccess.isFolder) + [FileManager.default.currentDirectoryPath]
    }

    /// Whether stdin is a pipe, a socket or a terminal (a caller's channel), not /dev/null or a file.
    static func stdinIsAChannel() -> Bool {
        var info = stat()
        guard fstat(0, &info) == 0 else { return false }
        let type = info.st_mode & S_IFMT
        return type == S_IFIFO || type == S_IFSOCK || isatty(0) == 1
    }
}
