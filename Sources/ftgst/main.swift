import FilmtoneGst
import Foundation

// ftgst: parse, validate, run; one catch maps every error to `[CODE] message` on stderr and its exit status.

/// Runs one command; returns its exit status when it finishes without an error (0 but for `batch`).
func runCommand(_ words: [String]) async throws -> Int32 {
    guard let command = words.first else { throw usage("no command given (see ftgst --help)") }
    let rest = Array(words.dropFirst())
    switch command {
    case "thumb": try await ThumbCommand.run(rest)
    case "thumbnailer": try await ThumbnailerCommand.run(rest)
    case "storyboard": try await StoryboardCommand.run(rest)
    case "batch": return try await BatchCommand.run(rest)
    case "preview": try await PreviewCommand.run(rest)
    case "lut": try await LUTCommand.run(rest)
    case "probe": try await ProbeCommand.run(rest)
    case "export": try await ExportCommand.run(rest)
    case "presets": try await PresetsCommand.run(rest)
    case "cancel": try await CancelCommand.run(rest)
    case "save": try await SaveCommand.run(rest)
    case "share": try await ShareCommand.run(rest)
    case "mezzanine": try await MezzanineCommand.run(rest)
    case "serve": try await ServeCommand.run(rest)
    case "man": try ManCommand.run(rest)
    case "completion": try CompletionCommand.run(rest)
    case "--version", "version":
        print("ftgst \(FilmtoneVersion.string) (commit \(BuildInfo.commit), \(FilmtoneRuntime.gstreamerVersion))")
    case "--help", "-h", "help": print(Commands.topLevelHelp)
    default:
        let nearest = Arguments.nearest(to: command, among: Set(Commands.names)).map { " (did you mean \($0)?)" } ?? ""
        throw usage("unknown command '\(command)'\(nearest) (see ftgst --help)")
    }
    return 0
}

var status: Int32 = 0
do {
    status = try await runCommand(Array(CommandLine.arguments.dropFirst()))
} catch let error as FilmtoneError {
    FileHandle.standardError.write(Data((error.description + "\n").utf8))
    status = error.code.exitStatus
} catch {
    FileHandle.standardError.write(Data("[INTERNAL] \(error)\n".utf8))
    status = FilmtoneError.Code.internalError.exitStatus
}
// Every job has finished: release GStreamer so its leak tracer, when enabled, reports on a clean state.
FilmtoneRuntime.shutdown()
exit(status)
