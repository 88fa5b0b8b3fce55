package import CGst
import Foundation
import FilmtoneCore

/// What a `uridecodebin`/`decodebin` should do with the element it is about to plug (`autoplug-select`).
/// `GstAutoplugSelectResult` lives in the playback plugin, not in a public header, so its values are written
/// here and pinned against the registered enum type by a unit test.
package enum AutoplugDecision: Int32 {
    /// `GST_AUTOPLUG_SELECT_TRY`: plug the element and go on.
    case tryElement = 0
    /// `GST_AUTOPLUG_SELECT_EXPOSE`: plug nothing; expose the pad with its current caps.
    case expose = 1
    /// `GST_AUTOPLUG_SELECT_SKIP`: try the next candidate instead.
    case skip = 2
}

/// The factory decodebin offers in `autoplug-select`, copied out.
package struct FactoryDescription {
    /// e.g. `avdec_h264`.
    package var name: String
    /// The klass metadata, e.g. `Codec/Decoder/Video`.
    package var klass: String
}

// Signal boxes: each holds a Swift closure for one connection; GLib releases the box (the closure's destroy
// notify) when the element is finalised, so a handler must not capture what owns the element (or the pipeline
// would never be freed).

extension Element {
    private final class PadAddedHandler {
        package let body: (Pad) -> Void
        package init(_ body: @escaping (Pad) -> Void) { self.body = body }
    }

    /// Connects to `pad-added`: `body` sees each new (dynamic) source pad, on a streaming thread.
    package func onPadAdded(_ body: @escaping (Pad) -> Void) {
        let callback: @convention(c) (UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstPad>?, gpointer?)
            -> Void = { _, pad, data in
                guard let pad, let data else { return }
                Unmanaged<PadAddedHandler>.fromOpaque(data).takeUnretainedValue().body(Pad(borrowing: pad))
            }
        let release: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
            guard let data else { return }
            Unmanaged<PadAddedHandler>.fromOpaque(data).release()
        }
        let box = Unmanaged.passRetained(PadAddedHandler(body)).toOpaque()
        g_signal_connect_data(pointer, "pad-added", unsafeBitCast(callback, to: GCallback.self), box, release,
                              GConnectFlags(rawValue: 0))
    }

    private final class AutoplugSelectHandler {
        package let body: (FactoryDescription) -> AutoplugDecision
        package init(_ body: @escaping (FactoryDescription) -> AutoplugDecision) { self.body = body }
    }

    /// Connects to (uri)decodebin's `autoplug-select`: `body` decides, for each element decodebin is about to
    /// plug, whether to plug it or to stop and expose the pad as it is. Called on a streaming thread.
    package func onAutoplugSelect(_ body: @escaping (FactoryDescription) -> AutoplugDecision) {
        // GstElementFactory is opaque in Swift. The return type is GstAutoplugSelectResult, a C enum (an int).
        let callback: @convention(c) (
            UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstPad>?, UnsafeMutablePointer<GstCaps>?,
            OpaquePointer?, gpointer?
        ) -> Int32 = { _, _, _, factory, data in
            guard let factory, let data else { return AutoplugDecision.tryElement.rawValue }
            // The factory is borrowed for the call; its name and metadata are copied.
            let name = GLib.takeString(gst_object_get_name(UnsafeMutablePointer<GstObject>(factory))) ?? ""
            let klass = GLib.borrowString(gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS)) ?? ""
            let handler = Unmanaged<AutoplugSelectHandler>.fromOpaque(data).takeUnretainedValue()
            return handler.body(FactoryDescription(name: name, klass: klass)).rawValue
        }
        let release: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
            guard let data else { return }
            Unmanaged<AutoplugSelectHandler>.fromOpaque(data).release()
        }
        let box = Unmanaged.passRetained(AutoplugSelectHandler(body)).toOpaque()
        g_signal_connect_data(pointer, "autoplug-select", unsafeBitCast(callback, to: GCallback.self), box, release,
                              GConnectFlags(rawValue: 0))
    }

    private final class HaveTypeHandler {
        package let body: (Caps) -> Void
        package init(_ body: @escaping (Caps) -> Void) { self.body = body }
    }

    /// Connects to a `typefind` element's `have-type`: `body` gets the caps it found (e.g. `video/quicktime`).
    package func onHaveType(_ body: @escaping (Caps) -> Void) {
        let callback: @convention(c) (
            UnsafeMutablePointer<GstElement>?, guint, UnsafeMutablePointer<GstCaps>?, gpointer?
        ) -> Void = { _, _, caps, data in
            guard let caps, let data else { return }
            // The caps are borrowed for the call: Caps(borrowing:) adds its own reference.
            Unmanaged<HaveTypeHandler>.fromOpaque(data).takeUnretainedValue().body(Caps(borrowing: caps))
        }
        let release: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
            guard let data else { return }
            Unmanaged<HaveTypeHandler>.fromOpaque(data).release()
        }
        let box = Unmanaged.passRetained(HaveTypeHandler(body)).toOpaque()
        g_signal_connect_data(pointer, "have-type", unsafeBitCast(callback, to: GCallback.self), box, release,
                              GConnectFlags(rawValue: 0))
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
