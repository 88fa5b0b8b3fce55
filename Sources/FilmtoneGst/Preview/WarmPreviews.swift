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
/// - **Looks**: each look as two `LUTKernel`s, keyed by its LUT files' identities and the interpolation: `base`
///   (the input LUT alone: the look at intensity 0) and `full` (the look at intensity 1). The intensity never
///   rebuilds a table: the two lookups are mixed per channel at apply time,
///   `round(base·(1 − i) + full·i)`, the look's own blend (`Look.apply`) over the two rounded results, so at most
///   1 code value from the table `ftlut` builds with the intensity baked in. At intensity 0 or 1 one kernel alone
///   answers (exactly `ftlut`'s).
///
/// Every request `stat`s the source and the LUT files again: a file changed on disk (new size, mtime or inode) is
/// a new key, so the next preview decodes or parses it anew; the old entry ages out. Entries are evicted least
/// recently used first once their bytes (frames' pixels, kernels' tables: 64 MiB for a look with a 3D table, two
/// per look) pass `budgetBytes`; the entry a request is using stays alive until it is done even when evicted at
/// once (a budget of 0 caches nothing and still answers rightly). Everything is let go after `idleRelease`
/// without a request.
///
/// Not kept: a prerolled pipeline (a new time in the same GOP decodes from the keyframe again), and a mezzanine
/// that becomes ready after a frame was cached from the source (the cached frame answers until evicted).
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
        var location: String
        var size: Int64?
        var modifiedNanoseconds: Int64?
        var inode: UInt64?
        var headers: [String]
        var time: UInt64
        var tolerance: UInt64
        var maxWidth: Int
        var maxHeight: Int
        var mezzanines: String?
    }

    private enum Value: Sendable {
        case frame(GrabbedFrame, usedMezzanine: Bool)
        case look(BlendKernel)
    }

    private enum Key: Hashable, Sendable {
        case frame(FrameKey)
        case look(LookKey)
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

    /// Lets everything go.
    func removeAll() {
        state.withLock { state in
            state.entries = [:]
            state.bytes = 0
        }
    }

    /// What a warm preview reused: its frame, and its look's kernels (nil: no LUT in the request).
    struct Reuse: Sendable {
        var frame: Bool
        var look: Bool?

        /// The answer's `warm` object: `{"frame": bool, "look": bool or null}`.
        var json: JSONValue { .object([("frame", .bool(frame)), ("look", look.map { .bool($0) } ?? .null)]) }
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
        var look: (BlendKernel, Double)? = nil
        if let settings = request.frame.look, !settings.isEmpty {
            let (kernels, reused) = try self.look(settings)
            look = (kernels, settings.intensity)
            reuse.look = reused
        }
        try request.frame.source.checkExists()
        let key = try frameKey(request)
        var frame: GrabbedFrame
        var usedMezzanine: Bool
        if case .frame(let cached, let mezzanine)? = lookUp(.frame(key)) {
            (frame, usedMezzanine) = (cached, mezzanine)
            reuse.frame = true
        } else {
            var plain = request
            plain.frame.look = nil
            (frame, usedMezzanine) = try Previews.grab(plain, isCancelled: isCancelled)
            insert(.frame(key), .frame(frame, usedMezzanine: usedMezzanine), bytes: frame.image.pixels.count + 256)
        }
        if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }
        if let (kernel, intensity) = look {
            let (width, height) = (frame.image.width, frame.image.height)
            frame.image.pixels.withUnsafeMutableBufferPointer {
                kernel.apply(to: $0.baseAddress!, width: width, height: height, intensity: intensity)
            }
        }
        let result = try Previews.write(
            frame, request, usedMezzanine: usedMezzanine, started: started, isCancelled: isCancelled)
        return (result, reuse)
    }

    // MARK: - Keys

    private func frameKey(_ request: PreviewRequest) throws -> FrameKey {
        let identity = try MezzanineStore.identity(of: request.frame.source)
        return FrameKey(
            location: identity.location, size: identity.size, modifiedNanoseconds: identity.modifiedNanoseconds,
            inode: identity.inode, headers: request.frame.headers.flatMap { [$0.name, $0.value] },
            time: request.frame.time.nanoseconds, tolerance: request.frame.tolerance.nanoseconds,
            maxWidth: request.frame.maxWidth, maxHeight: request.frame.maxHeight,
            mezzanines: request.mezzanines?.directory.path)
    }

    /// A LUT file's identity now; nil when it cannot be `stat`ed (the parse then reports why).
    private static func fileKey(_ path: String) -> FileKey? {
        guard let facts = MezzanineStore.fileFacts(path) else { return nil }
        return FileKey(path: path, size: facts.size, modifiedNanoseconds: facts.modifiedNanoseconds, inode: facts.inode)
    }

    /// The look's kernels, and whether they were kept from an earlier request.
    private func look(_ settings: LookSettings) throws -> (BlendKernel, Bool) {
        let input = settings.inputLUT.map(Self.fileKey)
        let creative = settings.creativeLUT.map(Self.fileKey)
        // A file that cannot be stat'ed is parsed for its error (FILE_NOT_FOUND), never cached.
        guard input.map({ $0 != nil }) ?? true, creative.map({ $0 != nil }) ?? true else {
            for path in [settings.inputLUT, settings.creativeLUT].compactMap({ $0 }) {
                _ = try CubeLUT.load(path: path)
            }
            throw FilmtoneError(.fileNotFound, "a LUT file cannot be read")
        }
        let key = Key.look(
            LookKey(input: input ?? nil, creative: creative ?? nil, interpolation: settings.interpolation))
        if case .look(let cached)? = lookUp(key) { return (cached, true) }
        let built = try BlendKernel(
            input: try settings.inputLUT.map { try CubeLUT.load(path: $0) },
            creative: try settings.creativeLUT.map { try CubeLUT.load(path: $0) },
            interpolation: settings.interpolation)
        insert(key, .look(built), bytes: built.byteCount)
        return (built, false)
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
        state.withLock { state in
            state.clock += 1
            if let old = state.entries[key] { state.bytes -= old.bytes }
            state.entries[key] = Entry(value: value, bytes: bytes, lastUse: state.clock)
            state.bytes += bytes
            while state.bytes > budgetBytes, let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })
            {
                state.bytes -= oldest.value.bytes
                state.entries[oldest.key] = nil
            }
        }
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
            self.state.withLock { state in
                guard state.requests == generation else { return }
                state.entries = [:]
                state.bytes = 0
            }
        }
    }
}
