import FilmtoneGst
import Foundation

/// `ftgst save FILE [--library DIR]`: copies an export into the videos or pictures library, at most once per content.
enum SaveCommand {
    static let spec = CommandSpec(
        path: ["save"], synopsis: "save FILE [--library DIR]",
        summary: "copy an export into the videos or pictures library, once",
        usage: ["ftgst save FILE [--library DIR] [--lock-timeout-ms N]"],
        positionals: [
            .init(name: "FILE", help: "the file to save (a regular file), e.g. an export", completion: .anyFile)
        ],
        options: [
            .init(
                name: "library", value: "DIR", help: "the library folder",
                defaultValue:
                    "by FILE's content: a video $(xdg-user-dir VIDEOS)/Filmtone, else ~/Videos/Filmtone; audio MUSIC's; a picture or anything else PICTURES's",
                completion: .folder),
            .init(
                name: "lock-timeout-ms", value: "N", help: "how long to wait for the library's lock",
                defaultValue: "$FTGST_LIBRARY_LOCK_TIMEOUT_MS, else 30000"),
        ],
        notes: #"""
            copies FILE into the library atomically, keeping its name (name-2.ext… on a collision), and prints {"path":…,"sha256":…}; content already in the library (same SHA-256, per the library's .ftgst-ledger.json) is [SAVE_FAILED] already saved as PATH
            """#)

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return
        }
        guard arguments.positionals.count == 1, let file = arguments.positionals.first else {
            throw usage(arguments.positionals.isEmpty ? "save needs a FILE" : "save takes one FILE")
        }
        var options = SaveOptions(file: file)
        options.library = arguments.string("library")
        // The option wins over the environment, which stays for scripts that set it.
        if let value = try arguments.positiveMilliseconds("lock-timeout-ms")
            ?? environmentMilliseconds("FTGST_LIBRARY_LOCK_TIMEOUT_MS")
        {
            options.lockTimeoutMilliseconds = value
        }
        let result = try await saveToLibrary(options)
        print(result.json.serialized)
    }
}

/// A positive whole number of milliseconds from the environment; nil when unset. Anything else is
/// `INVALID_ARGUMENT`, so a typo never silently falls back to the default.
func environmentMilliseconds(_ name: String) throws -> Int64? {
    guard let text = ProcessInfo.processInfo.environment[name] else { return nil }
    guard let value = Int64(text), value > 0 else {
        throw usage("\(name) must be a positive whole number, got '\(text)'")
    }
    return value
}
