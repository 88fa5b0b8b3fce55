import FilmtoneCore
import FilmtoneLooks
import Foundation
import GstKit
import Synchronization

/// The local-stall rule shared by every driver that prerolls (frames, probes, mezzanines).
///
/// decodebin2 (1.22) filters a newly plugged element's errors while it brings it to PAUSED; a demuxer whose
/// streaming thread fails inside that window (qtdemux on a file without a moov) has its error swallowed, and the
/// pipeline then waits with no data and no error. A local file either shows its first caps (or streams) quickly
/// or never, so one that has shown none within `milliseconds` is reported as unreadable (`DECODE_FAILED`) instead
/// of waiting out the job's deadline. Remote sources are not judged this way: their data may just be slow.
struct LocalStallWatch {
    var milliseconds: Int64
    /// The error's message, e.g. "no video could be read from the file within 5000 ms: …".
    var failure: String
    /// Whether the pipeline has shown what it should by now; polled from the waiting thread.
    var started: @Sendable () -> Bool

    /// The watch for a pipeline that should show video caps: frames and mezzanines.
    static func video(milliseconds: Int64, started: @escaping @Sendable () -> Bool) -> LocalStallWatch {
        LocalStallWatch(
            milliseconds: milliseconds,
            failure: "no video could be read from the file within "
                + "\(milliseconds) ms: it is corrupt, truncated or has no video stream", started: started)
    }
}

/// What a driver waits for.
enum PipelineGoal {
    /// ASYNC_DONE: a preroll or a flushing seek has completed (EOS counts too: nothing more will come).
    case prerolled
    /// EOS: the whole stream has been processed.
    case endOfStream
}

extension Pipeline {
    /// `pause()`, and when the state change fails at once: the error the pipeline posted, classified, or
    /// DECODE_FAILED when it posted none. Shared by every driver that prerolls.
    func startPrerolling(remote: Bool) throws {
        guard !pause() else { return }
        if case .error(let cause) = waitForAsyncDone(deadline: Deadline(after: 200), isCancelled: { false }) {
            throw ErrorClassifier.classify(cause, remote: remote)
        }
        throw FilmtoneError(.decodeFailed, "the pipeline could not start (state change failed)")
    }

    /// Pops what the bus holds now (ASYNC_DONE, EOS, errors) so that the next wait sees only what comes after: a
    /// kept pipeline before it seeks again. An error among them is thrown, classified.
    func drainBus(remote: Bool) throws {
        while let message = bus.pop(timeout: .zero, kinds: [.error, .endOfStream, .asyncDone]) {
            if case .error(let cause) = message { throw ErrorClassifier.classify(cause, remote: remote) }
        }
    }

    /// Waits for `goal` until `deadline`, polling `isCancelled` (every bus wait is sliced), with the local-stall
    /// rule for a local source when `stall` is given. Errors are classified (`ErrorClassifier`), cancellation is
    /// `CANCELLED`, the deadline is `timedOut` (REMOTE_FETCH_FAILED for a remote source, else DECODE_FAILED).
    /// The one preroll-with-deadline loop of the features.
    func wait(
        for goal: PipelineGoal, deadline: Deadline, remote: Bool, stall: LocalStallWatch? = nil,
        timedOut: @autoclosure () -> String, isCancelled: () -> Bool
    ) throws {
        let stallDeadline = remote ? nil : stall.map { Deadline(after: $0.milliseconds) }
        while true {
            // While the stall rule can still fire, wait in short slices so it is checked in time.
            var slice = deadline
            if let stallDeadline, let stall, !stall.started(), stallDeadline.end < deadline.end {
                let next = Deadline(after: 50)
                if next.end < slice.end { slice = next }
            }
            let outcome =
                goal == .prerolled
                ? waitForAsyncDone(deadline: slice, isCancelled: isCancelled)
                : waitForEndOfStream(deadline: slice, isCancelled: isCancelled)
            switch outcome {
            case .done, .endOfStream:
                return
            case .error(let cause):
                throw ErrorClassifier.classify(cause, remote: remote)
            case .cancelled:
                throw FilmtoneError(.cancelled, "cancelled")
            case .timedOut:
                if deadline.hasPassed { throw FilmtoneError(remote ? .remoteFetchFailed : .decodeFailed, timedOut()) }
                if let stallDeadline, let stall, stallDeadline.hasPassed, stallDeadline.end < deadline.end,
                    !stall.started()
                {
                    throw FilmtoneError(.decodeFailed, stall.failure)
                }
            }
        }
    }

