import FilmtoneCore
import Foundation

/// The exact resize after a reduced JPEG decode: separable Lanczos-3 (the filter `videoscale method=lanczos` and
/// Pillow's LANCZOS are), its support widened by the reduction so that shrinking averages every source pixel
/// rather than aliasing, weights in 14-bit fixed point, one 8-bit intermediate row set (as Pillow keeps). Written
/// here rather than a GStreamer `videoscale`: the photo path must not start GStreamer (its plugin loading costs
/// more than the whole decode), and no library on the machine offers a resize on plain RGB memory.
public enum ImageResampler {
    /// Fixed-point weights of one axis: for each output index, the first source index and `taps` weights.
    struct Weights {
        var first: [Int]
        var taps: Int
        var values: [Int32]
    }

    static let precision: Int32 = 14

    static func lanczos3(_ x: Double) -> Double {
        if x == 0 { return 1 }
        guard abs(x) < 3 else { return 0 }
        let px = Double.pi * x
        return 3 * sin(px) * sin(px / 3) / (px * px)
    }

    /// The weights taking `inCount` samples to `outCount` (pixel centres aligned, edges clamped). Pure.
    static func weights(inCount: Int, outCount: Int) -> Weights {
        let scale = Double(inCount) / Double(outCount)
        let stretch = max(scale, 1)
        let support = 3 * stretch
        let taps = Int((2 * support).rounded(.up)) + 1
        var first = [Int](repeating: 0, count: outCount)
        var values = [Int32](repeating: 0, count: outCount * taps)
        var real = [Double](repeating: 0, count: taps)
        for i in 0..<outCount {
            let centre = (Double(i) + 0.5) * scale - 0.5
            let start = Int((centre - support).rounded(.up))
            var sum = 0.0
            for t in 0..<taps {
                real[t] = lanczos3((Double(start + t) - centre) / stretch)
                sum += real[t]
            }
            // Taps falling off an edge are folded onto the edge sample: the first and last index are clamped, so
            // the run of taps is shifted to start inside and the outside weights added to the nearest inside one.
            var folded = [Double](repeating: 0, count: taps)
            let base = min(max(start, 0), max(0, inCount - taps))
            for t in 0..<taps {
                let index = min(max(start + t, 0), inCount - 1)
                let slot = min(max(index - base, 0), taps - 1)
                folded[slot] += real[t] / sum
            }
            first[i] = base
            var total: Int32 = 0
            var largest = 0
            for t in 0..<taps {
                let v = Int32((folded[t] * Double(1 << precision)).rounded())
                values[i * taps + t] = v
                total += v
                if abs(folded[t]) > abs(folded[largest]) { largest = t }
            }
            values[i * taps + largest] += (1 << precision) - total  // each row sums to exactly 1.0
        }
        return Weights(first: first, taps: taps, values: values)
    }

    /// `image` resized to `width`×`height` (each at least 1).
    public static func resized(_ image: RGBImage, width: Int, height: Int) -> RGBImage {
        precondition(width > 0 && height > 0, "resize to an empty image")
        if width == image.width && height == image.height { return image }
        let horizontal = weights(inCount: image.width, outCount: width)
        let vertical = weights(inCount: image.height, outCount: height)
        // Rows first (image.height rows of `width`), then columns.
        var wide = [UInt8](repeating: 0, count: width * image.height * 3)
        image.pixels.withUnsafeBufferPointer { src in
            wide.withUnsafeMutableBufferPointer { dst in
                horizontal.values.withUnsafeBufferPointer { w in
                    let taps = min(horizontal.taps, image.width)
                    for y in 0..<image.height {
                        let row = y * image.width * 3
                        let out = y * width * 3
                        for x in 0..<width {
                            let first = horizontal.first[x]
                            var r: Int32 = 0
                            var g: Int32 = 0
                            var b: Int32 = 0
                            for t in 0..<taps {
                                let weight = w[x * horizontal.taps + t]
                                let s = row + (first + t) * 3
                                r += Int32(src[s]) * weight
                                g += Int32(src[s + 1]) * weight
                                b += Int32(src[s + 2]) * weight
                            }
                            dst[out + x * 3] = clamped(r)
                            dst[out + x * 3 + 1] = clamped(g)
                            dst[out + x * 3 + 2] = clamped(b)
                        }
                    }
                }
            }
        }
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        wide.withUnsafeBufferPointer { src in
            pixels.withUnsafeMutableBufferPointer { dst in
                vertical.values.withUnsafeBufferPointer { w in
                    let taps = min(vertical.taps, image.height)
                    let stride = width * 3
                    var sums = [Int32](repeating: 0, count: stride)
                    sums.withUnsafeMutableBufferPointer { acc in
                        for y in 0..<height {
                            let first = vertical.first[y]
                            acc.update(repeating: 0)
                            for t in 0..<taps {
                                let weight = w[y * vertical.taps + t]
                                let row = (first + t) * stride
                                for i in 0..<stride { acc[i] += Int32(src[row + i]) * weight }
                            }
                            for i in 0..<stride { dst[y * stride + i] = clamped(acc[i]) }
                        }
                    }
                }
            }
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    @inline(__always)
    static func clamped(_ value: Int32) -> UInt8 {
        let rounded = (value + (1 << (precision - 1))) >> precision
        return UInt8(min(max(rounded, 0), 255))
    }
}
