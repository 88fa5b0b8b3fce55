import FilmtoneCore
import FilmtoneElements
import FilmtoneLooks
import Foundation
import GstKit
import ImageCodecs
import Synchronization

/// An upright, scaled RGB frame and the time it was shown at.
struct GrabbedFrame {
    var image: RGBImage
    /// Time of the frame returned on the 0-based timeline (`FrameRecipe.Timeline`); zero for still images.
    var time: ClockTime
    var isStill: Bool
    /// Unreferenced pictures before an exact seek's target that were not decoded (see `ReferenceSkipper`).
    var skippedPictures: Int
    /// The pipeline sought before its first preroll (`FirstSeekHold`): no first frame was decoded for nothing.
    var soughtFirst = false
    /// The video decoder's factory (`fth264dec`, `avdec_h265`…); nil for the photo path or none plugged.
    var decoder: String? = nil
    /// Pictures the own decoder (`fth264dec`, `fth265dec`) copied out; nil for another decoder.
    var copiedPictures: Int? = nil
    /// A kept pipeline's forward steps so far whose answer the converter's probe confirmed
    /// (`EarlyFrameDrop.confirms(last:)`): those answered before the next frame reached the sink, and those where it
    /// had reached it first (small pictures convert in less than the 1 ms the step waits between checks).
    var stepsConfirmedAtConversion = 0
}

/// What to grab: one frame of `source` near `time`, fitted into `maxWidth`×`maxHeight`.
struct FrameRequest {
    var source: MediaSource
    var headers: [HTTPHeader]
    var time: ClockTime
    var tolerance: ClockTime
    var maxWidth: Int
    var maxHeight: Int
    var timeoutMilliseconds: Int64
    /// PQ and HLG sources are tone-mapped to SDR BT.709 (`FrameRecipe.toneMap`); false: their codes are shown
    /// as they are (`--tone-map off`).
    var toneMap = true
    /// A look applied by `ftlut` after scaling (previews); nil for plain thumbnails.
    var look: LookSettings? = nil
    /// How long a local file may take to produce its first caps before it counts as stalled (see
    /// `FrameGrabber.grab`); remote sources are never judged this way, their data may just be slow.
    var localStallMilliseconds: Int64 = 5000
    /// The output size when already decided (a preview read from a mezzanine gets the size it would have had from
    /// the source); nil: computed from the upright caps and `maxWidth`×`maxHeight`.
    var outputSize: (width: Int, height: Int)? = nil
    /// Every picture is a keyframe (a mezzanine's MJPEG): a seek is one decode, so a kept pipeline always seeks
    /// and never steps forward (decoding every picture in between costs more).
    var allIntra = false
    /// The fitted height is rounded to an even number (`FrameRecipe.outputSize`): storyboard tiles.
    var evenHeight = false
    /// H.264 and HEVC that `fth264dec`/`fth265dec` take are decoded by them (`FrameRecipe.autoplugDecision`); false:
    /// by gst-libav (`FTGST_NO_OWN_DECODER=1`, or `OpenedFrameSource` opening the source again after an own decoder
    /// failed on it).
    var ownDecoder = FrameRecipe.ownDecoderEnabled
}

/// The `ftlut` settings of a preview: LUT file paths (nil: empty slot), intensity, interpolation.
struct LookSettings: Equatable {
    var inputLUT: String?
    var creativeLUT: String?
    var intensity: Double
    var interpolation: Interpolation
}

/// The driver: builds `FrameRecipe`'s pipeline, prerolls, seeks as the recipe says, and pulls one frame.
/// Every wait shares one deadline; cancellation is checked while waiting. The pipeline is opened and answers one
/// time (`OpenedFrameSource`), then is stopped; the engine keeps one open instead (`KeptPipeline`).
struct FrameGrabber {
    let request: FrameRequest
    let isCancelled: () -> Bool

    /// A picture GStreamer cannot decode (a CMYK JPEG, an animated WebP, a HEIF image) is `UNSUPPORTED_FORMAT`.
    /// A remote server that ignores `Range` (`souphttpsrc` learns it only when a seek is answered with the whole
    /// body) makes the grab start again reading forward, within the same deadline.
    func grab() throws -> GrabbedFrame {
        let formats = PictureFormatWatch()
        let deadline = Deadline(after: request.timeoutMilliseconds)
        return try formats.refining {
            do {
                return try grab(watching: formats, deadline: deadline, readingForward: false)
            } catch let error as FilmtoneError where request.source.isRemote && FrameRecipe.isRangeRefusal(error.cause)
            {
                return try grab(watching: formats, deadline: deadline, readingForward: true)
            }
        }
    }

    private func grab(watching formats: PictureFormatWatch, deadline: Deadline, readingForward: Bool) throws
        -> GrabbedFrame
    {
        // Reading forward (a server without Range) plays from the start: nothing to seek first.
        let source = try OpenedFrameSource(
            request, watching: formats, deadline: deadline, keeps: false,
            seekingFirstTo: readingForward ? nil : (request.time, request.tolerance), isCancelled: isCancelled)
        defer { source.stop() }
        return try source.frame(
            at: request.time, tolerance: request.tolerance, deadline: deadline, readingForward: readingForward,
            isCancelled: isCancelled)
    }
}

/// One attempt at `FrameRecipe`'s pipeline opened: built, prerolled on its first frame, its timeline fixed (`open`), then asked
/// for frames (`frame(at:…)`): the one-shot grab asks once and stops it; the engine keeps it (`KeptPipeline`) and
/// asks again for each new time, so a new time is a seek or a forward step, never a new pipeline.
///
/// Kept (`keeps`), it remembers where the pipeline stands after a seek or a step (the frame last handed out, and a
/// frame pulled past it) and reaches a new exact time a little ahead (`FrameRecipe.stepsForward`) by decoding on
/// instead of seeking (the first time asked is always the one-shot grab's seek):
/// PLAYING with `sync=false`, the appsink's one-buffer queue as backpressure, frames the target is past dropped
/// before conversion (`EarlyFrameDrop`), and the frame on screen at the target taken by the rule the seek's
/// answer follows (it starts at or before the target and the next starts after). The end of the stream reached
/// that way hands over to the seek, which answers it exactly as the one-shot grab does (the last frame, or no
/// frame past the end). Any other time is the one-shot grab's seek plan on the same pipeline.
///
/// Not thread-safe: one caller at a time (the kept pipeline's check-out sees to it). Used through
/// `OpenedFrameSource`, which opens another when ftgst's own H.264 decoder cannot take the stream.
final class FramePipeline {
    /// Where a kept pipeline stands: the frame it last handed out (its real start, stream time), whether it is
    /// PLAYING, a frame it pulled after that one but did not hand out, and whether it reached the end.
    private struct Position {
        var sample: Sample
        var start: ClockTime
        var lookahead: Sample? = nil
    }

