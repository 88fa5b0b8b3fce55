import FilmtoneCore
import Foundation

/// One line of a `ftgst batch` jobs file (issue 13, item 4), read strictly: `{"id":…,"kind":"thumbnail"|
/// "storyboard"|"preview", …}` plus the keys of that kind, which are the keys of its request file (`preview
/// --request`) or, for thumbnails and storyboards, their CLI options spelt in JSON (`thumb --time-ms` is `timeMs`).
/// Pure: reading a line touches no file.
public struct BatchJob: Sendable {
    /// What the job makes.
    public enum Work: Sendable {
        /// One picture of `options.source` at `time`, written to `options.cacheDirectory`/`options.cacheName`
        /// (the job's `output`) stamped with its request key, so that a rerun finds it valid and skips it.
        case thumbnail(ThumbnailOptions, ThumbnailTime)
        case storyboard(StoryboardOptions)
        case preview(PreviewOptions)
    }

    /// 1-based line number in the jobs file: what `--shard` selects by and what a result names.
    public var line: Int
    public var id: String?
    public var kind: String?
    /// The job, or why its line is refused (`INVALID_ARGUMENT`): that job's result, the others go on.
    public var work: Result<Work, FilmtoneError>

    /// The keys every line may have besides its kind's.
    static let commonKeys: Set<String> = ["id", "kind"]
    /// `thumbnail`: `thumb`'s options (one time a job; `output` is required and names the file).
    public static let thumbnailKeys: Set<String> = [
        "source", "output", "timeMs", "time", "toleranceMs", "tolerance", "maxWidth", "maxHeight", "format", "quality",
        "headers", "timeoutMs", "toneMap",
    ]
    /// `storyboard`: `storyboard`'s options (`output` is the folder; `every` and `tolerance` in seconds, a number or
    /// the CLI's text: `2.5`, `"2.5s"`, `"1:00"`).
    public static let storyboardKeys: Set<String> = [
        "source", "output", "maxWidth", "width", "columns", "rows", "every", "toleranceMs", "tolerance", "quality",
        "headers", "timeoutMs", "toneMap",
    ]

    /// Reads line `line` (its text without the newline). Never throws: a bad line is a job whose work is an error.
    public static func parse(line: Int, text: some Collection<UInt8>) -> BatchJob {
        var job = BatchJob(line: line, id: nil, kind: nil, work: .failure(FilmtoneError(.internalError, "unread")))
        do {
            let value: JSONValue
            do {
                value = try JSONValue.parse(text)
            } catch {
                throw FilmtoneError(.invalidArgument, "line \(line): not valid JSON: \(error)")
            }
            guard case .object(let fields) = value else {
                throw FilmtoneError(.invalidArgument, "line \(line): not a JSON object")
            }
            let request = try JSONRequest(fields: fields)
            // The id and kind first, so that even a refused job's result names them when they are readable.
            job.id = try? request.string("id")
            job.kind = try? request.string("kind")
            _ = try request.string("id")
            guard let kind = try request.string("kind") else {
                throw request.invalid("'kind' is required: thumbnail, storyboard or preview")
            }
            let own = fields.filter { !commonKeys.contains($0.0) }
            job.work = .success(try work(kind: kind, JSONRequest(fields: own)))
        } catch let error as FilmtoneError {
            job.work = .failure(error)
        } catch {
            job.work = .failure(FilmtoneError(.invalidArgument, "line \(line): \(error)"))
        }
        return job
    }

    private static func work(kind: String, _ request: JSONRequest) throws -> Work {
        switch kind {
        case "thumbnail": return try thumbnail(request)
        case "storyboard": return try storyboard(request)
        case "preview":
            return .preview(try PreviewOptions.fromJSON(request))
        default:
            throw request.invalid("unknown kind '\(kind)' (thumbnail, storyboard or preview)")
        }
    }