    /// Fixes the scaled size before the scaler negotiates: each time upright caps leave `flip` (a JPEG's
    /// orientation tag can renegotiate them once), `size` gets the output size for them, and the capsfilter
    /// named `filter` is set to it. Scaling then happens in the pipeline, from the display size. `size` runs on
    /// the streaming thread. Used by the frame grabber and the mezzanine builder.
    ///
    /// `toneMap`: the pipeline has the recipes' tone-map slot (an `rgb` capsfilter before the scaler, an `ftlut`
    /// named `tonemap` after `filter`), and PQ and HLG sources are tone-mapped when true (`--tone-map`). Before the
    /// caps go on, the slot is set for them: for such a source both filters say `FrameRecipe.deepFormat`, so the
    /// converter after `flip` negotiates 16-bit RGB, and the element gets its `tone-map` (its table is built on the
    /// first frame it sees: a property set while PAUSED makes `ftlut` load again); otherwise RGB and none.
    func fitScaledSize(
        flip: String = "flip", filter: String = "size", toneMap: Bool? = nil,
        _ size: @escaping @Sendable (VideoCapsInfo) -> (width: Int, height: Int)
    ) throws {
        let sizeFilter = try element(named: filter)
        let slot = try toneMap.map { (try element(named: "rgb"), try element(named: "tonemap"), $0) }
        try element(named: flip).staticPad("src")?.onCapsEvent { caps in
            guard let info = caps.video, info.width > 0, info.height > 0 else { return }
            var pixelFormat = "RGB"
            if let (rgbFilter, toneMapFilter, enabled) = slot {
                let transfer = FrameRecipe.toneMap(colorimetry: info.colorimetry, enabled: enabled)
                if transfer != nil { pixelFormat = FrameRecipe.deepFormat }
                if let caps = try? Caps(parsing: "video/x-raw,format=\(pixelFormat)") {
                    try? rgbFilter.setProperty("caps", .caps(caps))
                }
                if transfer == .pq { FrameRecipe.setToneMapPeak(toneMapFilter, for: info) }
                try? toneMapFilter.setProperty("tone-map", .string(transfer?.rawValue ?? ""))
            }
            let output = size(info)
            let text = FrameRecipe.outputCaps(width: output.width, height: output.height, format: pixelFormat)
            if let target = try? Caps(parsing: text) {
                try? sizeFilter.setProperty("caps", .caps(target))
            }
        }
    }

    /// Scales decoded pictures much larger than the output down before anything else touches them (`presize`, after
    /// `prescale`), in their decoded format, to twice the output's side: 4:2:0 at 8 or 10 bits is a quarter to a half
    /// of the bytes of the RGB (or 16-bit RGB, for a tone map) the converter makes, and the turn of a rotated picture
    /// is then a small copy; the RGB picture is scaled the rest of the way, so the chroma keeps the output's
    /// resolution (scaling 4:2:0 to the output size itself smears colour edges). A 4K 10-bit picture to 320 px:
    /// 108 ms converted to 16-bit RGB then scaled, about half that scaled first, and 65 MiB less; turning it first
    /// cost 50 ms more (docs/PERFORMANCE.md, "4K HEVC"). For an output within `box`×`box`
    /// (`FrameRecipe.prescaledSize`: only when that at least halves the picture; `FTGST_NO_PRESCALE=1`: never, the
    /// plain path the tests compare with); `box` 0: never. The returned object tells the scaled size's callback what
    /// `flip` would have given without it (`decodedUpright`), so the output size is computed from the decoded
    /// picture exactly as before.
    func fitPrescale(box: Int, filter: String = "presize", scaler: String = "prescale") throws -> Prescale {
        let presize = try element(named: filter)
        let prescale = Prescale()
        try element(named: scaler).staticPad("sink")?.onCapsEvent { caps in
            guard let info = caps.video, info.width > 0, info.height > 0 else { return }
            let scaled = FrameRecipe.prescaledSize(
                width: info.width, height: info.height, pixelAspect: info.pixelAspect, box: box)
            prescale.record(decoded: info, scaled: scaled)
            // Left alone, the size is still named: a scaler free to choose would follow `flip`'s wishes once a
            // rotation tag turns it, and hand it the picture already turned (squashed, then turned again).
            let stated = info.pixelAspect.numerator > 0 && info.pixelAspect.denominator > 0
            let (width, height, aspect) =
                scaled.map { ($0.width, $0.height, Fraction(1, 1)) }
                ?? (info.width, info.height, stated ? info.pixelAspect : Fraction(1, 1))
            let text = "video/x-raw,width=\(width),height=\(height),pixel-aspect-ratio=\(aspect)"
            if let target = try? Caps(parsing: text) {
                try? presize.setProperty("caps", .caps(target))
            }
        }
        return prescale
    }

