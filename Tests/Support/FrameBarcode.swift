import Foundation

/// The frame-exactness matrix's oracle: which frame of a `matrix-*` clip a picture shows, read from its pixels.
/// Frame n of `matrix-src.nut` (pipelines/fixtures) shows n as a barcode: the top half is 8 blocks, block k white
/// when bit k of n is set, else black; the bottom half is the same for 255 − n. A picture is read only when every
/// block is cleanly black or white in its middle half and the two halves agree, so a grey, smeared or half-decoded
/// picture reads as nil, never as a neighbouring number.
package enum FrameBarcode {
    /// The matrix clips' frame rate: 25 fps, 40 ms a frame, 40 frames.
    package static let frameMilliseconds: Int64 = 40
    package static let frameCount = 40

    /// The frame number an RGB picture (`width`×`height`, 3 bytes a pixel, rows packed) shows; nil when it is no
    /// clean barcode.
    package static func number(width: Int, height: Int, rgb: [UInt8]) -> Int? {
        guard width >= 16, height >= 8, rgb.count >= width * height * 3 else { return nil }
        var halves: [Int] = []
        for half in 0..<2 {
            var value = 0
            for bit in 0..<8 {
                let x0 = (4 * bit + 1) * width / 32
                let x1 = (4 * bit + 3) * width / 32
                let y0 = (4 * half + 1) * height / 8
                let y1 = (4 * half + 3) * height / 8
                var low = 255
                var high = 0
                for y in y0..<y1 {
                    for x in x0..<x1 {
                        let at = (y * width + x) * 3
                        let grey = (Int(rgb[at]) + Int(rgb[at + 1]) + Int(rgb[at + 2])) / 3
                        low = min(low, grey)
                        high = max(high, grey)
                    }
                }
                if high < 100 { continue }  // black: bit clear
                guard low > 155 else { return nil }  // neither black nor white: not a clean picture
                value |= 1 << bit
            }
            halves.append(value)
        }
        return halves[1] == 255 - halves[0] ? halves[0] : nil
    }

    /// `number` of a decoded image file.
    package static func number(_ image: DecodedImage) -> Int? {
        number(width: image.width, height: image.height, rgb: image.rgb)
    }
}
