import FilmtoneTestSupport
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneGst
@testable import GstKit

/// The driver in-process, on generated media.
final class FrameGrabberTests: XCTestCase {
    /// The exact frame at `ms`, fitted into `box`.
    private func grab(_ fixture: String, _ ms: Int64, box: (Int, Int)) throws -> GrabbedFrame {
        let request = FrameRequest(
            source: .local(path: try TestEnvironment.fixture(fixture)), headers: [], time: .milliseconds(ms),
            tolerance: .zero, maxWidth: box.0, maxHeight: box.1, timeoutMilliseconds: 20_000)
        return try FrameGrabber(request: request, isCancelled: { false }).grab()
    }

    private func grab(_ fixture: String, ms: Int64, tolerance: Int64 = 0) throws -> GrabbedFrame {
        let request = FrameRequest(
            source: .local(path: try TestEnvironment.fixture(fixture)), headers: [], time: .milliseconds(ms),
            tolerance: .milliseconds(tolerance), maxWidth: 4096, maxHeight: 4096, timeoutMilliseconds: 20_000)
        return try FrameGrabber(request: request, isCancelled: { false }).grab()
    }

    /// A source that keeps its pipeline between frames (the engine's), exact times, full size.
    private func keptSource(_ fixture: String) throws -> OpenedFrameSource {
        try OpenedFrameSource(
            FrameRequest(
                source: .local(path: try TestEnvironment.fixture(fixture)), headers: [], time: .zero,
                tolerance: .zero, maxWidth: 4096, maxHeight: 4096, timeoutMilliseconds: 20_000),
            watching: PictureFormatWatch(), deadline: Deadline(after: 20_000), keeps: true, isCancelled: { false })
    }

    func testUnreferencedPicturesAreSkippedAndTheFrameIsIdentical() throws {
        let skipped = try grab("bframes.mp4", ms: 2500)
        XCTAssertEqual(skipped.time, .milliseconds(2500))
        // 75 pictures precede 2.5 s in I/P BBB groups; x264's default B-pyramid keeps the middle B as a
        // reference, so about half of them are unreferenced.
        XCTAssertGreaterThan(skipped.skippedPictures, 30)

        setenv("FTGST_NO_REFERENCE_SKIP", "1", 1)
        defer { unsetenv("FTGST_NO_REFERENCE_SKIP") }
        let decodedAll = try grab("bframes.mp4", ms: 2500)
        XCTAssertEqual(decodedAll.skippedPictures, 0)
        XCTAssertEqual(decodedAll.time, skipped.time)
        XCTAssertEqual(decodedAll.image, skipped.image, "skipping must not change a single pixel")
    }

    /// HEVC likewise: x265's default output (B-frames, open GOPs with RASL pictures, one temporal sub-layer) has
    /// TRAIL_N and RASL_N pictures nobody refers to. MP4, QuickTime and Matroska; 8 and 10 bits.
    func testUnreferencedHEVCPicturesAreSkippedAndTheFrameIsIdentical() throws {
        for fixture in ["matrix-hevc8.mp4", "matrix-hevc10.mov", "matrix-hevc10.mkv"] {
            unsetenv("FTGST_NO_REFERENCE_SKIP")
            let skipped = try grab(fixture, ms: 1150)
            XCTAssertGreaterThan(skipped.skippedPictures, 0, fixture)
            setenv("FTGST_NO_REFERENCE_SKIP", "1", 1)
            defer { unsetenv("FTGST_NO_REFERENCE_SKIP") }
            let decodedAll = try grab(fixture, ms: 1150)
            XCTAssertEqual(decodedAll.skippedPictures, 0, fixture)
            XCTAssertEqual(decodedAll.time, skipped.time, fixture)
            XCTAssertEqual(decodedAll.image, skipped.image, "\(fixture): skipping must not change a single pixel")
        }
    }

