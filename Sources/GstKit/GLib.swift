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

    /// Adopts a pointer from a GObject-family cast where C would use a cast macro (`GST_BIN`, `GST_APP_SINK`).
    package static func cast<T, U>(_ pointer: UnsafeMutablePointer<T>, to: U.Type) -> UnsafeMutablePointer<U> {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: U.self)
    }
}
