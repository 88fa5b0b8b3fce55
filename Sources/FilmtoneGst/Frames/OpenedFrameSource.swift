import FilmtoneCore
import FilmtoneElements
import Foundation
import GstKit

/// A source opened for frames (`FramePipeline`), with the way back from ftgst's own decoders: when `fth264dec` or
/// `fth265dec` fails on a stream — new caps mid-stream it does not take (4:2:2, 4:4:4, interlaced after a
/// progressive start), a picture outside them, more decoding errors than the base class allows — the source is
/// opened again with gst-libav (`avdec_h264`, `avdec_h265`: `FrameRequest.ownDecoder` false), within the same
/// deadline, and the frame asked for is answered from there. Callers see one source: the frame avdec gives, with
/// its time.
///
/// Only failures the own decoder can have caused are retried: an error the own decoder posted, or a not-negotiated flow
/// (the caps it refused) while it was the decoder. Anything else (a time past the end, a damaged container, the
/// deadline) is the same with either decoder and is thrown as it is. libavcodec that cannot be opened never gets
/// this far: the pipeline then plugs avdec from the start (`FrameRecipe.autoplugDecision`).
///
/// Not thread-safe: one caller at a time, as `FramePipeline`.
final class OpenedFrameSource {
    private var current: FramePipeline
    private var inputs: DecoderInputs
    private let formats: PictureFormatWatch
    private let keeps: Bool
    /// Seeks sent by the pipelines given up.
    private var earlierSeeks = 0
    /// Pipelines opened on the source so far (1, or more after a way back).
    private(set) var opens = 1
    /// Frames the current pipeline has handed out: a failure after the first may be its state's, not the source's.
    private var answered = 0

    /// A kept pipeline that cannot seek was asked for a time before the frame it read last.
    typealias CannotGoBack = FramePipeline.CannotGoBack

    /// Opens `request`'s source (`FramePipeline.init`): once, or twice when `fth264dec` fails on it.
    init(
        _ request: FrameRequest, watching formats: PictureFormatWatch, deadline: Deadline, keeps: Bool,
        seekingFirstTo firstTime: (time: ClockTime, tolerance: ClockTime)? = nil,
        firstKeyframe: (@Sendable (ClockTime?) -> ClockTime)? = nil, isCancelled: () -> Bool
    ) throws {
        self.formats = formats
        self.keeps = keeps
        let inputs = DecoderInputs()
        do {
            current = try FramePipeline(
                request, watching: formats, deadline: deadline, keeps: keeps, seekingFirstTo: firstTime,
                firstKeyframe: firstKeyframe, inputs: inputs, isCancelled: isCancelled)
            self.inputs = inputs
        } catch let error where Self.ownDecoderFailed(error, request, inputs) {
            var plain = request
            plain.ownDecoder = false
            opens = 2
            let plainInputs = DecoderInputs()
            current = try FramePipeline(
                plain, watching: formats, deadline: deadline, keeps: keeps, seekingFirstTo: firstTime,
                firstKeyframe: firstKeyframe, inputs: plainInputs, isCancelled: isCancelled)
            self.inputs = plainInputs
        }
    }

    /// Whether `error` is one an own decoder caused, so that gst-libav may answer otherwise.
    static func ownDecoderFailed(_ error: Error, _ request: FrameRequest, _ inputs: DecoderInputs) -> Bool {
        request.ownDecoder && LibavDecoderElement.isOwn(inputs.decoderName) && FrameRecipe.ownDecoderCaused(error)
    }

    /// The pipeline's request: `ownDecoder` is false once it fell back.
    var request: FrameRequest { current.request }
    var timeline: FrameRecipe.Timeline? { current.timeline }
    var isStill: Bool { current.isStill }
    var decodedSize: (width: Int, height: Int) { current.decodedSize }
    var isUsable: Bool { current.isUsable }
    var seekCount: Int { earlierSeeks + current.seekCount }
    var durationMilliseconds: Int64? { current.durationMilliseconds }

    func stop() { current.stop() }

    /// `FramePipeline.frame(at:…)`, answered again from a new pipeline when the current one failed in a way it
    /// can have caused (`withWaysBack`).
    func frame(
        at time: ClockTime, tolerance: ClockTime, deadline: Deadline, readingForward: Bool = false,
        isCancelled: () -> Bool
    ) throws -> GrabbedFrame {
        try withWaysBack(seekingFirstTo: readingForward ? nil : (time, tolerance), deadline, isCancelled) {
            try $0.frame(
                at: time, tolerance: tolerance, deadline: deadline, readingForward: readingForward,
                isCancelled: isCancelled)
        }
    }

    /// `FramePipeline.keyframe(before:…)`, with the same ways back.
    func keyframe(before time: ClockTime, deadline: Deadline, isCancelled: () -> Bool) throws -> GrabbedFrame {
        try withWaysBack(seekingFirstTo: nil, deadline, isCancelled) {
            try $0.keyframe(before: time, deadline: deadline, isCancelled: isCancelled)
        }
    }

    /// Asks the current pipeline (`ask`), counting the frames it answers with, and asks once more from a new one
    /// when it failed:
    /// - with an error an own decoder caused (`ownDecoderFailed`): the new one decodes with gst-libav;
    /// - after answering before, with a seek that ended the stream without a frame (tsdemux, asked for 4.9 s of a
    ///   10-s TS after a seek to 1 s, ends the stream at once): the new one, fresh, answers as the one-shot grab
    ///   does, a frame or the same error.
    private func withWaysBack(
        seekingFirstTo firstTime: (time: ClockTime, tolerance: ClockTime)?, _ deadline: Deadline,
        _ isCancelled: () -> Bool, _ ask: (FramePipeline) throws -> GrabbedFrame
    ) throws -> GrabbedFrame {
        func answer() throws -> GrabbedFrame {
            let frame = try ask(current)
            answered += 1
            return frame
        }
        do {
            return try answer()
        } catch let error where Self.ownDecoderFailed(error, current.request, inputs) {
            try reopen(withOwnDecoder: false, deadline, seekingFirstTo: firstTime, isCancelled: isCancelled)
            return try answer()
        } catch  where answered > 0 && current.endedWithoutFrame && !deadline.hasPassed && !isCancelled() {
            try reopen(
                withOwnDecoder: current.request.ownDecoder, deadline, seekingFirstTo: firstTime,
                isCancelled: isCancelled)
            return try answer()
        }
    }

    /// Stops the failed pipeline and opens the source again (with `avdec_h264` unless `withOwnDecoder`). A one-shot
    /// source may seek before its first preroll, as it did the first time; a kept one prerolls its first frame, as
    /// it did.
    private func reopen(
        withOwnDecoder ownDecoder: Bool, _ deadline: Deadline,
        seekingFirstTo firstTime: (time: ClockTime, tolerance: ClockTime)?, isCancelled: () -> Bool
    ) throws {
        var plain = current.request
        plain.ownDecoder = plain.ownDecoder && ownDecoder
        answered = 0
        opens += 1
        earlierSeeks += current.seekCount
        current.stop()
        let plainInputs = DecoderInputs()
        current = try FramePipeline(
            plain, watching: formats, deadline: deadline, keeps: keeps, seekingFirstTo: keeps ? nil : firstTime,
            inputs: plainInputs, isCancelled: isCancelled)
        inputs = plainInputs
    }
}
