internal import CGst
import CLibav
import Foundation
import GstKit
import Synchronization

// MARK: - ftx264enc: H.264 through libavcodec's libx264, holding no picture x264 has copied
//
// gst-launch-1.0 … ! video/x-raw,format=I420 ! ftx264enc speed-preset=veryfast crf=20 ! h264parse ! mp4mux ! …
//
// A GstVideoEncoder over the same x264 library `x264enc` and `ffmpeg -c:v libx264` use, through libavcodec's wrapper
// (the one ffmpeg calls, so the settings mean what `-preset`, `-crf`, `-g` mean there). It exists for memory:
// GstVideoEncoder keeps each input frame, and with it the input picture, until the frame's encoded data comes out,
// and `x264enc` also keeps every picture mapped until then. x264 copies a picture into its own frame as it is given
// one, then holds it for its lookahead, B-frames and frame threads: ≈ 15 pictures at veryfast, 3 MiB each at 1080p,
// kept twice under x264enc. Here the picture goes to libavcodec wrapped in a buffer whose release unmaps it, and the
// base class's reference is dropped at once: a picture lives until x264 has copied it (`heldPeak`), as under ffmpeg.
//
// 8-bit 4:2:0 (I420) in, byte-stream H.264 out (h264parse makes `avc` for a muxer). Timestamps: libx264 counts
// pictures (a time base of one frame, as ffmpeg's does), the presentation time of each picture is kept by its number,
// and an output's decoding time is the presentation time of the picture whose number x264 gives as its DTS
// (`DecodeTimes`), moved before the first picture by whole frames for B-frames' first DTS; the base class's
// `min-pts` keeps those times positive, as x264enc does.

/// The libavcodec and libavutil functions `ftx264enc` calls besides the decoders' (`Libav`), looked up in the same
/// libraries once `Libav.shared` has opened and checked them.
struct LibavEncoding: @unchecked Sendable {
    // @unchecked: C function pointers, immutable once loaded.
    typealias FindEncoder = @convention(c) (UnsafePointer<CChar>?) -> UnsafePointer<AVCodec>?
    typealias SendFrame = @convention(c) (UnsafeMutablePointer<AVCodecContext>?, UnsafePointer<AVFrame>?) -> Int32
    typealias ReceivePacket =
        @convention(c) (UnsafeMutablePointer<AVCodecContext>?, UnsafeMutablePointer<AVPacket>?) -> Int32
    typealias DictSet =
        @convention(c) (UnsafeMutablePointer<OpaquePointer?>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32) ->
        Int32
    typealias DictFree = @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Void
    typealias Release = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?) -> Void
    typealias BufferCreate =
        @convention(c) (UnsafeMutablePointer<UInt8>?, Int, Release?, UnsafeMutableRawPointer?, Int32) ->
        UnsafeMutablePointer<AVBufferRef>?

    let libav: Libav
    let findEncoder: FindEncoder
    let sendFrame: SendFrame
    let receivePacket: ReceivePacket
    let dictSet: DictSet
    let dictFree: DictFree
    let bufferCreate: BufferCreate

    /// Loaded once per process (the library is `Libav.libraryName`'s).
    static let shared: Result<LibavEncoding, Libav.LibavLoadError> = load()

    private static func load() -> Result<LibavEncoding, Libav.LibavLoadError> {
        let libav: Libav
        switch Libav.shared {
        case .success(let loaded): libav = loaded
        case .failure(let error): return .failure(error)
        }
        // Opened again only to look more names up: the same handles, already loaded and version-checked.
        guard let codec = dlopen(Libav.libraryName, RTLD_NOW | RTLD_LOCAL),
            let util = dlopen(Libav.utilityLibraryName, RTLD_NOW | RTLD_LOCAL)
        else { return .failure(Libav.LibavLoadError(description: Libav.dlErrorText())) }
        let table = Libav.SymbolTable()
        let findEncoder: FindEncoder? = table.function(codec, "avcodec_find_encoder_by_name")
        let sendFrame: SendFrame? = table.function(codec, "avcodec_send_frame")
        let receivePacket: ReceivePacket? = table.function(codec, "avcodec_receive_packet")
        let dictSet: DictSet? = table.function(util, "av_dict_set")
        let dictFree: DictFree? = table.function(util, "av_dict_free")
        let bufferCreate: BufferCreate? = table.function(util, "av_buffer_create")
        guard let findEncoder, let sendFrame, let receivePacket, let dictSet, let dictFree, let bufferCreate else {
            return .failure(
                Libav.LibavLoadError(
                    description: "missing in \(Libav.libraryName): \(table.missing.joined(separator: ", "))"))
        }
        return .success(
            LibavEncoding(
                libav: libav, findEncoder: findEncoder, sendFrame: sendFrame, receivePacket: receivePacket,
                dictSet: dictSet, dictFree: dictFree, bufferCreate: bufferCreate))
    }
}

