import Foundation
import GstKit
import Synchronization

/// Seeking before the first preroll: a one-shot grab of a time past the first frame, from a local file read
/// through a known demuxer (`FrameRecipe.Demuxer`), never decodes the first frame only to flush it away.
///
/// The demuxer's video pad is held back while the pipeline goes to PAUSED: its buffers are dropped before the
/// parser and decoder, which decodebin still plugs from the caps alone; its first keyframe's timestamp fixes the
/// timeline as the first decoded frame would (`origin`). The grabber then sends the seek into that pad (no sink is
/// linked yet, so a pipeline seek could not reach the demuxer); the flush it causes ends the hold, and the preroll
/// the pipeline was waiting for completes on the frame sought. The demuxer's reading ahead while held costs file
/// reads only.
///
/// Which frame counts as the first is the decoder's rule: a keyframe before the segment start is clipped to it (or
/// dropped, and the first frame inside the segment comes out, at the segment start), so the origin is the stream
/// time of the later of the two (`FrameRecipe.firstFrameTime`).
final class FirstSeekHold: Sendable {
    private struct State {
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

    /// Holds the first video pad `demuxer` adds (`video_0`, the one the launch description links).
    func attach(to demuxer: Element) {
        // Neither the pad nor the demuxer is kept here: the probe (owned by the pad) holds this object, and a
        // reference back would keep the pipeline alive for ever. `seek` and `duration` are handed the demuxer.
        demuxer.onPadAdded { [self] pad in
            guard pad.name == Self.padName else { return }
            pad.onData { [self] item in decide(item) }
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

    /// The duration `demuxer`'s held video pad reports; nil when unknown.
    func duration(of demuxer: Element) -> ClockTime? { demuxer.staticPad(Self.padName)?.duration() }

    /// Sends the seek into `demuxer`'s held pad; the hold ends at the segment it starts. False when it was refused
    /// (the hold then ends at once, so that nothing waits on it).
    func seek(in demuxer: Element, to target: ClockTime, flags: SeekFlags) -> Bool {
        state.withLock { $0.seekSent = true }
        guard let pad = demuxer.staticPad(Self.padName), pad.seek(to: target, flags: flags) else {
            state.withLock { $0.holding = false }
            return false
        }
        return true
    }

    private func decide(_ item: PadItem) -> PadDecision {
        state.withLock { state in
            guard state.holding else { return .pass }
            switch item {
            case .segment(let start, let time, _):
                if state.seekSent {
                    state.holding = false  // the seek's segment: what follows is the frame sought
                } else {
                    state.segment = (start, time)
                }
                return .pass
            case .buffer(let buffer):
                if state.origin == nil, buffer.isKeyframe, let pts = buffer.presentationTimestamp,
                    let segment = state.segment
                {
                    state.origin = FrameRecipe.firstFrameTime(
                        keyframe: pts, segmentStart: segment.start, segmentTime: segment.time)
                }
                return .drop
            case .endOfStream:
                // Read to the end while held: the seek restarts the demuxer. With no keyframe at all, the end is
                // the answer, and must reach the sink.
                guard state.origin == nil else { return .drop }
                state.endedEmpty = true
                state.holding = false
                return .pass
            case .caps, .gap, .otherEvent:
                return .pass
            }
        }
    }
}
