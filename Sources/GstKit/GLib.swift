package import CGst
import Foundation

/// Copying GLib values into Swift values at once, freeing the C side beside the call (STYLE lesson 5).
package enum GLib {
    package struct ErrorValue {
        package var domain: GQuark
        package var code: Int
        package var message: String
    }

    /// Takes a transfer-full `GError*`: copies it out and frees it.
    package static func takeError(_ error: UnsafeMutablePointer<GError>?) -> ErrorValue? {
        guard let error else { return nil }
        defer { g_error_free(error) }
        let message = error.pointee.message.map { String(cString: $0) } ?? ""
        return ErrorValue(domain: error.pointee.domain, code: Int(error.pointee.code), message: message)
    }

    /// Takes a transfer-full `gchar*`: copies it and `g_free`s it.
    package static func takeString(_ string: UnsafeMutablePointer<gchar>?) -> String? {
        guard let string else { return nil }
        defer { g_free(string) }
        return String(cString: string)
    }

    /// Reads a borrowed `const gchar*` (nothing to free).
    package static func borrowString(_ string: UnsafePointer<gchar>?) -> String? {
        string.map { String(cString: $0) }
    }

    /// Lowercase hex MD5 of `text`'s UTF-8 (`g_compute_checksum_for_string`): the freedesktop thumbnail cache
    /// names a thumbnail by the MD5 of its URI.
    package static func md5Hex(_ text: String) -> String {
        takeString(g_compute_checksum_for_string(G_CHECKSUM_MD5, text, -1)) ?? ""
    }

    /// The `file://` URI GLib gives an absolute path (`g_filename_to_uri`): the one GNOME's file managers compute,
    /// so the freedesktop cache's key matches theirs. nil for a relative path.
    package static func fileURI(path: String) -> String? {
        var error: UnsafeMutablePointer<GError>? = nil
        let uri = takeString(g_filename_to_uri(path, nil, &error))
        _ = takeError(error)
        return uri
    }

    /// Adopts a pointer from a GObject-family cast where C would use a cast macro (`GST_BIN`, `GST_APP_SINK`).
    package static func cast<T, U>(_ pointer: UnsafeMutablePointer<T>, to: U.Type) -> UnsafeMutablePointer<U> {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: U.self)
    }
}
