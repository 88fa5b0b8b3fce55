import FilmtoneElements
import FilmtoneTestSupport
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneGst
@testable import GstKit

/// The own decoders' (`fth264dec`, `fth265dec`) ways back to gst-libav (issue 28, item 4; issue 30), each forced:
/// libavcodec that cannot be opened or is the wrong library, a stream they do not take at its caps (interlaced; 4:4:4
/// is in `FrameMatrixTests` and `FrameGrabberTests`), and caps that change mid-stream to what they do not take. The
/// oracle is the barcode's number and time (`FrameBarcode`), and which decoder gave the frame.
final class OwnDecoderFallbackTests: XCTestCase {
    private func request(_ clip: String, ms: Int64) throws -> FrameRequest {
        FrameRequest(
            source: .local(path: try TestEnvironment.fixture(clip)), headers: [], time: .milliseconds(ms),
            tolerance: .zero, maxWidth: 4096, maxHeight: 4096, timeoutMilliseconds: 20_000)
    }

    private func grab(_ clip: String, frame: Int) throws -> GrabbedFrame {
        try FrameGrabber(request: try request(clip, ms: milliseconds(frame)), isCancelled: { false }).grab()
    }

    /// The middle of frame n.
    private func milliseconds(_ frame: Int) -> Int64 { Int64(frame) * FrameBarcode.frameMilliseconds + 20 }

    /// "n@t": the number the picture shows (? when none) and the time reported.
    private func reading(_ frame: GrabbedFrame) -> String {
        let number = FrameBarcode.number(width: frame.image.width, height: frame.image.height, rgb: frame.image.pixels)
        return "\(number.map(String.init) ?? "?")@\(frame.time.milliseconds)"
    }

    private func expected(_ frame: Int) -> String { "\(frame)@\(Int64(frame) * FrameBarcode.frameMilliseconds)" }

    /// A libavcodec that cannot be opened (another FFmpeg's major is not installed, a copied binary) or a library
    /// that is not libavcodec: every H.264 job decodes with avdec_h264, exactly, instead of failing. Back to the
    /// default library, fth264dec again. HEVC likewise, with avdec_h265 and fth265dec; 10-bit H.264 is fth264dec's.
    func testH264AndHEVCDecodeWithAvdecWhenLibavcodecCannotBeUsed() throws {
        for library in ["/nonexistent/libavcodec.so.59", Libav.utilityLibraryName] {
            setenv("FTGST_LIBAVCODEC", library, 1)
            defer { unsetenv("FTGST_LIBAVCODEC") }
            guard case .failure(let error) = Libav.shared else {
                XCTFail("\(library) opened as libavcodec")
                continue
            }
            XCTAssertTrue(error.description.contains(library), error.description)
            for (clip, decoder) in [("matrix-h264-bframes.mp4", "avdec_h264"), ("matrix-hevc10.mov", "avdec_h265")] {
                for frame in [13, 18] {
                    let grabbed = try grab(clip, frame: frame)
                    XCTAssertEqual(reading(grabbed), expected(frame), "\(library), \(clip), frame \(frame)")
                    XCTAssertEqual(grabbed.decoder, decoder, library)
                }
            }
        }
        XCTAssertEqual(try grab("matrix-h264-bframes.mp4", frame: 18).decoder, "fth264dec")
        XCTAssertEqual(try grab("matrix-hevc10.mov", frame: 18).decoder, "fth265dec")
        XCTAssertEqual(try grab("matrix-hevc8.mp4", frame: 18).decoder, "fth265dec")
        XCTAssertEqual(try grab("matrix-h264-high10.mp4", frame: 18).decoder, "fth264dec")
    }

