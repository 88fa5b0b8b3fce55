import FilmtoneCore
import FilmtoneLooks
import Foundation
import GstKit
import ImageCodecs
import Synchronization

/// The engine's warm state for `renderPreviewFrame`, so previews follow the hand (issue 12, item 3): the frames it
/// decoded and the looks it built are kept between calls, under one memory budget, and a request that differs
/// from an earlier one only in its look settings decodes nothing.
///
/// - **Frames**: the upright scaled RGB frame before any look — the one `ftlut` is given in the one-shot pipeline
///   (`FrameRecipe`: the look runs last, after scaling, on 8-bit RGB) — keyed by the source's identity (a local
///   file's path, size, mtime in ns and inode; a remote URL with its headers), time, tolerance, box and where
///   mezzanines are read from (none with `mezzanine: off`).
/// - **Looks**: each look as a `BlendKernel`, keyed by its LUT files' identities and the interpolation: its `base`
///   side (the input LUT alone: the look at intensity 0) and `full` side (the look at intensity 1), unclamped. The
///   intensity never rebuilds a table: the two are mixed per pixel at apply time, `round(base·(1 − i) + full·i)`,
///   at most 1 code value from the table `ftlut` builds with the intensity baked in.
/// - **Lookups**: per cached frame and look, the frame's entries read from the look's 96 MiB tables, in pixel
///   order (`GatheredLookups`, 6 bytes a pixel a side with a table: 5.3 MiB for a 1280×720 frame and a creative
///   LUT). Reading a table is a cache miss a pixel; once gathered, a new intensity on the same frame is a blend
///   over memory read in order, byte for byte what the tables give.
///
/// - **Pipelines**: per local source (its identity as above, headers, box; a mezzanine file is a source of its own,
///   with the output size it gives), the opened, prerolled pipeline (`KeptPipeline`) with its timeline origin, so a
///   frame not cached is a seek on it, or a forward step when the time is a little after the frame it last handed
///   out (`FrameRecipe.stepsForward`): the same frame as the one-shot grab's. One request at a time uses it; a
///   concurrent one for the same source makes a one-shot grab. Counted in the same budget with an estimate
///   (`KeptPipeline.estimatedBytes`: ≈ 122 MiB for 1080p H.264), evicted least recently used, let go when idle, and
///   stopped (state NULL) and unreferenced whenever it goes; a source changed on disk gets a new one and the old
///   one is stopped; an error on one (a bus error, EOS with no frame, a time-out, a cancel) drops it, so the
///   next request starts afresh. Remote sources and still images are not kept (a still has nothing to seek; a
///   server's connection is not held open between calls).
///
/// Every request `stat`s the source and the LUT files again: a file changed on disk (new size, mtime or inode) is
/// a new key, so the next preview decodes or parses it anew; the old entry ages out. Entries are evicted least
/// recently used first once their bytes (frames' pixels, kernels' tables: 64 MiB for a look with a 3D table, two
/// per look) pass `budgetBytes`; the entry a request is using stays alive until it is done even when evicted at
/// once (a budget of 0 caches nothing and still answers rightly). Everything is let go after `idleRelease`
/// without a request.
///
/// Not kept: a mezzanine that becomes ready after a frame was cached from the source (the cached frame answers
/// until evicted).
final class WarmPreviews: Sendable {
    struct FileKey: Hashable, Sendable {
        var path: String
        var size: Int64
        var modifiedNanoseconds: Int64
        var inode: UInt64
    }

    struct LookKey: Hashable, Sendable {
        var input: FileKey?
        var creative: FileKey?
        var interpolation: Interpolation
    }

    struct FrameKey: Hashable, Sendable {
        /// The source's identity now (`MezzanineStore.identity`: a changed file is a new key).
        var source: SourceIdentity
        var headers: [String]
        var time: UInt64
        var tolerance: UInt64
        var maxWidth: Int
        var maxHeight: Int
        var mezzanines: String?
        /// `--tone-map`: a PQ or HLG source's frame is another picture with it off.
        var toneMap: Bool
    }

