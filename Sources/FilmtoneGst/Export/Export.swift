import FilmtoneCore
import FilmtoneElements
import Foundation
import Glibc
import GstKit
import Synchronization

/// The stages an export reports.
public enum ExportStage: String, Sendable {
    case probing
    /// Only with `mezzanine`: the source's intra-frame copy for fast previews, built (or found) first.
    case mezzanine
    /// Decode, look and encode.
    case rendering
    /// The file moved into place, the output probed, the sidecar and record written.
    case finalizing
}

/// One progress event. `progress` is the whole export's fraction (0…1), never decreasing, 1 at the end.
public struct ExportProgress: Sendable, Equatable {
    public var stage: ExportStage
    public var progress: Double
    public var currentFrame: Int64
    /// nil when the source does not say how many frames it has.
    public var totalFrames: Int64?
    /// Frames per second rendered so far.
    public var framesPerSecond: Double
    /// Estimated time left in milliseconds, when it can be estimated.
    public var remainingMilliseconds: Int64?

    public var json: JSONValue {
        .object([
            ("event", .string("progress")), ("stage", .string(stage.rawValue)),
            ("progress", .double((progress * 10000).rounded() / 10000)), ("currentFrame", .int(currentFrame)),
            ("totalFrames", totalFrames.map { .int($0) } ?? .null),
            ("fps", .double((framesPerSecond * 10).rounded() / 10)),
            ("remainingMs", remainingMilliseconds.map { .int($0) } ?? .null),
        ])
    }
}

/// A finished export.
public struct ExportResult: Sendable {
    public var path: String
    public var preset: String
    public var width: Int
    public var height: Int
    /// The output's duration as probed (nil for a photo).
    public var durationMilliseconds: Int64?
    public var frames: Int64
    public var sizeBytes: Int64
    public var sidecar: String
    public var benchmark: String
    public var elapsedMilliseconds: Int64

    public var json: JSONValue {
        .object([
            ("event", .string("result")), ("path", .string(path)), ("preset", .string(preset)),
            ("width", .int(Int64(width))), ("height", .int(Int64(height))),
            ("durationMs", durationMilliseconds.map { .int($0) } ?? .null), ("frames", .int(frames)),
            ("sizeBytes", .int(sizeBytes)), ("sidecar", .string(sidecar)), ("benchmark", .string(benchmark)),
            ("elapsedMs", .int(elapsedMilliseconds)),
        ])
    }
}

/// Runs an export: probe, decode → upright → scale → look → encode with a preset, into a temporary file beside
/// the output that is renamed over it only after a clean end of stream; then the sidecar and the benchmark
/// record. One export at a time per workspace (`EXPORT_BUSY`); exports in different workspaces run side by side.
/// Stops within a second on `cancelExport`, SIGINT/SIGTERM (with `ExportSignals.install()`), `ftgst cancel` for
/// its workspace, cancelling its task or its own timeout, leaving nothing at the output (`CANCELLED`, the reason
/// as the message); the last three stop this export only. `progress` is called from a worker thread.
public func runExport(_ options: ExportOptions, progress: (@Sendable (ExportProgress) -> Void)? = nil) async throws
    -> ExportResult
{
    try await runExport(options, token: ExportCancelToken(), progress: progress)
}

/// `runExport` with its stop point made by the caller: the engine (`MediaEngine`) keeps the token of the export it
/// runs, so its `cancelExport` stops that export, through the same token the signals and the deadline reach.
func runExport(
    _ options: ExportOptions, token: ExportCancelToken, progress: (@Sendable (ExportProgress) -> Void)?
) async throws -> ExportResult {
    let request = try ExportRequest(options)
    return try await runDetached { isCancelled in
        try ExportRun(request: request, emit: progress ?? { _ in }, isTaskCancelled: isCancelled, token: token).run()
    }
}

/// An export's events as an `AsyncThrowingStream`: progress events, then the result; cancelling the consuming
/// task cancels the export.
public enum ExportEvent: Sendable {
    case progress(ExportProgress)
    case finished(ExportResult)
}

