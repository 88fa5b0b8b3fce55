internal import CGst
import CLibav
import Foundation
import GstKit
import Synchronization

// MARK: - fth264dec, fth265dec: H.264 and HEVC through libavcodec, with nothing else loaded
//
// gst-launch-1.0 filesrc location=in.mp4 ! qtdemux ! h264parse ! fth264dec ! videoconvert ! …
// gst-launch-1.0 filesrc location=in.mov ! qtdemux ! h265parse ! fth265dec ! videoconvert ! …
//
// GstVideoDecoders over libavcodec's H.264 and HEVC decoders, the ones gst-libav's `avdec_h264` and `avdec_h265`
// wrap: the same pictures, bit for bit. They exist because gst-libav's decoders come with the whole of gst-libav:
// loading that plugin opens libavformat, libavfilter and their libraries and registers some 500 element types
// (≈ 40 ms and 42 MiB of a 92 MiB budget, measured against a program that only opens libavcodec), and its decoding
// of the bench clip's 166 pictures costs ≈ 55 ms more than libavcodec's own (docs/PERFORMANCE.md, "fth264dec").
// These elements open libavcodec alone (`Libav`, dlopen), let libavcodec keep its own frame pool (as many pictures as
// the stream's references and the frame threads need), and copy out only the pictures that can be shown: one that
// ends before the output segment starts (an accurate seek's pictures from the keyframe up to the target) is decoded,
// as it must be, but finished without a buffer downstream or a copy.
//
// One element type per codec (`Codec`: its caps, libavcodec's decoder, its names), one implementation: the instance
// finds its codec from its type. Only 8- and 10-bit 4:2:0 (and 8-bit 4:0:0) progressive pictures are taken, given
// as avdec gives them (I420, I420_10LE, GRAY8): the sink templates name the profiles that cannot carry more (no
// 4:2:2, 4:4:4 or 12-bit), so decodebin offers anything else to gst-libav; caps that say the stream may be
// interlaced are refused by ACCEPT_CAPS (the template cannot require a field some parsers leave out), and an
// interlaced picture under progressive caps is an error: avdec flags such pictures, this element would pass them as
// frames. ftgst's frame pipelines choose these elements only for caps they take (`accepting`), and when one fails
// on a stream after all (caps changing mid-stream) open the source again with gst-libav (`OpenedFrameSource`).
// Their rank is SECONDARY, below avdec's PRIMARY: a pipeline gets them only by name, or where ftgst's frame
// pipelines choose them (`FrameRecipe.autoplugDecision`).

/// The element's state. The libavcodec objects are only touched by GstVideoDecoder's vfuncs, which the base class
/// calls one at a time (start and stop around streaming, the others under its stream lock); the properties may be
/// set from any thread.
package final class LibavDecoderState: @unchecked Sendable {
    /// The codec of the element's type.
    package let codec: LibavDecoderElement.Codec
    fileprivate var libav: Libav?
    fileprivate var context: UnsafeMutablePointer<AVCodecContext>?
    fileprivate var packet: UnsafeMutablePointer<AVPacket>?
    fileprivate var picture: UnsafeMutablePointer<AVFrame>?
    /// The input caps' state (a reference owned here), the reference for the output state.
    fileprivate var input: UnsafeMutablePointer<GstVideoCodecState>?
    /// What the output caps were negotiated for.
    fileprivate var output: OutputFormat?
    fileprivate var outputInfo = GstVideoInfo()
    fileprivate var timestamps = OutputTimestamps()

    struct OutputFormat: Equatable {
        var format: GstVideoFormat
        var width: Int32
        var height: Int32
        var range: Int32
        var matrix: Int32
        var primaries: Int32
        var transfer: Int32
        var siting: Int32
    }

    private let properties = Mutex((outputCorrupt: true, maxThreads: 0))

    package var outputCorrupt: Bool {
        get { properties.withLock { $0.outputCorrupt } }
        set { properties.withLock { $0.outputCorrupt = newValue } }
    }

    package var maxThreads: Int {
        get { properties.withLock { $0.maxThreads } }
        set { properties.withLock { $0.maxThreads = newValue } }
    }

    /// Pictures copied out, pictures finished without a copy because they end before the segment, and pictures
    /// finished without a copy because `discard` said so.
    package let copied = Atomic<Int>(0)
    package let skipped = Atomic<Int>(0)
    package let discarded = Atomic<Int>(0)

    private let discardRule = Mutex<(@Sendable (UInt64) -> Bool)?>(nil)

    /// Set by ftgst's kept pipelines while they step forward (`EarlyFrameDrop`): asked with each decoded picture's
    /// start (a buffer time in ns), true when the picture will not be shown, and so is finished without a copy or a buffer
    /// downstream, as one ending before the segment is. Not asked once the base class may have changed the picture's
    /// timestamps (`OutputTimestamps.unsure`). nil: every picture goes out.
    package var discard: (@Sendable (UInt64) -> Bool)? {
        get { discardRule.withLock { $0 } }
        set { discardRule.withLock { $0 = newValue } }
    }

    fileprivate func closeContext() {
        if let libav, context != nil { libav.freeContext(&context) }
        context = nil
        output = nil
    }

    fileprivate func close() {
        closeContext()
        timestamps.reset()
        if let libav {
            if packet != nil { libav.packetFree(&packet) }
            if picture != nil { libav.frameFree(&picture) }
        }
        packet = nil
        picture = nil
        if let input { gst_video_codec_state_unref(input) }
        input = nil
    }

    init(codec: LibavDecoderElement.Codec) { self.codec = codec }

    deinit { close() }
}

