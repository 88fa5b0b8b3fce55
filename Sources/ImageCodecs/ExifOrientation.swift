import FilmtoneCore

/// EXIF's Orientation (TIFF tag 274) of a JPEG, and the transform that turns the stored pixels upright. Values as
/// EXIF 2.3 §4.6.4 defines them: 1 upright, 2 mirrored left–right, 3 rotated 180°, 4 mirrored top–bottom,
/// 5 transposed (mirrored along the top-left/bottom-right diagonal), 6 needs 90° clockwise, 7 transversed
/// (mirrored along the other diagonal), 8 needs 90° counter-clockwise. Pure Swift, no GStreamer.
public enum ExifOrientation {
    /// The Orientation value (1…8) of the first EXIF APP1 segment before the scan; 1 when there is none or it is
    /// out of range, or when the segment is malformed (every read is bounds-checked).
    public static func value(inJPEG bytes: UnsafeRawBufferPointer) -> Int {
        var offset = 2  // after SOI
        while offset + 4 <= bytes.count {
            guard bytes[offset] == 0xFF else { return 1 }
            let marker = bytes[offset + 1]
            if marker == 0xFF {  // fill byte
                offset += 1
                continue
            }
            // SOS (scan data follows) or EOI: no more headers.
            if marker == 0xDA || marker == 0xD9 { return 1 }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= bytes.count else { return 1 }
            let body = offset + 4
            let end = offset + 2 + length
            if marker == 0xE1, end - body >= 6, Array(bytes[body..<body + 6]) == Array("Exif\0\0".utf8) {
                return tiffOrientation(UnsafeRawBufferPointer(rebasing: bytes[body + 6..<end])) ?? 1
            }
            offset = end
        }
        return 1
    }

    /// The Orientation entry of a TIFF structure's first IFD (byte order `II` or `MM`); nil if absent or invalid.
    static func tiffOrientation(_ tiff: UnsafeRawBufferPointer) -> Int? {
        guard tiff.count >= 8 else { return nil }
        let little: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return little ? Int(tiff[at]) | Int(tiff[at + 1]) << 8 : Int(tiff[at]) << 8 | Int(tiff[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let a = u16(at), let b = u16(at + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return nil }
        for index in 0..<count {
            let entry = ifd + 2 + index * 12
            guard let tag = u16(entry) else { return nil }
            guard tag == 0x0112 else { continue }
            // SHORT (type 3), one value, held in the entry's value field.
            guard u16(entry + 2) == 3, u32(entry + 4) == 1, let value = u16(entry + 8), (1...8).contains(value)
            else { return nil }
            return value
        }
        return nil
    }

    /// Whether `value` swaps width and height (5…8).
    public static func swapsAxes(_ value: Int) -> Bool { (5...8).contains(value) }

    /// `image` turned upright as `value` says (any other value: unchanged).
    public static func upright(_ image: RGBImage, value: Int) -> RGBImage {
        guard (2...8).contains(value) else { return image }
        let w = image.width
        let h = image.height
        let (outWidth, outHeight) = swapsAxes(value) ? (h, w) : (w, h)
        var pixels = [UInt8](repeating: 0, count: image.pixels.count)
        image.pixels.withUnsafeBufferPointer { src in
            pixels.withUnsafeMutableBufferPointer { dst in
                for y in 0..<outHeight {
                    for x in 0..<outWidth {
                        // The stored pixel shown at (x, y).
                        let (sx, sy): (Int, Int)
                        switch value {
                        case 2: (sx, sy) = (w - 1 - x, y)
                        case 3: (sx, sy) = (w - 1 - x, h - 1 - y)
                        case 4: (sx, sy) = (x, h - 1 - y)
                        case 5: (sx, sy) = (y, x)
                        case 6: (sx, sy) = (y, h - 1 - x)
                        case 7: (sx, sy) = (w - 1 - y, h - 1 - x)
                        default: (sx, sy) = (w - 1 - y, x)  // 8
                        }
                        let s = (sy * w + sx) * 3
                        let d = (y * outWidth + x) * 3
                        dst[d] = src[s]
                        dst[d + 1] = src[s + 1]
                        dst[d + 2] = src[s + 2]
                    }
                }
            }
        }
        return RGBImage(width: outWidth, height: outHeight, pixels: pixels)
    }
}
