import CGst
import FilmtoneTestSupport
import XCTest

@testable import FilmtoneGst
@testable import GstKit

/// `ProbeRules`: every mapping from caps, tags and header bytes to the probe report, without media. The C enum
/// values the tables mirror are pinned against GStreamer at the end.
final class ProbeTests: XCTestCase {
    private func caps(_ name: String, _ fields: [String: CapsValue] = [:]) -> CapsStructure {
        CapsStructure(name: name, fields: fields)
    }

    // MARK: - Container and codecs

    func testContainerNames() {
        XCTAssertEqual(ProbeRules.containerName(caps("video/quicktime", ["variant": .string("iso")])), "mp4")
        XCTAssertEqual(ProbeRules.containerName(caps("video/quicktime", ["variant": .string("iso-fragmented")])), "mp4")
        XCTAssertEqual(ProbeRules.containerName(caps("video/quicktime", ["variant": .string("apple")])), "mov")
        XCTAssertEqual(ProbeRules.containerName(caps("video/quicktime")), "mov")
        XCTAssertEqual(ProbeRules.containerName(caps("video/quicktime", ["variant": .string("3gpp")])), "3gp")
        XCTAssertEqual(ProbeRules.containerName(caps("video/x-matroska")), "mkv")
        XCTAssertEqual(ProbeRules.containerName(caps("video/webm")), "webm")
        XCTAssertEqual(ProbeRules.containerName(caps("video/mpegts", ["systemstream": .bool(true)])), "ts")
        XCTAssertEqual(ProbeRules.containerName(caps("video/mpeg", ["systemstream": .bool(true)])), "mpeg-ps")
        XCTAssertEqual(ProbeRules.containerName(caps("image/jpeg", ["width": .int(320)])), "jpeg")
        XCTAssertEqual(ProbeRules.containerName(caps("image/png")), "png")
        XCTAssertEqual(ProbeRules.containerName(caps("application/mxf")), "mxf")
        XCTAssertEqual(ProbeRules.containerName(caps("video/x-something-new")), "something-new")
    }

    func testVideoCodecShortNames() {
        XCTAssertEqual(ProbeRules.videoCodec(caps("video/x-h264"), isImage: false), "h264")
        XCTAssertEqual(ProbeRules.videoCodec(caps("video/x-h265"), isImage: false), "h265")
        XCTAssertEqual(ProbeRules.videoCodec(caps("video/x-vp9"), isImage: false), "vp9")
        XCTAssertEqual(ProbeRules.videoCodec(caps("video/x-av1"), isImage: false), "av1")
        XCTAssertEqual(
            ProbeRules.videoCodec(caps("video/x-prores", ["variant": .string("hq")]), isImage: false),
            "prores")
        XCTAssertEqual(
            ProbeRules.videoCodec(caps("video/mpeg", ["mpegversion": .int(2)]), isImage: false),
            "mpeg2video")
        XCTAssertEqual(ProbeRules.videoCodec(caps("video/mpeg", ["mpegversion": .int(4)]), isImage: false), "mpeg4")
        XCTAssertEqual(ProbeRules.videoCodec(caps("image/jpeg"), isImage: false), "mjpeg", "JPEG frames in a video")
        XCTAssertEqual(ProbeRules.videoCodec(caps("image/jpeg"), isImage: true), "jpeg")
        XCTAssertEqual(ProbeRules.videoCodec(caps("image/png"), isImage: true), "png")
        XCTAssertEqual(
            ProbeRules.videoCodec(caps("video/x-raw", ["format": .string("I420")]), isImage: false),
            "rawvideo")
        XCTAssertEqual(ProbeRules.videoCodec(caps("video/x-ffv", ["ffvversion": .int(1)]), isImage: false), "ffv1")
        XCTAssertEqual(ProbeRules.videoCodec(caps("video/x-newcodec"), isImage: false), "newcodec")
    }

