internal import CGio

/// A D-Bus value, built in Swift and turned into a `GVariant` only inside DBusKit (and back for replies and
/// signals), so no other module touches GLib's types.
public indirect enum DBusValue: Sendable, Equatable {
    case byte(UInt8)
    case bool(Bool)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// An index into the message's file-descriptor list (`h`).
    case handle(Int32)
    case variant(DBusValue)
    /// An array of `elementType` (a D-Bus type string, `s`, `a{sv}`, `(sa(us))`…). For dictionaries other than
    /// `a{sv}` the element type is `{KV}` and each element a two-value `.tuple`.
    case array(elementType: String, [DBusValue])
    /// `a{sv}`, the options and results dictionary of every portal call; values are wrapped in variants on the wire.
    case vardict([String: DBusValue])
    case tuple([DBusValue])

    /// `ay` holding `text`'s bytes and a closing NUL: the portal's byte-string paths (`current_folder`).
    public static func byteString(_ text: String) -> DBusValue {
        .array(elementType: "y", (Array(text.utf8) + [0]).map { .byte($0) })
    }

    /// The D-Bus type string.
    public var typeString: String {
        switch self {
        case .byte: return "y"
        case .bool: return "b"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .handle: return "h"
        case .variant: return "v"
        case .array(let element, _): return "a" + element
        case .vardict: return "a{sv}"
        case .tuple(let values): return "(" + values.map(\.typeString).joined() + ")"
        }
    }

    // MARK: Reading

    public var string: String? {
        switch self {
        case .string(let text), .objectPath(let text): return text
        case .variant(let inner): return inner.string
        default: return nil
        }
    }

    public var uint32: UInt32? {
        switch self {
        case .uint32(let value): return value
        case .variant(let inner): return inner.uint32
        default: return nil
        }
    }

    public var bool: Bool? {
        switch self {
        case .bool(let value): return value
        case .variant(let inner): return inner.bool
        default: return nil
        }
    }

    /// The values of a tuple (a reply's or a signal's arguments), an array or a variant's inner array.
    public var elements: [DBusValue] {
        switch self {
        case .tuple(let values), .array(_, let values): return values
        case .variant(let inner): return inner.elements
        default: return []
        }
    }

    public var dictionary: [String: DBusValue] {
        switch self {
        case .vardict(let entries): return entries
        case .variant(let inner): return inner.dictionary
        default: return [:]
        }
    }

    /// The inner value of a variant (itself otherwise).
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    /// A byte string (`ay`, NUL-terminated or not) as text.
    public var byteStringText: String? {
        guard case .array("y", let bytes) = unwrapped else { return nil }
        var raw: [UInt8] = bytes.compactMap { if case .byte(let b) = $0 { return b } else { return nil } }
        if raw.last == 0 { raw.removeLast() }
        return String(decoding: raw, as: UTF8.self)
    }
}

// MARK: - GVariant

extension DBusValue {
    /// A new floating `GVariant` (consumed by the call it is passed to), or nil when a string is not valid for its
    /// type (an object path or signature that GLib would refuse with a critical warning).
    func makeVariant() -> OpaquePointer? {
        switch self {
        case .byte(let value): return g_variant_new_byte(value)
        case .bool(let value): return g_variant_new_boolean(value ? 1 : 0)
        case .int32(let value): return g_variant_new_int32(value)
        case .uint32(let value): return g_variant_new_uint32(value)
        case .int64(let value): return g_variant_new_int64(gint64(value))
        case .uint64(let value): return g_variant_new_uint64(guint64(value))
        case .double(let value): return g_variant_new_double(value)
        case .handle(let value): return g_variant_new_handle(value)
        case .string(let text):
            guard !text.utf8.contains(0) else { return nil }
            return g_variant_new_string(text)
        case .objectPath(let text):
            guard g_variant_is_object_path(text) != 0 else { return nil }
            return g_variant_new_object_path(text)
        case .signature(let text):
            guard g_variant_is_signature(text) != 0 else { return nil }
            return g_variant_new_signature(text)
        case .variant(let inner):
            return inner.makeVariant().map { g_variant_new_variant($0) }
        case .tuple(let values):
            return Self.withChildren(values.map { $0.makeVariant() }) { g_variant_new_tuple($0, gsize($1)) }
        case .vardict(let entries):
            let children = entries.sorted { $0.key < $1.key }.map { key, value -> OpaquePointer? in
                guard let inner = value.makeVariant(), let name = DBusValue.string(key).makeVariant() else {
                    return nil
                }
                return g_variant_new_dict_entry(name, g_variant_new_variant(inner))
            }
            return Self.array(of: "{sv}", children)
        case .array(let element, let values):
            let children = values.map { value -> OpaquePointer? in
                if element.hasPrefix("{"), case .tuple(let pair) = value, pair.count == 2 {
                    guard let key = pair[0].makeVariant(), let inner = pair[1].makeVariant() else { return nil }
                    return g_variant_new_dict_entry(key, inner)
                }
                return value.makeVariant()
            }
            return Self.array(of: element, children)
        }
    }

