import FilmtoneElements
import Foundation
import GstKit
import Synchronization

/// Remembers the timestamps of the pictures entering the video decoder since its last segment (a flushing seek
/// starts a new one), so that a frame the decoder clipped gets its real start back (`FrameRecipe.realStart`).
/// Written on the decoder's streaming thread, read by the grabber.
final class DecoderInputs: Sendable {
    /// A bound on what is kept: a seek decodes from the keyframe before the target, so one GOP's worth.
    static let limit = 4096

    /// libav's decoders' switch for pictures decoded with missing references.
    static let corruptOutputProperty = "output-corrupt"

    private let pictures = Mutex<[FrameRecipe.InputPicture]>([])
    /// The video decoder plugged (its factory's name), and its state when it is an own one (`fth264dec`, `fth265dec`).
    private let decoder = Mutex<(name: String?, own: LibavDecoderState?)>((nil, nil))
    /// The last keyframe that entered since the segment began, and the longest gap between two consecutive ones
    /// seen so far (across segments: a GOP's length does not change with a seek).
    private let keyframes = Mutex<(last: ClockTime?, longestGap: ClockTime?)>((nil, nil))

    /// Watches a pipeline for its video decoder and records what enters it. `jpegdec` (a mezzanine's MJPEG, a
    /// Motion JPEG clip) is classed `Codec/Decoder/Image`.
    ///
    /// The decoder is also told not to hand over corrupt pictures (libav's `output-corrupt`): tsdemux answers a
    /// `KEY_UNIT` seek with whatever picture follows its PCR estimate, not a keyframe (a P-frame 1.2 s into the
    /// TS fixture for a seek to 2.99 s, which h264parse even flags as a keyframe), and that picture decodes
    /// without its references. Dropped instead, the decoder goes on to the next real keyframe.
    func attach(to pipeline: Pipeline) {
        pipeline.element.onDeepElementAdded { [self] element in
            let klass = element.factoryKlass
            guard klass.contains("Decoder/Video") || klass.contains("Decoder/Image"),
                let pad = element.staticPad("sink")
            else { return }
            let name = element.factoryName
            let own = LibavDecoderElement.isOwn(name) ? LibavDecoderElement.state(of: element.pointer) : nil
            if own != nil, let threads = FrameRecipe.decoderThreads {
                try? element.setProperty(LibavDecoderElement.threadsProperty, .int(Int64(threads)))
            }
            decoder.withLock { $0 = (name, own) }
            if element.hasProperty(Self.corruptOutputProperty) {
                try? element.setProperty(Self.corruptOutputProperty, .bool(false))
            }
            pad.onData { [self] item in
                record(item)
                return .pass
            }
        }
    }

    private func record(_ item: PadItem) {
        switch item {
        case .segment:
            pictures.withLock { $0.removeAll(keepingCapacity: true) }
            keyframes.withLock { $0.last = nil }
        case .buffer(let buffer):
            guard let pts = buffer.presentationTimestamp else { return }
            if buffer.isKeyframe {
                keyframes.withLock { state in
                    if let last = state.last, pts > last {
                        let gap = ClockTime(nanoseconds: pts.nanoseconds - last.nanoseconds)
                        state.longestGap = max(state.longestGap ?? gap, gap)
                    }
                    state.last = pts
                }
            }
            let picture = FrameRecipe.InputPicture(
                pts: pts, duration: buffer.duration, isKeyframe: buffer.isKeyframe, dts: buffer.decodeTimestamp)
            pictures.withLock {
                if $0.count >= Self.limit { $0.removeFirst($0.count / 2) }
                $0.append(picture)
            }
        case .caps, .gap, .endOfStream, .otherEvent:
            break
        }
    }

    /// Whether a picture that starts after `pts` and at or before `target` has entered the decoder since the last
    /// segment (`FrameRecipe.steppedOver`), read without copying the list: asked for every decoded frame while a
    /// kept pipeline steps forward (`EarlyFrameDrop`).
    func steppedOver(pts: ClockTime, target: ClockTime) -> Bool {
        pictures.withLock { FrameRecipe.steppedOver(pts: pts, target: target, inputs: $0.lazy.map(\.pts)) }
    }

    /// The longest gap seen between two keyframes entering one after the other; nil before two were seen.
    var keyframeInterval: ClockTime? { keyframes.withLock { $0.longestGap } }

    /// The factory name of the video (or image) decoder plugged; nil before one was.
    var decoderName: String? { decoder.withLock { $0.name } }

    /// The own decoder's state when one (`fth264dec`, `fth265dec`) was plugged.
    var ownDecoder: LibavDecoderState? { decoder.withLock { $0.own } }

    /// How many pictures the own decoder copied out (its others ended before the segment and were released uncopied);
    /// nil when another decoder was plugged.
    var ownDecoderCopies: Int? { decoder.withLock { $0.own?.copied.load(ordering: .relaxed) } }

    /// The pictures seen since the last segment, in the order they entered.
    var snapshot: [FrameRecipe.InputPicture] { pictures.withLock { $0 } }
}