    func testAudioCodecShortNames() {
        XCTAssertEqual(ProbeRules.audioCodec(caps("audio/mpeg", ["mpegversion": .int(4)])), "aac")
        XCTAssertEqual(ProbeRules.audioCodec(caps("audio/mpeg", ["mpegversion": .int(2)])), "aac")
        XCTAssertEqual(ProbeRules.audioCodec(caps("audio/mpeg", ["mpegversion": .int(1), "layer": .int(3)])), "mp3")
        XCTAssertEqual(ProbeRules.audioCodec(caps("audio/mpeg", ["mpegversion": .int(1), "layer": .int(2)])), "mp2")
        XCTAssertEqual(ProbeRules.audioCodec(caps("audio/x-opus")), "opus")
        XCTAssertEqual(ProbeRules.audioCodec(caps("audio/x-flac")), "flac")
        XCTAssertEqual(ProbeRules.audioCodec(caps("audio/x-raw")), "pcm")
        XCTAssertEqual(ProbeRules.audioCodec(caps("audio/x-ac3")), "ac3")
    }

    func testProfileFromCapsAndFromJPEGCodingProcess() {
        XCTAssertEqual(ProbeRules.profile(caps("video/x-h265", ["profile": .string("main-10")])), "main-10")
        XCTAssertEqual(ProbeRules.profile(caps("image/jpeg", ["sof-marker": .int(0)])), "baseline")
        XCTAssertEqual(ProbeRules.profile(caps("image/jpeg", ["sof-marker": .int(2)])), "progressive")
        XCTAssertNil(ProbeRules.profile(caps("image/png")))
    }

    func testChromaFormatFromParserAndJPEGSampling() {
        XCTAssertEqual(ProbeRules.chromaFormat(caps("video/x-h264", ["chroma-format": .string("4:4:4")])), "4:4:4")
        XCTAssertEqual(ProbeRules.chromaFormat(caps("image/jpeg", ["sampling": .string("YCbCr-4:2:0")])), "4:2:0")
        XCTAssertEqual(ProbeRules.chromaFormat(caps("image/jpeg", ["sampling": .string("YCbCr-4:2:2")])), "4:2:2")
        XCTAssertEqual(ProbeRules.chromaFormat(caps("image/jpeg", ["sampling": .string("GRAYSCALE")])), "4:0:0")
        XCTAssertEqual(ProbeRules.chromaFormat(caps("image/jpeg", ["sampling": .string("RGB")])), "4:4:4")
        XCTAssertNil(ProbeRules.chromaFormat(caps("video/x-vp9")))
    }

    func testDecodebinStopsInFrontOfDecodersOnly() {
        XCTAssertEqual(ProbeRules.autoplugDecision(forKlass: "Codec/Decoder/Video"), .expose)
        XCTAssertEqual(ProbeRules.autoplugDecision(forKlass: "Codec/Decoder/Video/Hardware"), .expose)
        XCTAssertEqual(ProbeRules.autoplugDecision(forKlass: "Codec/Decoder/Image"), .expose)
        XCTAssertEqual(ProbeRules.autoplugDecision(forKlass: "Codec/Decoder/Audio"), .expose)
        XCTAssertEqual(ProbeRules.autoplugDecision(forKlass: "Codec/Demuxer"), .tryElement)
        XCTAssertEqual(ProbeRules.autoplugDecision(forKlass: "Codec/Parser/Converter/Video"), .tryElement)
        XCTAssertEqual(ProbeRules.autoplugDecision(forKlass: "Codec/Parser/Image"), .tryElement)
        XCTAssertEqual(
            ProbeRules.autoplugDecision(forKlass: "Codec/Parser/Image", factory: "pngparse"), .skip,
            "quadratic in a PNG's size: the size is read from the IHDR instead")
    }

    // MARK: - Geometry

    func testRotationFromImageOrientationTag() {
        XCTAssertEqual(ProbeRules.rotation(orientation: nil), 0)
        XCTAssertEqual(ProbeRules.rotation(orientation: "rotate-0"), 0)
        XCTAssertEqual(ProbeRules.rotation(orientation: "rotate-90"), 90)
        XCTAssertEqual(ProbeRules.rotation(orientation: "rotate-180"), 180)
        XCTAssertEqual(ProbeRules.rotation(orientation: "rotate-270"), 270)
        XCTAssertEqual(ProbeRules.rotation(orientation: "flip-rotate-90"), 90)
        XCTAssertEqual(ProbeRules.rotation(orientation: "sideways"), 0)
    }

