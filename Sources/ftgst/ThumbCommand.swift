import FilmtoneGst
import Foundation

/// `ftgst thumb URI [options]`: one thumbnail into the cache (or, with `-o FILE`, into FILE), printed as one JSON
/// object.
enum ThumbCommand {
    static let spec = CommandSpec(
        path: ["thumb"], synopsis: "thumb URI [options]", summary: "extract a thumbnail from a video or photo",
        usage: ["ftgst thumb URI [options]", "ftgst thumb URI -o FILE [options]"],
        positionals: [
            .init(name: "URI", help: "a path, file:// URI, or http(s):// URL of a video or photo", completion: .anyFile)
        ],
        options: [
            .init(
                name: "time-ms", value: "N[,N…]",
                help: "time of the frame in ms; several, comma-separated, make one picture each", defaultValue: "0"),
            .init(
                name: "time", value: "T[,T…]",
                help: "times as 12.5s, 1:02.5, 1:00:02.5 or 10% (instead of --time-ms); auto: a frame worth showing"),
            .init(name: "count", value: "N", help: "N pictures at the middles of N equal parts of the duration"),
            .init(
                name: "tolerance-ms", value: "N", help: "how far the frame may be from the time; 0 = the exact frame",
                defaultValue: "2000"),
            .toleranceSeconds,
            .init(
                name: "max-width", value: "N", help: "width of the box (scaled down only, aspect kept)",
                defaultValue: "512"),
            .init(name: "max-height", value: "N", help: "height of the box", defaultValue: "512"),
            .init(
                name: "format", value: "jpeg|png", help: "the image's format", defaultValue: "jpeg",
                completion: .choices(["jpeg", "png"])),
            .init(name: "quality", value: "0..1", help: "JPEG quality", defaultValue: "0.9, JPEG only"),
            .toneMap,
            .init(
                name: "cache-dir", value: "DIR", help: "the cache folder",
                defaultValue: "$XDG_CACHE_HOME/ftgst/thumbnails",
                completion: .folder),
            .init(
                name: "cache-name", value: "NAME",
                help:
                    "the file's name; an existing NAME made for the same request is returned without decoding (anything else is rebuilt)",
                defaultValue: "thumb-<uuid>"),
            .init(
                name: "cache-max-mb", value: "N",
                help: "size cap of the cache: its oldest thumbnails are evicted past it, never other files",
                defaultValue: "100", aliases: ["cache-cap-mb"]),
            .init(
                name: "output", short: "o", value: "FILE",
                help: "write FILE instead (.jpg/.jpeg/.png: the format), not a cache entry",
                completion: .file(extensions: ["jpg", "jpeg", "png"])),
            .init(name: "header", value: "'Name: value'", help: "sent on every HTTP request", repeatable: true),
            .init(name: "timeout-ms", value: "N", help: "deadline for the whole job", defaultValue: "30000"),
        ],
        notes:
            #"prints {"uri":…,"path":…,"width":W,"height":H,"timeMs":T,"format":…,"cached":…}; several times print one line per picture, in the order given, adding "requestedMs","frame","sourceOpens","seeks", and need -o or --cache-name with one index (%d, %03d)"#
    )

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return
        }
        guard arguments.positionals.count == 1, let source = arguments.positionals.first else {
            throw usage(arguments.positionals.isEmpty ? "thumb needs a URI" : "thumb takes one URI")
        }
        var options = ThumbnailOptions(source: source)
        // Several times (issue 13, item 2): one pipeline, one picture each. One plain `--time-ms N` is today's path.
        var times: [ThumbnailTime]? = nil
        let given = ["time-ms", "time", "count"].filter { arguments.string($0) != nil }
        guard given.count <= 1 else {
            throw usage(
                "give one of --time-ms, --time and --count, not " + given.map { "--" + $0 }.joined(separator: " and "))
        }
        if let value = arguments.string("time-ms"), value.contains(",") {
            times = try ThumbnailTime.parseMilliseconds(list: value)
        } else if let value = try arguments.int("time-ms") {
            options.timeMilliseconds = value
        }
        if let value = arguments.string("time") { times = try ThumbnailTime.parse(list: value) }
        if let value = try arguments.int("count") {
            times = try ThumbnailTime.evenlySpaced(count: Int(clamping: value))
        }
        if let value = try arguments.toleranceMilliseconds() { options.toleranceMilliseconds = value }
        if let value = try arguments.int("max-width") { options.maxWidth = Int(clamping: value) }
        if let value = try arguments.int("max-height") { options.maxHeight = Int(clamping: value) }
        if let value = arguments.string("format") { options.format = try ImageFormat.parse(value) }
        if let value = try arguments.double("quality") { options.quality = value }
        if let value = arguments.string("tone-map") { options.toneMap = try ToneMapping.parse(value) }
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
                options.format = value.lowercased().hasSuffix(".png") ? .png : .jpeg
            }
            options.output = value
        }
        options.headers = arguments.all("header")
        // One `--time-ms N` with a name holding an index (`-o t-%03d.jpg`) is numbered 1, as one `--time 1s` is:
        // not a file literally named `t-%03d.jpg`.
        if times == nil, let name = options.output ?? options.cacheName,
            ThumbnailSet.name(pattern: name, index: 1) != nil
        {
            times = [.milliseconds(options.timeMilliseconds)]
        }

        if let times {
            try await ThumbnailSet.withPictures(options, times: times) { pictures in
                for picture in pictures { print(picture.json.serialized) }
                fflush(nil)
            }
            return
        }
        // Printed while the file is held: no sibling's eviction can delete it before its path is out.
        try await Thumbnails.withThumbnail(options) { result in
            print(result.json.serialized)
            fflush(nil)  // out before the hold ends
        }
    }
}
