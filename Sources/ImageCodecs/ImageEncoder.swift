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

    /// As ffmpeg's PNG encoder writes by default: no row filters (its `pred none`) and zlib level 6. libpng's own
    /// default tries all five filters on every row and keeps the best-looking one, several times the work for
    /// files that came out *larger* on video frames (a 1280×720 frame of bars: 183 KB against 125 KB);
    /// docs/PERFORMANCE.md has the figures. Written in one pass into a growing buffer (the simplified API, used
    /// before, compressed the whole picture twice: once to size the output, once to write it).
    static let pngFilters = Int32(PNG_FILTER_NONE)
    static let pngLevel: Int32 = 6

    private static func encodePNG(_ image: RGBImage) throws -> [UInt8] {
        var output = ftgst_png_output()
        // A first buffer of an eighth of the raw size (at least 64 KiB): most frames fit, the rest grow it.
        output.capacity = max(65536, image.pixels.count / 8)
        let ok = image.pixels.withUnsafeBufferPointer { pixels in
            ftgst_png_encode_rgb(
                pixels.baseAddress, png_uint_32(image.width), png_uint_32(image.height), image.width * 3, pngFilters,
                pngLevel, &output)
        }
        guard ok != 0, let data = output.data else {
            let text = withUnsafeBytes(of: output.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            throw FilmtoneError(.internalError, "PNG encoding failed: \(text)")
        }
        defer { free(data) }
        return Array(UnsafeBufferPointer(start: data, count: output.size))
    }
}
