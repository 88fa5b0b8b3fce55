import FilmtoneGst

/// `ftgst lut inspect FILE`: parses a `.cube` file and describes it as one JSON object.
enum LUTCommand {
    static let spec = CommandSpec(
        path: ["lut", "inspect"], synopsis: "lut inspect FILE", summary: "parse a .cube LUT and describe it as JSON",
        usage: ["ftgst lut inspect FILE"],
        positionals: [
            .init(
                name: "FILE", help: "a .cube LUT (Adobe Cube 1.0 or Resolve: 1D, 3D, or 1D shaper + 3D)",
                completion: .cube)
        ],
        notes: #"""
            prints {"title":…,"kind":"3d"|"1d"|"1d+3d","size":N,["shaperSize":N,]"domainMin":[r,g,b],"domainMax":[r,g,b]}
            (for 1d+3d, size and domain are the 3D table's); a file that does not parse is [LUT_INVALID] file:line: reason
            """#)

    static func run(_ words: [String]) async throws {
        guard let subcommand = words.first else { throw usage("lut needs a subcommand (see ftgst lut --help)") }
        switch subcommand {
        case "inspect": try inspect(Array(words.dropFirst()))
        case "--help", "-h", "help": print(spec.help)
        default: throw usage("unknown lut subcommand '\(subcommand)' (see ftgst lut --help)")
        }
    }

    private static func inspect(_ words: [String]) throws {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return
        }
        guard arguments.positionals.count == 1, let path = arguments.positionals.first else {
            throw usage(arguments.positionals.isEmpty ? "lut inspect needs a FILE" : "lut inspect takes one FILE")
        }
        let lut = try CubeLUT.load(path: path)
        print(lut.inspection.serialized)
    }
}
