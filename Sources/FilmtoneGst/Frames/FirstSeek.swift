import Foundation
import GstKit
import Synchronization

/// Seeking before the first preroll: a one-shot grab of a time past the first frame, from a local file read
/// through a known demuxer (`FrameRecipe.Demuxer`), never decodes the first frame only to flush it away.
///
/// The pictures are held back while the pipeline goes to PAUSED: `decodebin` still plugs the parser and decoder
/// from the caps alone. The first keyframe's timestamp, watched on the demuxer's video pad, fixes the timeline as
/// the first decoded frame would (`origin`). The grabber then sends the seek into that pad (no sink is linked yet,
/// so a pipeline seek could not reach the demuxer); the seek's segment leaving the demuxer ends the hold, and the
/// preroll the pipeline was waiting for completes on the frame sought.
///
/// Where the pictures are held depends on the codec (`Place`, from the demuxer pad's caps). H.264 and HEVC are
/// held at the decoder's input, after the parser, so that the parser sees the stream from its start as on the
/// plain path: `h265parse` (1.22) given a CRA picture as its very first buffer inserts the `hvcC` parameter sets,
/// and an ffmpeg-muxed `hvcC` that carries x265's SEI then reaches `avdec_h265` as a broken access unit ("Invalid
/// NAL unit size"): the keyframe was lost and every picture after it decoded grey (issue 28). Every other codec is
/// held on the demuxer's pad, before its parser: `jpegparse` and `jpegdec` that saw pictures before the seek fail
/// after it now and then (a not-negotiated flow, "Internal data stream error").
///
/// Which frame counts as the first is the decoder's rule: a keyframe before the segment start is clipped to it (or
/// dropped, and the first frame inside the segment comes out, at the segment start), so the origin is the stream
/// time of the later of the two (`FrameRecipe.firstFrameTime`).
final class FirstSeekHold: Sendable {
    /// Where pictures are dropped while the hold lasts.
    enum Place: Equatable {
        /// On the demuxer's video pad, before the parser.
        case demuxer
        /// At the video decoder's input, after the parser.
        case decoder

        /// The place for a stream of `mediaType` (the demuxer pad's caps): after the parser for the codecs whose
        /// parsers insert the container's parameter sets into the stream (H.264, HEVC).
        static func forStream(mediaType: String?) -> Place {
            mediaType == "video/x-h264" || mediaType == "video/x-h265" ? .decoder : .demuxer
        }
    }

    private struct State {
        var place = Place.demuxer
        var segment: (start: ClockTime, time: ClockTime)?
        /// The stream time the first decoded frame would have had.
        var origin: ClockTime?
        var holding = true
        var seekSent = false
        /// The stream ended before any keyframe: there is nothing to seek in; EOS was let through.
        var endedEmpty = false
    }

    private let state = Mutex(State())

    static let padName = "video_0"

    /// Watches the first video pad `demuxer` adds (`video_0`, the one the launch description links) for the
    /// timeline's origin, and holds the pictures back there or at the input of the video decoder `pipeline` plugs.
    func attach(to demuxer: Element, in pipeline: Pipeline) {
        // Neither the pad nor the demuxer is kept here: the probe (owned by the pad) holds this object, and a
        // reference back would keep the pipeline alive for ever. `seek` and `duration` are handed the demuxer.
        demuxer.onPadAdded { [self] pad in
            guard pad.name == Self.padName else { return }
            pad.onData { [self] item in
                observe(item)
                return hold(item, at: .demuxer)
            }
        }
        pipeline.element.onDeepElementAdded { [self] element in
            guard element.factoryKlass.contains("Decoder/Video"), let pad = element.staticPad("sink") else { return }
            pad.onData { [self] item in hold(item, at: .decoder) }
        }
    }

    /// What the wait before the seek learns: nil while the demuxer has not yet given a keyframe.
    enum Outcome: Equatable {
        /// The first frame's stream time is known: seek.
        case ready(origin: ClockTime)
        /// The stream ended with no keyframe: no seek, the preroll ends without a frame.
        case empty
    }

    var outcome: Outcome? {
        state.withLock { state in
            if let origin = state.origin { return .ready(origin: origin) }
            return state.endedEmpty ? .empty : nil
        }
    }

    /// Whether the demuxer has given any video data yet: the local-stall rule's sign of life.
    var sawVideo: Bool { state.withLock { $0.origin != nil || $0.endedEmpty } }

    /// The duration `demuxer`'s video pad reports; nil when unknown.
    func duration(of demuxer: Element) -> ClockTime? { demuxer.staticPad(Self.padName)?.duration() }

    /// Sends the seek into `demuxer`'s video pad; the hold ends at the segment it starts. False when it was refused
    /// (the hold then ends at once, so that nothing waits on it).
    func seek(in demuxer: Element, to target: ClockTime, flags: SeekFlags) -> Bool {
        state.withLock { $0.seekSent = true }
        guard let pad = demuxer.staticPad(Self.padName), pad.seek(to: target, flags: flags) else {
            state.withLock { $0.holding = false }
            return false
        }
        return true
    }

    /// The demuxer's video pad: the codec (where to hold), before the seek the first segment and keyframe (the
    /// origin) or the end without one; the seek's segment ends the hold. The demuxer's pad and the decoder's input
    /// are on one streaming thread with no queue between (the parser is the only element): when the seek's segment
    /// leaves the demuxer, every picture from before the seek has passed the decoder's input or been flushed. That
    /// holds also when decodebin plugs the decoder only after the seek, where the decoder sees no flush at all.
    private func observe(_ item: PadItem) {
        state.withLock { state in
            switch item {
            case .caps(let caps):
                if !state.seekSent { state.place = Place.forStream(mediaType: caps.video?.mediaType) }
            case .segment(let start, let time, _):
                if state.seekSent {
                    state.holding = false  // the seek's segment: what follows is the frame sought
                } else {
                    state.segment = (start, time)
                }
            case .buffer(let buffer):
                if !state.seekSent, state.origin == nil, buffer.isKeyframe, let pts = buffer.presentationTimestamp,
                    let segment = state.segment
                {
                    state.origin = FrameRecipe.firstFrameTime(
                        keyframe: pts, segmentStart: segment.start, segmentTime: segment.time)
                }
            case .endOfStream:
                if !state.seekSent, state.origin == nil { state.endedEmpty = true }
            case .gap, .otherEvent:
                break
            }
        }
    }

    /// Every picture reaching `place` while the hold lasts there is dropped.
    private func hold(_ item: PadItem, at place: Place) -> PadDecision {
        state.withLock { state in
            guard state.holding, state.place == place else { return .pass }
            switch item {
            case .buffer:
                return .drop
            case .endOfStream:
                // Read to the end while held: the seek restarts the demuxer. With no keyframe at all, the end is
                // the answer, and must reach the sink.
                guard state.endedEmpty else { return .drop }
                state.holding = false
                return .pass
            case .caps, .segment, .gap, .otherEvent:
                return .pass
            }
        }
    }
}
