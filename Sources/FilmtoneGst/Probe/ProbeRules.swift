import FilmtoneLooks
import Foundation
import GstKit

/// What the probe pipeline saw, as plain values: the type finder's caps, and per exposed stream its caps after
/// the parser, its tags, the first bytes of a still image and the durations upstream reported.
struct ProbeObservation: Equatable {
    var containerCaps: CapsStructure?
    var streams: [StreamObservation]
    /// The pipeline's duration query in TIME.
    var durationNanoseconds: UInt64?
}

struct StreamObservation: Equatable {
    var caps: CapsStructure
    var tags = TagValues()
    /// Leading bytes of the first buffer, kept for still images only (PNG IHDR, JPEG SOF).
    var header: [UInt8] = []
    /// The duration of this stream upstream answered in `GST_FORMAT_DEFAULT` (frames), if it did.
    var frames: Int64? = nil
    /// The duration of this stream in TIME.
    var durationNanoseconds: UInt64? = nil
    /// The stream time of its first buffer: where its timeline starts (`ProbeRules.timelineStart`).
    var firstNanoseconds: UInt64? = nil

    var isVideo: Bool { caps.name.hasPrefix("video/") || caps.name.hasPrefix("image/") }
    var isAudio: Bool { caps.name.hasPrefix("audio/") }
}

/// The pure part of `ftgst probe`: how the pipeline stops, and every mapping from caps, tags and header bytes to
/// the report. No GStreamer calls, so every rule has a unit test that needs no media.
enum ProbeRules {
    // MARK: - Pipeline

    /// `uridecodebin` alone: each stream it exposes gets a `fakesink` when it appears (`pad-added`). The `uri` is
    /// set as a property, never spliced into this text.
    static let launchDescription = "pipeline.( uridecodebin name=src )"

    /// Decodebin plugs demuxers and parsers but stops in front of any decoder: the exposed pad then carries the
    /// parser's caps (profile, bit depth, chroma format, colorimetry), and nothing is decoded. Raw streams are
    /// exposed by uridecodebin's own `caps` as usual.
    /// `pngparse` is skipped, as in the frame pipeline (`FrameRecipe.autoplugDecision`): its cost is quadratic in a
    /// PNG's size (a 24 MP file hit the 5 s stall rule); the PNG's size then comes from its IHDR (`pngHeader`).
    static func autoplugDecision(forKlass klass: String, factory: String = "") -> AutoplugDecision {
        let offered = FactoryDescription(name: factory, klass: klass)
        if FrameRecipe.autoplugDecision(factory: offered, ownDecoder: false) == .skip { return .skip }
        return klass.split(separator: "/").contains("Decoder") ? .expose : .tryElement
    }

    /// How many leading bytes of a still image's first buffer are kept for `imageHeader`: enough for the EXIF
    /// segment (at most 64 KiB) that may come before a JPEG's SOF.
    static let headerBytes = 256 * 1024

    // MARK: - Report

    /// The whole report from what the pipeline saw. nil when no video or audio stream was exposed.
    static func report(from observation: ProbeObservation) -> ProbeReport? {
        let videoStream = observation.streams.first(where: \.isVideo)
        let audioStream = observation.streams.first(where: \.isAudio)
        guard videoStream != nil || audioStream != nil else { return nil }
        let isImage = isImage(container: observation.containerCaps, video: videoStream?.caps)
        let start = isImage ? 0 : ((videoStream ?? audioStream)?.firstNanoseconds ?? 0)
        let duration =
            isImage
            ? nil
            : observation.durationNanoseconds.map {
                contentDuration(reported: $0, start: start, container: observation.containerCaps)
            }
        let video = videoStream.map { videoReport($0, isImage: isImage, container: observation.containerCaps) }
        var report = ProbeReport(
            container: observation.containerCaps.map(containerName),
            isImage: isImage,
            durationMilliseconds: duration.map { Int64($0 / 1_000_000) },
            video: video,
            audio: audioStream.map { audioReport($0.caps) },
            inputTransform: video.map { inputTransform(colorimetry: $0.colorimetry, isImage: isImage) })
        report.timelineStart = .nanoseconds(Int64(start))
        return report
    }

    // MARK: - Timeline

