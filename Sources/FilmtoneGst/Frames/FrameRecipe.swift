import FilmtoneElements
import FilmtoneLooks
import Foundation
import GstKit
import Synchronization

/// The pure part of grabbing one frame: which elements, which caps, when to seek and how. No GStreamer calls,
/// so every decision has a unit test that needs no media.
enum FrameRecipe {
    /// Decode whatever the URI holds, turn it upright (`video-direction=auto` follows the stream's
    /// `image-orientation` tag: MP4 rotation, and JPEG EXIF once `jpegparse` is plugged), convert to RGB, scale,
    /// and — for a preview — apply the look. The first `videoconvert` is a pass-through unless the decoder's
    /// format is one `videoflip` cannot take (10-bit formats in 1.22). Thumbnails shrink a lot (1080p → 320
    /// wide is 6×): videoscale's default 2-tap bilinear aliases there (28.7 dB PSNR against ffmpeg's bicubic
    /// on the bench clip), and scaling 4:2:0 first leaves quarter-resolution chroma (26.7 dB); RGB first, then
    /// lanczos, gives 43.7 dB for one full-size conversion per output frame. The look runs after scaling: a
    /// preview shows the look at the size it is seen, and pays for those pixels only.
    /// `uri` and the look's settings are set as properties afterwards, never spliced into this text. The first
    /// `videoconvert` is named `decoded`: a kept pipeline drops the frames it steps over at its input
    /// (`EarlyFrameDrop`), before anything but their decoding was spent on them.
    ///
    /// `demuxer`: a local file whose container is known from its first bytes (`demuxer(forFileStart:)`) is read by
    /// `filesrc` (named `source`, as `uridecodebin`'s is) and that demuxer (named after its factory, as errors show
    /// it), whose first video pad feeds `decodebin` (named `src`): no
    /// type-finding pass over the file, no multiqueue between demuxer and decoder. That costs ≈ 9 ms and 9 MB
    /// less than `uridecodebin` for a 1080p MP4 (docs/PERFORMANCE.md). Another stream of the file (audio) is left
    /// unlinked; a file with no video stream fails at once ("not-linked"), as it does through `uridecodebin`.
    ///
    /// HDR to SDR: `tonemap` is an `ftlut` whose input slot the upright caps fill (`toneMap(colorimetry:enabled:)`)
    /// with a generated tone map. For an SDR source it is in pass-through and the `rgb` and `size` filters say
    /// RGB, so the `videoconvert` after it passes through too: the same pixels as without it. For a PQ or HLG
    /// source both filters are set to `deepFormat` (16-bit RGB) with the size, so the 10 bits decoded reach the
    /// tone curve whole, scaled; only after it are they reduced to 8-bit RGB.
    static func launchDescription(withLook: Bool, demuxer: Demuxer? = nil) -> String {
        let input =
            demuxer.map {
                "filesrc name=source ! \($0.rawValue) name=\($0.rawValue) \($0.rawValue).video_0 ! decodebin name=src"
            }
            ?? "uridecodebin name=src"
        let threads = scalerThreads
        return """
            \(input) ! videoconvert name=decoded ! videoscale name=prescale method=lanczos n-threads=\(threads) \
            ! capsfilter name=presize ! videoflip name=flip video-direction=auto \
            ! videoconvert ! capsfilter name=rgb caps=video/x-raw,format=RGB \
            ! videoscale method=lanczos n-threads=\(threads) \
            ! capsfilter name=size caps=video/x-raw,format=RGB,pixel-aspect-ratio=1/1 \
            ! \(LUTFilterElement.factoryName) name=tonemap ! videoconvert ! video/x-raw,format=RGB \
            \(withLook ? "! \(LUTFilterElement.factoryName) name=look " : "")\
            ! appsink name=sink sync=false max-buffers=1 enable-last-sample=false
            """
    }

    /// A demuxer `launchDescription` may name for a local file instead of type-finding it.
    enum Demuxer: String, Equatable {
        case isoMedia = "qtdemux"
        case matroska = "matroskademux"
    }

    /// ISO base media brands of still pictures (HEIF, AVIF): left to `uridecodebin`, whose type finder tells them
    /// apart (`PictureFormats` refuses them with the reason).
    static let pictureBrands: Set<String> = [
        "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1", "avif", "avis",
    ]

