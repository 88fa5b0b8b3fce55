package import CGst
import FilmtoneCore
import GstKit

/// The `filmtone` plugin: ftgst's own elements, `ftlut` (LUTFilterElement), `fttrim` (TrimElement), `fth264dec`,
/// `fth265dec`, `ftav1dec` (LibavDecoderElement), `ftx264enc` (X264EncoderElement). The loadable
/// `libgstfilmtone.so` is built from this module alone; inside ftgst the same elements are registered statically.
package enum FilmtonePlugin {
    /// Starts GStreamer (GstRuntime) and makes ftgst's elements available to every pipeline of this process, once.
    /// Features call it before they build a pipeline.
    package static func ensureRegistered() throws {
        try GstRuntime.ensure()
        _ = registered
    }

    private static let registered: Void = registerStatically()

    /// Makes `ftlut`, `fttrim`, `fth264dec`, `fth265dec` and `ftx264enc` available inside this process without a plugin file
    /// (`gst_plugin_register_static`). Registered even when GStreamer's registry already knows them from an
    /// installed `libgstfilmtone.so` (the .deb's, or an older one): the features registered here replace the
    /// registry's, so this process uses its own elements and never loads the file (which carries a second copy of
    /// the Swift runtime and may be another version). Skipped only when the file is already loaded in this process
    /// (its element type exists), where a second registration of the type would fail.
    private static func registerStatically() {
        guard g_type_from_name(LUTFilterElement.typeName) == 0 else { return }
        // The descriptor's permanent strings: gst_plugin_register_static may keep the pointers it is given.
        let d = PluginDescriptor.pointer.pointee
        _ = gst_plugin_register_static(
            d.major_version, d.minor_version, d.name, d.description, pluginInit,
            d.version, d.license, d.source, d.package, d.origin)
    }

    /// The factory names of the plugin's elements.
    package static var factoryNames: [String] {
        [LUTFilterElement.factoryName, TrimElement.factoryName, X264EncoderElement.factoryName]
            + LibavDecoderElement.codecs.map(\.factoryName)
    }

    /// The plugin's origin URL as gst-inspect shows it. The project has no public URL; this is the text
    /// GStreamer's own build uses when a package has no origin (meson's `GST_PACKAGE_ORIGIN` default).
    package static let origin = "Unknown package origin"

    /// The `plugin_init` of the `filmtone` plugin, static or loaded from libgstfilmtone.so.
    package static let pluginInit: @convention(c) (OpaquePointer?) -> gboolean = { plugin in
        LUTFilterElement.register(in: plugin) && TrimElement.register(in: plugin)
            && LibavDecoderElement.register(in: plugin) && X264EncoderElement.register(in: plugin) ? 1 : 0
    }

}

// MARK: - The loadable plugin's entry point

/// `gst_plugin_filmtone_get_desc`: what GStreamer's loader looks up in libgstfilmtone.so (the name comes from the
/// file name). The descriptor and its strings live for the whole process.
@_cdecl("gst_plugin_filmtone_get_desc")
public func gstPluginFilmtoneGetDesc() -> UnsafeRawPointer {
    UnsafeRawPointer(PluginDescriptor.pointer)
}

private enum PluginDescriptor {
    /// Filled once by Swift's thread-safe lazy initialisation, never written again; GStreamer only reads it.
    nonisolated(unsafe) static let pointer: UnsafeMutablePointer<GstPluginDesc> = {
        let descriptor = UnsafeMutablePointer<GstPluginDesc>.allocate(capacity: 1)
        descriptor.initialize(
            to: GstPluginDesc(
                major_version: ftgst_version_major(), minor_version: ftgst_version_minor(),
                name: UnsafePointer(strdup("filmtone")), description: UnsafePointer(strdup("ftgst film looks")),
                plugin_init: FilmtonePlugin.pluginInit, version: UnsafePointer(strdup(FilmtoneVersion.string)),
                license: UnsafePointer(strdup("MIT/X11")), source: UnsafePointer(strdup("ftgst")),
                package: UnsafePointer(strdup("ftgst")), origin: UnsafePointer(strdup(FilmtonePlugin.origin)),
                release_datetime: nil, _gst_reserved: (nil, nil, nil, nil)))
        return descriptor
    }()
}