    /// The stream time of a buffer stamped `pts` in `segment` (`gst_segment_to_stream_time` for a forward
    /// segment); before the segment's start it counts back from `time`, never below 0. No segment: the PTS.
    static func streamTime(pts: ClockTime, segment: (start: ClockTime, time: ClockTime)?) -> ClockTime {
        guard let segment else { return pts }
        if pts >= segment.start {
            return ClockTime(nanoseconds: pts.nanoseconds - segment.start.nanoseconds + segment.time.nanoseconds)
        }
        let before = segment.start.nanoseconds - pts.nanoseconds
        return ClockTime(nanoseconds: segment.time.nanoseconds > before ? segment.time.nanoseconds - before : 0)
    }

    /// The duration on the 0-based timeline (time 0 = the first frame, `start` in stream time). qtdemux and
    /// matroskademux answer the stream time of the end (an MP4 with a 10 s empty edit and 3 s of frames says
    /// 13 s), so the start is taken off. tsdemux answers a length already: its stream time starts at the first
    /// PCR, ahead of the first frame by the muxer's delay, and its duration is the span of PCRs, which trail
    /// the frames by that same delay.
    static func contentDuration(reported: UInt64, start: UInt64, container: CapsStructure?) -> UInt64 {
        if container?.name == "video/mpegts" { return reported }
        return reported > start ? reported - start : reported
    }

    /// A still image: the type finder saw an image format (`image/jpeg`, `image/png`…). Without a type (it was
    /// not seen), an image stream with a 0/1 frame rate or none.
    static func isImage(container: CapsStructure?, video: CapsStructure?) -> Bool {
        if let container { return container.name.hasPrefix("image/") }
        guard let video, video.name.hasPrefix("image/") else { return false }
        return (video.fraction("framerate")?.numerator ?? 0) == 0
    }

    /// `container`: the type finder's caps, for `contentDuration` of the stream.
    static func videoReport(_ stream: StreamObservation, isImage: Bool, container: CapsStructure? = nil)
        -> VideoStreamReport
    {
        let caps = stream.caps
        let header = imageHeader(codecCaps: caps.name, bytes: stream.header)
        // A PNG's caps hold no size without pngparse (skipped): its IHDR says it.
        let width = caps.int("width") ?? header?.width ?? 0
        let height = caps.int("height") ?? header?.height ?? 0
        let par =
            caps.fraction("pixel-aspect-ratio").flatMap { $0.numerator > 0 && $0.denominator > 0 ? $0 : nil }
            ?? Fraction(1, 1)
        let rotation = rotation(orientation: stream.tags.imageOrientation)
        let display = displaySize(width: width, height: height, pixelAspect: par, rotation: rotation)
        let rate = caps.fraction("framerate").flatMap { $0.numerator > 0 && $0.denominator > 0 ? $0 : nil }
        let colorimetry = caps.string("colorimetry").flatMap(colorimetry(parsing:))
        return VideoStreamReport(
            codec: videoCodec(caps, isImage: isImage),
            profile: profile(caps),
            width: width, height: height, displayWidth: display.width, displayHeight: display.height,
            rotation: rotation, pixelAspectRatio: par.description,
            frameRate: isImage ? nil : rate?.description,
            frameCount: frameCount(
                isImage: isImage, reportedFrames: stream.frames,
                durationNanoseconds: stream.durationNanoseconds.map {
                    contentDuration(reported: $0, start: stream.firstNanoseconds ?? 0, container: container)
                }, frameRate: rate),
            bitDepth: caps.int("bit-depth-luma") ?? header?.bitDepth ?? codecSampling(caps)?.bitDepth,
            chromaFormat: chromaFormat(caps) ?? header?.chromaFormat ?? codecSampling(caps)?.chromaFormat,
            colorimetry: colorimetry,
            hdr: hdr(transfer: colorimetry?.transfer))
    }

    static func audioReport(_ caps: CapsStructure) -> AudioStreamReport {
        AudioStreamReport(codec: audioCodec(caps), channels: caps.int("channels"), sampleRate: caps.int("rate"))
    }

    // MARK: - Container and codecs