    /// The demuxer for a file that starts with `bytes`, when they name the container beyond doubt: an ISO base
    /// media file (MP4, MOV, 3GP: a `ftyp` box first, not a picture brand) or an EBML header (Matroska, WebM). Any
    /// other start (a TS, an image, a QuickTime file without `ftyp`, too few bytes): nil, type-found as before.
    static func demuxer(forFileStart bytes: [UInt8]) -> Demuxer? {
        if bytes.count >= 4, bytes[0..<4] == [0x1A, 0x45, 0xDF, 0xA3] { return .matroska }
        guard bytes.count >= 12, String(decoding: bytes[4..<8], as: UTF8.self) == "ftyp" else { return nil }
        let size = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        guard size >= 16 else { return nil }
        // Every brand the box lists (major, then compatible ones after the minor version) must be a video one:
        // a HEIF picture may name `mif1` anywhere.
        var brands = [String(decoding: bytes[8..<12], as: UTF8.self)]
        var offset = 16
        while offset + 4 <= min(size, bytes.count) {
            brands.append(String(decoding: bytes[offset..<offset + 4], as: UTF8.self))
            offset += 4
        }
        return brands.contains(where: pictureBrands.contains) ? nil : .isoMedia
    }

    /// The format of the `rgb` and `size` filters when a tone map is applied: 16-bit RGB, which videoconvert,
    /// videoscale (lanczos) and `ftlut` (`LUTKernel16`) all take.
    static let deepFormat = "RGBA64_LE"

    /// The tone map for upright caps' `colorimetry` string: PQ or HLG by its transfer (`bt2100-pq`,
    /// `bt2100-hlg`, or the numeric form), when `enabled`; nil for anything else. The BT.2020 primaries HDR10
    /// and HLG broadcast use are assumed (`ToneMap`).
    static func toneMap(colorimetry: String?, enabled: Bool) -> ToneMap.Transfer? {
        guard enabled, let report = colorimetry.flatMap(ProbeRules.colorimetry(parsing:)) else { return nil }
        return ProbeRules.hdr(transfer: report.transfer).toneMap
    }

    /// A PQ source's tone map (`tonemap`, an `ftlut`) takes its peak from HDR10's metadata in its caps `info`
    /// (MaxCLL, else the mastering peak: `ToneMap.sourcePeak`); any other source leaves it alone.
    static func setToneMapPeak(_ toneMap: Element, for info: VideoCapsInfo) {
        guard Self.toneMap(colorimetry: info.colorimetry, enabled: true) == .pq else { return }
        let peak = ToneMap.sourcePeak(maxContentLight: info.maxContentLight, masteringPeak: info.masteringPeak)
        try? toneMap.setProperty("tone-map-peak", .double(peak))
    }

    /// The output size for a frame of `width`×`height` coded pixels with `pixelAspect`: the display size
    /// (width × PAR) scaled by `min(maxWidth/w, maxHeight/h, 1)` — aspect kept, never upscaled, at least 1×1.
    /// `evenHeight` (storyboard tiles, as ffmpeg's `scale=W:-2`): the height is the nearest even number instead,
    /// at least 2.
    static func outputSize(
        width: Int, height: Int, pixelAspect: Fraction, maxWidth: Int, maxHeight: Int, evenHeight: Bool = false
    ) -> (width: Int, height: Int) {
        let par = pixelAspect.numerator > 0 && pixelAspect.denominator > 0 ? pixelAspect.value : 1
        let displayWidth = Double(width) * par
        let displayHeight = Double(height)
        guard displayWidth > 0, displayHeight > 0 else { return (1, 1) }
        let scale = min(Double(maxWidth) / displayWidth, Double(maxHeight) / displayHeight, 1)
        let scaledWidth = max(1, Int((displayWidth * scale).rounded()))
        guard evenHeight else { return (scaledWidth, max(1, Int((displayHeight * scale).rounded()))) }
        return (scaledWidth, max(2, 2 * Int((displayHeight * scale / 2).rounded())))
    }

