import FilmtoneGst

/// `ftgst thumbnailer -i INPUT -o OUTPUT [-s SIZE]`: the freedesktop thumbnailer (`Exec=` of ftgst.thumbnailer);
/// `ftgst thumbnailer -i INPUT --cache [-s SIZE]`: the shared thumbnail cache written directly.
enum ThumbnailerCommand {
    static let spec = CommandSpec(
        path: ["thumbnailer"], synopsis: "thumbnailer -i INPUT (-o OUTPUT | --cache) [-s SIZE]",
        summary: "the freedesktop thumbnailer: a PNG with Thumb::URI and Thumb::MTime",
        usage: ["ftgst thumbnailer -i INPUT -o OUTPUT [-s SIZE]", "ftgst thumbnailer -i INPUT --cache [-s SIZE]"],
        positionals: [],
        options: [
            .init(
                name: "input", short: "i", value: "INPUT", help: "a local video or photo: a path or file:// URI",
                completion: .anyFile),
            .init(
                name: "output", short: "o", value: "OUTPUT", help: "the PNG to write (what a thumbnail factory names)",
                completion: .anyFile),
            .init(
                name: "size", short: "s", value: "SIZE", help: "longest side in pixels, never upscaled (1…16384)",
                defaultValue: "128"),
            .flag(
                "cache",
                "write the shared cache instead: thumbnails/normal (SIZE 128), large (256), x-large (512) or xx-large (1024) under $XDG_CACHE_HOME"
            ),
            .init(name: "timeout-ms", value: "N", help: "deadline for the picture", defaultValue: "30000"),
        ],
        notes: #"""
            the frame is the one --time auto picks (a keyframe of the first third that is not black, white or flat); no network; -o prints nothing; --cache prints {"path","uri","width","height","timeMs","cached"}, and a valid entry (same Thumb::URI and Thumb::MTime) is kept, and a file that cannot be decoded gets the spec's fail/ftgst-VERSION/ entry
            """#)

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return
        }
        guard let input = arguments.string("input") else { throw usage("thumbnailer needs -i INPUT") }
        let size = try arguments.int("size") ?? 128
        guard (1...16384).contains(size) else { throw usage("-s must be 1…16384") }
        let timeout = try arguments.positiveMilliseconds("timeout-ms") ?? 30_000
        let result: DesktopThumbnailer.Result
        switch (arguments.string("output"), arguments.has("cache")) {
        case (let output?, false):
            // Silent, as desktop thumbnailers are: the factory's stdout is the file manager's.
            _ = try await DesktopThumbnailer.write(
                input: input, output: output, size: Int(size), timeoutMilliseconds: timeout)
            return
        case (nil, true):
            guard let folder = DesktopThumbnailer.CacheSize(pixels: Int(size)) else {
                throw usage("--cache takes -s 128, 256, 512 or 1024 (normal, large, x-large, xx-large)")
            }
            result = try await DesktopThumbnailer.cache(input: input, size: folder, timeoutMilliseconds: timeout)
        default:
            throw usage("thumbnailer needs one of -o OUTPUT and --cache")
        }
        print(result.json.serialized)
    }
}
