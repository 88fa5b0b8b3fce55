package import CGst
import FilmtoneCore
import FilmtoneLooks
import Foundation
import GstKit
import Synchronization

// MARK: - ftlut: a GstVideoFilter written in Swift
//
// gst-launch-1.0 videotestsrc num-buffers=30 ! ftlut creative-lut=look.cube intensity=0.8 ! videoconvert ! fakesink
//
// Two LUT slots (an input transform, then a creative look blended by intensity) applied in place to packed 8-bit
// RGB frames, 8-bit 4:2:0 YUV (I420, NV12: no conversion to RGB and back), 10-bit 4:2:0 YUV (I420_10LE, P010_10LE:
// through the 16-bit look, per pixel), or packed 16-bit RGB (RGBA64_LE & co.). The `.cube` files are parsed in
// start(), and again on the next frame when a LUT path is set while running; the frame loop is `LUTKernel` (8-bit
// RGB), `YUVKernel` (built per negotiated colorimetry), `YUV10Kernel` or `LUTKernel16`. A file that cannot be read
// posts RESOURCE/NOT_FOUND, one that does not parse RESOURCE/SETTINGS, a look table that cannot be allocated (on the
// first frame) CORE/FAILED, all from this element: the library maps them to FILE_NOT_FOUND, LUT_INVALID and
// INTERNAL.
//
// The GObject type is registered by hand (the C macros G_DEFINE_TYPE & co. do not exist for Swift): `SwiftSubclass`
// gives it the parent's sizes plus one pointer, which holds the element's Swift state (as for fttrim).

/// Property defaults and ids, next to the properties (as GStreamer's own elements keep them).
package enum LUTFilterDefaults {
    package static let intensity = 1.0
    package static let interpolation = Interpolation.tetrahedral
}

private enum PropertyID: guint {
    case inputLUT = 1
    case creativeLUT
    case intensity
    case interpolation
    case toneMap
    case toneMapPeak
}