/// The decoding time of each output, from the presentation times of the pictures given, by number (0 first). x264
/// says which picture's time an output's DTS is (its own DTS in pictures); with B-frames the first ones are before
/// picture 0 and are counted back from it by the frame's duration. Times of pictures no later DTS can name are
/// dropped, so a long export keeps a few numbers, not one a frame.
struct DecodeTimes {
    private var times: [UInt64] = []
    /// The number of `times[0]`.
    private var first: Int64 = 0
    /// A frame's duration (ns), for times before picture 0 and pictures without a time.
    var frameDuration: UInt64

    init(frameDuration: UInt64) { self.frameDuration = frameDuration }

    /// The next picture's presentation time (nil: none; then the last one's plus a frame).
    mutating func record(_ pts: UInt64?) {
        let time = pts ?? times.last.map { $0 + frameDuration } ?? 0
        times.append(time)
    }

    /// The decoding time of an output whose DTS, counted in pictures, is `number`; forgets the pictures before it
    /// (DTS never go back). nil before any picture was recorded.
    mutating func time(ofPicture number: Int64) -> UInt64? {
        guard let firstTime = times.first else { return nil }
        if number < first {
            let back = UInt64(first - number) * frameDuration
            // Before picture 0 (B-frames' first outputs): counted back from it, never below 0.
            return first == 0 ? (firstTime > back ? firstTime - back : 0) : firstTime
        }
        let index = min(Int(number - first), times.count - 1)
        let time = times[index]
        if index > 0 {
            times.removeFirst(index)
            first += Int64(index)
        }
        return time
    }
}

/// The element's settings, set from any thread, read when a stream starts.
struct X264Settings: Equatable {
    var speedPreset = "medium"
    var tune = ""
    var crf = 23.0
    var keyIntMax = 250
    var threads = 0

    /// x264's preset and tune names (`x264_preset_names`, `x264_tune_names`; a preset may also be given by its index).
    static let presets = [
        "ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo",
    ]
    static let tunes = ["film", "animation", "grain", "stillimage", "psnr", "ssim", "fastdecode", "zerolatency"]

    /// "preset NAME" or "tune NAME" when `settings` name one x264 does not know (tunes combined with `,` `.` `/` `-`
    /// `+`, as x264 splits them); nil when it knows them all.
    static func unknownName(in settings: X264Settings) -> String? {
        let preset = settings.speedPreset.lowercased()
        if !presets.contains(preset), Int(preset).map({ presets.indices.contains($0) }) != true {
            return "preset \(settings.speedPreset): no such preset (\(presets.joined(separator: ", ")))"
        }
        let tunes = settings.tune.lowercased().split { ",./-+".contains($0) }
        if let unknown = tunes.first(where: { !Self.tunes.contains(String($0)) }) {
            return "tune \(settings.tune): no tune \(unknown) (\(Self.tunes.joined(separator: ", ")))"
        }
        return nil
    }
}

