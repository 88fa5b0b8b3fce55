package import CGst
import FilmtoneCore
import Foundation

/// Owns one reference to a `GstPad`.
// @unchecked Sendable: as Element, an immutable pointer to a GstObject, whose reference count is atomic.
package final class Pad: @unchecked Sendable {
    package let pointer: UnsafeMutablePointer<GstPad>

    /// Adopts a transfer-full reference (`gst_element_get_static_pad`).
    package init(takingFull pointer: UnsafeMutablePointer<GstPad>) {
        self.pointer = pointer
    }

    deinit {
        gst_object_unref(pointer)
    }

    /// Whether the pad is activated in pull mode (a demuxer reading a local file through `filesrc`) rather than
    /// being pushed to: its buffers are then the reads its element asked for. A check that does not keep this wrapper
    /// or the pad alive, for a probe on the pad itself (a wrapper captured there would keep the pad forever).
    package var pullingCheck: @Sendable () -> Bool {
        let address = UInt(bitPattern: pointer)
        return { UnsafeMutablePointer<GstPad>(bitPattern: address)?.pointee.mode == GST_PAD_MODE_PULL }
    }

    /// Calls `body` with the caps of every CAPS event that passes downstream through this pad, on the streaming
    /// thread, before the event reaches the next element: the place to adjust a capsfilter further down so
    /// that the very negotiation this event starts already sees it.
    package func onCapsEvent(_ body: @escaping @Sendable (Caps) -> Void) {
        let callback:
            @convention(c) (
                UnsafeMutablePointer<GstPad>?, UnsafeMutablePointer<GstPadProbeInfo>?, gpointer?
            ) -> GstPadProbeReturn = { _, info, data in
                guard let info, let data, let event = gst_pad_probe_info_get_event(info) else {
                    return GST_PAD_PROBE_OK
                }
                // GST_EVENT_TYPE is a macro reading the type field.
                guard event.pointee.type == GST_EVENT_CAPS else { return GST_PAD_PROBE_OK }
                var caps: UnsafeMutablePointer<GstCaps>? = nil
                gst_event_parse_caps(event, &caps)  // transfer none: borrowed from the event
                if let caps {
                    CallbackBox<Caps, Void>.borrow(data).body(Caps(borrowing: caps))
                }
                return GST_PAD_PROBE_OK
            }
        _ = gst_pad_add_probe(
            pointer, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, callback, CallbackBox(body).retained(),
            releaseProbeData)
    }
    /// Rewrites each raw-video CAPS event that passes this pad downstream naming no `colorimetry` to name the one
    /// GStreamer assumes for those caps (`gst_video_info_from_caps`: BT.601 up to 576 lines, BT.709 above, BT.2020
    /// from 2160), so that an element after it that turns the picture (`videoflip`: 640×360 becomes 360×640)
    /// cannot make the next converter assume another matrix for the same pixels. Caps that name one pass as they
    /// are.
    package func pinDefaultColorimetry() {
        let callback:
            @convention(c) (
                UnsafeMutablePointer<GstPad>?, UnsafeMutablePointer<GstPadProbeInfo>?, gpointer?
            ) -> GstPadProbeReturn = { _, info, _ in
                // GST_EVENT_TYPE is a macro reading the type field.
                guard let info, let event = gst_pad_probe_info_get_event(info), event.pointee.type == GST_EVENT_CAPS
                else { return GST_PAD_PROBE_OK }
                var caps: UnsafeMutablePointer<GstCaps>? = nil
                gst_event_parse_caps(event, &caps)  // transfer none: borrowed from the event
                guard let caps, gst_caps_get_size(caps) > 0, let structure = gst_caps_get_structure(caps, 0),
                    GLib.borrowString(gst_structure_get_name(structure)) == "video/x-raw",
                    gst_structure_has_field(structure, "colorimetry") == 0
                else { return GST_PAD_PROBE_OK }
                var video = GstVideoInfo()
                guard gst_video_info_from_caps(&video, caps) != 0,
                    let text = gst_video_colorimetry_to_string(&video.colorimetry)
                else { return GST_PAD_PROBE_OK }
                defer { g_free(text) }
                // gst_caps_copy: a new, writable caps (transfer full), given to the new event and dropped here.
                guard let pinned = gst_caps_copy(caps), let copied = gst_caps_get_structure(pinned, 0) else {
                    return GST_PAD_PROBE_OK
                }
                var value = GValue()
                g_value_init(&value, ftgst_type_string())
                g_value_set_string(&value, text)
                gst_structure_take_value(copied, "colorimetry", &value)  // takes value's contents
                let replacement = gst_event_new_caps(pinned)  // adds its own reference to the caps
                gst_caps_unref(pinned)
                // GST_PAD_PROBE_INFO_DATA: the probe owns the event it hands on; the old one is released.
                info.pointee.data = UnsafeMutableRawPointer(replacement)
                gst_event_unref(event)
                return GST_PAD_PROBE_OK
            }
        _ = gst_pad_add_probe(pointer, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, callback, nil, nil)
    }

    /// Drops every GAP event that passes this pad downstream. A sink prerolls on a GAP as it does on a buffer, but
    /// an appsink then has no sample to hand over (`gst_app_sink_try_pull_preroll` waits out its timeout): qtdemux
    /// sends one for an MP4's empty edit (video that starts later, `-output_ts_offset`), before the first frame.
    /// Dropped before the sink, the sink prerolls on the next real buffer, or on EOS when none comes.
    package func dropGapEvents() {
        let callback:
            @convention(c) (
                UnsafeMutablePointer<GstPad>?, UnsafeMutablePointer<GstPadProbeInfo>?, gpointer?
            ) -> GstPadProbeReturn = { _, info, _ in
                guard let info, let event = gst_pad_probe_info_get_event(info) else { return GST_PAD_PROBE_OK }
                // GST_EVENT_TYPE is a macro reading the type field.
                return event.pointee.type == GST_EVENT_GAP ? GST_PAD_PROBE_DROP : GST_PAD_PROBE_OK
            }
        _ = gst_pad_add_probe(pointer, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, callback, nil, nil)
    }
}

