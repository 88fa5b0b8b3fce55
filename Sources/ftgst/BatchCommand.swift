import FilmtoneGst
import Foundation

/// `ftgst batch JOBS.jsonl [options]`: thumbnail, storyboard and preview jobs, one JSON object a line, in one
/// process (issue 13, item 4). A thin shell over `Batch.run`; its exit status says whether a retry can help.
enum BatchCommand {
    static let spec = CommandSpec(
        path: ["batch"], synopsis: "batch JOBS.jsonl", summary: "many thumbnail, storyboard and preview jobs at once",
        usage: ["ftgst batch JOBS.jsonl [options]", "ftgst batch - [options] < JOBS.jsonl"],
        positionals: [
            .init(
                name: "JOBS.jsonl",
                help:
                    #"one job a line: {"id":…,"kind":"thumbnail"|"storyboard"|"preview",…} with its kind's keys (docs/CLI.md); - reads stdin"#,
                completion: .file(extensions: ["jsonl", "json"]))
        ],
        options: [
            .init(
                name: "jobs", short: "j", value: "N", help: "jobs run at once (a worker pool)",
                defaultValue: "the number of cores"),
            .flag("unordered", "print each result as its job finishes instead of in line order"),
            .init(
                name: "shard", value: "I/N",
                help: "take only shard I of N: the jobs on lines L with (L - 1) mod N = I (0 ≤ I < N)"),
            .init(
                name: "shards", value: "N",
                help: "N shards, this one's index from $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)"),
        ],
        notes: #"""
            prints one line a job: {"id":…,"line":L,"kind":…,"status":"ok","skipped":false,"outputs":[…],"result":{…}} or {…,"status":"error","error":{"code":…,"message":…,"transient":…}}; a failed job does not stop the others
            a thumbnail whose output already holds this request's picture (its stamp), a storyboard whose storyboard.ftgst.json record still matches, or a preview with its stamp, is skipped: a rerun redoes only what is missing or stale
            exit status: 0 every job done; 65 some job failed for good (bad media or line); 75 some job failed transiently (network, a write, a remote deadline): retry
            """#)

    static func run(_ words: [String]) async throws -> Int32 {
        let arguments = try Arguments(words, spec: spec)
        if arguments.has("help") {
            print(spec.help)
            return 0
        }
        guard arguments.positionals.count == 1, let path = arguments.positionals.first else {
            throw usage(arguments.positionals.isEmpty ? "batch needs a JOBS.jsonl file" : "batch takes one jobs file")
        }
        var shard = BatchShard.all
        switch (arguments.string("shard"), arguments.string("shards")) {
        case (let text?, nil): shard = try BatchShard.parse(text)
        case (nil, let text?):
            shard = try BatchShard.fromEnvironment(shards: text, environment: ProcessInfo.processInfo.environment)
        case (_?, _?): throw usage("give --shard I/N or --shards N, not both")
        case (nil, nil): break
        }
        var workers = ProcessInfo.processInfo.activeProcessorCount
        if let value = try arguments.int("jobs") {
            guard (1...256).contains(value) else { throw usage("--jobs must be 1…256, got \(value)") }
            workers = Int(value)
        }
        let data = try Self.readJobs(path)
        // One process, many pipelines in turn: 11 % of the bench's samples were the kernel clearing pages that
        // the previous pipeline had freed (docs/PERFORMANCE.md, "Batch").
        ProcessMemory.keepFreedMemory()
        let summary = await Batch.run(jobs: data, shard: shard, workers: workers, ordered: !arguments.has("unordered"))
        {
            print($0.json.serialized)
            fflush(nil)  // each result out as it is known
        }
        FileHandle.standardError.write(Data((summary.description + "\n").utf8))
        return summary.exitStatus
    }

    /// The most a jobs line may hold, as a `serve` message: a line past it (`cat /dev/zero | ftgst batch -`) is
    /// refused when it is seen, never read whole.
    static let maxLineBytes = ServeCommand.maxMessageBytes
    /// The most a jobs file may hold: 256 MiB (a million jobs of 250 bytes).
    static let maxJobsBytes = 256 << 20

    /// The jobs from `path` (`-`: standard input), read as a stream, so that a FIFO or a process substitution
    /// (`ftgst batch <(…)`, `/dev/fd/63`) is read like a file; bounded by `maxLineBytes` a line and `maxJobsBytes`
    /// in all (INVALID_ARGUMENT past either). FILE_NOT_FOUND when it cannot be opened, a folder included.
    static func readJobs(_ path: String) throws -> Data {
        let handle: FileHandle
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue,
                let opened = FileHandle(forReadingAtPath: path)
            else { throw FilmtoneError(.fileNotFound, "no such jobs file: \(path)") }
            handle = opened
        }
        defer { if path != "-" { try? handle.close() } }
        var data = Data()
        var lineStart = 0
        while true {
            let chunk: Data
            do {
                guard let read = try handle.read(upToCount: 1 << 16), !read.isEmpty else { break }
                chunk = read
            } catch {
                throw FilmtoneError(.fileNotFound, "cannot read the jobs file \(path): \(error.localizedDescription)")
            }
            guard data.count + chunk.count <= maxJobsBytes else {
                throw FilmtoneError(.invalidArgument, "the jobs file is over \(maxJobsBytes >> 20) MiB")
            }
            let offset = data.count
            data.append(chunk)
            // Only the last line's start is needed per chunk (searched from its end); lines are counted for the
            // message alone.
            if let last = chunk.lastIndex(of: UInt8(ascii: "\n")) {
                lineStart = offset + chunk.distance(from: chunk.startIndex, to: last) + 1
            }
            guard data.count - lineStart <= maxLineBytes else {
                let line = data.prefix(lineStart).count { $0 == UInt8(ascii: "\n") } + 1
                throw FilmtoneError(.invalidArgument, "jobs line \(line) is over \(maxLineBytes >> 20) MiB")
            }
        }
        return data
    }
}
