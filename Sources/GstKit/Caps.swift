package import CGst
import FilmtoneCore
import Foundation

/// Owns one reference to a `GstCaps`.
// @unchecked Sendable: an immutable pointer to caps that ftgst only reads; GstCaps reference counts are atomic and
// reading shared (refcount > 1) caps from any thread is safe, as GStreamer's own elements do.
package final class Caps: CustomStringConvertible, @unchecked Sendable {
    package let pointer: UnsafeMutablePointer<GstCaps>

    /// Adopts a transfer-full reference.
    package init(takingFull pointer: UnsafeMutablePointer<GstCaps>) {
        self.pointer = pointer
    }

    /// Adds a reference to borrowed caps (from an event or a sample).
    package init(borrowing pointer: UnsafeMutablePointer<GstCaps>) {
        self.pointer = gst_caps_ref(pointer)
    }

    /// `gst_caps_from_string`; throws `INTERNAL` for text that does not parse (ftgst writes these strings).
    package convenience init(parsing text: String) throws {
        guard let raw = gst_caps_from_string(text) else {
            throw FilmtoneError(.internalError, "caps do not parse: \(text)")
        }
        self.init(takingFull: raw)
    }

    deinit {
        gst_caps_unref(pointer)
    }

    /// `gst_caps_to_string`.
    package var description: String { GLib.takeString(gst_caps_to_string(pointer)) ?? "" }

    /// The first structure's media type and video fields, copied out.
    package var video: VideoCapsInfo? {
        guard gst_caps_get_size(pointer) > 0, let structure = gst_caps_get_structure(pointer, 0) else { return nil }
        var width: gint = 0
        var height: gint = 0
        var parN: gint = 1
        var parD: gint = 1
        var fpsN: gint = 0
        var fpsD: gint = 1
        let mediaType = GLib.borrowString(gst_structure_get_name(structure)) ?? ""
        _ = gst_structure_get_int(structure, "width", &width)
        _ = gst_structure_get_int(structure, "height", &height)
        if gst_structure_get_fraction(structure, "pixel-aspect-ratio", &parN, &parD) == 0 {
            parN = 1
            parD = 1
        }
        if gst_structure_get_fraction(structure, "framerate", &fpsN, &fpsD) == 0 {
            fpsN = 0
            fpsD = 1
        }
        let format = GLib.borrowString(gst_structure_get_string(structure, "format"))
        // HDR10's static metadata (h265parse puts the SEI's in the caps, decoders pass it on): the mastering
        // display's peak, in units of 0.0001 cd/m², and the content's brightest pixel (MaxCLL), in cd/m².
        var mastering = GstVideoMasteringDisplayInfo()
        gst_video_mastering_display_info_init(&mastering)
        let masteringPeak =
            gst_video_mastering_display_info_from_caps(&mastering, pointer) != 0
                && mastering.max_display_mastering_luminance > 0
            ? Double(mastering.max_display_mastering_luminance) / 10000 : nil
        var light = GstVideoContentLightLevel()
        gst_video_content_light_level_init(&light)
        let maxContentLight =
            gst_video_content_light_level_from_caps(&light, pointer) != 0 && light.max_content_light_level > 0
            ? Double(light.max_content_light_level) : nil
        return VideoCapsInfo(
            mediaType: mediaType, format: format, width: Int(width), height: Int(height),
            pixelAspect: Fraction(Int(parN), Int(max(1, parD))), frameRate: Fraction(Int(fpsN), Int(max(1, fpsD))),
            colorimetry: GLib.borrowString(gst_structure_get_string(structure, "colorimetry")),
            masteringPeak: masteringPeak, maxContentLight: maxContentLight)
    }
}

/// A rational number as GStreamer caps carry them (`30/1`, `16/9`).
package struct Fraction: Sendable, Equatable, CustomStringConvertible {
    package var numerator: Int
    package var denominator: Int
    package init(_ numerator: Int, _ denominator: Int) {
        self.numerator = numerator
        self.denominator = denominator
    }
    package var value: Double { denominator == 0 ? 0 : Double(numerator) / Double(denominator) }
    package var description: String { "\(numerator)/\(denominator)" }
}

/// What ftgst needs to know of raw video caps, as plain Swift values.
package struct VideoCapsInfo: Sendable, Equatable {
    package var mediaType: String
    package var format: String?
    package var width: Int
    package var height: Int
    package var pixelAspect: Fraction
    package var frameRate: Fraction
    /// The caps' `colorimetry` string as GStreamer writes it (`bt709`, `bt2100-pq`, `2:6:14:7`); nil when absent.
    package var colorimetry: String? = nil
    /// `mastering-display-info`'s peak (`gst_video_mastering_display_info_from_caps`), cd/m²; nil when absent.
    package var masteringPeak: Double? = nil
    /// `content-light-level`'s MaxCLL (`gst_video_content_light_level_from_caps`), cd/m²; nil when absent or 0.
    package var maxContentLight: Double? = nil
    /// A still image: GStreamer's image decoders announce a 0/1 frame rate.
    package var isStill: Bool { frameRate.numerator == 0 }
}

extension Caps {
    /// For `video/x-h264` and `video/x-h265` caps: the media type, `stream-format` and the `codec_data` bytes (copied
    /// out of the GstBuffer).
    package var parsedVideoFields: (mediaType: String, streamFormat: String?, codecData: [UInt8]?)? {
        guard gst_caps_get_size(pointer) > 0, let structure = gst_caps_get_structure(pointer, 0),
            let mediaType = GLib.borrowString(gst_structure_get_name(structure)),
            mediaType == "video/x-h264" || mediaType == "video/x-h265"
        else { return nil }
        let format = GLib.borrowString(gst_structure_get_string(structure, "stream-format"))
        var codecData: [UInt8]? = nil
        // gst_value_get_buffer is a macro over g_value_get_boxed; the buffer is borrowed from the caps.
        if let value = gst_structure_get_value(structure, "codec_data"), let boxed = g_value_get_boxed(value) {
            let buffer = boxed.assumingMemoryBound(to: GstBuffer.self)
            codecData = BufferView(pointer: buffer).withBytes { Array($0.bindMemory(to: UInt8.self)) }
        }
        return (mediaType, format, codecData)
    }
}
