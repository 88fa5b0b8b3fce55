import FilmtoneGst

/// `ftgst pick source|lut|folder`: asks the user to choose a file (or a folder) with the desktop's own chooser.
enum PickCommand {
    static let spec = CommandSpec(
        path: ["pick"], synopsis: "pick source|lut|folder",
        summary: "ask the user to choose a video, photo, look or folder",
        usage: ["ftgst pick source|lut|folder [--folder DIR] [--title TEXT] [--timeout-ms N]"],
        positionals: [
            .init(
                name: "KIND", help: "source (a video or photo), lut (a .cube look) or folder",
                completion: .choices(["source", "lut", "folder"]))
        ],
        options: [
            .init(
                name: "folder", value: "DIR", help: "the folder the chooser opens in",
                defaultValue: "the folder of the last pick of that kind", completion: .folder),
            .init(name: "title", value: "TEXT", help: "the chooser's title"),
            .init(
                name: "timeout-ms", value: "N", help: "how long the user has to choose (then [CANCELLED])",
                defaultValue: "600000"),
        ],
        notes: #"""
            opens the desktop portal's file chooser (org.freedesktop.portal.FileChooser, on the session bus: GNOME's, KDE's or wlroots' own dialog), else zenity or kdialog where DISPLAY or WAYLAND_DISPLAY is set, and prints {"uri":…,"path":…,"handler":"portal"|"zenity"|"kdialog"} (folder: the portal's directory chooser, zenity --directory, kdialog --getexistingdirectory); when the user cancels it prints null and exits with 1. No chooser (no portal on the session bus or one that does not answer within 5 s, and no zenity or kdialog with a display) is [NOT_SUPPORTED]. The next chooser of the same kind opens in the folder of the last pick ($XDG_STATE_HOME/ftgst/pick-folders.json)
            """#)

    /// The exit status when the user cancelled (as zenity's and kdialog's own).
    static let cancelledStatus: Int32 = 1

    static func run(_ words: [String]) async throws -> Int32 {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return 0
        }
        guard arguments.positionals.count == 1, let word = arguments.positionals.first else {
            throw usage("pick needs one KIND: source, lut or folder")
        }
        guard let kind = PickOptions.Kind(rawValue: word) else {
            throw usage("pick: unknown KIND '\(word)' (source, lut or folder)")
        }
        var options = PickOptions(kind: kind)
        if let folder = arguments.string("folder") { options.folder = folder }
        if let title = arguments.string("title") { options.title = title }
        if let timeout = try arguments.positiveMilliseconds("timeout-ms") { options.timeoutMilliseconds = timeout }
        guard let picked = try await pickFile(options) else {
            print("null")
            return cancelledStatus
        }
        print(picked.json.serialized)
        return 0
    }
}
