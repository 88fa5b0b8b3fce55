import FilmtoneGst

/// `ftgst mezzanine SOURCE [options]`: builds (or finds) the source's intra-frame mezzanine, one JSON object.
enum MezzanineCommand {
    static let spec = CommandSpec(
        path: ["mezzanine"], synopsis: "mezzanine SOURCE",
        summary: "build an intra-frame copy of a video for fast previews",
        usage: ["ftgst mezzanine SOURCE [options]"],
        positionals: [
            .init(name: "SOURCE", help: "a path, file:// URI, or http(s):// URL of a video", completion: .anyFile)
        ],
        options: [
            .init(
                name: "max-width", value: "N", help: "width of the mezzanine's picture (upright, scaled down only)",
                defaultValue: "1280"),
            .init(name: "max-height", value: "N", help: "height of the mezzanine's picture", defaultValue: "1280"),
            .init(
                name: "mezzanine-dir", value: "DIR", help: "the mezzanine folder (as preview's)",
                defaultValue: "$XDG_CACHE_HOME/ftgst/mezzanines", aliases: ["cache-dir"], completion: .folder),
            .init(
                name: "cache-max-mb", value: "N", help: "least recently used mezzanines are evicted past it",
                defaultValue: "4096", aliases: ["cache-cap-mb"]),
            .init(name: "header", value: "'Name: value'", help: "sent on every HTTP request", repeatable: true),
            .init(name: "timeout-ms", value: "N", help: "deadline for the whole build", defaultValue: "600000"),
            .flag("status", #"only report {"status":"ready"|"stale"|"missing"}; builds nothing"#),
        ],
        notes: #"""
            prints {"path":…,"key":…,"width":W,"height":H,"frames":N,"durationMs":D,"sizeBytes":B,"built":…,"buildMs":T}
            previews of SOURCE (ftgst preview --mezzanine auto, the default) then read it instead of the source
            """#)

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return
        }
        guard arguments.positionals.count == 1, let source = arguments.positionals.first else {
            throw usage(arguments.positionals.isEmpty ? "mezzanine needs a SOURCE" : "mezzanine takes one SOURCE")
        }
        var options = MezzanineOptions(source: source)
        if let value = try arguments.int("max-width") { options.maxWidth = Int(clamping: value) }
        if let value = try arguments.int("max-height") { options.maxHeight = Int(clamping: value) }
        if let value = arguments.string("mezzanine-dir") { options.cacheDirectory = value }
        if let value = try arguments.int("cache-max-mb") { options.cacheCapMegabytes = value }
        if let value = try arguments.int("timeout-ms") { options.timeoutMilliseconds = value }
        options.headers = arguments.all("header")

        if arguments.has("status") {
            let status = try Mezzanines.status(
                source: options.source, maxWidth: options.maxWidth,
                maxHeight: options.maxHeight, cacheDirectory: options.cacheDirectory)
            print(JSONValue.object([("status", .string(status.rawValue))]).serialized)
            return
        }
        let result = try await Mezzanines.prepare(options)
        print(result.json.serialized)
    }
}
