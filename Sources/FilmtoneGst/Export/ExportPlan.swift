import FilmtoneCore
import FilmtoneElements
import FilmtoneLooks
import Foundation
import GstKit

/// What happens to the source's audio in an export.
public enum AudioMode: String, Sendable, CaseIterable {
    /// `copy` when the source's audio is AAC and the preset takes it, else `aac`; nothing without audio.
    case auto
    /// The compressed AAC packets as they are (no re-encoding).
    case copy
    /// Decoded and re-encoded to AAC.
    case aac
    /// No audio track.
    case none
}

/// The precision an export works at, between decoding and encoding (`--depth`).
public enum ExportDepth: String, Sendable, CaseIterable {
    /// The source's depth, capped by what the preset carries.
    case auto
    case eight = "8"
    case ten = "10"
}

/// The pure part of an export: every decision that needs nothing but the request, the source's probe and the
/// presets (`preset(for:source:among:)`, then `make(_:source:preset:)`: which preset, the kept range, the frame
/// total, the size, audio and depth), and the preset's template filled in with them as gst-launch words.
///
/// No user string is ever in those words: the source's path or URL, its headers, the LUT paths and OUT are
/// `settings`, set as typed properties on named elements (`source`, `look`, `out`) of the parsed pipeline. The
/// `--dry-run` command and the sidecar insert the same values, quoted, beside those names (`commandWords`), so the
/// printed command and the pipeline that runs cannot drift.
struct ExportPlan: Equatable {
    /// The preset whose template is filled.
    var preset: ExportPreset
    /// What the template is filled with; `inputs.output` is OUT (`words(writingTo:)` writes elsewhere).
    var inputs: Inputs
    var width: Int
    var height: Int
    /// The audio mode actually used (`auto` resolved).
    var audio: AudioMode
    /// Bits per channel between decoding and encoding: 8 or 10.
    var depth: Int
    /// Frames the export will render (`totalFrames(_:start:end:)`); nil when the source does not say.
    var totalFrames: Int64? = nil
    /// Whether `totalFrames` is the probe's own count (the container's index, the whole source) rather than an
    /// estimate from duration × rate.
    var totalFramesIsExact: Bool = false
    /// Build (or find) the source's mezzanine before rendering.
    var buildsMezzanine: Bool = false
    /// How long the output should be (ms): the kept range, or the source's duration; nil when unknown.
    var expectedSpanMilliseconds: Int64? = nil

    /// The kept range on the 0-based timeline (ms): nil start = from the beginning, nil end = to the end.
    struct Trim: Equatable {
        var start: Int64? = nil
        var end: Int64? = nil
        /// The source's `timelineStart` (ns): `fttrim` cuts in stream time, which starts there (1.4 s into an
        /// ffmpeg MPEG-TS), so it is added to both cut points.
        var origin: Int64 = 0

        var isWhole: Bool { start == nil && end == nil }
    }

    struct Inputs: Equatable {
        var source: MediaSource
        var headers: [HTTPHeader]
        /// The probe says the source is a JPEG photo: put `jpegparse` in front so EXIF orientation is applied
        /// (decodebin does not plug it by itself in 1.22).
        var isJPEG: Bool
        /// The probe says the source is a photo: the export ends after its first picture (`photoEnd`).
        var isPhoto: Bool = false
        var displayWidth: Int
        var displayHeight: Int
        var maxWidth: Int
        var maxHeight: Int
        var look: LookSettings?
        /// `--depth`, and the source's bit depth from the probe (nil: unknown, taken as 8).
        var depth: ExportDepth = .auto
        var sourceDepth: Int? = nil
        /// The source's HDR transfer when it is tone-mapped to SDR BT.709 (`--tone-map on`); nil: no tone map.
        var toneMap: ToneMap.Transfer? = nil
        var trim = Trim()
        var audio: AudioMode
        /// The source's audio codec (probe's short name), nil without audio.
        var sourceAudioCodec: String?
        var output: String
    }

