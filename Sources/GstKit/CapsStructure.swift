internal import CGst
import Foundation

/// One field of a caps structure, copied out: the scalar types parsers and demuxers put in caps. Buffers
/// (`codec_data`), lists and ranges are not copied.
package enum CapsValue: Equatable, Sendable {
    case string(String)
    case int(Int)
    case fraction(Fraction)
    case bool(Bool)
}

/// The first structure of some caps as a plain Swift value (media type and scalar fields), so that everything
/// deciding on caps can be pure code with tests that need no GStreamer.
package struct CapsStructure: Sendable, Equatable {
    package var name: String
    package var fields: [String: CapsValue]

    package init(name: String, fields: [String: CapsValue] = [:]) {
        self.name = name
        self.fields = fields
    }

    package func string(_ key: String) -> String? {
        if case .string(let value)? = fields[key] { return value }
        return nil
    }

    package func int(_ key: String) -> Int? {
        if case .int(let value)? = fields[key] { return value }
        return nil
    }

    package func fraction(_ key: String) -> Fraction? {
        if case .fraction(let value)? = fields[key] { return value }
        return nil
    }

    package func bool(_ key: String) -> Bool? {
        if case .bool(let value)? = fields[key] { return value }
        return nil
    }
}

extension Caps {
    /// The first structure, copied with `gst_structure_get_*` per field: each getter succeeds only for its own
    /// GType, which saves reading `G_VALUE_TYPE` (a macro). `uint` fields (h264parse's `bit-depth-luma`) become
    /// `.int`. nil for empty or ANY caps.
    package var firstStructure: CapsStructure? {
        guard gst_caps_is_any(pointer) == 0, gst_caps_get_size(pointer) > 0,
            let structure = gst_caps_get_structure(pointer, 0)  // borrowed from the caps
        else { return nil }
        var copy = CapsStructure(name: GLib.borrowString(gst_structure_get_name(structure)) ?? "")
        for index in 0..<gst_structure_n_fields(structure) {
            guard let key = GLib.borrowString(gst_structure_nth_field_name(structure, guint(index))) else { continue }
            var number: gint = 0
            var unsigned: guint = 0
            var denominator: gint = 1
            var flag: gboolean = 0
            if let text = GLib.borrowString(gst_structure_get_string(structure, key)) {
                copy.fields[key] = .string(text)
            } else if gst_structure_get_int(structure, key, &number) != 0 {
                copy.fields[key] = .int(Int(number))
            } else if gst_structure_get_uint(structure, key, &unsigned) != 0 {
                copy.fields[key] = .int(Int(unsigned))
            } else if gst_structure_get_fraction(structure, key, &number, &denominator) != 0 {
                copy.fields[key] = .fraction(Fraction(Int(number), Int(denominator)))
            } else if gst_structure_get_boolean(structure, key, &flag) != 0 {
                copy.fields[key] = .bool(flag != 0)
            }
        }
        return copy
    }
}
