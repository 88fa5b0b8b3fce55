internal import CGst
import FilmtoneCore
import Foundation
import Synchronization

/// Process-wide GStreamer set-up: `gst_init_check` once, plus the registry tweaks ftgst's pipelines rely on.
package enum GstRuntime {
    private static let initialised: Result<Void, FilmtoneError> = {
        started.set()
        var error: UnsafeMutablePointer<GError>? = nil
        guard gst_init_check(nil, nil, &error) != 0 else {
            let message = GLib.takeError(error)?.message ?? "gst_init_check failed"
            return .failure(FilmtoneError(.internalError, "GStreamer could not start: \(message)"))
        }
        preferJPEGParser()
        retireBrokenDecoders()
        return .success(())
    }()

    /// Set (once) when `initialised` first runs, so `shutdown` can tell without starting GStreamer: commands that
    /// use none (`save`, `share`, `lut inspect`) would otherwise pay for `gst_init` and a registry scan at exit.
    private static let started = AtomicFlag()

    /// Initialises GStreamer on first use; cheap afterwards. Throws `INTERNAL` if GStreamer cannot start.
    package static func ensure() throws {
        try initialised.get()
    }

    /// Loads the plugin named `name` (`gst_plugin_load_by_name`) on a thread of its own, so that a pipeline about
    /// to need it finds it loaded, or being loaded, instead of loading it only when autoplugging reaches it.
    /// `libav` pulls in 177 shared libraries and registers hundreds of element types: ≈ 90 ms, which otherwise
    /// starts only once the demuxer has read the file's header, and now overlaps the pipeline's own set-up.
    /// GStreamer's registry serialises loading, so a second loader just waits for this one. Once per process.
    package static func preloadInBackground(_ name: String) {
        guard preloading.withLock({ $0.insert(name).inserted }) else { return }
        Thread.detachNewThread {
            guard (try? ensure()) != nil, let plugin = gst_plugin_load_by_name(name) else { return }
            gst_object_unref(UnsafeMutableRawPointer(plugin))  // transfer full; the registry keeps it loaded
        }
    }

    private static let preloading = Mutex<Set<String>>([])

    /// `gst_version_string()`, e.g. "GStreamer 1.22.0".
    package static var version: String {
        GLib.takeString(gst_version_string()) ?? "GStreamer"
    }

    /// `gst_deinit()`: only for the very end of a process (the leak tracer reports at this point).
    package static func shutdown() {
        if started.isSet(), case .success = initialised {
            gst_deinit()
        }
    }

    /// decodebin only plugs `jpegparse` when its rank allows it, and in 1.22 its rank is NONE. Without the parser
    /// a JPEG's EXIF orientation never becomes an `image-orientation` tag, so `videoflip video-direction=auto`
    /// cannot turn a portrait photo upright. Raising the rank in this process (not system-wide) fixes both local
    /// and remote photos, because it works on the stream rather than on a file path.
    private static func preferJPEGParser() {
        guard let feature = gst_registry_lookup_feature(gst_registry_get(), "jpegparse") else { return }
        // gst_registry_lookup_feature: transfer full.
        defer { gst_object_unref(UnsafeMutableRawPointer(feature)) }
        gst_plugin_feature_set_rank(feature, guint(GST_RANK_PRIMARY.rawValue + 1))
    }

    /// Decoders that corrupt the process's memory on streams ftgst is given, so that decodebin never plugs them (rank
    /// NONE in this process only). `libde265dec` (gst-plugins-bad 1.22, libde265 1.0.11) on any 10-bit HEVC clip:
    /// `malloc(): corrupted top size`, exit 134. It is what decodebin falls to when gst-libav cannot load (a
    /// sandbox that binds only `/usr`, as GNOME runs thumbnailers: one of its libraries resolves through
    /// `/etc/alternatives`); with it gone, such a clip fails cleanly as a missing decoder.
    package static let brokenDecoders = ["libde265dec"]

    private static func retireBrokenDecoders() {
        for name in brokenDecoders {
            guard let feature = gst_registry_lookup_feature(gst_registry_get(), name) else { continue }
            // gst_registry_lookup_feature: transfer full.
            defer { gst_object_unref(UnsafeMutableRawPointer(feature)) }
            gst_plugin_feature_set_rank(feature, guint(GST_RANK_NONE.rawValue))
        }
    }
}
