import FilmtoneCore
import Foundation

/// An export preset: a gst-launch-style pipeline template with named placeholders, read from a `*.preset` file
/// (`pipelines/presets/README.md` describes the format). Parsing is pure.
public struct ExportPreset: Equatable, Sendable {
    public enum SourceKind: String, Sendable {
        case video
        case image
    }

    public var name: String
    public var description: String
    /// Output extensions that choose this preset when none is named (lowercase, no dot).
    public var extensions: [String]
    public var sources: SourceKind
    /// The encoder's chroma subsampling needs even width and height.
    public var evenSize: Bool
    /// Bits per channel the preset carries.
    public var depth: Int
    /// Whether the container takes an AAC audio track (else the export has no audio).
    public var carriesAudio: Bool
    /// The template: whitespace-separated words, placeholders among them.
    public var template: [String]
    /// Where it was read from.
    public var path: String

    static let placeholders: Set<String> = ["{source}", "{size}", "{look}", "{trim}", "{audio}", "{output}"]

    /// Parses a preset file. Throws `INVALID_ARGUMENT` naming the file and line for a malformed one.
    static func parse(_ text: String, name: String, path: String) throws -> ExportPreset {
        func invalid(_ line: Int, _ reason: String) -> FilmtoneError {
            FilmtoneError(.invalidArgument, "preset \(path):\(line): \(reason)")
        }
        var fields: [String: String] = [:]
        var template: [String] = []
        var inPipeline = false
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#") || line.isEmpty { continue }
            if inPipeline {
                template += line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { throw invalid(index + 1, "expected 'key: value'") }
            let key = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if key == "pipeline" {
                inPipeline = true
                continue
            }
            guard ["description", "extensions", "sources", "even-size", "depth", "audio"].contains(key) else {
                throw invalid(index + 1, "unknown key '\(key)'")
            }
            fields[key] = value
        }
        guard !template.isEmpty else { throw invalid(0, "no pipeline") }
        for word in template where word.hasPrefix("{") && !placeholders.contains(word) {
            throw invalid(0, "unknown placeholder \(word)")
        }
        for required in ["{source}", "{size}", "{output}"] where !template.contains(required) {
            throw invalid(0, "the pipeline has no \(required)")
        }
        guard let sources = SourceKind(rawValue: fields["sources"] ?? "video") else {
            throw invalid(0, "sources must be video or image")
        }
        guard let depth = Int(fields["depth"] ?? "8"), [8, 10, 12, 16].contains(depth) else {
            throw invalid(0, "depth must be 8, 10, 12 or 16")
        }
        let audio = fields["audio"] ?? "none"
        guard ["aac", "none"].contains(audio) else { throw invalid(0, "audio must be aac or none") }
        return ExportPreset(
            name: name, description: fields["description"] ?? "",
            extensions: (fields["extensions"] ?? "").split(separator: " ").map { $0.lowercased() },
            sources: sources, evenSize: fields["even-size"] == "yes", depth: depth, carriesAudio: audio == "aac",
            template: template, path: path)
    }

    /// The JSON `ftgst presets` prints for it and the sidecar records.
    public var json: JSONValue {
        .object([
            ("name", .string(name)), ("description", .string(description)),
            ("extensions", .array(extensions.map { .string($0) })), ("sources", .string(sources.rawValue)),
            ("depth", .int(Int64(depth))), ("audio", .bool(carriesAudio)), ("path", .string(path)),
        ])
    }
}

/// The export presets: those in a presets folder when one is given (`ExportOptions.presets`, `ftgst --presets
/// DIR`), else in `$FTGST_PRESETS` when it is set, else the ones compiled into the library (`builtin`, generated
/// from `pipelines/presets` by `scripts/builtin-presets`). A folder replaces the built-in presets, it does not add
/// to them. Nothing depends on where the executable is: a program that links FilmtoneGst, or an installed ftgst,
/// has the same presets as this checkout.
public enum ExportPresets {
    /// Every preset, sorted by name. `folder` (nil: `$FTGST_PRESETS`, else the built-in presets) is a folder of
    /// `*.preset` files. Throws `INVALID_ARGUMENT` for an empty folder value or a malformed preset file,
    /// `FILE_NOT_FOUND` if the folder does not exist, holds no preset, or a preset cannot be read.
    public static func all(
        folder: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> [ExportPreset] {
        switch try location(folder: folder, environment: environment) {
        case .builtin: return try builtinPresets()
        case .folder(let path): return try read(folder: path)
        }
    }

    /// The preset named `name` among `all(folder:environment:)`; `INVALID_ARGUMENT` listing the known ones
    /// otherwise.
    public static func named(
        _ name: String, folder: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> ExportPreset {
        try named(name, among: try all(folder: folder, environment: environment))
    }

    /// The preset named `name` among `presets`; `INVALID_ARGUMENT` listing the known ones otherwise.
    static func named(_ name: String, among presets: [ExportPreset]) throws -> ExportPreset {
        guard let preset = presets.first(where: { $0.name == name }) else {
            throw FilmtoneError(
                .invalidArgument,
                "unknown preset '\(name)' (known: "
                    + presets.map(\.name).joined(separator: ", ") + ")")
        }
        return preset
    }

    /// The preset an export uses when none is named: the first for the source's kind whose extensions include
    /// OUT's. nil when none does: an H.264 MP4 written to `out.png` or `out.webm` would be a file that lies
    /// about what it is, so the caller refuses instead of guessing.
    static func choose(for output: String, isImage: Bool, among presets: [ExportPreset]) -> ExportPreset? {
        let ext = (output as NSString).pathExtension.lowercased()
        let kind: ExportPreset.SourceKind = isImage ? .image : .video
        return presets.first { $0.sources == kind && $0.extensions.contains(ext) }
    }

    // MARK: - Where presets come from

    enum Location: Equatable {
        case builtin
        case folder(String)
    }

    /// Pure: the folder given, else `$FTGST_PRESETS` when set and not empty, else the built-in presets.
    static func location(folder: String?, environment: [String: String]) throws -> Location {
        if let folder {
            guard !folder.isEmpty else { throw FilmtoneError(.invalidArgument, "the presets folder is empty") }
            return .folder(folder)
        }
        if let explicit = environment["FTGST_PRESETS"], !explicit.isEmpty { return .folder(explicit) }
        return .builtin
    }

    /// The compiled-in presets, parsed; their `path` is `builtin:NAME.preset`.
    static func builtinPresets() throws -> [ExportPreset] {
        try builtin.sorted { $0.file < $1.file }.map { entry in
            try ExportPreset.parse(
                entry.text, name: String(entry.file.dropLast(".preset".count)), path: "builtin:\(entry.file)")
        }
    }

    static func read(folder: String) throws -> [ExportPreset] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw FilmtoneError(.fileNotFound, "no preset folder \(folder)")
        }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasSuffix(".preset") && $0 != ".preset" }.sorted()
        guard !names.isEmpty else { throw FilmtoneError(.fileNotFound, "no *.preset file in \(folder)") }
        return try names.map { file in
            let path = (folder as NSString).appendingPathComponent(file)
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
            else { throw FilmtoneError(.fileNotFound, "cannot read preset \(path)") }
            return try ExportPreset.parse(text, name: String(file.dropLast(".preset".count)), path: path)
        }
    }
}