public func exportEvents(_ options: ExportOptions) -> AsyncThrowingStream<ExportEvent, Error> {
    AsyncThrowingStream { continuation in
        let task = Task {
            do {
                let result = try await runExport(options) { continuation.yield(.progress($0)) }
                continuation.yield(.finished(result))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
    }
}

/// `ftgst export --dry-run`: probes the source and prints the `gst-launch-1.0` command (for `bash`) that does
/// the same export, writing OUT directly. Touches no output and takes no workspace lock.
public func exportCommandLine(
    _ options: ExportOptions,
    environment: [String: String] = ProcessInfo.processInfo.environment
) async throws -> String {
    let request = try ExportRequest(options, environment: environment)
    return try await runDetached { isCancelled in
        try request.source.checkExists()
        let report = try ExportRun.probe(request, isCancelled: isCancelled)
        let preset = try ExportPlan.preset(
            for: request, source: report,
            among: try ExportPresets.all(folder: request.options.presets, environment: environment))
        let plan = try ExportPlan.make(request, source: report, preset: preset)
        if let setting = ExportPlan.inexpressible(plan.settings), case .text(let value) = setting.value {
            throw FilmtoneError(
                .invalidArgument,
                "\(value.debugDescription) ends in \\ or \": gst-launch-1.0 cannot be given it as a property value, "
                    + "so --dry-run cannot print this export (ftgst export without --dry-run runs it)")
        }
        let plugins = ExportPlan.needsPlugin(plan.words) ? ExportRun.pluginDirectory(environment) : nil
        return ExportPlan.shellCommand(words: plan.commandWords(plan.settings), pluginDirectory: plugins)
    }
}

// MARK: - Driver

/// Counts frames on a streaming thread (a pad probe) for the export's thread to read.
final class FrameCounter: Sendable {
    private let frames = Mutex<Int64>(0)
    /// The latest segment start and the furthest frame end seen after it (running time from that start), for
    /// `reached`.
    private let span = Mutex<(start: ClockTime, end: ClockTime?)>((.zero, nil))

    func add() { frames.withLock { $0 += 1 } }

    /// Counts a buffer and remembers how far it reaches.
    func add(_ buffer: BufferView) {
        add()
        guard let pts = buffer.presentationTimestamp else { return }
        let end = pts.nanoseconds + (buffer.duration?.nanoseconds ?? 0)
        span.withLock { span in
            let reached = ClockTime(nanoseconds: end > span.start.nanoseconds ? end - span.start.nanoseconds : 0)
            if span.end.map({ reached > $0 }) ?? true { span.end = reached }
        }
    }

    func segment(start: ClockTime) { span.withLock { $0 = (start, nil) } }

    /// How far into the segment the frames counted reach: the end of the last one.
    var reached: ClockTime? { span.withLock { $0.end } }

    func set(_ value: Int) { frames.withLock { $0 = Int64(value) } }

    var count: Int64 { frames.withLock { $0 } }
}

struct ExportRun {
    let request: ExportRequest
    let emit: (ExportProgress) -> Void
    let isTaskCancelled: () -> Bool
    /// This export's own stop point (see `run`).
    let token: ExportCancelToken

    /// Progress given to each stage: probing up to 2 %, rendering up to 97 %, finalizing the rest; with a
    /// mezzanine, it takes 2–30 % and rendering starts there.
    static let probingEnd = 0.02
    static let mezzanineEnd = 0.30
    static let renderingEnd = 0.97

    func run() throws -> ExportResult {
        // This export's own stop point: its deadline, its task and its workspace's cancel request reach this one
        // export only; `cancelExport` and the signals reach it (and any other running) while it is registered.
        RunningExports.shared.register(token)
        defer { RunningExports.shared.unregister(token) }
        let lock = try request.workspace.lock()
        defer { withExtendedLifetime(lock) {} }

        let record = ExportRecorder(request: request)
        let desktop =
            request.options.notify
            ? ExportDesktop.start(
                name: request.output.lastPathComponent, environment: ProcessInfo.processInfo.environment,
                onCancel: { [token] in token.cancel(.notification) })
            : nil
        record.memoryWarnings = { desktop?.memoryWarningCount }
        let deadline = request.options.timeoutMilliseconds.map { Deadline(after: $0) }
        let cancelReason: () -> CancelReason? = {
            if let reason = token.reason { return reason }
            if request.workspace.cancelRequested {
                token.cancel(.externalCommand)
            } else if isTaskCancelled() {
                token.cancel(.api)
            } else if deadline?.hasPassed == true {
                token.cancel(.timeout)
            }
            return token.reason
        }
        // OUT, its sidecar and its record are StagedFiles until placed: whatever ends this function before that
        // (an error, a cancel) removes them, and a forced exit (a second Ctrl-C) does too.
        do {
            // Probing
            var reported = 0.0
            let report: (ExportProgress) -> Void = { event in
                var event = event
                event.progress = max(reported, min(1, event.progress))
                reported = event.progress
                emit(event)
                desktop?.progress(event)
            }
            report(ExportProgress(stage: .probing, progress: 0, currentFrame: 0, totalFrames: nil, framesPerSecond: 0))
            try request.source.checkExists()
            let source = try ExportRun.probe(request, isCancelled: { cancelReason() != nil })
            try ExportRun.throwIfCancelled(cancelReason())
            record.source = source
            let preset = try ExportPlan.preset(
                for: request, source: source,
                among: try ExportPresets.all(
                    folder: request.options.presets, environment: ProcessInfo.processInfo.environment))
            record.preset = preset
            let plan = try ExportPlan.make(request, source: source, preset: preset)
            record.lap(.probing)
            report(
                ExportProgress(
                    stage: .probing, progress: ExportRun.probingEnd, currentFrame: 0,
                    totalFrames: plan.totalFrames, framesPerSecond: 0))

            // Mezzanine (asked for): the source's intra-frame copy, so previews of it scrub fast afterwards.
            var renderingStart = ExportRun.probingEnd
            if plan.buildsMezzanine {
                record.mezzanine = try buildMezzanine(
                    total: plan.totalFrames, cancelReason: cancelReason,
                    report: report)
                record.lap(.mezzanine)
                renderingStart = ExportRun.mezzanineEnd
            }

            // Rendering
            let staging = try ExportRun.stagingFile(for: request)
            func rendered(ownDecoder: Bool) throws -> Int64 {
                try render(
                    plan.words, settings: plan.settings(writingTo: staging.path), totalFrames: plan.totalFrames,
                    sourceDuration: source.durationMilliseconds, startingAt: renderingStart, ownDecoder: ownDecoder,
                    cancelReason: cancelReason, report: report, record: record)
            }
            let frames: Int64
            do {
                frames = try rendered(ownDecoder: FrameRecipe.ownDecoderEnabled)
            } catch is OwnDecoderFailure {
                // As the frame pipelines do (`OpenedFrameSource`): a stream the own decoder could not go on with
                // (caps that change mid-stream to 4:4:4 or interlaced) is rendered again, from the start, with
                // gst-libav; filesink writes the staged file anew.
                frames = try rendered(ownDecoder: false)
            }
            record.frames = frames
            try ExportPlan.checkComplete(
                rendered: frames, expected: plan.totalFrames, exact: plan.totalFramesIsExact,
                reached: record.reached.map { Int64($0.milliseconds) }, span: plan.expectedSpanMilliseconds)
            record.lap(.rendering)

            // Finalizing
            report(
                ExportProgress(
                    stage: .finalizing, progress: ExportRun.renderingEnd, currentFrame: frames,
                    totalFrames: plan.totalFrames ?? frames, framesPerSecond: record.framesPerSecond))
            try ExportRun.throwIfCancelled(cancelReason())
            // Everything is written beside OUT under temporary names first and moved into place last, so a
            // failure at any point leaves neither OUT nor a sidecar without its file.
            try staging.sync()
            let output = try? ExportRun.probeFile(staging.path, isCancelled: { false })
            record.output = output
            let sizeBytes =
                (try? FileManager.default.attributesOfItem(atPath: staging.path)[.size] as? Int64)
                .flatMap { $0 } ?? 0
            let result = ExportResult(
                path: request.output.path, preset: preset.name, width: plan.width, height: plan.height,
                durationMilliseconds: output?.durationMilliseconds, frames: frames, sizeBytes: sizeBytes,
                sidecar: request.sidecar.path, benchmark: request.benchmark.path,
                elapsedMilliseconds: record.elapsedMilliseconds)
            let sidecar = try StagedFile(beside: request.sidecar)
            try sidecar.write(record.sidecarBytes(plan: plan))
            try sidecar.sync()
            record.lap(.finalizing)
            let benchmark = try StagedFile(beside: request.benchmark)
            try benchmark.write(record.benchmarkBytes(outcome: .ok))
            try benchmark.sync()
            try ExportRun.placeAll([sidecar, benchmark, staging], overwrite: request.options.overwrite)
            report(
                ExportProgress(
                    stage: .finalizing, progress: 1, currentFrame: frames,
                    totalFrames: plan.totalFrames ?? frames, framesPerSecond: record.framesPerSecond,
                    remainingMilliseconds: 0))
            desktop?.finish(result: result, error: nil, answersButtons: request.options.notifyAnswersButtons)
            return result
        } catch {
            var failure = (error as? FilmtoneError) ?? FilmtoneError(.internalError, "\(error)")
            // A cancel noticed inside a step (the probe's wait) is thrown by that step as plain "cancelled"; the
            // export's message is always the reason.
            if failure.code == .cancelled, let message = token.message { failure.message = message }
            record.lapOpenStage()
            let outcome: ExportRecorder.Outcome =
                failure.code == .cancelled
                ? .cancelled(token.reason ?? .api, detail: token.detail)
                : .failed(failure)
            record.writeFailureRecord(in: request.workspace.records, outcome: outcome)
            desktop?.finish(result: nil, error: failure, answersButtons: false)
            throw failure
        }
    }

    /// Throws `CANCELLED` with the reason; the driver's catch gives it the token's full message.
    static func throwIfCancelled(_ reason: CancelReason?) throws {
        if let reason { throw FilmtoneError(.cancelled, reason.rawValue) }
    }

    /// An error the own decoder caused while rendering (`FrameRecipe.ownDecoderCaused`): the rendering is run
    /// again with gst-libav.
    struct OwnDecoderFailure: Error {}

    /// Plays the pipeline `words` describe, with `settings` set on it, to its end, reporting progress every
    /// ~150 ms. Returns the frames rendered.
    ///
    /// `ownDecoder`: H.264 and HEVC that `fth264dec`/`fth265dec` take are decoded by them, as in the frame pipelines
    /// (`FrameRecipe.autoplugDecision`; the same pictures as avdec's, bit for bit): gst-libav is not loaded, and
    /// libavcodec keeps only its own reference pictures where avdec decodes straight into buffers from downstream's
    /// pool, which the raw queue then holds too (a 1080p export with a look: 90 MiB less in `gst-launch-1.0`,
    /// docs/PERFORMANCE.md). The `--dry-run` line, run by `gst-launch-1.0`, plugs avdec. An error the own decoder
    /// caused is thrown as `OwnDecoderFailure`.
    private func render(
        _ words: [String], settings: [ExportPlan.Setting], totalFrames: Int64?, sourceDuration: Int64?,
        startingAt: Double, ownDecoder: Bool, cancelReason: () -> CancelReason?, report: (ExportProgress) -> Void,
        record: ExportRecorder
    ) throws -> Int64 {
        try FilmtonePlugin.ensureRegistered()  // ftlut and fttrim, in this process
        let pipeline = try Pipeline(words: words)
        defer { pipeline.stop() }
        try ExportRun.apply(settings, to: pipeline)
        let decoder = Mutex<String?>(nil)
        pipeline.element.onDeepElementAdded { element in
            if element.factoryKlass.contains("Decoder/Video") { decoder.withLock { $0 = element.factoryName } }
        }
        defer { record.videoDecoder = decoder.withLock { $0 } }
        if let decodebin = try? pipeline.element(named: "src") {
            try decodebin.onAutoplugSelect {
                // libavcodec is opened (or found unopenable) only when H.264 or HEVC is offered.
                FrameRecipe.decoderDecision(factory: $0, ownDecoder: ownDecoder && Libav.isAvailable)
            }
        }
        // As in the frame pipelines: the colours of an untagged source are pinned before it is turned, or a 640×360
        // BT.601 picture turned to 360×640 would be converted as BT.709 after the turn (`Pad.pinDefaultColorimetry`).
        for flip in pipeline.element.children(madeBy: "videoflip") { flip.staticPad("sink")?.pinDefaultColorimetry() }
        // A PQ source's tone map takes its peak from the caps, as the preview's does, before the first picture.
        if let toneMap = pipeline.element.child(named: ExportPlan.toneMapName) {
            toneMap.staticPad("sink")?.onCapsEvent { caps in
                if let info = caps.video { FrameRecipe.setToneMapPeak(toneMap, for: info) }
            }
        }
        // A picture GStreamer cannot decode (a CMYK JPEG, an animated WebP) is UNSUPPORTED_FORMAT.
        let formats = PictureFormatWatch()
        formats.attach(to: pipeline)
        do {
            return try formats.refining {
                try play(
                    pipeline, totalFrames: totalFrames, sourceDuration: sourceDuration, startingAt: startingAt,
                    cancelReason: cancelReason, report: report, record: record)
            }
        } catch  where LibavDecoderElement.isOwn(decoder.withLock { $0 }) && FrameRecipe.ownDecoderCaused(error) {
            throw OwnDecoderFailure()
        }
    }

    private func play(
        _ pipeline: Pipeline, totalFrames: Int64?, sourceDuration: Int64?, startingAt: Double,
        cancelReason: () -> CancelReason?, report: (ExportProgress) -> Void, record: ExportRecorder
    ) throws -> Int64 {
        let counter = FrameCounter()
        guard let pad = try pipeline.element(named: "size").staticPad("src") else {
            throw FilmtoneError(.internalError, "the size filter has no src pad")
        }
        pad.onData { item in
            switch item {
            case .buffer(let buffer): counter.add(buffer)
            case .segment(let start, _, _): counter.segment(start: start)
            default: break
            }
            return .pass
        }
        try pipeline.endWithoutFrames()
        // Before a cut's start nothing reaches the scaler; decoded frames entering the trim still show life.
        let decoded = FrameCounter()
        if let trimPad = pipeline.element.child(named: "trim")?.staticPad("sink") {
            trimPad.onData { item in
                if case .buffer = item { decoded.add() }
                return .pass
            }
        }
        // The stage is reported as it starts, as the mezzanine's is: a short render may end before the first tick.
        report(
            ExportProgress(
                stage: .rendering, progress: startingAt, currentFrame: 0, totalFrames: totalFrames,
                framesPerSecond: 0))
        let started = ContinuousClock.now
        pipeline.play()
        var lastTick = ContinuousClock.now
        var lastFrames: Int64 = -1
        var lastChange = ContinuousClock.now
        let stall = Duration.milliseconds(request.options.stallMilliseconds)
        while true {
            if let reason = cancelReason() {
                pipeline.stop()
                throw FilmtoneError(.cancelled, reason.rawValue)
            }
            switch pipeline.bus.pop(timeout: .milliseconds(50), kinds: [.error, .endOfStream]) {
            case .error(let cause)?:
                throw ExportRun.classify(cause, remote: request.source.isRemote)
            case .endOfStream?:
                record.reached = counter.reached
                return counter.count
            default:
                break
            }
            let now = ContinuousClock.now
            let frames = counter.count
            record.frames = frames
            let activity = frames + decoded.count
            if activity != lastFrames {
                lastFrames = activity
                lastChange = now
            } else if now - lastChange > stall {
                throw FilmtoneError(
                    request.source.isRemote ? .remoteFetchFailed : .decodeFailed,
                    "no new frame for \(request.options.stallMilliseconds) ms: the pipeline stalled")
            }
            guard now - lastTick >= .milliseconds(150) else { continue }
            lastTick = now
            record.pressure.sample()
            let seconds = ExportRun.seconds(now - started)
            let fps = seconds > 0 ? Double(frames) / seconds : 0
            var fraction: Double? = nil
            if let totalFrames, totalFrames > 0 {
                fraction = min(1, Double(frames) / Double(totalFrames))
            } else if let duration = sourceDuration, duration > 0, let position = pipeline.position() {
                fraction = min(1, Double(position.milliseconds) / Double(duration))
            }
            let remaining = fraction.flatMap { f -> Int64? in
                f > 0.01 ? Int64(seconds * (1 - f) / f * 1000) : nil
            }
            let overall = startingAt + (ExportRun.renderingEnd - startingAt) * (fraction ?? 0)
            report(
                ExportProgress(
                    stage: .rendering, progress: overall, currentFrame: frames, totalFrames: totalFrames,
                    framesPerSecond: fps, remainingMilliseconds: remaining))
        }
    }

    /// Builds (or finds) the source's mezzanine in the default mezzanine cache, reporting its frames as the
    /// `mezzanine` stage; cancellation and the deadline apply as in rendering.
    private func buildMezzanine(
        total: Int64?, cancelReason: @escaping () -> CancelReason?,
        report: @escaping (ExportProgress) -> Void
    ) throws -> MezzanineResult {
        var options = MezzanineOptions(source: request.options.source)
        options.headers = request.options.headers
        let mezzanine = try MezzanineRequest(options)
        let counter = FrameCounter()
        let started = ContinuousClock.now
        var lastTick = started
        report(
            ExportProgress(
                stage: .mezzanine, progress: ExportRun.probingEnd, currentFrame: 0, totalFrames: total,
                framesPerSecond: 0))
        let result = try Mezzanines.run(
            mezzanine,
            isCancelled: {
                let now = ContinuousClock.now
                if now - lastTick >= .milliseconds(150) {
                    lastTick = now
                    let frames = counter.count
                    let fraction = total.map { $0 > 0 ? min(1, Double(frames) / Double($0)) : 0 } ?? 0
                    let seconds = ExportRun.seconds(now - started)
                    report(
                        ExportProgress(
                            stage: .mezzanine,
                            progress: ExportRun.probingEnd + (ExportRun.mezzanineEnd - ExportRun.probingEnd) * fraction,
                            currentFrame: frames, totalFrames: total,
                            framesPerSecond: seconds > 0 ? Double(frames) / seconds : 0))
                }
                return cancelReason() != nil
            }, onFrame: { counter.set($0) })
        try ExportRun.throwIfCancelled(cancelReason())
        report(
            ExportProgress(
                stage: .mezzanine, progress: ExportRun.mezzanineEnd, currentFrame: Int64(result.frames),
                totalFrames: total, framesPerSecond: 0))
        return result
    }

    /// Sets the user's values on the parsed pipeline's named elements, each as a typed property (a string, or
    /// the headers as a `GstStructure` built field by field): no user text is ever parsed as pipeline text.
    static func apply(_ settings: [ExportPlan.Setting], to pipeline: Pipeline) throws {
        for setting in settings {
            let value: PropertyValue
            switch setting.value {
            case .text(let text): value = .string(text)
            case .headers(let headers): value = .structure(name: "headers", fields: headers.map { ($0.name, $0.value) })
            }
            try pipeline.element(named: setting.element).setProperty(setting.property, value)
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Errors from the encoding half (encoders, muxers, the file sink) are `WRITE_FAILED`; the decoding half
    /// is classified as for thumbnails. A muxer's stream error ("Could not multiplex stream") is the source's
    /// fault, not the disk's: frames whose timestamps cannot be written (a damaged index gives them all one time)
    /// are `DECODE_FAILED`.
    static func classify(_ cause: FilmtoneError.GStreamerCause, remote: Bool) -> FilmtoneError {
        let klass = cause.factory.map(Element.factoryKlass(named:)) ?? ""
        if klass.contains("Muxer"), cause.domain == "stream" {
            var error = ErrorClassifier.classify(cause, remote: remote)
            error.code = .decodeFailed
            error.message =
                "the source's frames cannot be written in order (their timestamps are broken: a damaged file?): "
                + error.message
            return error
        }
        if klass.contains("Encoder") || klass.contains("Muxer") || klass.contains("Sink") {
            var error = ErrorClassifier.classify(cause, remote: remote)
            error.code = .writeFailed
            error.message = "encoding or writing failed: " + error.message
            return error
        }
        return ErrorClassifier.classify(cause, remote: remote)
    }

    // MARK: - Steps shared with --dry-run

    static func probe(_ request: ExportRequest, isCancelled: @escaping () -> Bool) throws -> ProbeReport {
        var options = ProbeOptions(source: request.options.source)
        options.headers = request.options.headers
        let report = try Prober(request: try ProbeRequest(options), isCancelled: isCancelled).probe()
        // A Dolby Vision stream without a compatible base layer would be encoded green and purple.
        if let refusal = report.video?.dolbyVision?.refusal { throw refusal }
        return report
    }

    static func probeFile(_ path: String, isCancelled: @escaping () -> Bool) throws -> ProbeReport {
        try Prober(request: try ProbeRequest(ProbeOptions(source: path)), isCancelled: isCancelled).probe()
    }

    /// The plugin folder for `--dry-run`'s `GST_PLUGIN_PATH`: `$FTGST_PLUGIN_DIR`, else the folder `make`
    /// puts the plugin in beside this build (`.build/gst-plugins` for release, `-debug` for debug builds), else the
    /// installed one under the binary's prefix (`PREFIX/bin/ftgst` → `PREFIX/lib/<multiarch>/gstreamer-1.0`, where
    /// `make install` puts it). The binary is found through `/proc/self/exe`: run from PATH, its first argument
    /// is only a name.
    static func pluginDirectory(_ environment: [String: String]) -> String? {
        if let explicit = environment["FTGST_PLUGIN_DIR"], !explicit.isEmpty { return explicit }
        let plugin = "libgstfilmtone.so"
        let fileManager = FileManager.default
        // `.build/debug` is a symlink to `.build/<triple>/debug`: look beside both.
        var executables = [URL(fileURLWithPath: CommandLine.arguments.first ?? ".")]
        if let running = try? fileManager.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            executables.insert(URL(fileURLWithPath: running), at: 0)
        }
        for executable in executables {
            for build in [
                executable.deletingLastPathComponent(),
                executable.resolvingSymlinksInPath().deletingLastPathComponent(),
            ] {
                let flavour = build.path.contains("debug") ? "gst-plugins-debug" : "gst-plugins"
                var folders: [URL] = []
                for root in [
                    build.deletingLastPathComponent(), build.deletingLastPathComponent().deletingLastPathComponent(),
                ] {
                    folders += [flavour, "gst-plugins", "gst-plugins-debug"].map { root.appendingPathComponent($0) }
                }
                // An installed tree: PREFIX/bin/ftgst beside PREFIX/lib/<multiarch>/gstreamer-1.0.
                let lib = build.deletingLastPathComponent().appendingPathComponent("lib")
                let multiarch = ((try? fileManager.contentsOfDirectory(atPath: lib.path)) ?? []).sorted()
                folders += multiarch.map { lib.appendingPathComponent($0).appendingPathComponent("gstreamer-1.0") }
                folders.append(lib.appendingPathComponent("gstreamer-1.0"))
                if let folder = folders.first(where: {
                    fileManager.fileExists(atPath: $0.appendingPathComponent(plugin).path)
                }) {
                    return folder.standardizedFileURL.path
                }
            }
        }
        return nil
    }

    // MARK: - Output file

    /// Checks OUT, its sidecar and its record can be written (no folder at their names; absent unless
    /// `--overwrite`) and creates the staged file beside OUT.
    static func stagingFile(for request: ExportRequest) throws -> StagedFile {
        for (what, target) in [
            ("output", request.output), ("sidecar", request.sidecar), ("benchmark record", request.benchmark),
        ] {
            var isDirectory: ObjCBool = false
            guard
                FileManager.default.fileExists(atPath: target.path, isDirectory: &isDirectory)
                    || StagedFile.identity(of: target.path) != nil  // a dangling symlink is someone's name too
            else { continue }
            guard !isDirectory.boolValue else {
                throw FilmtoneError(.writeFailed, "the \(what) is a folder: \(target.path)")
            }
            guard request.options.overwrite else {
                throw FilmtoneError(.writeFailed, "the \(what) exists (use --overwrite): \(target.path)")
            }
        }
        return try StagedFile(beside: request.output)
    }

    /// Places the sidecar, the record and OUT, in that order, all or nothing: each is linked into place without
    /// `--overwrite` (a file that is there, even one that appeared meanwhile, fails the export and is kept) and
    /// renamed over an existing one with it. OUT comes last, so no OUT is ever left without its sidecar. A
    /// failure takes back what this export had placed, each only while its name is still the file it wrote
    /// (`StagedFile.withdraw`), and leaves the rest in flight for the staged files' own clean-up.
    static func placeAll(_ files: [StagedFile], overwrite: Bool) throws {
        do {
            try StagedFile.commitAll(files, replacing: overwrite)
        } catch {
            if let exists = error as? StagedFile.TargetExists {
                throw FilmtoneError(.writeFailed, "\(exists.path) appeared while exporting (use --overwrite)")
            }
            throw error
        }
    }
}
