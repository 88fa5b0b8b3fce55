import FilmtoneGst

/// `ftgst probe URI [--header 'Name: value']… [--timeout-ms N]`: describes a source as one JSON object.
enum ProbeCommand {
    static let help = """
        usage: ftgst probe URI [options]
          URI                   a path, file:// URI, or http(s):// URL of a video, photo or audio file
          --header 'Name: value'  sent on every HTTP request (repeatable)
          --timeout-ms N        deadline for the whole job [30000]
        prints {"container":…,"isImage":…,"durationMs":…,"video":{"codec":…,"profile":…,"width":…,"height":…,
          "displayWidth":…,"displayHeight":…,"rotation":…,"pixelAspectRatio":…,"frameRate":…,"frameCount":…,
          "bitDepth":…,"chromaFormat":…,"colorimetry":{"primaries":…,"transfer":…,"matrix":…,"range":…},
          "hdr":…},"audio":{"codec":…,"channels":…,"sampleRate":…},"inputTransform":{"policy":…,"reason":…}}
        """

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, options: ["header", "timeout-ms"], flags: ["help"])
        if arguments.has("help") {
            print(help)
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
