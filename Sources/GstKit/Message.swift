package import CGst
import FilmtoneCore
import Foundation

/// A bus message as a typed Swift value, copied out of the C message (which is then released by `Bus`).
package enum Message {
    case error(FilmtoneError.GStreamerCause)
    case warning(String)
    case endOfStream
    case asyncDone
    case other

    /// The message kinds ftgst waits for.
    package struct Kinds: OptionSet {
        package let rawValue: Int32
        package init(rawValue: Int32) { self.rawValue = rawValue }
        package static let error = Kinds(rawValue: GST_MESSAGE_ERROR.rawValue)
        package static let warning = Kinds(rawValue: GST_MESSAGE_WARNING.rawValue)
        package static let endOfStream = Kinds(rawValue: GST_MESSAGE_EOS.rawValue)
        package static let asyncDone = Kinds(rawValue: GST_MESSAGE_ASYNC_DONE.rawValue)
    }

    /// Copies what ftgst needs out of a borrowed message.
    package init(copying message: UnsafeMutablePointer<GstMessage>) {
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
    package static func domainName(_ quark: GQuark) -> String {
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
package enum GstErrorCode {
    package static let coreMissingPlugin = Int(GST_CORE_ERROR_MISSING_PLUGIN.rawValue)
    package static let resourceNotFound = Int(GST_RESOURCE_ERROR_NOT_FOUND.rawValue)
    package static let resourceOpenRead = Int(GST_RESOURCE_ERROR_OPEN_READ.rawValue)
    package static let resourceRead = Int(GST_RESOURCE_ERROR_READ.rawValue)
    package static let resourceNotAuthorized = Int(GST_RESOURCE_ERROR_NOT_AUTHORIZED.rawValue)
    package static let resourceSeek = Int(GST_RESOURCE_ERROR_SEEK.rawValue)
    package static let resourceWrite = Int(GST_RESOURCE_ERROR_WRITE.rawValue)
    package static let resourceNoSpaceLeft = Int(GST_RESOURCE_ERROR_NO_SPACE_LEFT.rawValue)
    package static let streamFailed = Int(GST_STREAM_ERROR_FAILED.rawValue)
    package static let streamTypeNotFound = Int(GST_STREAM_ERROR_TYPE_NOT_FOUND.rawValue)
    package static let streamWrongType = Int(GST_STREAM_ERROR_WRONG_TYPE.rawValue)
    package static let streamCodecNotFound = Int(GST_STREAM_ERROR_CODEC_NOT_FOUND.rawValue)
    package static let streamDecode = Int(GST_STREAM_ERROR_DECODE.rawValue)
    package static let streamDemux = Int(GST_STREAM_ERROR_DEMUX.rawValue)
    package static let streamFormat = Int(GST_STREAM_ERROR_FORMAT.rawValue)
}
