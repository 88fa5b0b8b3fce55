import FilmtoneCore
import Foundation

// `renderStoryboard`: the studio's timeline hover. An ftgst method, not one of the original plugin's.

extension MediaEngine {
    /// `renderStoryboard` (`{source, everyMs, tileWidth?, columns?, rows?, toleranceMs?}`): `ftgst storyboard` into
    /// the engine's preview folder. Each sheet is served like a preview (`url`) and the WebVTT text comes back with
    /// its cues naming those URLs (`url#xywh=x,y,w,h`), so a page reads the tile of a time from the cues alone.
    /// `{"sheets": [{"url"?, "path", "width", "height", "tiles"}…], "vtt": "WEBVTT…", "tileWidth", "tileHeight",
    /// "tiles", "everyMs", "durationMs"}`.
    func renderStoryboard(_ params: JSONValue, _ client: RPCClient) async throws -> JSONValue {
        let request = try MediaEngine.request(params)
        try request.refuseUnknownKeys(["source", "everyMs", "tileWidth", "columns", "rows", "toleranceMs"])
        guard let source = try request.string("source"), !source.isEmpty else {
            throw FilmtoneError(.invalidArgument, "renderStoryboard needs 'source'")
        }
        guard let every = try request.whole("everyMs") else {
            throw FilmtoneError(.invalidArgument, "renderStoryboard needs 'everyMs'")
        }
        if let allowed = client.allowed, case .local(let path) = try MediaSource.parse(source) {
            try allowed.check(path: path, "source")
        }
        // A folder of its own in the preview folder: Storyboards.make creates it and places the set there.
        let folder = try previews.nextPath(extension: "")
        var options = StoryboardOptions(source: source, outputDirectory: folder)
        options.intervalMilliseconds = every
        if let width = try request.whole("tileWidth") { options.tileWidth = Int(clamping: width) }
        if let columns = try request.whole("columns") { options.columns = Int(clamping: columns) }
        if let rows = try request.whole("rows") { options.rows = Int(clamping: rows) }
        if let tolerance = try request.whole("toleranceMs") { options.toleranceMilliseconds = tolerance }
        let result = try await Storyboards.make(options)
        // Each sheet moves out to a served name of the preview folder; the VTT's cues are pointed at it. What is
        // left (the VTT, which is returned as text, and the folder) is removed: the engine made both just now.
        var vtt = (try? String(contentsOfFile: result.vttPath, encoding: .utf8)) ?? ""
        var sheets: [JSONValue] = []
        for sheet in result.sheets {
            let name = (sheet.path as NSString).lastPathComponent
            let served = try previews.nextPath(extension: (name as NSString).pathExtension)
            guard rename(sheet.path, served) == 0 else {
                throw FilmtoneError(.writeFailed, "cannot move the storyboard sheet \(name) into the preview folder")
            }
            previews.wrote(served, served: client.previewURL != nil)
            var fields: [(String, JSONValue)] = [
                ("path", .string(served)), ("width", .int(Int64(sheet.width))), ("height", .int(Int64(sheet.height))),
                ("tiles", .int(Int64(sheet.tiles))),
            ]
            let reference = client.previewURL?((served as NSString).lastPathComponent) ?? served
            if client.previewURL != nil { fields.insert(("url", .string(reference)), at: 0) }
            vtt = vtt.replacingOccurrences(of: "\n" + name + "#", with: "\n" + reference + "#")
            sheets.append(.object(fields))
        }
        unlink(result.vttPath)
        rmdir(folder)
        return .object([
            ("sheets", .array(sheets)), ("vtt", .string(vtt)), ("tileWidth", .int(Int64(result.tileWidth))),
            ("tileHeight", .int(Int64(result.tileHeight))), ("tiles", .int(Int64(result.frameMilliseconds.count))),
            ("everyMs", .int(result.intervalMilliseconds)), ("durationMs", .int(result.durationMilliseconds)),
        ])
    }
}
