import FilmtoneGst
import Foundation

/// `ftgst storyboard SOURCE -o DIR [options]`: JPEG sprite sheets and a WebVTT file of seek-bar previews (issue 13,
/// item 3), one JSON object. A thin shell over `Storyboards.make`.
enum StoryboardCommand {
    static let spec = CommandSpec(
        path: ["storyboard"], synopsis: "storyboard SOURCE -o DIR",
        summary: "sprite sheets and a WebVTT file of seek-bar previews",
        usage: ["ftgst storyboard SOURCE -o DIR [options]"],
        positionals: [
            .init(name: "SOURCE", help: "a path, file:// URI, or http(s):// URL of a video", completion: .anyFile)
        ],
        options: [
            .init(
                name: "output", short: "o", value: "DIR",
                help: "the folder of sheet-001.jpg… and storyboard.vtt (created if missing)", completion: .folder),
            .init(
                name: "max-width", value: "N", help: "tile width (height from the aspect, even; never upscaled)",
                defaultValue: "320", aliases: ["width"]),
            .init(name: "columns", value: "N", help: "tiles across a sheet", defaultValue: "10"),
            .init(name: "rows", value: "N", help: "tiles down a sheet", defaultValue: "10"),
            .init(
                name: "every", value: "SECONDS", help: "one tile every SECONDS (10, 2.5, 2.5s, 1:00)",
                defaultValue: "10"),
            .init(
                name: "tolerance-ms", value: "N",
                help: "how far a tile's frame may be from its time (a keyframe within it stands in); 0 = exact",
                defaultValue: "0"),
            .toleranceSeconds,
            .init(name: "quality", value: "0..1", help: "JPEG quality of the sheets", defaultValue: "0.9"),
            .toneMap,
            .init(name: "header", value: "'Name: value'", help: "sent on every HTTP request", repeatable: true),
            .init(name: "timeout-ms", value: "N", help: "deadline for the whole job", defaultValue: "600000"),
        ],
        notes: #"""
            prints {"directory":…,"vtt":…,"sheets":[{"path":…,"width":W,"height":H,"tiles":N}…],"tiles":N,…}
            cues cover the whole duration: 00:00:00.000 --> 00:00:10.000 then sheet-001.jpg#xywh=x,y,w,h
            """#)

    static func run(_ words: [String]) async throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return
        }
        guard arguments.positionals.count == 1, let source = arguments.positionals.first else {
            throw usage(arguments.positionals.isEmpty ? "storyboard needs a SOURCE" : "storyboard takes one SOURCE")
        }
        guard let directory = arguments.string("output") else { throw usage("storyboard needs -o DIR") }
        var options = StoryboardOptions(source: source, outputDirectory: directory)
        if let value = try arguments.int("max-width") { options.tileWidth = Int(clamping: value) }
        if let value = try arguments.int("columns") { options.columns = Int(clamping: value) }
        if let value = try arguments.int("rows") { options.rows = Int(clamping: value) }
        if let value = arguments.string("every") {
            options.intervalMilliseconds = try StoryboardOptions.milliseconds(seconds: value, option: "--every")
        }
        if let value = try arguments.toleranceMilliseconds() { options.toleranceMilliseconds = value }
        if let value = try arguments.double("quality") { options.quality = value }
        if let value = arguments.string("tone-map") { options.toneMap = try ToneMapping.parse(value) }
        if let value = try arguments.int("timeout-ms") { options.timeoutMilliseconds = value }
        options.headers = arguments.all("header")
        print(try await Storyboards.make(options).json.serialized)
    }
}