    /// A value from the user, set on an element of the parsed template as a typed property: never pipeline text.
    struct Setting: Equatable {
        enum Value: Equatable {
            case text(String)
            /// souphttpsrc's `extra-headers`: a `GstStructure` named `headers`, one string field per header.
            case headers([HTTPHeader])
        }

        /// The element's name in the template (`source`, `look`, `out`).
        var element: String
        var property: String
        var value: Value
    }

    /// What ends a photo export after its first picture, in front of the size filter: `imagefreeze` sends that
    /// picture once and then EOS, without waiting for the source's own EOS, and answers any later frame with EOS
    /// upstream. Some decoders never end: GStreamer 1.22's GIF demuxer (avdemux_gif) keeps reading at the end of
    /// the file after the last frame, so a GIF, animated or still, ran until the export's deadline; an animated
    /// picture is exported as its first frame, as `thumb` shows it. The frame counter on the size filter counts
    /// exactly that one picture.
    ///
    /// The `queue` in front of it takes what upstream sends after that EOS: a caps event (a decoder or converter
    /// negotiating again for a later frame) pushed straight into elements that have gone EOS fails, and the decoder
    /// reports it as not-negotiated, an error ("Internal data stream error" from decodebin's multiqueue) that made
    /// the `--dry-run` line of an animated GIF fail now and then; a queue whose downstream has ended accepts sticky
    /// events and answers buffers with EOS.
    static let photoEnd = ["queue", "!", "imagefreeze", "num-buffers=1", "!"]

    /// The names of the elements that take the user's values.
    static let sourceName = "source"
    static let lookName = "look"
    static let toneMapName = "tonemap"
    static let outputName = "out"

    /// The words of the pipeline description, with no user value in them (`settings` holds those).
    var words: [String] {
        var words: [String] = []
        for word in preset.template {
            switch word {
            case "{source}": words += ExportPlan.sourceWords(inputs, audio: audio)
            case "{size}":
                if inputs.isPhoto { words += ExportPlan.photoEnd }
                words += [
                    "capsfilter", "name=size",
                    "caps=video/x-raw,width=\(width),height=\(height),pixel-aspect-ratio=1/1",
                ]
            case "{look}":
                let working = ExportPlan.workingFormat(
                    look: inputs.look != nil, depth: depth, sourceDepth: inputs.sourceDepth,
                    encoderFormat: ExportPlan.encoderFormat(preset))
                words +=
                    (inputs.toneMap.map { ExportPlan.toneMapWords($0, then: working) } ?? working)
                    + (inputs.look.map(ExportPlan.lookWords) ?? [])
            case "{trim}": words += ExportPlan.trimWords(inputs.trim, name: "trim")
            case "{audio}":
                words += ExportPlan.audioWords(audio, trim: ExportPlan.trimWords(inputs.trim, name: "audiotrim"))
            case "{output}": words += ["filesink", "name=\(ExportPlan.outputName)"]
            default: words.append(word)
            }
        }
        return ExportPlan.collapseLinks(words)
    }

    /// The user's values writing OUT: the source's location (and headers), the LUT paths, `filesink`'s location.
    var settings: [Setting] { settings(writingTo: inputs.output) }

    /// The same values writing `output` instead (the driver's staging file beside OUT): only `filesink`'s
    /// location differs.
    func settings(writingTo output: String) -> [Setting] {
        var settings: [Setting] = []
        switch inputs.source {
        case .local(let path):
            settings.append(Setting(element: ExportPlan.sourceName, property: "location", value: .text(path)))
        case .remote(let url):
            settings.append(
                Setting(element: ExportPlan.sourceName, property: "location", value: .text(url.absoluteString)))
            if !inputs.headers.isEmpty {
                settings.append(
                    Setting(element: ExportPlan.sourceName, property: "extra-headers", value: .headers(inputs.headers)))
            }
        }
        if let look = inputs.look {
            if let input = look.inputLUT {
                settings.append(Setting(element: ExportPlan.lookName, property: "input-lut", value: .text(input)))
            }
            if let creative = look.creativeLUT {
                settings.append(Setting(element: ExportPlan.lookName, property: "creative-lut", value: .text(creative)))
            }
        }
        settings.append(Setting(element: ExportPlan.outputName, property: "location", value: .text(output)))
        return settings
    }

