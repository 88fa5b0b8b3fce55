internal import CGst
import FilmtoneCore
import Foundation

/// Owns one reference to a `GstSample` (a buffer with its caps and segment).
package final class Sample {
    package let pointer: OpaquePointer  // GstSample is opaque in C

    /// Adopts a transfer-full reference (`gst_app_sink_try_pull_preroll`).
    package init(takingFull pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        gst_sample_unref(pointer)
    }

    /// The sample's caps (borrowed from the sample, then referenced by `Caps`).
    package var caps: Caps? {
        gst_sample_get_caps(pointer).map { Caps(borrowing: $0) }
    }

    /// The buffer's PTS, in running-buffer terms (not yet stream time).
    package var presentationTimestamp: ClockTime? {
        gst_sample_get_buffer(pointer).flatMap { ClockTime(raw: $0.pointee.pts) }
    }

    /// `GST_BUFFER_DURATION`.
    package var duration: ClockTime? {
        gst_sample_get_buffer(pointer).flatMap { ClockTime(raw: $0.pointee.duration) }
    }

    /// The PTS converted to stream time through the sample's segment, so that edit lists and seek offsets are
    /// accounted for before comparing with a requested time. A frame that starts before the segment (kept
    /// because it is still on screen at the segment start) gets its true, earlier stream time; a stream time
    /// before zero is reported as zero.
    package var streamTime: ClockTime? {
        guard let pts = presentationTimestamp else { return nil }
        return streamTime(of: pts)
    }

    /// `pts`, a timestamp of this sample's stream (another picture's, seen upstream), converted to stream time
    /// through this sample's segment, as `streamTime` converts the sample's own.
    package func streamTime(of pts: ClockTime) -> ClockTime? {
        guard let segment = gst_sample_get_segment(pointer) else { return pts }
        var result: guint64 = 0  // guint64 imports as UInt here
        let sign = gst_segment_to_stream_time_full(segment, GST_FORMAT_TIME, guint64(pts.raw), &result)
        if sign > 0 { return ClockTime(nanoseconds: UInt64(result)) }
        if sign < 0 { return .zero }
        return nil
    }

    /// The inverse of `streamTime(of:)`: the buffer timestamp of this sample's segment at stream time
    /// `streamTime` (`gst_segment_position_from_stream_time_full`); nil when it is before the segment's buffer
    /// time 0 or unknown. What a probe upstream compares its buffers' PTS with.
    package func bufferTime(ofStreamTime streamTime: ClockTime) -> ClockTime? {
        guard let segment = gst_sample_get_segment(pointer) else { return streamTime }
        var result: guint64 = 0
        let sign = gst_segment_position_from_stream_time_full(
            segment, GST_FORMAT_TIME, guint64(streamTime.raw), &result)
        return sign > 0 ? ClockTime(nanoseconds: UInt64(result)) : nil
    }

    /// Maps the buffer as a video frame described by the sample's caps and hands the mapped view to `body`.
    /// The pixels are valid only inside `body` (STYLE lesson 6).
    package func withMappedFrame<R>(_ body: (VideoFrameView) throws -> R) throws -> R {
        guard let caps = gst_sample_get_caps(pointer), let buffer = gst_sample_get_buffer(pointer) else {
            throw FilmtoneError(.decodeFailed, "decoded sample has no caps or buffer")
        }
        var info = GstVideoInfo()
        guard gst_video_info_from_caps(&info, caps) != 0 else {
            throw FilmtoneError(.decodeFailed, "decoded sample has no video caps")
        }
        var frame = GstVideoFrame()
        guard gst_video_frame_map(&frame, &info, buffer, GST_MAP_READ) != 0 else {
            throw FilmtoneError(.decodeFailed, "decoded frame cannot be mapped")
        }
        defer { gst_video_frame_unmap(&frame) }
        guard let data = frame.data.0 else { throw FilmtoneError(.decodeFailed, "decoded frame has no data") }
        let view = VideoFrameView(
            width: Int(frame.info.width), height: Int(frame.info.height), stride: Int(frame.info.stride.0),
            base: UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self))
        return try body(view)
    }
}

/// Plane 0 of a mapped packed video frame. Rows are `stride` bytes apart and may be padded: walk by stride.
package struct VideoFrameView {
    package let width: Int
    package let height: Int
    package let stride: Int
    package let base: UnsafePointer<UInt8>

    package func row(_ y: Int) -> UnsafePointer<UInt8> { base + stride * y }
}

/// An `appsink` element, for pulling decoded samples out of a pipeline.
package struct AppSink {
    package let element: Element

    /// Wraps an element that is an `appsink` (the caller names it in its launch line).
    package init(element: Element) { self.element = element }

    private var sink: UnsafeMutablePointer<GstAppSink> { GLib.cast(element.pointer, to: GstAppSink.self) }

    /// `gst_app_sink_try_pull_preroll`: the prerolled sample, waiting at most `timeout`; nil at EOS or time-out.
    package func pullPreroll(timeout: ClockTime) -> Sample? {
        gst_app_sink_try_pull_preroll(sink, timeout.raw).map { Sample(takingFull: $0) }
    }

    /// `gst_app_sink_try_pull_sample`: the next sample of a PLAYING pipeline, waiting at most `timeout`; nil at EOS
    /// or time-out.
    package func pullSample(timeout: ClockTime) -> Sample? {
        gst_app_sink_try_pull_sample(sink, timeout.raw).map { Sample(takingFull: $0) }
    }

    /// `gst_app_sink_is_eos`.
    package var isEndOfStream: Bool { gst_app_sink_is_eos(sink) != 0 }
}