    /// A server that ignores Range: the grabber reads forward and hands over the very frame an accurate seek in the
    /// local file gives, pixel for pixel, with the same time.
    func testReadingForwardGivesTheFrameAnAccurateSeekGives() throws {
        let server = try HTTPTestServer.serving("clip-faststart.mp4", in: self).server
        defer { server.stop() }
        let request = FrameRequest(
            source: try MediaSource.parse(server.url("/norange/clip.mp4")), headers: [], time: .milliseconds(1510),
            tolerance: .zero, maxWidth: 4096, maxHeight: 4096, timeoutMilliseconds: 20_000)
        let forward = try FrameGrabber(request: request, isCancelled: { false }).grab()
        let seeked = try grab("clip-faststart.mp4", ms: 1510)
        XCTAssertEqual(forward.time, .milliseconds(1500))
        XCTAssertEqual(forward.time, seeked.time)
        XCTAssertEqual(forward.image, seeked.image)
    }

    /// A video that starts later (offset.mp4: clip.mp4 behind an empty edit) gives its first frame, pixel for pixel
    /// clip.mp4's, instead of waiting out the deadline on the GAP qtdemux sends first.
    func testVideoThatStartsLaterGivesItsFirstFrame() throws {
        XCTAssertEqual(try grab("offset.mp4", ms: 0).image, try grab("clip.mp4", ms: 0).image)
    }

    /// Times on the 0-based timeline: an MPEG-TS's first frame is at 0 (its stream time says 766.67 ms), the
    /// Matroska frame starting exactly at 1000 ms is returned (not the one before, whose stated duration overlaps
    /// it), and a variable-rate frame at 1000 ms is at 1000 ms (not an average-rate 972).
    func testTimesCountFromTheFirstFrame() throws {
        XCTAssertEqual(try grab("clip.ts", ms: 0, tolerance: 2000).time, .zero)
        XCTAssertEqual(try grab("clip.ts", ms: 1010).time, .milliseconds(1000))
        let mkv = try grab("clip.mkv", ms: 1000)
        XCTAssertEqual(mkv.time, .milliseconds(1000))
        XCTAssertEqual(mkv.image, try grab("clip.mp4", ms: 1000).image, "the same frame 30 as in the MP4")
        XCTAssertEqual(try grab("vfr.mp4", ms: 1000).time, .milliseconds(1000))
        XCTAssertEqual(try grab("vfr.mp4", ms: 1010).time, .milliseconds(1000))
    }

    /// Reading forward (a server that ignores Range) takes the same Matroska frame as a seek: the frame that
    /// starts at the target, not the one before it whose duration overlaps it.
    func testReadingForwardInMatroskaTakesTheFrameStartingAtTheTarget() throws {
        let server = try HTTPTestServer.serving("clip.mkv", as: "clip.mkv", in: self).server
        defer { server.stop() }
        for ms: Int64 in [33, 1000] {
            let request = FrameRequest(
                source: try MediaSource.parse(server.url("/norange/clip.mkv")), headers: [], time: .milliseconds(ms),
                tolerance: .zero, maxWidth: 4096, maxHeight: 4096, timeoutMilliseconds: 20_000)
            let forward = try FrameGrabber(request: request, isCancelled: { false }).grab()
            let seeked = try grab("clip.mkv", ms: ms)
            XCTAssertEqual(forward.time, .milliseconds(ms))
            XCTAssertEqual(forward.time, seeked.time)
            XCTAssertEqual(forward.image, seeked.image)
        }
    }