    let request: FrameRequest
    let pipeline: Pipeline
    private let sink: AppSink
    private let inputs: DecoderInputs
    private let skipper: ReferenceSkipper
    private let early: EarlyFrameDrop?
    /// The prerolled first frame: it answers a time at 0 (or within the tolerance of it) whatever came after. nil
    /// when the pipeline sought before its first preroll (`FirstSeekHold`): it then answers only that time.
    private let first: Sample?
    /// The seek sent before the first preroll, not yet waited for: the seek plan's first step for that target.
    private var firstSeek: (target: ClockTime, flags: SeekFlags)?
    /// The duration the demuxer's video pad reported before that seek: the pipeline's own query may not answer
    /// until the preroll completes.
    private var demuxerDuration: ClockTime?
    /// The 0-based timeline; nil for a still image.
    let timeline: FrameRecipe.Timeline?
    var isStill: Bool { timeline == nil }
    /// The upright decoded size (what `videoflip` gives), 0×0 when unknown.
    private(set) var decodedSize: (width: Int, height: Int)
    private let keeps: Bool
    private var playing = false
    private var position: Position?
    /// Forward steps whose answer the probe confirmed (`GrabbedFrame.stepsConfirmedAtConversion`).
    private var stepsConfirmedAtConversion = 0
    /// Reading forward (`readForward`): the frame last taken and a frame pulled after it, both with their 0-based
    /// times; a kept pipeline that cannot seek reads on from there.
    private var forward: (taken: (sample: Sample, time: ClockTime)?, ahead: (sample: Sample, time: ClockTime)?) = (
        nil, nil
    )
    /// A source without presentation times (AVI: avidemux stamps a keyframe with its place in decoding order, which
    /// B-frames make wrong, and the pictures between keyframes with nothing) is read forward from its first frame,
    /// and a frame's time is its number in display order × this, the frame duration (AVI is constant-rate by
    /// design: a frame rate, no timestamps); nil for every other source.
    private var countedFrameDuration: ClockTime?
    /// While frames are counted: the number the next new frame pulled gets, and the first frame's own stamp until
    /// the first pull (going to PLAYING may render the prerolled frame again: it is not counted twice). Stamps are
    /// not compared after that: a decoder guessing times for pictures that came without may give two the same.
    private var counted: (next: Int, repeatOf: ClockTime?) = (1, nil)
    /// The demuxer's seeks in this source are not trusted (`FragmentIndex`: a fragmented MP4 whose random-access
    /// index qtdemux misreads): it is read forward, never sought in.
    private let readsForwardOnly: Bool
    /// The demuxer's duration is the stream's end (not a fragmented MP4's last index entry, `FragmentIndex`): a
    /// time at or past it is refused before any seek.
    private let durationIsReliable: Bool
    /// A fragmented MP4's end read from its last fragment (`FragmentIndex.Verdict.end`), in ns of stream time:
    /// qtdemux's duration stops at the last fragment's start.
    private let fragmentedEnd: UInt64?
    /// False once a seek or a step failed part way (its state unknown): a kept pipeline is then dropped. A request
    /// refused before the pipeline was touched (a time past the end) leaves it usable.
    private(set) var isUsable = true
    /// The last request ended with the stream and no frame (`waitAndPull`): a time past the end, or a demuxer that
    /// ended the stream after a seek it could not answer (`OpenedFrameSource` asks a fresh pipeline once).
    private(set) var endedWithoutFrame = false
    /// Seeks sent to the pipeline so far (a forward step sends none): reported by `ThumbnailSet`.
    private(set) var seekCount = 0
    /// The media's duration on the 0-based timeline in ms, when the demuxer knows it (nil for a still image).
    var durationMilliseconds: Int64? {
        guard let timeline,
            let duration = fragmentedEnd.map({ ClockTime(nanoseconds: $0) }) ?? pipeline.duration()
                ?? demuxerDuration
        else { return nil }
        return Self.duration(duration, from: timeline.origin).milliseconds
    }

    /// A duration the demuxer reports (qtdemux's is a stream time), counted from `origin` as the timeline is.
    private static func duration(_ duration: ClockTime, from origin: ClockTime) -> ClockTime {
        origin == .zero ? duration : .milliseconds(max(0, duration.milliseconds - origin.milliseconds))
    }