    /// Names the colorimetry GStreamer assumes for the decoded caps before `flip` turns them
    /// (`Pad.pinDefaultColorimetry`): an untagged 640×360 stream is BT.601 at 640×360, but its 90° turn, 360×640,
    /// would be taken for BT.709 by the converter to RGB, and a rotated clip's colours changed (issue 28).
    /// The frame recipe pins it before `prescale`: a 1080p picture scaled to 320×180 would otherwise be taken for
    /// BT.601 too.
    func pinColorimetry(before flip: String = "flip") throws {
        try element(named: flip).staticPad("sink")?.pinDefaultColorimetry()
    }

    /// Keeps an end of stream that reaches `filter`'s src pad before any frame from everything downstream (the
    /// encoder and the muxer) and posts it on the bus instead, so the driver's wait for EOS still ends and it
    /// reports that no frame was made. A muxer must never finish a file for a stream that never had caps: qtmux
    /// 1.22 then writes its moov while the pipeline is being stopped on the source's error and copies NULL caps
    /// (GStreamer-CRITICAL on stderr, a trap under `G_DEBUG=fatal-criticals`). Used by the mezzanine builder and
    /// the export driver.
    func endWithoutFrames(after filter: String = "size") throws {
        guard let pad = try element(named: filter).staticPad("src") else {
            throw FilmtoneError(.internalError, "the \(filter) filter has no src pad")
        }
        let sawFrame = AtomicFlag()
        // Weak: the probe lives as long as the pad, which the pipeline owns; a strong capture would keep this
        // object, and so the whole GStreamer pipeline, alive for ever (every export and mezzanine build leaked).
        pad.onData { [weak self] item in
            switch item {
            case .buffer:
                sawFrame.set()
            case .endOfStream where !sawFrame.isSet():
                self?.postEndOfStream()
                return .drop
            default:
                break
            }
            return .pass
        }
    }
}

/// What `Pipeline.fitPrescale` did to the decoded pictures: their caps as decoded, and the size they were scaled to
/// (nil: left alone). Written on the streaming thread by the caps event before `prescale`, read by the one after
/// `flip`.
final class Prescale: Sendable {
    private let sizes = Mutex<(decoded: VideoCapsInfo, scaled: (width: Int, height: Int))?>(nil)

    func record(decoded: VideoCapsInfo, scaled: (width: Int, height: Int)?) {
        sizes.withLock { $0 = scaled.map { (decoded, $0) } }
    }

    /// `upright` (caps after `flip`) with the size and pixel aspect `flip` would have given the picture as decoded:
    /// turned a quarter (its width and height swapped from the scaled size's), the decoded ones swapped and the
    /// aspect inverted. Unchanged when nothing was scaled.
    func decodedUpright(_ upright: VideoCapsInfo) -> VideoCapsInfo {
        guard let (decoded, scaled) = sizes.withLock({ $0 }) else { return upright }
        var info = upright
        let turned = scaled.width != scaled.height && upright.width == scaled.height && upright.height == scaled.width
        info.width = turned ? decoded.height : decoded.width
        info.height = turned ? decoded.width : decoded.height
        let aspect = decoded.pixelAspect
        info.pixelAspect = turned ? Fraction(aspect.denominator, aspect.numerator) : aspect
        return info
    }
}
