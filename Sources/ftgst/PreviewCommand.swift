import FilmtoneGst
import Foundation

/// `ftgst preview SOURCE [options] -o OUT` or `ftgst preview --request FILE.json`: one frame of the current look.
enum PreviewCommand {
    static let help = """
        usage: ftgst preview SOURCE [options] -o OUT
               ftgst preview --request FILE.json [options]
          SOURCE                 a path, file:// URI, or http(s):// URL of a video or photo
          -o, --output OUT       the image to write (atomically: nothing is left there on failure); its
                                 extension must be .png, .jpg or .jpeg (or none)
          --input-lut FILE       .cube applied first (e.g. log to display)
          --creative-lut FILE    .cube with the look, applied second
          --intensity X          0..1, how much of the creative look [1]
          --interpolation M      tetrahedral|trilinear|nearest [tetrahedral]
          --time-ms N            [0]    --tolerance-ms N  [0: the frame on screen at that time]
          --max-width N          [1280] --max-height N    [1280]
          --format png|jpeg      [OUT's extension: .png, .jpg/.jpeg; png without one]
          --quality 0..1         [0.9, JPEG only]
          --header 'Name: value' (repeatable)    --timeout-ms N  [30000]
          --mezzanine auto|off   [auto] read the source's mezzanine when a ready one exists (never builds one)
          --mezzanine-dir DIR    where mezzanines are [$XDG_CACHE_HOME/ftgst/mezzanines]
          --request FILE.json    the same fields as JSON (source, output, headers, inputLut, creativeLut,
                                 intensity, interpolation, timeMs, toleranceMs, maxWidth, maxHeight, format,
                                 quality, timeoutMs, mezzanine, mezzanineDir); options given on the command
                                 line override it
        prints {"path":…,"width":W,"height":H,"timeMs":T,"renderMs":R,"mezzanine":true|false}
        """

    static func run(_ words: [String]) async throws {
        // `-o` is the one short option; it means --output.
        let normalized = words.map { $0 == "-o" ? "--output" : $0 }
        let arguments = try Arguments(
            normalized,
            options: [
                "output", "input-lut", "creative-lut", "intensity", "interpolation", "time-ms", "tolerance-ms",
                "max-width", "max-height", "format", "quality", "header", "timeout-ms", "request",
                "mezzanine", "mezzanine-dir",
            ],
            flags: ["help"])
        if arguments.has("help") {
            print(help)
            return
        }
        var options: PreviewOptions
        if let requestPath = arguments.string("request") {
            guard arguments.positionals.isEmpty else {
                throw usage("give the source in the request or as SOURCE, not both")
            }
            guard let data = FileManager.default.contents(atPath: requestPath) else {
                throw FilmtoneError(.fileNotFound, "no such request file: \(requestPath)")
            }
            options = try PreviewOptions.fromJSON(data)
        } else {
            guard arguments.positionals.count == 1, let source = arguments.positionals.first else {
                throw usage(
                    arguments.positionals.isEmpty ? "preview needs a SOURCE (or --request)" : "preview takes one SOURCE"
                )
            }
            options = PreviewOptions(source: source)
        }
        if let value = arguments.string("output") { options.output = value }
        if let value = arguments.string("input-lut") { options.inputLUT = value }
        if let value = arguments.string("creative-lut") { options.creativeLUT = value }
        if let value = try arguments.double("intensity") { options.intensity = value }
        if let value = arguments.string("interpolation") { options.interpolation = value }
        if let value = try arguments.int("time-ms") { options.timeMilliseconds = value }
        if let value = try arguments.int("tolerance-ms") { options.toleranceMilliseconds = value }
        if let value = try arguments.int("max-width") { options.maxWidth = Int(clamping: value) }
        if let value = try arguments.int("max-height") { options.maxHeight = Int(clamping: value) }
        if let value = arguments.string("format") { options.format = value }
        if let value = try arguments.double("quality") { options.quality = value }
        if let value = try arguments.int("timeout-ms") { options.timeoutMilliseconds = value }
        if let value = arguments.string("mezzanine") { options.mezzanine = value }
        if let value = arguments.string("mezzanine-dir") { options.mezzanineDirectory = value }
        if !arguments.all("header").isEmpty { options.headers = arguments.all("header") }

        let result = try await Previews.render(options)
        print(result.json.serialized)
    }
}
