import FilmtoneGst
import Foundation

/// `ftgst preview SOURCE [options] -o OUT` or `ftgst preview --request FILE.json`: one frame of the current look.
enum PreviewCommand {
    static let spec = CommandSpec(
        path: ["preview"], synopsis: "preview SOURCE -o OUT", summary: "one frame with a film look applied",
        usage: ["ftgst preview SOURCE [options] -o OUT", "ftgst preview --request FILE.json [options]"],
        positionals: [
            .init(
                name: "SOURCE", help: "a path, file:// URI, or http(s):// URL of a video or photo", completion: .anyFile
            )
        ],
        options: [
            .init(
                name: "output", short: "o", value: "OUT",
                help:
                    "the image to write (atomically: nothing is left there on failure); its extension must be .png, .jpg or .jpeg (or none)",
                completion: .file(extensions: ["png", "jpg", "jpeg"])),
            .init(
                name: "input-lut", value: "FILE", help: ".cube applied first (e.g. log to display)", completion: .cube),
            .init(name: "creative-lut", value: "FILE", help: ".cube with the look, applied second", completion: .cube),
            .init(name: "intensity", value: "X", help: "0..1, how much of the creative look", defaultValue: "1"),
            .interpolation,
            .init(name: "time-ms", value: "N", help: "time of the frame", defaultValue: "0"),
            .init(
                name: "tolerance-ms", value: "N", help: "how far the frame may be from the time",
                defaultValue: "0: the frame on screen at that time"),
            .toleranceSeconds,
            .init(name: "max-width", value: "N", help: "width of the box (scaled down only)", defaultValue: "1280"),
            .init(name: "max-height", value: "N", help: "height of the box", defaultValue: "1280"),
            .init(
                name: "format", value: "png|jpeg", help: "the image's format",
                defaultValue: "OUT's extension: .png, .jpg/.jpeg; png without one",
                completion: .choices(["png", "jpeg"])),
            .init(name: "quality", value: "0..1", help: "JPEG quality", defaultValue: "0.9, JPEG only"),
            .toneMap,
            .init(name: "header", value: "'Name: value'", help: "sent on every HTTP request", repeatable: true),
            .init(name: "timeout-ms", value: "N", help: "deadline for the whole job", defaultValue: "30000"),
            .init(
                name: "mezzanine", value: "auto|off",
                help: "auto: read the source's mezzanine when a ready one exists (never builds one)",
                defaultValue: "auto",
                completion: .choices(["auto", "off"])),
            .init(
                name: "mezzanine-dir", value: "DIR", help: "where mezzanines are",
                defaultValue: "$XDG_CACHE_HOME/ftgst/mezzanines", completion: .folder),
            .init(
                name: "request", value: "FILE.json",
                help:
                    "the same fields as JSON (source, output, headers, inputLut, creativeLut, intensity, interpolation, timeMs, toleranceMs, maxWidth, maxHeight, format, quality, toneMap, timeoutMs, mezzanine, mezzanineDir); options given on the command line override it",
                completion: .file(extensions: ["json"])),
        ],
        notes: #"prints {"path":…,"width":W,"height":H,"timeMs":T,"renderMs":R,"mezzanine":true|false}"#)

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
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
        if let value = arguments.string("interpolation") { options.interpolation = try Interpolation.parse(value) }
        if let value = try arguments.int("time-ms") { options.timeMilliseconds = value }
        if let value = try arguments.toleranceMilliseconds() { options.toleranceMilliseconds = value }
        if let value = try arguments.int("max-width") { options.maxWidth = Int(clamping: value) }
        if let value = try arguments.int("max-height") { options.maxHeight = Int(clamping: value) }
        if let value = arguments.string("format") { options.format = try ImageFormat.parse(value) }
        if let value = try arguments.double("quality") { options.quality = value }
        if let value = arguments.string("tone-map") { options.toneMap = try ToneMapping.parse(value) }
        if let value = try arguments.int("timeout-ms") { options.timeoutMilliseconds = value }
        if let value = arguments.string("mezzanine") { options.mezzanine = try MezzanineUse.parse(value) }
        if let value = arguments.string("mezzanine-dir") { options.mezzanineDirectory = value }
        if !arguments.all("header").isEmpty { options.headers = arguments.all("header") }

        let result = try await Previews.render(options)
        print(result.json.serialized)
    }
}