    private static func thumbnail(_ request: JSONRequest) throws -> Work {
        try request.refuseUnknownKeys(thumbnailKeys)
        guard let source = try request.string("source") else { throw request.invalid("'source' is required") }
        guard let output = try request.string("output"), !output.isEmpty, !output.hasSuffix("/") else {
            throw request.invalid("'output' is required: the thumbnail's file (.jpg, .jpeg or .png)")
        }
        try MediaSource.refuseControlCharacters(output, as: "output path", code: .invalidArgument)
        var options = ThumbnailOptions(source: source)
        var time = ThumbnailTime.milliseconds(0)
        if let ms = try request.whole("timeMs") {
            guard try request.string("time") == nil else { throw request.invalid("give 'timeMs' or 'time', not both") }
            time = .milliseconds(ms)
            options.timeMilliseconds = ms
        }
        if let text = try request.string("time") {
            let times = try ThumbnailTime.parse(list: text)
            guard times.count == 1, let only = times.first else {
                throw request.invalid("'time' is one time a job (a line per picture): \(text)")
            }
            time = only
        }
        if let value = try tolerance(request) { options.toleranceMilliseconds = value }
        if let value = try request.whole("maxWidth") { options.maxWidth = Int(value) }
        if let value = try request.whole("maxHeight") { options.maxHeight = Int(value) }
        if let value = try request.number("quality") { options.quality = value }
        if let value = try request.strings("headers") { options.headers = value }
        if let value = try request.whole("timeoutMs") { options.timeoutMilliseconds = value }
        if let value = try request.string("toneMap") { options.toneMap = try ToneMapping.parse(value) }
        // The output is a stamped entry of its own folder, as `thumb --cache-dir D --cache-name N` writes one: a
        // rerun whose file carries the same request key returns it without decoding. Never evicted (no cap).
        guard let named = ThumbnailRequest.format(ofFileNamed: output) else {
            throw FilmtoneError(.unsupportedFormat, "request: 'output' must end in .jpg, .jpeg or .png: \(output)")
        }
        options.format = try request.string("format").map(ImageFormat.parse) ?? named
        let file = URL(fileURLWithPath: output).standardizedFileURL
        options.cacheDirectory = file.deletingLastPathComponent().path
        options.cacheName = file.lastPathComponent
        options.cacheCapMegabytes = ThumbnailOptions.uncappedMegabytes
        return .thumbnail(options, time)
    }

    private static func storyboard(_ request: JSONRequest) throws -> Work {
        try request.refuseUnknownKeys(storyboardKeys)
        guard let source = try request.string("source") else { throw request.invalid("'source' is required") }
        guard let output = try request.string("output"), !output.isEmpty else {
            throw request.invalid("'output' is required: the storyboard's folder")
        }
        try MediaSource.refuseControlCharacters(output, as: "output path", code: .invalidArgument)
        var options = StoryboardOptions(source: source, outputDirectory: output)
        if request.value("maxWidth") != nil, request.value("width") != nil {
            throw request.invalid("give one of 'maxWidth' and 'width' (the same), not both")
        }
        if let value = try request.whole("maxWidth") ?? request.whole("width") { options.tileWidth = Int(value) }
        if let value = try request.whole("columns") { options.columns = Int(value) }
        if let value = try request.whole("rows") { options.rows = Int(value) }
        if let value = try seconds(request, "every") { options.intervalMilliseconds = value }
        if let value = try tolerance(request) { options.toleranceMilliseconds = value }
        if let value = try request.number("quality") { options.quality = value }
        if let value = try request.strings("headers") { options.headers = value }
        if let value = try request.whole("timeoutMs") { options.timeoutMilliseconds = value }
        if let value = try request.string("toneMap") { options.toneMap = try ToneMapping.parse(value) }
        return .storyboard(options)
    }

    /// Seconds as a JSON number (`2.5`) or the CLI's text (`"2.5s"`, `"1:00"`), in whole ms.
    /// `toleranceMs` (whole ms) or `tolerance` (seconds), as `--tolerance-ms` and `--tolerance`; not both.
    private static func tolerance(_ request: JSONRequest) throws -> Int64? {
        if request.value("toleranceMs") != nil, request.value("tolerance") != nil {
            throw request.invalid("give one of 'toleranceMs' and 'tolerance', not both")
        }
        return try request.whole("toleranceMs") ?? seconds(request, "tolerance")
    }

    private static func seconds(_ request: JSONRequest, _ key: String) throws -> Int64? {
        switch request.value(key) {
        case nil: return nil
        case .string(let text)?: return try StoryboardOptions.milliseconds(seconds: text, option: "'\(key)'")
        case .int, .double:
            guard let value = try request.number(key), value.isFinite, value >= 0, value < 1e12 else {
                throw request.invalid("'\(key)' must be seconds, 0 or more")
            }
            return Int64((value * 1000).rounded(.down))
        default: throw request.invalid("'\(key)' must be seconds: a number or a text such as \"2.5s\"")
        }
    }
}

