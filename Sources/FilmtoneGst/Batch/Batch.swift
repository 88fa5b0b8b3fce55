import FilmtoneCore
import Foundation

/// `ftgst batch JOBS.jsonl` (issue 13, item 4): many thumbnail, storyboard and preview jobs in one process, a
/// worker pool of `workers` running them, one result a job. A failed job is reported and the rest go on.
///
/// Thumbnail jobs of one source with the same box, headers, deadline and output folder are one unit of work: one
/// `ThumbnailSet.run` (one pipeline, times visited in ascending order, a decoded frame reused), up to
/// `groupLimit` jobs a unit. If that unit fails, each of its jobs is run on its own, so that the failure is the
/// failing job's and the others still succeed.
public enum Batch {
    /// The most thumbnail jobs one decode serves (each holds a staged file open until the unit commits).
    static let groupLimit = 32

    /// One job's outcome: its result line.
    public struct JobResult: Sendable {
        public var line: Int
        public var id: String?
        public var kind: String?
        public var outcome: Result<Success, FilmtoneError>

        public struct Success: Sendable {
            /// The files the job's result is in (absolute paths).
            public var outputs: [String]
            /// Already there and valid (stamped with this job's request key): returned without decoding.
            public var skipped: Bool
            /// The job's own result object, as its command prints it.
            public var result: JSONValue
        }

        /// `{"id","line","kind","status":"ok","skipped","outputs","result"}` or `{…,"status":"error",
        /// "error":{"code","message","transient"}}`.
        public var json: JSONValue {
            var fields: [(String, JSONValue)] = [
                ("id", id.map(JSONValue.string) ?? .null), ("line", .int(Int64(line))),
                ("kind", kind.map(JSONValue.string) ?? .null),
            ]
            switch outcome {
            case .success(let done):
                fields += [
                    ("status", .string("ok")), ("skipped", .bool(done.skipped)),
                    ("outputs", .array(done.outputs.map(JSONValue.string))), ("result", done.result),
                ]
            case .failure(let error):
                fields += [
                    ("status", .string("error")),
                    (
                        "error",
                        .object([
                            ("code", .string(error.code.rawValue)), ("message", .string(error.message)),
                            ("transient", .bool(error.code.isTransient)),
                        ])
                    ),
                ]
            }
            return .object(fields)
        }
    }

    /// What a run did: counted over this shard's jobs.
    public struct Summary: Sendable {
        public var jobs = 0
        public var succeeded = 0
        public var skipped = 0
        public var failures: [FilmtoneError.Code] = []

        /// 0, 65 (a permanent failure) or 75 (a transient one): `BatchExitStatus`.
        public var exitStatus: Int32 { BatchExitStatus.status(failures: failures) }

        public var description: String {
            let transient = failures.filter(\.isTransient).count
            return "batch: \(jobs) jobs, \(succeeded) ok (\(skipped) skipped), \(failures.count) failed"
                + " (\(failures.count - transient) permanently, \(transient) transiently)"
        }
    }

    /// The jobs of `data` (one JSON object a line; blank lines are no job but keep their number) that `shard`
    /// owns, run `workers` at a time; `emit` is called once a job, in line order when `ordered`, else as each
    /// finishes. Returns the summary.
    public static func run(
        jobs data: Data, shard: BatchShard = .all, workers: Int, ordered: Bool,
        emit: (JobResult) -> Void
    ) async -> Summary {
        let all = lines(of: data).map { BatchJob.parse(line: $0.number, text: $0.text) }
        let mine = refuseSharedOutputs(all).filter { shard.owns(line: $0.line) }
        var summary = Summary()
        var waiting: [Int: JobResult] = [:]
        var order = mine.map(\.line)[...]
        func finished(_ results: [JobResult]) {
            for result in results {
                summary.jobs += 1
                switch result.outcome {
                case .success(let done):
                    summary.succeeded += 1
                    if done.skipped { summary.skipped += 1 }
                case .failure(let error): summary.failures.append(error.code)
                }
                if ordered { waiting[result.line] = result } else { emit(result) }
            }
            while let next = order.first, let result = waiting.removeValue(forKey: next) {
                order.removeFirst()
                emit(result)
            }
        }
        let units = plan(mine)
        // As many workers as processors: one decoder thread each (`FrameRecipe.decoderThreads`).
        let previousThreads = FrameRecipe.decoderThreads
        if workers >= ProcessInfo.processInfo.activeProcessorCount { FrameRecipe.decoderThreads = 1 }
        defer { FrameRecipe.decoderThreads = previousThreads }
        let refused = units.compactMap { if case .refused(let result) = $0 { return result } else { return nil } }
        finished(refused)
        let work = units.filter { if case .refused = $0 { return false } else { return true } }
        await withTaskGroup(of: [JobResult].self) { group in
            var next = work.startIndex
            for _ in 0..<max(1, workers) where next < work.endIndex {
                let unit = work[next]
                group.addTask { await run(unit) }
                next += 1
            }
            for await results in group {
                finished(results)
                if next < work.endIndex {
                    let unit = work[next]
                    group.addTask { await run(unit) }
                    next += 1
                }
            }
        }
        // Every job has one result; should one ever be missing, the later ones still come out, in order.
        for line in order { if let result = waiting.removeValue(forKey: line) { emit(result) } }
        return summary
    }