    /// Builds the pipeline (no look: `request.look` is for the one-shot path only when `keeps` is false), prerolls
    /// it and reads its first frame, within `deadline`. `keeps`: the engine will ask again (forward steps on).
    ///
    /// `seekingFirstTo`: the one time (and tolerance) a one-shot grab will ask for. When the first frame does not
    /// answer it and the file's demuxer is known, the pipeline seeks there before its first preroll
    /// (`FirstSeekHold`) instead of decoding and converting a first frame that would be thrown away.
    ///
    /// `firstKeyframe`: instead, the first question will be `keyframe(before:)` of the time this computes from the
    /// duration (0-based; nil when unknown) — `--time auto`'s first sample. With a known demuxer the pipeline seeks
    /// to that keyframe before its first preroll: the desktop thumbnailer decoded the first keyframe to preroll,
    /// then again after its keyframe seek, whenever that seek led back to it (issue 30). A question for another
    /// time waits for that frame first, then seeks as usual.
    init(
        _ request: FrameRequest, watching formats: PictureFormatWatch, deadline: Deadline, keeps: Bool,
        seekingFirstTo firstTime: (time: ClockTime, tolerance: ClockTime)? = nil,
        firstKeyframe: (@Sendable (ClockTime?) -> ClockTime)? = nil, inputs: DecoderInputs,
        isCancelled: () -> Bool
    ) throws {
        self.request = request
        self.keeps = keeps
        try DolbyVisionReader.refuseUnshowable(request.source)
        try FilmtonePlugin.ensureRegistered()  // ftlut and fttrim, in this process
        let demuxer = Self.knownDemuxer(of: request.source)
        let fragments = FragmentIndex.inspect(request.source)
        readsForwardOnly = fragments.misleadsSeeks
        durationIsReliable = !fragments.hasIndex
        fragmentedEnd = fragments.end
        if let demuxer, demuxer.decodedByLibav {
            // Most likely H.264 or HEVC, which fth264dec and fth265dec decode with libavcodec alone; gst-libav loads
            // only when plugged (4:2:2, 4:4:4, interlaced).
            if request.ownDecoder {
                Libav.preloadInBackground()
            } else {
                GstRuntime.preloadInBackground(FrameRecipe.libavPlugin)
            }
        }
        let pipeline = try Pipeline(
            launch: FrameRecipe.launchDescription(withLook: request.look != nil, demuxer: demuxer.map(\.demuxer)))
        self.pipeline = pipeline
        formats.attach(to: pipeline)
        if let look = request.look {
            let filter = try pipeline.element(named: "look")
            try filter.setProperty("input-lut", .string(look.inputLUT ?? ""))
            try filter.setProperty("creative-lut", .string(look.creativeLUT ?? ""))
            try filter.setProperty("intensity", .double(look.intensity))
            try filter.setProperty("interpolation", .nick(look.interpolation.rawValue))
        }
        var opened = false
        defer { if !opened { pipeline.stop() } }

        // Attached first, so its probe on the decoder's input sees the pictures the skipper then drops too: one
        // dropped for a stated duration too short is found again (`FrameRecipe.droppedStart`).
        inputs.attach(to: pipeline)
        self.inputs = inputs
        let skipper = ReferenceSkipper(inputs: keeps ? inputs : nil)
        skipper.attach(to: pipeline)
        self.skipper = skipper
        if keeps {
            let early = EarlyFrameDrop(inputs: inputs)
            try early.attach(to: pipeline)
            self.early = early
        } else {
            early = nil
        }

        let withoutTimes = AtomicFlag()
        pipeline.element.onDeepElementAdded { element in
            if let name = element.factoryName, FrameRecipe.demuxersWithoutPresentationTimes.contains(name) {
                withoutTimes.set()
            }
        }

        let ownDecoder = request.ownDecoder
        try pipeline.element(named: "src").onAutoplugSelect {
            // libavcodec is opened (or found unopenable) only when H.264 is offered.
            FrameRecipe.autoplugDecision(factory: $0, ownDecoder: ownDecoder && Libav.isAvailable)
        }
        if let demuxer {
            try pipeline.element(named: "source").setProperty("location", .string(demuxer.path))
        } else {
            try pipeline.element(named: "src").setProperty("uri", .string(request.source.uri))
        }
        if request.source.isRemote {
            let source = try pipeline.element(named: "src")
            RemoteSourceSetup.configure(
                source, headers: request.headers,
                timeoutMilliseconds: request.timeoutMilliseconds)
        }

        let sawCaps = AtomicFlag()
        let maxWidth = request.maxWidth
        let maxHeight = request.maxHeight
        let fixedSize = request.outputSize
        let evenHeight = request.evenHeight
        try pipeline.pinColorimetry(before: "prescale")
        // A mezzanine's preview keeps the size it would have had from the source: never prescaled.
        let prescale = try pipeline.fitPrescale(box: fixedSize == nil ? max(maxWidth, maxHeight) : 0)
        try pipeline.fitScaledSize(toneMap: request.toneMap) { upright in
            sawCaps.set()
            let info = prescale.decodedUpright(upright)
            return fixedSize
                ?? FrameRecipe.outputSize(
                    width: info.width, height: info.height, pixelAspect: info.pixelAspect,
                    maxWidth: maxWidth, maxHeight: maxHeight, evenHeight: evenHeight)
        }
        sink = AppSink(element: try pipeline.element(named: "sink"))
        // An MP4's empty edit (video that starts later) sends a GAP first: it would preroll the sink with no frame
        // to pull. Dropped, the sink prerolls on the first real frame.
        sink.element.staticPad("sink")?.dropGapEvents()

        // What the first question is, when the first frame cannot answer it: the pipeline seeks there first.
        enum FirstQuestion {
            case keyframe(@Sendable (ClockTime?) -> ClockTime)
            case time(ClockTime, tolerance: ClockTime)
        }
        let firstQuestion: FirstQuestion? =
            firstKeyframe.map { .keyframe($0) }
            ?? firstTime.flatMap {
                FrameRecipe.accepts(frame: .zero, duration: nil, target: $0.time, tolerance: $0.tolerance)
                    ? nil : .time($0.time, tolerance: $0.tolerance)
            }
        if let demuxer, !keeps, !readsForwardOnly, let firstQuestion {
            let hold = FirstSeekHold()
            let demuxerElement = try pipeline.element(named: demuxer.demuxer.rawValue)
            hold.attach(to: demuxerElement, in: pipeline)
            try pipeline.startPrerolling(remote: false)
            let stall = LocalStallWatch.video(milliseconds: request.localStallMilliseconds, started: { hold.sawVideo })
            if case .ready(let origin) = try Self.waitForFirstKeyframe(
                pipeline, hold, deadline, request, stall: stall, isCancelled: isCancelled)
            {
                let timeline = FrameRecipe.Timeline(origin: origin)
                let target: ClockTime
                let flags: SeekFlags
                switch firstQuestion {
                case .keyframe(let firstKeyframe):
                    // The duration as `durationMilliseconds` will report it once prerolled, so that the first
                    // sample computed from either is the same time.
                    demuxerDuration = hold.duration(of: demuxerElement)
                    let whole = fragmentedEnd.map { ClockTime(nanoseconds: $0) } ?? demuxerDuration
                    let duration = whole.map { Self.duration($0, from: origin) }
                    target = timeline.streamTime(of: firstKeyframe(duration))
                    flags = Self.keyframeFlags
                case .time(let time, let tolerance):
                    // The early refusal of a time past the end, as `frame(at:)` makes it once prerolled.
                    if origin == .zero, durationIsReliable, let duration = hold.duration(of: demuxerElement),
                        time >= duration
                    {
                        throw Self.pastTheEnd(time, duration)
                    }
                    target = timeline.streamTime(of: time)
                    flags = FrameRecipe.seekPlan(tolerance: tolerance)[0]
                }
                guard hold.seek(in: demuxerElement, to: target, flags: flags) else {
                    throw FilmtoneError(
                        .decodeFailed,
                        "seek to \(timeline.time(ofStreamTime: target).milliseconds) ms was refused")
                }
                self.timeline = timeline
                first = nil
                firstSeek = (target, flags)
                decodedSize = (0, 0)  // known once the frame sought is prerolled
                opened = true
                return
            }
            // No keyframe before the end: the preroll ends without a frame, and waiting for it says so.
        } else {
            try pipeline.startPrerolling(remote: request.source.isRemote)
        }
        let first = try Self.waitAndPull(
            pipeline, sink, deadline, request, what: "first frame",
            stall: .video(milliseconds: request.localStallMilliseconds, started: { sawCaps.isSet() }),
            isCancelled: isCancelled)
        self.first = first
        decodedSize = Self.uprightSize(pipeline)
        if first.caps?.video?.isStill == true {
            timeline = nil
        } else {
            // The first frame fixes the timeline (`FrameRecipe.Timeline`): requests and reported times are 0-based.
            guard let start = first.streamTime else { throw FilmtoneError(.decodeFailed, "frame has no timestamp") }
            timeline = FrameRecipe.Timeline(origin: start)
            // No position yet: the first time asked is the one-shot grab's seek, never a step from the first frame
            // (the keyframe before the time may be far closer).
            if withoutTimes.isSet(), let duration = first.duration, duration > .zero {
                countedFrameDuration = duration
                counted = (1, first.presentationTimestamp)
                forward = ((first, .zero), nil)
            }
        }
        opened = true
    }

