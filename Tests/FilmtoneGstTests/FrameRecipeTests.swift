import XCTest

@testable import FilmtoneElements
@testable import FilmtoneGst
@testable import GstKit

final class FrameRecipeTests: XCTestCase {
    /// PQ and HLG by the caps' transfer, named or numeric, only when enabled; SDR, wide-gamut SDR and no
    /// colorimetry are left alone.
    func testToneMapIsChosenByTheTransfer() {
        XCTAssertEqual(FrameRecipe.toneMap(colorimetry: "bt2100-pq", enabled: true), .pq)
        XCTAssertEqual(FrameRecipe.toneMap(colorimetry: "bt2100-hlg", enabled: true), .hlg)
        XCTAssertEqual(FrameRecipe.toneMap(colorimetry: "2:6:14:7", enabled: true), .pq)
        XCTAssertEqual(FrameRecipe.toneMap(colorimetry: "1:6:15:7", enabled: true), .hlg)
        for sdr in ["bt709", "bt601", "sRGB", "bt2020", "bt2020-10", "2:3:0:1", "junk"] {
            XCTAssertNil(FrameRecipe.toneMap(colorimetry: sdr, enabled: true), sdr)
        }
        XCTAssertNil(FrameRecipe.toneMap(colorimetry: nil, enabled: true))
        XCTAssertNil(FrameRecipe.toneMap(colorimetry: "bt2100-pq", enabled: false), "--tone-map off")
        XCTAssertEqual(
            FrameRecipe.outputCaps(width: 4, height: 2, format: FrameRecipe.deepFormat),
            "video/x-raw,format=RGBA64_LE,width=4,height=2,pixel-aspect-ratio=1/1")
    }

    func testScalesDisplaySizeDownKeepingAspect() {
        let size = FrameRecipe.outputSize(
            width: 1920, height: 1080, pixelAspect: Fraction(1, 1), maxWidth: 320,
            maxHeight: 320)
        XCTAssertEqual(size.width, 320)
        XCTAssertEqual(size.height, 180)
    }

    func testHeightCanBeTheLimitingSide() {
        let size = FrameRecipe.outputSize(
            width: 1080, height: 1920, pixelAspect: Fraction(1, 1), maxWidth: 512,
            maxHeight: 512)
        XCTAssertEqual(size.width, 288)
        XCTAssertEqual(size.height, 512)
    }

    func testNeverUpscales() {
        let size = FrameRecipe.outputSize(
            width: 200, height: 150, pixelAspect: Fraction(1, 1), maxWidth: 512,
            maxHeight: 512)
        XCTAssertEqual(size.width, 200)
        XCTAssertEqual(size.height, 150)
    }

    func testNonSquarePixelsBecomeSquareAtDisplaySize() {
        // 360×240 with PAR 16/9 displays as 640×240.
        let full = FrameRecipe.outputSize(
            width: 360, height: 240, pixelAspect: Fraction(16, 9), maxWidth: 1000,
            maxHeight: 1000)
        XCTAssertEqual(full.width, 640)
        XCTAssertEqual(full.height, 240)
        let fitted = FrameRecipe.outputSize(
            width: 360, height: 240, pixelAspect: Fraction(16, 9), maxWidth: 512,
            maxHeight: 512)
        XCTAssertEqual(fitted.width, 512)
        XCTAssertEqual(fitted.height, 192)
    }

    func testTinyTargetsStayAtLeastOnePixel() {
        let size = FrameRecipe.outputSize(
            width: 4000, height: 10, pixelAspect: Fraction(1, 1), maxWidth: 40,
            maxHeight: 40)
        XCTAssertEqual(size.width, 40)
        XCTAssertEqual(size.height, 1)
    }

    func testOutputCapsPinRGBSquarePixels() {
        XCTAssertEqual(
            FrameRecipe.outputCaps(width: 320, height: 180),
            "video/x-raw,format=RGB,width=320,height=180,pixel-aspect-ratio=1/1")
    }

