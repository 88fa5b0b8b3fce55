import FilmtoneGst
import Foundation

/// `ftgst(1)` in roff (man(7) macros and a tbl(1) table), from the command specs: a section per command with its
/// options, the exit statuses from `FilmtoneError.Code`, the environment and the files ftgst reads and writes.
/// `ftgst man` prints it; `make man` writes it to .build/share/man/man1/ftgst.1.
enum ManPage {
    static var text: String {
        var out: [String] = [
            #"'\" t"#,  // tells man(1) to run tbl(1) for the EXIT STATUS table
            #".TH FTGST 1 "" "ftgst \#(FilmtoneVersion.string)" "User Commands""#,
            ".ad l",  // ragged right: JSON shapes and paths leave nothing to stretch a justified line with
            ".nh",  // no hyphenation: INVALID_ARGUMENT, --timeout-ms and paths stay whole
            ".SH NAME",
            #"ftgst \- thumbnails, looks and exports on GStreamer"#,
            ".SH SYNOPSIS",
        ]
        for command in Commands.all {
            for line in command.usage { out += [".br", roff(line)] }
        }
        out += [".br", roff("ftgst --version"), ".br", roff("ftgst --help")]
        out += [".SH DESCRIPTION"] + paragraphs(description)
        out += [".SH OPTIONS"] + paragraphs("Before a command:")
        for option in Commands.topLevelOptions { out += entry(option) }
        out += paragraphs(parsingRules)
        out += [".SH COMMANDS"]
        for command in Commands.all { out += section(command) }
        out += [".SH EXIT STATUS"] + paragraphs(exitStatusIntroduction) + exitStatusTable
        out += [".SH ENVIRONMENT"]
        for (name, text) in environment { out += [".TP", "\\fB\(roff(name))\\fR", roff(sentence(text))] }
        out += [".SH FILES"]
        for (path, text) in files { out += [".TP", "\\fI\(roff(path))\\fR", roff(sentence(text))] }
        out += [".SH EXAMPLES"]
        for (text, command) in examples {
            out += [".PP", roff(text), ".PP", ".RS", ".nf", roff(command), ".fi", ".RE"]
        }
        out += [
            ".SH SEE ALSO",
            #"\fBgst\-launch\-1.0\fR(1), \fBgst\-inspect\-1.0\fR(1), \fBxdg\-user\-dir\fR(1), \fBxdg\-open\fR(1)"#,
            ".PP",
            roff("docs/CLI.md in the source tree has the whole contract: every field, default and error."),
        ]
        return out.joined(separator: "\n") + "\n"
    }

    // MARK: - Parts