/// Which pictures may skip their copy: those the base class would clip away whole, judged as it judges them.
///
/// GstVideoDecoder's finish_frame first fixes a picture's timestamp (raises a decreasing one to the last it sent,
/// guesses a missing one, voids them all once output went backwards), then clips it to the segment. A picture is
/// skipped here only while that fix-up cannot have changed it: a known start and duration, no earlier picture that
/// lacked one, and starts that never went backwards since the last flush (which resets the base class's memory as
/// it resets this one). Then its fixed timestamp is its own, and ending at or before the segment's start, played
/// forward, it is clipped away: the pictures that come out are those `avdec_h264` gives, with the same times.
struct OutputTimestamps {
    /// The last start the base class kept (its `last_timestamp_out`): the highest seen, starts being raised.
    private(set) var lastOut: GstClockTime? = nil
    /// Some start was missing or went backwards: the base class's timestamps are its guesses from here on.
    private(set) var unsure = false

    /// Whether `frame` ends before `segment`'s start and so would be clipped away whole; records its start either
    /// way (call once per picture, in output order).
    mutating func skips(_ frame: GstVideoCodecFrame, _ segment: GstSegment) -> Bool {
        let none = ftgst_clock_time_none()
        guard frame.pts != none else {
            unsure = true
            return false
        }
        if let lastOut, frame.pts < lastOut {
            unsure = true
            return false
        }
        lastOut = frame.pts
        guard !unsure, segment.format == GST_FORMAT_TIME, segment.rate > 0, frame.duration != none,
            frame.duration > 0
        else { return false }
        return frame.pts + frame.duration <= segment.start
    }

    /// A flush (a seek) or a new stream: the base class forgets too.
    mutating func reset() { self = OutputTimestamps() }
}

private enum LibavDecoderPropertyID: guint {
    case outputCorrupt = 1
    case maxThreads
}

