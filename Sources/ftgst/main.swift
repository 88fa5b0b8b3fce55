import FilmtoneGst
import Foundation

// ftgst: parse, validate, run; one catch maps every error to `[CODE] message` on stderr and its exit status.

let topLevelHelp = """
    ftgst \(FilmtoneVersion.string): thumbnails, looks and exports on GStreamer
    usage: ftgst COMMAND [options]
      thumb URI [options]   extract a thumbnail from a video or photo (ftgst thumb --help)
      preview SOURCE -o OUT one frame with a film look applied (ftgst preview --help)
      lut inspect FILE      parse a .cube LUT and describe it as JSON (ftgst lut --help)
      probe URI [options]   describe a video, photo or audio source as JSON (ftgst probe --help)
      export SOURCE -o OUT  decode, apply the look, encode with a preset (ftgst export --help)
      presets               list the export presets
      cancel [--workspace DIR]  stop the running export
      save FILE [--library DIR]  copy an export into the videos or pictures library, once (ftgst save --help)
      share FILE [--print]  hand a file to the desktop's open/share handler (ftgst share --help)
      mezzanine SOURCE      build an intra-frame copy of a video for fast previews (ftgst mezzanine --help)
      --version             print versions
    Errors are one line on stderr, `[CODE] message`, with an exit status per code (docs/CLI.md).
    """

func runCommand(_ words: [String]) async throws {
    guard let command = words.first else { throw usage("no command given (see ftgst --help)") }
    let rest = Array(words.dropFirst())
    switch command {
    case "thumb": try await ThumbCommand.run(rest)
    case "preview": try await PreviewCommand.run(rest)
    case "lut": try await LUTCommand.run(rest)
    case "probe": try await ProbeCommand.run(rest)
    case "export": try await ExportCommand.run(rest)
    case "presets": try await PresetsCommand.run(rest)
    case "cancel": try await CancelCommand.run(rest)
    case "save": try await SaveCommand.run(rest)
    case "share": try await ShareCommand.run(rest)
    case "mezzanine": try await MezzanineCommand.run(rest)
    case "--version", "version":
        print("ftgst \(FilmtoneVersion.string) (commit \(BuildInfo.commit), \(FilmtoneRuntime.gstreamerVersion))")
    case "--help", "-h", "help": print(topLevelHelp)
    default:
        let commands: Set<String> = [
            "thumb", "preview", "lut", "probe", "export", "presets", "cancel", "save", "share", "mezzanine",
        ]
        let nearest = Arguments.nearest(to: command, among: commands).map { " (did you mean \($0)?)" } ?? ""
        throw usage("unknown command '\(command)'\(nearest) (see ftgst --help)")
    }
}

var status: Int32 = 0
do {
    try await runCommand(Array(CommandLine.arguments.dropFirst()))
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