    /// `.SS ftgst thumb`: what it does, its usage, positionals and options (with defaults and other spellings),
    /// then the notes.
    static func section(_ command: CommandSpec) -> [String] {
        var out = [#".SS "ftgst \#(command.name)""#] + paragraphs(sentence(command.summary))
        out += [".PP", ".nf"] + command.usage.map(roff) + [".fi"]
        for positional in command.positionals {
            out += [".TP", "\\fI\(roff(positional.name))\\fR", roff(sentence(positional.help))]
        }
        for option in command.allOptions { out += entry(option) }
        out += paragraphs(command.notes)
        return out
    }

    /// `.TP` with `\fB--name\fR \fIVALUE\fR`, the help, the default and the other spellings.
    static func entry(_ option: CommandSpec.Option) -> [String] {
        var tag = option.short.map { "\\fB\\-\($0)\\fR, " } ?? ""
        tag += "\\fB\(roff("--" + option.name))\\fR"
        if let value = option.value { tag += " \\fI\(roff(value))\\fR" }
        var text = sentence(option.help)
        if let value = option.defaultValue { text += " Default: \(value)." }
        if option.repeatable { text += " Repeatable." }
        if !option.aliases.isEmpty { text += " Also " + option.aliases.map { "--\($0)" }.joined(separator: ", ") + "." }
        return [".TP", tag, roff(text)]
    }

    /// Every `FilmtoneError.Code` with its exit status, ordered by status.
    static var exitStatusTable: [String] {
        var out = [".TS", "l l lx.", "\\fBstatus\\fR\t\\fBcode\\fR\t\\fBwhen\\fR", "0\t\t" + roff("success")]
        for code in FilmtoneError.Code.allCases.sorted(by: { $0.exitStatus < $1.exitStatus }) {
            out += ["\(code.exitStatus)\t\(roff(code.rawValue))\tT{", roff(ExitStatuses.summary(code)), "T}"]
        }
        return out + [".TE"]
    }

    /// Lines of `text` as `.PP` paragraphs.
    static func paragraphs(_ text: String) -> [String] {
        text.split(separator: "\n").flatMap { [".PP", roff(sentence(String($0)))] }
    }

    /// `text` as a sentence: a capital (unless it starts with a value: `auto|bar`) and a full stop.
    static func sentence(_ text: String) -> String {
        guard let first = text.first else { return text }
        let firstWord = text.prefix { $0 != " " }
        let capital = firstWord.contains("|") ? text : first.uppercased() + text.dropFirst()
        return capital.hasSuffix(".") ? capital : capital + "."
    }

    /// The characters outside ASCII the texts use, as groff's named characters (or plain ASCII), which every output
    /// device has: `man` in a C locale renders for the ascii device, which has no glyph for `\[u2026]`.
    private static let named: [UInt32: String] = [
        0x2026: "...", 0x2014: "\\(em", 0x2013: "\\(en", 0x2192: "\\(->", 0x2190: "\\(<-", 0x00D7: "\\(mu",
        0x2264: "\\(<=", 0x2265: "\\(>=", 0x2018: "\\(oq", 0x2019: "\\(cq", 0x201C: "\\(lq", 0x201D: "\\(rq",
        0x00B2: "\\(S2", 0x00B3: "\\(S3", 0x00B0: "\\(de", 0x00B1: "\\(+-", 0x2248: "\\(~~", 0x00A0: "\\~",
    ]

    /// Text safe on a roff text line: backslashes and minus signs escaped, the characters outside ASCII as groff's
    /// named ones (`named`) or else `\[uXXXX]`, a leading `.` or `'` (a request) neutralised.
    static func roff(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case ",": out += ",\\:"  // a place to break a long JSON shape
            case _ where named[scalar.value] != nil: out += named[scalar.value]!
            case _ where scalar.value > 0x7E || scalar.value < 0x20:
                out += "\\[u" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4) + "]"
            default: out.unicodeScalars.append(scalar)
            }
        }
        out = out.replacingOccurrences(of: ",\\: ", with: ", ")
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }

    // MARK: - Text

    static let description = """
        ftgst makes thumbnails, previews and exports of videos and photos with film looks (.cube LUTs), on \
        GStreamer. Every command follows the same contract: on success, one line of JSON on stdout and nothing on \
        stderr; on failure, an empty stdout, one line [CODE] message on stderr, and the code's exit status (EXIT \
        STATUS). ftgst presets prints one line per preset, and ftgst export --progress jsonl progress lines before \
        its result line.
        """

    static let parsingRules = """
        After a command: --name value and --name=value are the same, and options may come before or after the \
        positionals. Given twice, an option's last value wins, except the repeatable ones, which accumulate. -- ends \
        the options (for a file whose name starts with -, also written ./-x). -h is --help in every command. An \
        unknown option or command is INVALID_ARGUMENT, naming the nearest known spelling when one is close.
        """

    static let exitStatusIntroduction = """
        The code is printed as [CODE] at the start of the one line on stderr; codes and statuses are stable, the \
        message is for people. A command stopped by Ctrl-C outside export ends by the signal (the shell reports 130). \
        batch reports each job's code in its result line and exits 0 when every job was done, 65 when some job \
        failed for good (bad media or a bad line) and none transiently, 75 when some job failed transiently \
        (REMOTE_FETCH_FAILED, WRITE_FAILED, INTERNAL, CANCELLED, EXPORT_BUSY: retry it).
        """

    static let environment: [(String, String)] = [
        (
            "JOB_COMPLETION_INDEX",
            "batch --shards N: this process's shard, 0…N-1 (what a Kubernetes Indexed Job sets in each pod)."
        ),
        (
            "FTGST_PRESETS",
            "a folder of *.preset files that export and presets choose among, instead of the built-in presets (--presets wins)."
        ),
        (
            "FTGST_LIBRARY_LOCK_TIMEOUT_MS",
            "save: how long to wait for the library's lock, in ms (--lock-timeout-ms wins; default 30000)."
        ),
        (
            "FTGST_SHARE_TIMEOUT_MS",
            "share: the deadline per desktop handler, in ms (--timeout-ms wins; default 10000)."
        ),
        ("FTGST_PLUGIN_DIR", "the folder holding libgstfilmtone.so that export --dry-run puts in GST_PLUGIN_PATH."),
        (
            "FTGST_NO_REFERENCE_SKIP",
            "1 turns off skipping the decode of frames nothing refers to on exact seeks (a diagnostic switch)."
        ),
        (
            "FTGST_NO_KNOWN_DEMUXER",
            "1 type-finds every file and decodes its first frame before seeking, as ftgst did before naming MP4 and Matroska demuxers from a file's first bytes (a diagnostic switch)."
        ),
        (
            "FTGST_NO_OWN_DECODER",
            "1 decodes H.264 and HEVC thumbnails, storyboards and previews with GStreamer's avdec_h264 and avdec_h265 instead of ftgst's own fth264dec and fth265dec, which load libavcodec alone (a diagnostic switch)."
        ),
        (
            "FTGST_NO_PRESCALE",
            "1 converts every decoded picture to RGB at its full size before scaling it, instead of first scaling a picture at least four times the output's side down to twice that side in its decoded format (a diagnostic switch)."
        ),
        (
            "FTGST_NO_DIRECT_KEYFRAME",
            "1 makes ftgst thumbnailer use GStreamer for every video; by default a plain MP4 or QuickTime file of 8-bit SDR H.264 or HEVC is answered from its sample tables with libavcodec and libswscale alone (a diagnostic switch)."
        ),
        (
            "FTGST_DIRECT_KEYFRAME",
            "required makes ftgst thumbnailer fail with UNSUPPORTED_FORMAT, naming the reason, on a file its direct path declines instead of handing it to GStreamer (for diagnosis)."
        ),
        (
            "FTGST_LIBAVCODEC",
            "the libavcodec fth264dec and fth265dec open (a soname or a path; default the major version ftgst was built for). One that cannot be opened, or of another major version, leaves H.264 and HEVC to gst-libav."
        ),
        (
            "XDG_CACHE_HOME",
            "the cache root (an absolute path; else $HOME/.cache): ftgst/thumbnails, ftgst/mezzanines, and ftgst/workspace when XDG_RUNTIME_DIR is unset."
        ),
        ("XDG_RUNTIME_DIR", "export's and cancel's default workspace is $XDG_RUNTIME_DIR/ftgst."),
        (
            "XDG_DATA_HOME",
            "the data root (an absolute path; else $HOME/.local/share): the looks library of studio and serve is ftgst/looks there."
        ),
        (
            "XDG_STATE_HOME",
            "where pick keeps the folder of each kind's last pick (an absolute path; else $HOME/.local/state): ftgst/pick-folders.json."
        ),
        (
            "HOME",
            "the fallback for the cache and the libraries (~/Videos/Filmtone, ~/Music/Filmtone, ~/Pictures/Filmtone)."
        ),
        (
            "DBUS_SESSION_BUS_ADDRESS",
            "the session bus (else $XDG_RUNTIME_DIR/bus): share hands the file to the XDG desktop portal on it, pick asks its file chooser, export --notify shows a notification."
        ),
        ("DISPLAY, WAYLAND_DISPLAY", "share falls back to xdg-open, pick to zenity or kdialog, when one is set."),
        ("GST_DEBUG", "GStreamer's own debug log on stderr (the only other stderr output)."),
        (
            "GST_PLUGIN_PATH",
            "more folders of GStreamer plugins (decoders and encoders come from the installed plugins)."
        ),
    ]

    static let files: [(String, String)] = [
        (
            "$XDG_CACHE_HOME/ftgst/thumbnails/",
            "thumb's cache: thumb-*.jpg and .png, each stamped with its request; the oldest are evicted past --cache-max-mb."
        ),
        (
            "$XDG_CACHE_HOME/ftgst/mezzanines/",
            "mezzanine's cache: SLOT.mov and its manifest SLOT.json, least recently used evicted past --cache-max-mb."
        ),
        ("$XDG_RUNTIME_DIR/ftgst/", "export's workspace: its lock, the cancel request, and records/ of every export."),
        (
            "OUT.ftgst.json, OUT.ftgst-bench.json",
            "export's sidecar (request, preset, pipeline, probes, versions) and benchmark record beside OUT."
        ),
        (
            "$(xdg-user-dir VIDEOS)/Filmtone/",
            "save's library for videos (MUSIC for audio, PICTURES for the rest), with its ledger .ftgst-ledger.json."
        ),
        ("*.preset", "export presets: the built-in ones (ftgst presets), or the folder of --presets or FTGST_PRESETS."),
    ]

    static let examples: [(String, String)] = [
        ("A thumbnail 2.5 s into a clip, into the cache:", "ftgst thumb clip.mp4 --time-ms 2500"),
        ("One frame with a look:", "ftgst preview clip.mp4 --creative-lut look.cube --time-ms 1000 -o frame.png"),
        (
            "The whole clip with the look, as H.264 in MP4, with a progress bar:",
            "ftgst export clip.mp4 --creative-lut look.cube -o graded.mp4 --progress bar"
        ),
        (
            "The gst-launch-1.0 command that does the same export:",
            "ftgst export clip.mp4 --creative-lut look.cube -o graded.mp4 --dry-run"
        ),
        ("Stop it from another terminal:", "ftgst cancel"),
        ("Completion for bash in this shell:", "source <(ftgst completion bash)"),
    ]
}