/// Registration of the own decoders' element types (`fth264dec`, `fth265dec`, `ftav1dec`).
package enum LibavDecoderElement {
    /// One codec an own decoder takes: its element's names, its caps and libavcodec's decoder for it.
    package struct Codec: Sendable, Equatable {
        package let factoryName: String
        package let typeName: String
        /// The codec's name in messages: `H.264`.
        package let name: String
        /// libavcodec's `AVCodecID`.
        let codecID: UInt32
        /// libavcodec's decoder by name, when it is not the first for `codecID` (AV1's first is a hardware-only one).
        let decoderName: String?
        package let mediaType: String
        /// The profiles whose pictures are 8- or 10-bit 4:2:0 or 8-bit 4:0:0 (the parsers always name the profile).
        package let profiles: [String]
        package let streamFormats: [String]
        /// One buffer a picture: `au` (an access unit) or `tu` (AV1's temporal unit).
        package let alignment: String
        /// When the profiles also allow other chroma formats: the `chroma-format` values taken (the parser states it).
        package let chromaFormats: [String]?
        /// Whether colours the stream leaves unspecified are left to GStreamer's default for the picture size, as
        /// the decoder it stands in for does (av1dec), rather than stated as unknown (avdec).
        let leavesUnspecifiedColoursToDefaults: Bool

        init(
            factoryName: String, typeName: String, name: String, codecID: UInt32, decoderName: String? = nil,
            mediaType: String, profiles: [String], streamFormats: [String], alignment: String = "au",
            chromaFormats: [String]? = nil, leavesUnspecifiedColoursToDefaults: Bool = false
        ) {
            self.factoryName = factoryName
            self.typeName = typeName
            self.name = name
            self.codecID = codecID
            self.decoderName = decoderName
            self.mediaType = mediaType
            self.profiles = profiles
            self.streamFormats = streamFormats
            self.alignment = alignment
            self.chromaFormats = chromaFormats
            self.leavesUnspecifiedColoursToDefaults = leavesUnspecifiedColoursToDefaults
        }

        package var sinkCaps: String {
            "\(mediaType), stream-format=(string){ \(streamFormats.joined(separator: ", ")) }, "
                + "alignment=(string)\(alignment), profile=(string){ \(profiles.joined(separator: ", ")) }"
                + (chromaFormats.map { ", chroma-format=(string){ \($0.joined(separator: ", ")) }" } ?? "")
        }

        /// Whether caps with this first structure are ones this element decodes as well as avdec: its template and
        /// progressive pictures (`isProgressive`).
        package func accepts(_ caps: CapsStructure) -> Bool {
            guard caps.name == mediaType, let profile = caps.string("profile"), profiles.contains(profile),
                let format = caps.string("stream-format"), streamFormats.contains(format),
                caps.string("alignment") == alignment
            else { return false }
            if let chromaFormats {
                guard let chroma = caps.string("chroma-format"), chromaFormats.contains(chroma) else { return false }
            }
            return LibavDecoderElement.isProgressive(
                interlaceMode: caps.string("interlace-mode"), pictureStructure: caps.string("coded-picture-structure"))
        }
    }

    /// H.264 up to High 10 (4:2:0), as h264parse names its profiles.
    package static let h264 = Codec(
        factoryName: "fth264dec", typeName: "GstFtH264Dec", name: "H.264", codecID: AV_CODEC_ID_H264.rawValue,
        mediaType: "video/x-h264",
        profiles: [
            "constrained-baseline", "baseline", "main", "extended", "high", "progressive-high", "constrained-high",
            "high-10", "high-10-intra", "progressive-high-10",
        ],
        streamFormats: ["avc", "avc3", "byte-stream"])

    /// HEVC Main and Main 10 (a phone's `.mov`), as h265parse names its profiles.
    package static let h265 = Codec(
        factoryName: "fth265dec", typeName: "GstFtH265Dec", name: "HEVC", codecID: AV_CODEC_ID_HEVC.rawValue,
        mediaType: "video/x-h265",
        profiles: ["main", "main-10", "main-still-picture", "main-intra", "main-10-intra"],
        streamFormats: ["hvc1", "hev1", "byte-stream"])

    /// AV1 Main, 8- and 10-bit 4:2:0, as av1parse names it, through libavcodec's wrapper of dav1d (VideoLAN's
    /// decoder, ≈ 2× libaom's `av1dec` speed; AV1 decoding is exact, so both give the same pictures).
    package static let av1 = Codec(
        factoryName: "ftav1dec", typeName: "GstFtAv1Dec", name: "AV1", codecID: AV_CODEC_ID_AV1.rawValue,
        decoderName: "libdav1d", mediaType: "video/x-av1", profiles: ["main"], streamFormats: ["obu-stream"],
        alignment: "tu", chromaFormats: ["4:2:0"], leavesUnspecifiedColoursToDefaults: true)

    package static let codecs = [h264, h265, av1]

    /// libavcodec's frame threads per decoder; 0: one per processor.
    package static let threadsProperty = "max-threads"

    /// The own decoder that takes caps with this first structure, if any.
    package static func accepting(_ caps: CapsStructure) -> Codec? { codecs.first { $0.accepts(caps) } }

    /// Whether `factoryName` is one of the own decoders.
    package static func isOwn(_ factoryName: String?) -> Bool { codecs.contains { $0.factoryName == factoryName } }

    /// Whether caps say the pictures are progressive: h264parse 1.22 writes `coded-picture-structure=field` for a
    /// stream whose pictures may be fields or field pairs (`frame_mbs_only_flag` 0, PAFF or MBAFF) and `frame`
    /// otherwise; `interlace-mode`, when upstream gives it, must be `progressive`. Either missing says nothing.
    package static func isProgressive(interlaceMode: String?, pictureStructure: String?) -> Bool {
        (interlaceMode ?? "progressive") == "progressive" && (pictureStructure ?? "frame") == "frame"
    }

    static let sourceCaps = "video/x-raw, format=(string){ I420, I420_10LE, GRAY8 }"

    /// One registered type per codec. They share a parent, so every instance keeps its state at the same offset:
    /// `state(of:)` reads any of them through the first.
    fileprivate static let subclasses = codecs.map {
        SwiftSubclass<LibavDecoderState>(
            parent: gst_video_decoder_get_type(), name: $0.typeName, classInit: classInit, instanceInit: instanceInit)
    }
    private static var subclass: SwiftSubclass<LibavDecoderState> { subclasses[0] }

    package static func register(in plugin: OpaquePointer?) -> Bool {
        zip(codecs, subclasses).allSatisfy { codec, subclass in
            gst_element_register(plugin, codec.factoryName, guint(GST_RANK_SECONDARY.rawValue), subclass.type) != 0
        }
    }

    /// The codec of an element type (a class's or an instance's `g_type`).
    private static func codec(ofType type: GType) -> Codec {
        let name = String(cString: g_type_name(type))
        return codecs.first { $0.typeName == name } ?? h264
    }

    /// The state of an own decoder instance (the tests read its counters).
    package static func state(of instance: UnsafeMutableRawPointer) -> LibavDecoderState {
        subclass.state(of: instance)
    }

    private static let classInit: @convention(c) (gpointer?, gpointer?) -> Void = { klass, _ in
        guard let klass else { return }
        let objectClass = ftgst_object_class(klass)!
        objectClass.pointee.set_property = setProperty
        objectClass.pointee.get_property = getProperty
        objectClass.pointee.finalize = finalize
        g_object_class_install_property(
            objectClass, LibavDecoderPropertyID.outputCorrupt.rawValue,
            g_param_spec_boolean(
                "output-corrupt", "Output corrupt pictures",
                "Whether pictures decoded with missing references are passed on (as avdec_h264's)", 1,
                G_PARAM_READWRITE))
        g_object_class_install_property(
            objectClass, LibavDecoderPropertyID.maxThreads.rawValue,
            g_param_spec_int(
                "max-threads", "Maximum decode threads", "libavcodec's frame threads; 0: one per processor",
                0, 64, 0, G_PARAM_READWRITE))

        let codec = codec(ofType: klass.assumingMemoryBound(to: GTypeClass.self).pointee.g_type)
        let elementClass = ftgst_element_class(klass)!
        gst_element_class_set_metadata(
            elementClass, "\(codec.name) decoder (libavcodec)", "Codec/Decoder/Video",
            "Decodes 8- and 10-bit 4:2:0 progressive \(codec.name) with libavcodec, loading nothing else", "ftgst")
        for (name, direction, description) in [
            ("sink", GST_PAD_SINK, codec.sinkCaps), ("src", GST_PAD_SRC, sourceCaps),
        ] {
            let caps = gst_caps_from_string(description)
            gst_element_class_add_pad_template(
                elementClass, gst_pad_template_new(name, direction, GST_PAD_ALWAYS, caps))
            gst_caps_unref(caps)  // the template took its own reference
        }
        let decoderClass = ftgst_video_decoder_class(klass)!
        decoderClass.pointee.start = start
        decoderClass.pointee.stop = stop
        decoderClass.pointee.set_format = setFormat
        decoderClass.pointee.handle_frame = handleFrame
        decoderClass.pointee.flush = flush
        decoderClass.pointee.finish = drain
        decoderClass.pointee.drain = drain
        decoderClass.pointee.sink_query = sinkQuery
    }

    private static var parentDecoderClass: UnsafeMutablePointer<GstVideoDecoderClass> {
        subclass.parentClass(as: GstVideoDecoderClass.self)
    }

    /// ACCEPT_CAPS: interlaced caps are refused here, as the template refuses other profiles, so upstream's caps
    /// fail as not-negotiated before they are set (caps changing to interlaced mid-stream too: ftgst's frame
    /// pipelines then decode the source again with avdec_h264). Refused in `set_format` instead, a gst-launch-1.0
    /// run now and then hung in preroll after the error. Every other query is the base class's.
    private static let sinkQuery:
        @convention(c) (UnsafeMutablePointer<GstVideoDecoder>?, UnsafeMutablePointer<GstQuery>?) -> gboolean = {
            decoder, query in
            guard let decoder, let query else { return 0 }
            if query.pointee.type == GST_QUERY_ACCEPT_CAPS {
                var caps: UnsafeMutablePointer<GstCaps>? = nil
                gst_query_parse_accept_caps(query, &caps)  // borrowed from the query
                if let structure = firstStructure(caps), !isProgressive(structure) {
                    gst_query_set_accept_caps_result(query, 0)
                    return 1
                }
            }
            return parentDecoderClass.pointee.sink_query(decoder, query)
        }

    private static let instanceInit: @convention(c) (UnsafeMutablePointer<GTypeInstance>?, gpointer?) -> Void = {
        instance, _ in
        guard let instance else { return }
        let codec = codec(ofType: instance.pointee.g_class.pointee.g_type)
        subclass.attach(LibavDecoderState(codec: codec), to: UnsafeMutableRawPointer(instance))
        let decoder = UnsafeMutableRawPointer(instance).assumingMemoryBound(to: GstVideoDecoder.self)
        gst_video_decoder_set_packetized(decoder, 1)  // one access unit a buffer (alignment=au)
        gst_video_decoder_set_needs_format(decoder, 1)
    }

    private static let finalize: @convention(c) (UnsafeMutablePointer<GObject>?) -> Void = { object in
        guard let object else { return }
        subclass.finalize(object)
    }

    private static let setProperty:
        @convention(c) (
            UnsafeMutablePointer<GObject>?, guint, UnsafePointer<GValue>?, UnsafeMutablePointer<GParamSpec>?
        ) -> Void = { object, id, value, _ in
            guard let object, let value, let property = LibavDecoderPropertyID(rawValue: id) else { return }
            let state = state(of: UnsafeMutableRawPointer(object))
            switch property {
            case .outputCorrupt: state.outputCorrupt = g_value_get_boolean(value) != 0
            case .maxThreads: state.maxThreads = Int(g_value_get_int(value))
            }
        }

    private static let getProperty:
        @convention(c) (
            UnsafeMutablePointer<GObject>?, guint, UnsafeMutablePointer<GValue>?, UnsafeMutablePointer<GParamSpec>?
        ) -> Void = { object, id, value, _ in
            guard let object, let value, let property = LibavDecoderPropertyID(rawValue: id) else { return }
            let state = state(of: UnsafeMutableRawPointer(object))
            switch property {
            case .outputCorrupt: g_value_set_boolean(value, state.outputCorrupt ? 1 : 0)
            case .maxThreads: g_value_set_int(value, gint(state.maxThreads))
            }
        }

    // MARK: - GstVideoDecoder vfuncs

    private static let start: @convention(c) (UnsafeMutablePointer<GstVideoDecoder>?) -> gboolean = { decoder in
        guard let decoder else { return 0 }
        let state = state(of: UnsafeMutableRawPointer(decoder))
        switch Libav.shared {
        case .success(let libav):
            state.libav = libav
            state.packet = libav.packetAlloc()
            state.picture = libav.frameAlloc()
            return state.packet != nil && state.picture != nil ? 1 : 0
        case .failure(let error):
            postError(
                decoder, domain: gst_library_error_quark(), code: gint(GST_LIBRARY_ERROR_INIT.rawValue),
                "\(error)")
            return 0
        }
    }

    private static let stop: @convention(c) (UnsafeMutablePointer<GstVideoDecoder>?) -> gboolean = { decoder in
        guard let decoder else { return 0 }
        state(of: UnsafeMutableRawPointer(decoder)).close()
        return 1
    }

    /// New input caps: what was decoded so far under the old ones is drained, then a context is opened with the
    /// stream's `codec_data` (avcC) as extradata; a byte-stream carries its parameter sets in band.
    private static let setFormat:
        @convention(c) (UnsafeMutablePointer<GstVideoDecoder>?, UnsafeMutablePointer<GstVideoCodecState>?) -> gboolean =
            { decoder, codecState in
                guard let decoder, let codecState else { return 0 }
                let state = state(of: UnsafeMutableRawPointer(decoder))
                guard let libav = state.libav else { return 0 }
                if state.context != nil {
                    _ = drainContext(decoder, state)
                    state.closeContext()
                }
                if let old = state.input { gst_video_codec_state_unref(old) }
                state.input = gst_video_codec_state_ref(codecState)

                let found =
                    state.codec.decoderName.map { libav.findDecoderByName($0) }
                    ?? libav.findDecoder(AVCodecID(rawValue: state.codec.codecID))
                guard let codec = found,
                    let context = libav.allocContext(codec)
                else {
                    return 0
                }
                state.context = context
                if let codecData = codecState.pointee.codec_data, !isByteStream(codecState.pointee.caps) {
                    var map = GstMapInfo()
                    guard gst_buffer_map(codecData, &map, GST_MAP_READ) != 0 else { return 0 }
                    defer { gst_buffer_unmap(codecData, &map) }
                    let size = Int(map.size)
                    guard let extradata = libav.mallocz(size + Int(ftgst_av_input_buffer_padding_size())) else {
                        return 0
                    }
                    extradata.copyMemory(from: map.data, byteCount: size)
                    context.pointee.extradata = extradata.assumingMemoryBound(to: UInt8.self)
                    context.pointee.extradata_size = Int32(size)
                }
                let threads = state.maxThreads > 0 ? state.maxThreads : ProcessInfo.processInfo.activeProcessorCount
                context.pointee.thread_count = Int32(min(max(threads, 1), 64))
                context.pointee.thread_type = ftgst_ff_thread_frame_and_slice()
                let corruptFlag = ftgst_av_codec_flag_output_corrupt()
                context.pointee.flags =
                    state.outputCorrupt ? context.pointee.flags | corruptFlag : context.pointee.flags & ~corruptFlag
                guard libav.open(context, codec, nil) >= 0 else {
                    state.closeContext()
                    return 0
                }
                return 1
            }

    private static func isByteStream(_ caps: UnsafeMutablePointer<GstCaps>?) -> Bool {
        guard let structure = firstStructure(caps), let format = gst_structure_get_string(structure, "stream-format")
        else { return false }
        return String(cString: format) == "byte-stream"
    }

    /// `isProgressive(interlaceMode:pictureStructure:)` of a caps structure.
    private static func isProgressive(_ structure: UnsafeMutablePointer<GstStructure>) -> Bool {
        func field(_ name: String) -> String? { gst_structure_get_string(structure, name).map { String(cString: $0) } }
        return isProgressive(interlaceMode: field("interlace-mode"), pictureStructure: field("coded-picture-structure"))
    }

    private static func firstStructure(_ caps: UnsafeMutablePointer<GstCaps>?) -> UnsafeMutablePointer<GstStructure>? {
        guard let caps, gst_caps_get_size(caps) > 0 else { return nil }
        return gst_caps_get_structure(caps, 0)
    }

    /// One access unit: sent to libavcodec with the frame's number as its timestamp (libavcodec hands it back on
    /// the picture, in presentation order), then whatever pictures are ready are passed on.
    private static let handleFrame:
        @convention(c) (UnsafeMutablePointer<GstVideoDecoder>?, UnsafeMutablePointer<GstVideoCodecFrame>?) ->
            GstFlowReturn = { decoder, frame in
                guard let decoder, let frame else { return GST_FLOW_ERROR }
                let state = state(of: UnsafeMutableRawPointer(decoder))
                guard let libav = state.libav, let context = state.context, let packet = state.packet,
                    let input = frame.pointee.input_buffer
                else {
                    gst_video_decoder_drop_frame(decoder, frame)
                    return GST_FLOW_NOT_NEGOTIATED
                }
                var map = GstMapInfo()
                guard gst_buffer_map(input, &map, GST_MAP_READ) != 0 else {
                    gst_video_decoder_drop_frame(decoder, frame)
                    return GST_FLOW_ERROR
                }
                let size = Int(map.size)
                let allocated = libav.newPacket(packet, Int32(size)) >= 0
                if allocated, size > 0 { packet.pointee.data.update(from: map.data, count: size) }
                gst_buffer_unmap(input, &map)
                guard allocated else {
                    gst_video_decoder_drop_frame(decoder, frame)
                    return GST_FLOW_ERROR
                }
                packet.pointee.pts = Int64(frame.pointee.system_frame_number)
                let number = frame.pointee.system_frame_number
                gst_video_codec_frame_unref(frame)  // the base class keeps its own until the picture is finished

                var flow = GST_FLOW_OK
                var sent = libav.sendPacket(context, packet)
                // The decoder's input is full until pictures are taken out: take them, then send again.
                while sent == ftgst_averror_eagain() {
                    flow = passOn(decoder, state, libav, context)
                    guard flow == GST_FLOW_OK else { break }
                    sent = libav.sendPacket(context, packet)
                }
                libav.packetUnref(packet)
                if flow == GST_FLOW_OK, sent < 0 {
                    // A damaged access unit: counted against the base class's max-errors, like avdec_h264's.
                    if let lost = gst_video_decoder_get_frame(decoder, gint(number)) {
                        gst_video_decoder_drop_frame(decoder, lost)
                    }
                    return decodeError(decoder, "avcodec_send_packet: \(sent)")
                }
                guard flow == GST_FLOW_OK else { return flow }
                return passOn(decoder, state, libav, context)
            }

    /// Takes every picture libavcodec has ready and passes it on; stops at the first flow that is not OK. An error
    /// libavcodec reports here (with frame threads, a packet's decoding error comes out with a later call) is
    /// counted against the base class's max-errors like one from `avcodec_send_packet`: past them, it is an error.
    private static func passOn(
        _ decoder: UnsafeMutablePointer<GstVideoDecoder>, _ state: LibavDecoderState, _ libav: Libav,
        _ context: UnsafeMutablePointer<AVCodecContext>
    ) -> GstFlowReturn {
        guard let picture = state.picture else { return GST_FLOW_ERROR }
        var received = libav.receiveFrame(context, picture)
        while received >= 0 {
            let flow = output(decoder, state, picture)
            libav.frameUnref(picture)
            guard flow == GST_FLOW_OK else { return flow }
            received = libav.receiveFrame(context, picture)
        }
        guard received != ftgst_averror_eagain(), received != ftgst_averror_eof() else { return GST_FLOW_OK }
        return decodeError(decoder, "avcodec_receive_frame: \(received)")
    }

    /// A damaged access unit or picture: counted against the base class's max-errors, like avdec_h264's; the flow
    /// is an error only past them.
    private static func decodeError(_ decoder: UnsafeMutablePointer<GstVideoDecoder>, _ detail: String)
        -> GstFlowReturn
    {
        let codec = state(of: UnsafeMutableRawPointer(decoder)).codec
        return _gst_video_decoder_error(
            decoder, 1, gst_stream_error_quark(), gint(GST_STREAM_ERROR_DECODE.rawValue),
            g_strdup("Could not decode \(codec.name) stream"), g_strdup(detail), #fileID, codec.factoryName, 0)
    }

    /// Ends the stream's decoding: libavcodec gives the pictures it still holds (reordering, frame threads), then
    /// is reset to take a new stream. `finish` at EOS, `drain` before new caps.
    private static let drain: @convention(c) (UnsafeMutablePointer<GstVideoDecoder>?) -> GstFlowReturn = { decoder in
        guard let decoder else { return GST_FLOW_ERROR }
        return drainContext(decoder, state(of: UnsafeMutableRawPointer(decoder)))
    }

    private static func drainContext(_ decoder: UnsafeMutablePointer<GstVideoDecoder>, _ state: LibavDecoderState)
        -> GstFlowReturn
    {
        guard let libav = state.libav, let context = state.context else { return GST_FLOW_OK }
        _ = libav.sendPacket(context, nil)
        let flow = passOn(decoder, state, libav, context)
        libav.flushBuffers(context)
        return flow
    }

    /// A flushing seek: what libavcodec holds is thrown away (the base class drops its frames).
    private static let flush: @convention(c) (UnsafeMutablePointer<GstVideoDecoder>?) -> gboolean = { decoder in
        guard let decoder else { return 0 }
        let state = state(of: UnsafeMutableRawPointer(decoder))
        if let libav = state.libav, let context = state.context { libav.flushBuffers(context) }
        state.timestamps.reset()
        return 1
    }

    /// One decoded picture: found by the number it carries, dropped if corrupt and unwanted, finished without a
    /// buffer when the base class would clip it away whole (`OutputTimestamps`), else copied into a buffer downstream
    /// allocates and finished.
    private static func output(
        _ decoder: UnsafeMutablePointer<GstVideoDecoder>, _ state: LibavDecoderState,
        _ picture: UnsafeMutablePointer<AVFrame>
    ) -> GstFlowReturn {
        guard let frame = gst_video_decoder_get_frame(decoder, gint(truncatingIfNeeded: picture.pointee.pts)) else {
            return GST_FLOW_OK  // not ours (flushed since): nothing to do
        }
        // Judged before anything else: every picture finished or dropped goes through the base class's
        // timestamp bookkeeping, so every one is recorded.
        let skips = state.timestamps.skips(frame.pointee, decoder.pointee.output_segment)
        if !state.outputCorrupt, picture.pointee.flags & ftgst_av_frame_flag_corrupt() != 0 {
            gst_video_decoder_drop_frame(decoder, frame)
            return GST_FLOW_OK
        }
        if skips {
            // Finished without a buffer: the base class's timestamp bookkeeping runs as for any picture, then it
            // is skipped ("no buffer data means this frame is skipped").
            state.skipped.add(1, ordering: .relaxed)
            return gst_video_decoder_finish_frame(decoder, frame)
        }
        if !state.timestamps.unsure, frame.pointee.pts != ftgst_clock_time_none(), let discard = state.discard,
            discard(UInt64(frame.pointee.pts))
        {
            // A picture a step forward has passed: finished the same way, uncopied.
            state.discarded.add(1, ordering: .relaxed)
            return gst_video_decoder_finish_frame(decoder, frame)
        }
        let negotiated = negotiate(decoder, state, picture)
        guard negotiated == GST_FLOW_OK else {
            gst_video_decoder_drop_frame(decoder, frame)
            return negotiated
        }
        let allocated = gst_video_decoder_allocate_output_frame(decoder, frame)
        guard allocated == GST_FLOW_OK, let buffer = frame.pointee.output_buffer else {
            gst_video_decoder_drop_frame(decoder, frame)
            return allocated == GST_FLOW_OK ? GST_FLOW_ERROR : allocated
        }
        var video = GstVideoFrame()
        guard gst_video_frame_map(&video, &state.outputInfo, buffer, GST_MAP_WRITE) != 0 else {
            gst_video_decoder_drop_frame(decoder, frame)
            return GST_FLOW_ERROR
        }
        copyPlanes(from: picture, to: &video)
        gst_video_frame_unmap(&video)
        state.copied.add(1, ordering: .relaxed)
        return gst_video_decoder_finish_frame(decoder, frame)
    }

    /// Sets the output caps when the picture's format, size or colours differ from those negotiated, as
    /// `gst_ffmpegviddec_negotiate` (gst-libav 1.22) sets them, so that converters downstream treat the pictures
    /// exactly as avdec's: upstream's caps give the frame rate and aspect ratio (the base class copies them from the
    /// input state); the chroma siting, each colorimetry field and HDR10's static metadata that upstream did not
    /// state come from the stream's own signalling (10-bit pictures are upsampled differently without the siting).
    private static func negotiate(
        _ decoder: UnsafeMutablePointer<GstVideoDecoder>, _ state: LibavDecoderState,
        _ picture: UnsafeMutablePointer<AVFrame>
    ) -> GstFlowReturn {
        let p = picture.pointee
        guard p.interlaced_frame == 0 else {
            // Caps said progressive (ACCEPT_CAPS refuses others) and the stream's picture is not.
            postError(
                decoder, domain: gst_stream_error_quark(), code: gint(GST_STREAM_ERROR_FORMAT.rawValue),
                "an interlaced \(state.codec.name) picture in a stream whose caps say progressive")
            return GST_FLOW_NOT_NEGOTIATED
        }
        let format: GstVideoFormat
        switch AVPixelFormat(rawValue: p.format) {
        case AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P: format = GST_VIDEO_FORMAT_I420
        case AV_PIX_FMT_YUV420P10LE: format = GST_VIDEO_FORMAT_I420_10LE
        case AV_PIX_FMT_GRAY8: format = GST_VIDEO_FORMAT_GRAY8
        default:
            postError(
                decoder, domain: gst_stream_error_quark(), code: gint(GST_STREAM_ERROR_DECODE.rawValue),
                "\(state.codec.name) pictures in libavcodec pixel format \(p.format) are not 8- or 10-bit 4:2:0")
            return GST_FLOW_NOT_NEGOTIATED
        }
        let full = p.format == AV_PIX_FMT_YUVJ420P.rawValue || p.color_range == AVCOL_RANGE_JPEG
        let wanted = LibavDecoderState.OutputFormat(
            format: format, width: p.width, height: p.height, range: full ? -1 : Int32(p.color_range.rawValue),
            matrix: Int32(p.colorspace.rawValue), primaries: Int32(p.color_primaries.rawValue),
            transfer: Int32(p.color_trc.rawValue), siting: Int32(p.chroma_location.rawValue))
        guard wanted != state.output else { return GST_FLOW_OK }
        guard
            let output = gst_video_decoder_set_output_state(
                decoder, format, guint(p.width), guint(p.height), state.input)
        else { return GST_FLOW_NOT_NEGOTIATED }
        defer { gst_video_codec_state_unref(output) }
        var stated = GstVideoInfo()  // upstream's colours, as parsed
        var upstream: UnsafeMutablePointer<GstStructure>? = nil
        if let input = state.input {
            stated = input.pointee.info
            if let caps = input.pointee.caps, gst_caps_get_size(caps) > 0 { upstream = gst_caps_get_structure(caps, 0) }
        }
        func upstreamHas(_ field: String) -> Bool { upstream.map { gst_structure_has_field($0, field) != 0 } ?? false }
        let upstreamColours = upstreamHas("colorimetry")
        let info = withUnsafeMutablePointer(to: &output.pointee.info) { $0 }
        if !upstreamHas("chroma-site") {
            switch p.chroma_location {
            case AVCHROMA_LOC_LEFT: info.pointee.chroma_site = GST_VIDEO_CHROMA_SITE_MPEG2
            case AVCHROMA_LOC_CENTER: info.pointee.chroma_site = GST_VIDEO_CHROMA_SITE_JPEG
            case AVCHROMA_LOC_TOPLEFT: info.pointee.chroma_site = GST_VIDEO_CHROMA_SITE_DV
            case AVCHROMA_LOC_TOP: info.pointee.chroma_site = GST_VIDEO_CHROMA_SITE_V_COSITED
            default: break
            }
        }
        let colours = stated.colorimetry
        // What the stream leaves unspecified (2), av1dec leaves unstated (and with no colours stated at all, the range
        // too: its caps then have no colorimetry, which converters downstream fill in by the size). The AV1 decoder
        // does the same, so its pictures are scaled and converted as av1dec's are. avdec states them as unknown.
        let keepsDefault = { (iso: UInt32) in state.codec.leavesUnspecifiedColoursToDefaults && iso == 2 }
        let noneStated =
            keepsDefault(p.color_primaries.rawValue) && keepsDefault(p.color_trc.rawValue)
            && keepsDefault(p.colorspace.rawValue)
        if !upstreamColours || colours.primaries == GST_VIDEO_COLOR_PRIMARIES_UNKNOWN,
            !keepsDefault(p.color_primaries.rawValue)
        {
            info.pointee.colorimetry.primaries = gst_video_color_primaries_from_iso(guint(p.color_primaries.rawValue))
        }
        if !upstreamColours || colours.transfer == GST_VIDEO_TRANSFER_UNKNOWN, !keepsDefault(p.color_trc.rawValue) {
            info.pointee.colorimetry.transfer = gst_video_transfer_function_from_iso(guint(p.color_trc.rawValue))
        }
        if !upstreamColours || colours.matrix == GST_VIDEO_COLOR_MATRIX_UNKNOWN, !keepsDefault(p.colorspace.rawValue) {
            info.pointee.colorimetry.matrix = gst_video_color_matrix_from_iso(guint(p.colorspace.rawValue))
        }
        if !upstreamColours || colours.range == GST_VIDEO_COLOR_RANGE_UNKNOWN, !noneStated {
            info.pointee.colorimetry.range =
                full
                ? GST_VIDEO_COLOR_RANGE_0_255
                : p.color_range == AVCOL_RANGE_MPEG ? GST_VIDEO_COLOR_RANGE_16_235 : GST_VIDEO_COLOR_RANGE_UNKNOWN
        }
        // No stereo side data is read: avdec then states no multiview mode at all.
        info.pointee.ABI.abi.multiview_mode = GST_VIDEO_MULTIVIEW_MODE_NONE
        info.pointee.ABI.abi.multiview_flags = GST_VIDEO_MULTIVIEW_FLAGS_NONE
        // The caps are made here, from the info, so that HDR10's metadata can be added to them.
        let caps = gst_video_info_to_caps(info)
        if let old = output.pointee.caps { gst_caps_unref(old) }
        output.pointee.caps = caps
        if !upstreamHas("mastering-display-info"),
            let metadata = sideData(picture, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA)
        {
            var mastering = GstVideoMasteringDisplayInfo()
            if masteringInfo(metadata.assumingMemoryBound(to: AVMasteringDisplayMetadata.self).pointee, &mastering) {
                _ = gst_video_mastering_display_info_add_to_caps(&mastering, caps)
            }
        }
        if !upstreamHas("content-light-level"), let metadata = sideData(picture, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL) {
            let light = metadata.assumingMemoryBound(to: AVContentLightMetadata.self).pointee
            var level = GstVideoContentLightLevel(
                max_content_light_level: guint16(clamping: light.MaxCLL),
                max_frame_average_light_level: guint16(clamping: light.MaxFALL), _gst_reserved: (nil, nil, nil, nil))
            _ = gst_video_content_light_level_add_to_caps(&level, caps)
        }
        state.outputInfo = output.pointee.info
        guard gst_video_decoder_negotiate(decoder) != 0 else { return GST_FLOW_NOT_NEGOTIATED }
        state.output = wanted
        return GST_FLOW_OK
    }

    /// The picture's side data of `type` (`av_frame_get_side_data`, read from the structure).
    private static func sideData(_ picture: UnsafeMutablePointer<AVFrame>, _ type: AVFrameSideDataType)
        -> UnsafeMutableRawPointer?
    {
        guard let entries = picture.pointee.side_data else { return nil }
        for index in 0..<Int(picture.pointee.nb_side_data) {
            if let entry = entries[index], entry.pointee.type == type, let data = entry.pointee.data {
                return UnsafeMutableRawPointer(data)
            }
        }
        return nil
    }

    /// libavutil's mastering display metadata in GStreamer's units (chromaticities in 0.00002, luminance in
    /// 0.0001 cd/m²), only when complete: `mastering_display_metadata_av_to_gst`.
    private static func masteringInfo(_ av: AVMasteringDisplayMetadata, _ info: inout GstVideoMasteringDisplayInfo)
        -> Bool
    {
        guard av.has_primaries != 0, av.has_luminance != 0 else { return false }
        func scaled(_ scale: guint64, _ value: AVRational) -> guint64 {
            value.den == 0 ? 0 : gst_util_uint64_scale(scale, guint64(max(value.num, 0)), guint64(value.den))
        }
        let primaries = [av.display_primaries.0, av.display_primaries.1, av.display_primaries.2]
        withUnsafeMutablePointer(to: &info.display_primaries) { tuple in
            let points = UnsafeMutableRawPointer(tuple).assumingMemoryBound(
                to: GstVideoMasteringDisplayInfoCoordinates.self)
            for (index, primary) in primaries.enumerated() {
                points[index].x = guint16(clamping: scaled(50000, primary.0))
                points[index].y = guint16(clamping: scaled(50000, primary.1))
            }
        }
        info.white_point.x = guint16(clamping: scaled(50000, av.white_point.0))
        info.white_point.y = guint16(clamping: scaled(50000, av.white_point.1))
        info.max_display_mastering_luminance = guint32(clamping: scaled(10000, av.max_luminance))
        info.min_display_mastering_luminance = guint32(clamping: scaled(10000, av.min_luminance))
        return true
    }

    /// Copies the picture's planes row by row (libavcodec's strides are its own).
    private static func copyPlanes(from picture: UnsafeMutablePointer<AVFrame>, to video: inout GstVideoFrame) {
        let planes = Int(video.info.finfo.pointee.n_planes)
        // Bytes a sample: 2 for I420_10LE (libavcodec's yuv420p10le, the same little-endian 16-bit words).
        let sampleBytes = Int(video.info.finfo.pointee.pixel_stride.0)
        let width = Int(picture.pointee.width)
        let height = Int(picture.pointee.height)
        withUnsafePointer(to: &picture.pointee.data) { dataTuple in
            withUnsafePointer(to: &picture.pointee.linesize) { strideTuple in
                let data = UnsafeRawPointer(dataTuple).assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
                let strides = UnsafeRawPointer(strideTuple).assumingMemoryBound(to: Int32.self)
                for plane in 0..<planes {
                    guard let source = data[plane], let target = ftgst_video_frame_plane(&video, guint(plane)) else {
                        continue
                    }
                    // I420's chroma planes are half the size, rounded up; GRAY8 has one plane.
                    let rowBytes = (plane == 0 ? width : (width + 1) / 2) * sampleBytes
                    let rows = plane == 0 ? height : (height + 1) / 2
                    let sourceStride = Int(strides[plane])
                    let targetStride = Int(ftgst_video_frame_stride(&video, guint(plane)))
                    for row in 0..<rows {
                        (target + row * targetStride).update(from: source + row * sourceStride, count: rowBytes)
                    }
                }
            }
        }
    }

    private static func postError(
        _ decoder: UnsafeMutablePointer<GstVideoDecoder>, domain: GQuark, code: gint, _ text: String
    ) {
        SwiftSubclass<LibavDecoderState>.postError(
            decoder, domain: domain, code: code, message: text, debug: text,
            function: state(of: UnsafeMutableRawPointer(decoder)).codec.factoryName)
    }
}