    /// The size `presize` brings a decoded picture of `width`×`height` (pixel aspect `pixelAspect`) to, before it is
    /// turned and converted, for an output within `box`×`box` (a turn may yet swap the output's width and height):
    /// its display size fitted into a square twice that side, in square pixels, when that at least halves it; nil:
    /// it stays as decoded. Twice the side, so that the 4:2:0 picture's chroma still has the output's resolution
    /// when the RGB picture is scaled down the rest of the way (`Pipeline.fitPrescale`).
    static func prescaledSize(width: Int, height: Int, pixelAspect: Fraction, box: Int) -> (width: Int, height: Int)? {
        let par = pixelAspect.numerator > 0 && pixelAspect.denominator > 0 ? pixelAspect.value : 1
        let side = 2 * box
        guard box > 0, max(Double(width) * par, Double(height)) >= 2 * Double(side),
            ProcessInfo.processInfo.environment["FTGST_NO_PRESCALE"] != "1"
        else { return nil }
        return outputSize(width: width, height: height, pixelAspect: pixelAspect, maxWidth: side, maxHeight: side)
    }

    /// The capsfilter's caps once the upright input size is known (`format`: `deepFormat` for a tone map).
    static func outputCaps(width: Int, height: Int, format: String = "RGB") -> String {
        "video/x-raw,format=\(format),width=\(width),height=\(height),pixel-aspect-ratio=1/1"
    }

    /// Whether a decoded frame at stream time `frame` (lasting `duration`) answers a request for `target` with
    /// `tolerance`: it is the frame on screen at `target`, or it lies within the tolerance of it.
    static func accepts(frame: ClockTime, duration: ClockTime?, target: ClockTime, tolerance: ClockTime) -> Bool {
        let end = frame.nanoseconds + max(duration?.nanoseconds ?? 1, 1)
        if frame <= target && target.nanoseconds < end { return true }
        let distance = frame > target ? frame.nanoseconds - target.nanoseconds : target.nanoseconds - frame.nanoseconds
        return distance <= tolerance.nanoseconds
    }

    // MARK: - Timeline

    /// Every command's 0-based timeline: time 0 is the first video frame's start, as `probe`, ffmpeg's `-ss` and
    /// players count. Demuxers disagree about where their stream time starts (an MPEG-TS at its first PTS, an
    /// MP4 with an empty edit at the edit's end), so the first frame's stream time is the `origin`: reported
    /// times have it taken off, seeks have it added back. A seek is a stream time for every demuxer tried
    /// (qtdemux, matroskademux, tsdemux: tsdemux's segment after a seek says `start` = `time` = the position
    /// sought, unlike its first segment), so the same origin serves both ways.
    struct Timeline: Equatable {
        var origin: ClockTime

        /// The stream time of `time` on the 0-based timeline.
        func streamTime(of time: ClockTime) -> ClockTime {
            ClockTime(nanoseconds: origin.nanoseconds + time.nanoseconds)
        }

        /// The 0-based time of stream time `streamTime`; a time before the first frame is 0.
        func time(ofStreamTime streamTime: ClockTime) -> ClockTime {
            ClockTime(nanoseconds: streamTime > origin ? streamTime.nanoseconds - origin.nanoseconds : 0)
        }
    }

    /// What the frame pipeline's decodebin plugs: everything it offers, except `pngparse`. GStreamer 1.22's PNG parser
    /// gathers a whole picture in a way that costs time quadratic in the file's size, mostly in the kernel (a 24 MP, 67
    /// MB PNG: 15 s of system time in `filesrc ! pngparse ! fakesink`, against 2 s for `filesrc ! pngdec`), so such a
    /// photo's preview hit the 5 s local-stall rule and failed. `pngdec` finds the picture's end itself.
    ///
    /// H.264, HEVC and AV1 that ftgst's own decoders take (`LibavDecoderElement.accepting`: 8- or 10-bit 4:2:0,
    /// progressive) are decoded by them, `fth264dec`, `fth265dec` and `ftav1dec`, unless `ownDecoder` is false: every
    /// other video decoder offered for those caps (`avdec_h264`, `avdec_h265`, `av1dec`, ranked above them) is skipped, so the pictures are
    /// libavcodec's on every machine, without loading gst-libav (docs/PERFORMANCE.md, "fth264dec"). `ownDecoder` is
    /// asked only for such caps and for the own decoders: false when the request says so, or libavcodec cannot be
    /// opened (`Libav.shared`: another major version, a missing library), and every such job then decodes with
    /// gst-libav; the own decoders themselves are then skipped too (offered when gst-libav's are missing or ranked
    /// away, they would decode after all).
    static func autoplugDecision(factory: FactoryDescription, ownDecoder: @autoclosure () -> Bool) -> AutoplugDecision {
        if factory.name == "pngparse" { return .skip }
        return decoderDecision(factory: factory, ownDecoder: ownDecoder())
    }