/// The element's state: user settings (written by set_property on any thread) apart from what is derived from
/// them when the element starts (the parsed look and its kernel), as gst-plugins-rs elements keep them.
package final class LUTFilterState: Sendable {
    package struct Settings: Equatable, Sendable {
        package var inputLUT: String? = nil
        package var creativeLUT: String? = nil
        package var intensity = LUTFilterDefaults.intensity
        package var interpolation = LUTFilterDefaults.interpolation
        /// A tone map generated into the input slot (`ToneMap`) instead of a file; nil: none.
        package var toneMap: ToneMap.Transfer? = nil
        /// The PQ source's peak in cd/m² for the tone map (`ToneMap.sourcePeak`: from HDR10's metadata).
        package var toneMapPeak = ToneMap.defaultSourcePeak

        /// The two LUT paths, empty meaning none (as nil), and the generated input transform.
        var paths: LUTPaths {
            LUTPaths(
                input: inputLUT.flatMap { $0.isEmpty ? nil : $0 },
                creative: creativeLUT.flatMap { $0.isEmpty ? nil : $0 }, toneMap: toneMap, toneMapPeak: toneMapPeak)
        }
    }

    /// What fills the two slots: the LUT files (nil for an empty slot) and, for the input slot, a generated
    /// tone map.
    package struct LUTPaths: Equatable, Sendable {
        package var input: String?
        package var creative: String?
        package var toneMap: ToneMap.Transfer? = nil
        package var toneMapPeak = ToneMap.defaultSourcePeak
        package var isEmpty: Bool { input == nil && creative == nil && toneMap == nil }
    }

    /// Everything behind the one lock: set_property writes `settings` from any thread, the streaming thread
    /// reads them and caches kernels built for them.
    private struct Values: Sendable {
        var settings = Settings()
        /// The settings `kernel` was built for; a property change makes them differ and the kernel is rebuilt
        /// from the next frame.
        var builtFor: Settings? = nil
        var luts: (input: CubeLUT?, creative: CubeLUT?) = (nil, nil)
        /// The paths `luts` were parsed from, between start() and stop() (nil when stopped). A LUT path set
        /// meanwhile (PLAYING included) makes the settings differ from them, and the next frame parses again.
        var loadedPaths: LUTPaths? = nil
        var kernel: LUTKernel? = nil
        /// The 16-bit kernel and the settings it was built for, kept apart from the 8-bit one.
        var kernel16: LUTKernel16? = nil
        var builtFor16: Settings? = nil
        /// The YUV kernel (its colorimetry inside it) and the settings it was built for.
        var kernelYUV: YUVKernel? = nil
        var builtForYUV: Settings? = nil
        var negotiatedFormat: LUTFilterElement.PixelFormat? = nil

        mutating func dropKernels() {
            (kernel, builtFor, kernel16, builtFor16, kernelYUV, builtForYUV) = (nil, nil, nil, nil, nil, nil)
        }
    }

    private let values = Mutex(Values())

    /// The negotiated format's depth and where R, G, B sit in it, or the YUV layout and colorimetry (set_info),
    /// read by the frame loop. Moving to another kind releases the kernels of the others (the 8-bit RGB and the
    /// YUV ones hold 64 MiB each), and a YUV kernel built for another colorimetry.
    package var format: LUTFilterElement.PixelFormat? {
        get { values.withLock { $0.negotiatedFormat } }
        set {
            values.withLock { v in
                v.negotiatedFormat = newValue
                switch newValue {
                case .packed8: (v.kernel16, v.builtFor16, v.kernelYUV, v.builtForYUV) = (nil, nil, nil, nil)
                case .packed16, .yuv420x10: (v.kernel, v.builtFor, v.kernelYUV, v.builtForYUV) = (nil, nil, nil, nil)
                case .yuv420(_, let colorimetry):
                    (v.kernel, v.builtFor, v.kernel16, v.builtFor16) = (nil, nil, nil, nil)
                    if v.kernelYUV?.colorimetry != colorimetry { (v.kernelYUV, v.builtForYUV) = (nil, nil) }
                case nil: break
                }
            }
        }
    }

    package func update(_ change: (inout Settings) -> Void) {
        values.withLock { change(&$0.settings) }
    }

    package var current: Settings { values.withLock { $0.settings } }

    /// Parses the LUT files of the current settings; true when there is a LUT at all. Throws `FilmtoneError`
    /// (FILE_NOT_FOUND / LUT_INVALID), and then keeps what was loaded before (a later frame tries again).
    package func start() throws -> Bool {
        try load(values.withLock { $0.settings.paths })
    }

    /// Between start() and stop(): whether a LUT path was set since the files were last parsed (set_property
    /// calls it to leave pass-through, so that the next frame reaches `reloadIfChanged`).
    package var lutPathsChanged: Bool {
        values.withLock { v in v.loadedPaths.map { $0 != v.settings.paths } ?? false }
    }

    /// Called on each frame: when a LUT path was set since the files were parsed (in PLAYING, say), parses the
    /// new ones (outside the lock) and drops the kernels, so this frame already gets the new look. Returns
    /// whether there is a LUT at all, or nil when nothing changed. Throws as start() does.
    package func reloadIfChanged() throws -> Bool? {
        let wanted = values.withLock { v in
            v.loadedPaths.map { $0 == v.settings.paths } == false ? v.settings.paths : nil
        }
        guard let wanted else { return nil }
        return try load(wanted)
    }

    private func load(_ paths: LUTPaths) throws -> Bool {
        if paths.toneMap != nil && paths.input != nil {
            throw FilmtoneError(.lutInvalid, "tone-map and input-lut both fill the input slot: set one")
        }
        // The tone map's table is built from its math once per process (`ToneMap.table`), never per frame.
        let input =
            try paths.toneMap.map { ToneMap.table(for: $0, sourcePeak: paths.toneMapPeak) }
            ?? paths.input.map {
                try CubeLUT.load(path: $0)
            }
        let creative = try paths.creative.map { try CubeLUT.load(path: $0) }
        values.withLock {
            $0.luts = (input, creative)
            $0.loadedPaths = paths
            $0.dropKernels()
        }
        return !paths.isEmpty
    }

    package func stop() {
        values.withLock {
            $0.luts = (nil, nil)
            $0.loadedPaths = nil
            $0.dropKernels()
        }
    }

    /// The kernel for the current settings, built on first use after start() or a property change. The build
    /// (a 64 MiB table, ≈ 80 ms) runs outside the lock, so property calls from other threads never wait for it.
    /// Throws `INTERNAL` when the table cannot be allocated (nothing is cached then; the next frame tries again).
    package func currentKernel() throws -> LUTKernel {
        try cachedKernel(\.kernel, \.builtFor, build: LUTKernel.init(look:))
    }

    /// The 16-bit kernel for the current settings, built on first use like `currentKernel()` (a few ms: no table).
    package func currentKernel16() throws -> LUTKernel16 {
        try cachedKernel(\.kernel16, \.builtFor16, build: LUTKernel16.init(look:))
    }

    /// The YUV kernel for the current settings and `colorimetry`, built on first use like `currentKernel()` (no
    /// table is filled then: its rows are, as frames use them).
    package func currentKernelYUV(_ colorimetry: YUVColorimetry) throws -> YUVKernel {
        try cachedKernel(
            \.kernelYUV, \.builtForYUV, fits: { $0.colorimetry == colorimetry },
            build: { try YUVKernel(look: $0, colorimetry: colorimetry) })
    }

    private func cachedKernel<K: Sendable>(
        _ kernel: WritableKeyPath<Values, K?> & Sendable,
        _ builtFor: WritableKeyPath<Values, Settings?> & Sendable, fits: (K) -> Bool = { _ in true },
        build: (Look) throws -> K
    ) throws -> K {
        // Under the lock: the cached kernel if it fits, else what to build one from.
        let (cached, wanted, slots) = values.withLock { v -> (K?, Settings, (input: CubeLUT?, creative: CubeLUT?)) in
            if let cached = v[keyPath: kernel], v[keyPath: builtFor] == v.settings, fits(cached) {
                return (cached, v.settings, (nil, nil))
            }
            return (nil, v.settings, v.luts)
        }
        if let cached { return cached }
        let built = try build(
            try Look(
                inputLUT: slots.input, creativeLUT: slots.creative,
                intensity: wanted.intensity, interpolation: wanted.interpolation))
        values.withLock { v in
            // Publish unless the settings moved on meanwhile (the next frame then builds for the newer ones).
            if v.settings == wanted {
                v[keyPath: kernel] = built
                v[keyPath: builtFor] = wanted
            }
        }
        return built
    }
}