    /// A one-shot grab of a later time in a file whose demuxer is known seeks before its first preroll, and hands
    /// over the very frame (pixels and time) the type-finding pipeline gives after prerolling the first frame:
    /// across containers, B-frames, variable rates, an empty edit, rotation, a time between frames, the last frame,
    /// and with a tolerance (the keyframe seek first).
    func testSeekingBeforeTheFirstPrerollGivesTheSameFrame() throws {
        let cases: [(String, Int64, Int64)] = [
            ("clip.mp4", 1510, 0), ("clip.mkv", 1000, 0), ("clip.webm", 1033, 0), ("bframes.mp4", 2500, 0),
            ("vfr.mp4", 1010, 0), ("vfr.mkv", 1000, 0), ("offset.mp4", 700, 0), ("clip-offset10.mp4", 1200, 0),
            ("rotated.mp4", 500, 0), ("numbered.mp4", 1999, 0), ("clip.mp4", 2966, 0), ("longgop.mp4", 3000, 900),
            ("zero-stts.mp4", 400, 0),
        ]
        for (fixture, ms, tolerance) in cases {
            let early = try grab(fixture, ms: ms, tolerance: tolerance)
            XCTAssertTrue(early.soughtFirst, "\(fixture) at \(ms) ms: the demuxer is known, the seek comes first")
            setenv("FTGST_NO_KNOWN_DEMUXER", "1", 1)
            defer { unsetenv("FTGST_NO_KNOWN_DEMUXER") }
            let prerolled = try grab(fixture, ms: ms, tolerance: tolerance)
            XCTAssertFalse(prerolled.soughtFirst)
            XCTAssertEqual(early.time, prerolled.time, "\(fixture) at \(ms) ms")
            XCTAssertEqual(early.image, prerolled.image, "\(fixture) at \(ms) ms: not the same frame")
        }
        XCTAssertFalse(try grab("clip.mp4", ms: 0).soughtFirst, "the first frame answers: no seek at all")
        XCTAssertFalse(try grab("clip.ts", ms: 1010).soughtFirst, "a TS is type-found")
    }

    /// ftgst's own decoders (`fth264dec`, `fth265dec`, `ftav1dec`) hand over the very frame, pixels and time, that
    /// gst-libav's `avdec_h264` and `avdec_h265` (and libaom's `av1dec`) give, on the path that seeks first, the type-finding one (MPEG-TS: byte-stream
    /// framing), with a tolerance, and on a kept pipeline's forward steps; 10-bit pictures (H.264 High 10, HEVC Main
    /// 10, HLG and PQ) tone-mapped or converted as avdec's are (the same chroma siting and colorimetry in the caps);
    /// a 4:4:4 stream, which fth264dec does not take, stays with avdec_h264. On an exact seek it copies out only the
    /// picture shown, not those decoded up to it.
    func testOwnDecoderGivesTheFrameAvdecGives() throws {
        let cases: [(String, Int64, Int64)] = [
            ("clip.mp4", 1510, 0), ("clip.mkv", 1000, 0), ("bframes.mp4", 2500, 0), ("vfr.mp4", 1010, 0),
            ("offset.mp4", 700, 0), ("rotated.mp4", 500, 0), ("numbered.mp4", 1999, 0), ("clip.mp4", 2966, 0),
            ("longgop.mp4", 3000, 900), ("zero-stts.mp4", 400, 0), ("clip.ts", 1010, 0), ("clip.mp4", 0, 0),
            ("anamorphic.mp4", 300, 0), ("odd.mp4", 500, 0), ("matrix-h264-high10.mp4", 740, 0),
            ("matrix-hevc8.mp4", 740, 0), ("matrix-hevc10.mov", 940, 0), ("matrix-hevc10.mkv", 540, 0),
            ("hevc10.mp4", 500, 0), ("hdr-hlg.mp4", 600, 0), ("hdr-pq4000.mp4", 600, 0), ("bars480-rot270.mp4", 100, 0),
            ("matrix-av1.mkv", 540, 0), ("av1-hlg10.mkv", 1140, 0), ("av1-720.mp4", 790, 0),
        ]
        for (fixture, ms, tolerance) in cases {
            let own = try grab(fixture, ms: ms, tolerance: tolerance)
            setenv("FTGST_NO_OWN_DECODER", "1", 1)
            defer { unsetenv("FTGST_NO_OWN_DECODER") }
            let libav = try grab(fixture, ms: ms, tolerance: tolerance)
            let isHEVC = fixture.contains("hevc") || fixture.hasPrefix("hdr-")
            let isAV1 = fixture.contains("av1")
            let expected =
                fixture == "odd.mp4" ? "avdec_h264" : isAV1 ? "ftav1dec" : isHEVC ? "fth265dec" : "fth264dec"
            XCTAssertEqual(own.decoder, expected, "\(fixture) at \(ms) ms")
            XCTAssertEqual(
                libav.decoder, isAV1 ? "av1dec" : isHEVC ? "avdec_h265" : "avdec_h264",
                "\(fixture): the switch keeps GStreamer's decoder")
            XCTAssertNil(libav.copiedPictures)
            XCTAssertEqual(own.time, libav.time, "\(fixture) at \(ms) ms")
            XCTAssertTrue(own.image == libav.image, "\(fixture) at \(ms) ms: not the same frame")
        }
        // longgop.mp4 has one keyframe: the seek to 3 s decodes the 90 pictures before it, and copies only the one
        // shown and those the grabber reads after it (the next, to check the frame's end); none of the 90.
        let longGOP = try grab("longgop.mp4", ms: 3000)
        XCTAssertEqual(longGOP.decoder, "fth264dec")
        XCTAssertLessThanOrEqual(longGOP.copiedPictures ?? .max, 3, "the pictures before the target are not copied")
        XCTAssertGreaterThan(longGOP.copiedPictures ?? 0, 0)
    }

