import FilmtoneCore
import Foundation
import Glibc
import GstKit

/// What an export leaves beside its output and in the workspace:
/// - `OUT.ftgst.json`, the sidecar: the request, the resolved preset and pipeline, each LUT's SHA-256, the
///   probe of the source and of the output, the versions;
/// - `OUT.ftgst-bench.json`, the benchmark record: stage durations, frames, fps, CPU time, peak memory,
///   memory-pressure events, the result and the cancel reason. A failed or cancelled export writes its record
///   to the workspace's `records/` folder instead (there is no OUT to put it beside).
final class ExportRecorder {
    enum Outcome {
        case ok
        case failed(FilmtoneError)
        /// With the detail an engine client gave `cancelExport`, if any.
        case cancelled(CancelReason, detail: String?)
    }

    let request: ExportRequest
    let pressure = MemoryPressureCounter()
    /// The desktop portal's low-memory warnings during the export (`ExportDesktop`), nil when none was watched.
    var memoryWarnings: () -> Int? = { nil }
    var source: ProbeReport? = nil
    var output: ProbeReport? = nil
    var preset: ExportPreset? = nil
    var mezzanine: MezzanineResult? = nil
    var frames: Int64 = 0
    /// The video decoder's factory of the last rendering (`fth264dec`, `avdec_h264`…); nil before one was plugged.
    var videoDecoder: String? = nil
    /// How far into the output the rendered frames reach (the end of the last one), when known.
    var reached: ClockTime? = nil

    private let startedAt = Date()
    private let started = ContinuousClock.now
    private let cpuAtStart: Int64
    private var lapStart = ContinuousClock.now
    private var stages: [(ExportStage, Int64)] = []
    private var renderingMilliseconds: Int64 = 0

    init(request: ExportRequest) {
        self.request = request
        ResourceUsage.resetPeakMemory()
        cpuAtStart = ResourceUsage.cpuMilliseconds()
    }

    /// Closes the current stage, named `stage`.
    func lap(_ stage: ExportStage) {
        let now = ContinuousClock.now
        let milliseconds = ExportRecorder.milliseconds(now - lapStart)
        stages.append((stage, milliseconds))
        if stage == .rendering { renderingMilliseconds = milliseconds }
        lapStart = now
    }

    /// After a failure: the stage that was running gets its time too.
    func lapOpenStage() {
        var order: [ExportStage] = [.probing, .rendering, .finalizing]
        if request.options.mezzanine { order.insert(.mezzanine, at: 1) }
        guard stages.count < order.count else { return }
        lap(order[stages.count])
    }

    var elapsedMilliseconds: Int64 { ExportRecorder.milliseconds(ContinuousClock.now - started) }