    func testDisplaySizeAppliesPixelAspectThenRotation() {
        func size(_ w: Int, _ h: Int, _ par: Fraction, _ rotation: Int) -> [Int] {
            let s = ProbeRules.displaySize(width: w, height: h, pixelAspect: par, rotation: rotation)
            return [s.width, s.height]
        }
        XCTAssertEqual(size(320, 240, Fraction(1, 1), 0), [320, 240])
        XCTAssertEqual(size(320, 240, Fraction(1, 1), 270), [240, 320])
        XCTAssertEqual(size(320, 240, Fraction(1, 1), 180), [320, 240])
        XCTAssertEqual(size(360, 240, Fraction(16, 9), 0), [640, 240])
        // The stretched width is what turns sideways.
        XCTAssertEqual(size(360, 240, Fraction(16, 9), 90), [240, 640])
        XCTAssertEqual(size(720, 480, Fraction(10, 11), 0), [655, 480])
        XCTAssertEqual(size(320, 240, Fraction(0, 1), 0), [320, 240], "a zero PAR is ignored")
    }

    func testFrameCountPrefersReportedFramesThenDurationTimesRate() {
        XCTAssertEqual(
            ProbeRules.frameCount(
                isImage: true, reportedFrames: nil, durationNanoseconds: nil,
                frameRate: nil), 1)
        XCTAssertEqual(
            ProbeRules.frameCount(
                isImage: false, reportedFrames: 91, durationNanoseconds: 3_000_000_000,
                frameRate: Fraction(30, 1)), 91)
        XCTAssertEqual(
            ProbeRules.frameCount(
                isImage: false, reportedFrames: nil, durationNanoseconds: 3_000_000_000,
                frameRate: Fraction(30, 1)), 90)
        // 10.01 s at 29.97 fps = 300 frames (duration × rate rounded).
        XCTAssertEqual(
            ProbeRules.frameCount(
                isImage: false, reportedFrames: nil, durationNanoseconds: 10_010_000_000,
                frameRate: Fraction(30000, 1001)), 300)
        XCTAssertNil(
            ProbeRules.frameCount(
                isImage: false, reportedFrames: nil, durationNanoseconds: 3_000_000_000,
                frameRate: Fraction(0, 1)), "variable frame rate")
        XCTAssertNil(
            ProbeRules.frameCount(
                isImage: false, reportedFrames: nil, durationNanoseconds: nil,
                frameRate: Fraction(30, 1)))
    }

    // MARK: - Still image headers

    func testPNGHeaderGivesBitDepthChromaAndSize() {
        func png(depth: UInt8, colourType: UInt8) -> [UInt8] {
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
                + [0, 0, 0x17, 0x70, 0, 0, 0, 150, depth, colourType, 0, 0, 0]
        }
        func header(_ depth: Int, _ chroma: String) -> ProbeRules.ImageHeader {
            .init(bitDepth: depth, chromaFormat: chroma, width: 6000, height: 150)
        }
        XCTAssertEqual(ProbeRules.pngHeader(png(depth: 8, colourType: 2)), header(8, "4:4:4"))
        XCTAssertEqual(ProbeRules.pngHeader(png(depth: 16, colourType: 6)), header(16, "4:4:4"))
        XCTAssertEqual(ProbeRules.pngHeader(png(depth: 16, colourType: 0)), header(16, "4:0:0"))
        XCTAssertEqual(
            ProbeRules.pngHeader(png(depth: 4, colourType: 3)), header(8, "4:4:4"), "palette entries are 8-bit RGB")
        XCTAssertNil(ProbeRules.pngHeader(Array(png(depth: 8, colourType: 2).prefix(20))))
        XCTAssertNil(ProbeRules.pngHeader([UInt8](repeating: 0, count: 40)))
    }

