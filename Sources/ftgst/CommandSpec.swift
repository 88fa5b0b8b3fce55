import FilmtoneGst

/// One table per command: its words, usage, positionals, options and closing paragraph. `--help`, the parser's
/// option sets (`Arguments(_:spec:)`), the man page (`ftgst man`) and the shell completions (`ftgst completion`) are
/// all derived from it, so none of them can name an option the others do not know.
struct CommandSpec: Sendable {
    /// The command's words after `ftgst`: `["thumb"]`, `["lut", "inspect"]`.
    var path: [String]
    /// The command's line in `ftgst --help`: words after `ftgst` (`thumb URI [options]`) and what it does.
    var synopsis: String
    var summary: String
    /// Whole usage lines, each starting with `ftgst`.
    var usage: [String]
    var positionals: [Positional] = []
    var options: [Option] = []
    /// The closing paragraph of `--help`: what it prints, how it fails (each line wrapped on its own).
    var notes: String = ""
    /// Not listed in `ftgst --help`'s command list (`man`, `completion`): still documented and completed.
    var hidden = false

    /// `thumb`, `lut inspect`.
    var name: String { path.joined(separator: " ") }

    /// Every option, `--help` included (every command has it; `-h` is its short form).
    var allOptions: [Option] { options + [.help] }

    /// An argument that is not an option: `URI`, `FILE`.
    struct Positional: Sendable {
        var name: String
        var help: String
        var completion: Completion
    }

    /// One option: `--name VALUE` (or a flag without a value), its help, default and other spellings.
    struct Option: Sendable {
        var name: String
        /// A one-letter spelling (`-o` for `--output`).
        var short: Character? = nil
        /// What the value looks like in help (`N`, `DIR`, `auto|bar|jsonl|none`); nil for a flag.
        var value: String?
        var help: String
        /// Shown as `[default]` in help and as "Default:" in the man page; nil when there is none to say.
        var defaultValue: String? = nil
        /// Older spellings read as this one (`cache-cap-mb` for `cache-max-mb`).
        var aliases: [String] = []
        /// Given more than once, every value counts (`--header`).
        var repeatable = false
        /// What a shell offers for the value.
        var completion: Completion = .none

        var isFlag: Bool { value == nil }

        static func flag(_ name: String, _ help: String, aliases: [String] = []) -> Option {
            Option(name: name, value: nil, help: help, aliases: aliases)
        }

        /// `--interpolation`, as `preview` and `export` take it.
        static let interpolation = Option(
            name: "interpolation", value: "M", help: "tetrahedral|trilinear|nearest", defaultValue: "tetrahedral",
            completion: .choices(["tetrahedral", "trilinear", "nearest"]))

        /// `--tone-map`, as `thumb`, `storyboard`, `preview` and `export` take it.
        static let toneMap = Option(
            name: "tone-map", value: "on|off", help: "on: PQ and HLG (HDR) sources are tone-mapped to SDR BT.709",
            defaultValue: "on", completion: .choices(["on", "off"]))

        /// `--tolerance SECONDS`, the other spelling of `--tolerance-ms N` (one vocabulary across commands).
        static let toleranceSeconds = Option(
            name: "tolerance", value: "SECONDS", help: "the same in seconds (2, 0.5s, 1:00), instead of --tolerance-ms")

        static let help = Option(name: "help", short: "h", value: nil, help: "print this summary and exit")
    }

    /// What completes a value or a positional in a shell.
    enum Completion: Equatable, Sendable {
        /// Free text: a number, a header.
        case none
        /// A file; with extensions, only those (and folders to walk into).
        case file(extensions: [String])
        case folder
        /// An export preset's name, as `ftgst presets` lists them.
        case preset
        case choices([String])

        static let anyFile = Completion.file(extensions: [])
        static let cube = Completion.file(extensions: ["cube"])
    }
}

// MARK: - Every command