    /// The video decoder part of `autoplugDecision`, alone: what an export's decodebin uses (it keeps `pngparse`).
    static func decoderDecision(factory: FactoryDescription, ownDecoder: @autoclosure () -> Bool) -> AutoplugDecision {
        if LibavDecoderElement.isOwn(factory.name) { return ownDecoder() ? .tryElement : .skip }
        guard factory.klass.contains("Decoder/Video"),
            let caps = factory.caps, LibavDecoderElement.accepting(caps) != nil, ownDecoder()
        else { return .tryElement }
        return .skip
    }

    /// The frame threads each frame pipeline's own decoder (`fth264dec`, `fth265dec`) decodes with; nil: one per
    /// processor. `Batch.run` sets 1 while it runs as many workers as there are processors: each worker then decodes on
    /// one core, which on the bench's 40 exact thumbnails costs 11 % less time than two workers of two threads each
    /// contending for two cores (libavcodec alone, docs/PERFORMANCE.md, "Batch"). Process-wide: a library user's other
    /// frame jobs running during a batch decode on one thread each too.
    static var decoderThreads: Int? {
        get { decoderThreadSetting.withLock { $0 } }
        set { decoderThreadSetting.withLock { $0 = newValue } }
    }
    private static let decoderThreadSetting = Mutex<Int?>(nil)

    /// The threads each of a frame pipeline's scalers splits a picture's lines over (`videoscale n-threads`): as many
    /// as the decoder's frame threads (`decoderThreads`, else one per processor), so a batch's workers scale on one
    /// core each. The lines come out the same whatever the count (`FrameGrabberTests`); `videoconvert` is not split:
    /// with bands, its 4:2:0 chroma upsampling differs at their edges for 10-bit sources.
    static var scalerThreads: Int { decoderThreads ?? ProcessInfo.processInfo.activeProcessorCount }

    /// Whether `error`, from a pipeline whose video decoder was an own one, is one that decoder can have caused: an
    /// error it posted, or a not-negotiated flow (caps it refused). Such a pipeline may be run again with gst-libav
    /// (`OpenedFrameSource`, the export's rendering).
    static func ownDecoderCaused(_ error: Error) -> Bool {
        guard let cause = (error as? FilmtoneError)?.cause else { return false }
        return LibavDecoderElement.isOwn(cause.factory) || (cause.debug ?? "").contains("not-negotiated")
    }

    /// `FTGST_NO_OWN_DECODER=1` decodes H.264 and HEVC with gst-libav instead of `fth264dec`/`fth265dec`: a diagnostic
    /// switch, and how the tests prove that the frame returned is identical either way.
    static var ownDecoderEnabled: Bool { ProcessInfo.processInfo.environment["FTGST_NO_OWN_DECODER"] != "1" }

    /// Demuxers whose streams carry no presentation times a seek could trust: `avidemux` (AVI stores a frame rate
    /// and the pictures in decoding order; it stamps keyframes with their place in that order, which B-frames make
    /// wrong, and nothing else). Their sources are read forward and their frames counted (`OpenedFrameSource`).
    static let demuxersWithoutPresentationTimes: Set<String> = ["avidemux"]

    /// GStreamer's plugin of libav decoders (`avdec_h264`, `avdec_h265`…).
    static let libavPlugin = "libav"

    /// Whether a file starting with `bytes`, of a known container, most likely holds video that libav decodes: an
    /// MP4/MOV or Matroska file (H.264, HEVC), not a WebM (VP8/VP9/AV1: libvpx and dav1d rank first), whose
    /// EBML header names its DocType `webm` (`MimeTypes.matroskaDocType`). Only a hint for preloading the plugin
    /// (`GstRuntime`).
    static func isLibavVideo(fileStart bytes: [UInt8]) -> Bool {
        guard let demuxer = demuxer(forFileStart: bytes) else { return false }
        return demuxer != .matroska || MimeTypes.matroskaDocType(bytes) != "webm"
    }

    /// The stream time of the first frame a decoder would hand over from a stream whose first keyframe is stamped
    /// `keyframe` in a segment starting at `segmentStart` (stream time `segmentTime`): a frame before the segment
    /// start is clipped to it, or dropped so that the next one comes out at it (`FirstSeekHold`).
    static func firstFrameTime(keyframe: ClockTime, segmentStart: ClockTime, segmentTime: ClockTime) -> ClockTime {
        let start = max(keyframe, segmentStart)
        return ClockTime(nanoseconds: segmentTime.nanoseconds + (start.nanoseconds - segmentStart.nanoseconds))
    }