    func testJPEGPrecisionIsReadFromTheFirstSOFAfterOtherSegments() {
        let app1: [UInt8] = [0xFF, 0xE1, 0x00, 0x06, 0x45, 0x78, 0x69, 0x66]  // "Exif", length 6
        let dqt: [UInt8] = [0xFF, 0xDB, 0x00, 0x03, 0x00]
        func sof(_ marker: UInt8, precision: UInt8) -> [UInt8] {
            [0xFF, marker, 0x00, 0x0B, precision, 0x00, 0xF0, 0x01, 0x40, 0x01, 0x01, 0x11, 0x00]
        }
        XCTAssertEqual(ProbeRules.jpegPrecision([0xFF, 0xD8] + app1 + dqt + sof(0xC0, precision: 8)), 8)
        XCTAssertEqual(ProbeRules.jpegPrecision([0xFF, 0xD8] + app1 + sof(0xC1, precision: 12)), 12)
        // DHT (C4) is not a frame header.
        XCTAssertEqual(
            ProbeRules.jpegPrecision([0xFF, 0xD8, 0xFF, 0xC4, 0x00, 0x03, 0x00] + sof(0xC2, precision: 12)),
            12)
        XCTAssertNil(ProbeRules.jpegPrecision([0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 0x00]), "SOS before any SOF")
        XCTAssertNil(ProbeRules.jpegPrecision([0x89, 0x50, 0x4E, 0x47]))
        XCTAssertEqual(
            ProbeRules.imageHeader(codecCaps: "image/jpeg", bytes: [0xFF, 0xD8] + sof(0xC0, precision: 8)),
            .init(bitDepth: 8, chromaFormat: nil))
        XCTAssertNil(ProbeRules.imageHeader(codecCaps: "video/x-h264", bytes: [0xFF, 0xD8] + sof(0xC0, precision: 8)))
    }

    // MARK: - Colour

    func testNamedColorimetries() {
        XCTAssertEqual(
            ProbeRules.colorimetry(parsing: "bt709"),
            ColorimetryReport(primaries: "bt709", transfer: "bt709", matrix: "bt709", range: "limited"))
        XCTAssertEqual(
            ProbeRules.colorimetry(parsing: "bt601"),
            ColorimetryReport(
                primaries: "smpte170m", transfer: "bt601", matrix: "bt601",
                range: "limited"))
        XCTAssertEqual(
            ProbeRules.colorimetry(parsing: "bt2100-pq"),
            ColorimetryReport(
                primaries: "bt2020", transfer: "smpte2084", matrix: "bt2020",
                range: "limited"))
        XCTAssertEqual(ProbeRules.colorimetry(parsing: "bt2100-hlg")?.transfer, "arib-std-b67")
        XCTAssertEqual(
            ProbeRules.colorimetry(parsing: "sRGB"),
            ColorimetryReport(primaries: "bt709", transfer: "srgb", matrix: "rgb", range: "full"))
    }

    func testNumericColorimetryIsRangeMatrixTransferPrimaries() {
        XCTAssertEqual(
            ProbeRules.colorimetry(parsing: "1:1:5:1"),
            ColorimetryReport(primaries: "bt709", transfer: "bt709", matrix: "rgb", range: "full"))
        XCTAssertEqual(ProbeRules.colorimetry(parsing: "2:3:9:1")?.transfer, "log100")
        XCTAssertEqual(
            ProbeRules.colorimetry(parsing: "0:0:0:0"),
            ColorimetryReport(
                primaries: "unknown", transfer: "unknown", matrix: "unknown",
                range: "unknown"))
        XCTAssertEqual(ProbeRules.colorimetry(parsing: "2:3:99:1")?.transfer, "unknown", "a value from the future")
        XCTAssertNil(ProbeRules.colorimetry(parsing: "bt9999"))
        XCTAssertNil(ProbeRules.colorimetry(parsing: "1:2:3"))
        XCTAssertNil(ProbeRules.colorimetry(parsing: ""))
    }

    func testHDRFromTransfer() {
        XCTAssertEqual(ProbeRules.hdr(transfer: "smpte2084"), .pq)
        XCTAssertEqual(ProbeRules.hdr(transfer: "arib-std-b67"), .hlg)
        XCTAssertEqual(ProbeRules.hdr(transfer: "bt709"), HDRKind.none)
        XCTAssertEqual(ProbeRules.hdr(transfer: nil), HDRKind.none)
    }

