import FilmtoneCore
import FilmtoneElements
import Foundation
import GstKit

/// Decides which `FilmtoneError` code a GStreamer error becomes. Pure, so every rule has a unit test.
///
/// The element that posted the error decides first (GSTREAMER-NOTES: a NOT_FOUND from the HTTP source is a
/// remote failure, not a missing local file; network failures surface only as STREAM/FAILED from it).
enum ErrorClassifier {
    static let httpSources: Set<String> = ["souphttpsrc", "curlhttpsrc"]

    static func classify(_ cause: FilmtoneError.GStreamerCause, remote: Bool) -> FilmtoneError {
        FilmtoneError(code(for: cause, remote: remote), message(for: cause), cause: cause)
    }

    static func code(for cause: FilmtoneError.GStreamerCause, remote: Bool) -> FilmtoneError.Code {
        if let factory = cause.factory, httpSources.contains(factory) { return .remoteFetchFailed }
        if cause.factory == LUTFilterElement.factoryName {
            // ftlut reports an unreadable file as RESOURCE/NOT_FOUND, a file that does not parse as RESOURCE/SETTINGS,
            // and a look table it cannot allocate as CORE/FAILED.
            switch (cause.domain, cause.code) {
            case ("resource", GstErrorCode.resourceNotFound): return .fileNotFound
            case ("core", _): return .internalError
            default: return .lutInvalid
            }
        }
        switch (cause.domain, cause.code) {
        case ("core", GstErrorCode.coreMissingPlugin), ("stream", GstErrorCode.streamCodecNotFound):
            return .unsupportedFormat
        case ("resource", GstErrorCode.resourceWrite), ("resource", GstErrorCode.resourceNoSpaceLeft):
            return .writeFailed
        case ("resource", _):
            // Reading failed below the demuxer. For a remote source that is the network (e.g. a seek the
            // server cannot honour without Range); locally, the file vanished or cannot be opened.
            if remote { return .remoteFetchFailed }
            return cause.code == GstErrorCode.resourceNotFound ? .fileNotFound : .decodeFailed
        default:
            return .decodeFailed
        }
    }

    private static func message(for cause: FilmtoneError.GStreamerCause) -> String {
        var text = cause.message.isEmpty ? "GStreamer error" : cause.message
        // souphttpsrc reports a refused connection, an unknown host, a TLS failure or a reset alike, as a bare
        // STREAM/FAILED "Internal data stream error" with no HTTP status; say what it means for the user.
        if let factory = cause.factory, httpSources.contains(factory), cause.httpStatus == nil,
            cause.domain == "stream", cause.code == GstErrorCode.streamFailed
        {
            text =
                "could not connect to or read from the server (connection refused, unknown host, TLS failure "
                + "or connection reset)"
        }
        // A demuxer whose every stream is unlinked: the frame pipelines link only a video stream, so the source has
        // none (an audio-only file), which GStreamer words as a bare "Internal data stream error".
        if isNoVideoStream(cause) { text = "the source has no video stream" }
        if let status = cause.httpStatus { text += " (HTTP \(status))" }
        if let element = cause.element { text += " [\(element)]" }
        return text
    }

    /// STREAM/FAILED from a demuxer whose debug text gives the flow `not-linked`.
    static func isNoVideoStream(_ cause: FilmtoneError.GStreamerCause) -> Bool {
        guard cause.domain == "stream", cause.code == GstErrorCode.streamFailed,
            let factory = cause.factory, factory.contains("demux")
        else { return false }
        return cause.debug?.contains("reason not-linked") == true
    }
}