// MARK: - Shards

/// `--shard I/N`: which jobs a process takes. Job at line L (1-based) belongs to shard (L − 1) mod N: by line
/// number, not by content, so every shard process agrees on the split without reading each other, and a line that
/// does not parse still belongs to exactly one shard (which reports it). Pure.
public struct BatchShard: Equatable, Sendable {
    public var index: Int
    public var count: Int

    public static let all = BatchShard(index: 0, count: 1)

    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// `I/N` with 0 ≤ I < N ≤ 100000: `INVALID_ARGUMENT` for anything else.
    public static func parse(_ text: String) throws -> BatchShard {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = digits(parts[0]), let count = digits(parts[1]) else {
            throw FilmtoneError(.invalidArgument, "--shard takes I/N (e.g. 0/4): \(text)")
        }
        return try BatchShard(checking: index, count: count, what: "--shard \(text)")
    }

    /// `--shards N` with `JOB_COMPLETION_INDEX` from `environment` (a Kubernetes Indexed Job's pod index).
    public static func fromEnvironment(shards text: String, environment: [String: String]) throws -> BatchShard {
        guard let count = digits(Substring(text)) else {
            throw FilmtoneError(.invalidArgument, "--shards takes a whole number above 0: \(text)")
        }
        guard let value = environment["JOB_COMPLETION_INDEX"] else {
            throw FilmtoneError(
                .invalidArgument, "--shards needs JOB_COMPLETION_INDEX in the environment (a Kubernetes Indexed Job)")
        }
        guard let index = digits(Substring(value)) else {
            throw FilmtoneError(.invalidArgument, "JOB_COMPLETION_INDEX must be a whole number: \(value)")
        }
        return try BatchShard(
            checking: index, count: count, what: "JOB_COMPLETION_INDEX=\(value) with --shards \(text)")
    }

    private init(checking index: Int, count: Int, what: String) throws {
        guard (1...100_000).contains(count) else {
            throw FilmtoneError(.invalidArgument, "\(what): the number of shards must be 1…100000")
        }
        guard index < count else {
            throw FilmtoneError(.invalidArgument, "\(what): the shard index must be below the number of shards")
        }
        self.init(index: index, count: count)
    }

    private static func digits(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 6, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    /// Whether the job on 1-based `line` is this shard's.
    public func owns(line: Int) -> Bool { (line - 1) % count == index }
}

// MARK: - Exit status

extension FilmtoneError.Code {
    /// A failure a retry may cure (the network, a write, a deadline, an interrupted or busy run) rather than one the
    /// job itself causes (bad media, a bad request): what `ftgst batch`'s exit status 75 says.
    public var isTransient: Bool {
        switch self {
        case .remoteFetchFailed, .writeFailed, .internalError, .cancelled, .exportBusy: return true
        case .invalidArgument, .invalidURL, .fileNotFound, .unsupportedFormat, .decodeFailed, .lutInvalid,
            .saveFailed, .shareUnavailable, .notSupported:
            return false
        }
    }
}

/// `ftgst batch`'s exit statuses (docs/CLI.md): which retry policy a job engine should apply.
public enum BatchExitStatus {
    /// Every job succeeded (or was skipped as already done).
    public static let ok: Int32 = 0
    /// Some job failed for good (bad media or a bad line: `DECODE_FAILED`, `UNSUPPORTED_FORMAT`, `FILE_NOT_FOUND`,
    /// `INVALID_ARGUMENT`…) and none transiently: a retry would fail the same way. EX_DATAERR.
    public static let permanentFailure: Int32 = 65
    /// Some job failed transiently (`REMOTE_FETCH_FAILED`, `WRITE_FAILED`, a deadline…): retry the run; the jobs
    /// that succeeded are skipped then. EX_TEMPFAIL, as `EXPORT_BUSY`.
    public static let transientFailure: Int32 = 75

    /// The status for the codes of the failed jobs.
    public static func status(failures: [FilmtoneError.Code]) -> Int32 {
        if failures.contains(where: \.isTransient) { return transientFailure }
        return failures.isEmpty ? ok : permanentFailure
    }
}