    var framesPerSecond: Double {
        renderingMilliseconds > 0 ? Double(frames) * 1000 / Double(renderingMilliseconds) : 0
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    // MARK: - Documents

    func sidecar(plan: ExportPlan) -> JSONValue {
        var luts: [JSONValue] = []
        if let look = request.look {
            for (slot, path) in [("input", look.inputLUT), ("creative", look.creativeLUT)] {
                guard let path else { continue }
                let digest = try? SHA256.hash(file: path)
                luts.append(
                    .object([
                        ("slot", .string(slot)), ("path", .string(path)),
                        ("sha256", digest.map { .string($0) } ?? .null),
                    ]))
            }
        }
        // Secrets in HTTP headers do not belong in a file left beside a video.
        let words = plan.commandWords(plan.settings, redactingHeaders: true)
        return .object([
            ("ftgst", .string(FilmtoneVersion.string)), ("gstreamer", .string(GstRuntime.version)),
            ("request", request.options.json),
            ("preset", preset?.json ?? .null),
            ("pipeline", .string(words.joined(separator: " "))),
            (
                "command",
                .string(
                    ExportPlan.shellCommand(
                        words: words,
                        pluginDirectory:
                            ExportPlan.needsPlugin(words)
                            ? ExportRun.pluginDirectory(ProcessInfo.processInfo.environment) : nil))
            ),
            ("width", .int(Int64(plan.width))), ("height", .int(Int64(plan.height))),
            ("audio", .string(plan.audio.rawValue)), ("depth", .int(Int64(plan.depth))),
            ("luts", .array(luts)),
            ("mezzanine", mezzanine?.json ?? .null),
            ("source", source?.json ?? .null),
            ("output", output?.json ?? .null),
        ])
    }

    func benchmark(outcome: Outcome) -> JSONValue {
        var result = "ok"
        var error: JSONValue = .null
        var reason: JSONValue = .null
        var detail: JSONValue = .null
        switch outcome {
        case .ok: break
        case .failed(let failure):
            result = "failed"
            error = .object([("code", .string(failure.code.rawValue)), ("message", .string(failure.message))])
        case .cancelled(let why, let text):
            result = "cancelled"
            reason = .string(why.rawValue)
            detail = text.map { .string($0) } ?? .null
        }
        let cpu = ResourceUsage.cpuMilliseconds() - cpuAtStart
        let pressureCount = pressure.count
        return .object([
            ("result", .string(result)), ("cancelReason", reason), ("cancelDetail", detail), ("error", error),
            ("source", .string(request.options.source)), ("output", .string(request.output.path)),
            ("preset", preset.map { .string($0.name) } ?? .null),
            ("startedAt", .string(ISO8601DateFormatter().string(from: startedAt))),
            ("stages", .object(stages.map { ($0.0.rawValue, .int($0.1)) })),
            ("elapsedMs", .int(elapsedMilliseconds)),
            ("frames", .int(frames)), ("fps", .double((framesPerSecond * 100).rounded() / 100)),
            ("videoDecoder", videoDecoder.map { .string($0) } ?? .null),
            ("cpuMs", .int(cpu)),
            ("peakMemoryBytes", ResourceUsage.peakMemoryBytes().map { .int($0) } ?? .null),
            ("memoryPressureCount", pressureCount.map { .int($0) } ?? .null),
            ("memoryPressureSource", .string(pressure.source)),
            ("memoryStallUs", .int(pressure.stallMicroseconds)),
            ("memoryWarningCount", memoryWarnings().map { .int(Int64($0)) } ?? .null),
            ("cpus", .int(Int64(ProcessInfo.processInfo.activeProcessorCount))),
            ("pid", .int(Int64(getpid()))),
            ("ftgst", .string(FilmtoneVersion.string)), ("gstreamer", .string(GstRuntime.version)),
        ])
    }

    /// The sidecar file's contents: one JSON object and a newline.
    func sidecarBytes(plan: ExportPlan) -> [UInt8] {
        Array((redactingURLs(sidecar(plan: plan)).serialized + "\n").utf8)
    }

    /// The benchmark record's contents: one JSON object and a newline.
    func benchmarkBytes(outcome: Outcome) -> [UInt8] {
        Array((redactingURLs(benchmark(outcome: outcome)).serialized + "\n").utf8)
    }

    // MARK: - Secrets

    /// Every string of `value` with a remote source's URL (as typed, and as GStreamer spells it) replaced by
    /// `MediaSource.redacted`'s form: a password or a query token in the URL does not belong in a file left on
    /// disk, wherever it shows (the request, the pipeline and command, a probe, an error message), as header values
    /// do not.
    func redactingURLs(_ value: JSONValue) -> JSONValue {
        guard case .remote(let url) = request.source else { return value }
        let spellings = Set([request.options.source, url.absoluteString]).sorted { $0.count > $1.count }
        let replacements = spellings.map { ($0, MediaSource.redacted($0)) }.filter { $0.0 != $0.1 }
        guard !replacements.isEmpty else { return value }
        func redact(_ value: JSONValue) -> JSONValue {
            switch value {
            case .string(var text):
                for (secret, shown) in replacements { text = text.replacingOccurrences(of: secret, with: shown) }
                return .string(text)
            case .array(let items): return .array(items.map(redact))
            case .object(let fields): return .object(fields.map { ($0.0, redact($0.1)) })
            case .int, .double, .bool, .null: return value
            }
        }
        return redact(value)
    }

    /// `records/<time>-<pid>-<result>.json` (`…-2.json`, `…-3.json` when the name is taken: a serve process ends
    /// several exports within one second, and each keeps its record); a failure to write it is not the export's
    /// error.
    func writeFailureRecord(in folder: URL, outcome: Outcome) {
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let stamp = ISO8601DateFormatter().string(from: startedAt).replacingOccurrences(of: ":", with: "")
        let kind: String
        switch outcome {
        case .ok: kind = "ok"
        case .failed: kind = "failed"
        case .cancelled: kind = "cancelled"
        }
        let base = "\(stamp)-\(getpid())-\(kind)"
        guard let file = try? StagedFile(beside: folder.appendingPathComponent(base + ".json")),
            (try? file.write(benchmarkBytes(outcome: outcome))) != nil
        else { return }
        for number in 1...10_000 {
            do {
                // Never replacing: a record another export of this second placed is kept.
                try file.commit(as: number == 1 ? base + ".json" : "\(base)-\(number).json", replacing: false)
                return
            } catch is StagedFile.TargetExists {
                continue
            } catch {
                return
            }
        }
    }
}