    func testInputTransformPolicy() {
        func policy(_ colorimetry: String?, image: Bool = false) -> InputTransform.Policy {
            ProbeRules.inputTransform(
                colorimetry: colorimetry.flatMap(ProbeRules.colorimetry(parsing:)),
                isImage: image
            ).policy
        }
        XCTAssertEqual(policy("bt709"), .passthrough)
        XCTAssertEqual(policy("bt601"), .passthrough)
        XCTAssertEqual(policy("sRGB", image: true), .passthrough)
        XCTAssertEqual(policy("bt2100-pq"), .hdrToSDR)
        XCTAssertEqual(policy("bt2100-hlg"), .hdrToSDR)
        XCTAssertEqual(policy("2:3:9:1"), .logToDisplay, "log100 transfer")
        XCTAssertEqual(policy("2:3:10:1"), .logToDisplay, "log316 transfer")
        XCTAssertEqual(policy("bt2020"), .gamutToBT709, "SDR transfer, BT.2020 primaries")
        XCTAssertEqual(policy("bt2020-10"), .gamutToBT709)
        XCTAssertEqual(policy(nil), .assumeBT709)
        XCTAssertEqual(policy("2:3:0:1"), .assumeBT709, "unknown transfer")
        XCTAssertEqual(policy(nil, image: true), .assumeSRGB)
        let pq = ProbeRules.inputTransform(colorimetry: ProbeRules.colorimetry(parsing: "bt2100-pq"), isImage: false)
        XCTAssertTrue(pq.reason.contains("PQ"), pq.reason)
        XCTAssertEqual(pq.applied, "tone-map: pq→bt709 bt2390")
        let hlg = ProbeRules.inputTransform(colorimetry: ProbeRules.colorimetry(parsing: "bt2100-hlg"), isImage: false)
        XCTAssertEqual(hlg.applied, "tone-map: hlg→bt709 bt2390")
        for other in ["bt709", "bt2020", "2:3:9:1"] {
            let transform = ProbeRules.inputTransform(
                colorimetry: ProbeRules.colorimetry(parsing: other), isImage: false)
            XCTAssertEqual(transform.applied, "none", "\(other): nothing is applied but to PQ and HLG")
        }
        XCTAssertTrue(ProbeRules.inputTransform(colorimetry: nil, isImage: false).reason.contains("BT.709"))
    }

    // MARK: - The report

    func testReportFromAnObservationAndItsJSONOrder() throws {
        let video = StreamObservation(
            caps: caps(
                "video/x-h264",
                [
                    "width": .int(360), "height": .int(240), "pixel-aspect-ratio": .fraction(Fraction(16, 9)),
                    "framerate": .fraction(Fraction(30, 1)), "profile": .string("high"), "bit-depth-luma": .int(8),
                    "chroma-format": .string("4:2:0"), "colorimetry": .string("bt709"),
                ]),
            tags: TagValues(strings: ["image-orientation": "rotate-90"]), durationNanoseconds: 2_000_000_000)
        let audio = StreamObservation(
            caps: caps(
                "audio/mpeg",
                [
                    "mpegversion": .int(4), "channels": .int(2),
                    "rate": .int(44100),
                ]))
        let observation = ProbeObservation(
            containerCaps: caps("video/quicktime", ["variant": .string("apple")]),
            streams: [audio, video], durationNanoseconds: 2_000_999_999)
        let report = try XCTUnwrap(ProbeRules.report(from: observation))
        XCTAssertEqual(
            report.json.serialized,
            """
            {"container":"mov","isImage":false,"durationMs":2000,"video":{"codec":"h264","profile":"high",\
            "width":360,"height":240,"displayWidth":240,"displayHeight":640,"rotation":90,"pixelAspectRatio":"16/9",\
            "frameRate":"30/1","frameCount":60,"bitDepth":8,"chromaFormat":"4:2:0","colorimetry":{"primaries":"bt709",\
            "transfer":"bt709","matrix":"bt709","range":"limited"},"hdr":"none","dolbyVision":null},"audio":{"codec":"aac","channels":2,\
            "sampleRate":44100},"inputTransform":{"policy":"passthrough","reason":"SDR (transfer bt709, primaries \
            bt709): no input transform needed","applied":"none"}}
            """)
    }

