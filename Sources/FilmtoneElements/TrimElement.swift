package import CGst
import Foundation
import GstKit
import Synchronization

// MARK: - fttrim: keep one time range of a stream
//
// gst-launch-1.0 filesrc location=in.mp4 ! decodebin ! fttrim start=2000000000 stop=5000000000 ! videoconvert ! …
//
// Passes the buffers whose stream time lies in [start, stop) and rewrites the segment so that running time 0 is
// `start`: encoders and muxers downstream then write a file that begins at the cut. The video frame on screen at
// `start` is kept with its start moved to `start` (shown from the cut's first instant). Which frame that is, the
// next frame's start says, not the frame's own duration: Matroska's millisecond timestamps make a frame at
// 967 ms last until 1000.33 ms while the next starts at 1000, and an MP4 with B-frames and a variable rate can
// state 1 ms for a frame shown 40 ms. So the last frame before the cut is held back until the next one arrives.
// An audio buffer that straddles the cut is dropped (at most one 1024-sample packet, ≈ 21 ms). At the first
// buffer at or after `stop` it sends EOS downstream and returns EOS upstream, so the source stops reading.
//
// It exists because gst-launch-1.0 cannot seek: `ftgst export --start-ms/--end-ms` uses it in process and in the
// command `--dry-run` prints, so both cut the same way. It decodes from the beginning of the file (no seek).

