package import CGst
import Foundation

/// Owns one reference to a `GstBus`.
// @unchecked Sendable: an immutable pointer to a GstBus, which GStreamer makes safe to pop from any thread.
package final class Bus: @unchecked Sendable {
    package let pointer: UnsafeMutablePointer<GstBus>

    /// Adopts a transfer-full reference (`gst_element_get_bus`).
    package init(takingFull pointer: UnsafeMutablePointer<GstBus>) {
        self.pointer = pointer
    }

    deinit {
        gst_object_unref(pointer)
    }

    /// `gst_bus_timed_pop_filtered`: waits at most `timeout` for a message of one of `kinds`.
    package func pop(timeout: ClockTime, kinds: Message.Kinds) -> Message? {
        guard let raw = gst_bus_timed_pop_filtered(pointer, timeout.raw, GstMessageType(rawValue: kinds.rawValue))
        else { return nil }
        defer { gst_message_unref(raw) }  // transfer full
        return Message(copying: raw)
    }
}
