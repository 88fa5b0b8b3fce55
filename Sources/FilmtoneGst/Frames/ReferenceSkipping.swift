import Foundation
import GstKit
import Synchronization

/// H.264 access units as the decoder receives them from `h264parse` (one picture per buffer).
enum H264AccessUnit {
    enum Framing: Equatable {
        /// `stream-format=avc`: each NAL unit prefixed by its length in `lengthSize` bytes (from `codec_data`).
        case lengthPrefixed(lengthSize: Int)
        /// `stream-format=byte-stream`: NAL units separated by 00 00 01 start codes.
        case annexB
    }

    /// The framing from `video/x-h264` caps fields: `stream-format` and the avcC `codec_data` (its 5th byte holds
    /// `lengthSizeMinusOne` in the low two bits). nil when it cannot be known.
    static func framing(streamFormat: String?, codecData: [UInt8]?) -> Framing? {
        switch streamFormat {
        case "byte-stream": return .annexB
        case "avc", "avc3":
            guard let codecData, codecData.count >= 5, codecData[0] == 1 else { return nil }
            return .lengthPrefixed(lengthSize: Int(codecData[4] & 0x03) + 1)
        default: return nil
        }
    }

    /// True when the access unit holds slices and every slice has `nal_ref_idc == 0`: no other picture refers to
    /// it, so a decoder that skips it decodes every other picture identically (frame_num and POC derivation
    /// in H.264 only follow reference pictures). False when in doubt: unknown structure, no slice, any
    /// reference slice.
    static func isNonReference(_ bytes: UnsafeRawBufferPointer, framing: Framing) -> Bool {
        var sawSlice = false
        var allNonReference = true
        let visit = { (header: UInt8) in
            let type = header & 0x1F
            guard (1...5).contains(type) else { return }  // coded slice NAL units (incl. IDR, partitions)
            sawSlice = true
            if (header >> 5) & 0x03 != 0 { allNonReference = false }
        }
        switch framing {
        case .lengthPrefixed(let lengthSize):
            let wellFormed = LengthPrefixedNALUnits.forEach(in: bytes, lengthSize: lengthSize) { unit in
                visit(unit[unit.startIndex])
                return true
            }
            guard wellFormed else { return false }  // malformed: keep it
        case .annexB:
            var index = 0
            var zeros = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == 1 && zeros >= 2 && index + 1 < bytes.count { visit(bytes[index + 1]) }
                zeros = byte == 0 ? zeros + 1 : 0
                index += 1
            }
        }
        return sawSlice && allNonReference
    }

    /// Whether a picture shown from `time` for `duration` ends at or before `segmentStart`: it is then only
    /// decoded to be thrown away, never shown, so it may be skipped when nothing refers to it. Unknown timing
    /// never qualifies.
    static func endsBeforeSegment(time: ClockTime?, duration: ClockTime?, segmentStart: ClockTime) -> Bool {
        guard let time, let duration, duration > .zero else { return false }
        return time.nanoseconds + duration.nanoseconds <= segmentStart.nanoseconds
    }
}

/// HEVC access units as the decoder receives them from `h265parse` (one picture per buffer), in `hvc1`/`hev1`
/// framing (NAL units prefixed by their length, the size from `codec_data`).
enum HEVCAccessUnit {
    /// What the rule needs from the stream's `hvcC` (`codec_data`): the NAL length size and the highest temporal
    /// sub-layer. nil when either cannot be known: not an hvcC record of version 1, or `numTemporalLayers` 0
    /// ("unknown"); a byte-stream has no record.
    struct Layout: Equatable {
        var lengthSize: Int
        /// `numTemporalLayers - 1`: no picture refers to an unreferenced picture of this sub-layer.
        var highestTemporalID: Int
    }