/// The element's state. The libavcodec objects are only touched by GstVideoEncoder's vfuncs, which the base class
/// calls one at a time (start and stop around streaming, the others under its stream lock); the settings may be
/// set from any thread.
package final class X264EncoderState: @unchecked Sendable {
    fileprivate var api: LibavEncoding?
    fileprivate var context: UnsafeMutablePointer<AVCodecContext>?
    fileprivate var packet: UnsafeMutablePointer<AVPacket>?
    fileprivate var picture: UnsafeMutablePointer<AVFrame>?
    /// The input caps' state (a reference owned here).
    fileprivate var input: UnsafeMutablePointer<GstVideoCodecState>?
    /// The profile negotiated downstream, in x264's words.
    fileprivate var profile = "high"
    /// The base class's number of the picture x264 counts as 0.
    fileprivate var firstNumber: UInt32?
    /// x264 refused the current caps with these settings (the error is posted): not tried again for every picture.
    fileprivate var refused = false
    fileprivate var times = DecodeTimes(frameDuration: 0)

    private let settingsLock = Mutex(X264Settings())

    var settings: X264Settings {
        get { settingsLock.withLock { $0 } }
        set { settingsLock.withLock { $0 = newValue } }
    }

    /// Input pictures mapped and not yet released by libavcodec, and the most there were at once (tests).
    package let held = Atomic<Int>(0)
    package let heldPeak = Atomic<Int>(0)

    fileprivate func closeContext() {
        if let api, context != nil { api.libav.freeContext(&context) }
        context = nil
        firstNumber = nil
    }

    fileprivate func close() {
        closeContext()
        if let api {
            if packet != nil { api.libav.packetFree(&packet) }
            if picture != nil { api.libav.frameFree(&picture) }
        }
        packet = nil
        picture = nil
        if let input { gst_video_codec_state_unref(input) }
        input = nil
    }

    deinit { close() }
}

/// An input picture mapped for libavcodec, released by libavcodec's buffer free callback.
private final class HeldPicture {
    var frame = GstVideoFrame()
    let state: X264EncoderState

    init(state: X264EncoderState) { self.state = state }
}

private enum X264PropertyID: guint {
    case speedPreset = 1
    case tune
    case crf
    case keyIntMax
    case threads
}

