internal import CGst
import Foundation

/// Owns one reference to a `GstPad`.
final class Pad {
    let pointer: UnsafeMutablePointer<GstPad>

    /// Adopts a transfer-full reference (`gst_element_get_static_pad`).
    init(takingFull pointer: UnsafeMutablePointer<GstPad>) {
        self.pointer = pointer
    }

    deinit {
        gst_object_unref(pointer)
    }

    private final class CapsProbe {
        let body: (Caps) -> Void
        init(_ body: @escaping (Caps) -> Void) { self.body = body }
    }

    /// Calls `body` with the caps of every CAPS event that passes downstream through this pad, on the streaming
    /// thread, before the event reaches the next element: the place to adjust a capsfilter further down so
    /// that the very negotiation this event starts already sees it.
    func onCapsEvent(_ body: @escaping (Caps) -> Void) {
        let callback: @convention(c) (
            UnsafeMutablePointer<GstPad>?, UnsafeMutablePointer<GstPadProbeInfo>?, gpointer?
        ) -> GstPadProbeReturn = { _, info, data in
            guard let info, let data, let event = gst_pad_probe_info_get_event(info) else { return GST_PAD_PROBE_OK }
            // GST_EVENT_TYPE is a macro reading the type field.
            guard event.pointee.type == GST_EVENT_CAPS else { return GST_PAD_PROBE_OK }
            var caps: UnsafeMutablePointer<GstCaps>? = nil
            gst_event_parse_caps(event, &caps)  // transfer none: borrowed from the event
            if let caps {
                Unmanaged<CapsProbe>.fromOpaque(data).takeUnretainedValue().body(Caps(borrowing: caps))
            }
            return GST_PAD_PROBE_OK
        }
        let release: @convention(c) (gpointer?) -> Void = { data in
            guard let data else { return }
            Unmanaged<CapsProbe>.fromOpaque(data).release()
        }
        let box = Unmanaged.passRetained(CapsProbe(body)).toOpaque()
        _ = gst_pad_add_probe(pointer, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, callback, box, release)
    }
}