// MARK: - Data probes

/// What flows through a pad, as a data probe sees it.
package enum PadItem {
    case caps(Caps)
    /// A SEGMENT event in TIME: where playback starts (in buffer-timestamp terms), the stream time of that start
    /// (`time`), and at what rate.
    case segment(start: ClockTime, time: ClockTime, rate: Double)
    case buffer(BufferView)
    /// An EOS event: the stream ends here.
    case endOfStream
    /// A GAP event: no data from `start` for `duration` (qtdemux sends one for an MP4's leading empty edit).
    case gap(start: ClockTime, duration: ClockTime?)
    case otherEvent
}

/// What a data probe decides about one item.
package enum PadDecision: Sendable {
    case pass
    case drop
}

/// A buffer seen by a probe: timestamps copied out, bytes readable only inside `withBytes`.
package struct BufferView {
    package let pointer: UnsafeMutablePointer<GstBuffer>

    package var presentationTimestamp: ClockTime? { ClockTime(raw: pointer.pointee.pts) }
    /// The decoding timestamp (`GST_BUFFER_DTS`); nil when the container gives none (Matroska, AVI).
    package var decodeTimestamp: ClockTime? { ClockTime(raw: pointer.pointee.dts) }
    package var duration: ClockTime? { ClockTime(raw: pointer.pointee.duration) }
    /// Not flagged `GST_BUFFER_FLAG_DELTA_UNIT`: a parser's keyframe (it decodes without earlier pictures).
    package var isKeyframe: Bool { pointer.pointee.mini_object.flags & GST_BUFFER_FLAG_DELTA_UNIT.rawValue == 0 }

    /// Maps the buffer for reading (`gst_buffer_map`) for the duration of `body`; nil if it cannot be mapped.
    package func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R? {
        var map = GstMapInfo()
        guard gst_buffer_map(pointer, &map, GST_MAP_READ) != 0 else { return nil }
        defer { gst_buffer_unmap(pointer, &map) }
        return body(UnsafeRawBufferPointer(start: map.data, count: Int(map.size)))
    }
}

extension Pad {
    /// Calls `body` for every buffer and downstream event passing this pad, on the streaming thread; `.drop`
    /// removes a buffer or an end of stream from the stream (other events are never dropped). Keep `body` short:
    /// it is on the data path.
    package func onData(_ body: @escaping @Sendable (PadItem) -> PadDecision) {
        let callback:
            @convention(c) (
                UnsafeMutablePointer<GstPad>?, UnsafeMutablePointer<GstPadProbeInfo>?, gpointer?
            ) -> GstPadProbeReturn = { _, info, data in
                guard let info, let data else { return GST_PAD_PROBE_OK }
                let probe = CallbackBox<PadItem, PadDecision>.borrow(data)
                // GST_PAD_PROBE_INFO_TYPE: ask for the buffer only when this call carries one.
                if info.pointee.type.rawValue & GST_PAD_PROBE_TYPE_BUFFER.rawValue != 0,
                    let buffer = gst_pad_probe_info_get_buffer(info)
                {
                    return probe.body(.buffer(BufferView(pointer: buffer))) == .drop
                        ? GST_PAD_PROBE_DROP : GST_PAD_PROBE_OK
                }
                guard let event = gst_pad_probe_info_get_event(info) else { return GST_PAD_PROBE_OK }
                switch event.pointee.type {
                case GST_EVENT_CAPS:
                    var caps: UnsafeMutablePointer<GstCaps>? = nil
                    gst_event_parse_caps(event, &caps)  // borrowed from the event
                    if let caps { _ = probe.body(.caps(Caps(borrowing: caps))) }
                case GST_EVENT_SEGMENT:
                    var segment: UnsafePointer<GstSegment>? = nil
                    gst_event_parse_segment(event, &segment)  // borrowed from the event
                    if let segment, segment.pointee.format == GST_FORMAT_TIME {
                        _ = probe.body(
                            .segment(
                                start: ClockTime(nanoseconds: UInt64(segment.pointee.start)),
                                time: ClockTime(nanoseconds: UInt64(segment.pointee.time)),
                                rate: segment.pointee.rate))
                    }
                case GST_EVENT_EOS:
                    return probe.body(.endOfStream) == .drop ? GST_PAD_PROBE_DROP : GST_PAD_PROBE_OK
                case GST_EVENT_GAP:
                    var start: GstClockTime = 0
                    var duration: GstClockTime = 0
                    gst_event_parse_gap(event, &start, &duration)
                    if let start = ClockTime(raw: start) {
                        _ = probe.body(.gap(start: start, duration: ClockTime(raw: duration)))
                    }
                default:
                    _ = probe.body(.otherEvent)
                }
                return GST_PAD_PROBE_OK
            }
        let mask = GstPadProbeType(
            rawValue: GST_PAD_PROBE_TYPE_BUFFER.rawValue
                | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue)
        _ = gst_pad_add_probe(pointer, mask, callback, CallbackBox(body).retained(), releaseProbeData)
    }
}