    /// A kept pipeline's key: the frame key without time and tolerance, and the output size a mezzanine's read
    /// is fixed to (nil: computed from the box).
    struct PipelineKey: Hashable, Sendable {
        var source: SourceIdentity
        var headers: [String]
        var maxWidth: Int
        var maxHeight: Int
        var outputWidth: Int?
        var outputHeight: Int?
        /// Whether the pipeline tone-maps PQ and HLG sources (its slot is set once, from the first caps).
        var toneMap: Bool

        /// The same source, box, output and tone map, whatever its identity on disk.
        func sameSlot(as other: PipelineKey) -> Bool {
            source.location == other.source.location && headers == other.headers && maxWidth == other.maxWidth
                && maxHeight == other.maxHeight && outputWidth == other.outputWidth
                && outputHeight == other.outputHeight && toneMap == other.toneMap
        }
    }

    private enum Value: Sendable {
        case frame(GrabbedFrame, usedMezzanine: Bool)
        case look(BlendKernel)
        case lookups(GatheredLookups)
        case pipeline(KeptPipeline)
    }

    private enum Key: Hashable, Sendable {
        case frame(FrameKey)
        case look(LookKey)
        /// A cached frame's lookups through a look's tables (`BlendKernel.gather`).
        case lookups(FrameKey, LookKey)
        case pipeline(PipelineKey)
    }

    private struct Entry: Sendable {
        var value: Value
        var bytes: Int
        var lastUse: UInt64
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var bytes = 0
        var clock: UInt64 = 0
        var requests: UInt64 = 0
    }

    private let state = Mutex(State())
    let budgetBytes: Int
    let idleRelease: Duration

    init(budgetBytes: Int, idleRelease: Duration = .seconds(60)) {
        self.budgetBytes = budgetBytes
        self.idleRelease = idleRelease
    }

    /// The bytes held now, and how many entries.
    var held: (bytes: Int, entries: Int) { state.withLock { ($0.bytes, $0.entries.count) } }

    /// Lets everything go; kept pipelines are stopped (one in use, when its request is done).
    func removeAll() {
        let removed = state.withLock { state in
            defer {
                state.entries = [:]
                state.bytes = 0
            }
            return Array(state.entries.values)
        }
        Self.release(removed.map(\.value))
    }

    /// What a warm preview reused: its frame, its look's kernels (nil: no LUT in the request), whether a kept
    /// pipeline decoded its frame, and whether the frame's lookups through the look were kept (only the blend at
    /// the new intensity ran).
    struct Reuse: Sendable {
        var frame: Bool
        var look: Bool?
        var pipeline = false
        var lookups = false

        /// The answer's `warm` object: `{"frame": bool, "look": bool or null, "pipeline": bool, "lookups": bool}`.
        var json: JSONValue {
            .object([
                ("frame", .bool(frame)), ("look", look.map { .bool($0) } ?? .null), ("pipeline", .bool(pipeline)),
                ("lookups", .bool(lookups)),
            ])
        }
    }

    /// `Previews.render` with the warm state: the same checks, errors and result, and what was reused.
    func render(_ options: PreviewOptions) async throws -> (PreviewResult, Reuse) {
        let request = try PreviewRequest(options, parseLUTs: false)
        defer { scheduleIdleRelease() }
        return try await runDetached { [self] isCancelled in try run(request, isCancelled: isCancelled) }
    }

