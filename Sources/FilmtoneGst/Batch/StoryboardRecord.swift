import FilmtoneCore
import Foundation

/// What makes a storyboard job of `ftgst batch` skippable on a rerun, as a thumbnail's stamp does: a record,
/// `storyboard.ftgst.json` in the job's folder, written (through `StagedFile`) once the storyboard is made. It
/// holds the request's key — SHA-256 of the source's identity (path, size, mtime in ns, inode; URL for remote)
/// and every option the files depend on —, the result object, and the SHA-256 of each file the result names. A
/// rerun whose key matches and whose files all still hash the same is answered from the record without decoding;
/// anything else (no record, another key, a file missing, changed or cut short) makes the storyboard again.
enum StoryboardRecord {
    static let name = "storyboard.ftgst.json"

    /// The key of `options` against the source as it is now (`FILE_NOT_FOUND` if a local source is gone).
    static func key(_ options: StoryboardOptions) throws -> String {
        let request = try StoryboardRequest(options)
        let identity = try MezzanineStore.identity(of: request.frame.source)
        let text =
            (["ftgst-storyboard v1"] + identity.keyLines() + [
                "width \(options.tileWidth)",
                "grid \(request.columns)x\(request.rows)", "every-ms \(request.intervalMilliseconds)",
                "tolerance-ms \(request.toleranceMilliseconds)", "quality \(request.quality)",
                "tone-map \(request.frame.toneMap ? "on" : "off")",
            ]).joined(separator: "\n")
        return SHA256.hex(of: Array(text.utf8))
    }

    /// The recorded result when the folder's record has `key` and every file it names is unchanged; else nil.
    static func valid(in directory: URL, key: String) -> (result: JSONValue, files: [String])? {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path),
            case .object(let fields)? = try? JSONValue.parse([UInt8](data))
        else { return nil }
        let record = Dictionary(fields, uniquingKeysWith: { first, _ in first })
        guard case .string(key)? = record["key"], let result = record["result"],
            case .array(let files)? = record["files"]
        else { return nil }
        var paths: [String] = []
        for file in files {
            guard case .object(let entry) = file else { return nil }
            let named = Dictionary(entry, uniquingKeysWith: { first, _ in first })
            guard case .string(let fileName)? = named["name"], case .string(let digest)? = named["sha256"],
                !fileName.isEmpty, !fileName.contains("/"), fileName != "..", fileName != "."
            else { return nil }
            let path = directory.appendingPathComponent(fileName).path
            guard (try? SHA256.hash(file: path)) == digest else { return nil }
            paths.append(path)
        }
        return paths.isEmpty ? nil : (result, paths)
    }

    /// Writes the record of `made` (made for `key`) into its folder, replacing an older one.
    static func write(_ made: StoryboardResult, key: String) throws {
        let directory = URL(fileURLWithPath: made.directory)
        var files: [JSONValue] = []
        for path in made.sheets.map(\.path) + [made.vttPath] {
            guard let digest = try? SHA256.hash(file: path) else {
                throw FilmtoneError(.writeFailed, "cannot read back \(path) to record it")
            }
            files.append(
                .object([("name", .string(URL(fileURLWithPath: path).lastPathComponent)), ("sha256", .string(digest))]))
        }
        let record = JSONValue.object([
            ("ftgst", .string("storyboard record v1")), ("key", .string(key)), ("result", made.json),
            ("files", .array(files)),
        ])
        let staged = try StagedFile(beside: directory.appendingPathComponent(name))
        try staged.write(Array((record.serialized + "\n").utf8))
        try staged.commit(replacing: true)
    }
}