    deinit { pipeline.stop() }

    /// The prerolled first frame; only a pipeline that sought before its first preroll has none, and it is asked
    /// for its one time only.
    private func prerolledFirst() throws -> Sample {
        guard let first else { throw FilmtoneError(.internalError, "no first frame: the pipeline sought first") }
        return first
    }

    /// The early refusal of a time at or past the duration (on a timeline starting at 0).
    private static func pastTheEnd(_ time: ClockTime, _ duration: ClockTime) -> FilmtoneError {
        FilmtoneError(.decodeFailed, "time \(time.milliseconds) ms is past the end (\(duration.milliseconds) ms)")
    }

    /// The decoded pictures' size (before `prescale` and the turn), 0×0 before any caps.
    private static func uprightSize(_ pipeline: Pipeline) -> (width: Int, height: Int) {
        let decoded = (try? pipeline.element(named: "prescale"))?.staticPad("sink")?.currentCaps?.video
        return (decoded?.width ?? 0, decoded?.height ?? 0)
    }

    /// Before a seek sent ahead of the first preroll: waits until the held demuxer pad has given its first keyframe
    /// (or ended without one), within the deadline, with the local-stall rule, cancellation and the bus's errors
    /// (an audio-only file fails here: nothing links its pads).
    private static func waitForFirstKeyframe(
        _ pipeline: Pipeline, _ hold: FirstSeekHold, _ deadline: Deadline, _ request: FrameRequest,
        stall: LocalStallWatch, isCancelled: () -> Bool
    ) throws -> FirstSeekHold.Outcome {
        let stallDeadline = Deadline(after: stall.milliseconds)
        while true {
            if let outcome = hold.outcome { return outcome }
            if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }
            if deadline.hasPassed { throw sourceFailure(request, timeoutMessage(request, "first frame")) }
            if stallDeadline.hasPassed, !stall.started() { throw FilmtoneError(.decodeFailed, stall.failure) }
            if case .error(let cause)? = pipeline.bus.pop(
                timeout: deadline.remaining(cap: .milliseconds(1)), kinds: [.error])
            {
                throw ErrorClassifier.classify(cause, remote: false)
            }
        }
    }

    /// A local file's demuxer when its first bytes name its container (`FrameRecipe.demuxer(forFileStart:)`); nil
    /// for a remote source, an unreadable start (the pipeline then reports it) or any other container.
    /// `FTGST_NO_KNOWN_DEMUXER=1` type-finds every file (and so prerolls before seeking): a diagnostic switch, and
    /// how the tests prove that the frame returned is identical either way.
    /// Whether a pipeline on `source` can seek before its first preroll (`firstKeyframe`, `seekingFirstTo`): its
    /// demuxer is known from the first bytes and its index can be trusted for seeks.
    static func seeksBeforePreroll(_ source: MediaSource) -> Bool {
        knownDemuxer(of: source) != nil && !FragmentIndex.inspect(source).misleadsSeeks
    }

    private static func knownDemuxer(of source: MediaSource)
        -> (demuxer: FrameRecipe.Demuxer, path: String, decodedByLibav: Bool)?
    {
        guard ProcessInfo.processInfo.environment["FTGST_NO_KNOWN_DEMUXER"] != "1" else { return nil }
        guard case .local(let path) = source, let file = try? POSIXFile(path: path, flags: O_RDONLY) else {
            return nil
        }
        var start = [UInt8](repeating: 0, count: 64)
        let count = start.withUnsafeMutableBytes { (try? file.read(into: $0)) ?? 0 }
        let bytes = Array(start.prefix(count))
        return FrameRecipe.demuxer(forFileStart: bytes).map { ($0, path, FrameRecipe.isLibavVideo(fileStart: bytes)) }
    }

    /// Stops the pipeline (state NULL): its threads end; the object may then go.
    func stop() {
        pipeline.stop()
        position = nil
    }

    /// The frame on screen at `time` (0-based), or within `tolerance` of it, within `deadline`.
    /// `readingForward`: the remote server ignores `Range` (the one-shot grab's second attempt).
    func frame(
        at time: ClockTime, tolerance: ClockTime, deadline: Deadline, readingForward: Bool = false,
        isCancelled: () -> Bool
    ) throws -> GrabbedFrame {
        guard let timeline else { return try frame(from: try prerolledFirst(), time: .zero, still: true) }
        let target = timeline.streamTime(of: time)
        if let sent = firstSeek {
            // Sought before the first preroll: that seek answers its own time; another waits for it first.
            if sent.target == target && sent.flags == FrameRecipe.seekPlan(tolerance: tolerance)[0] {
                let (sample, start) = try seek(to: target, time: time, tolerance: tolerance, deadline, isCancelled)
                decodedSize = Self.uprightSize(pipeline)
                return try frame(from: sample, time: timeline.time(ofStreamTime: start), still: false)
            }
            _ = try waitAndPull(deadline, what: "frame at \(time.milliseconds) ms", isCancelled)
            firstSeek = nil
            decodedSize = Self.uprightSize(pipeline)
        }
        // The prerolled frame answers only when it starts at the target or within the tolerance: its duration
        // does not prove it is still on screen at the target (`FrameRecipe.needsNextFrame`).
        if let first, FrameRecipe.accepts(frame: .zero, duration: nil, target: time, tolerance: tolerance) {
            return try frame(from: first, time: .zero, still: false)
        }

        // Demuxers disagree about what their duration counts from (tsdemux's is a length, qtdemux's a stream
        // time): the early refusal is kept for streams whose timeline starts at 0, where both agree. Elsewhere a
        // seek past the end ends in EOS without a frame, which `waitAndPull` refuses just as well.
        if timeline.origin == .zero, durationIsReliable, let duration = pipeline.duration(), time >= duration {
            throw Self.pastTheEnd(time, duration)
        }
        if readingForward || readsForwardOnly || !pipeline.isSeekable() || countedFrameDuration != nil {
            return try readForward(to: time, tolerance: tolerance, deadline, timeline: timeline, isCancelled)
        }
        isUsable = false  // until this seek or step succeeds
        var answer: (Sample, ClockTime)? = nil
        if keeps, let position, !request.allIntra,
            FrameRecipe.stepsForward(
                from: position.start, to: target, tolerance: tolerance, keyframeInterval: inputs.keyframeInterval)
        {
            answer = try stepForward(from: position, to: target, time: time, deadline, isCancelled)
        }
        let (sample, start) = try answer ?? seek(to: target, time: time, tolerance: tolerance, deadline, isCancelled)
        isUsable = true
        return try frame(from: sample, time: timeline.time(ofStreamTime: start), still: false)
    }

    /// The keyframe at or before `time` (0-based), wherever it is: one keyframe seek, no decoding forward —
    /// `--time auto`'s samples (`FrameInterest`). A still image answers with its prerolled frame; a source read
    /// forward (below) with the frame on screen at `time`.
    func keyframe(before time: ClockTime, deadline: Deadline, isCancelled: () -> Bool) throws -> GrabbedFrame {
        if let sent = firstSeek, let timeline {
            let what = "keyframe before \(time.milliseconds) ms"
            let sample = try waitAndPull(deadline, what: what, isCancelled)
            firstSeek = nil
            decodedSize = Self.uprightSize(pipeline)
            if sent.target == timeline.streamTime(of: time), sent.flags == Self.keyframeFlags {
                // Sought before the first preroll (`firstKeyframe`): the preroll completed on this very keyframe.
                seekCount += 1
                let start = try realStart(of: sample)
                position = Position(sample: sample, start: start)
                isUsable = true
                return try frame(from: sample, time: timeline.time(ofStreamTime: start), still: false)
            }
            // Another time: that frame waited for, the seek below as usual.
        }
        guard let timeline else { return try frame(from: try prerolledFirst(), time: .zero, still: true) }
        // The prerolled first frame is the keyframe before 0; after a seek before the first preroll there is none,
        // and the keyframe seek below finds it.
        if time <= .zero, let first { return try frame(from: first, time: .zero, still: false) }
        // Where a keyframe seek cannot be trusted or made (an AVI's counted frames, a fragmented MP4 whose index
        // misleads seeks, a source that cannot seek), the frame on screen at `time`, read forward: the samples
        // come in ascending order. A keyframe seek on a misleading index showed frame 0 reported at 80 ms.
        if readsForwardOnly || countedFrameDuration != nil || !pipeline.isSeekable() {
            return try readForward(to: time, tolerance: .zero, deadline, timeline: timeline, isCancelled)
        }
        try readyToSeek()
        isUsable = false  // until the seek succeeds
        seekCount += 1
        guard pipeline.seek(to: timeline.streamTime(of: time), flags: Self.keyframeFlags) else {
            throw sourceFailure("seek to \(time.milliseconds) ms was refused")
        }
        let sample: Sample
        do {
            sample = try waitAndPull(deadline, what: "keyframe before \(time.milliseconds) ms", isCancelled)
        } catch let error as FilmtoneError where error.code == .decodeFailed && !deadline.hasPassed {
            // tsdemux answers some key-unit seeks with the end of the stream (a 10-s TS at 4.9 s): as the seek
            // plan does after a key-unit seek that gave nothing, the accurate seek's frame, on screen at `time`.
            return try frame(at: time, tolerance: .zero, deadline: deadline, isCancelled: isCancelled)
        }
        let start = try realStart(of: sample)
        position = Position(sample: sample, start: start)
        isUsable = true
        return try frame(from: sample, time: timeline.time(ofStreamTime: start), still: false)
    }

    /// A keyframe seek: the keyframe at or before the target, nothing decoded past it.
    static let keyframeFlags: SeekFlags = [.flush, .keyUnit, .snapBefore]

    /// Before a flushing seek: a kept pipeline may be PLAYING (after a step or the frame-on-screen rule) or at the
    /// end: back to PAUSED, and what its bus holds from before (ASYNC_DONE, EOS) must not answer the seek's wait.
    private func readyToSeek() throws {
        if keeps {
            if playing {
                pipeline.pause()
                playing = false
            }
            try pipeline.drainBus(remote: request.source.isRemote)
        }
        position = nil
    }

    /// `FrameRecipe.seekPlan` from where the pipeline stands: the keyframe seek when a tolerance allows, then the
    /// accurate one, the dropped-start and frame-on-screen rules after it. Returns the frame and its real start.
    private func seek(
        to target: ClockTime, time: ClockTime, tolerance: ClockTime, _ deadline: Deadline, _ isCancelled: () -> Bool
    ) throws -> (Sample, ClockTime) {
        let what = "frame at \(time.milliseconds) ms"
        try readyToSeek()
        for flags in FrameRecipe.seekPlan(tolerance: tolerance) {
            seekCount += 1
            if let sent = firstSeek, sent.target == target, sent.flags == flags {
                firstSeek = nil  // sent before the first preroll, which now completes on its frame
            } else {
                guard pipeline.seek(to: target, flags: flags) else {
                    throw sourceFailure("seek to \(time.milliseconds) ms was refused")
                }
            }
            var sample = try waitAndPull(deadline, what: what, isCancelled)
            var start = try realStart(of: sample)
            if flags.contains(.accurate) {
                // The inputs in stream time, as `start` and `target` are.
                let entered = inputs.snapshot.compactMap { picture -> FrameRecipe.InputPicture? in
                    guard let pts = sample.streamTime(of: picture.pts) else { return nil }
                    var converted = picture
                    converted.pts = pts
                    converted.dts = picture.dts.flatMap { sample.streamTime(of: $0) }
                    return converted
                }
                if let earlier = FrameRecipe.leadingPictureRestart(after: start, target: target, inputs: entered) {
                    // The picture on screen at the target leads the keyframe the demuxer started from, and was
                    // dropped as undecodable: start from the keyframe before, and play on to the target.
                    seekCount += 1
                    guard pipeline.seek(to: earlier, flags: flags) else {
                        throw sourceFailure("seek to \(time.milliseconds) ms was refused")
                    }
                    sample = try waitAndPull(deadline, what: what, isCancelled)
                    start = try realStart(of: sample)
                } else if let earlier = FrameRecipe.droppedStart(
                    after: start, target: target, inputs: entered.map(\.pts))
                {
                    // The decoder dropped the picture on screen at the target as ending before it (its container
                    // duration was too short): seek to that picture's own start, where it cannot be dropped.
                    seekCount += 1
                    guard pipeline.seek(to: earlier, flags: flags) else {
                        throw sourceFailure("seek to \(time.milliseconds) ms was refused")
                    }
                    sample = try waitAndPull(deadline, what: what, isCancelled)
                    start = try realStart(of: sample)
                }
                position = Position(sample: sample, start: start)
                if FrameRecipe.needsNextFrame(start: start, target: target, tolerance: tolerance) {
                    (sample, start) = try frameOnScreen(
                        after: sample, start: start, target: target, time: time, deadline, isCancelled)
                }
                return (sample, start)
            }
            if FrameRecipe.accepts(frame: start, duration: nil, target: target, tolerance: tolerance) {
                position = Position(sample: sample, start: start)
                return (sample, start)
            }
        }
        throw FilmtoneError(.internalError, "seek plan ended without a frame")
    }

    /// The stream time a sample really starts at: its stamp, or the start the decoder clipped away
    /// (`FrameRecipe.realStart`, from the pictures that entered the decoder).
    private func realStart(of sample: Sample) throws -> ClockTime {
        guard let pts = sample.presentationTimestamp, let stamped = sample.streamTime else {
            throw FilmtoneError(.decodeFailed, "frame has no timestamp")
        }
        let end = sample.duration.map { ClockTime(nanoseconds: pts.nanoseconds + $0.nanoseconds) }
        let start = FrameRecipe.realStart(pts: pts, end: end, inputs: inputs.snapshot)
        return sample.streamTime(of: start) ?? stamped
    }

    /// After an accurate seek handed over a clipped frame: plays on (no clock: `sync=false`) and takes the next
    /// frame for as long as it starts at or before the target (`FrameRecipe.nextReplaces`). The end of the
    /// stream leaves the last frame on screen. Same deadline and cancellation as every wait.
    private func frameOnScreen(
        after prerolled: Sample, start: ClockTime, target: ClockTime, time: ClockTime, _ deadline: Deadline,
        _ isCancelled: () -> Bool
    ) throws -> (Sample, ClockTime) {
        let what = "frame after \(time.milliseconds) ms"
        var current = (sample: prerolled, start: start)
        // Going to PLAYING renders the prerolled buffer again: the first sample pulled may be that one.
        var skipRepeat = true
        play()
        while true {
            guard let next = try nextPlayingSample(deadline, what: what, isCancelled) else {
                position = nil  // at the end: a step from here would find nothing more
                return current
            }
            if skipRepeat {
                skipRepeat = false
                if next.presentationTimestamp == prerolled.presentationTimestamp && next.duration == prerolled.duration
                {
                    continue
                }
            }
            guard let stamped = next.streamTime, FrameRecipe.nextReplaces(next: stamped, target: target) else {
                position = Position(sample: current.sample, start: current.start, lookahead: next)
                return current
            }
            current = (next, try realStart(of: next))
        }
    }

    /// A kept pipeline's forward step from `position` to `target` (stream time, tolerance 0): decodes on, the
    /// frames the target is past dropped before conversion (`EarlyFrameDrop`), and takes the last frame that
    /// starts at or before the target once the next one starts after it (or starts exactly at it). nil when the
    /// stream ends first: the caller seeks, which answers the end exactly as the one-shot grab does.
    private func stepForward(
        from position: Position, to target: ClockTime, time: ClockTime, _ deadline: Deadline,
        _ isCancelled: () -> Bool
    ) throws -> (Sample, ClockTime)? {
        let what = "frame at \(time.milliseconds) ms (decoding forward)"
        // The probe compares buffer timestamps: the target in this segment's terms.
        let bufferTarget = position.sample.bufferTime(ofStreamTime: target)
        early?.aim(at: bufferTarget)
        // Unreferenced pictures the target is past are not decoded at all, as before an exact seek's target.
        skipper.aim(at: bufferTarget)
        defer {
            early?.aim(at: nil)
            skipper.aim(at: nil)
        }
        var current = (sample: position.sample, start: position.start)
        var pending = position.lookahead
        // From PAUSED, going to PLAYING renders the prerolled buffer (the frame last handed out) again.
        var skipRepeat = !playing
        self.position = nil  // until the step is done, the pipeline stands nowhere known
        play()
        while true {
            let next: Sample
            if let kept = pending {
                next = kept
                pending = nil
            } else {
                let shown = current.sample.presentationTimestamp
                guard
                    let pulled = try nextPlayingSample(
                        deadline, what: what, isCancelled, until: { [early] in early?.confirms(last: shown) == true })
                else {
                    guard early?.confirms(last: shown) == true else { return nil }
                    // The next frame is known to start after the target: `current` is the answer.
                    stepsConfirmedAtConversion += 1
                    self.position = Position(sample: current.sample, start: current.start)
                    return current
                }
                next = pulled
            }
            if skipRepeat {
                skipRepeat = false
                if next.presentationTimestamp == position.sample.presentationTimestamp
                    && next.duration == position.sample.duration
                {
                    continue
                }
            }
            guard let stamped = next.streamTime else { continue }
            guard FrameRecipe.nextReplaces(next: stamped, target: target) else {
                if early?.confirms(last: current.sample.presentationTimestamp) == true {
                    stepsConfirmedAtConversion += 1
                }
                self.position = Position(sample: current.sample, start: current.start, lookahead: next)
                return current
            }
            let start = try realStart(of: next)
            guard start > current.start else { continue }  // not after the frame handed out: already seen
            current = (next, start)
            if start == target {
                self.position = Position(sample: next, start: start)
                return current
            }
        }
    }

    private func play() {
        pipeline.play()
        playing = true
    }

    // MARK: - Steps

    /// For a source that cannot seek (a server that ignores `Range`, a demuxer that refuses seeks: tsdemux on a TS
    /// too short for its PCR estimate): plays the pipeline on (no clock: `sync=false`) and takes the frame
    /// `FrameRecipe.forwardStep` picks, so exact times are what a seek would give. A kept pipeline reads on from the
    /// frame it last took (`forward`); a time before that one cannot be reached (`CannotGoBack`: the caller opens
    /// the source again). Errors, EOS, the deadline and cancellation end it; the bus is checked between 50 ms
    /// pulls. A time past the last frame's end is refused as a seek's is.
    private func readForward(
        to time: ClockTime, tolerance: ClockTime, _ deadline: Deadline, timeline: FrameRecipe.Timeline,
        _ isCancelled: () -> Bool
    ) throws -> GrabbedFrame {
        let what = "frame at \(time.milliseconds) ms (reading forward: the source cannot seek)"
        position = nil
        if let taken = forward.taken, taken.time > time {
            isUsable = false
            throw CannotGoBack()
        }
        var previous = forward.taken
        var ahead = forward.ahead
        forward = (nil, nil)
        isUsable = false  // until a frame is taken: the pipeline's place is unknown after a failure
        play()
        while true {
            let next: (sample: Sample, time: ClockTime)
            if let pulled = ahead {
                next = pulled
                ahead = nil
            } else {
                guard let sample = try nextPlayingSample(deadline, what: what, isCancelled) else {
                    // The target lies after the last frame's start: it is on screen unless its end is known and
                    // the target is past it.
                    guard let previous else {
                        throw FilmtoneError(
                            .decodeFailed, "no video frame could be decoded (\(what)): the stream ended first")
                    }
                    if let duration = previous.sample.duration,
                        time.nanoseconds >= previous.time.nanoseconds + duration.nanoseconds
                    {
                        throw FilmtoneError(
                            .decodeFailed,
                            "time \(time.milliseconds) ms is past the end (the last frame ends at "
                                + "\((previous.time.nanoseconds + duration.nanoseconds) / 1_000_000) ms)")
                    }
                    forward = (previous, nil)
                    isUsable = true
                    return try frame(from: previous.sample, time: previous.time, still: false)
                }
                guard let streamTime = sample.streamTime else { continue }
                if let step = countedFrameDuration {
                    let repeated = counted.repeatOf != nil && sample.presentationTimestamp == counted.repeatOf
                    counted.repeatOf = nil
                    if repeated { continue }
                    next = (sample, ClockTime(nanoseconds: UInt64(counted.next) * step.nanoseconds))
                    counted.next += 1
                } else {
                    next = (sample, timeline.time(ofStreamTime: streamTime))
                }
            }
            // Going to PLAYING renders the prerolled (or last taken) buffer again: the same frame, skipped.
            if let previous, next.time == previous.time { continue }
            switch FrameRecipe.forwardStep(
                frame: next.time, hasPrevious: previous != nil, target: time, tolerance: tolerance)
            {
            case .take:
                forward = (next, nil)
                isUsable = true
                return try frame(from: next.sample, time: next.time, still: false)
            case .takePrevious:
                let taken = previous ?? next
                forward = (taken, previous == nil ? nil : next)
                isUsable = true
                return try frame(from: taken.sample, time: taken.time, still: false)
            case .keepReading:
                previous = next
            }
        }
    }

    /// A kept pipeline that cannot seek was asked for a time before the frame it read last: only a new pipeline
    /// reaches it (the engine's warm previews open one).
    struct CannotGoBack: Error, CustomStringConvertible {
        var description: String { "the source cannot seek back" }
    }

    /// The next sample of the PLAYING pipeline; nil at EOS, or as soon as `done` holds. An error on the bus, the
    /// deadline and cancellation end the wait; the bus (and `done`) are checked between pulls of 50 ms (1 ms with
    /// `done`).
    private func nextPlayingSample(
        _ deadline: Deadline, what: String, _ isCancelled: () -> Bool, until done: (() -> Bool)? = nil
    ) throws -> Sample? {
        let slice = ClockTime.milliseconds(done == nil ? 50 : 1)
        while true {
            if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }
            if deadline.hasPassed { throw timedOut(what) }
            if case .error(let cause)? = pipeline.bus.pop(timeout: .zero, kinds: [.error]) {
                throw ErrorClassifier.classify(cause, remote: request.source.isRemote)
            }
            if done?() == true { return nil }
            if let sample = sink.pullSample(timeout: deadline.remaining(cap: slice)) { return sample }
            if sink.isEndOfStream { return nil }
        }
    }

    private func waitAndPull(_ deadline: Deadline, what: String, _ isCancelled: () -> Bool) throws -> Sample {
        endedWithoutFrame = false
        do {
            return try Self.waitAndPull(pipeline, sink, deadline, request, what: what, isCancelled: isCancelled)
        } catch let error as FilmtoneError where error.code == .decodeFailed && error.cause == nil {
            endedWithoutFrame = !deadline.hasPassed && !isCancelled()
            throw error
        }
    }

    /// Waits for ASYNC_DONE (preroll or seek done; the local-stall rule for the first preroll) and pulls the
    /// prerolled sample. EOS with no frame — a truncated file, an empty stream, a seek past the end — is a
    /// failure, never a success.
    private static func waitAndPull(
        _ pipeline: Pipeline, _ sink: AppSink, _ deadline: Deadline, _ request: FrameRequest, what: String,
        stall: LocalStallWatch? = nil, isCancelled: () -> Bool
    ) throws -> Sample {
        try pipeline.wait(
            for: .prerolled, deadline: deadline, remote: request.source.isRemote, stall: stall,
            timedOut: timeoutMessage(request, what), isCancelled: isCancelled)
        guard let sample = sink.pullPreroll(timeout: deadline.remaining()) else {
            if deadline.hasPassed { throw sourceFailure(request, timeoutMessage(request, what)) }
            // An error may have been posted just as preroll ended: prefer its precise classification.
            if case .error(let cause) = pipeline.waitForAsyncDone(deadline: Deadline(after: 0), isCancelled: { false })
            {
                throw ErrorClassifier.classify(cause, remote: request.source.isRemote)
            }
            throw FilmtoneError(
                .decodeFailed,
                "no video frame could be decoded (\(what)): the media is empty, "
                    + "truncated, has no video, or the time is past its end")
        }
        return sample
    }

    private static func timeoutMessage(_ request: FrameRequest, _ what: String) -> String {
        "timed out after \(request.timeoutMilliseconds) ms waiting for the \(what)"
    }

    private func timedOut(_ what: String) -> FilmtoneError {
        Self.sourceFailure(request, Self.timeoutMessage(request, what))
    }

    private func sourceFailure(_ message: String) -> FilmtoneError { Self.sourceFailure(request, message) }

    /// A failure to get data where it is not known which part failed: the network for a remote source.
    private static func sourceFailure(_ request: FrameRequest, _ message: String) -> FilmtoneError {
        FilmtoneError(request.source.isRemote ? .remoteFetchFailed : .decodeFailed, message)
    }

    private func frame(from sample: Sample, time: ClockTime, still: Bool) throws -> GrabbedFrame {
        let image = try sample.withMappedFrame { view in
            // Copy rows by stride into a tightly packed image: the mapped rows may be padded.
            var pixels = [UInt8](repeating: 0, count: view.width * view.height * 3)
            pixels.withUnsafeMutableBufferPointer { out in
                for y in 0..<view.height {
                    (out.baseAddress! + y * view.width * 3).update(from: view.row(y), count: view.width * 3)
                }
            }
            return RGBImage(width: view.width, height: view.height, pixels: pixels)
        }
        return GrabbedFrame(
            image: image, time: time, isStill: still, skippedPictures: skipper.skippedCount, soughtFirst: first == nil,
            decoder: inputs.decoderName, copiedPictures: inputs.ownDecoderCopies,
            stepsConfirmedAtConversion: stepsConfirmedAtConversion)
    }
}