    /// The words of a gst-launch description that carries `settings` too, each as `property="value"` right after
    /// its element's `name=` word: what `--dry-run` prints and the sidecar records. `redactingHeaders` puts a
    /// placeholder in place of the headers (secrets do not belong in a file).
    func commandWords(_ settings: [Setting], redactingHeaders: Bool = false) -> [String] {
        var words: [String] = []
        for word in self.words {
            words.append(word)
            guard word.hasPrefix("name=") else { continue }
            let name = String(word.dropFirst("name=".count))
            for setting in settings where setting.element == name {
                let text: String
                switch setting.value {
                case .text(let value): text = value
                case .headers(let headers):
                    text =
                        redactingHeaders
                        ? "headers, redacted=(string)true;" : ExportPlan.headerStructure(headers)
                }
                words.append("\(setting.property)=\(ExportPlan.launchQuote(text))")
            }
        }
        return words
    }

    /// The first value gst-launch's parser cannot be given back exactly (`launchQuote`), if any.
    static func inexpressible(_ settings: [Setting]) -> Setting? {
        settings.first { setting in
            guard case .text(let value) = setting.value else { return false }
            return value.hasSuffix("\\") || value.hasSuffix("\"")
        }
    }

    /// A property value as gst-launch's parser reads it back exactly: in double quotes, `"` and `\` escaped.
    /// gst-launch joins its arguments into one description (escaping spaces outside quotes) and its lexer then
    /// takes a quoted string whole, tabs, newlines, `!` and `=` included. One case it cannot read back: a value
    /// ending in `\` or `"` makes the closing quote look escaped (`inexpressible` finds those).
    static func launchQuote(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// Fills `preset`'s template. Throws `UNSUPPORTED_FORMAT` when `--audio copy` cannot be honoured,
    /// `INVALID_ARGUMENT` when `--depth` asks for more than the preset carries.
    static func make(preset: ExportPreset, _ inputs: Inputs) throws -> ExportPlan {
        let size = outputSize(
            displayWidth: inputs.displayWidth, displayHeight: inputs.displayHeight,
            maxWidth: inputs.maxWidth, maxHeight: inputs.maxHeight, even: preset.evenSize)
        let audio = try resolveAudio(inputs.audio, sourceCodec: inputs.sourceAudioCodec, preset: preset)
        let depth = try resolveDepth(inputs.depth, sourceDepth: inputs.sourceDepth, preset: preset)
        return ExportPlan(
            preset: preset, inputs: inputs, width: size.width, height: size.height, audio: audio,
            depth: depth)
    }

    /// The display size fitted into the bounds, aspect kept, never upscaled; even when the codec needs it
    /// (rounded down, at least 2).
    static func outputSize(displayWidth: Int, displayHeight: Int, maxWidth: Int, maxHeight: Int, even: Bool)
        -> (width: Int, height: Int)
    {
        var size = FrameRecipe.outputSize(
            width: displayWidth, height: displayHeight, pixelAspect: Fraction(1, 1),
            maxWidth: maxWidth, maxHeight: maxHeight)
        if even {
            size.width = max(2, size.width & ~1)
            size.height = max(2, size.height & ~1)
        }
        return size
    }

    /// 8 or 10. `auto`: 10 when the source has more than 8 bits and the preset carries them, else 8. An
    /// explicit 10 on an 8-bit preset is refused (`INVALID_ARGUMENT`): the preset could not keep it.
    static func resolveDepth(_ requested: ExportDepth, sourceDepth: Int?, preset: ExportPreset) throws -> Int {
        switch requested {
        case .eight: return 8
        case .ten:
            guard preset.depth >= 10 else {
                throw FilmtoneError(
                    .invalidArgument,
                    "preset \(preset.name) carries \(preset.depth) bits; "
                        + "--depth 10 needs a 10-bit preset (prores-mov, hevc10-mp4)")
            }
            return 10
        case .auto:
            // A source whose depth the probe cannot read (FFV1 keeps it in its codec record) is given the
            // preset's: a 10-bit preset then keeps whatever the source has.
            return (sourceDepth ?? preset.depth) > 8 && preset.depth >= 10 ? 10 : 8
        }
    }

    /// The format the look works in, pinned in front of it: packed 8-bit RGB, or RGBA64 at 10 bits (ftlut's
    /// 16-bit path; without the pin videoconvert would pick 16 bits for a 10-bit source even at `--depth 8`).
    /// Without a look, `--depth 8` on a deeper source (or one of unknown depth) still passes the picture through 8 bits (Y444: no
    /// chroma lost), so the output shows what 8 bits would have kept.
    ///
    /// At 8 bits in front of a 4:2:0 encoder (`encoderFormat` I420) the look works on I420 itself: ftlut's Y'CbCr
    /// table applies it in place, and the two full-frame conversions I420 → BGRx → I420 (which cost more CPU
    /// than the look) disappear. Other encoders (4:4:4 FFV1, PNG's RGB, 4:2:2 ProRes) keep BGRx, which loses
    /// no chroma.
    static func workingFormat(look: Bool, depth: Int, sourceDepth: Int?, encoderFormat: String? = nil) -> [String] {
        if look {
            if depth > 8 { return ["video/x-raw,format=RGBA64_LE", "!"] }
            return [encoderFormat == "I420" ? "video/x-raw,format=I420" : "video/x-raw,format=BGRx", "!"]
        }
        if depth == 8 && (sourceDepth ?? 16) > 8 { return ["video/x-raw,format=Y444"] }
        return []
    }

    /// The element that tone-maps a PQ or HLG source to SDR BT.709 in front of the look, as the preview's
    /// `tonemap` does (`FrameRecipe`): `ftlut`'s generated tone map on 16-bit RGB, so that the decoded 10 bits reach
    /// the curve whole. Its pixels are BT.709 but its caps still say the source's colours (ftlut changes no caps):
    /// the `videoconvert` after it meets `then` (the look's working format, or none) with `colorimetry=bt709` added,
    /// which only relabels RGB (videoconvert converts no transfer or primaries by default) and sets the matrix of
    /// any YUV after it, so the encoder tags the output BT.709. A PQ source's peak is set from its caps when they
    /// arrive (`ExportRun`).
    static func toneMapWords(_ transfer: ToneMap.Transfer, then working: [String]) -> [String] {
        var relabel = working.isEmpty ? ["video/x-raw"] : working
        relabel[0] += ",colorimetry=bt709"
        return [
            "video/x-raw,format=\(FrameRecipe.deepFormat)", "!", LUTFilterElement.factoryName, "name=\(toneMapName)",
            "tone-map=\(transfer.rawValue)", "!", "videoconvert", "!",
        ] + relabel
    }

    /// The format pinned in front of the preset's encoder: the last `video/x-raw,format=X` of its template.
    static func encoderFormat(_ preset: ExportPreset) -> String? {
        preset.template.last { $0.hasPrefix("video/x-raw,format=") }.map {
            String($0.dropFirst("video/x-raw,format=".count))
        }
    }

    static func resolveAudio(_ mode: AudioMode, sourceCodec: String?, preset: ExportPreset) throws -> AudioMode {
        guard preset.carriesAudio, let codec = sourceCodec else {
            if mode == .copy || mode == .aac, sourceCodec != nil {
                throw FilmtoneError(.unsupportedFormat, "preset \(preset.name) has no audio track; use --audio none")
            }
            return .none
        }
        switch mode {
        case .auto: return codec == "aac" ? .copy : .aac
        case .copy:
            guard codec == "aac" else {
                throw FilmtoneError(
                    .unsupportedFormat,
                    "cannot copy \(codec) audio into \(preset.name) (it takes AAC); "
                        + "use --audio aac")
            }
            return .copy
        case .aac, .none: return mode
        }
    }

    private static func sourceWords(_ inputs: Inputs, audio: AudioMode) -> [String] {
        var words = [inputs.source.isRemote ? "souphttpsrc" : "filesrc", "name=\(sourceName)"]
        if inputs.isJPEG { words += ["!", "jpegparse"] }
        // decodebin stops at `caps`: compressed AAC for a copy, raw otherwise; streams that match none of them
        // are not exposed (no decoding of audio that is not wanted).
        let caps: String
        switch audio {
        case .copy: caps = "video/x-raw(ANY);audio/mpeg,mpegversion=4"
        case .aac: caps = "video/x-raw(ANY);audio/x-raw(ANY)"
        case .none, .auto: caps = "video/x-raw(ANY)"
        }
        return words + ["!", "decodebin", "name=src", "caps=\(caps)", "expose-all-streams=false"]
    }

    /// souphttpsrc's `extra-headers` as a serialized GstStructure, for the printed command only (the export sets
    /// the structure built in code): `headers, Name=(string)"value";`. The `;` ends the structure, so its text
    /// never ends in `"` (which `launchQuote` could not give back).
    static func headerStructure(_ headers: [HTTPHeader]) -> String {
        let fields = headers.map { header -> String in
            let escaped = header.value.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "\"", with: "\\\"")
            return "\(header.name)=(string)\"\(escaped)\""
        }
        return (["headers"] + fields).joined(separator: ", ") + ";"
    }