    /// The type finder's caps as a short name. MP4 and QuickTime share `video/quicktime`; its `variant` tells
    /// them apart (`iso` → mp4, `apple` → mov). Unknown types keep the last part of the media type.
    static func containerName(_ caps: CapsStructure) -> String {
        switch caps.name {
        case "video/quicktime":
            switch caps.string("variant") {
            case "iso", "iso-fragmented": return "mp4"
            case "3gpp": return "3gp"
            case "3g2": return "3g2"
            default: return "mov"
            }
        case "audio/x-m4a": return "m4a"
        case "video/x-matroska", "audio/x-matroska": return "mkv"
        case "video/webm", "audio/webm": return "webm"
        case "video/x-msvideo": return "avi"
        case "video/mpegts": return "ts"
        case "video/mpeg": return caps.bool("systemstream") == true ? "mpeg-ps" : "mpeg-video"
        case "application/ogg", "audio/ogg", "video/ogg": return "ogg"
        case "video/x-flv": return "flv"
        case "application/mxf": return "mxf"
        case "video/x-ms-asf": return "asf"
        case "audio/x-wav": return "wav"
        case "image/jpeg": return "jpeg"
        case "image/png": return "png"
        case "image/webp": return "webp"
        case "image/gif": return "gif"
        case "image/tiff": return "tiff"
        case "image/bmp": return "bmp"
        default: return shortName(caps.name)
        }
    }

    /// A video (or image) codec's short name from its caps. `image/jpeg` is `jpeg` as a photo and `mjpeg`
    /// inside a video.
    static func videoCodec(_ caps: CapsStructure, isImage: Bool) -> String {
        switch caps.name {
        case "video/x-h264": return "h264"
        case "video/x-h265": return "h265"
        case "video/x-h266": return "h266"
        case "video/x-vp8": return "vp8"
        case "video/x-vp9": return "vp9"
        case "video/x-av1": return "av1"
        case "video/x-prores": return "prores"
        case "video/x-dnxhd": return "dnxhd"
        case "video/x-cineform": return "cineform"
        case "video/x-theora": return "theora"
        case "video/x-h263": return "h263"
        case "video/x-dv": return "dv"
        case "video/x-raw": return "rawvideo"
        case "video/x-divx", "video/x-xvid": return "mpeg4"
        case "video/x-ffv": return "ffv\(caps.int("ffvversion") ?? 1)"
        case "video/x-wmv": return "wmv\(caps.int("wmvversion") ?? 3)"
        case "video/mpeg":
            switch caps.int("mpegversion") {
            case 1: return "mpeg1video"
            case 4: return "mpeg4"
            default: return "mpeg2video"
            }
        case "image/jpeg": return isImage ? "jpeg" : "mjpeg"
        case "image/png": return "png"
        case "image/webp": return "webp"
        case "image/gif": return "gif"
        case "image/tiff": return "tiff"
        case "image/bmp": return "bmp"
        case "image/x-j2c", "image/x-jpc", "image/jp2": return "jpeg2000"
        default: return shortName(caps.name)
        }
    }

    static func audioCodec(_ caps: CapsStructure) -> String {
        switch caps.name {
        case "audio/mpeg":
            switch caps.int("mpegversion") {
            case 2, 4: return "aac"
            default:
                switch caps.int("layer") {
                case 1: return "mp1"
                case 2: return "mp2"
                default: return "mp3"
                }
            }
        case "audio/x-ac3", "audio/ac3": return "ac3"
        case "audio/x-eac3": return "eac3"
        case "audio/x-opus": return "opus"
        case "audio/x-vorbis": return "vorbis"
        case "audio/x-flac": return "flac"
        case "audio/x-alac": return "alac"
        case "audio/x-dts": return "dts"
        case "audio/x-true-hd": return "truehd"
        case "audio/x-wma": return "wma"
        case "audio/x-raw": return "pcm"
        case "audio/x-alaw": return "pcm_alaw"
        case "audio/x-mulaw": return "pcm_mulaw"
        case "audio/AMR": return "amr_nb"
        case "audio/AMR-WB": return "amr_wb"
        default: return shortName(caps.name)
        }
    }

    /// `video/x-foo` → `foo`: the fallback for media types without a mapping.
    static func shortName(_ mediaType: String) -> String {
        var name = mediaType.split(separator: "/").last.map(String.init) ?? mediaType
        if name.hasPrefix("x-") { name.removeFirst(2) }
        return name.lowercased()
    }