    private static func array(of element: String, _ children: [OpaquePointer?]) -> OpaquePointer? {
        guard g_variant_type_string_is_valid(element) != 0 else {
            release(children)
            return nil
        }
        let type = g_variant_type_new(element)
        defer { g_variant_type_free(type) }
        return withChildren(children) { g_variant_new_array(type, $0, gsize($1)) }
    }

    /// Frees floating children that will not be used.
    private static func release(_ children: [OpaquePointer?]) {
        for child in children { if let child { g_variant_unref(g_variant_ref_sink(child)) } }
    }

    /// Calls `make` with the children when all were made; otherwise frees those that were and returns nil.
    private static func withChildren(
        _ children: [OpaquePointer?], _ make: (UnsafePointer<OpaquePointer?>?, Int) -> OpaquePointer?
    ) -> OpaquePointer? {
        guard children.allSatisfy({ $0 != nil }) else {
            release(children)
            return nil
        }
        return children.withUnsafeBufferPointer { make($0.baseAddress, $0.count) }
    }

    /// The value a `GVariant` holds (borrowed: not unreffed here).
    init(variant: OpaquePointer) {
        let type = String(cString: g_variant_get_type_string(variant))
        switch type.first {
        case "y": self = .byte(g_variant_get_byte(variant))
        case "b": self = .bool(g_variant_get_boolean(variant) != 0)
        case "n": self = .int32(Int32(g_variant_get_int16(variant)))
        case "q": self = .uint32(UInt32(g_variant_get_uint16(variant)))
        case "i": self = .int32(g_variant_get_int32(variant))
        case "u": self = .uint32(g_variant_get_uint32(variant))
        case "x": self = .int64(Int64(g_variant_get_int64(variant)))
        case "t": self = .uint64(UInt64(g_variant_get_uint64(variant)))
        case "d": self = .double(g_variant_get_double(variant))
        case "h": self = .handle(g_variant_get_handle(variant))
        case "s": self = .string(String(cString: g_variant_get_string(variant, nil)))
        case "o": self = .objectPath(String(cString: g_variant_get_string(variant, nil)))
        case "g": self = .signature(String(cString: g_variant_get_string(variant, nil)))
        case "v":
            let inner = g_variant_get_variant(variant)!
            defer { g_variant_unref(inner) }
            self = .variant(DBusValue(variant: inner))
        case "a" where type == "a{sv}":
            var entries: [String: DBusValue] = [:]
            for entry in Self.children(of: variant) {
                guard case .tuple(let pair) = entry, pair.count == 2, let key = pair[0].string else { continue }
                entries[key] = pair[1].unwrapped
            }
            self = .vardict(entries)
        case "a": self = .array(elementType: String(type.dropFirst()), Self.children(of: variant))
        default: self = .tuple(Self.children(of: variant))  // `(…)`, a dict entry `{…}`, a maybe `m…`
        }
    }

    private static func children(of variant: OpaquePointer) -> [DBusValue] {
        (0..<g_variant_n_children(variant)).map { index in
            let child = g_variant_get_child_value(variant, index)!
            defer { g_variant_unref(child) }
            return DBusValue(variant: child)
        }
    }
}
