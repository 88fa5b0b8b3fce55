import FilmtoneGst

/// `ftgst mezzanine SOURCE [options]`: builds (or finds) the source's intra-frame mezzanine, one JSON object.
enum MezzanineCommand {
    static let help = """
        usage: ftgst mezzanine SOURCE [options]
          SOURCE                a path, file:// URI, or http(s):// URL of a video
          --max-width N         [1280]  --max-height N   [1280]  (the mezzanine's picture: upright, scaled down only)
          --mezzanine-dir DIR   [$XDG_CACHE_HOME/ftgst/mezzanines] (as preview's; also --cache-dir)
          --cache-max-mb N      [4096]; least recently used mezzanines are evicted past it (also --cache-cap-mb)
          --header 'Name: value'  sent on every HTTP request (repeatable)
          --timeout-ms N        deadline for the whole build [600000]
          --status              only report {"status":"ready"|"stale"|"missing"}; builds nothing
        prints {"path":…,"key":…,"width":W,"height":H,"frames":N,"durationMs":D,"sizeBytes":B,"built":…,"buildMs":T}
        previews of SOURCE (ftgst preview --mezzanine auto, the default) then read it instead of the source
        """

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(
            words, options: ["max-width", "max-height", "mezzanine-dir", "cache-max-mb", "header", "timeout-ms"],
            flags: ["help", "status"], aliases: ["cache-dir": "mezzanine-dir", "cache-cap-mb": "cache-max-mb"])
        if arguments.has("help") {
            print(help)
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