    func testAcceptsTheFrameOnScreenAtTheTarget() {
        let frame = ClockTime.milliseconds(1000)
        let duration = ClockTime(nanoseconds: 33_333_333)
        XCTAssertTrue(
            FrameRecipe.accepts(
                frame: frame, duration: duration, target: .milliseconds(1010),
                tolerance: .zero))
        XCTAssertTrue(
            FrameRecipe.accepts(
                frame: frame, duration: duration, target: .milliseconds(1000),
                tolerance: .zero))
        XCTAssertFalse(
            FrameRecipe.accepts(
                frame: frame, duration: duration, target: .milliseconds(1034),
                tolerance: .zero))
        XCTAssertFalse(
            FrameRecipe.accepts(
                frame: frame, duration: duration, target: .milliseconds(999),
                tolerance: .zero))
    }

    func testAcceptsFramesWithinTolerance() {
        let keyframe = ClockTime.zero
        XCTAssertTrue(
            FrameRecipe.accepts(
                frame: keyframe, duration: nil, target: .milliseconds(1500),
                tolerance: .milliseconds(2000)))
        XCTAssertFalse(
            FrameRecipe.accepts(
                frame: keyframe, duration: nil, target: .milliseconds(2500),
                tolerance: .milliseconds(2000)))
    }

    func testSeekPlanTriesKeyframeFirstOnlyWhenToleranceAllows() {
        XCTAssertEqual(FrameRecipe.seekPlan(tolerance: .zero), [[.flush, .accurate]])
        XCTAssertEqual(
            FrameRecipe.seekPlan(tolerance: .milliseconds(500)),
            [[.flush, .keyUnit, .snapBefore], [.flush, .accurate]])
    }
}

extension FrameRecipeTests {
    func testRealStartIsThePictureThatWentInWithTheSameEnd() {
        func picture(_ ms: Double, _ duration: Double?) -> FrameRecipe.InputPicture {
            FrameRecipe.InputPicture(
                pts: ClockTime(nanoseconds: UInt64(ms * 1e6)),
                duration: duration.map { ClockTime(nanoseconds: UInt64($0 * 1e6)) })
        }
        func ms(_ value: Double) -> ClockTime { ClockTime(nanoseconds: UInt64(value * 1e6)) }
        // Matroska: frames at 967 and 1000 ms with 33.333 ms durations overlap. The one clipped at 1000 that ends at
        // 1000.333 went in at 967, though 1000 is the latest picture at or before the stamp.
        let mkv = [picture(1000, 33.333), picture(967, 33.333), picture(933, 33.333)]
        XCTAssertEqual(FrameRecipe.realStart(pts: ms(1000), end: ms(1000.333), inputs: mkv), ms(967))
        XCTAssertEqual(FrameRecipe.realStart(pts: ms(1000), end: ms(1033.333), inputs: mkv), ms(1000))
        // A variable rate: the frame at 1000 ms lasting 25 ms, clipped at 1010, is at 1000 (no rate arithmetic).
        let vfr = [picture(975, 25), picture(1000, 25), picture(1025, 25)]
        XCTAssertEqual(FrameRecipe.realStart(pts: ms(1010), end: ms(1025), inputs: vfr), ms(1000))
        // Without durations: the latest picture at or before the stamp.
        XCTAssertEqual(
            FrameRecipe.realStart(pts: ms(1010), end: nil, inputs: [picture(975, nil), picture(1000, nil)]), ms(1000))
        // Nothing known: the stamp.
        XCTAssertEqual(FrameRecipe.realStart(pts: ms(1010), end: ms(1025), inputs: []), ms(1010))
    }

    func testAClippedFrameIsCheckedAgainstTheNextOneUnlessTheToleranceCoversIt() {
        XCTAssertTrue(
            FrameRecipe.needsNextFrame(start: .milliseconds(967), target: .milliseconds(1000), tolerance: .zero))
        XCTAssertFalse(
            FrameRecipe.needsNextFrame(start: .milliseconds(1000), target: .milliseconds(1000), tolerance: .zero),
            "starts at the target: nothing later can be on screen there")
        XCTAssertFalse(
            FrameRecipe.needsNextFrame(
                start: .milliseconds(967), target: .milliseconds(1000), tolerance: .milliseconds(50)))
        XCTAssertTrue(FrameRecipe.nextReplaces(next: .milliseconds(1000), target: .milliseconds(1000)))
        XCTAssertFalse(FrameRecipe.nextReplaces(next: .milliseconds(1001), target: .milliseconds(1000)))
    }

