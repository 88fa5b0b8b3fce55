import FilmtoneGst
import Foundation

/// `ftgst thumb URI [options]`: one thumbnail into the cache (or, with `-o FILE`, into FILE), printed as one JSON
/// object.
enum ThumbCommand {
    static let help = """
        usage: ftgst thumb URI [options]    or    ftgst thumb URI -o FILE [options]
          URI                   a path, file:// URI, or http(s):// URL of a video or photo
          --time-ms N           time of the frame [0]; ignored for photos
          --tolerance-ms N      how far the frame may be from the time [2000]; 0 = the exact frame
          --max-width N         [512]   --max-height N   [512]   (scaled down only, aspect kept)
          --format jpeg|png     [jpeg]  --quality 0..1   [0.9, JPEG only]
          --cache-dir DIR       [$XDG_CACHE_HOME/ftgst/thumbnails]
          --cache-name NAME     [thumb-<uuid>]; an existing NAME made for the same request is returned
                                without decoding (anything else is rebuilt)
          --cache-max-mb N      [100]; its oldest thumbnails are evicted past it, never other files
                                (also --cache-cap-mb)
          -o, --output FILE     write FILE instead (.jpg/.jpeg/.png: the format), not a cache entry
          --header 'Name: value'  sent on every HTTP request (repeatable)
          --timeout-ms N        deadline for the whole job [30000]
        prints {"uri":…,"path":…,"width":W,"height":H,"timeMs":T,"format":…,"cached":…}
        """

    static func run(_ words: [String]) async throws {
        // `-o` is the one short option; it means --output.
        let arguments = try Arguments(
            words.map { $0 == "-o" ? "--output" : $0 },
            options: [
                "time-ms", "tolerance-ms", "max-width", "max-height", "format", "quality", "cache-dir",
                "cache-name", "cache-max-mb", "header", "timeout-ms", "output",
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
        if let value = arguments.string("output") {
            guard arguments.string("cache-max-mb") == nil else {
                throw usage("-o writes a file of its own: it takes no --cache-max-mb")
            }
            // The format comes from FILE's extension unless --format says it (then they must agree).
            if arguments.string("format") == nil {
                options.format = value.lowercased().hasSuffix(".png") ? "png" : "jpeg"
            }
            options.output = value
        }
        options.headers = arguments.all("header")

        // Printed while the file is held: no sibling's eviction can delete it before its path is out.
        try await Thumbnails.withThumbnail(options) { result in
            print(result.json.serialized)
            fflush(nil)  // out before the hold ends
        }
    }
}
