import FilmtoneGst

/// `ftgst share FILE [--print]`: hands a file to the desktop's share/open handler, or prints its URI.
enum ShareCommand {
    static let spec = CommandSpec(
        path: ["share"], synopsis: "share FILE [--print]", summary: "hand a file to the desktop's open/share handler",
        usage: ["ftgst share FILE [--print] [--timeout-ms N]"],
        positionals: [.init(name: "FILE", help: "the file to share (a regular file)", completion: .anyFile)],
        options: [
            .flag("print", #"only print its URI: {"uri":"file:///…"}"#),
            .init(
                name: "timeout-ms", value: "N", help: "deadline per handler",
                defaultValue: "$FTGST_SHARE_TIMEOUT_MS, else 10000"),
        ],
        notes: #"""
            hands FILE to the XDG desktop portal's application chooser (OpenURI with ask, on the session bus), else to xdg-open (when DISPLAY or WAYLAND_DISPLAY is set), and prints {"uri":…,"handler":"portal"|"xdg-open"}; no desktop, or a handler that fails or does not return in time, is [SHARE_UNAVAILABLE]
            """#)

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return
        }
        guard arguments.positionals.count == 1, let file = arguments.positionals.first else {
            throw usage(arguments.positionals.isEmpty ? "share needs a FILE" : "share takes one FILE")
        }
        var options = ShareOptions(file: file)
        options.printOnly = arguments.has("print")
        // The option wins over the environment, which stays for scripts that set it.
        if let value = try arguments.positiveMilliseconds("timeout-ms")
            ?? environmentMilliseconds("FTGST_SHARE_TIMEOUT_MS")
        {
            options.timeoutMilliseconds = value
        }
        let result = try await shareOutput(options)
        print(result.json.serialized)
    }
}