/// Registration of the `ftlut` element type and of the `filmtone` plugin that carries it.
package enum LUTFilterElement {
    package static let factoryName = "ftlut"
    package static let typeName = "GstFtLut"

    /// A negotiated format: its depth, and where R, G, B sit in a pixel; or 8-bit 4:2:0 YUV and its colorimetry.
    package enum PixelFormat: Equatable {
        case packed8(PackedRGBLayout)
        case packed16(PackedRGB16Layout)
        case yuv420(YUV420Layout, YUVColorimetry)
        /// 10-bit 4:2:0 YUV and its colorimetry, through the 16-bit kernel (`YUV10Kernel`).
        case yuv420x10(YUV10Layout, YUVColorimetry)
    }

    /// How the chroma of an 8-bit 4:2:0 format is stored.
    package enum YUV420Layout: Equatable {
        /// Three planes: Y, U, V.
        case i420
        /// Two planes: Y, then U and V interleaved.
        case nv12
    }

    /// The caps both pads accept: packed 8-bit RGB in any channel order (the kernel addresses channels by offset).
    package static let formats: [(String, PackedRGBLayout)] = [
        ("RGBx", .rgbx), ("BGRx", .bgrx), ("xRGB", .xrgb), ("xBGR", .xbgr),
        ("RGBA", .rgbx), ("BGRA", .bgrx), ("ARGB", .xrgb), ("ABGR", .xbgr),
        ("RGB", .rgb), ("BGR", .bgr),
    ]
    /// Then packed 16-bit RGB with alpha, little-endian samples (the 16-bit RGB formats videoconvert offers in 1.22;
    /// `ARGB64` is the host-endian name, little-endian here). Listed after the 8-bit formats, and caps queries are
    /// answered 8-bit first (`query`), so that a pipeline that negotiated 8-bit before still does.
    package static let formats16: [(String, PackedRGB16Layout)] = [
        ("RGBA64_LE", .rgba64), ("BGRA64_LE", .bgra64), ("ARGB64_LE", .argb64), ("ABGR64_LE", .abgr64),
        ("ARGB64", .argb64),
    ]
    /// Between the two: 8-bit 4:2:0 YUV, processed without a conversion pass (`YUVKernel`). After the 8-bit RGB
    /// formats, and answered after them in caps queries, so that a source offering both (videotestsrc) still
    /// fixates the RGB format it did before; a videoconvert after a YUV source now passes I420 or NV12 through.
    package static let formatsYUV: [(String, YUV420Layout)] = [("I420", .i420), ("NV12", .nv12)]
    /// 10-bit 4:2:0 YUV, what 10-bit decoders give (avdec_h265: I420_10LE; hardware decoders: P010_10LE), in place
    /// through the 16-bit kernel. Caps queries answer them first when the asking peer offers only deep formats
    /// (`query`), after the 8-bit ones otherwise.
    package static let formatsYUV10: [(String, YUV10Layout)] = [("I420_10LE", .i420), ("P010_10LE", .p010)]

    /// The format named `name` (a GStreamer format string); `colorimetry` only matters for YUV formats.
    package static func pixelFormat(named name: String, colorimetry: YUVColorimetry = .bt601) -> PixelFormat? {
        if let layout = formats.first(where: { $0.0 == name })?.1 { return .packed8(layout) }
        if let layout = formatsYUV.first(where: { $0.0 == name })?.1 { return .yuv420(layout, colorimetry) }
        if let layout = formatsYUV10.first(where: { $0.0 == name })?.1 { return .yuv420x10(layout, colorimetry) }
        if let layout = formats16.first(where: { $0.0 == name })?.1 { return .packed16(layout) }
        return nil
    }
    package static var capsDescription: String {
        let names = formats.map(\.0) + formatsYUV.map(\.0) + formatsYUV10.map(\.0) + formats16.map(\.0)
        return "video/x-raw, format=(string){ \(names.joined(separator: ", ")) }, "
            + "width=(int)[ 1, max ], height=(int)[ 1, max ], framerate=(fraction)[ 0/1, max ]"
    }

    /// The example launch line gst-inspect shows (in the description: the element metadata has no field for it;
    /// GStreamer's C elements keep theirs in a gtk-doc block that gst-inspect never prints).
    package static let exampleLaunchLine =
        "gst-launch-1.0 videotestsrc num-buffers=30 ! ftlut creative-lut=look.cube intensity=0.8 "
        + "! videoconvert ! fakesink"

    /// The element's description (its metadata), ending with the example launch line.
    package static let description =
        "Applies an input-transform 3D LUT, then a creative 3D LUT blended by intensity (.cube files). "
        + "Example: \(exampleLaunchLine)"

    /// Created once (a Swift lazy global, itself thread-safe); GStreamer's debug functions take it from any thread.
    nonisolated(unsafe) fileprivate static let debugCategory: UnsafeMutablePointer<GstDebugCategory>? =
        _gst_debug_category_new("ftlut", 0, "ftgst film-look LUT filter")

    /// The GType (a GstVideoFilter whose instances carry a `LUTFilterState`), registered once per process.
    fileprivate static let subclass = SwiftSubclass<LUTFilterState>(
        parent: gst_video_filter_get_type(), name: typeName, classInit: classInit, instanceInit: instanceInit)
    package static var type: GType { subclass.type }

    /// The interpolation enum type for the `interpolation` property (`g_enum_register_static` keeps pointers to
    /// its table forever, so the table and its strings are allocated once and never freed).
    package static let interpolationType: GType = {
        let name = "GstFtLutInterpolation"
        let existing = g_type_from_name(name)
        if existing != 0 { return existing }
        let cases = Interpolation.allCases
        let table = UnsafeMutablePointer<GEnumValue>.allocate(capacity: cases.count + 1)
        for (index, method) in cases.enumerated() {
            table[index] = GEnumValue(
                value: gint(index), value_name: strdup(method.rawValue.capitalized),
                value_nick: strdup(method.rawValue))
        }
        table[cases.count] = GEnumValue(value: 0, value_name: nil, value_nick: nil)
        return g_enum_register_static(name, table)
    }()

    /// Registers `ftlut` in `plugin` (`gst_element_register`).
    package static func register(in plugin: OpaquePointer?) -> Bool {
        gst_element_register(plugin, factoryName, guint(GST_RANK_NONE.rawValue), type) != 0
    }

    fileprivate static func state(of instance: UnsafeMutableRawPointer) -> LUTFilterState {
        subclass.state(of: instance)
    }

    fileprivate static func log(_ level: GstDebugLevel, _ object: UnsafeMutableRawPointer?, _ message: String) {
        guard let category = debugCategory, level.rawValue <= category.pointee.threshold else { return }
        gst_debug_log_literal(
            category, level, #fileID, "ftlut", 0, object?.assumingMemoryBound(to: GObject.self),
            message)
    }

    /// Posts an ERROR message from the element (what GST_ELEMENT_ERROR does; the macro is not importable): a file
    /// that cannot be read is RESOURCE/NOT_FOUND, an internal failure (a look table that cannot be allocated)
    /// CORE/FAILED, anything else (a file that does not parse) RESOURCE/SETTINGS.
    fileprivate static func postError(_ element: UnsafeMutableRawPointer, _ error: FilmtoneError) {
        let (domain, code): (GQuark, gint)
        switch error.code {
        case .fileNotFound: (domain, code) = (gst_resource_error_quark(), gint(GST_RESOURCE_ERROR_NOT_FOUND.rawValue))
        case .internalError: (domain, code) = (gst_core_error_quark(), gint(GST_CORE_ERROR_FAILED.rawValue))
        default: (domain, code) = (gst_resource_error_quark(), gint(GST_RESOURCE_ERROR_SETTINGS.rawValue))
        }
        SwiftSubclass<LUTFilterState>.postError(
            element, domain: domain, code: code, message: error.message,
            debug: "\(error.code.rawValue): \(error.message)", function: "start")
    }

    // MARK: - GObject vfuncs

    private static let classInit: @convention(c) (gpointer?, gpointer?) -> Void = { klass, _ in
        guard let klass else { return }
        let objectClass = ftgst_object_class(klass)!
        objectClass.pointee.set_property = setProperty
        objectClass.pointee.get_property = getProperty
        objectClass.pointee.finalize = finalize

        // No G_PARAM_STATIC_STRINGS: Swift passes Strings to C as temporary buffers, so GLib must copy them.
        let readWrite = G_PARAM_READWRITE
        let controllable = GParamFlags(rawValue: readWrite.rawValue | ftgst_param_mutable_playing().rawValue)
        g_object_class_install_property(
            objectClass, PropertyID.inputLUT.rawValue,
            g_param_spec_string(
                "input-lut", "Input LUT", "Path of a .cube file applied first (e.g. log to display); empty: none",
                nil, readWrite))
        g_object_class_install_property(
            objectClass, PropertyID.creativeLUT.rawValue,
            g_param_spec_string(
                "creative-lut", "Creative LUT", "Path of a .cube file with the look, applied second; empty: none",
                nil, readWrite))
        g_object_class_install_property(
            objectClass, PropertyID.intensity.rawValue,
            g_param_spec_double(
                "intensity", "Intensity", "Blend of the creative LUT: out = x + (look(x) - x) * intensity",
                0, 1, LUTFilterDefaults.intensity, controllable))
        g_object_class_install_property(
            objectClass, PropertyID.interpolation.rawValue,
            g_param_spec_enum(
                "interpolation", "Interpolation", "How 3D tables are sampled between nodes", interpolationType,
                gint(Interpolation.allCases.firstIndex(of: LUTFilterDefaults.interpolation)!), controllable))
        g_object_class_install_property(
            objectClass, PropertyID.toneMap.rawValue,
            g_param_spec_string(
                "tone-map", "Tone map",
                "HDR transfer of the input to tone-map to SDR BT.709 in the input slot (BT.2390 EETF, BT.2020 to "
                    + "BT.709): pq, hlg; empty: none",
                nil, readWrite))
        g_object_class_install_property(
            objectClass, PropertyID.toneMapPeak.rawValue,
            g_param_spec_double(
                "tone-map-peak", "Tone map peak",
                "Brightest light of a PQ source in cd/m² (HDR10's MaxCLL or mastering peak), mapped to SDR white",
                400, 10000, ToneMap.defaultSourcePeak, readWrite))

        let elementClass = ftgst_element_class(klass)!
        // set_metadata, not set_static_metadata: the strings are temporary (see above) and must be copied.
        gst_element_class_set_metadata(elementClass, "Film look LUT", "Filter/Effect/Video", description, "ftgst")
        SwiftSubclass<LUTFilterState>.addPadTemplates(elementClass, caps: capsDescription)

        let transformClass = ftgst_base_transform_class(klass)!
        transformClass.pointee.start = start
        transformClass.pointee.stop = stop
        transformClass.pointee.query = query
        let filterClass = ftgst_video_filter_class(klass)!
        filterClass.pointee.set_info = setInfo
        filterClass.pointee.transform_frame_ip = transformFrameInPlace
    }

    private static let instanceInit: @convention(c) (UnsafeMutablePointer<GTypeInstance>?, gpointer?) -> Void = {
        instance, _ in
        guard let instance else { return }
        subclass.attach(LUTFilterState(), to: UnsafeMutableRawPointer(instance))
    }

    private static let finalize: @convention(c) (UnsafeMutablePointer<GObject>?) -> Void = { object in
        guard let object else { return }
        subclass.finalize(object)
    }

    private static let setProperty:
        @convention(c) (
            UnsafeMutablePointer<GObject>?, guint, UnsafePointer<GValue>?, UnsafeMutablePointer<GParamSpec>?
        ) -> Void = { object, id, value, _ in
            guard let object, let value, let property = PropertyID(rawValue: id) else { return }
            let state = state(of: UnsafeMutableRawPointer(object))
            switch property {
            case .inputLUT:
                let path = GLib.borrowString(g_value_get_string(value))
                state.update { $0.inputLUT = path }
                leavePassThroughIfLUTsChanged(object, state)
            case .creativeLUT:
                let path = GLib.borrowString(g_value_get_string(value))
                state.update { $0.creativeLUT = path }
                leavePassThroughIfLUTsChanged(object, state)
            case .intensity:
                let intensity = g_value_get_double(value)
                state.update { $0.intensity = intensity }
            case .interpolation:
                let index = Int(g_value_get_enum(value))
                let method =
                    Interpolation.allCases.indices.contains(index) ? Interpolation.allCases[index] : .tetrahedral
                state.update { $0.interpolation = method }
            case .toneMap:
                // An unknown name is no tone map (the element's users pass the names of `ToneMap.Transfer`).
                let name = GLib.borrowString(g_value_get_string(value)) ?? ""
                state.update { $0.toneMap = ToneMap.Transfer(rawValue: name) }
                leavePassThroughIfLUTsChanged(object, state)
            case .toneMapPeak:
                let peak = g_value_get_double(value)
                state.update { $0.toneMapPeak = peak }
                leavePassThroughIfLUTsChanged(object, state)
            }
        }

    /// A LUT path set on a started element (PAUSED, PLAYING): the next frame must reach transform_frame_ip, which
    /// parses the new files, so pass-through (no LUT when it started) is switched off; the frame function switches
    /// it back on if both slots are now empty. gst_base_transform_set_passthrough takes the object lock: any thread.
    private static func leavePassThroughIfLUTsChanged(_ object: UnsafeMutablePointer<GObject>, _ state: LUTFilterState)
    {
        guard state.lutPathsChanged else { return }
        let transform = GLib.cast(object, to: GstBaseTransform.self)
        gst_base_transform_set_passthrough(transform, 0)
        log(GST_LEVEL_INFO, UnsafeMutableRawPointer(object), "LUT path changed: parsed again on the next frame")
    }

    private static let getProperty:
        @convention(c) (
            UnsafeMutablePointer<GObject>?, guint, UnsafeMutablePointer<GValue>?, UnsafeMutablePointer<GParamSpec>?
        ) -> Void = { object, id, value, _ in
            guard let object, let value, let property = PropertyID(rawValue: id) else { return }
            let settings = state(of: UnsafeMutableRawPointer(object)).current
            switch property {
            case .inputLUT: g_value_set_string(value, settings.inputLUT)
            case .creativeLUT: g_value_set_string(value, settings.creativeLUT)
            case .intensity: g_value_set_double(value, settings.intensity)
            case .interpolation:
                g_value_set_enum(value, gint(Interpolation.allCases.firstIndex(of: settings.interpolation) ?? 0))
            case .toneMap: g_value_set_string(value, settings.toneMap?.rawValue ?? "")
            case .toneMapPeak: g_value_set_double(value, settings.toneMapPeak)
            }
        }

    // MARK: - GstBaseTransform / GstVideoFilter vfuncs

    /// Parses the LUT files, once per start. No LUT at all: pass-through (buffers are not even mapped).
    private static let start: @convention(c) (UnsafeMutablePointer<GstBaseTransform>?) -> gboolean = { transform in
        guard let transform else { return 0 }
        let element = UnsafeMutableRawPointer(transform)
        do {
            let hasLUT = try state(of: element).start()
            gst_base_transform_set_passthrough(transform, hasLUT ? 0 : 1)
            log(GST_LEVEL_INFO, element, hasLUT ? "LUTs loaded" : "no LUT set: pass-through")
            return 1
        } catch let error as FilmtoneError {
            postError(element, error)
            return 0
        } catch {
            postError(element, FilmtoneError(.lutInvalid, "\(error)"))
            return 0
        }
    }

    private static let stop: @convention(c) (UnsafeMutablePointer<GstBaseTransform>?) -> gboolean = { transform in
        guard let transform else { return 0 }
        state(of: UnsafeMutableRawPointer(transform)).stop()
        return 1
    }

    /// Caps queries answered with every 8-bit RGB format first, then the 8-bit YUV ones, then the 16-bit ones.
    /// GstBaseTransform answers in the order of the asking peer's filter, so a source that lists 16-bit or YUV
    /// formats first (videotestsrc's AYUV64, ARGB64, …, I420, …) would fixate one of them and leave the 8-bit RGB
    /// path just because the element now accepts them. With this order it picks the 8-bit RGB format it picked
    /// before the other formats existed; a peer that chooses by what a format loses (videoconvert) still keeps a
    /// YUV source in YUV and gives a 10-bit source a 16-bit format.
    private static let query:
        @convention(c) (
            UnsafeMutablePointer<GstBaseTransform>?, GstPadDirection, UnsafeMutablePointer<GstQuery>?
        ) -> gboolean = { transform, direction, query in
            let parent = subclass.parentClass(as: GstBaseTransformClass.self)
            guard let query, let parentQuery = parent.pointee.query,
                parentQuery(transform, direction, query) != 0
            else { return 0 }
            if query.pointee.type == GST_QUERY_CAPS {
                var (filter, result): (UnsafeMutablePointer<GstCaps>?, UnsafeMutablePointer<GstCaps>?) = (nil, nil)
                gst_query_parse_caps(query, &filter)  // borrowed from the query
                gst_query_parse_caps_result(query, &result)  // borrowed from the query
                let order = filter.map(offersOnlyDeepFormats) == true ? deepFirst : eightBitFirst
                if let result, let reordered = inTiers(result, order: order) {
                    gst_query_set_caps_result(query, reordered)  // the query takes its own reference
                    gst_caps_unref(reordered)
                }
            }
            return 1
        }

    /// The tiers of formats (0: 8-bit RGB, 1: 8-bit YUV, 2: 10-bit YUV, 3: the rest, 16-bit RGB or no format), in
    /// the order caps queries answer them: 8-bit RGB first, unless the peer is deep.
    private static let eightBitFirst = [0, 1, 2, 3]
    private static let deepFirst = [2, 3, 0, 1]

    /// Whether `caps` (a caps query's filter: what the asking peer can give or take) names at least one format and
    /// only formats deeper than 8 bits (a 10-bit decoder). A peer offering 8-bit formats too (videotestsrc,
    /// videoconvert) gets the 8-bit order, as before.
    private static func offersOnlyDeepFormats(_ caps: UnsafeMutablePointer<GstCaps>) -> Bool {
        guard gst_caps_is_any(caps) == 0 else { return false }
        var depths: [guint] = []
        func add(_ value: UnsafePointer<GValue>) {
            guard value.pointee.g_type == ftgst_type_string(),
                let info = gst_video_format_get_info(gst_video_format_from_string(g_value_get_string(value)))
            else { return }
            depths.append(info.pointee.depth.0)
        }
        for index in 0..<gst_caps_get_size(caps) {
            guard let format = gst_structure_get_value(gst_caps_get_structure(caps, index), "format") else {
                return false  // any format
            }
            if format.pointee.g_type == gst_value_list_get_type() {
                for item in 0..<gst_value_list_get_size(format) { add(gst_value_list_get_value(format, item)) }
            } else {
                add(format)
            }
        }
        return !depths.isEmpty && depths.allSatisfy { $0 > 8 }
    }

    /// `caps` with the structures (and the formats inside a structure's format list) split into tiers (see
    /// `eightBitFirst`), appended in `order`, each tier in its original order; nil when that changes nothing.
    /// Transfer full.
    private static func inTiers(_ caps: UnsafeMutablePointer<GstCaps>, order: [Int]) -> UnsafeMutablePointer<GstCaps>? {
        guard gst_caps_is_any(caps) == 0 else { return nil }
        // New structures (owned until appended) with the index of the structure they came from, for its features.
        var tiers: [[(UnsafeMutablePointer<GstStructure>, guint)]] = [[], [], [], []]
        func tier(_ value: UnsafePointer<GValue>?) -> Int {
            guard let value, value.pointee.g_type == ftgst_type_string() else { return 3 }
            let name = GLib.borrowString(g_value_get_string(value))
            if formats.contains(where: { $0.0 == name }) { return 0 }
            if formatsYUV.contains(where: { $0.0 == name }) { return 1 }
            return formatsYUV10.contains(where: { $0.0 == name }) ? 2 : 3
        }
        for index in 0..<gst_caps_get_size(caps) {
            let structure = gst_caps_get_structure(caps, index)!  // borrowed
            guard let format = gst_structure_get_value(structure, "format"),
                format.pointee.g_type == gst_value_list_get_type()
            else {
                tiers[tier(gst_structure_get_value(structure, "format"))].append((gst_structure_copy(structure), index))
                continue
            }
            // A format list: one copy of the structure per tier, each with its part of the list.
            for wanted in tiers.indices {
                var list = GValue()
                g_value_init(&list, gst_value_list_get_type())
                for item in 0..<gst_value_list_get_size(format) {
                    let value = gst_value_list_get_value(format, item)!
                    if tier(value) == wanted { gst_value_list_append_value(&list, value) }
                }
                guard gst_value_list_get_size(&list) > 0 else {
                    g_value_unset(&list)
                    continue
                }
                let copy = gst_structure_copy(structure)!
                gst_structure_take_value(copy, "format", &list)  // takes the list
                tiers[wanted].append((copy, index))
            }
        }
        let reordered = gst_caps_new_empty()!
        for (structure, index) in order.map({ tiers[$0] }).joined() {
            // Takes the structure and the features copy.
            gst_caps_append_structure_full(
                reordered, structure,
                gst_caps_get_features(caps, index).flatMap {
                    gst_caps_features_copy($0)
                })
        }
        if gst_caps_is_strictly_equal(reordered, caps) != 0 {
            gst_caps_unref(reordered)
            return nil
        }
        return reordered
    }

    /// Negotiated caps: remember the depth and where R, G and B sit in a pixel, or the YUV layout and colorimetry.
    private static let setInfo:
        @convention(c) (
            UnsafeMutablePointer<GstVideoFilter>?, UnsafeMutablePointer<GstCaps>?, UnsafeMutablePointer<GstVideoInfo>?,
            UnsafeMutablePointer<GstCaps>?, UnsafeMutablePointer<GstVideoInfo>?
        ) -> gboolean = { filter, _, inInfo, _, _ in
            guard let filter, let inInfo, let formatInfo = inInfo.pointee.finfo else { return 0 }
            let name = GLib.borrowString(formatInfo.pointee.name) ?? ""
            guard let format = pixelFormat(named: name, colorimetry: colorimetry(of: inInfo.pointee)) else { return 0 }
            log(GST_LEVEL_INFO, UnsafeMutableRawPointer(filter), "format \(name): \(format)")
            state(of: UnsafeMutableRawPointer(filter)).format = format
            return 1
        }

    /// The YUV matrix and range of negotiated caps (`GstVideoInfo.colorimetry`, which gst_video_info_from_caps
    /// fills with GStreamer's defaults when the caps have none); a matrix without Kr/Kb (RGB, unknown) falls back
    /// to GStreamer's default for the frame height, an unknown range to limited.
    package static func colorimetry(of info: GstVideoInfo) -> YUVColorimetry {
        var (kr, kb) = (0.0, 0.0)
        let fullRange = info.colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255
        guard gst_video_color_matrix_get_Kr_Kb(info.colorimetry.matrix, &kr, &kb) != 0 else {
            return YUVColorimetry.gstreamerDefault(height: Int(info.height)).fullRange(fullRange)
        }
        return YUVColorimetry(kr: kr, kb: kb, fullRange: fullRange)
    }

    /// The frame, in place, rows walked by stride (padding never touched).
    private static let transformFrameInPlace:
        @convention(c) (
            UnsafeMutablePointer<GstVideoFilter>?, UnsafeMutablePointer<GstVideoFrame>?
        ) -> GstFlowReturn = { filter, frame in
            guard let filter, let frame, let data = ftgst_video_frame_plane(frame, 0) else { return GST_FLOW_ERROR }
            let element = UnsafeMutableRawPointer(filter)
            let state = state(of: element)
            guard let format = state.format else { return GST_FLOW_NOT_NEGOTIATED }
            let (width, height) = (Int(frame.pointee.info.width), Int(frame.pointee.info.height))
            let stride = Int(ftgst_video_frame_stride(frame, 0))
            do {
                // A LUT path set while running: parsed here, once, and this frame already gets the new look.
                if let hasLUT = try state.reloadIfChanged() {
                    log(GST_LEVEL_INFO, element, hasLUT ? "LUTs parsed again" : "LUTs cleared: pass-through")
                    guard hasLUT else {
                        // Pass-through from the next buffer; this one (mapped already) is left as it is.
                        gst_base_transform_set_passthrough(GLib.cast(filter, to: GstBaseTransform.self), 1)
                        return GST_FLOW_OK
                    }
                }
                switch format {
                case .yuv420(let layout, let colorimetry):
                    // Chroma plane(s) walked by their own strides: 1 (NV12, U and V interleaved) or 1 and 2 (I420).
                    guard let chroma = ftgst_video_frame_plane(frame, 1) else { return GST_FLOW_ERROR }
                    let chromaStride = Int(ftgst_video_frame_stride(frame, 1))
                    let planes: YUV420Planes
                    switch layout {
                    case .i420:
                        guard let cr = ftgst_video_frame_plane(frame, 2) else { return GST_FLOW_ERROR }
                        planes = .i420(
                            luma: data, lumaStride: stride, cb: chroma, cr: cr, chromaStride: chromaStride,
                            crStride: Int(ftgst_video_frame_stride(frame, 2)))
                    case .nv12:
                        planes = .nv12(luma: data, lumaStride: stride, chroma: chroma, chromaStride: chromaStride)
                    }
                    try state.currentKernelYUV(colorimetry).apply(to: planes, width: width, height: height)
                case .yuv420x10(let layout, let colorimetry):
                    // Chroma plane(s) by their own strides, as for 8 bits; samples are 16-bit words.
                    guard let chroma = ftgst_video_frame_plane(frame, 1) else { return GST_FLOW_ERROR }
                    let chromaStride = Int(ftgst_video_frame_stride(frame, 1))
                    let planes: YUV10Planes
                    switch layout {
                    case .i420:
                        guard let cr = ftgst_video_frame_plane(frame, 2) else { return GST_FLOW_ERROR }
                        planes = .i420(
                            luma: UnsafeMutableRawPointer(data), lumaStride: stride,
                            cb: UnsafeMutableRawPointer(chroma),
                            cr: UnsafeMutableRawPointer(cr), chromaStride: chromaStride,
                            crStride: Int(ftgst_video_frame_stride(frame, 2)))
                    case .p010:
                        planes = .p010(
                            luma: UnsafeMutableRawPointer(data), lumaStride: stride,
                            chroma: UnsafeMutableRawPointer(chroma), chromaStride: chromaStride)
                    }
                    YUV10Kernel(rgb: try state.currentKernel16(), colorimetry: colorimetry)
                        .apply(to: planes, width: width, height: height)
                case .packed8(let layout):
                    try state.currentKernel().apply(
                        to: data, width: width, height: height, stride: stride, layout: layout)
                case .packed16(let layout):
                    try state.currentKernel16().apply(
                        to: UnsafeMutableRawPointer(data), width: width, height: height, stride: stride, layout: layout)
                }
                return GST_FLOW_OK
            } catch {
                postError(element, (error as? FilmtoneError) ?? FilmtoneError(.lutInvalid, "\(error)"))
                return GST_FLOW_ERROR
            }
        }
}
