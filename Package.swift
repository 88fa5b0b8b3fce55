// swift-tools-version:5.9
// ftgst: a media engine for Linux on GStreamer. No outside Swift packages: the machines cannot fetch them.
import PackageDescription

let package = Package(
    name: "ftgst",
    products: [
        .library(name: "FilmtoneGst", targets: ["FilmtoneGst"]),
        .executable(name: "ftgst", targets: ["ftgst"]),
        // The loadable GStreamer plugin (libgstfilmtone.so): the same library, exporting
        // gst_plugin_filmtone_get_desc. `make plugin` copies it to .build/gst-plugins/.
        .library(name: "gstfilmtone", type: .dynamic, targets: ["FilmtoneGst"]),
    ],
    targets: [
        // Module map over GStreamer (core, base, app, video, pbutils), TurboJPEG and libpng. Include and link
        // flags come from pkg-config; the extra libraries are `link` lines in the module map.
        .systemLibrary(
            name: "CGst",
            pkgConfig: "gstreamer-video-1.0",
            providers: [
                .apt([
                    "libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev", "libturbojpeg0-dev", "libpng-dev",
                ])
            ]
        ),
        .target(name: "FilmtoneGst", dependencies: ["CGst"]),
        .executableTarget(name: "ftgst", dependencies: ["FilmtoneGst"]),
        // Micro-benchmarks of FilmtoneGst's hot loops through its public API (bench/lut.sh); not installed.
        .executableTarget(name: "ftgst-bench", dependencies: ["FilmtoneGst"]),
        .testTarget(name: "FilmtoneGstTests", dependencies: ["FilmtoneGst", "CGst"]),
    ]
)