    /// Interlaced H.264 is refused at its caps (`coded-picture-structure=field`): avdec_h264 is plugged from the
    /// start, no attempt with fth264dec is made (the request still allows it), and the frames are exact.
    func testInterlacedH264IsLeftToAvdecAtItsCaps() throws {
        let caps = "video/x-h264, stream-format=avc, alignment=au, profile=high, coded-picture-structure="
        let interlaced = try Caps(parsing: caps + "field").firstStructure
        let progressive = try Caps(parsing: caps + "frame").firstStructure
        XCTAssertEqual(interlaced.map(LibavDecoderElement.h264.accepts), false)
        XCTAssertEqual(progressive.map(LibavDecoderElement.h264.accepts), true)
        XCTAssertFalse(LibavDecoderElement.isProgressive(interlaceMode: "mixed", pictureStructure: nil))

        let source = try OpenedFrameSource(
            try request("matrix-h264-interlaced.mp4", ms: 0), watching: PictureFormatWatch(),
            deadline: Deadline(after: 20_000), keeps: true, isCancelled: { false })
        defer { source.stop() }
        for frame in [13, 18, 39, 5] {
            let grabbed = try source.frame(
                at: .milliseconds(milliseconds(frame)), tolerance: .zero, deadline: Deadline(after: 20_000),
                isCancelled: { false })
            XCTAssertEqual(reading(grabbed), expected(frame), "frame \(frame)")
            XCTAssertEqual(grabbed.decoder, "avdec_h264")
        }
        XCTAssertTrue(source.request.ownDecoder, "decided at the caps: no second attempt")
    }

    /// fth264dec by name in a pipeline of its own, given interlaced H.264: its ACCEPT_CAPS answer refuses the caps
    /// (as its template refuses other profiles: 4:4:4 too), so the pipeline fails as not-negotiated. Checked in process:
    /// `gst-launch-1.0` itself now and then did not quit after such an error in preroll (its main loop waited on),
    /// whichever element refused.
    func testTheElementRefusesInterlacedAnd444CapsByName() throws {
        try FilmtonePlugin.ensureRegistered()
        // Interlaced caps by ACCEPT_CAPS (not-negotiated); 4:4:4 by the template, so qtdemux's pad cannot even be
        // linked to the parser in front of it (not-linked, or not-negotiated).
        for (fixture, refusals) in [
            ("matrix-h264-interlaced.mp4", ["not-negotiated"]), ("odd.mp4", ["not-linked", "not-negotiated"]),
        ] {
            let clip = try TestEnvironment.fixture(fixture)
            let pipeline = try Pipeline(launch: "filesrc location=\(clip) ! qtdemux ! h264parse ! fth264dec ! fakesink")
            defer { pipeline.stop() }
            _ = pipeline.pause()
            guard
                case .error(let cause) = pipeline.waitForAsyncDone(
                    deadline: Deadline(after: 20_000), isCancelled: { false })
            else { return XCTFail("\(fixture) prerolled through fth264dec") }
            XCTAssertTrue(refusals.contains { (cause.debug ?? "").contains($0) }, "\(fixture): \(cause)")
        }
    }

    /// Caps that change mid-stream to what fth264dec also takes (frames 20–39 High 10 after 8-bit 0–19): it
    /// drains, opens libavcodec again for the new caps and goes on; no second open.
    func testCapsChangingMidStreamToATakenBitDepthStayWithTheOwnDecoder() throws {
        let clip = "matrix-h264-to-high10.ts"
        for frame in [13, 20, 26, 39] {
            let grabbed = try grab(clip, frame: frame)
            XCTAssertEqual(reading(grabbed), expected(frame), "\(clip), frame \(frame)")
            XCTAssertEqual(grabbed.decoder, "fth264dec", "\(clip), frame \(frame)")
        }
        let source = try OpenedFrameSource(
            try request(clip, ms: 0), watching: PictureFormatWatch(), deadline: Deadline(after: 20_000),
            keeps: true, isCancelled: { false })
        defer { source.stop() }
        for frame in [5, 18, 23, 33] {
            let grabbed = try source.frame(
                at: .milliseconds(milliseconds(frame)), tolerance: .zero, deadline: Deadline(after: 20_000),
                isCancelled: { false })
            XCTAssertEqual(reading(grabbed), expected(frame), "\(clip), kept, frame \(frame)")
            XCTAssertEqual(grabbed.decoder, "fth264dec", "\(clip), kept, frame \(frame)")
        }
        XCTAssertTrue(source.request.ownDecoder, "no fallback")
    }

