internal import CImageCodecs
import FilmtoneCore
import Foundation

/// `encode(image, format, quality) -> bytes`: JPEG through TurboJPEG (libjpeg-turbo's API that reports errors by
/// return value; classic libjpeg's `error_exit` needs setjmp, which Swift cannot call), PNG through libpng's
/// simplified write API (which also needs no setjmp). No GStreamer here.
public enum ImageEncoder {
    /// Encodes `image`. `quality` (0…1) maps to JPEG quality 0…100 (libjpeg treats 0 as 1) and is ignored for
    /// PNG, which is lossless. Throws `INTERNAL` if the library fails (it has no reason to on valid input).
    public static func encode(_ image: RGBImage, format: ImageFormat, quality: Double) throws -> [UInt8] {
        switch format {
        case .jpeg: return try encodeJPEG(image, quality: jpegQuality(quality))
        case .png: return try encodePNG(image)
        }
    }

    /// 0…1 → 1…100, rounded to nearest.
    package static func jpegQuality(_ quality: Double) -> Int32 {
        Int32(min(100, max(1, (quality * 100).rounded())))
    }

    private static func encodeJPEG(_ image: RGBImage, quality: Int32) throws -> [UInt8] {
        guard let handle = tjInitCompress() else { throw FilmtoneError(.internalError, "tjInitCompress failed") }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        // tjCompress2 allocates the output with tjAlloc; it is freed with tjFree below.
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            tjCompress2(
                handle, pixels.baseAddress, Int32(image.width), Int32(image.width * 3), Int32(image.height),
                Int32(TJPF_RGB.rawValue), &output, &size, Int32(TJSAMP_420.rawValue), quality, 0)
        }
        defer { if let output { tjFree(output) } }
        guard status == 0, let output else {
            let reason = tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown"
            throw FilmtoneError(.internalError, "JPEG encoding failed: \(reason)")
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    private static func encodePNG(_ image: RGBImage) throws -> [UInt8] {
        var control = png_image()
        control.version = png_uint_32(PNG_IMAGE_VERSION)
        control.width = png_uint_32(image.width)
        control.height = png_uint_32(image.height)
        control.format = png_uint_32(PNG_FORMAT_RGB)
        defer { png_image_free(&control) }
        let stride = png_int_32(image.width * 3)
        return try image.pixels.withUnsafeBufferPointer { pixels in
            // First call sizes the output, second writes it.
            var size: png_alloc_size_t = 0
            guard png_image_write_to_memory(&control, nil, &size, 0, pixels.baseAddress, stride, nil) != 0 else {
                throw pngError(control)
            }
            var bytes = [UInt8](repeating: 0, count: Int(size))
            let ok = bytes.withUnsafeMutableBytes { out in
                png_image_write_to_memory(&control, out.baseAddress, &size, 0, pixels.baseAddress, stride, nil)
            }
            guard ok != 0 else { throw pngError(control) }
            return Array(bytes.prefix(Int(size)))
        }
    }

    private static func pngError(_ control: png_image) -> FilmtoneError {
        var message = control.message
        let text = withUnsafeBytes(of: &message) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        return FilmtoneError(.internalError, "PNG encoding failed: \(text)")
    }
}
