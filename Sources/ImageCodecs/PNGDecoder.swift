internal import CImageCodecs
import FilmtoneCore

/// PNG decoding through libpng's simplified read API straight into 8-bit RGB: libpng expands palettes and grey,
/// reduces 16-bit samples and converts the file's gamma to sRGB while it reads the rows, so the whole picture exists
/// once, in the format the resize wants (GStreamer's `pngdec ! videoconvert` holds the decoded picture and then a
/// converted copy of it). The file is read by libpng through stdio, never whole into memory. Errors come back by
/// return value (the simplified API catches libpng's longjmp inside itself). No GStreamer here.
public enum PNGDecoder {
    /// The PNG signature.
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Pictures larger than this many pixels are not decoded here (nil): their buffer alone would be gigabytes.
    public static let maxPixels = 1 << 28

    /// True when `bytes` start with the PNG signature.
    public static func looksLikePNG(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= signature.count && zip(bytes, signature).allSatisfy { $0 == $1 }
    }

    /// The PNG file at `path` as 8-bit RGB at its full size; nil on any error (not a PNG, a CRC error, a truncated
    /// file, a picture over `maxPixels`): the caller then decodes another way, which reports the failure with its
    /// own code. An alpha channel is dropped, not composited (what `videoconvert` does going to RGB), so a
    /// thumbnail shows the same colours as GStreamer's. A 16-bit file without gAMA or sRGB chunk is read as
    /// sRGB-encoded (`PNG_IMAGE_FLAG_16BIT_sRGB`, what every viewer and ffmpeg assume), not as linear light.
    public static func decode(path: String) -> RGBImage? {
        var control = png_image()
        control.version = png_uint_32(PNG_IMAGE_VERSION)
        // Frees what begin_read allocated when finish_read was not reached or failed (finish_read frees on
        // success; a second free is a no-op).
        defer { png_image_free(&control) }
        guard png_image_begin_read_from_file(&control, path) != 0 else { return nil }
        let width = Int(control.width)
        let height = Int(control.height)
        guard width > 0, height > 0, width <= maxPixels / height else { return nil }
        let hasAlpha = control.format & png_uint_32(PNG_FORMAT_FLAG_ALPHA) != 0
        let channels = hasAlpha ? 4 : 3
        // PNG_FORMAT_RGBA is a compound macro, which Swift does not import: its two flags.
        control.format = png_uint_32(PNG_FORMAT_RGB) | (hasAlpha ? png_uint_32(PNG_FORMAT_FLAG_ALPHA) : 0)
        control.flags |= png_uint_32(PNG_IMAGE_FLAG_16BIT_sRGB)
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        let ok = pixels.withUnsafeMutableBytes { out in
            png_image_finish_read(&control, nil, out.baseAddress, png_int_32(width * channels), nil)
        }
        guard ok != 0 else { return nil }
        if hasAlpha {
            // RGBA to RGB in place (each write lands at or before its read), then the tail dropped: the same
            // buffer, never a second full-size one.
            pixels.withUnsafeMutableBufferPointer { p in
                for i in 0..<width * height {
                    p[i * 3] = p[i * 4]
                    p[i * 3 + 1] = p[i * 4 + 1]
                    p[i * 3 + 2] = p[i * 4 + 2]
                }
            }
            pixels.removeLast(width * height)
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }
}