    private func run(_ request: PreviewRequest, isCancelled: @escaping () -> Bool) throws -> (PreviewResult, Reuse) {
        let started = ContinuousClock.now
        var reuse = Reuse(frame: false, look: nil)
        // The LUTs first, as the one-shot path checks them before decoding (FILE_NOT_FOUND, LUT_INVALID).
        var look: (kernel: BlendKernel, key: LookKey, intensity: Double)? = nil
        if let settings = request.frame.look, !settings.isEmpty {
            let (kernel, key, reused) = try self.look(settings)
            look = (kernel, key, settings.intensity)
            reuse.look = reused
        }
        try request.frame.source.checkExists()
        let key = try frameKey(request)
        var frame: GrabbedFrame
        var usedMezzanine: Bool
        if case .frame(let cached, let mezzanine)? = lookUp(.frame(key)) {
            (frame, usedMezzanine) = (cached, mezzanine)
            reuse.frame = true
        } else if let (scaled, mezzanine) = scaledFromLarger(key) {
            // The same frame, cached for a larger box (the studio's preview, then its look tiles): scaled down
            // rather than decoded again.
            (frame, usedMezzanine) = (scaled, mezzanine)
            reuse.frame = true
            insert(.frame(key), .frame(frame, usedMezzanine: usedMezzanine), bytes: frame.image.pixels.count + 256)
        } else {
            var plain = request
            plain.frame.look = nil
            var reusedPipeline = false
            (frame, usedMezzanine) = try Previews.grab(plain, isCancelled: isCancelled) { frameRequest in
                let (frame, reused) = try self.grabKept(frameRequest, isCancelled: isCancelled)
                reusedPipeline = reused
                return frame
            }
            reuse.pipeline = reusedPipeline
            insert(.frame(key), .frame(frame, usedMezzanine: usedMezzanine), bytes: frame.image.pixels.count + 256)
        }
        if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }
        if let look {
            let (width, height) = (frame.image.width, frame.image.height)
            let lookupsKey = Key.lookups(key, look.key)
            let lookups: GatheredLookups
            if case .lookups(let cached)? = lookUp(lookupsKey) {
                lookups = cached
                reuse.lookups = true
            } else {
                lookups = frame.image.pixels.withUnsafeBufferPointer {
                    look.kernel.gather(from: $0.baseAddress!, width: width, height: height)
                }
                insert(lookupsKey, .lookups(lookups), bytes: lookups.byteCount)
            }
            frame.image.pixels.withUnsafeMutableBufferPointer {
                look.kernel.apply(lookups, to: $0.baseAddress!, width: width, height: height, intensity: look.intensity)
            }
        }
        let result = try Previews.write(
            frame, request, usedMezzanine: usedMezzanine, started: started, isCancelled: isCancelled)
        return (result, reuse)
    }

    // MARK: - Kept pipelines

    /// The frame `request` asks for, from its source's kept pipeline when there is one and no other request is
    /// using it (true), else from a new one, kept for the next request (false); a one-shot grab for a remote
    /// source or a pipeline in use. An error on a kept pipeline drops it.
    private func grabKept(_ request: FrameRequest, isCancelled: @escaping () -> Bool) throws -> (GrabbedFrame, Bool) {
        guard !request.source.isRemote, request.look == nil, let key = try? pipelineKey(request) else {
            return (try FrameGrabber(request: request, isCancelled: isCancelled).grab(), false)
        }
        if case .pipeline(let kept)? = lookUp(.pipeline(key)) {
            guard kept.checkOut() else {
                return (try FrameGrabber(request: request, isCancelled: isCancelled).grab(), false)
            }
            defer { kept.checkIn() }
            do {
                return (try kept.frame(request, isCancelled: isCancelled), true)
            } catch is OpenedFrameSource.CannotGoBack {
                // A source that cannot seek, read past the time asked: a new pipeline, kept in its place, reads it
                // from the start (below).
                drop(.pipeline(key), kept)
            } catch {
                // Its state is unknown now (a seek half done, an error posted): the next request starts afresh.
                if !kept.isUsable { drop(.pipeline(key), kept) }
                throw error
            }
        }
        let (opened, frame) = try KeptPipeline.open(request, isCancelled: isCancelled)
        if let opened { keep(opened, as: key) }
        return (frame, false)
    }

    private func pipelineKey(_ request: FrameRequest) throws -> PipelineKey {
        PipelineKey(
            source: try MezzanineStore.identity(of: request.source),
            headers: request.headers.flatMap { [$0.name, $0.value] },
            maxWidth: request.maxWidth, maxHeight: request.maxHeight, outputWidth: request.outputSize?.width,
            outputHeight: request.outputSize?.height, toneMap: request.toneMap)
    }

    /// Keeps a new pipeline; one kept for the same source and box with another identity (the file changed on
    /// disk) is stopped.
    private func keep(_ pipeline: KeptPipeline, as key: PipelineKey) {
        let stale = state.withLock { state in
            state.entries.compactMap { entry -> Key? in
                guard case .pipeline(let other) = entry.key, other != key, other.sameSlot(as: key) else { return nil }
                return entry.key
            }.compactMap { remove($0, from: &state) }
        }
        Self.release(stale)
        insert(.pipeline(key), .pipeline(pipeline), bytes: pipeline.bytes)
    }

    /// Removes the kept pipeline at `key` if it is still `pipeline`, and releases it.
    private func drop(_ key: Key, _ pipeline: KeptPipeline) {
        state.withLock { state in
            if case .pipeline(let held)? = state.entries[key]?.value, held === pipeline {
                _ = remove(key, from: &state)
            }
        }
        pipeline.release()
    }

    private func remove(_ key: Key, from state: inout State) -> Value? {
        guard let entry = state.entries.removeValue(forKey: key) else { return nil }
        state.bytes -= entry.bytes
        return entry.value
    }

    /// Stops the kept pipelines among `values` (after the lock: a state change to NULL joins threads).
    private static func release(_ values: [Value]) {
        for case .pipeline(let pipeline) in values { pipeline.release() }
    }

    // MARK: - Keys

    /// The frame of `key` made from the same frame cached for a larger box: the largest such, scaled down to the
    /// size `key`'s box gives (`FrameRecipe.outputSize`) with the Lanczos resampler. Only when that size is certain:
    /// the cached picture is itself a rounded scaling of the source's display size, so the output size is computed
    /// at both ends of the aspect ratios it may stand for, and they must agree; nil otherwise (then it is decoded).
    private func scaledFromLarger(_ key: FrameKey) -> (GrabbedFrame, Bool)? {
        let candidates: [(GrabbedFrame, Bool)] = state.withLock { state in
            state.entries.compactMap { entry -> (GrabbedFrame, Bool)? in
                guard case .frame(let other) = entry.key, case .frame(let frame, let mezzanine) = entry.value.value
                else { return nil }
                var same = other
                same.maxWidth = key.maxWidth
                same.maxHeight = key.maxHeight
                return same == key && !frame.isStill ? (frame, mezzanine) : nil
            }
        }
        guard let (larger, mezzanine) = candidates.max(by: { $0.0.image.width < $1.0.image.width }) else { return nil }
        let (width, height) = (larger.image.width, larger.image.height)
        guard let size = Self.certainSize(width: width, height: height, box: (key.maxWidth, key.maxHeight)),
            size.width < width, size.height < height
        else { return nil }
        var frame = larger
        frame.image = ImageResampler.resized(larger.image, width: size.width, height: size.height)
        return (frame, mezzanine)
    }

    /// The output size for a picture shown `width`×`height` after rounding, fitted into `box`, when every display
    /// size that rounds to it gives the same; nil when they differ.
    static func certainSize(width: Int, height: Int, box: (Int, Int)) -> (width: Int, height: Int)? {
        guard width > 1, height > 1 else { return nil }
        let scale = 1_000_000.0
        let sizes = [
            (Double(width), Double(height)), (Double(width) - 0.5, Double(height) + 0.5),
            (Double(width) + 0.5, Double(height) - 0.5),
        ].map { w, h in
            FrameRecipe.outputSize(
                width: Int((scale * w / h).rounded()), height: Int(scale), pixelAspect: Fraction(1, 1),
                maxWidth: box.0, maxHeight: box.1)
        }
        return sizes.allSatisfy({ $0 == sizes[0] }) ? sizes[0] : nil
    }

    private func frameKey(_ request: PreviewRequest) throws -> FrameKey {
        FrameKey(
            source: try MezzanineStore.identity(of: request.frame.source),
            headers: request.frame.headers.flatMap { [$0.name, $0.value] },
            time: request.frame.time.nanoseconds, tolerance: request.frame.tolerance.nanoseconds,
            maxWidth: request.frame.maxWidth, maxHeight: request.frame.maxHeight,
            mezzanines: request.mezzanines?.directory.path, toneMap: request.frame.toneMap)
    }

    /// A LUT file's identity now; nil when it cannot be `stat`ed (the parse then reports why).
    private static func fileKey(_ path: String) -> FileKey? {
        guard let facts = MezzanineStore.fileFacts(path) else { return nil }
        return FileKey(path: path, size: facts.size, modifiedNanoseconds: facts.modifiedNanoseconds, inode: facts.inode)
    }

    /// The look's kernels, and whether they were kept from an earlier request.
    private func look(_ settings: LookSettings) throws -> (BlendKernel, LookKey, Bool) {
        let input = settings.inputLUT.map(Self.fileKey)
        let creative = settings.creativeLUT.map(Self.fileKey)
        // A file that cannot be stat'ed is parsed for its error (FILE_NOT_FOUND), never cached.
        guard input.map({ $0 != nil }) ?? true, creative.map({ $0 != nil }) ?? true else {
            for path in [settings.inputLUT, settings.creativeLUT].compactMap({ $0 }) {
                _ = try CubeLUT.load(path: path)
            }
            throw FilmtoneError(.fileNotFound, "a LUT file cannot be read")
        }
        let lookKey = LookKey(input: input ?? nil, creative: creative ?? nil, interpolation: settings.interpolation)
        let key = Key.look(lookKey)
        if case .look(let cached)? = lookUp(key) { return (cached, lookKey, true) }
        let built = try BlendKernel(
            input: try settings.inputLUT.map { try CubeLUT.load(path: $0) },
            creative: try settings.creativeLUT.map { try CubeLUT.load(path: $0) },
            interpolation: settings.interpolation)
        insert(key, .look(built), bytes: built.byteCount)
        return (built, lookKey, false)
    }

    // MARK: - The LRU

    private func lookUp(_ key: Key) -> Value? {
        state.withLock { state in
            guard var entry = state.entries[key] else { return nil }
            state.clock += 1
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.value
        }
    }

    private func insert(_ key: Key, _ value: Value, bytes: Int) {
        let evicted = state.withLock { state in
            var evicted: [Value] = []
            state.clock += 1
            if let old = state.entries[key] {
                state.bytes -= old.bytes
                evicted.append(old.value)
            }
            state.entries[key] = Entry(value: value, bytes: bytes, lastUse: state.clock)
            state.bytes += bytes
            while state.bytes > budgetBytes, let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })
            {
                state.bytes -= oldest.value.bytes
                state.entries[oldest.key] = nil
                evicted.append(oldest.value.value)
            }
            return evicted
        }
        Self.release(evicted)
    }

    /// After `idleRelease` without another request, everything is let go.
    private func scheduleIdleRelease() {
        let generation = state.withLock { state in
            state.requests += 1
            return state.requests
        }
        let idle = idleRelease
        Task.detached { [weak self] in
            try? await Task.sleep(for: idle)
            guard let self else { return }
            let idle = self.state.withLock { state in
                guard state.requests == generation else { return [Value]() }
                defer {
                    state.entries = [:]
                    state.bytes = 0
                }
                return state.entries.values.map(\.value)
            }
            Self.release(idle)
        }
    }
}