    /// Caps that change mid-stream (frames 20–39 4:4:4, or interlaced, after 8-bit progressive 0–19): fth264dec
    /// decodes the first part; a frame of the second is answered by the source opened again with avdec_h264 —
    /// one-shot, and on a kept pipeline crossing the change forward, then going back.
    func testCapsChangingMidStreamFallBackToAvdec() throws {
        for clip in ["matrix-h264-to-444.ts", "matrix-h264-to-interlaced.ts"] {
            let before = try grab(clip, frame: 13)
            XCTAssertEqual(reading(before), expected(13), clip)
            XCTAssertEqual(before.decoder, "fth264dec", clip)
            for frame in [20, 26, 39] {
                let after = try grab(clip, frame: frame)
                XCTAssertEqual(reading(after), expected(frame), "\(clip), frame \(frame)")
                XCTAssertEqual(after.decoder, "avdec_h264", "\(clip), frame \(frame)")
            }

            var source = try OpenedFrameSource(
                try request(clip, ms: 0), watching: PictureFormatWatch(), deadline: Deadline(after: 20_000),
                keeps: true, isCancelled: { false })
            defer { source.stop() }
            for frame in [5, 18, 23, 33, 12] {
                let what = "\(clip), kept, frame \(frame)"
                func ask() throws -> GrabbedFrame {
                    try source.frame(
                        at: .milliseconds(milliseconds(frame)), tolerance: .zero, deadline: Deadline(after: 20_000),
                        isCancelled: { false })
                }
                let grabbed: GrabbedFrame
                do {
                    grabbed = try ask()
                } catch is OpenedFrameSource.CannotGoBack {
                    // A short TS is read forward: going back takes a new pipeline, as the engine opens one.
                    source.stop()
                    source = try OpenedFrameSource(
                        try request(clip, ms: 0), watching: PictureFormatWatch(), deadline: Deadline(after: 20_000),
                        keeps: true, isCancelled: { false })
                    grabbed = try ask()
                }
                XCTAssertEqual(reading(grabbed), expected(frame), what)
                if frame >= 20 {
                    XCTAssertEqual(grabbed.decoder, "avdec_h264", what)
                    XCTAssertFalse(source.request.ownDecoder, "\(what): fell back")
                }
            }
        }
    }

    /// Only failures fth264dec can have caused are tried again: a time past the end fails once, as it is.
    func testOtherFailuresAreNotTriedAgain() throws {
        let source = try OpenedFrameSource(
            try request("matrix-h264-bframes.mp4", ms: 0), watching: PictureFormatWatch(),
            deadline: Deadline(after: 20_000), keeps: true, isCancelled: { false })
        defer { source.stop() }
        XCTAssertThrowsError(
            try source.frame(
                at: .milliseconds(60_000), tolerance: .zero, deadline: Deadline(after: 20_000), isCancelled: { false })
        ) { error in
            XCTAssertEqual((error as? FilmtoneError)?.code, .decodeFailed)
        }
        XCTAssertTrue(source.request.ownDecoder)
        let notNegotiated = FilmtoneError(
            .decodeFailed, "Internal data stream error.",
            cause: .init(
                domain: "stream", code: 1, message: "Internal data stream error.",
                debug: "streaming stopped, reason not-negotiated (-4)", element: "tsdemux0", factory: "tsdemux"))
        let inputs = DecoderInputs()
        XCTAssertFalse(
            OpenedFrameSource.ownDecoderFailed(notNegotiated, try request("matrix-h264.ts", ms: 0), inputs),
            "no decoder plugged: not fth264dec's failure")
    }
}
