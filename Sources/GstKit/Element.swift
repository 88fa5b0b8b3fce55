package import CGst
import FilmtoneCore
import Foundation

/// A value for `Element.setProperty`. Each case is put into a `GValue` of the property's own declared type (never
/// through variadic `g_object_set`, whose C types are easy to get wrong).
package enum PropertyValue {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    /// For enum and flags properties: the nick or value as `gst-launch-1.0` would spell it.
    case nick(String)
    case caps(Caps)
    /// A `GstStructure` built from string fields (e.g. souphttpsrc's `extra-headers`).
    case structure(name: String, fields: [(String, String)])
}

/// Owns one reference to a `GstElement` (gstreamer-rs style: the ownership is named at construction).
// @unchecked Sendable: the only state is the immutable pointer; GstObject reference counting is atomic and
// GObject property access takes the object's lock, which GLib guarantees for every thread.
package final class Element: @unchecked Sendable {
    package let pointer: UnsafeMutablePointer<GstElement>

    /// Adopts a floating reference (`gst_element_factory_make`, `gst_parse_launch`) by sinking it.
    package init(sinkingFloating pointer: UnsafeMutablePointer<GstElement>) {
        gst_object_ref_sink(pointer)
        self.pointer = pointer
    }

    /// Adopts a transfer-full reference as is (`gst_bin_get_by_name`).
    package init(takingFull pointer: UnsafeMutablePointer<GstElement>) {
        self.pointer = pointer
    }

    /// Adds a reference to a borrowed pointer (signal arguments).
    package init(borrowing pointer: UnsafeMutablePointer<GstElement>) {
        gst_object_ref(pointer)
        self.pointer = pointer
    }

    deinit {
        gst_object_unref(pointer)
    }

    /// `gst_element_factory_make`. Throws `UNSUPPORTED_FORMAT` when the factory is not installed.
    package static func make(_ factory: String, name: String? = nil) throws -> Element {
        guard let raw = gst_element_factory_make(factory, name) else {
            throw FilmtoneError(.unsupportedFormat, "GStreamer element '\(factory)' is not installed")
        }
        return Element(sinkingFloating: raw)
    }

    /// `gst_object_get_name`.
    package var name: String { GLib.takeString(gst_object_get_name(objectPointer)) ?? "" }

    /// The name of the factory that made this element (e.g. `souphttpsrc`), via `gst_element_get_factory`.
    package var factoryName: String? { Element.factoryName(of: pointer) }

    package static func factoryName(of element: UnsafeMutablePointer<GstElement>) -> String? {
        // gst_element_get_factory: transfer none.
        guard let factory = gst_element_get_factory(element) else { return nil }
        // GstElementFactory is opaque in Swift; it is a GstObject.
        return GLib.takeString(gst_object_get_name(UnsafeMutablePointer<GstObject>(factory)))
    }

    package var objectPointer: UnsafeMutablePointer<GstObject> { GLib.cast(pointer, to: GstObject.self) }

    /// The factory's klass metadata (e.g. `Codec/Decoder/Video`), via `gst_element_factory_get_metadata`.
    package var factoryKlass: String {
        guard let factory = gst_element_get_factory(pointer) else { return "" }
        return GLib.borrowString(gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS)) ?? ""
    }

    /// The klass metadata of the installed factory `name` (e.g. `Codec/Muxer`), "" when not installed
    /// (`gst_element_factory_find`, transfer full).
    package static func factoryKlass(named name: String) -> String {
        guard (try? GstRuntime.ensure()) != nil, let factory = gst_element_factory_find(name) else { return "" }
        defer { gst_object_unref(UnsafeMutableRawPointer(factory)) }
        return GLib.borrowString(gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS)) ?? ""
    }

    // MARK: - Properties

    package func hasProperty(_ name: String) -> Bool {
        ftgst_find_property(pointer, name) != nil
    }

    /// Sets a property through a `GValue` of the property's declared type. Throws `INTERNAL` for a property the
    /// element does not have or a value that does not convert: both are mistakes in ftgst's own recipes.
    /// Posts a STREAM/CODEC_NOT_FOUND error with the given message from this element, as a decoder that cannot take a
    /// stream does: for a probe on one of the element's pads that finds the stream cannot be shown (a Dolby Vision
    /// profile 5 track). A closure that does not keep this wrapper or the element alive (the element outlives the
    /// probes on its pads). Any thread.
    package var codecNotFoundPoster: @Sendable (String) -> Void {
        let address = UInt(bitPattern: pointer)
        return { message in
            guard let element = UnsafeMutablePointer<GstElement>(bitPattern: address) else { return }
            let error = g_error_new_literal(
                gst_stream_error_quark(), gint(GST_STREAM_ERROR_CODEC_NOT_FOUND.rawValue), message)
            defer { g_error_free(error) }
            let object = UnsafeMutableRawPointer(element).assumingMemoryBound(to: GstObject.self)
            _ = gst_element_post_message(element, gst_message_new_error(object, error, nil))  // takes the message
        }
    }

    package func setProperty(_ name: String, _ value: PropertyValue) throws {
        guard let spec = ftgst_find_property(pointer, name) else {
            throw FilmtoneError(.internalError, "\(factoryName ?? "element") has no property '\(name)'")
        }
        let target = ftgst_param_value_type(spec)
        var converted = GValue()
        g_value_init(&converted, target)
        defer { g_value_unset(&converted) }

        switch value {
        case .nick(let text):
            // gst_util_set_object_arg parses the text according to the property's type (enums, flags).
            gst_util_set_object_arg(GLib.cast(pointer, to: GObject.self), name, text)
            return
        case .string(let text):
            try convert(into: &converted, from: ftgst_type_string(), name, value) { g_value_set_string(&$0, text) }
        case .int(let number):
            try convert(into: &converted, from: ftgst_type_int64(), name, value) {
                g_value_set_int64(&$0, gint64(number))
            }
        case .double(let number):
            try convert(into: &converted, from: ftgst_type_double(), name, value) { g_value_set_double(&$0, number) }
        case .bool(let flag):
            try convert(into: &converted, from: ftgst_type_boolean(), name, value) {
                g_value_set_boolean(&$0, flag ? 1 : 0)
            }
        case .caps(let caps):
            guard target == ftgst_type_caps() else { throw mismatch(name, value) }
            gst_value_set_caps(&converted, caps.pointer)  // adds its own reference
        case .structure(let structureName, let fields):
            guard target == ftgst_type_structure() else { throw mismatch(name, value) }
            guard let structure = gst_structure_new_empty(structureName) else { throw mismatch(name, value) }
            for (field, text) in fields {
                var fieldValue = GValue()
                g_value_init(&fieldValue, ftgst_type_string())
                g_value_set_string(&fieldValue, text)
                gst_structure_take_value(structure, field, &fieldValue)  // takes fieldValue's contents
            }
            gst_value_set_structure(&converted, structure)  // copies
            gst_structure_free(structure)
        }
        g_object_set_property(GLib.cast(pointer, to: GObject.self), name, &converted)
    }

    /// Fills a GValue of a fundamental `type` with `set`, then converts it to the property's own type
    /// (`g_value_transform`: int64 → uint, double → float, …); a conversion GLib refuses is a recipe mistake.
    private func convert(
        into target: inout GValue, from type: GType, _ name: String, _ value: PropertyValue,
        _ set: (inout GValue) -> Void
    ) throws {
        var source = GValue()
        g_value_init(&source, type)
        defer { g_value_unset(&source) }
        set(&source)
        guard g_value_transform(&source, &target) != 0 else { throw mismatch(name, value) }
    }

    private func mismatch(_ name: String, _ value: PropertyValue) -> FilmtoneError {
        FilmtoneError(.internalError, "cannot set \(factoryName ?? "element").\(name) to \(value)")
    }

    // MARK: - Pads, children, state

    /// `gst_element_get_static_pad` (transfer full).
    package func staticPad(_ name: String) -> Pad? {
        gst_element_get_static_pad(pointer, name).map { Pad(takingFull: $0) }
    }

    /// `gst_bin_get_by_name` (transfer full); nil when this element is not a bin or has no such child.
    package func child(named name: String) -> Element? {
        guard ftgst_is_bin(pointer) != 0 else { return nil }
        return gst_bin_get_by_name(GLib.cast(pointer, to: GstBin.self), name).map { Element(takingFull: $0) }
    }

    /// The elements directly in this bin (not inside its child bins) made by the factory `factory`; empty when this
    /// element is not a bin. `gst_bin_iterate_elements`, started again if the bin changed while it was read.
    package func children(madeBy factory: String) -> [Element] {
        guard ftgst_is_bin(pointer) != 0, let iterator = gst_bin_iterate_elements(GLib.cast(pointer, to: GstBin.self))
        else { return [] }
        defer { gst_iterator_free(iterator) }
        var found: [Element] = []
        var item = GValue()
        while true {
            switch gst_iterator_next(iterator, &item) {
            case GST_ITERATOR_OK:
                if let object = g_value_get_object(&item) {
                    let element = Element(borrowing: object.assumingMemoryBound(to: GstElement.self))
                    if element.factoryName == factory { found.append(element) }
                }
                g_value_reset(&item)
            case GST_ITERATOR_RESYNC:
                found.removeAll()
                gst_iterator_resync(iterator)
            default:
                g_value_unset(&item)
                return found
            }
        }
    }

    // MARK: - Signals

    /// Connects to a bin's `deep-element-added`: `body` sees every element added anywhere inside it (e.g. what
    /// decodebin plugs), possibly on a streaming thread, before it starts processing data.
    package func onDeepElementAdded(_ body: @escaping @Sendable (Element) -> Void) {
        let callback:
            @convention(c) (
                UnsafeMutablePointer<GstBin>?, UnsafeMutablePointer<GstBin>?, UnsafeMutablePointer<GstElement>?,
                gpointer?
            ) -> Void = { _, _, element, data in
                guard let element, let data else { return }
                CallbackBox<Element, Void>.borrow(data).body(Element(borrowing: element))
            }
        connect("deep-element-added", unsafeBitCast(callback, to: GCallback.self), CallbackBox(body))
    }

    /// Connects to uridecodebin's `source-setup`: `body` sees each source element before it starts (on a
    /// GStreamer thread). The handler box is released by GLib when the element is finalised.
    package func onSourceSetup(_ body: @escaping @Sendable (Element) -> Void) {
        let callback:
            @convention(c) (
                UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstElement>?, gpointer?
            ) -> Void = { _, source, data in
                guard let source, let data else { return }
                CallbackBox<Element, Void>.borrow(data).body(Element(borrowing: source))
            }
        connect("source-setup", unsafeBitCast(callback, to: GCallback.self), CallbackBox(body))
    }
}