/// The element's state: the range (properties) and what it has seen of the stream (the segment, EOS sent).
package final class TrimState: Sendable {
    private struct Values {
        var range: (start: guint64, stop: guint64) = (0, guint64.max)
        var incoming: Segment? = nil
        var isVideo = false
        var sentEndOfStream = false
        var held: Held? = nil
    }

    /// The last video frame before the cut, held back (one reference owned here) until the next frame's start
    /// says whether it is on screen at the cut. @unchecked: the buffer is only touched by the streaming thread
    /// that holds or releases it, under the lock.
    private struct Held: @unchecked Sendable {
        var buffer: UnsafeMutablePointer<GstBuffer>
    }

    /// Written by set_property and the event handler, read by the buffer path: any thread.
    private let values = Mutex(Values())

    /// A copied `GstSegment`: numbers only (its `_gst_reserved` pointers are padding GStreamer never sets), so
    /// the copy can cross threads. @unchecked because the C struct's pointer fields make it non-Sendable.
    private struct Segment: @unchecked Sendable {
        var raw: GstSegment
    }

    package var start: guint64 {
        get { values.withLock { $0.range.start } }
        set { values.withLock { $0.range.start = newValue } }
    }

    package var stop: guint64 {
        get { values.withLock { $0.range.stop } }
        set { values.withLock { $0.range.stop = newValue } }
    }

    package func reset() {
        let held = values.withLock { values in
            values.incoming = nil
            values.sentEndOfStream = false
            defer { values.held = nil }
            return values.held
        }
        if let held { gst_buffer_unref(held.buffer) }
    }

    deinit {
        if let held = values.withLock({ $0.held }) { gst_buffer_unref(held.buffer) }
    }

    /// Keeps `buffer` (a reference the caller added) as the frame before the cut; the one held before is
    /// returned for the caller to release.
    package func hold(_ buffer: UnsafeMutablePointer<GstBuffer>) -> UnsafeMutablePointer<GstBuffer>? {
        values.withLock { values in
            defer { values.held = Held(buffer: buffer) }
            return values.held?.buffer
        }
    }

    /// The held frame, handed over (with its reference) because a frame starting at `next` (nil: the end of the
    /// stream) arrived: with its start moved to the cut and its duration up to `next` when it is on screen at
    /// the cut (`put`), or for release when `next` starts at the cut (`release`).
    package enum HeldOutcome {
        case put(UnsafeMutablePointer<GstBuffer>, pts: guint64, duration: guint64?)
        case release(UnsafeMutablePointer<GstBuffer>)
    }

    package func takeHeld(next: guint64?) -> HeldOutcome? {
        values.withLock { values in
            guard let held = values.held else { return nil }
            values.held = nil
            guard var segment = values.incoming?.raw,
                let cut = TrimState.position(&segment, streamTime: values.range.start)
            else { return .release(held.buffer) }
            if let next, next <= cut { return .release(held.buffer) }
            let pts = guint64(ClockTime(raw: held.buffer.pointee.pts)?.nanoseconds ?? UInt64(cut))
            let ownEnd = ClockTime(raw: held.buffer.pointee.duration).map { pts + guint64($0.nanoseconds) }
            let end = next ?? ownEnd
            return .put(held.buffer, pts: cut, duration: end.map { $0 > cut ? $0 - cut : 0 })
        }
    }

    package func setVideo(_ video: Bool) {
        values.withLock { $0.isVideo = video }
    }

    /// The stream times of the range as buffer timestamps of `segment` (`gst_segment_position_from_stream_time`);
    /// before the segment's own start → its start, beyond its stop → none.
    private static func position(_ segment: inout GstSegment, streamTime: guint64) -> guint64? {
        guard streamTime != guint64.max else { return nil }
        let position = gst_segment_position_from_stream_time(&segment, GST_FORMAT_TIME, streamTime)
        if position == ftgst_clock_time_none() {
            return streamTime < guint64(segment.time) ? guint64(segment.start) : nil
        }
        return position
    }

    /// A new upstream segment: remembered, and returned narrowed to the range (start moved to the cut, so the
    /// cut is running time 0; stop at the end of the range).
    package func narrow(_ segment: GstSegment) -> GstSegment {
        let range = values.withLock {
            $0.incoming = Segment(raw: segment)
            return $0.range
        }
        var original = segment
        guard segment.format == GST_FORMAT_TIME else { return segment }
        var narrowed = segment
        if let cut = TrimState.position(&original, streamTime: range.start), cut > guint64(segment.start) {
            narrowed.time = segment.time + (cut - guint64(segment.start))
            narrowed.start = cut
            narrowed.position = cut
        }
        if let end = TrimState.position(&original, streamTime: range.stop) {
            narrowed.stop = segment.stop == ftgst_clock_time_none() ? end : min(guint64(segment.stop), end)
        }
        return narrowed
    }

    package enum Decision {
        case pass
        /// A video frame before the cut: hold it back (`hold`) until the next frame says whether it is on screen
        /// at the cut (`takeHeld`).
        case hold
        case drop
        /// At or beyond the end; `first` when EOS has not been sent downstream yet.
        case end(first: Bool)
    }

    package func decide(pts: guint64?) -> Decision {
        values.withLock { values in
            guard let pts, var segment = values.incoming?.raw, segment.format == GST_FORMAT_TIME else { return .pass }
            if let end = TrimState.position(&segment, streamTime: values.range.stop), pts >= end {
                let first = !values.sentEndOfStream
                values.sentEndOfStream = true
                return .end(first: first)
            }
            guard let cut = TrimState.position(&segment, streamTime: values.range.start), pts < cut else {
                return .pass
            }
            return values.isVideo ? .hold : .drop
        }
    }

    /// EOS from upstream after this element already ended the stream is not passed on twice.
    package var endedStream: Bool { values.withLock { $0.sentEndOfStream } }
}

private enum TrimPropertyID: guint {
    case start = 1
    case stop
}