    /// The parser's `profile`; for JPEG, the coding process of its SOF marker (jpegparse's `sof-marker`).
    static func profile(_ caps: CapsStructure) -> String? {
        if let profile = caps.string("profile") { return profile }
        guard caps.name == "image/jpeg", let marker = caps.int("sof-marker") else { return nil }
        switch marker {
        case 0: return "baseline"
        case 1, 5, 9, 13: return "extended"
        case 2, 6, 10, 14: return "progressive"
        case 3, 7, 11, 15: return "lossless"
        default: return nil
        }
    }

    /// What a codec fixes by definition, for streams whose caps carry no depth: ProRes 422 (proxy, lt,
    /// standard, hq) is 10-bit 4:2:2, ProRes 4444 (and XQ) 12-bit 4:4:4.
    static func codecSampling(_ caps: CapsStructure) -> (bitDepth: Int, chromaFormat: String)? {
        guard caps.name == "video/x-prores" else { return nil }
        return (caps.string("variant") ?? "").hasPrefix("4444") ? (12, "4:4:4") : (10, "4:2:2")
    }

    /// h264parse/h265parse's `chroma-format` as is; jpegparse's `sampling` (`YCbCr-4:2:0`, `GRAYSCALE`, `RGB`)
    /// as the same kind of string. nil when the caps do not say.
    static func chromaFormat(_ caps: CapsStructure) -> String? {
        if let format = caps.string("chroma-format") { return format }
        guard let sampling = caps.string("sampling") else { return nil }
        switch sampling {
        case "GRAYSCALE": return "4:0:0"
        case "RGB", "BGR", "RGBA", "BGRA", "YCbCrA-4:4:4:4": return "4:4:4"
        default:
            if sampling.hasPrefix("YCbCr-") { return String(sampling.dropFirst("YCbCr-".count)) }
            return nil
        }
    }

    // MARK: - Geometry

    /// GStreamer's `image-orientation` tag as degrees clockwise to apply: `rotate-90` → 90, `rotate-270` → 270.
    /// The mirrored forms (`flip-rotate-N`) give N; the mirroring itself is not reported. No tag, or a value
    /// GStreamer does not define, is 0.
    static func rotation(orientation: String?) -> Int {
        guard var text = orientation else { return 0 }
        if text.hasPrefix("flip-") { text.removeFirst("flip-".count) }
        switch text {
        case "rotate-90": return 90
        case "rotate-180": return 180
        case "rotate-270": return 270
        default: return 0
        }
    }

    /// The size shown: the coded width stretched by the pixel aspect ratio (rounded, at least 1), by the coded
    /// height; swapped for a quarter turn.
    static func displaySize(width: Int, height: Int, pixelAspect: Fraction, rotation: Int)
        -> (width: Int, height: Int)
    {
        guard width > 0, height > 0 else { return (width, height) }
        let stretched =
            pixelAspect.numerator > 0 && pixelAspect.denominator > 0
            ? max(1, Int((Double(width) * pixelAspect.value).rounded())) : width
        return rotation == 90 || rotation == 270 ? (height, stretched) : (stretched, height)
    }

    /// 1 for a still image. Otherwise the frame count upstream answered in frames (`GST_FORMAT_DEFAULT`) when it
    /// did, else the stream's duration times its frame rate, rounded to the nearest frame. nil without a
    /// duration or with a variable frame rate.
    static func frameCount(isImage: Bool, reportedFrames: Int64?, durationNanoseconds: UInt64?, frameRate: Fraction?)
        -> Int64?
    {
        if isImage { return 1 }
        if let reportedFrames, reportedFrames > 0 { return reportedFrames }
        guard let durationNanoseconds, let frameRate, frameRate.numerator > 0, frameRate.denominator > 0 else {
            return nil
        }
        let frames =
            Double(durationNanoseconds) * Double(frameRate.numerator)
            / (Double(frameRate.denominator) * 1e9)
        return Int64(frames.rounded())
    }

    // MARK: - Still image headers

    struct ImageHeader: Equatable {
        var bitDepth: Int
        var chromaFormat: String?
        /// The picture's size, where the header gives it (PNG's IHDR).
        var width: Int? = nil
        var height: Int? = nil
    }