/// Registration of `ftx264enc`.
package enum X264EncoderElement {
    package static let factoryName = "ftx264enc"
    static let typeName = "GstFtX264Enc"

    /// The profiles offered downstream, best first, with x264's name for each.
    static let profiles: [(caps: String, x264: String)] = [
        ("high", "high"), ("main", "main"), ("constrained-baseline", "baseline"),
    ]

    static let sinkCaps = "video/x-raw, format=(string)I420"
    static var sourceCaps: String {
        "video/x-h264, stream-format=(string)byte-stream, alignment=(string)au, profile=(string){ "
            + profiles.map(\.caps).joined(separator: ", ") + " }"
    }

    fileprivate static let subclass = SwiftSubclass<X264EncoderState>(
        parent: gst_video_encoder_get_type(), name: typeName, classInit: classInit, instanceInit: instanceInit)

    package static func register(in plugin: OpaquePointer?) -> Bool {
        gst_element_register(plugin, factoryName, guint(GST_RANK_SECONDARY.rawValue), subclass.type) != 0
    }

    /// The state of an `ftx264enc` instance (the tests read its counters).
    package static func state(of instance: UnsafeMutableRawPointer) -> X264EncoderState {
        subclass.state(of: instance)
    }

    private static let classInit: @convention(c) (gpointer?, gpointer?) -> Void = { klass, _ in
        guard let klass else { return }
        let objectClass = ftgst_object_class(klass)!
        objectClass.pointee.set_property = setProperty
        objectClass.pointee.get_property = getProperty
        objectClass.pointee.finalize = finalize
        let defaults = X264Settings()
        g_object_class_install_property(
            objectClass, X264PropertyID.speedPreset.rawValue,
            g_param_spec_string(
                "speed-preset", "Speed preset", "x264's preset (ultrafast … placebo), as ffmpeg's -preset",
                defaults.speedPreset, G_PARAM_READWRITE))
        g_object_class_install_property(
            objectClass, X264PropertyID.tune.rawValue,
            g_param_spec_string(
                "tune", "Tune", "x264's tune (film, animation, grain, …), as ffmpeg's -tune; empty: none", "",
                G_PARAM_READWRITE))
        g_object_class_install_property(
            objectClass, X264PropertyID.crf.rawValue,
            g_param_spec_double(
                "crf", "Constant rate factor", "x264's constant quality (lower is better), as ffmpeg's -crf", 0, 51,
                defaults.crf, G_PARAM_READWRITE))
        g_object_class_install_property(
            objectClass, X264PropertyID.keyIntMax.rawValue,
            g_param_spec_int(
                "key-int-max", "Maximum keyframe interval", "Pictures between keyframes at most, as ffmpeg's -g", 1,
                100_000, gint(defaults.keyIntMax), G_PARAM_READWRITE))
        g_object_class_install_property(
            objectClass, X264PropertyID.threads.rawValue,
            g_param_spec_int(
                "threads", "Threads", "x264's threads; 0: x264 chooses (1.5 a processor)", 0, 64,
                gint(defaults.threads), G_PARAM_READWRITE))

        let elementClass = ftgst_element_class(klass)!
        gst_element_class_set_metadata(
            elementClass, "H.264 encoder (libx264 through libavcodec)", "Codec/Encoder/Video",
            "Encodes 8-bit 4:2:0 video to H.264 with x264, as ffmpeg's libx264, releasing each picture once copied",
            "ftgst")
        for (name, direction, description) in [
            ("sink", GST_PAD_SINK, sinkCaps), ("src", GST_PAD_SRC, sourceCaps),
        ] {
            let caps = gst_caps_from_string(description)
            gst_element_class_add_pad_template(
                elementClass, gst_pad_template_new(name, direction, GST_PAD_ALWAYS, caps))
            gst_caps_unref(caps)  // the template took its own reference
        }
        let encoderClass = ftgst_video_encoder_class(klass)!
        encoderClass.pointee.start = start
        encoderClass.pointee.stop = stop
        encoderClass.pointee.set_format = setFormat
        encoderClass.pointee.handle_frame = handleFrame
        encoderClass.pointee.finish = finish
        encoderClass.pointee.flush = flush
    }

    private static let instanceInit: @convention(c) (UnsafeMutablePointer<GTypeInstance>?, gpointer?) -> Void = {
        instance, _ in
        guard let instance else { return }
        subclass.attach(X264EncoderState(), to: UnsafeMutableRawPointer(instance))
        // B-frames' first decoding times come before the first picture's: the base class moves every time up so
        // that they stay positive, as for x264enc (which asks the same).
        gst_video_encoder_set_min_pts(
            UnsafeMutableRawPointer(instance).assumingMemoryBound(to: GstVideoEncoder.self),
            GstClockTime(1000 * 3600) * GstClockTime(1_000_000_000))
    }

    private static let finalize: @convention(c) (UnsafeMutablePointer<GObject>?) -> Void = { object in
        guard let object else { return }
        subclass.finalize(object)
    }

    private static let setProperty:
        @convention(c) (
            UnsafeMutablePointer<GObject>?, guint, UnsafePointer<GValue>?, UnsafeMutablePointer<GParamSpec>?
        ) -> Void = { object, id, value, _ in
            guard let object, let value, let property = X264PropertyID(rawValue: id) else { return }
            let state = state(of: UnsafeMutableRawPointer(object))
            var settings = state.settings
            func text() -> String { g_value_get_string(value).map { String(cString: $0) } ?? "" }
            switch property {
            case .speedPreset: settings.speedPreset = text()
            case .tune: settings.tune = text()
            case .crf: settings.crf = g_value_get_double(value)
            case .keyIntMax: settings.keyIntMax = Int(g_value_get_int(value))
            case .threads: settings.threads = Int(g_value_get_int(value))
            }
            state.settings = settings
        }

    private static let getProperty:
        @convention(c) (
            UnsafeMutablePointer<GObject>?, guint, UnsafeMutablePointer<GValue>?, UnsafeMutablePointer<GParamSpec>?
        ) -> Void = { object, id, value, _ in
            guard let object, let value, let property = X264PropertyID(rawValue: id) else { return }
            let settings = state(of: UnsafeMutableRawPointer(object)).settings
            switch property {
            case .speedPreset: g_value_set_string(value, settings.speedPreset)
            case .tune: g_value_set_string(value, settings.tune)
            case .crf: g_value_set_double(value, settings.crf)
            case .keyIntMax: g_value_set_int(value, gint(settings.keyIntMax))
            case .threads: g_value_set_int(value, gint(settings.threads))
            }
        }

    // MARK: - GstVideoEncoder vfuncs

    private static let start: @convention(c) (UnsafeMutablePointer<GstVideoEncoder>?) -> gboolean = { encoder in
        guard let encoder else { return 0 }
        let state = state(of: UnsafeMutableRawPointer(encoder))
        switch LibavEncoding.shared {
        case .success(let api):
            state.api = api
            state.packet = api.libav.packetAlloc()
            state.picture = api.libav.frameAlloc()
            return state.packet != nil && state.picture != nil ? 1 : 0
        case .failure(let error):
            postError(encoder, code: GST_LIBRARY_ERROR_INIT, "\(error)")
            return 0
        }
    }

    private static let stop: @convention(c) (UnsafeMutablePointer<GstVideoEncoder>?) -> gboolean = { encoder in
        guard let encoder else { return 0 }
        state(of: UnsafeMutableRawPointer(encoder)).close()
        return 1
    }

    /// New input caps: what was encoded under the old ones is drained, the profile is chosen from what downstream
    /// takes, and x264 is opened for the new size and rate (so that a setting x264 refuses fails here, before any
    /// picture).
    private static let setFormat:
        @convention(c) (UnsafeMutablePointer<GstVideoEncoder>?, UnsafeMutablePointer<GstVideoCodecState>?) -> gboolean =
            { encoder, codecState in
                guard let encoder, let codecState else { return 0 }
                let state = state(of: UnsafeMutableRawPointer(encoder))
                if state.context != nil {
                    _ = drain(encoder, state)
                    state.closeContext()
                }
                // Caps x264 refused come again with each picture (upstream renegotiates): refused again, untried.
                if state.refused, let old = state.input?.pointee.caps, let new = codecState.pointee.caps,
                    gst_caps_is_equal(old, new) != 0
                {
                    return 0
                }
                if let old = state.input { gst_video_codec_state_unref(old) }
                state.input = gst_video_codec_state_ref(codecState)
                state.refused = false
                state.profile = negotiatedProfile(encoder)
                let caps = gst_caps_from_string(
                    "video/x-h264, stream-format=(string)byte-stream, alignment=(string)au, profile=(string)"
                        + (profiles.first { $0.x264 == state.profile }?.caps ?? "high"))
                // set_output_state takes the caps and returns a state of its own (a reference for us).
                guard let output = gst_video_encoder_set_output_state(encoder, caps, codecState) else { return 0 }
                gst_video_codec_state_unref(output)
                return openContext(encoder, state) ? 1 : 0
            }

    /// The first of `profiles` that downstream takes (all of them when it says nothing).
    private static func negotiatedProfile(_ encoder: UnsafeMutablePointer<GstVideoEncoder>) -> String {
        guard let allowed = gst_pad_get_allowed_caps(encoder.pointee.srcpad) else { return profiles[0].x264 }
        defer { gst_caps_unref(allowed) }
        for profile in profiles {
            let caps = gst_caps_from_string("video/x-h264, profile=(string)\(profile.caps)")
            defer { gst_caps_unref(caps) }
            if gst_caps_can_intersect(allowed, caps) != 0 { return profile.x264 }
        }
        return profiles[0].x264
    }

    /// Opens libx264 for the input state's pictures with the element's settings; posts the reason on failure.
    private static func openContext(_ encoder: UnsafeMutablePointer<GstVideoEncoder>, _ state: X264EncoderState)
        -> Bool
    {
        guard let api = state.api, let input = state.input else { return false }
        let (width, height) = (input.pointee.info.width, input.pointee.info.height)
        let odd = width % 2 != 0 || height % 2 != 0 ? "4:2:0 needs an even width and height" : nil
        if let reason = X264Settings.unknownName(in: state.settings) ?? odd {
            // Refused here: x264 would print its own complaint to stderr, where ftgst keeps one line.
            state.refused = true
            postError(encoder, code: GST_LIBRARY_ERROR_SETTINGS, "x264 refused \(width)×\(height) pictures: \(reason)")
            return false
        }
        guard let codec = api.findEncoder("libx264"), let context = api.libav.allocContext(codec) else {
            postError(encoder, code: GST_LIBRARY_ERROR_INIT, "\(Libav.libraryName) has no libx264 encoder")
            return false
        }
        state.context = context
        let info = input.pointee.info
        let settings = state.settings
        context.pointee.width = info.width
        context.pointee.height = info.height
        context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        // One tick a picture, as ffmpeg's encoders count constant-rate video; 25/1 when the rate is unknown, as
        // x264enc assumes.
        let (rateNumerator, rateDenominator) = info.fps_n > 0 && info.fps_d > 0 ? (info.fps_n, info.fps_d) : (25, 1)
        context.pointee.time_base = AVRational(num: rateDenominator, den: rateNumerator)
        context.pointee.framerate = AVRational(num: rateNumerator, den: rateDenominator)
        context.pointee.sample_aspect_ratio = AVRational(num: info.par_n, den: max(info.par_d, 1))
        context.pointee.gop_size = Int32(settings.keyIntMax)
        context.pointee.thread_count = Int32(settings.threads)
        // The colours as upstream's caps state them; none when they do not (GstVideoInfo would fill in a guess from
        // the size), so the VUI says what the source said, as ffmpeg's does.
        var colours = info.colorimetry
        let stated = input.pointee.caps.flatMap { Caps(borrowing: $0).firstStructure }
        if stated?.string("colorimetry") == nil {
            colours = GstVideoColorimetry(
                range: GST_VIDEO_COLOR_RANGE_UNKNOWN, matrix: GST_VIDEO_COLOR_MATRIX_UNKNOWN,
                transfer: GST_VIDEO_TRANSFER_UNKNOWN, primaries: GST_VIDEO_COLOR_PRIMARIES_UNKNOWN)
        }
        switch colours.range {
        case GST_VIDEO_COLOR_RANGE_0_255: context.pointee.color_range = AVCOL_RANGE_JPEG
        case GST_VIDEO_COLOR_RANGE_16_235: context.pointee.color_range = AVCOL_RANGE_MPEG
        default: break
        }
        context.pointee.colorspace = AVColorSpace(rawValue: UInt32(gst_video_color_matrix_to_iso(colours.matrix)))
        context.pointee.color_primaries = AVColorPrimaries(
            rawValue: UInt32(gst_video_color_primaries_to_iso(colours.primaries)))
        context.pointee.color_trc = AVColorTransferCharacteristic(
            rawValue: UInt32(gst_video_transfer_function_to_iso(colours.transfer)))
        // The siting as upstream's caps name it, given as libavcodec's decoders report it, so the VUI says what
        // ffmpeg's would. Read from the caps: the GstVideoInfo of the codec state held `jpeg` (1) for caps saying `mpeg2`.
        if let site = stated?.string("chroma-site"), let location = chromaLocations[site] {
            context.pointee.chroma_sample_location = location
        }
        state.times = DecodeTimes(
            frameDuration: UInt64(
                gst_util_uint64_scale(GstClockTime(1_000_000_000), guint64(rateDenominator), guint64(rateNumerator))))

        var options: OpaquePointer? = nil
        defer { api.dictFree(&options) }
        var pairs = [
            ("preset", settings.speedPreset), ("crf", String(settings.crf)), ("profile", state.profile),
            // A keyframe the base class is asked for (GstForceKeyUnit) starts a new GOP that a player can seek to.
            ("forced-idr", "1"),
        ]
        if !settings.tune.isEmpty { pairs.append(("tune", settings.tune)) }
        for (key, value) in pairs { _ = api.dictSet(&options, key, value, 0) }
        let opened = api.libav.open(context, codec, &options)
        guard opened >= 0 else {
            state.closeContext()
            state.refused = true
            postError(
                encoder, code: GST_LIBRARY_ERROR_SETTINGS,
                "x264 refused \(info.width)×\(info.height) pictures with preset \(settings.speedPreset)"
                    + (settings.tune.isEmpty ? "" : ", tune \(settings.tune)")
                    + ", profile \(state.profile) (error \(opened))")
            return false
        }
        return true
    }

    /// GStreamer's chroma-site names and libavcodec's locations for them.
    private static let chromaLocations: [String: AVChromaLocation] = [
        "mpeg2": AVCHROMA_LOC_LEFT, "jpeg": AVCHROMA_LOC_CENTER, "dv": AVCHROMA_LOC_TOPLEFT,
        "v-cosited": AVCHROMA_LOC_TOP, "cosited": AVCHROMA_LOC_TOPLEFT,
    ]

    /// libavcodec's free callback of an input picture's buffer: x264 has copied it; the mapping (and with it the
    /// reference to the GStreamer buffer) goes.
    private static let releasePicture: LibavEncoding.Release = { opaque, _ in
        guard let opaque else { return }
        let held = Unmanaged<HeldPicture>.fromOpaque(opaque).takeRetainedValue()
        gst_video_frame_unmap(&held.frame)
        held.state.held.subtract(1, ordering: .relaxed)
    }

    /// One picture: given to x264 in a libavcodec buffer that unmaps it when released, the base class's reference
    /// to it dropped, then whatever x264 has encoded is passed on.
    private static let handleFrame:
        @convention(c) (UnsafeMutablePointer<GstVideoEncoder>?, UnsafeMutablePointer<GstVideoCodecFrame>?) ->
            GstFlowReturn = { encoder, frame in
                guard let encoder, let frame else { return GST_FLOW_ERROR }
                defer { gst_video_codec_frame_unref(frame) }  // the base class keeps its own until finished
                let state = state(of: UnsafeMutableRawPointer(encoder))
                if state.context == nil, state.input != nil, state.refused || !openContext(encoder, state) {
                    return GST_FLOW_NOT_NEGOTIATED
                }
                guard let api = state.api, let context = state.context, let picture = state.picture,
                    let input = state.input, let buffer = frame.pointee.input_buffer
                else { return GST_FLOW_NOT_NEGOTIATED }

                let held = HeldPicture(state: state)
                guard gst_video_frame_map(&held.frame, &input.pointee.info, buffer, GST_MAP_READ) != 0 else {
                    postError(encoder, code: GST_LIBRARY_ERROR_FAILED, "cannot read an input picture")
                    return GST_FLOW_ERROR
                }
                let count = state.held.add(1, ordering: .relaxed).newValue
                _ = state.heldPeak.max(count, ordering: .relaxed)
                let opaque = Unmanaged.passRetained(held).toOpaque()
                let size = Int(gst_buffer_get_size(buffer))
                guard
                    let reference = api.bufferCreate(
                        ftgst_video_frame_plane(&held.frame, 0), size, releasePicture, opaque, 0)
                else {
                    releasePicture(opaque, nil)
                    return GST_FLOW_ERROR
                }
                // The mapping holds the buffer now: the base class's reference would keep it until the encoded
                // frame comes out.
                gst_buffer_unref(buffer)
                frame.pointee.input_buffer = nil

                let number = frame.pointee.system_frame_number
                if state.firstNumber == nil { state.firstNumber = number }
                let pts = frame.pointee.pts
                state.times.record(pts == ftgst_clock_time_none() ? nil : UInt64(pts))
                fill(picture, from: &held.frame, buffer: reference, context: context)
                picture.pointee.pts = Int64(number &- (state.firstNumber ?? number))
                let forced = frame.pointee.flags & GST_VIDEO_CODEC_FRAME_FLAG_FORCE_KEYFRAME.rawValue != 0
                picture.pointee.pict_type = forced ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE

                var flow = GST_FLOW_OK
                var sent = api.sendFrame(context, picture)
                while sent == ftgst_averror_eagain() {
                    flow = passOn(encoder, state, api, context)
                    guard flow == GST_FLOW_OK else { break }
                    sent = api.sendFrame(context, picture)
                }
                api.libav.frameUnref(picture)  // libavcodec holds its own reference until x264 has the copy
                guard flow == GST_FLOW_OK else { return flow }
                guard sent >= 0 else { return encodeError(encoder, "avcodec_send_frame: \(sent)") }
                return passOn(encoder, state, api, context)
            }

    /// Points the AVFrame at the mapped planes; `buffer` (one reference, given to the frame) keeps them alive.
    private static func fill(
        _ picture: UnsafeMutablePointer<AVFrame>, from frame: inout GstVideoFrame,
        buffer: UnsafeMutablePointer<AVBufferRef>, context: UnsafeMutablePointer<AVCodecContext>
    ) {
        picture.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        picture.pointee.width = context.pointee.width
        picture.pointee.height = context.pointee.height
        picture.pointee.buf.0 = buffer
        withUnsafeMutablePointer(to: &picture.pointee.data) { dataTuple in
            withUnsafeMutablePointer(to: &picture.pointee.linesize) { strideTuple in
                let data = UnsafeMutableRawPointer(dataTuple).assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
                let strides = UnsafeMutableRawPointer(strideTuple).assumingMemoryBound(to: Int32.self)
                for plane in 0..<3 {
                    data[plane] = ftgst_video_frame_plane(&frame, guint(plane))
                    strides[plane] = Int32(ftgst_video_frame_stride(&frame, guint(plane)))
                }
            }
        }
    }

    /// Takes every packet x264 has ready and finishes its frame; stops at the first flow that is not OK.
    private static func passOn(
        _ encoder: UnsafeMutablePointer<GstVideoEncoder>, _ state: X264EncoderState, _ api: LibavEncoding,
        _ context: UnsafeMutablePointer<AVCodecContext>
    ) -> GstFlowReturn {
        guard let packet = state.packet else { return GST_FLOW_ERROR }
        var received = api.receivePacket(context, packet)
        while received >= 0 {
            let flow = output(encoder, state, packet)
            api.libav.packetUnref(packet)
            guard flow == GST_FLOW_OK else { return flow }
            received = api.receivePacket(context, packet)
        }
        guard received != ftgst_averror_eagain(), received != ftgst_averror_eof() else { return GST_FLOW_OK }
        return encodeError(encoder, "avcodec_receive_packet: \(received)")
    }

    /// One encoded picture: its frame found by the number it carries, the data copied into an output buffer, the
    /// keyframe flag and decoding time set, then finished.
    private static func output(
        _ encoder: UnsafeMutablePointer<GstVideoEncoder>, _ state: X264EncoderState,
        _ packet: UnsafeMutablePointer<AVPacket>
    ) -> GstFlowReturn {
        guard let firstNumber = state.firstNumber,
            let frame = gst_video_encoder_get_frame(
                encoder, gint(truncatingIfNeeded: Int64(firstNumber) + packet.pointee.pts))
        else { return GST_FLOW_OK }  // not ours (flushed since): nothing to do
        let size = Int(packet.pointee.size)
        let allocated = gst_video_encoder_allocate_output_frame(encoder, frame, gsize(size))
        guard allocated == GST_FLOW_OK, let buffer = frame.pointee.output_buffer else {
            gst_video_codec_frame_unref(frame)
            return allocated == GST_FLOW_OK ? GST_FLOW_ERROR : allocated
        }
        _ = gst_buffer_fill(buffer, 0, packet.pointee.data, gsize(size))
        if packet.pointee.flags & AV_PKT_FLAG_KEY != 0 {
            frame.pointee.flags |= GST_VIDEO_CODEC_FRAME_FLAG_SYNC_POINT.rawValue
        }
        if packet.pointee.dts != ftgst_av_nopts_value(), let dts = state.times.time(ofPicture: packet.pointee.dts) {
            frame.pointee.dts = GstClockTime(dts)
        }
        return gst_video_encoder_finish_frame(encoder, frame)
    }

    /// End of stream: x264 gives what it still holds (lookahead, B-frames); the context is closed, and opened again
    /// if pictures follow (after a flush).
    private static let finish: @convention(c) (UnsafeMutablePointer<GstVideoEncoder>?) -> GstFlowReturn = { encoder in
        guard let encoder else { return GST_FLOW_ERROR }
        let state = state(of: UnsafeMutableRawPointer(encoder))
        let flow = drain(encoder, state)
        state.closeContext()
        return flow
    }

    private static func drain(_ encoder: UnsafeMutablePointer<GstVideoEncoder>, _ state: X264EncoderState)
        -> GstFlowReturn
    {
        guard let api = state.api, let context = state.context else { return GST_FLOW_OK }
        _ = api.sendFrame(context, nil)
        return passOn(encoder, state, api, context)
    }

    /// A flushing seek: what x264 holds is thrown away (the base class drops its frames); opened again by the next
    /// picture.
    private static let flush: @convention(c) (UnsafeMutablePointer<GstVideoEncoder>?) -> gboolean = { encoder in
        guard let encoder else { return 0 }
        state(of: UnsafeMutableRawPointer(encoder)).closeContext()
        return 1
    }

    private static func encodeError(_ encoder: UnsafeMutablePointer<GstVideoEncoder>, _ detail: String)
        -> GstFlowReturn
    {
        SwiftSubclass<X264EncoderState>.postError(
            encoder, domain: gst_stream_error_quark(), code: gint(GST_STREAM_ERROR_ENCODE.rawValue),
            message: "Could not encode H.264", debug: detail, function: factoryName)
        return GST_FLOW_ERROR
    }

    private static func postError(
        _ encoder: UnsafeMutablePointer<GstVideoEncoder>, code: GstLibraryError, _ text: String
    ) {
        SwiftSubclass<X264EncoderState>.postError(
            encoder, domain: gst_library_error_quark(), code: gint(code.rawValue), message: text, debug: text,
            function: factoryName)
    }
}
