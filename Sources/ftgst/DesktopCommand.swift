import FilmtoneGst

/// `ftgst desktop`: what this session's desktop offers ftgst.
enum DesktopCommand {
    static let spec = CommandSpec(
        path: ["desktop"], synopsis: "desktop", summary: "say what this session's desktop offers ftgst",
        usage: ["ftgst desktop"], positionals: [], options: [],
        notes: #"""
            prints {"sessionBus":…,"portal":{"FileChooser":4,…},"notificationServer":{"name","vendor","version","capabilities"}|null,"display":…,"programs":{"zenity":PATH|null,"kdialog":…,"xdg-open":…}}: the desktop portal interfaces ftgst uses (pick, share, export --notify) that the session bus serves, with their versions, the notification server, and the fallbacks found. Each question has a 2-s deadline
            """#)

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return
        }
        guard arguments.positionals.isEmpty else { throw usage("desktop takes no arguments") }
        print(await desktopReport().json.serialized)
    }
}