    /// A picture at least four times the output's side is scaled down to twice it in its decoded format before it is
    /// turned and converted (`Pipeline.fitPrescale`): the same frame, time and output size as the plain path
    /// (`FTGST_NO_PRESCALE=1`: converted at full size, then scaled), and the same picture but for the filters'
    /// rounding — turned by a display matrix (90° and 270°), 10-bit HLG and PQ tone-mapped, 8-bit SD, non-square
    /// boxes. Smaller pictures are never prescaled.
    func testPrescaledPicturesAreThePlainPaths() throws {
        let cases: [(String, Int64, (Int, Int), (Int, Int))] = [
            ("bars360-rot90.mp4", 100, (160, 160), (90, 160)), ("bars480-rot270.mp4", 100, (120, 160), (107, 160)),
            ("hdr-hlg.mp4", 600, (160, 160), (160, 90)), ("hdr-pq4000.mp4", 600, (160, 120), (160, 90)),
            ("sd.mp4", 200, (160, 160), (160, 120)), ("rotated-sd.mp4", 200, (100, 160), (100, 133)),
        ]
        for (fixture, ms, box, size) in cases {
            let prescaled = try grab(fixture, ms, box: box)
            setenv("FTGST_NO_PRESCALE", "1", 1)
            defer { unsetenv("FTGST_NO_PRESCALE") }
            let plain = try grab(fixture, ms, box: box)
            let what = "\(fixture) in \(box)"
            XCTAssertEqual(prescaled.time, plain.time, what)
            XCTAssertEqual(prescaled.image.width, size.0, what)
            XCTAssertEqual(prescaled.image.height, size.1, what)
            XCTAssertEqual(plain.image.width, size.0, what)
            XCTAssertEqual(plain.image.height, size.1, what)
            guard prescaled.image.pixels.count == plain.image.pixels.count else { continue }
            let squared = zip(prescaled.image.pixels, plain.image.pixels).reduce(0.0) {
                $0 + pow(Double($1.0) - Double($1.1), 2)
            }
            let psnr = 10 * log10(255 * 255 / max(squared / Double(plain.image.pixels.count), 1e-9))
            // Measured: 38–47 dB on SD and turned pictures, 28–32 dB on the tone-mapped ones (saturated HDR bars,
            // whose ringing the two orders of filters round differently); another frame or colours: below 20.
            XCTAssertGreaterThan(psnr, 25, "\(what): \(psnr) dB from the plain path's picture")
        }
        XCTAssertNil(FrameRecipe.prescaledSize(width: 639, height: 360, pixelAspect: Fraction(1, 1), box: 160))
        XCTAssertEqual(
            FrameRecipe.prescaledSize(width: 3840, height: 2160, pixelAspect: Fraction(1, 1), box: 320)?.width, 640)
        XCTAssertEqual(
            FrameRecipe.prescaledSize(width: 1440, height: 1080, pixelAspect: Fraction(4, 3), box: 320)?.height, 360,
            "anamorphic: the display size, square pixels")
    }