    static func layout(streamFormat: String?, codecData: [UInt8]?) -> Layout? {
        guard streamFormat == "hvc1" || streamFormat == "hev1", let codecData, codecData.count >= 23,
            codecData[0] == 1
        else { return nil }
        // Byte 21: constantFrameRate (2 bits), numTemporalLayers (3), temporalIdNested (1), lengthSizeMinusOne (2).
        let layers = Int(codecData[21] >> 3 & 0x07)
        guard layers > 0 else { return nil }
        return Layout(lengthSize: Int(codecData[21] & 0x03) + 1, highestTemporalID: layers - 1)
    }

    /// True when the access unit holds coded slices and every one is of a sub-layer non-reference type (TRAIL_N,
    /// TSA_N, STSA_N, RADL_N, RASL_N, the reserved even types below 16) in the base layer and the stream's highest
    /// temporal sub-layer: such a picture is used by no later picture of its sub-layer, and no higher one exists,
    /// so no picture refers to it; HEVC's POC derivation follows only pictures that are none of these. A decoder
    /// that skips it decodes every other picture identically (ffmpeg's `skip_frame=nonref` skips these types in
    /// every sub-layer). False when in doubt: a malformed unit, no slice, any other slice, another layer (MV-HEVC's
    /// second view) or sub-layer.
    static func isNonReference(_ bytes: UnsafeRawBufferPointer, layout: Layout) -> Bool {
        var sawSlice = false
        let kept = LengthPrefixedNALUnits.forEach(in: bytes, lengthSize: layout.lengthSize) { unit in
            guard unit.count >= 2 else { return false }  // malformed: keep it
            let (first, second) = (unit[unit.startIndex], unit[unit.startIndex + 1])
            let type = Int(first >> 1 & 0x3F)
            guard type < 32 else { return true }  // not a coded slice segment
            let layer = Int(first & 0x01) << 5 | Int(second >> 3)
            let temporalID = Int(second & 0x07) - 1
            guard type < 16, type % 2 == 0, layer == 0, temporalID == layout.highestTemporalID else { return false }
            sawSlice = true
            return true
        }
        return kept && sawSlice
    }
}

/// NAL units framed by a big-endian length of `lengthSize` bytes each (`avc`, `hvc1`/`hev1`), as H.264's and HEVC's
/// access units both come from their parsers.
enum LengthPrefixedNALUnits {
    /// Calls `visit` with each unit's bytes, header first, until it returns false. False when it did, or when the
    /// framing is malformed: a zero length, a unit past the end, bytes left over.
    static func forEach(
        in bytes: UnsafeRawBufferPointer, lengthSize: Int, _ visit: (UnsafeRawBufferPointer.SubSequence) -> Bool
    ) -> Bool {
        var offset = 0
        while offset + lengthSize < bytes.count {
            var length = 0
            for i in 0..<lengthSize { length = length << 8 | Int(bytes[offset + i]) }
            let start = offset + lengthSize
            guard length > 0, start + length <= bytes.count, visit(bytes[start..<(start + length)]) else {
                return false
            }
            offset = start + length
        }
        return offset == bytes.count
    }
}

/// Drops H.264 and HEVC pictures that are both unreferenced and wholly before the segment start (an accurate seek's
/// target) on their way into the decoder: the work an exact seek wastes on pictures nobody will see or use.
/// ffmpeg's decoder offers the same for whole streams as `skip_frame=nonref`; here it is limited to pictures
/// that cannot matter, so the frame returned is bit-identical.
final class ReferenceSkipper: Sendable {
    /// How the stream's access units are judged.
    enum Rule: Equatable {
        case h264(H264AccessUnit.Framing)
        case hevc(HEVCAccessUnit.Layout)

        /// The rule for the decoder's input caps; nil (nothing skipped) for other codecs or unknown framing.
        static func of(mediaType: String, streamFormat: String?, codecData: [UInt8]?) -> Rule? {
            switch mediaType {
            case "video/x-h264":
                H264AccessUnit.framing(streamFormat: streamFormat, codecData: codecData).map(Rule.h264)
            case "video/x-h265":
                HEVCAccessUnit.layout(streamFormat: streamFormat, codecData: codecData).map(Rule.hevc)
            default: nil
            }
        }

