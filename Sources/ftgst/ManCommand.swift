/// `ftgst man`: prints the ftgst(1) man page in roff (`ftgst man | man -l -`).
enum ManCommand {
    static let spec = CommandSpec(
        path: ["man"], synopsis: "man", summary: "print the ftgst(1) man page (roff)", usage: ["ftgst man"],
        notes: "prints the man page, made from the same tables as --help: ftgst man | man -l -", hidden: true)

    static func run(_ words: [String]) throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return
        }
        guard arguments.positionals.isEmpty else { throw usage("man takes no arguments") }
        print(ManPage.text, terminator: "")
    }
}

/// `ftgst completion bash|zsh|fish`: prints the shell's completion script for ftgst.
enum CompletionCommand {
    static let spec = CommandSpec(
        path: ["completion"], synopsis: "completion SHELL",
        summary: "print the completion script for bash, zsh or fish",
        usage: ["ftgst completion bash|zsh|fish"],
        positionals: [
            .init(
                name: "SHELL", help: "bash, zsh or fish",
                completion: .choices(Completions.Shell.allCases.map(\.rawValue)))
        ],
        notes: "prints the script, made from the same tables as --help: source <(ftgst completion bash)", hidden: true)

    static func run(_ words: [String]) throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return
        }
        guard arguments.positionals.count == 1, let name = arguments.positionals.first else {
            throw usage(
                arguments.positionals.isEmpty
                    ? "completion needs a SHELL (bash, zsh or fish)" : "completion takes one SHELL (bash, zsh or fish)")
        }
        guard let shell = Completions.Shell(rawValue: name) else {
            throw usage("completion: unknown shell '\(name)' (bash, zsh or fish)")
        }
        print(Completions.script(shell), terminator: "")
    }
}