    /// Whether the pipeline uses an element of ftgst's own plugin (`ftlut`, `fttrim`, `ftx264enc`, …): then
    /// `--dry-run` and the sidecar's command need the plugin folder in `GST_PLUGIN_PATH`.
    static func needsPlugin(_ words: [String]) -> Bool {
        words.contains { FilmtonePlugin.factoryNames.contains($0) }
    }

    private static func lookWords(_ look: LookSettings) -> [String] {
        var words = [LUTFilterElement.factoryName, "name=\(lookName)"]
        words.append("intensity=\(look.intensity)")
        words.append("interpolation=\(look.interpolation.rawValue)")
        return words
    }

    /// `fttrim` (the ftgst plugin's range element: gst-launch cannot seek) with the range in nanoseconds.
    static func trimWords(_ trim: Trim, name: String) -> [String] {
        guard !trim.isWhole else { return [] }
        var words = [TrimElement.factoryName, "name=\(name)"]
        if let start = trim.start { words.append("start=\(start * 1_000_000 + trim.origin)") }
        if let end = trim.end { words.append("stop=\(end * 1_000_000 + trim.origin)") }
        return words + ["!"]
    }

    private static func audioWords(_ audio: AudioMode, trim: [String]) -> [String] {
        switch audio {
        case .copy: return ["src.", "!", "audio/mpeg", "!"] + trim + ["aacparse", "!", "queue", "!", "mux."]
        case .aac:
            return ["src.", "!", "audio/x-raw", "!"] + trim + [
                "queue", "!", "audioconvert", "!", "audioresample", "!",
                "avenc_aac", "!", "aacparse", "!", "queue", "!", "mux.",
            ]
        case .none, .auto: return []
        }
    }