    // MARK: - The frame on screen

    /// A picture as it entered the video decoder: its container timestamp and duration (if stated).
    struct InputPicture: Equatable {
        var pts: ClockTime
        var duration: ClockTime?
        /// Not flagged a delta unit by the parser: decoding may start here.
        var isKeyframe = false
        /// Its decoding timestamp, when the container gives one (MP4: a keyframe's is earlier than its PTS when
        /// pictures after it in decoding order are shown before it).
        var dts: ClockTime? = nil

        var end: ClockTime? { duration.map { ClockTime(nanoseconds: pts.nanoseconds + $0.nanoseconds) } }
    }

    /// The real start of a decoded frame stamped `pts` and ending at `end`. GstVideoDecoder clips the frame that
    /// straddles an accurate seek's segment start: its PTS becomes the segment start, its end is kept. The real
    /// start is the PTS of the picture that went in with that end; without durations, the latest picture that
    /// went in at or before the stamp. No frame-rate arithmetic: a variable-rate clip's average rate says nothing
    /// about one frame (it put a frame at 1000 ms at 988). Nothing known: the stamp is the best there is.
    static func realStart(pts: ClockTime, end: ClockTime?, inputs: [InputPicture]) -> ClockTime {
        let candidates = inputs.filter { $0.pts <= pts }
        if let end, let same = candidates.filter({ $0.end == end }).map(\.pts).max() { return same }
        return candidates.map(\.pts).max() ?? pts
    }

    /// Whether a frame from an accurate seek must be checked against the next one before it is taken: it was
    /// clipped (it starts before the target) by more than the tolerance. Its own duration cannot tell whether it
    /// is still on screen at the target: containers with millisecond timestamps (Matroska, WebM) give a frame
    /// at 967 ms an end of 1000.33 ms while the next starts at 1000, so the decoder clips the frame before the
    /// one that starts exactly at the target and hands it over first. Only the next frame's start tells.
    static func needsNextFrame(start: ClockTime, target: ClockTime, tolerance: ClockTime) -> Bool {
        start < target && target.nanoseconds - start.nanoseconds > tolerance.nanoseconds
    }

    /// After an accurate seek to `target` handed over a frame starting at `start`, later than the target: the
    /// start of a picture that entered the decoder at or before the target but never came out, if any. The
    /// decoder drops pictures it believes end before the segment start, and believes their container duration:
    /// in an MP4 with B-frames and a variable rate that is the decode-time step (1 ms for the first frames of
    /// an ffmpeg VFR clip), so the frame on screen at the target is dropped. Seeking to this start gets it.
    static func droppedStart(after start: ClockTime, target: ClockTime, inputs: [ClockTime]) -> ClockTime? {
        guard start > target else { return nil }
        return inputs.filter { $0 <= target }.max()
    }

    /// After an accurate seek handed over a frame starting after `target`: when a picture that entered the decoder
    /// at or before the target never came out because it leads the keyframe the decoding started from — it came
    /// in after that keyframe but is shown before it, as an open GOP's RASL pictures (HEVC's CRA, H.264's
    /// recovery point) are, which refer to the GOP before and are dropped by a decoder that starts at the
    /// keyframe —, the position (buffer time) to seek to instead: just before that keyframe's decoding time, so
    /// that the demuxer starts from the keyframe before it (qtdemux picks a keyframe by decoding time, so a target
    /// between an open-GOP keyframe's DTS and PTS starts there). The frame on screen at the target is then reached
    /// by playing on. nil when no picture was lost that way.
    static func leadingPictureRestart(after start: ClockTime, target: ClockTime, inputs: [InputPicture])
        -> ClockTime?
    {
        guard start > target, let keyIndex = inputs.firstIndex(where: \.isKeyframe) else { return nil }
        let keyframe = inputs[keyIndex]
        let leads = inputs[(keyIndex + 1)...].contains { $0.pts < keyframe.pts && $0.pts <= target }
        let decodedAt = min(keyframe.dts ?? keyframe.pts, keyframe.pts)
        guard leads, decodedAt > .zero else { return nil }
        return ClockTime(nanoseconds: decodedAt.nanoseconds - 1)
    }

