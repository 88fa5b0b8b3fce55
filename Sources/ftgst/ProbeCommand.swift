import FilmtoneGst

/// `ftgst probe URI [--header 'Name: value']… [--timeout-ms N]`: describes a source as one JSON object.
enum ProbeCommand {
    static let spec = CommandSpec(
        path: ["probe"], synopsis: "probe URI [options]", summary: "describe a video, photo or audio source as JSON",
        usage: ["ftgst probe URI [options]"],
        positionals: [
            .init(
                name: "URI", help: "a path, file:// URI, or http(s):// URL of a video, photo or audio file",
                completion: .anyFile)
        ],
        options: [
            .init(name: "header", value: "'Name: value'", help: "sent on every HTTP request", repeatable: true),
            .init(name: "timeout-ms", value: "N", help: "deadline for the whole job", defaultValue: "30000"),
        ],
        notes: #"""
            prints {"container":…,"isImage":…,"durationMs":…,"video":{"codec":…,"profile":…,"width":…,"height":…,"displayWidth":…,"displayHeight":…,"rotation":…,"pixelAspectRatio":…,"frameRate":…,"frameCount":…,"bitDepth":…,"chromaFormat":…,"colorimetry":{"primaries":…,"transfer":…,"matrix":…,"range":…},"hdr":…},"audio":{"codec":…,"channels":…,"sampleRate":…},"inputTransform":{"policy":…,"reason":…,"applied":…}}
            """#)

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return
        }
        guard arguments.positionals.count == 1, let source = arguments.positionals.first else {
            throw usage(arguments.positionals.isEmpty ? "probe needs a URI" : "probe takes one URI")
        }
        var options = ProbeOptions(source: source)
        if let value = try arguments.int("timeout-ms") { options.timeoutMilliseconds = value }
        options.headers = arguments.all("header")

        let report = try await probeSource(options)
        print(report.json.serialized)
    }
}