    /// A placeholder that filled in to nothing leaves `! !`: one link goes with it.
    static func collapseLinks(_ words: [String]) -> [String] {
        var out: [String] = []
        for word in words {
            if word == "!", out.last == "!" { continue }
            out.append(word)
        }
        return out
    }

    // MARK: - From the request and the probe

    /// The preset the export uses: the one named (`--preset`), else the first for the source's kind that writes
    /// OUT's extension (`ExportPresets.choose`). Throws `UNSUPPORTED_FORMAT` for a source without video or
    /// picture, `INVALID_ARGUMENT` for an unknown name, an extension no preset writes, or a preset for the other
    /// kind of source.
    /// `presets` is read only once the source is known to have a picture, so a source without one is refused as
    /// such whatever the preset folder holds.
    static func preset(
        for request: ExportRequest, source: ProbeReport,
        among readPresets: @autoclosure () throws -> [ExportPreset]
    ) throws -> ExportPreset {
        guard source.video != nil else {
            throw FilmtoneError(.unsupportedFormat, "the source has no video or picture to export")
        }
        let presets = try readPresets()
        let kind: ExportPreset.SourceKind = source.isImage ? .image : .video
        let what = source.isImage ? "photo" : "video"
        let preset: ExportPreset
        if let name = request.options.preset {
            preset = try ExportPresets.named(name, among: presets)
        } else if let chosen = ExportPresets.choose(for: request.output.path, isImage: source.isImage, among: presets) {
            preset = chosen
        } else {
            let ext = request.output.pathExtension.isEmpty ? "no extension" : "'.\(request.output.pathExtension)'"
            let kinds = presets.filter { $0.sources == kind }.flatMap { $0.extensions.map { ".\($0)" } }
            throw FilmtoneError(
                .invalidArgument,
                "no preset writes \(ext) for this \(what) "
                    + "(\(kinds.joined(separator: ", "))); name one with --preset (ftgst presets)")
        }
        guard preset.sources == kind else {
            throw FilmtoneError(
                .invalidArgument,
                "preset \(preset.name) takes \(preset.sources.rawValue) sources; "
                    + "this source is a \(what)")
        }
        return preset
    }