    /// A kept pipeline stepping forward (the engine's scrubbing) has its own decoder finish the pictures it steps over
    /// without copying them (`LibavDecoderState.discard`): 57 pictures passed from 0.1 to 2.0 s of `longgop.mp4`
    /// (one GOP, so a step, not a seek) cost at most the two or three copies of the frames it reads, and each frame is
    /// the one-shot grab's. With B-frames (`bframes.mp4`) the same. One decoder thread: how many pictures have entered
    /// the decoder when one comes out (what the rule looks at) then depends on the stream alone, not on the threads'
    /// timing (with two, the counts varied by one between runs; without the rule they are 22 to 30).
    func testStepsForwardCopyOnlyThePicturesTheyRead() throws {
        FrameRecipe.decoderThreads = 1
        defer { FrameRecipe.decoderThreads = nil }
        for (fixture, times) in [("longgop.mp4", [100, 2000, 3500]), ("bframes.mp4", [200, 1500, 2966])] {
            let source = try keptSource(fixture)
            defer { source.stop() }
            var copies = 0
            for ms in times {
                let frame = try source.frame(
                    at: .milliseconds(Int64(ms)), tolerance: .zero, deadline: Deadline(after: 20_000),
                    isCancelled: { false })
                XCTAssertEqual(frame.decoder, "fth264dec", fixture)
                let copied = try XCTUnwrap(frame.copiedPictures, fixture)
                // The frame, the next (its end) and, at the stream's end (2966 ms is `bframes.mp4`'s last frame),
                // the pictures the decoder drains there: no later picture entered to prove them passed.
                XCTAssertLessThanOrEqual(copied - copies, 4, "\(fixture) to \(ms) ms: \(copied - copies) copies")
                copies = copied
                let alone = try grab(fixture, ms: Int64(ms))
                XCTAssertEqual(frame.time, alone.time, "\(fixture) at \(ms) ms")
                XCTAssertTrue(frame.image == alone.image, "\(fixture) at \(ms) ms: not the one-shot grab's frame")
            }
        }
    }

    /// A forward step is answered as soon as the frame after the target enters conversion, not once it reaches the
    /// sink: half-second steps and one-frame steps over a long GOP (P-frames) and B-frames give the one-shot grab's
    /// frames and times, and the probe confirms every half-second step's answer (whether the next frame had reached
    /// the sink by then depends on the machine's speed: the gain is measured in `bench/serve.sh`); the frame left
    /// behind is where the next step reads on. The times fall inside frames (a frame's very start needs no next
    /// frame).
    func testStepsAreAnsweredBeforeTheNextFrameIsConverted() throws {
        for (fixture, times) in [
            ("longgop.mp4", [110, 610, 1110, 1610, 1643, 1676, 2110, 2610]),
            ("bframes.mp4", [210, 710, 1210, 1243, 1710, 2210]),
        ] {
            let source = try keptSource(fixture)
            defer { source.stop() }
            var early = 0
            for ms in times {
                let frame = try source.frame(
                    at: .milliseconds(Int64(ms)), tolerance: .zero, deadline: Deadline(after: 20_000),
                    isCancelled: { false })
                early = frame.stepsConfirmedAtConversion
                let alone = try grab(fixture, ms: Int64(ms))
                XCTAssertEqual(frame.time, alone.time, "\(fixture) at \(ms) ms")
                XCTAssertTrue(frame.image == alone.image, "\(fixture) at \(ms) ms: not the one-shot grab's frame")
            }
            XCTAssertGreaterThanOrEqual(early, 4, "\(fixture): half-second steps the converter's probe confirmed")
        }
    }