/// The commands in the order `ftgst --help` lists them.
enum Commands {
    static let all: [CommandSpec] = [
        ThumbCommand.spec, StoryboardCommand.spec, BatchCommand.spec, PreviewCommand.spec, LUTCommand.spec,
        ProbeCommand.spec,
        ExportCommand.spec,
        PresetsCommand.spec, CancelCommand.spec, SaveCommand.spec, ShareCommand.spec, PickCommand.spec,
        DesktopCommand.spec,
        MezzanineCommand.spec,
        ThumbnailerCommand.spec,
        ServeCommand.spec, StudioCommand.spec, ManCommand.spec, CompletionCommand.spec,
    ]

    /// The first words of every command: what `ftgst` accepts as COMMAND.
    static var names: [String] {
        var seen: Set<String> = []
        return all.compactMap { seen.insert($0.path[0]).inserted ? $0.path[0] : nil }
    }

    /// The options `ftgst` itself takes, before any command.
    static let topLevelOptions: [CommandSpec.Option] = [
        .flag("version", "print ftgst's version, the git commit it was built from and GStreamer's version"),
        CommandSpec.Option(name: "help", short: "h", value: nil, help: "print the list of commands"),
    ]

    /// `ftgst --help`: every listed command's synopsis and summary, from the specs, then the top-level options.
    static var topLevelHelp: String {
        var lines = [
            "ftgst \(FilmtoneVersion.string): thumbnails, looks and exports on GStreamer",
            "usage: ftgst COMMAND [options]",
        ]
        for command in Commands.all where !command.hidden {
            lines += HelpLayout.entry(
                command.synopsis, "\(command.summary) (ftgst \(command.path[0]) --help)", column: 30)
        }
        for option in Commands.topLevelOptions { lines += HelpLayout.entry(option.synopsis, option.help, column: 30) }
        lines += [
            "Errors are one line on stderr, `[CODE] message`, with an exit status per code (docs/CLI.md, man ftgst).",
            "ftgst man prints the man page; ftgst completion bash|zsh|fish a completion script.",
        ]
        return lines.joined(separator: "\n")
    }
}

// MARK: - Help text

extension CommandSpec {
    /// `--help`: the usage lines, then one line (wrapped) per positional and option, then the notes.
    var help: String {
        var lines: [String] = []
        for (index, line) in usage.enumerated() { lines.append((index == 0 ? "usage: " : "       ") + line) }
        for positional in positionals { lines += HelpLayout.entry(positional.name, positional.help) }
        for option in allOptions { lines += HelpLayout.entry(option.synopsis, option.helpText) }
        for paragraph in notes.split(separator: "\n") {
            lines += HelpLayout.wrap(String(paragraph), width: HelpLayout.width, indent: "")
        }
        return lines.joined(separator: "\n")
    }
}

extension CommandSpec.Option {
    /// `-o, --output OUT`, `--overwrite`.
    var synopsis: String {
        let long = "--\(name)" + (value.map { " \($0)" } ?? "")
        return short.map { "-\($0), \(long)" } ?? long
    }

    /// The help with its default and other spellings: `time of the frame [0]`, `… (also --cache-cap-mb)`.
    var helpText: String {
        var text = help
        if let defaultValue { text += " [\(defaultValue)]" }
        if repeatable { text += " (repeatable)" }
        if !aliases.isEmpty { text += " (also " + aliases.map { "--\($0)" }.joined(separator: ", ") + ")" }
        return text
    }
}

/// Two columns: the option at 2, its help at 25 (or `column`), wrapped at 118 with a hanging indent.
enum HelpLayout {
    static let width = 118
    static let column = 25

    static func entry(_ left: String, _ text: String, column: Int = column) -> [String] {
        let head = "  " + left
        let indent = String(repeating: " ", count: column)
        if head.count <= column - 2 {
            let padded = head + String(repeating: " ", count: column - head.count)
            var lines = wrap(text, width: width - column, indent: "")
            lines[0] = padded + lines[0]
            return [lines[0]] + lines.dropFirst().map { indent + $0 }
        }
        return [head] + wrap(text, width: width - column, indent: "").map { indent + $0 }
    }

    /// Words of `text` in lines of at most `width` characters (a longer word has a line of its own).
    static func wrap(_ text: String, width: Int, indent: String) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(indent + line)
                line = String(word)
            }
        }
        lines.append(indent + line)
        return lines
    }
}