    /// The plan of `request` for the probed `source` with `preset` (from `preset(for:source:among:)`), writing
    /// OUT. Refuses (`INVALID_ARGUMENT`) a mezzanine or a cut for a photo, a start at or past the end, a cut with a
    /// preset that cannot trim; and what `make(preset:_:)` refuses.
    static func make(_ request: ExportRequest, source: ProbeReport, preset: ExportPreset) throws -> ExportPlan {
        guard let video = source.video else {
            throw FilmtoneError(.unsupportedFormat, "the source has no video or picture to export")
        }
        let options = request.options
        guard !(options.mezzanine && source.isImage) else {
            throw FilmtoneError(.invalidArgument, "a photo has no mezzanine")
        }
        let trim = try keptRange(
            start: options.startMilliseconds, end: options.endMilliseconds, source: source,
            preset: preset)
        var plan = try make(
            preset: preset,
            Inputs(
                source: request.source, headers: request.headers, isJPEG: source.isImage && video.codec == "jpeg",
                isPhoto: source.isImage,
                displayWidth: video.displayWidth, displayHeight: video.displayHeight, maxWidth: options.maxWidth,
                maxHeight: options.maxHeight, look: request.look, depth: options.depth, sourceDepth: video.bitDepth,
                toneMap: options.toneMap == .on && !source.isImage ? video.hdr.toneMap : nil,
                trim: trim, audio: options.audio, sourceAudioCodec: source.audio?.codec, output: request.output.path))
        plan.totalFrames = totalFrames(source, start: options.startMilliseconds, end: options.endMilliseconds)
        plan.totalFramesIsExact =
            !source.isImage && trim.isWhole && options.startMilliseconds == nil && options.endMilliseconds == nil
            && (video.frameCount ?? 0) > 0
        plan.buildsMezzanine = options.mezzanine
        if !source.isImage, let duration = source.durationMilliseconds {
            plan.expectedSpanMilliseconds = min(trim.end ?? duration, duration) - (trim.start ?? 0)
        }
        return plan
    }

