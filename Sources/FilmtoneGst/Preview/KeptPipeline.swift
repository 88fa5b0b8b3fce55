import FilmtoneCore
import Foundation
import GstKit
import Synchronization

/// One source's opened, prerolled `FrameRecipe` pipeline (without `ftlut`: the warm path applies looks itself),
/// kept by the engine's warm state (`WarmPreviews`) so that a new time is a seek or a forward step
/// (`OpenedFrameSource`), not a new pipeline. One request at a time uses it (`checkOut`/`checkIn`); a request
/// that finds it in use makes a one-shot grab of its own. Released (`release`) when evicted, idle or stale: stopped
/// (state NULL) at once, or when the request using it checks it in.
// @unchecked Sendable: `source` is touched only by whoever moved `use` from idle to busy (`checkOut`) or to
// stopped (`release`, `checkIn`), one at a time, under `use`'s lock; everything else is immutable.
final class KeptPipeline: @unchecked Sendable {
    private struct Use {
        var busy = false
        var retired = false
        var stopped = false
    }

    private let use = Mutex(Use())
    private var source: OpenedFrameSource?
    private let formats: PictureFormatWatch
    /// What it holds, as counted in the warm state's budget (`estimatedBytes`).
    let bytes: Int

    private init(_ source: OpenedFrameSource, formats: PictureFormatWatch, bytes: Int) {
        self.source = source
        self.formats = formats
        self.bytes = bytes
    }

    deinit { source?.stop() }

    /// Opens `request`'s source and answers its time, as the one-shot grab does (same deadline, errors, frame).
    /// The pipeline is returned to keep, or nil for a still image (it is stopped: a still has nothing to seek).
    static func open(_ request: FrameRequest, isCancelled: () -> Bool) throws -> (KeptPipeline?, GrabbedFrame) {
        let formats = PictureFormatWatch()
        let deadline = Deadline(after: request.timeoutMilliseconds)
        return try formats.refining {
            let source = try OpenedFrameSource(
                request, watching: formats, deadline: deadline, keeps: true, isCancelled: isCancelled)
            var kept = false
            defer { if !kept { source.stop() } }
            let frame = try source.frame(
                at: request.time, tolerance: request.tolerance, deadline: deadline, isCancelled: isCancelled)
            guard !source.isStill else { return (nil, frame) }
            kept = true
            return (
                KeptPipeline(source, formats: formats, bytes: estimatedBytes(source, output: frame.image)), frame
            )
        }
    }

    /// The honest size of a kept pipeline for the budget, from the decoded size (w×h) and the output size
    /// (ow×oh), none of which GStreamer reports:
    /// - the decoder's pictures at 4:2:0 (w·h·3/2 each): 24 for a long-GOP source (H.264's largest reference list,
    ///   16, and libav's frame threads' pictures in flight), 4 for an all-intra one (a mezzanine: no references);
    /// - the RGB conversion before scaling (w·h·3): 4 buffers (the converters' pools and the one being scaled);
    /// - the scaled output (ow·oh·3): 4 (the appsink's queue, the frame handed out, the one pulled past it, the
    ///   first frame kept for time 0);
    /// - 16 MiB for the rest: demuxer index, queues of compressed data, the decoder's own tables, thread stacks.
    /// A 1080p H.264 source previewed at 1280×720: 71 + 24 + 11 + 16 ≈ 122 MiB. Measured (docs/PERFORMANCE.md):
    /// an engine holding it and three frames is 130 MiB above an idle one (the plugins' code included) and 49 MiB
    /// above one that let the same pipeline go (glibc keeps the freed heap for the next one): the estimate is on
    /// the high side, so the budget is kept. Its 1280×720 mezzanine ≈ 42 MiB (38 measured over idle); a 320×240
    /// clip ≈ 20 MiB.
    static func estimatedBytes(_ source: OpenedFrameSource, output: RGBImage) -> Int {
        let decoded = max(1, source.decodedSize.width) * max(1, source.decodedSize.height)
        let pictures = source.request.allIntra ? 4 : 24
        return pictures * decoded * 3 / 2 + 4 * decoded * 3 + 4 * output.width * output.height * 3 + (16 << 20)
    }

    /// Takes it for one request; false when another request has it, or it was released.
    func checkOut() -> Bool {
        use.withLock { use in
            guard !use.busy, !use.retired, !use.stopped else { return false }
            use.busy = true
            return true
        }
    }

    /// The frame `request` asks for (its time and tolerance; the rest is the key's), within its own deadline.
    /// Only between `checkOut` and `checkIn`.
    func frame(_ request: FrameRequest, isCancelled: () -> Bool) throws -> GrabbedFrame {
        guard let source else { throw FilmtoneError(.internalError, "a kept pipeline used after it was stopped") }
        let deadline = Deadline(after: request.timeoutMilliseconds)
        return try formats.refining {
            try source.frame(
                at: request.time, tolerance: request.tolerance, deadline: deadline, isCancelled: isCancelled)
        }
    }

    /// False once a `frame` call failed part way (a seek or step broke off): it must be dropped. A request refused
    /// before the pipeline was touched (a time past the end) leaves it usable. Only while checked out.
    var isUsable: Bool { source?.isUsable ?? false }

    /// Gives it back after `frame`; stopped now if it was released meanwhile.
    func checkIn() {
        let stop = use.withLock { use in
            use.busy = false
            guard use.retired, !use.stopped else { return false }
            use.stopped = true
            return true
        }
        if stop { stopSource() }
    }

    /// Lets it go (evicted, idle, stale, failed): stopped now, or by the request using it when it checks it in.
    func release() {
        let stop = use.withLock { use in
            use.retired = true
            guard !use.busy, !use.stopped else { return false }
            use.stopped = true
            return true
        }
        if stop { stopSource() }
    }

    /// Whether it was stopped (state NULL, unreferenced).
    var isStopped: Bool { use.withLock { $0.stopped } }

    private func stopSource() {
        source?.stop()
        source = nil
    }
}
