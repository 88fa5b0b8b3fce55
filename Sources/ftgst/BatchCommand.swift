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
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw FilmtoneError(.fileNotFound, "no such jobs file: \(path)")
            }
            data = contents
        }
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
}
