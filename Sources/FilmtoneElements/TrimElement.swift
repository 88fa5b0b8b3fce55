package import CGst
import Foundation
import GstKit
import Synchronization

// MARK: - fttrim: keep one time range of a stream
//
// gst-launch-1.0 filesrc location=in.mp4 ! decodebin ! fttrim start=2000000000 stop=5000000000 ! videoconvert ! …
//
// Passes the buffers whose stream time lies in [start, stop) and rewrites the segment so that running time 0 is
// `start`: encoders and muxers downstream then write a file that begins at the cut. A video frame that straddles
// `start` is kept with its start moved to `start` (the frame on screen at the cut is shown from its first
// instant); an audio buffer that straddles it is dropped (at most one 1024-sample packet, ≈ 21 ms). At the first
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
        values.withLock {
            $0.incoming = nil
            $0.sentEndOfStream = false
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
        /// Pass with the start moved to the cut: (new pts, new duration).
        case clip(guint64, guint64?)
        case drop
        /// At or beyond the end; `first` when EOS has not been sent downstream yet.
        case end(first: Bool)
    }

    package func decide(pts: guint64?, duration: guint64?) -> Decision {
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
            if values.isVideo, let duration, pts + duration > cut { return .clip(cut, pts + duration - cut) }
            return .drop
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

    /// SEGMENT: narrowed to the range. EOS after this element ended the stream: not sent twice.
    private static let sinkEvent:
        @convention(c) (
            UnsafeMutablePointer<GstBaseTransform>?, UnsafeMutablePointer<GstEvent>?
        ) -> gboolean = { transform, event in
            guard let transform, let event else { return 0 }
            let state = state(of: UnsafeMutableRawPointer(transform))
            switch event.pointee.type {
            case GST_EVENT_SEGMENT:
                var segment: UnsafePointer<GstSegment>? = nil
                gst_event_parse_segment(event, &segment)  // borrowed from the event
                guard let segment else { break }
                var narrowed = state.narrow(segment.pointee)
                let replacement = gst_event_new_segment(&narrowed)!
                gst_event_set_seqnum(replacement, gst_event_get_seqnum(event))
                gst_event_unref(event)  // the vfunc owns the event it was given
                return parentTransformClass.pointee.sink_event(transform, replacement)
            case GST_EVENT_EOS where state.endedStream:
                gst_event_unref(event)
                return 1
            case GST_EVENT_FLUSH_STOP:
                state.reset()
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
            let duration = ClockTime(raw: buffer.pointee.duration).map { guint64($0.nanoseconds) }
            switch state(of: UnsafeMutableRawPointer(transform)).decide(pts: pts, duration: duration) {
            case .pass:
                return GST_FLOW_OK
            case .clip(let start, let length):
                buffer.pointee.pts = start
                if let length { buffer.pointee.duration = length }
                return GST_FLOW_OK
            case .drop:
                return GST_FLOW_CUSTOM_SUCCESS  // GST_BASE_TRANSFORM_FLOW_DROPPED
            case .end(let first):
                if first { _ = gst_pad_push_event(transform.pointee.srcpad, gst_event_new_eos()) }
                return GST_FLOW_EOS
            }
        }
}