    /// Bit depth (and for PNG the chroma layout) from a still image's first bytes, which its caps do not carry:
    /// PNG's IHDR, a JPEG's SOF precision. nil for other codecs or bytes that do not parse.
    static func imageHeader(codecCaps mediaType: String, bytes: [UInt8]) -> ImageHeader? {
        switch mediaType {
        case "image/png": return pngHeader(bytes)
        case "image/jpeg": return jpegPrecision(bytes).map { ImageHeader(bitDepth: $0, chromaFormat: nil) }
        default: return nil
        }
    }

    /// PNG: signature, then the IHDR chunk (length, "IHDR", width, height, bit depth, colour type). A palette
    /// image (colour type 3) has 8-bit RGB entries whatever its index depth; greyscale (0, 4) is 4:0:0.
    static func pngHeader(_ bytes: [UInt8]) -> ImageHeader? {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard bytes.count >= 26, Array(bytes[0..<8]) == signature, Array(bytes[12..<16]) == Array("IHDR".utf8)
        else { return nil }
        let depth = Int(bytes[24])
        func word(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        let (width, height) = (word(16), word(20))
        switch bytes[25] {
        case 0, 4: return ImageHeader(bitDepth: depth, chromaFormat: "4:0:0", width: width, height: height)
        case 3: return ImageHeader(bitDepth: 8, chromaFormat: "4:4:4", width: width, height: height)
        case 2, 6: return ImageHeader(bitDepth: depth, chromaFormat: "4:4:4", width: width, height: height)
        default: return nil
        }
    }

    /// JPEG: the sample precision of the first SOFn segment (0xC0–0xCF except DHT C4, JPG C8, DAC CC), found
    /// by walking the marker segments from SOI; nil when SOS or the end comes first.
    static func jpegPrecision(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var index = 2
        while index + 4 < bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            if marker == 0xFF {
                index += 1
                continue
            }  // fill byte
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) {
                index += 2
                continue
            }
            if marker == 0xDA || marker == 0xD9 { return nil }
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2 else { return nil }
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                return index + 4 < bytes.count ? Int(bytes[index + 4]) : nil
            }
            index += 2 + length
        }
        return nil
    }

    // MARK: - Colour

    /// GStreamer's `GstVideoColorRange`, `GstVideoColorMatrix`, `GstVideoTransferFunction` and
    /// `GstVideoColorPrimaries`, indexed by their C values (pinned by a test against `gst_video_colorimetry_*`).
    static let rangeNames = ["unknown", "full", "limited"]
    static let matrixNames = ["unknown", "rgb", "fcc", "bt709", "bt601", "smpte240m", "bt2020"]
    static let transferNames = [
        "unknown", "gamma10", "gamma18", "gamma20", "gamma22", "bt709", "smpte240m", "srgb", "gamma28", "log100",
        "log316", "bt2020-12", "adobergb", "bt2020-10", "smpte2084", "arib-std-b67", "bt601",
    ]
    static let primariesNames = [
        "unknown", "bt709", "bt470m", "bt470bg", "smpte170m", "smpte240m", "film", "bt2020", "adobergb", "smpte428",
        "smpte431", "smpte432", "ebu3213",
    ]

    /// GStreamer's named colorimetries (`video-color.c`), as range:matrix:transfer:primaries values.
    static let namedColorimetries: [String: (range: Int, matrix: Int, transfer: Int, primaries: Int)] = [
        "bt601": (2, 4, 16, 4),
        "bt709": (2, 3, 5, 1),
        "smpte240m": (2, 5, 6, 5),
        "sRGB": (1, 1, 7, 1),
        "bt2020": (2, 6, 11, 7),
        "bt2020-10": (2, 6, 13, 7),
        "bt2100-pq": (2, 6, 14, 7),
        "bt2100-hlg": (2, 6, 15, 7),
    ]

    /// A caps `colorimetry` string: a GStreamer name (`bt709`, `bt2100-pq`, `sRGB`…) or the numeric form
    /// `range:matrix:transfer:primaries` (`1:1:5:1`), as names. nil for text that is neither; a number outside
    /// the known values reads as `unknown`.
    static func colorimetry(parsing text: String) -> ColorimetryReport? {
        let values: (range: Int, matrix: Int, transfer: Int, primaries: Int)
        if let named = namedColorimetries[text] {
            values = named
        } else {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
            guard parts.count == 4, let range = parts[0], let matrix = parts[1], let transfer = parts[2],
                let primaries = parts[3]
            else { return nil }
            values = (range, matrix, transfer, primaries)
        }
        func name(_ table: [String], _ index: Int) -> String {
            table.indices.contains(index) ? table[index] : "unknown"
        }
        return ColorimetryReport(
            primaries: name(primariesNames, values.primaries), transfer: name(transferNames, values.transfer),
            matrix: name(matrixNames, values.matrix), range: name(rangeNames, values.range))
    }

    /// PQ for SMPTE ST 2084, HLG for ARIB STD-B67, otherwise none.
    static func hdr(transfer: String?) -> HDRKind {
        switch transfer {
        case "smpte2084": return .pq
        case "arib-std-b67": return .hlg
        default: return .none
        }
    }

    /// The report of a Dolby Vision stream (`DolbyVisionReader`): the configuration goes on the video stream, and
    /// the input transform's reason says which layer its policy is for (the base layer's), or, for a stream that
    /// cannot be shown, why every picture of it is refused (and that nothing is applied).
    static func report(_ report: ProbeReport, dolbyVision: DolbyVisionConfiguration?) -> ProbeReport {
        guard let dolbyVision, report.video != nil else { return report }
        var report = report
        report.video?.dolbyVision = dolbyVision
        if var transform = report.inputTransform {
            if let refusal = dolbyVision.refusal {
                transform.reason = refusal.message + "; thumbnails, previews and exports are refused"
                transform.applied = "none"
            } else if let layer = dolbyVision.baseLayer {
                transform.reason =
                    "Dolby Vision \(dolbyVision.name), shown through its \(layer.rawValue) base layer; "
                    + transform.reason
            }
            report.inputTransform = transform
        }
        return report
    }

    static let logTransfers: Set<String> = ["log100", "log316"]
    static let sdrTransfers: Set<String> = [
        "bt709", "bt601", "srgb", "smpte240m", "gamma10", "gamma18", "gamma20", "gamma22", "gamma28", "bt2020-10",
        "bt2020-12", "adobergb",
    ]
    static let wideGamutPrimaries: Set<String> = ["bt2020", "adobergb", "smpte431", "smpte432"]

    /// What the input slot should do, decided by the transfer first (HDR, log, SDR), then for SDR by the
    /// primaries. No colorimetry, or an unknown transfer, is assumed BT.709 for video and sRGB for stills.
    static func inputTransform(colorimetry: ColorimetryReport?, isImage: Bool) -> InputTransform {
        guard let colorimetry, colorimetry.transfer != "unknown" else {
            return isImage
                ? InputTransform(policy: .assumeSRGB, reason: "the image signals no colorimetry: taken as sRGB")
                : InputTransform(
                    policy: .assumeBT709,
                    reason: "the stream signals no transfer function: "
                        + "taken as SDR BT.709")
        }
        switch colorimetry.transfer {
        case "smpte2084":
            return InputTransform(
                policy: .hdrToSDR,
                reason: "HDR PQ (SMPTE ST 2084, \(colorimetry.primaries) "
                    + "primaries): tone-mapped to SDR BT.709 by a generated input LUT",
                applied: ToneMap(transfer: .pq).summary)
        case "arib-std-b67":
            return InputTransform(
                policy: .hdrToSDR,
                reason: "HDR HLG (ARIB STD-B67, \(colorimetry.primaries) "
                    + "primaries): tone-mapped to SDR BT.709 by a generated input LUT",
                applied: ToneMap(transfer: .hlg).summary)
        case let transfer where logTransfers.contains(transfer):
            return InputTransform(
                policy: .logToDisplay,
                reason: "logarithmic transfer (\(transfer)): "
                    + "an input LUT from log to display is needed")
        case let transfer where sdrTransfers.contains(transfer) && wideGamutPrimaries.contains(colorimetry.primaries):
            return InputTransform(
                policy: .gamutToBT709,
                reason: "SDR (\(transfer)) with wide-gamut "
                    + "\(colorimetry.primaries) primaries: map the gamut to BT.709")
        default:
            return InputTransform(
                policy: .passthrough,
                reason: "SDR (transfer \(colorimetry.transfer), "
                    + "primaries \(colorimetry.primaries)): no input transform needed")
        }
    }
}