    func testADroppedPictureAtOrBeforeTheTargetIsSoughtAgain() {
        let inputs: [ClockTime] = [.milliseconds(0), .milliseconds(80), .milliseconds(40)]
        XCTAssertEqual(
            FrameRecipe.droppedStart(after: .milliseconds(40), target: .milliseconds(10), inputs: inputs),
            .milliseconds(0))
        XCTAssertNil(
            FrameRecipe.droppedStart(after: .milliseconds(0), target: .milliseconds(10), inputs: inputs),
            "the frame returned starts before the target: nothing was dropped")
        XCTAssertNil(FrameRecipe.droppedStart(after: .milliseconds(40), target: .milliseconds(10), inputs: []))
    }

    func testTheTimelineCountsFromTheFirstFrame() {
        let ts = FrameRecipe.Timeline(origin: ClockTime(nanoseconds: 766_666_666))
        XCTAssertEqual(ts.streamTime(of: .milliseconds(1000)), ClockTime(nanoseconds: 1_766_666_666))
        XCTAssertEqual(ts.time(ofStreamTime: ClockTime(nanoseconds: 1_766_666_666)), .milliseconds(1000))
        XCTAssertEqual(ts.time(ofStreamTime: .milliseconds(10)), .zero, "before the first frame")
    }

    func testReadingForwardTakesTheFrameOnScreenAtTheTarget() {
        func step(_ ms: Int64, previous: Bool = true, target: Int64 = 1510, tolerance: Int64 = 0)
            -> FrameRecipe.ForwardStep
        {
            FrameRecipe.forwardStep(
                frame: .milliseconds(ms), hasPrevious: previous, target: .milliseconds(target),
                tolerance: .milliseconds(tolerance))
        }
        XCTAssertEqual(step(1467), .keepReading)
        XCTAssertEqual(step(1500), .keepReading, "may be on screen at 1510: the next frame's start says")
        XCTAssertEqual(step(1510), .take, "starts at the target")
        XCTAssertEqual(step(1533), .takePrevious, "past the target: the one before was on screen")
        XCTAssertEqual(step(1533, previous: false), .take, "the stream starts after the target")
        XCTAssertEqual(step(1000, tolerance: 600), .take, "within the tolerance")
    }

    /// A kept pipeline steps forward only for exact frames, only forward, and only within the window; a frame the
    /// target is past is dropped early only when a later picture at or before the target entered the decoder.
    func testAKeptPipelineStepsForwardOnlyForNearExactTimes() {
        func steps(_ from: Int64, _ to: Int64, tolerance: Int64 = 0) -> Bool {
            FrameRecipe.stepsForward(
                from: .milliseconds(from), to: .milliseconds(to), tolerance: .milliseconds(tolerance))
        }
        XCTAssertTrue(steps(1000, 1033), "one frame on")
        XCTAssertTrue(steps(1000, 3000), "the window's end")
        XCTAssertFalse(steps(1000, 3001), "further: a seek")
        XCTAssertFalse(steps(1000, 1000), "the same time: not a step")
        XCTAssertFalse(steps(1000, 967), "backward: a seek")
        XCTAssertFalse(steps(1000, 1033, tolerance: 10), "a tolerance: the seek plan decides")
        func steps(_ from: Int64, _ to: Int64, gop: Int64) -> Bool {
            FrameRecipe.stepsForward(
                from: .milliseconds(from), to: .milliseconds(to), tolerance: .zero, keyframeInterval: .milliseconds(gop)
            )
        }
        XCTAssertTrue(steps(1000, 1900, gop: 1000), "within a GOP: a step")
        XCTAssertTrue(steps(1000, 2000, gop: 1000), "one GOP on: the step decodes no more than a seek")
        XCTAssertFalse(steps(1000, 2001, gop: 1000), "further than a GOP: a keyframe lies between, a seek")
        XCTAssertTrue(steps(1000, 3000, gop: 8333), "a long GOP: the window decides")

        func over(_ pts: Int64, _ inputs: [Int64], target: Int64 = 1000) -> Bool {
            FrameRecipe.steppedOver(
                pts: .milliseconds(pts), target: .milliseconds(target), inputs: inputs.map { .milliseconds($0) })
        }
        XCTAssertTrue(over(900, [900, 967, 1033]), "967 starts after it and before the target")
        XCTAssertFalse(over(967, [900, 967, 1033]), "nothing known starts between it and the target: kept")
        XCTAssertFalse(over(900, [900]), "the next picture has not entered the decoder yet: kept")
        XCTAssertTrue(over(900, [1000, 900]), "a B-frame order: 1000 (at the target) entered first")
        XCTAssertFalse(over(1000, [1000, 1033]), "at the target")
        XCTAssertFalse(over(1033, [1033, 1067]), "after the target")
    }