    // MARK: - Plan

    /// One piece of work for a worker.
    enum Unit: Sendable {
        /// A line refused before any work: its result.
        case refused(JobResult)
        /// Thumbnail jobs of one source sharing one decode (see `groupKey`), in line order.
        case thumbnails([Thumbnail])
        case storyboard(BatchJob, StoryboardOptions)
        case preview(BatchJob, PreviewOptions)
    }

    struct Thumbnail: Sendable {
        var job: BatchJob
        var options: ThumbnailOptions
        var time: ThumbnailTime
    }

    /// The lines split on `\n` (a `\r` before it dropped), numbered from 1; blank lines left out.
    static func lines(of data: Data) -> [(number: Int, text: ArraySlice<UInt8>)] {
        let bytes = [UInt8](data)
        var out: [(Int, ArraySlice<UInt8>)] = []
        for (index, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let text = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
            if text.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            out.append((index + 1, text))
        }
        return out
    }

    /// Two jobs whose outputs meet would overwrite each other: the later line is refused (`INVALID_ARGUMENT`).
    /// Checked over every line, before sharding, so each shard process refuses the same lines. Outputs are compared
    /// as the files they are, not as spelled (`OutputClaims`: symbolic links and `..` resolved, a thumbnail's
    /// extension added as it will be), and they meet when they are the same path, when one lies inside another
    /// job's file, or when a file bears a storyboard's own name (`sheet-NNN.jpg`, `storyboard.vtt`, its record) in
    /// that storyboard's folder.
    static func refuseSharedOutputs(_ jobs: [BatchJob]) -> [BatchJob] {
        var claims = OutputClaims()
        return jobs.map { job in
            guard case .success(let work) = job.work else { return job }
            let output: String?
            var isFolder = false
            switch work {
            case .thumbnail(let options, _):
                output = options.cacheDirectory.map { folder in
                    let name = options.cacheName ?? ""
                    guard ThumbnailRequest.format(ofFileNamed: name) == nil else { return folder + "/" + name }
                    return folder + "/" + name + "." + options.format.fileExtension
                }
            case .storyboard(let options):
                output = options.outputDirectory
                isFolder = true
            case .preview(let options): output = options.output
            }
            guard let output else { return job }
            if let first = claims.claim(output, isFolder: isFolder, line: job.line) {
                var refused = job
                refused.work = .failure(
                    FilmtoneError(
                        .invalidArgument, "line \(job.line): output \(output) meets line \(first)'s output"))
                return refused
            }
            return job
        }
    }

    /// The units of `jobs`, in the order of their first line: refused lines, thumbnail groups, the other jobs.
    static func plan(_ jobs: [BatchJob]) -> [Unit] {
        var units: [Unit] = []
        var openGroups: [String: Int] = [:]  // group key -> index of its unit while it has room
        for job in jobs {
            switch job.work {
            case .failure(let error):
                units.append(.refused(JobResult(line: job.line, id: job.id, kind: job.kind, outcome: .failure(error))))
            case .success(.storyboard(let options)): units.append(.storyboard(job, options))
            case .success(.preview(let options)): units.append(.preview(job, options))
            case .success(.thumbnail(let options, let time)):
                let member = Thumbnail(job: job, options: options, time: time)
                let key = groupKey(options)
                if let index = openGroups[key], case .thumbnails(let members) = units[index] {
                    units[index] = .thumbnails(members + [member])
                    if members.count + 1 >= groupLimit { openGroups[key] = nil }
                } else {
                    openGroups[key] = units.count
                    units.append(.thumbnails([member]))
                }
            }
        }
        return units
    }

    /// What thumbnail jobs must share to come from one pipeline: the source, the box it is scaled to, the
    /// headers and deadline it is fetched with, the folder their files are committed in, and the tone-map setting
    /// (the pipeline's own).
    static func groupKey(_ options: ThumbnailOptions) -> String {
        let fields: [JSONValue] = [
            .string(options.source), .int(Int64(options.maxWidth)), .int(Int64(options.maxHeight)),
            .array(options.headers.map(JSONValue.string)), .int(options.timeoutMilliseconds),
            .string(options.cacheDirectory ?? ""), .string(options.toneMap.rawValue),
        ]
        return JSONValue.array(fields).serialized
    }