        func isNonReference(_ bytes: UnsafeRawBufferPointer) -> Bool {
            switch self {
            case .h264(let framing): H264AccessUnit.isNonReference(bytes, framing: framing)
            case .hevc(let layout): HEVCAccessUnit.isNonReference(bytes, layout: layout)
            }
        }
    }

    /// What the probe has seen of the stream, written and read on the decoder's streaming thread, read by the
    /// grabber at the end.
    private struct State {
        var rule: Rule?
        var segmentStart = ClockTime.zero
        /// A kept pipeline's forward step target (buffer time; `aim(at:)`): pictures wholly before it are never
        /// shown either, though no seek set a segment there.
        var stepTarget: ClockTime?
        var forward = true
        var skipped = 0
    }

    private let state = Mutex(State())
    /// The pictures entering the decoder, for a forward step's rule; nil: seeks only.
    private let inputs: DecoderInputs?

    /// `inputs`: the same pipeline's `DecoderInputs`, attached before this skipper, so that a kept pipeline's
    /// forward steps skip too (`aim(at:)`).
    init(inputs: DecoderInputs? = nil) { self.inputs = inputs }

    /// How many pictures were skipped so far.
    var skippedCount: Int { state.withLock { $0.skipped } }

    /// `FTGST_NO_REFERENCE_SKIP=1` turns skipping off: a diagnostic switch, and how the tests prove that the
    /// frame returned is identical either way.
    static var isEnabled: Bool { ProcessInfo.processInfo.environment["FTGST_NO_REFERENCE_SKIP"] != "1" }

    /// Watches a pipeline for its video decoder and attaches to the decoder's input.
    func attach(to pipeline: Pipeline) {
        guard Self.isEnabled else { return }
        pipeline.element.onDeepElementAdded { [self] element in
            guard element.factoryKlass.contains("Decoder/Video"), let pad = element.staticPad("sink") else { return }
            pad.onData { [self] item in decide(item) }
        }
    }

    /// While a kept pipeline steps forward to `target` (a buffer timestamp of the current segment), unreferenced
    /// pictures it has passed (a later one starting at or before it entered the decoder first) are skipped, as
    /// those before a seek's segment start are; nil: not stepping.
    func aim(at target: ClockTime?) { state.withLock { $0.stepTarget = target } }

    private func decide(_ item: PadItem) -> PadDecision {
        switch item {
        case .caps(let caps):
            let rule = caps.parsedVideoFields.flatMap {
                Rule.of(mediaType: $0.mediaType, streamFormat: $0.streamFormat, codecData: $0.codecData)
            }
            state.withLock { $0.rule = rule }
        case .segment(let start, _, let rate):
            state.withLock {
                $0.segmentStart = start
                $0.forward = rate > 0
            }
        case .buffer(let buffer):
            let (rule, start, stepTarget, forward) = state.withLock {
                ($0.rule, $0.segmentStart, $0.stepTarget, $0.forward)
            }
            guard let rule, forward else { return .pass }
            let beforeSegment =
                start > .zero
                && H264AccessUnit.endsBeforeSegment(
                    time: buffer.presentationTimestamp, duration: buffer.duration, segmentStart: start)
            // A step's target is no segment start: no decoder clips there, and a stated duration may be too short
            // (VFR), so a picture counts as passed only once a later one starting at or before the target has
            // entered the decoder, as `EarlyFrameDrop` judges the decoded frames.
            func passedInStep() -> Bool {
                guard let stepTarget, let pts = buffer.presentationTimestamp, let inputs else { return false }
                return inputs.steppedOver(pts: pts, target: stepTarget)
            }
            guard beforeSegment || passedInStep(),
                buffer.withBytes({ rule.isNonReference($0) }) == true
            else { return .pass }
            state.withLock { $0.skipped += 1 }
            return .drop
        case .endOfStream, .gap, .otherEvent:
            break
        }
        return .pass
    }
}