    func testOnlySouphttpsrcsSeekRefusalMeansReadForward() {
        func cause(_ domain: String, _ code: Int, _ factory: String?) -> FilmtoneError.GStreamerCause {
            FilmtoneError.GStreamerCause(
                domain: domain, code: code, message: "Server does not support seeking.", debug: nil, element: "source",
                factory: factory, httpStatus: 200)
        }
        XCTAssertTrue(FrameRecipe.isRangeRefusal(cause("resource", 11, "souphttpsrc")))
        XCTAssertFalse(FrameRecipe.isRangeRefusal(cause("resource", 5, "souphttpsrc")), "a read failure")
        XCTAssertFalse(FrameRecipe.isRangeRefusal(cause("resource", 11, "filesrc")))
        XCTAssertFalse(FrameRecipe.isRangeRefusal(cause("stream", 11, "souphttpsrc")))
        XCTAssertFalse(FrameRecipe.isRangeRefusal(nil))
    }
    /// The first bytes of a file name its demuxer only beyond doubt: ISO media with video brands, EBML.
    func testKnownContainersAreNamedByTheirFirstBytes() {
        func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
            let body = Array(major.utf8) + [0, 0, 2, 0] + compatible.flatMap { Array($0.utf8) }
            let size = 8 + body.count
            return [0, 0, UInt8(size >> 8), UInt8(size & 0xFF)] + Array("ftyp".utf8) + body + Array("....".utf8)
        }
        XCTAssertEqual(FrameRecipe.demuxer(forFileStart: ftyp("isom", ["isom", "iso2", "avc1", "mp41"])), .isoMedia)
        XCTAssertEqual(FrameRecipe.demuxer(forFileStart: ftyp("mp42", ["mp42", "isom"])), .isoMedia)
        XCTAssertEqual(FrameRecipe.demuxer(forFileStart: ftyp("qt  ", ["qt  "])), .isoMedia)
        XCTAssertNil(FrameRecipe.demuxer(forFileStart: ftyp("heic", ["mif1", "heic"])), "a HEIF picture")
        XCTAssertNil(FrameRecipe.demuxer(forFileStart: ftyp("avif", ["avif", "mif1"])), "an AVIF picture")
        XCTAssertNil(FrameRecipe.demuxer(forFileStart: ftyp("mp42", ["mp42", "mif1"])), "a picture brand anywhere")
        XCTAssertEqual(FrameRecipe.demuxer(forFileStart: [0x1A, 0x45, 0xDF, 0xA3, 0x01, 0, 0, 0]), .matroska)
        XCTAssertNil(FrameRecipe.demuxer(forFileStart: [0x47] + [UInt8](repeating: 0xFF, count: 187) + [0x47]), "TS")
        XCTAssertNil(FrameRecipe.demuxer(forFileStart: Array(ftyp("isom", []).prefix(10))), "too short to tell")
        XCTAssertNil(FrameRecipe.demuxer(forFileStart: [0, 0, 0, 8] + Array("ftypisom".utf8)), "a box too small")
        XCTAssertNil(FrameRecipe.demuxer(forFileStart: [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 0, count: 8)))
        XCTAssertNil(FrameRecipe.demuxer(forFileStart: []))
    }

    /// decodebin may plug everything in the frame pipeline except pngparse (quadratic in a PNG's size).
    func testTheFramePipelineSkipsPNGParse() {
        func decision(_ name: String, _ klass: String = "Codec/Parser") -> AutoplugDecision {
            FrameRecipe.autoplugDecision(factory: FactoryDescription(name: name, klass: klass), ownDecoder: true)
        }
        XCTAssertEqual(decision("pngparse"), .skip)
        for name in ["pngdec", "h264parse", "jpegparse", "qtdemux"] {
            XCTAssertEqual(decision(name), .tryElement, name)
        }
    }

    /// 8- and 10-bit 4:2:0 progressive H.264 goes to fth264dec, HEVC Main and Main 10 to fth265dec: every other video
    /// decoder offered for them is skipped. Other profiles, interlaced streams, other codecs, and `ownDecoder: false`
    /// keep gst-libav.
    func testOwnDecodersTakeEightAndTenBitProgressive420() {
        func caps(
            _ profile: String, format: String = "avc", media: String = "video/x-h264", extra: [String: CapsValue] = [:]
        ) -> CapsStructure {
            var fields: [String: CapsValue] = [
                "profile": .string(profile), "stream-format": .string(format), "alignment": .string("au"),
            ]
            fields.merge(extra) { $1 }
            return CapsStructure(name: media, fields: fields)
        }
        func decision(_ name: String, _ caps: CapsStructure?, own: Bool = true) -> AutoplugDecision {
            FrameRecipe.autoplugDecision(
                factory: FactoryDescription(name: name, klass: "Codec/Decoder/Video", caps: caps), ownDecoder: own)
        }
        for profile in ["constrained-baseline", "main", "high", "progressive-high", "high-10", "high-10-intra"] {
            XCTAssertEqual(decision("avdec_h264", caps(profile)), .skip, profile)
            XCTAssertEqual(decision("fth264dec", caps(profile)), .tryElement, profile)
        }
        XCTAssertEqual(decision("avdec_h264", caps("high", format: "byte-stream")), .skip)
        XCTAssertEqual(decision("nvh264dec", caps("high")), .skip, "any other decoder too: the same pictures anywhere")
        for profile in ["high-4:2:2", "high-4:4:4", "high-4:2:2-intra", "cavlc-4:4:4-intra"] {
            XCTAssertEqual(decision("avdec_h264", caps(profile)), .tryElement, profile)
        }
        XCTAssertEqual(
            decision("avdec_h264", caps("high", extra: ["interlace-mode": .string("mixed")])), .tryElement)
        XCTAssertEqual(
            decision("avdec_h264", caps("high", extra: ["interlace-mode": .string("progressive")])), .skip)
        XCTAssertEqual(decision("avdec_h264", caps("high", extra: ["alignment": .string("nal")])), .tryElement)
        XCTAssertEqual(decision("avdec_h264", caps("high"), own: false), .tryElement)
        XCTAssertEqual(decision("fth264dec", caps("high"), own: false), .skip, "off means off, avdec or nothing")
        XCTAssertEqual(decision("avdec_h264", nil), .tryElement)
        for format in ["hvc1", "hev1", "byte-stream"] {
            for profile in ["main", "main-10", "main-still-picture"] {
                let hevc = caps(profile, format: format, media: "video/x-h265")
                XCTAssertEqual(decision("avdec_h265", hevc), .skip, "\(format) \(profile)")
                XCTAssertEqual(decision("fth265dec", hevc), .tryElement, "\(format) \(profile)")
            }
        }
        for profile in ["main-12", "main-422-10", "main-444", "monochrome"] {
            XCTAssertEqual(decision("avdec_h265", caps(profile, format: "hvc1", media: "video/x-h265")), .tryElement)
        }
        XCTAssertEqual(
            decision("avdec_h265", caps("main", format: "hvc1", media: "video/x-h265"), own: false), .tryElement)
        XCTAssertEqual(
            decision("avdec_h265", CapsStructure(name: "video/x-h265", fields: ["profile": .string("main")])),
            .tryElement, "no framing stated")
        XCTAssertEqual(
            decision("avdec_vp9", CapsStructure(name: "video/x-vp9", fields: [:])), .tryElement, "not an own codec")
    }

    /// The libav plugin is preloaded for MP4 and Matroska, not for WebM (VP8/VP9/AV1) or unknown containers.
    func testLibavIsExpectedForMP4AndMatroskaButNotWebM() {
        // An EBML header (its size a one-byte vint) holding EBMLVersion 1 and the DocType.
        func ebml(_ docType: String) -> [UInt8] {
            let body: [UInt8] = [0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x80 | UInt8(docType.utf8.count)] + docType.utf8
            return [0x1A, 0x45, 0xDF, 0xA3, 0x80 | UInt8(body.count)] + body
        }
        XCTAssertTrue(FrameRecipe.isLibavVideo(fileStart: ebml("matroska")))
        XCTAssertFalse(FrameRecipe.isLibavVideo(fileStart: ebml("webm")))
        XCTAssertTrue(FrameRecipe.isLibavVideo(fileStart: [0, 0, 0, 16] + Array("ftypisom\0\0\0\0".utf8)))
        XCTAssertFalse(FrameRecipe.isLibavVideo(fileStart: [0xFF, 0xD8, 0xFF, 0xE0, 0, 0, 0, 0, 0, 0, 0, 0]))
    }

    /// The origin a seek before the first preroll takes: the first keyframe's stream time, or the segment's
    /// start when the keyframe lies before it (the decoder clips or drops it), as the first decoded frame says.
    func testTheFirstFrameTimeFollowsTheDecodersClipping() {
        XCTAssertEqual(
            FrameRecipe.firstFrameTime(keyframe: .zero, segmentStart: .zero, segmentTime: .zero), .zero)
        XCTAssertEqual(
            FrameRecipe.firstFrameTime(keyframe: .milliseconds(80), segmentStart: .zero, segmentTime: .zero),
            .milliseconds(80), "a keyframe after the segment start is where the first frame is")
        XCTAssertEqual(
            FrameRecipe.firstFrameTime(
                keyframe: .milliseconds(10_000), segmentStart: .milliseconds(10_000), segmentTime: .zero),
            .zero, "a segment starting at the first timestamp")
        XCTAssertEqual(
            FrameRecipe.firstFrameTime(
                keyframe: .milliseconds(0), segmentStart: .milliseconds(66), segmentTime: .milliseconds(500)),
            .milliseconds(500), "clipped to the segment start, in stream time")
    }

    /// An open GOP's leading pictures (HEVC RASL): an accurate seek to 940 ms in x265's clip starts at the CRA shown
    /// at 960 ms (decoded at 800 ms), whose leading pictures at 880 and 920 ms are dropped; the restart is just
    /// before that CRA's decoding time. Nothing when no leading picture at or before the target was lost, when the
    /// answer does not start after the target, or when no keyframe entered.
    func testLeadingPictureRestart() {
        func picture(_ pts: Int64, dts: Int64? = nil, key: Bool = false) -> FrameRecipe.InputPicture {
            FrameRecipe.InputPicture(
                pts: .milliseconds(pts), duration: .milliseconds(40), isKeyframe: key,
                dts: dts.map { .milliseconds($0) })
        }
        let openGOP = [picture(960, dts: 800, key: true), picture(920, dts: 840), picture(880, dts: 880)]
        XCTAssertEqual(
            FrameRecipe.leadingPictureRestart(after: .milliseconds(960), target: .milliseconds(940), inputs: openGOP),
            ClockTime(nanoseconds: 800_000_000 - 1))
        XCTAssertNil(
            FrameRecipe.leadingPictureRestart(after: .milliseconds(920), target: .milliseconds(940), inputs: openGOP),
            "the answer starts before the target: nothing was lost")
        XCTAssertNil(
            FrameRecipe.leadingPictureRestart(after: .milliseconds(960), target: .milliseconds(870), inputs: openGOP),
            "the leading pictures start after the target")
        let closed = [picture(960, dts: 960, key: true), picture(1000, dts: 1000)]
        XCTAssertNil(
            FrameRecipe.leadingPictureRestart(after: .milliseconds(960), target: .milliseconds(940), inputs: closed))
        XCTAssertNil(
            FrameRecipe.leadingPictureRestart(
                after: .milliseconds(960), target: .milliseconds(940), inputs: [picture(920), picture(960)]),
            "no keyframe entered")
        // Matroska gives no DTS: the keyframe's PTS is the position.
        XCTAssertEqual(
            FrameRecipe.leadingPictureRestart(
                after: .milliseconds(960), target: .milliseconds(940), inputs: [picture(960, key: true), picture(920)]),
            ClockTime(nanoseconds: 960_000_000 - 1))
    }
}

extension FrameRecipeTests {
    /// H.264 and HEVC are held after their parser (which inserts the container's parameter sets), everything else on
    /// the demuxer's pad.
    func testFirstSeekHoldPlace() {
        XCTAssertEqual(FirstSeekHold.Place.forStream(mediaType: "video/x-h265"), .decoder)
        XCTAssertEqual(FirstSeekHold.Place.forStream(mediaType: "video/x-h264"), .decoder)
        XCTAssertEqual(FirstSeekHold.Place.forStream(mediaType: "image/jpeg"), .demuxer)
        XCTAssertEqual(FirstSeekHold.Place.forStream(mediaType: "video/x-av1"), .demuxer)
        XCTAssertEqual(FirstSeekHold.Place.forStream(mediaType: nil), .demuxer)
    }
}
