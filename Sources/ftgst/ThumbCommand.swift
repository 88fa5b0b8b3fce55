import FilmtoneGst

/// `ftgst thumb URI [options]`: one thumbnail, printed as one JSON object.
enum ThumbCommand {
    static let help = """
        usage: ftgst thumb URI [options]
          URI                   a path, file:// URI, or http(s):// URL of a video or photo
          --time-ms N           time of the frame [0]; ignored for photos
          --tolerance-ms N      how far the frame may be from the time [2000]; 0 = the exact frame
          --max-width N         [512]   --max-height N   [512]   (scaled down only, aspect kept)
          --format jpeg|png     [jpeg]  --quality 0..1   [0.9, JPEG only]
          --cache-dir DIR       [$XDG_CACHE_HOME/ftgst/thumbnails]
          --cache-name NAME     [thumb-<uuid>]; an existing NAME is returned without decoding
          --cache-max-mb N      [100]; oldest files are evicted past it (also --cache-cap-mb)
          --header 'Name: value'  sent on every HTTP request (repeatable)
          --timeout-ms N        deadline for the whole job [30000]
        prints {"uri":…,"path":…,"width":W,"height":H,"timeMs":T,"format":…,"cached":…}
        """

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(
            words,
            options: [
                "time-ms", "tolerance-ms", "max-width", "max-height", "format", "quality", "cache-dir",
                "cache-name", "cache-max-mb", "header", "timeout-ms",
            ],
            flags: ["help"], aliases: ["cache-cap-mb": "cache-max-mb"])
        if arguments.has("help") {
            print(help)
            return
        }
        guard arguments.positionals.count == 1, let source = arguments.positionals.first else {
            throw usage(arguments.positionals.isEmpty ? "thumb needs a URI" : "thumb takes one URI")
        }
        var options = ThumbnailOptions(source: source)
        if let value = try arguments.int("time-ms") { options.timeMilliseconds = value }
        if let value = try arguments.int("tolerance-ms") { options.toleranceMilliseconds = value }
        if let value = try arguments.int("max-width") { options.maxWidth = Int(clamping: value) }
        if let value = try arguments.int("max-height") { options.maxHeight = Int(clamping: value) }
        if let value = arguments.string("format") { options.format = value }
        if let value = try arguments.double("quality") { options.quality = value }
        if let value = arguments.string("cache-dir") { options.cacheDirectory = value }
        if let value = arguments.string("cache-name") { options.cacheName = value }
        if let value = try arguments.int("cache-max-mb") { options.cacheCapMegabytes = value }
        if let value = try arguments.int("timeout-ms") { options.timeoutMilliseconds = value }
        options.headers = arguments.all("header")

        let result = try await Thumbnails.make(options)
        print(result.json.serialized)
    }
}