    /// With one decoder thread (what `Batch.run` sets for its workers) fth264dec gives the same frames as with one
    /// per processor: B-frames up to the very last frame, far past the only keyframe, a long GOP, Matroska.
    func testOneDecoderThreadGivesTheSameFrames() throws {
        for (fixture, ms) in [("bframes.mp4", 2500), ("bframes.mp4", 2966), ("longgop.mp4", 3000), ("clip.mkv", 1000)] {
            let threaded = try grab(fixture, ms: Int64(ms))
            FrameRecipe.decoderThreads = 1
            defer { FrameRecipe.decoderThreads = nil }
            let single = try grab(fixture, ms: Int64(ms))
            XCTAssertEqual(single.decoder, "fth264dec")
            XCTAssertEqual(single.time, threaded.time, "\(fixture) at \(ms) ms")
            XCTAssertTrue(single.image == threaded.image, "\(fixture) at \(ms) ms: not the same frame")
        }
    }

    /// The scalers split a picture's lines over `FrameRecipe.scalerThreads` (one per processor, or one a batch worker):
    /// the pictures are the same with one thread and with four (more bands than this machine has cores), at 8 and 16
    /// bits (the tone-mapped RGB), prescaled and not, turned and not.
    func testScalersGiveTheSameLinesWithOneThreadOrMany() throws {
        defer { FrameRecipe.decoderThreads = nil }
        let cases: [(String, Int64, (Int, Int))] = [
            ("clip.mp4", 1000, (200, 200)), ("bars360-rot90.mp4", 100, (160, 160)), ("hdr-hlg.mp4", 600, (160, 160)),
            ("hdr-pq.mp4", 600, (500, 500)), ("rotated-sd.mp4", 200, (100, 160)), ("odd.mp4", 500, (97, 97)),
        ]
        for (fixture, ms, box) in cases {
            FrameRecipe.decoderThreads = 1
            XCTAssertEqual(FrameRecipe.scalerThreads, 1)
            let one = try grab(fixture, ms, box: box)
            FrameRecipe.decoderThreads = 4
            XCTAssertTrue(FrameRecipe.launchDescription(withLook: false).contains("n-threads=4"))
            let four = try grab(fixture, ms, box: box)
            XCTAssertEqual(one.time, four.time, fixture)
            XCTAssertEqual(one.image.width, four.image.width, fixture)
            XCTAssertTrue(one.image == four.image, "\(fixture) in \(box): the lines differ")
        }
    }

    /// Refusals on the path that seeks first are those of the type-finding one: a time past the end, an audio-only
    /// file (nothing links its pads), a file without its index.
    func testSeekingFirstRefusesWhatPrerollingRefuses() throws {
        for (fixture, ms) in [("clip.mp4", 60_000), ("tone.m4a", 500), ("truncated.mp4", 500)] {
            var messages: [String] = []
            for typeFinds in [false, true] {
                if typeFinds { setenv("FTGST_NO_KNOWN_DEMUXER", "1", 1) }
                defer { unsetenv("FTGST_NO_KNOWN_DEMUXER") }
                XCTAssertThrowsError(try grab(fixture, ms: Int64(ms)), "\(fixture) at \(ms) ms") {
                    XCTAssertEqual(($0 as? FilmtoneError)?.code, .decodeFailed, "\(fixture): \($0)")
                    messages.append(($0 as? FilmtoneError)?.message ?? "")
                }
            }
            if fixture == "clip.mp4" {
                XCTAssertEqual(messages.first, messages.last, "the same past-the-end message")
                XCTAssertTrue(messages.first?.contains("past the end") == true, messages.first ?? "")
            }
        }
    }