/// While a kept pipeline steps forward to a target, drops each decoded frame the target is already known to be
/// past (`FrameRecipe.steppedOver`: a later picture starting at or before the target entered the decoder) at the
/// input of the first `videoconvert`, so a frame stepped over costs its decoding only, not its conversion to RGB,
/// flip and scaling. Aimed only during a step (`aim(at:)`); otherwise every frame passes.
///
/// It also tells when a step's answer is known before the next frame reaches the sink (`confirms(last:)`): frames
/// enter the converter in order, so once one starting after the target has passed here, the last one passed that
/// starts at or before it is the answer. The step then returns without waiting for the next frame's conversion and
/// scaling (≈ 7 ms at 1080p); that frame reaches the sink afterwards and is where the next step starts reading.
final class EarlyFrameDrop: Sendable {
    private let inputs: DecoderInputs
    /// The target, as a buffer timestamp of the current segment (nil: not stepping), and what passed the probe
    /// since it was set: the start of the last frame at or before it, and whether one after it passed.
    private let state = Mutex<(target: ClockTime?, lastBefore: ClockTime?, pastTarget: Bool)>((nil, nil, false))

    init(inputs: DecoderInputs) { self.inputs = inputs }

    /// Probes the input of the recipe's `decoded` element.
    func attach(to pipeline: Pipeline) throws {
        guard let pad = try pipeline.element(named: "decoded").staticPad("sink") else {
            throw FilmtoneError(.internalError, "the decoded frames' converter has no sink pad")
        }
        // Captures this object and the inputs only, never the pipeline (which owns the pad and so the probe).
        pad.onData { [self] item in
            guard case .buffer(let buffer) = item, let pts = buffer.presentationTimestamp,
                let target = state.withLock({ $0.target })
            else { return .pass }
            if inputs.steppedOver(pts: pts, target: target) { return .drop }
            state.withLock { state in
                guard state.target == target, !state.pastTarget else { return }
                if pts <= target { state.lastBefore = pts } else { state.pastTarget = true }
            }
            return .pass
        }
    }

    /// Whether the frame starting at `pts` (a buffer time) is the current step's answer: it was the last frame at or
    /// before the target to enter the converter, and a later one has entered since.
    func confirms(last pts: ClockTime?) -> Bool {
        state.withLock { $0.target != nil && $0.pastTarget && pts != nil && $0.lastBefore == pts }
    }

    /// Sets (or clears) the target. An own decoder is given the same rule, so that it does not even copy out the
    /// pictures this probe would drop (`LibavDecoderState.discard`): a 0.5 s step over a 1080p clip copied 15
    /// pictures of 3 MiB to show one.
    func aim(at target: ClockTime?) {
        state.withLock { $0 = (target, nil, false) }
        guard let own = inputs.ownDecoder else { return }
        if let target {
            own.discard = { [inputs] pts in inputs.steppedOver(pts: ClockTime(nanoseconds: pts), target: target) }
        } else {
            own.discard = nil
        }
    }
}