/// What each exit status means, for the man page: one short line per code (docs/CLI.md#errors has them all).
enum ExitStatuses {
    static func summary(_ code: FilmtoneError.Code) -> String {
        switch code {
        case .invalidArgument:
            return "bad usage: an unknown command or option, a missing or malformed value, a bad request file"
        case .invalidURL: return "the URI is empty, has another scheme, or is malformed"
        case .fileNotFound:
            return "a local file (source, .cube, request, presets folder) is missing, not a regular file, or unreadable"
        case .unsupportedFormat: return "a format ftgst or the installed GStreamer plugins cannot decode or write"
        case .decodeFailed: return "the media cannot be decoded, or the time asked for is past its end"
        case .remoteFetchFailed: return "a remote source failed: connection, HTTP status, deadline"
        case .internalError: return "GStreamer could not start, an encoder failed, or a bug in ftgst"
        case .writeFailed:
            return "an output, cache, library or workspace cannot be written, or OUT exists without --overwrite"
        case .exportBusy: return "export: another export holds the workspace"
        case .lutInvalid: return "a .cube file does not parse (file:line: reason)"
        case .saveFailed: return "save: the same content is already in the library"
        case .shareUnavailable: return "share: no desktop handler took the file"
        case .notSupported:
            return
                "pick, pickSource, pickLutFile: no file chooser (no desktop portal that answers, no zenity or kdialog)"
        case .cancelled: return "cancelled: Ctrl-C, SIGTERM, ftgst cancel, or export's --timeout-ms"
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
