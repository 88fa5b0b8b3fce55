internal import CGst
import FilmtoneCore
import Foundation

/// What a `uridecodebin`/`decodebin` should do with the element it is about to plug (`autoplug-select`).
/// `GstAutoplugSelectResult` lives in the playback plugin, not in a public header, so its values are written
/// here and pinned against the registered enum type by a unit test.
package enum AutoplugDecision: Int32, Sendable {
    /// `GST_AUTOPLUG_SELECT_TRY`: plug the element and go on.
    case tryElement = 0
    /// `GST_AUTOPLUG_SELECT_EXPOSE`: plug nothing; expose the pad with its current caps.
    case expose = 1
    /// `GST_AUTOPLUG_SELECT_SKIP`: try the next candidate instead.
    case skip = 2
}

/// The factory decodebin offers in `autoplug-select`, copied out.
package struct FactoryDescription: Sendable {
    /// e.g. `avdec_h264`.
    package var name: String
    /// The klass metadata, e.g. `Codec/Decoder/Video`.
    package var klass: String
    /// The first structure of the caps the element would take (`video/x-h264, profile=high, …`); nil for none.
    package var caps: CapsStructure?

    package init(name: String, klass: String, caps: CapsStructure? = nil) {
        self.name = name
        self.klass = klass
        self.caps = caps
    }
}

// Every handler is a CallbackBox (CallbackBox.swift): GLib releases it when the element is finalised.

extension Element {
    /// Connects to `pad-added`: `body` sees each new (dynamic) source pad, on a streaming thread.
    package func onPadAdded(_ body: @escaping @Sendable (Pad) -> Void) {
        let callback:
            @convention(c) (UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstPad>?, gpointer?)
                -> Void = { _, pad, data in
                    guard let pad, let data else { return }
                    CallbackBox<Pad, Void>.borrow(data).body(Pad(borrowing: pad))
                }
        connect("pad-added", unsafeBitCast(callback, to: GCallback.self), CallbackBox(body))
    }

    /// Connects to (uri)decodebin's `autoplug-select`: `body` decides, for each element decodebin is about to
    /// plug, whether to plug it or to stop and expose the pad as it is. Called on a streaming thread.
    package func onAutoplugSelect(_ body: @escaping @Sendable (FactoryDescription) -> AutoplugDecision) {
        // GstElementFactory is opaque in Swift. The return type is GstAutoplugSelectResult, a C enum (an int).
        let callback:
            @convention(c) (
                UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstPad>?, UnsafeMutablePointer<GstCaps>?,
                OpaquePointer?, gpointer?
            ) -> Int32 = { _, _, caps, factory, data in
                guard let factory, let data else { return AutoplugDecision.tryElement.rawValue }
                // The factory is borrowed for the call; its name and metadata are copied.
                let name = GLib.takeString(gst_object_get_name(UnsafeMutablePointer<GstObject>(factory))) ?? ""
                let klass =
                    GLib.borrowString(gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS)) ?? ""
                let box = CallbackBox<FactoryDescription, AutoplugDecision>.borrow(data)
                // The caps are borrowed too: Caps(borrowing:) adds its own reference for the copy.
                let structure = caps.flatMap { Caps(borrowing: $0).firstStructure }
                return box.body(FactoryDescription(name: name, klass: klass, caps: structure)).rawValue
            }
        connect("autoplug-select", unsafeBitCast(callback, to: GCallback.self), CallbackBox(body))
    }

    /// Connects to a `typefind` element's `have-type`: `body` gets the caps it found (e.g. `video/quicktime`).
    package func onHaveType(_ body: @escaping @Sendable (Caps) -> Void) {
        let callback:
            @convention(c) (
                UnsafeMutablePointer<GstElement>?, guint, UnsafeMutablePointer<GstCaps>?, gpointer?
            ) -> Void = { _, _, caps, data in
                guard let caps, let data else { return }
                // The caps are borrowed for the call: Caps(borrowing:) adds its own reference.
                CallbackBox<Caps, Void>.borrow(data).body(Caps(borrowing: caps))
            }
        connect("have-type", unsafeBitCast(callback, to: GCallback.self), CallbackBox(body))
    }

    /// `gst_element_sync_state_with_parent`: brings an element added to a running bin to the bin's state.
    package func syncStateWithParent() {
        gst_element_sync_state_with_parent(pointer)
    }
}

extension Pipeline {
    /// `gst_bin_add`: the pipeline takes its own reference (the element is no longer floating: `Element` sank
    /// it), so `element` stays valid for its owner. Throws `INTERNAL` if the element already has a parent.
    package func add(_ child: Element) throws {
        guard gst_bin_add(GLib.cast(element.pointer, to: GstBin.self), child.pointer) != 0 else {
            throw FilmtoneError(.internalError, "cannot add \(child.name) to the pipeline")
        }
    }
}