    func testNothingIsSkippedWithoutASeek() throws {
        XCTAssertEqual(try grab("bframes.mp4", ms: 0).skippedPictures, 0)
        XCTAssertEqual(
            try grab("bframes.mp4", ms: 2500, tolerance: 3000).skippedPictures, 0,
            "the first frame is within tolerance: no seek, nothing decoded forward")
    }

    func testAsyncLibraryAPI() async throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        var options = ThumbnailOptions(source: try TestEnvironment.fixture("clip.mp4"))
        options.timeMilliseconds = 2000
        options.toleranceMilliseconds = 0
        options.cacheDirectory = folder.path
        options.cacheName = "api"
        options.format = .png
        let result = try await Thumbnails.make(options)
        XCTAssertEqual(result.path, folder.appendingPathComponent("api.png").path)
        XCTAssertEqual(result.timeMilliseconds, 2000)
        XCTAssertEqual([result.width, result.height], [320, 240])
        XCTAssertFalse(result.cached)
        let again = try await Thumbnails.make(options)
        XCTAssertTrue(again.cached)

        options.source = "/nonexistent.mp4"
        options.cacheName = "missing"
        do {
            _ = try await Thumbnails.make(options)
            XCTFail("expected FILE_NOT_FOUND")
        } catch let error as FilmtoneError {
            XCTAssertEqual(error.code, .fileNotFound)
        }
    }

    func testGStreamerCauseIsKept() async throws {
        // garbage.bin fails in typefind, whose errors decodebin always forwards (see testSwallowedDemuxerErrors…).
        var options = ThumbnailOptions(source: try TestEnvironment.fixture("garbage.bin"))
        options.cacheDirectory = try TestEnvironment.temporaryDirectory(self).path
        do {
            _ = try await Thumbnails.make(options)
            XCTFail("expected DECODE_FAILED")
        } catch let error as FilmtoneError {
            XCTAssertEqual(error.code, .decodeFailed)
            XCTAssertEqual(error.cause?.domain, "stream")
            XCTAssertEqual(error.cause?.factory, "typefind")
            XCTAssertNotNil(error.cause?.debug)
        }
    }

    /// decodebin2 sometimes swallows qtdemux's error on a file without a moov (a race in 1.22); either way the
    /// job must fail with DECODE_FAILED well before its 30 s deadline. Repeated to meet the race.
    func testSwallowedDemuxerErrorsStillFailFast() throws {
        for _ in 0..<12 {
            var request = FrameRequest(
                source: .local(path: try TestEnvironment.fixture("truncated.mp4")), headers: [], time: .zero,
                tolerance: .zero, maxWidth: 64, maxHeight: 64, timeoutMilliseconds: 30_000)
            request.localStallMilliseconds = 1000
            let started = ContinuousClock.now
            XCTAssertThrowsError(try FrameGrabber(request: request, isCancelled: { false }).grab()) {
                XCTAssertEqual(($0 as? FilmtoneError)?.code, .decodeFailed)
            }
            // The stall detector gives up after 1 s, the timeout after 30 s: 10 s tells the two apart with room for
            // a loaded machine.
            XCTAssertLessThan(ContinuousClock.now - started, .seconds(10))
        }
    }

    func testCancellingTheTaskStopsAStalledFetchPromptly() async throws {
        let server = try HTTPTestServer.serving("clip.mp4", in: self).server
        defer { server.stop() }
        var options = ThumbnailOptions(source: server.url("/stall/clip.mp4"))
        options.timeoutMilliseconds = 30_000
        options.cacheDirectory = try TestEnvironment.temporaryDirectory(self).path
        let request = options
        await assertCancelledWhileStalled(on: server, path: "/stall/clip.mp4") { try await Thumbnails.make(request) }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: try XCTUnwrap(options.cacheDirectory)), [])
    }
}
