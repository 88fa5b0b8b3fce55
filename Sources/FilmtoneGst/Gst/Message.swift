internal import CGst
import Foundation

/// A bus message as a typed Swift value, copied out of the C message (which is then released by `Bus`).
enum Message {
    case error(FilmtoneError.GStreamerCause)
    case warning(String)
    case endOfStream
    case asyncDone
    case other

    /// The message kinds ftgst waits for.
    struct Kinds: OptionSet {
        let rawValue: Int32
        static let error = Kinds(rawValue: GST_MESSAGE_ERROR.rawValue)
        static let warning = Kinds(rawValue: GST_MESSAGE_WARNING.rawValue)
        static let endOfStream = Kinds(rawValue: GST_MESSAGE_EOS.rawValue)
        static let asyncDone = Kinds(rawValue: GST_MESSAGE_ASYNC_DONE.rawValue)
    }

    /// Copies what ftgst needs out of a borrowed message.
    init(copying message: UnsafeMutablePointer<GstMessage>) {
        switch message.pointee.type {
        case GST_MESSAGE_ERROR:
            self = .error(Message.errorCause(message))
        case GST_MESSAGE_WARNING:
            var error: UnsafeMutablePointer<GError>? = nil
            var debug: UnsafeMutablePointer<gchar>? = nil
            gst_message_parse_warning(message, &error, &debug)
            _ = GLib.takeString(debug)
            self = .warning(GLib.takeError(error)?.message ?? "")
        case GST_MESSAGE_EOS:
            self = .endOfStream
        case GST_MESSAGE_ASYNC_DONE:
            self = .asyncDone
        default:
            self = .other
        }
    }

    /// The error, its debug text, the posting element and its factory, and the HTTP status when there is one.
    private static func errorCause(_ message: UnsafeMutablePointer<GstMessage>) -> FilmtoneError.GStreamerCause {
        var error: UnsafeMutablePointer<GError>? = nil
        var debug: UnsafeMutablePointer<gchar>? = nil
        gst_message_parse_error(message, &error, &debug)  // both transfer full
        let debugText = GLib.takeString(debug)
        let value = GLib.takeError(error)

        var httpStatus: Int? = nil
        var details: UnsafePointer<GstStructure>? = nil
        gst_message_parse_error_details(message, &details)  // transfer none
        if let details {
            var status: guint = 0
            if gst_structure_get_uint(details, "http-status-code", &status) != 0 { httpStatus = Int(status) }
        }

        var elementName: String? = nil
        var factory: String? = nil
        if let source = message.pointee.src {  // GST_MESSAGE_SRC, borrowed
            elementName = GLib.takeString(gst_object_get_name(source))
            if ftgst_is_element(source) != 0 {
                factory = Element.factoryName(of: GLib.cast(source, to: GstElement.self))
            }
        }
        return FilmtoneError.GStreamerCause(
            domain: value.map { domainName($0.domain) } ?? "unknown", code: value?.code ?? 0,
            message: value?.message ?? "", debug: debugText, element: elementName, factory: factory,
            httpStatus: httpStatus)
    }

    /// The error-domain macros (`GST_RESOURCE_ERROR`…) are quark functions in Swift.
    static func domainName(_ quark: GQuark) -> String {
        switch quark {
        case gst_core_error_quark(): return "core"
        case gst_library_error_quark(): return "library"
        case gst_resource_error_quark(): return "resource"
        case gst_stream_error_quark(): return "stream"
        default: return GLib.borrowString(g_quark_to_string(quark)) ?? "unknown"
        }
    }
}

/// Error codes of GStreamer's domains that ftgst classifies, pinned to the C enums by a unit test.
enum GstErrorCode {
    static let coreMissingPlugin = Int(GST_CORE_ERROR_MISSING_PLUGIN.rawValue)
    static let resourceNotFound = Int(GST_RESOURCE_ERROR_NOT_FOUND.rawValue)
    static let resourceOpenRead = Int(GST_RESOURCE_ERROR_OPEN_READ.rawValue)
    static let resourceRead = Int(GST_RESOURCE_ERROR_READ.rawValue)
    static let resourceNotAuthorized = Int(GST_RESOURCE_ERROR_NOT_AUTHORIZED.rawValue)
    static let resourceSeek = Int(GST_RESOURCE_ERROR_SEEK.rawValue)
    static let resourceWrite = Int(GST_RESOURCE_ERROR_WRITE.rawValue)
    static let resourceNoSpaceLeft = Int(GST_RESOURCE_ERROR_NO_SPACE_LEFT.rawValue)
    static let streamFailed = Int(GST_STREAM_ERROR_FAILED.rawValue)
    static let streamTypeNotFound = Int(GST_STREAM_ERROR_TYPE_NOT_FOUND.rawValue)
    static let streamWrongType = Int(GST_STREAM_ERROR_WRONG_TYPE.rawValue)
    static let streamCodecNotFound = Int(GST_STREAM_ERROR_CODEC_NOT_FOUND.rawValue)
    static let streamDecode = Int(GST_STREAM_ERROR_DECODE.rawValue)
    static let streamDemux = Int(GST_STREAM_ERROR_DEMUX.rawValue)
    static let streamFormat = Int(GST_STREAM_ERROR_FORMAT.rawValue)
}
