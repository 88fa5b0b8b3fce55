import GstKit

/// Process-level control of the media runtime, for programs embedding ftgst.
public enum FilmtoneRuntime {
    /// The GStreamer version string, e.g. "GStreamer 1.22.0" (`gst_version_string`).
    public static var gstreamerVersion: String { GstRuntime.version }

    /// Releases GStreamer (`gst_deinit`) at the very end of a process, after every job has finished. Only then
    /// does GStreamer's leak tracer report; nothing may use ftgst afterwards.
    public static func shutdown() { GstRuntime.shutdown() }
}