    func testStillImageReportHasNoDurationNorFrameRate() throws {
        let photo = StreamObservation(
            caps: caps(
                "image/jpeg",
                [
                    "width": .int(320), "height": .int(240), "framerate": .fraction(Fraction(0, 1)),
                    "sampling": .string("YCbCr-4:2:0"), "sof-marker": .int(0),
                ]))
        let report = try XCTUnwrap(
            ProbeRules.report(
                from: ProbeObservation(
                    containerCaps: caps("image/jpeg"), streams: [photo], durationNanoseconds: 0)))
        XCTAssertTrue(report.isImage)
        XCTAssertNil(report.durationMilliseconds)
        XCTAssertEqual(report.video?.codec, "jpeg")
        XCTAssertNil(report.video?.frameRate)
        XCTAssertEqual(report.video?.frameCount, 1)
        XCTAssertNil(report.video?.colorimetry)
        XCTAssertEqual(report.inputTransform?.policy, .assumeSRGB)
    }

    func testAudioOnlyAndNothingAtAll() throws {
        let audio = StreamObservation(caps: caps("audio/x-opus", ["channels": .int(1), "rate": .int(48000)]))
        let report = try XCTUnwrap(
            ProbeRules.report(
                from: ProbeObservation(
                    containerCaps: caps("audio/webm"), streams: [audio], durationNanoseconds: 1_000_000_000)))
        XCTAssertNil(report.video)
        XCTAssertNil(report.inputTransform)
        XCTAssertEqual(report.audio, AudioStreamReport(codec: "opus", channels: 1, sampleRate: 48000))
        XCTAssertNil(
            ProbeRules.report(
                from: ProbeObservation(
                    containerCaps: nil, streams: [],
                    durationNanoseconds: nil)))
    }

    func testIsImageFollowsTheTypeFinder() {
        XCTAssertTrue(ProbeRules.isImage(container: caps("image/png"), video: caps("image/png")))
        XCTAssertFalse(
            ProbeRules.isImage(container: caps("video/x-msvideo"), video: caps("image/jpeg")),
            "MJPEG in AVI is a video")
        XCTAssertTrue(
            ProbeRules.isImage(container: nil, video: caps("image/jpeg", ["framerate": .fraction(Fraction(0, 1))])))
        XCTAssertFalse(ProbeRules.isImage(container: nil, video: caps("video/x-h264")))
    }

    // MARK: - Pinned against GStreamer

    /// The tables mirror GStreamer's colour enums and named colorimetries: checked with the library's own parser.
    func testColorimetryTablesMatchGStreamer() throws {
        try GstRuntime.ensure()
        for (name, values) in ProbeRules.namedColorimetries {
            var parsed = GstVideoColorimetry()
            XCTAssertNotEqual(gst_video_colorimetry_from_string(&parsed, name), 0, name)
            XCTAssertEqual(Int(parsed.range.rawValue), values.range, name)
            XCTAssertEqual(Int(parsed.matrix.rawValue), values.matrix, name)
            XCTAssertEqual(Int(parsed.transfer.rawValue), values.transfer, name)
            XCTAssertEqual(Int(parsed.primaries.rawValue), values.primaries, name)
        }
        XCTAssertEqual(ProbeRules.rangeNames.count, Int(GST_VIDEO_COLOR_RANGE_16_235.rawValue) + 1)
        XCTAssertEqual(ProbeRules.matrixNames[Int(GST_VIDEO_COLOR_MATRIX_BT2020.rawValue)], "bt2020")
        XCTAssertEqual(ProbeRules.matrixNames[Int(GST_VIDEO_COLOR_MATRIX_RGB.rawValue)], "rgb")
        XCTAssertEqual(ProbeRules.transferNames[Int(GST_VIDEO_TRANSFER_SMPTE2084.rawValue)], "smpte2084")
        XCTAssertEqual(ProbeRules.transferNames[Int(GST_VIDEO_TRANSFER_ARIB_STD_B67.rawValue)], "arib-std-b67")
        XCTAssertEqual(ProbeRules.transferNames[Int(GST_VIDEO_TRANSFER_LOG100.rawValue)], "log100")
        XCTAssertEqual(ProbeRules.transferNames[Int(GST_VIDEO_TRANSFER_LOG316.rawValue)], "log316")
        XCTAssertEqual(ProbeRules.transferNames[Int(GST_VIDEO_TRANSFER_BT2020_10.rawValue)], "bt2020-10")
        XCTAssertEqual(ProbeRules.transferNames.count, Int(GST_VIDEO_TRANSFER_BT601.rawValue) + 1)
        XCTAssertEqual(ProbeRules.primariesNames[Int(GST_VIDEO_COLOR_PRIMARIES_SMPTE170M.rawValue)], "smpte170m")
        XCTAssertEqual(ProbeRules.primariesNames[Int(GST_VIDEO_COLOR_PRIMARIES_SMPTEEG432.rawValue)], "smpte432")
        XCTAssertEqual(ProbeRules.primariesNames.count, Int(GST_VIDEO_COLOR_PRIMARIES_EBU3213.rawValue) + 1)
        // The numeric form GStreamer writes for a colorimetry without a name.
        var custom = GstVideoColorimetry(
            range: GST_VIDEO_COLOR_RANGE_0_255, matrix: GST_VIDEO_COLOR_MATRIX_RGB,
            transfer: GST_VIDEO_TRANSFER_BT709, primaries: GST_VIDEO_COLOR_PRIMARIES_BT709)
        let text = try XCTUnwrap(
            gst_video_colorimetry_to_string(&custom).map { p in
                defer { g_free(p) }
                return String(cString: p)
            })
        XCTAssertEqual(text, "1:1:5:1")
        XCTAssertEqual(
            ProbeRules.colorimetry(parsing: text),
            ColorimetryReport(primaries: "bt709", transfer: "bt709", matrix: "rgb", range: "full"))
    }

