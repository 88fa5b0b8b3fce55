internal import CImageCodecs
import FilmtoneCore

/// JPEG decoding through TurboJPEG at a reduced size: libjpeg-turbo's IDCT scaling (1/2, 1/4, 1/8) produces the
/// smaller picture straight from the DCT coefficients, so a 24-megapixel photo shown at 512 px never exists at full
/// size in memory. Only the power-of-two factors are used: they have libjpeg-turbo's SIMD paths, the other eighths
/// do not. Everything is checked by return value (TurboJPEG never longjmps). No GStreamer here.
public enum JPEGDecoder {
    /// What the frame header says.
    public struct Header: Equatable, Sendable {
        public var width: Int
        public var height: Int
        /// Y′CbCr or grey: what this decoder turns into RGB. CMYK and YCCK (print workflows) are not.
        public var isRGBConvertible: Bool
    }

    /// True when `bytes` start as a JPEG does (SOI, then a marker).
    public static func looksLikeJPEG(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF
    }

    /// The frame header; nil when TurboJPEG cannot read one.
    public static func header(_ bytes: UnsafeRawBufferPointer) -> Header? {
        guard let handle = tjInitDecompress() else { return nil }
        defer { tjDestroy(handle) }
        var width: Int32 = 0
        var height: Int32 = 0
        var subsampling: Int32 = 0
        var colorspace: Int32 = 0
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
            tjDecompressHeader3(handle, base, UInt(bytes.count), &width, &height, &subsampling, &colorspace) == 0,
            width > 0, height > 0
        else { return nil }
        let convertible = colorspace != Int32(TJCS_CMYK.rawValue) && colorspace != Int32(TJCS_YCCK.rawValue)
        return Header(width: Int(width), height: Int(height), isRGBConvertible: convertible)
    }

    /// The largest power-of-two reduction (1, 2, 4 or 8) of `width`×`height` that still covers
    /// `minWidth`×`minHeight` (sizes round up, as libjpeg's scaled output does). Pure.
    public static func reduction(width: Int, height: Int, minWidth: Int, minHeight: Int) -> Int {
        for denominator in [8, 4, 2] {
            let w = (width + denominator - 1) / denominator
            let h = (height + denominator - 1) / denominator
            if w >= minWidth && h >= minHeight { return denominator }
        }
        return 1
    }

    /// Decodes `bytes` to RGB at 1/`reduction` of its size (`reduction` 1, 2, 4 or 8). nil on any error or warning
    /// (a truncated or corrupt stream, CMYK): the caller then decodes another way, which reports the failure with
    /// its own code.
    public static func decode(_ bytes: UnsafeRawBufferPointer, reduction: Int) -> RGBImage? {
        guard [1, 2, 4, 8].contains(reduction), let header = header(bytes), header.isRGBConvertible,
            let handle = tjInitDecompress()
        else { return nil }
        defer { tjDestroy(handle) }
        let width = (header.width + reduction - 1) / reduction
        let height = (header.height + reduction - 1) / reduction
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        // TJFLAG_STOPONWARNING: a warning (premature end of data, a corrupt marker) is a failure here, not a grey
        // half-picture.
        let status = pixels.withUnsafeMutableBufferPointer { out in
            tjDecompress2(
                handle, base, UInt(bytes.count), out.baseAddress, Int32(width), Int32(width * 3), Int32(height),
                Int32(TJPF_RGB.rawValue), TJFLAG_STOPONWARNING)
        }
        guard status == 0 else { return nil }
        return RGBImage(width: width, height: height, pixels: pixels)
    }
}