    // MARK: - Run

    static func run(_ unit: Unit) async -> [JobResult] {
        switch unit {
        case .refused(let result): return [result]
        case .thumbnails(let members): return await thumbnails(members)
        case .storyboard(let job, let options):
            return [
                await result(of: job) {
                    // A rerun: the record in the folder still matches the request and its files.
                    let key = try StoryboardRecord.key(options)
                    let folder = URL(fileURLWithPath: options.outputDirectory).standardizedFileURL
                    if let (recorded, files) = StoryboardRecord.valid(in: folder, key: key) {
                        return .init(outputs: files, skipped: true, result: recorded)
                    }
                    createParent(of: options.outputDirectory)
                    let made = try await Storyboards.make(options)
                    try StoryboardRecord.write(made, key: key)
                    return .init(outputs: made.sheets.map(\.path) + [made.vttPath], skipped: false, result: made.json)
                }
            ]
        case .preview(let job, let options):
            return [
                await result(of: job) {
                    let (request, key) = try PreviewStamp.key(options)
                    if case .local(let path) = request.frame.source,
                        URL(fileURLWithPath: path).standardizedFileURL == request.output.standardizedFileURL
                    {
                        throw FilmtoneError(.invalidArgument, "'output' is the source itself: \(path)")
                    }
                    if let recorded = PreviewStamp.valid(request, key: key) {
                        return .init(outputs: [request.output.path], skipped: true, result: recorded)
                    }
                    createParent(of: request.output.path)
                    let made = try await PreviewStamp.render(request, key: key)
                    return .init(outputs: [made.path], skipped: false, result: made.json)
                }
            ]
        }
    }

    /// A job's output folder is made with its parents, as a thumbnail's is (`CacheDirectory.prepare`): a jobs file
    /// names a tree to fill. When that fails, the job itself reports why (`WRITE_FAILED`).
    private static func createParent(of path: String) {
        let parent = URL(fileURLWithPath: path).standardizedFileURL.deletingLastPathComponent()
        try? FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
    }

    private static func result(of job: BatchJob, _ body: () async throws -> JobResult.Success) async -> JobResult {
        let outcome: Result<JobResult.Success, FilmtoneError>
        do {
            outcome = .success(try await body())
        } catch let error as FilmtoneError {
            outcome = .failure(error)
        } catch {
            outcome = .failure(FilmtoneError(.internalError, "\(error)"))
        }
        return JobResult(line: job.line, id: job.id, kind: job.kind, outcome: outcome)
    }

    /// One group: its requests checked one by one (a refused one fails alone), the rest from one decode; if that
    /// fails and there was more than one, each again on its own.
    static func thumbnails(_ members: [Thumbnail]) async -> [JobResult] {
        var results: [JobResult] = []
        var checked: [(member: Thumbnail, request: ThumbnailRequest)] = []
        for member in members {
            do {
                var options = member.options
                if case .milliseconds(let ms) = member.time { options.timeMilliseconds = ms }
                var request = try ThumbnailRequest(options)
                request.picksTime = member.time == .auto
                // As `thumb -o` refuses it: the source's own name would have its thumbnail written over it.
                if case .local(let path) = request.source,
                    URL(fileURLWithPath: path).standardizedFileURL == request.output.standardizedFileURL
                {
                    throw FilmtoneError(.invalidArgument, "'output' is the source itself: \(path)")
                }
                checked.append((member, request))
            } catch {
                results.append(await result(of: member.job) { throw error })
            }
        }
        guard !checked.isEmpty else { return results }
        let requests = checked.map(\.request)
        let times = checked.map(\.member.time)
        do {
            let pictures = try await runDetached { isCancelled in
                try ThumbnailSet.run(requests, times: times, isCancelled: isCancelled).0
            }
            for (entry, picture) in zip(checked, pictures) {
                var result = picture.json
                if case .object(var fields) = result {
                    fields.append(("decodeGroup", .int(Int64(checked.count))))
                    result = .object(fields)
                }
                let done = JobResult.Success(
                    outputs: [picture.result.path], skipped: picture.result.cached, result: result)
                results.append(
                    JobResult(
                        line: entry.member.job.line, id: entry.member.job.id, kind: entry.member.job.kind,
                        outcome: .success(done)))
            }
        } catch {
            if checked.count == 1 {
                results.append(await result(of: checked[0].member.job) { throw error })
            } else {
                for entry in checked { results += await thumbnails([entry.member]) }
            }
        }
        return results
    }
}