    /// The range `--start-ms`/`--end-ms` keep: a start of 0 is the beginning and an end at or past the duration
    /// the end (no `fttrim` for them). A photo cannot be cut, a start at or past the duration keeps nothing, and a
    /// preset without `{trim}` cannot cut: `INVALID_ARGUMENT`.
    static func keptRange(start: Int64?, end: Int64?, source: ProbeReport, preset: ExportPreset) throws -> Trim {
        var trim = Trim(start: start == 0 ? nil : start, end: end)
        if !trim.isWhole {
            let origin = source.timelineStart.components
            trim.origin = origin.seconds * 1_000_000_000 + origin.attoseconds / 1_000_000_000
            guard !source.isImage else { throw FilmtoneError(.invalidArgument, "a photo cannot be trimmed") }
            if let start = trim.start, let duration = source.durationMilliseconds, start >= duration {
                throw FilmtoneError(.invalidArgument, "--start-ms \(start) is at or beyond the end (\(duration) ms)")
            }
            if let end = trim.end, let duration = source.durationMilliseconds, end >= duration { trim.end = nil }
        }
        guard preset.template.contains("{trim}") || trim.isWhole else {
            throw FilmtoneError(.invalidArgument, "preset \(preset.name) cannot trim (its pipeline has no {trim})")
        }
        return trim
    }

    /// Frames the export will render: the probe's count, or duration × rate; for a cut, the frames on screen
    /// in [start, end) (the one showing at start included). 1 for a photo; nil when the source says too little.
    static func totalFrames(_ report: ProbeReport, start: Int64?, end: Int64?) -> Int64? {
        guard let video = report.video else { return nil }
        if report.isImage { return 1 }
        let parts = (video.frameRate ?? "").split(separator: "/").compactMap { Double($0) }
        let rate = parts.count == 2 && parts[0] > 0 && parts[1] > 0 ? parts[0] / parts[1] : nil
        if start == nil && end == nil, let count = video.frameCount, count > 0 { return count }
        guard let rate, let duration = report.durationMilliseconds else { return nil }
        let from = Double(start ?? 0) / 1000
        let to = Double(min(end ?? duration, duration)) / 1000
        let first = (from * rate + 1e-6).rounded(.down)
        let last = (to * rate - 1e-6).rounded(.up)
        return max(0, Int64(last - first))
    }

    /// A clean end of stream with fewer frames than the source holds is a source cut short (a half-written or
    /// half-downloaded file whose index still lists every frame): `DECODE_FAILED`, never a short export. The
    /// probe's own count allows 2 frames or 2 % less (a decoder may drop a broken last frame); an estimate
    /// from duration × rate (a cut, a container without a count) allows 10 %. An estimate is only an average:
    /// a cut of a variable-rate clip holds fewer frames than the average says where its frames are sparse, so
    /// when the frames rendered `reached` (ms, the end of the last) cover the `span` expected but 5 %, it is
    /// complete whatever the count. Without a total nothing is checked.
    static func checkComplete(
        rendered: Int64, expected: Int64?, exact: Bool, reached: Int64? = nil, span: Int64? = nil
    ) throws {
        guard let expected, expected > 0 else { return }
        if !exact, let reached, let span, span > 0, reached * 20 >= span * 19 { return }
        let allowed = max(2, expected / (exact ? 50 : 10))
        guard rendered < expected - allowed else { return }
        throw FilmtoneError(
            .decodeFailed,
            "the source ended early: \(rendered) of its \(expected) frames could be decoded "
                + "(is the file cut short or still being written?)")
    }

    // MARK: - Shell

    /// The `--dry-run` command: runnable with `bash`, the plugin folder in `GST_PLUGIN_PATH`, every word
    /// single-quoted (gst-launch escapes spaces inside one argument itself, so a path with spaces stays whole).
    static func shellCommand(words: [String], pluginDirectory: String?) -> String {
        var parts: [String] = []
        if let pluginDirectory {
            parts.append("GST_PLUGIN_PATH=\(shellQuote(pluginDirectory))${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}")
        }
        parts += ["gst-launch-1.0", "-q"]
        parts += words.map { $0 == "!" ? "'!'" : shellQuote($0) }
        return parts.joined(separator: " ")
    }

    static func shellQuote(_ word: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:+@%")
        if !word.isEmpty, word.allSatisfy({ safe.contains($0) }) { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