// MARK: - Linking and reading a pad's state

/// A format for duration queries (`GstFormat`): stream time, or frames for video (`GST_FORMAT_DEFAULT`).
package enum QueryFormat {
    case time
    /// `GST_FORMAT_DEFAULT`: video frames (audio samples on an audio pad).
    case units

    package var raw: GstFormat { self == .time ? GST_FORMAT_TIME : GST_FORMAT_DEFAULT }
}

extension Pad {
    /// Adds a reference to a borrowed pad (signal arguments such as `pad-added`'s).
    package convenience init(borrowing pointer: UnsafeMutablePointer<GstPad>) {
        gst_object_ref(pointer)
        self.init(takingFull: pointer)
    }

    /// `gst_pad_link` from this source pad to `sink`. Throws `INTERNAL`: the pads are ftgst's own choice.
    package func link(to sink: Pad) throws {
        let result = gst_pad_link(pointer, sink.pointer)
        guard result == GST_PAD_LINK_OK else {
            throw FilmtoneError(.internalError, "cannot link pads (GstPadLinkReturn \(result.rawValue))")
        }
    }

    /// `gst_pad_get_current_caps` (transfer full): the caps last negotiated on this pad; nil before any.
    package var currentCaps: Caps? {
        gst_pad_get_current_caps(pointer).map { Caps(takingFull: $0) }
    }

    /// The string tags of every sticky TAG event stored on this pad (stream-scoped and global: TAG is a
    /// "sticky multi" event, one per scope), read with `gst_pad_get_sticky_event`. Call it after data has
    /// flowed (after preroll), when the events upstream sent are stored here.
    package var stickyTags: TagValues {
        var values = TagValues()
        var index: guint = 0
        // The index counts only TAG events; a pad holds very few (one per scope).
        while index < 16, let event = gst_pad_get_sticky_event(pointer, GST_EVENT_TAG, index) {
            defer { gst_event_unref(event) }  // transfer full
            var list: UnsafeMutablePointer<GstTagList>? = nil
            gst_event_parse_tag(event, &list)  // borrowed from the event
            if let list { values.merge(borrowing: list) }
            index += 1
        }
        return values
    }

    /// The pad's name (`video_0`, `src`…).
    package var name: String { GLib.takeString(gst_object_get_name(GLib.cast(pointer, to: GstObject.self))) ?? "" }

    /// `gst_pad_query_duration` in TIME on this (source) pad: what its element answers; nil when unknown.
    package func duration() -> ClockTime? {
        var value: gint64 = -1
        guard gst_pad_query_duration(pointer, GST_FORMAT_TIME, &value) != 0, value >= 0 else { return nil }
        return ClockTime(nanoseconds: UInt64(value))
    }

    /// Sends a flushing seek to `time` (TIME, rate 1, no stop) into this source pad: its element seeks although
    /// nothing downstream is linked to a sink yet (a demuxer's pad before the decoder has exposed anything).
    /// False when the element refuses it.
    package func seek(to time: ClockTime, flags: SeekFlags) -> Bool {
        let event = gst_event_new_seek(
            1.0, GST_FORMAT_TIME, GstSeekFlags(rawValue: flags.rawValue), GST_SEEK_TYPE_SET,
            gint64(clamping: time.nanoseconds), GST_SEEK_TYPE_NONE, -1)
        return gst_pad_send_event(pointer, event) != 0  // takes the event
    }

    /// `gst_pad_peer_query_duration`: the duration upstream of this (sink) pad reports in `format`; nil when
    /// nobody upstream answers or the value is unknown (-1).
    package func peerDuration(_ format: QueryFormat) -> Int64? {
        var value: gint64 = -1
        guard gst_pad_peer_query_duration(pointer, format.raw, &value) != 0, value >= 0 else { return nil }
        return Int64(value)
    }
}