/// Registration of the `fttrim` element type.
package enum TrimElement {
    package static let factoryName = "fttrim"
    package static let typeName = "GstFtTrim"

    /// The GType (a GstBaseTransform whose instances carry a `TrimState`), registered once per process.
    fileprivate static let subclass = SwiftSubclass<TrimState>(
        parent: gst_base_transform_get_type(), name: typeName, classInit: classInit, instanceInit: instanceInit)
    package static var type: GType { subclass.type }

    package static func register(in plugin: OpaquePointer?) -> Bool {
        gst_element_register(plugin, factoryName, guint(GST_RANK_NONE.rawValue), type) != 0
    }

    fileprivate static func state(of instance: UnsafeMutableRawPointer) -> TrimState {
        subclass.state(of: instance)
    }

    private static var parentTransformClass: UnsafeMutablePointer<GstBaseTransformClass> {
        subclass.parentClass(as: GstBaseTransformClass.self)
    }

    private static let classInit: @convention(c) (gpointer?, gpointer?) -> Void = { klass, _ in
        guard let klass else { return }
        let objectClass = ftgst_object_class(klass)!
        objectClass.pointee.set_property = setProperty
        objectClass.pointee.get_property = getProperty
        objectClass.pointee.finalize = finalize
        g_object_class_install_property(
            objectClass, TrimPropertyID.start.rawValue,
            g_param_spec_uint64(
                "start", "Start", "Stream time (ns) of the first instant kept", 0, guint64.max, 0, G_PARAM_READWRITE))
        g_object_class_install_property(
            objectClass, TrimPropertyID.stop.rawValue,
            g_param_spec_uint64(
                "stop", "Stop", "Stream time (ns) where the kept range ends; 18446744073709551615: the end",
                0, guint64.max, guint64.max, G_PARAM_READWRITE))

        let elementClass = ftgst_element_class(klass)!
        gst_element_class_set_metadata(
            elementClass, "Time range trim", "Filter/Video/Audio",
            "Keeps the buffers in [start, stop) and makes start running time 0", "ftgst")
        SwiftSubclass<TrimState>.addPadTemplates(elementClass, caps: "ANY")
        let transformClass = ftgst_base_transform_class(klass)!
        transformClass.pointee.start = start
        transformClass.pointee.sink_event = sinkEvent
        transformClass.pointee.set_caps = setCaps
        transformClass.pointee.transform_ip = transformInPlace
    }

    private static let instanceInit: @convention(c) (UnsafeMutablePointer<GTypeInstance>?, gpointer?) -> Void = {
        instance, _ in
        guard let instance else { return }
        subclass.attach(TrimState(), to: UnsafeMutableRawPointer(instance))
        // In place, not pass-through: timestamps of a straddling frame are rewritten, so the buffer is made
        // writable first (a shallow copy at most: the pixels are shared, never copied).
        let transform = UnsafeMutableRawPointer(instance).assumingMemoryBound(to: GstBaseTransform.self)
        gst_base_transform_set_in_place(transform, 1)
        gst_base_transform_set_passthrough(transform, 0)
    }

    private static let finalize: @convention(c) (UnsafeMutablePointer<GObject>?) -> Void = { object in
        guard let object else { return }
        subclass.finalize(object)
    }

    private static let setProperty:
        @convention(c) (
            UnsafeMutablePointer<GObject>?, guint, UnsafePointer<GValue>?, UnsafeMutablePointer<GParamSpec>?
        ) -> Void = { object, id, value, _ in
            guard let object, let value, let property = TrimPropertyID(rawValue: id) else { return }
            let state = state(of: UnsafeMutableRawPointer(object))
            switch property {
            case .start: state.start = g_value_get_uint64(value)
            case .stop: state.stop = g_value_get_uint64(value)
            }
        }

    private static let getProperty:
        @convention(c) (
            UnsafeMutablePointer<GObject>?, guint, UnsafeMutablePointer<GValue>?, UnsafeMutablePointer<GParamSpec>?
        ) -> Void = { object, id, value, _ in
            guard let object, let value, let property = TrimPropertyID(rawValue: id) else { return }
            let state = state(of: UnsafeMutableRawPointer(object))
            switch property {
            case .start: g_value_set_uint64(value, state.start)
            case .stop: g_value_set_uint64(value, state.stop)
            }
        }

    private static let start: @convention(c) (UnsafeMutablePointer<GstBaseTransform>?) -> gboolean = { transform in
        guard let transform else { return 0 }
        state(of: UnsafeMutableRawPointer(transform)).reset()
        return 1
    }

    private static let setCaps:
        @convention(c) (
            UnsafeMutablePointer<GstBaseTransform>?, UnsafeMutablePointer<GstCaps>?, UnsafeMutablePointer<GstCaps>?
        ) -> gboolean = { transform, incaps, _ in
            guard let transform, let incaps else { return 0 }
            let name =
                gst_caps_get_size(incaps) > 0
                ? GLib.borrowString(gst_structure_get_name(gst_caps_get_structure(incaps, 0))) ?? "" : ""
            state(of: UnsafeMutableRawPointer(transform)).setVideo(name.hasPrefix("video/"))
            return 1
        }

    /// SEGMENT: narrowed to the range. After this element ended the stream, every event but a flush is taken and
    /// dropped (EOS is not sent twice).
    private static let sinkEvent:
        @convention(c) (
            UnsafeMutablePointer<GstBaseTransform>?, UnsafeMutablePointer<GstEvent>?
        ) -> gboolean = { transform, event in
            guard let transform, let event else { return 0 }
            let state = state(of: UnsafeMutableRawPointer(transform))
            switch event.pointee.type {
            case GST_EVENT_FLUSH_STOP:
                state.reset()
            case GST_EVENT_FLUSH_START:
                break
            case _ where state.endedStream:
                // This element ended the stream (EOS sent downstream): what upstream still sends before its own
                // EOS — a TAG from the decoder, a new SEGMENT — has nowhere to go. Refused, it failed the push that
                // carried it, and the whole pipeline with "Internal data stream error" (an export cut of HEVC,
                // VP9 or a TS whose decoder sent its tags after the range's end).
                gst_event_unref(event)
                return 1
            case GST_EVENT_SEGMENT:
                var segment: UnsafePointer<GstSegment>? = nil
                gst_event_parse_segment(event, &segment)  // borrowed from the event
                guard let segment else { break }
                var narrowed = state.narrow(segment.pointee)
                let replacement = gst_event_new_segment(&narrowed)!
                gst_event_set_seqnum(replacement, gst_event_get_seqnum(event))
                gst_event_unref(event)  // the vfunc owns the event it was given
                return parentTransformClass.pointee.sink_event(transform, replacement)
            case GST_EVENT_EOS:
                // The cut lies in the last frame: it is on screen there.
                putHeld(transform, state, next: nil)
            default:
                break
            }
            return parentTransformClass.pointee.sink_event(transform, event)
        }

    private static let transformInPlace:
        @convention(c) (
            UnsafeMutablePointer<GstBaseTransform>?, UnsafeMutablePointer<GstBuffer>?
        ) -> GstFlowReturn = { transform, buffer in
            guard let transform, let buffer else { return GST_FLOW_ERROR }
            let pts = ClockTime(raw: buffer.pointee.pts).map { guint64($0.nanoseconds) }
            let state = state(of: UnsafeMutableRawPointer(transform))
            switch state.decide(pts: pts) {
            case .pass:
                let result = putHeld(transform, state, next: pts)
                return result == GST_FLOW_OK ? GST_FLOW_OK : result
            case .hold:
                // An added reference, owned by the state; base transform drops its own.
                if let previous = state.hold(gst_buffer_ref(buffer)) { gst_buffer_unref(previous) }
                return GST_FLOW_CUSTOM_SUCCESS  // GST_BASE_TRANSFORM_FLOW_DROPPED
            case .drop:
                return GST_FLOW_CUSTOM_SUCCESS  // GST_BASE_TRANSFORM_FLOW_DROPPED
            case .end(let first):
                if first {
                    _ = putHeld(transform, state, next: pts)
                    _ = gst_pad_push_event(transform.pointee.srcpad, gst_event_new_eos())
                }
                return GST_FLOW_EOS
            }
        }

    /// Pushes the held frame (start moved to the cut) ahead of a frame starting at `next`, or releases it when
    /// `next` starts at or before the cut. On the streaming thread, before base transform pushes `next`.
    @discardableResult
    private static func putHeld(_ transform: UnsafeMutablePointer<GstBaseTransform>, _ state: TrimState, next: guint64?)
        -> GstFlowReturn
    {
        switch state.takeHeld(next: next) {
        case nil:
            return GST_FLOW_OK
        case .release(let buffer):
            gst_buffer_unref(buffer)
            return GST_FLOW_OK
        case .put(let held, let pts, let duration):
            // `gst_buffer_make_writable` is a macro over the mini-object call; it takes the reference and, as only
            // this element holds the buffer, returns it without a copy.
            let object = gst_mini_object_make_writable(
                UnsafeMutableRawPointer(held).assumingMemoryBound(to: GstMiniObject.self))!
            let buffer = UnsafeMutableRawPointer(object).assumingMemoryBound(to: GstBuffer.self)
            buffer.pointee.pts = pts
            if let duration { buffer.pointee.duration = duration }
            return gst_pad_push(transform.pointee.srcpad, buffer)  // takes the reference
        }
    }
}
