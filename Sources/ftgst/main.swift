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
    case "pick": return try await PickCommand.run(rest)
    case "desktop": try await DesktopCommand.run(rest)
    case "mezzanine": try await MezzanineCommand.run(rest)
    case "serve": try await ServeCommand.run(rest)
    case "studio": try await StudioCommand.run(rest)
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

/// Ctrl-C or SIGTERM outside `export` and `serve` (which stop their work and clean up themselves): the files this
/// process was writing are removed (`StagedFile.removeAllInFlight`: only names it created), then the signal ends
/// it as it would have (the shell reports 130 or 143). A killed `thumb --count 1000` or `batch` left its `.part`
/// files behind (issue 28). The sources are kept for the process's life.
func removeStagedFilesOnSignals() -> [DispatchSourceSignal] {
    [SIGINT, SIGTERM].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler {
            stoppingBySignal.set()  // the work, failing on its removed files, must not report that as its error
            StagedFile.removeAllInFlight(stopping: true)
            signal(number, SIG_DFL)
            kill(getpid(), number)  // not raise: this dispatch thread blocks signals
        }
        source.resume()
        return source
    }
}

let stoppingBySignal = AtomicFlag()

/// The end of the process: its error line and status, unless a signal is ending it (then that signal does).
func finish(_ status: Int32, message: String?) -> Never {
    while stoppingBySignal.isSet() { Thread.sleep(forTimeInterval: 1) }
    if let message { FileHandle.standardError.write(Data((message + "\n").utf8)) }
    // Every job has finished: release GStreamer so its leak tracer, when enabled, reports on a clean state.
    FilmtoneRuntime.shutdown()
    exit(status)
}

let signalSources =
    ["export", "serve", "studio"].contains(CommandLine.arguments.dropFirst().first ?? "")
    ? [] : removeStagedFilesOnSignals()

do {
    let status = try await runCommand(Array(CommandLine.arguments.dropFirst()))
    withExtendedLifetime(signalSources) {}
    finish(status, message: nil)
} catch let error as FilmtoneError {
    finish(error.code.exitStatus, message: error.description)
} catch {
    finish(FilmtoneError.Code.internalError.exitStatus, message: "[INTERNAL] \(error)")
}
