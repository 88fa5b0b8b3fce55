// swift-tools-version:6.0
// ftgst: a media engine for Linux on GStreamer. No outside Swift packages: the machines cannot fetch them.
//
// The targets are the layers (docs/ARCHITECTURE.md#layers); each depends only on those below it:
//
//   ftgst (CLI) ─┬► FilmtoneGst (features, the public API)
//                │    ├─► FilmtoneElements (ftlut, fttrim, fth264dec, ftx264enc, the plugin) ─┬► GstKit ─► CGst
//                │    │                                                                        └► CLibav (dlopen)
//                │    ├─► ImageCodecs ─► CImageCodecs
//                │    ├─► FilmtoneLooks (pure Swift) ─► FilmtoneCore (pure Swift)
//                │    └─► DBusKit (the session bus: portals, notifications) ─► CGio
//                └► SoupKit (the loopback HTTP/WebSocket server, serve --listen) ─► CSoup
import PackageDescription

let package = Package(
    name: "ftgst",
    products: [
        .library(name: "FilmtoneGst", targets: ["FilmtoneGst"]),
        .executable(name: "ftgst", targets: ["ftgst"]),
        // The loadable GStreamer plugin (libgstfilmtone.so): the elements module alone (with the wrapper, looks
        // and core modules it stands on), exporting gst_plugin_filmtone_get_desc. `make plugin` copies it to
        // .build/gst-plugins/.
        .library(name: "gstfilmtone", type: .dynamic, targets: ["FilmtoneElements"]),
    ],
    targets: [
        // GStreamer only (core, base, app, video, pbutils). Include and link flags come from pkg-config; the extra
        // libraries are `link` lines in the module map.
        .systemLibrary(
            name: "CGst",
            pkgConfig: "gstreamer-video-1.0",
            providers: [.apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev"])]
        ),
        // The image codecs: TurboJPEG, libpng and libwebp (their headers are in the default include path).
        .systemLibrary(
            name: "CImageCodecs",
            pkgConfig: "libpng",
            providers: [.apt(["libturbojpeg0-dev", "libpng-dev", "libwebp-dev"])]
        ),
        // libavcodec's headers only (`fth264dec`): the library itself is opened with dlopen when first needed.
        .systemLibrary(name: "CLibav", providers: [.apt(["libavcodec-dev"])]),
        // libsoup 3: the HTTP and WebSocket server (and the client session its tests use).
        .systemLibrary(name: "CSoup", pkgConfig: "libsoup-3.0", providers: [.apt(["libsoup-3.0-dev"])]),
        // GIO's D-Bus client (the session bus): GDBusConnection and GVariant.
        .systemLibrary(name: "CGio", pkgConfig: "gio-unix-2.0", providers: [.apt(["libglib2.0-dev"])]),
        // Linux calls Swift cannot import as declared (prctl is variadic): static inline shims, no library to link.
        .systemLibrary(name: "CLinux"),
        // Errors, JSON, files, subprocesses, SHA-256, the parent's death: Swift over Foundation (and CLinux's one
        // shim).
        .target(name: "FilmtoneCore", dependencies: ["CLinux"]),
        // .cube parsing, the reference look, the frame kernels: pure Swift, no C module.
        .target(name: "FilmtoneLooks", dependencies: ["FilmtoneCore"]),
        // The GStreamer wrapper: the only code that calls gst_*/g_* for the features.
        .target(name: "GstKit", dependencies: ["CGst", "FilmtoneCore"]),
        // The libsoup wrapper: the only code that calls soup_* and runs a GLib main loop for it.
        .target(name: "SoupKit", dependencies: ["CSoup", "FilmtoneCore"]),
        // The GIO D-Bus wrapper: the only code that calls g_dbus_* (the desktop portals, notifications).
        .target(name: "DBusKit", dependencies: ["CGio", "FilmtoneCore"]),
        // ftgst's own GStreamer elements and the `filmtone` plugin entry point.
        .target(
            name: "FilmtoneElements", dependencies: ["CGst", "CLibav", "GstKit", "FilmtoneLooks", "FilmtoneCore"]),
        // JPEG and PNG encoding of packed RGB images; JPEG, PNG and WebP decoding at the size shown.
        .target(
            name: "ImageCodecs", dependencies: ["CImageCodecs", "FilmtoneCore"]
        ),
        // The features and the public API.
        .target(
            name: "FilmtoneGst",
            dependencies: ["FilmtoneCore", "FilmtoneLooks", "GstKit", "FilmtoneElements", "ImageCodecs", "DBusKit"]
        ),
        // BuildInfo writes the git commit into the CLI before each build (`ftgst --version`).
        .executableTarget(name: "ftgst", dependencies: ["FilmtoneGst", "SoupKit"], plugins: ["BuildInfo"]),
        .plugin(name: "BuildInfo", capability: .buildTool()),
        // Micro-benchmarks of the hot loops through the modules' APIs (bench/lut.sh); not installed.
        .executableTarget(name: "ftgst-bench", dependencies: ["FilmtoneGst", "FilmtoneLooks"]),
        // Tests mirror the sources. Helpers every test target shares: the fixtures' and the binary's paths, running
        // processes with a deadline, ffmpeg-decoded reference images, the local HTTP server.
        .target(
            name: "FilmtoneTestSupport", dependencies: ["FilmtoneLooks", "FilmtoneCore"], path: "Tests/Support"
        ),
        .testTarget(name: "FilmtoneCoreTests", dependencies: ["FilmtoneCore", "FilmtoneTestSupport"]),
        // The looks need no GStreamer: .cube files, the reference look, the kernels.
        .testTarget(
            name: "FilmtoneLooksTests", dependencies: ["FilmtoneLooks", "FilmtoneCore", "FilmtoneTestSupport"]
        ),
        // ftlut in process (appsrc/appsink around it) and the loadable plugin under gst-launch-1.0.
        .testTarget(
            name: "FilmtoneElementsTests",
            dependencies: [
                "FilmtoneElements", "FilmtoneLooks", "FilmtoneCore", "FilmtoneTestSupport",
            ]
        ),
        // The features in process: pure recipes and plans, and drivers on generated media.
        .testTarget(
            name: "FilmtoneGstTests",
            dependencies: [
                "FilmtoneGst", "FilmtoneCore", "FilmtoneLooks", "GstKit", "FilmtoneElements", "ImageCodecs", "CGst",
                "FilmtoneTestSupport",
            ]
        ),
        // The loopback server over real sockets: static files, the token, the WebSocket and its Origin check.
        // The D-Bus wrapper against a private dbus-daemon: values through GVariant and the bus, typed failures.
        .testTarget(name: "DBusKitTests", dependencies: ["DBusKit", "FilmtoneTestSupport"]),
        .testTarget(name: "SoupKitTests", dependencies: ["SoupKit", "FilmtoneCore", "FilmtoneTestSupport"]),
        // The built ftgst binary end to end (FTGST_BIN); the looks module only computes expected pixels, the core
        // module's JSONValue reads and writes `ftgst serve`'s messages, SoupKit's client talks to `serve --listen`.
        .testTarget(
            name: "ftgstCLITests", dependencies: ["FilmtoneTestSupport", "FilmtoneLooks", "FilmtoneCore", "SoupKit"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
