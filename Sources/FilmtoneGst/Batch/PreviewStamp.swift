import FilmtoneCore
import Foundation

/// What makes a preview job of `ftgst batch` skippable on a rerun: its image is stamped (`ImageStamp`, the JPEG
/// comment or PNG `tEXt` chunk a thumbnail carries) with its request's key — SHA-256 of the source's identity,
/// each LUT file's identity (path, size, mtime in ns, inode) and every option the picture depends on. A rerun whose
/// output carries the same key returns it without decoding; anything else is rendered again. The `preview` command
/// itself writes no stamp.
enum PreviewStamp {
    /// The request, checked as `Previews.render` checks it (the LUT files parsed: the same errors), and its key.
    static func key(_ options: PreviewOptions) throws -> (request: PreviewRequest, key: String) {
        let request = try PreviewRequest(options)
        let look = request.frame.look
        var lines = ["ftgst-preview v1"] + (try MezzanineStore.identity(of: request.frame.source).keyLines())
        for (slot, path) in [("input-lut ", look?.inputLUT), ("creative-lut ", look?.creativeLUT)] {
            lines +=
                try path.map { try MezzanineStore.identity(of: .local(path: $0)).keyLines(prefix: slot) } ?? [
                    slot + "-"
                ]
        }
        let text =
            (lines + [
                "intensity \(look.map { String($0.intensity) } ?? "-")",
                "interpolation \(look?.interpolation.rawValue ?? "-")",
                "time-ms \(request.frame.time.milliseconds)", "tolerance-ms \(request.frame.tolerance.milliseconds)",
                "box \(request.frame.maxWidth)x\(request.frame.maxHeight)", "format \(request.format.rawValue)",
                "quality \(request.format == .jpeg ? String(request.quality) : "-")", "mezzanine \(options.mezzanine)",
                "tone-map \(request.frame.toneMap ? "on" : "off")",
            ]).joined(separator: "\n")
        return (request, SHA256.hex(of: Array(text.utf8)))
    }

    /// The result of a preview already at the request's output with `key`'s stamp, or nil.
    static func valid(_ request: PreviewRequest, key: String) -> JSONValue? {
        guard let data = FileManager.default.contents(atPath: request.output.path),
            let stamp = ImageStamp.read([UInt8](data)), stamp.request == key, stamp.format == request.format
        else { return nil }
        return .object([
            ("path", .string(request.output.path)), ("width", .int(Int64(stamp.width))),
            ("height", .int(Int64(stamp.height))), ("timeMs", .int(stamp.timeMilliseconds)),
        ])
    }

    /// Renders the preview, stamped with `key`.
    static func render(_ request: PreviewRequest, key: String) async throws -> PreviewResult {
        try await runDetached { isCancelled in try Previews.run(request, stamp: key, isCancelled: isCancelled) }
    }
}