    /// Whether a decoded frame stamped `pts` cannot be the frame on screen at `target` because a picture starting
    /// after it and at or before the target has already entered the decoder (`inputs`, in the same buffer-time
    /// terms): that one, or a later one, is on screen there. A frame it cannot tell about is kept. Used while a
    /// kept pipeline steps forward with tolerance 0; all times are buffer timestamps.
    static func steppedOver(pts: ClockTime, target: ClockTime, inputs: some Sequence<ClockTime>) -> Bool {
        pts < target && inputs.contains { $0 > pts && $0 <= target }
    }

    /// How far past the frame a kept pipeline last handed out a new exact time is reached by decoding on (a
    /// forward step, `OpenedFrameSource`) rather than by an accurate seek, which decodes again from the keyframe
    /// before the target. 2 s: at 30 fps, 60 frames decoded and dropped before conversion; an accurate seek within
    /// a 250-frame GOP may decode up to 250. A jump backward, or further, seeks.
    static let forwardStepWindow = ClockTime.milliseconds(2000)

    /// Whether a kept pipeline standing at stream time `position` (its last frame handed out) reaches `target`
    /// by a forward step: only for exact frames (`tolerance` 0, where a seek's answer is the frame on screen at
    /// the target, which decoding on finds identically), only forward and within `forwardStepWindow`.
    ///
    /// `keyframeInterval`: the longest gap seen between two keyframes that entered the decoder one after the other
    /// (`DecoderInputs.keyframeInterval`). A target further ahead than that has a keyframe before it, from which a
    /// seek decodes fewer pictures than the step would (a phone's 1 s GOP, times 2 s apart), so it seeks.
    static func stepsForward(
        from position: ClockTime, to target: ClockTime, tolerance: ClockTime, keyframeInterval: ClockTime? = nil
    ) -> Bool {
        guard tolerance == .zero, target > position else { return false }
        let distance = target.nanoseconds - position.nanoseconds
        if let keyframeInterval, distance > keyframeInterval.nanoseconds { return false }
        return distance <= forwardStepWindow.nanoseconds
    }

    /// Whether the next decoded frame, stamped `next`, replaces the current one: it starts at or before the
    /// target, so the current one is not on screen there.
    static func nextReplaces(next: ClockTime, target: ClockTime) -> Bool { next <= target }

    /// What to do with a frame met while reading forward (a remote source that cannot seek), frames arriving in
    /// order from the start.
    enum ForwardStep: Equatable {
        /// This frame answers the request.
        case take
        /// This frame starts after the target and the one before it was on screen at the target: take that one.
        case takePrevious
        /// The target is still ahead.
        case keepReading
    }

    /// The rule for reading forward: a frame that starts at the target or within the tolerance of it is taken;
    /// the first frame that starts after the target means the one before it is the frame on screen at the target
    /// (or, when there is none, the stream starts after the target and this first frame is the nearest); anything
    /// earlier is read past. A frame's own duration is not trusted to say it is on screen (see
    /// `needsNextFrame`): the next frame's start says it.
    static func forwardStep(frame: ClockTime, hasPrevious: Bool, target: ClockTime, tolerance: ClockTime)
        -> ForwardStep
    {
        if accepts(frame: frame, duration: nil, target: target, tolerance: tolerance) { return .take }
        if frame > target { return hasPrevious ? .takePrevious : .take }
        return .keepReading
    }

    /// `GST_RESOURCE_ERROR_SEEK`: what `souphttpsrc` posts when a server answers a Range request with the whole
    /// body ("Server does not support seeking."). Until that answer the source reports itself seekable.
    static let resourceSeekErrorCode = 11

    /// Whether `cause` says the HTTP server cannot seek (it ignores `Range`): the grab is then done again reading
    /// forward.
    static func isRangeRefusal(_ cause: FilmtoneError.GStreamerCause?) -> Bool {
        guard let cause else { return false }
        return cause.domain == "resource" && cause.code == resourceSeekErrorCode && cause.factory == "souphttpsrc"
    }

    /// The seeks to try, in order, after the prerolled frame did not answer the request: the keyframe before
    /// the target first when a tolerance allows it (cheap: no decoding forward), then an accurate seek (decodes
    /// from the keyframe up to the exact frame).
    static func seekPlan(tolerance: ClockTime) -> [SeekFlags] {
        let accurate: SeekFlags = [.flush, .accurate]
        guard tolerance > .zero else { return [accurate] }
        return [[.flush, .keyUnit, .snapBefore], accurate]
    }
}