    /// `GstAutoplugSelectResult` is registered by the playback plugin: compare with its nicks once it is loaded.
    func testAutoplugDecisionValuesMatchGStreamer() throws {
        try GstRuntime.ensure()
        _ = try Element.make("uridecodebin")  // loads the plugin, which registers the enum type
        let type = g_type_from_name("GstAutoplugSelectResult")
        XCTAssertNotEqual(type, 0)
        let enumClass = try XCTUnwrap(g_type_class_ref(type))
        defer { g_type_class_unref(enumClass) }
        let klass = enumClass.assumingMemoryBound(to: GEnumClass.self)
        for (nick, decision) in [("try", AutoplugDecision.tryElement), ("expose", .expose), ("skip", .skip)] {
            let value = try XCTUnwrap(g_enum_get_value_by_nick(klass, nick), nick)
            XCTAssertEqual(value.pointee.value, decision.rawValue, nick)
        }
    }

    // MARK: - Timeline

    func testStreamTimeOfAPTSThroughItsSegment() {
        let ms = ClockTime.milliseconds
        XCTAssertEqual(ProbeRules.streamTime(pts: ms(66), segment: (start: ms(66), time: ms(10_000))), ms(10_000))
        XCTAssertEqual(ProbeRules.streamTime(pts: ms(766), segment: (start: ms(766), time: ms(766))), ms(766))
        XCTAssertEqual(ProbeRules.streamTime(pts: ms(50), segment: (start: ms(66), time: ms(10))), .zero)
        XCTAssertEqual(ProbeRules.streamTime(pts: ms(5), segment: nil), ms(5))
    }

    func testDurationCountsFromTheFirstFrameExceptForTheLengthTsdemuxReports() {
        let mp4 = caps("video/quicktime", ["variant": .string("iso")])
        let ts = caps("video/mpegts")
        XCTAssertEqual(
            ProbeRules.contentDuration(reported: 13_000_000_000, start: 10_000_000_000, container: mp4),
            3_000_000_000, "a 10 s empty edit before 3 s of frames")
        XCTAssertEqual(
            ProbeRules.contentDuration(reported: 3_014_000_000, start: 766_666_666, container: ts), 3_014_000_000)
        XCTAssertEqual(ProbeRules.contentDuration(reported: 3_000_000_000, start: 0, container: nil), 3_000_000_000)
    }

    /// Through the library: an MP4 with a 10 s empty edit is 3 s and 90 frames long, starting 10 s in.
    func testProbeOfAnOffsetFile() async throws {
        let report = try await probeSource(ProbeOptions(source: try TestEnvironment.fixture("clip-offset10.mp4")))
        XCTAssertEqual(report.durationMilliseconds, 3000)
        XCTAssertEqual(report.video?.frameCount, 90)
        XCTAssertEqual(report.timelineStart, Duration.seconds(10))
        let plain = try await probeSource(ProbeOptions(source: try TestEnvironment.fixture("clip.mp4")))
        XCTAssertEqual(plain.timelineStart, Duration.zero)
    }
}
