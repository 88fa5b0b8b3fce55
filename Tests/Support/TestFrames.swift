import FilmtoneLooks
import Foundation
import XCTest

/// The pixel tests' seeded generator: SplitMix64 (`SplitMix`), so failures reproduce.
package typealias PixelRandom = SplitMix

extension SplitMix {
    package mutating func code() -> Int { Int.random(in: 0...255, using: &self) }

    /// Random pixels whose blue code is one of `bluePlanes` and green code one of `greenRows` (all by default).
    package mutating func pixels(_ count: Int, bluePlanes: [Int], greenRows: [Int]? = nil) -> [SIMD3<UInt8>] {
        (0..<count).map { _ in
            let green = greenRows?.randomElement(using: &self) ?? code()
            return SIMD3(UInt8(code()), UInt8(green), UInt8(bluePlanes.randomElement(using: &self)!))
        }
    }
}

// MARK: - A test frame

/// An 8-bit 4:2:0 frame as three compact planes (no padding), random samples.
package struct Frame420: Equatable {
    package let width: Int
    package let height: Int
    package var y: [UInt8]
    package var u: [UInt8]
    package var v: [UInt8]

    package var chromaWidth: Int { (width + 1) / 2 }
    package var chromaHeight: Int { (height + 1) / 2 }
    package var planes: [[UInt8]] { [y, u, v] }

    package init(width: Int, height: Int, seed: UInt64) {
        var random = PixelRandom(seed: seed)
        self.width = width
        self.height = height
        y = (0..<width * height).map { _ in UInt8.random(in: 0...255, using: &random) }
        let count = (width + 1) / 2 * ((height + 1) / 2)
        u = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
        v = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    package init(width: Int, height: Int, y: [UInt8], u: [UInt8], v: [UInt8]) {
        (self.width, self.height, self.y, self.u, self.v) = (width, height, y, u, v)
    }

    /// The naive composition per pixel with its block's (U, V); the block's U', V' the rounded mean of its pixels'.
    package func reference(_ look: Look, _ c: YUVColorimetry) -> Frame420 {
        var out = self
        for row in 0..<chromaHeight {
            for column in 0..<chromaWidth {
                let (cu, cv) = (Int(u[row * chromaWidth + column]), Int(v[row * chromaWidth + column]))
                var sums = SIMD2(0, 0)
                var count = 0
                for dy in 0..<2 where 2 * row + dy < height {
                    for dx in 0..<2 where 2 * column + dx < width {
                        let at = (2 * row + dy) * width + 2 * column + dx
                        let result = YUVReference.reference(look, SIMD3(Int(y[at]), cu, cv), c)
                        out.y[at] = UInt8(result.x)
                        sums &+= SIMD2(result.y, result.z)
                        count += 1
                    }
                }
                out.u[row * chromaWidth + column] = UInt8((sums.x + count / 2) / count)
                out.v[row * chromaWidth + column] = UInt8((sums.y + count / 2) / count)
            }
        }
        return out
    }

    /// The largest difference between two frames' samples; frames of different sizes fail the test (and give
    /// Int.max, so a bound on the result fails too).
    package func maxDifference(_ other: Frame420, file: StaticString = #filePath, line: UInt = #line) -> Int {
        guard width == other.width, height == other.height, planes.map(\.count) == other.planes.map(\.count) else {
            XCTFail(
                "frames differ in size: \(width)×\(height) vs \(other.width)×\(other.height)", file: file,
                line: line)
            return Int.max
        }
        return zip(planes.joined(), other.planes.joined()).map { abs(Int($0) - Int($1)) }.max() ?? 0
    }

    /// Lays the frame out as I420 or NV12 with padded rows (padding bytes 0xA5; I420's Cr plane 2 bytes wider
    /// than its Cb plane), runs the kernel, checks the padding is untouched and reads the planes back.
    package mutating func apply(_ kernel: YUVKernel, nv12: Bool, lumaPadding: Int, chromaPadding: Int) {
        let lumaStride = width + lumaPadding
        let chromaStride = chromaWidth * (nv12 ? 2 : 1) + chromaPadding
        var luma = [UInt8](repeating: 0xA5, count: lumaStride * height)
        let crStride = nv12 ? chromaStride : chromaStride + 2
        var cb = [UInt8](repeating: 0xA5, count: chromaStride * chromaHeight)
        var cr = [UInt8](repeating: 0xA5, count: crStride * chromaHeight)
        for row in 0..<height {
            for x in 0..<width { luma[row * lumaStride + x] = y[row * width + x] }
        }
        for row in 0..<chromaHeight {
            for x in 0..<chromaWidth {
                if nv12 {
                    cb[row * chromaStride + 2 * x] = u[row * chromaWidth + x]
                    cb[row * chromaStride + 2 * x + 1] = v[row * chromaWidth + x]
                } else {
                    cb[row * chromaStride + x] = u[row * chromaWidth + x]
                    cr[row * crStride + x] = v[row * chromaWidth + x]
                }
            }
        }
        luma.withUnsafeMutableBufferPointer { luma in
            cb.withUnsafeMutableBufferPointer { cb in
                cr.withUnsafeMutableBufferPointer { cr in
                    let planes =
                        nv12
                        ? YUV420Planes.nv12(
                            luma: luma.baseAddress!, lumaStride: lumaStride, chroma: cb.baseAddress!,
                            chromaStride: chromaStride)
                        : .i420(
                            luma: luma.baseAddress!, lumaStride: lumaStride, cb: cb.baseAddress!,
                            cr: cr.baseAddress!, chromaStride: chromaStride, crStride: crStride)
                    kernel.apply(to: planes, width: width, height: height)
                }
            }
        }
        for row in 0..<height {
            for x in 0..<width { y[row * width + x] = luma[row * lumaStride + x] }
            XCTAssertTrue(
                luma[row * lumaStride + width..<(row + 1) * lumaStride].allSatisfy { $0 == 0xA5 },
                "luma padding changed")
        }
        for row in 0..<chromaHeight {
            for x in 0..<chromaWidth {
                u[row * chromaWidth + x] = cb[row * chromaStride + x * (nv12 ? 2 : 1)]
                v[row * chromaWidth + x] = nv12 ? cb[row * chromaStride + 2 * x + 1] : cr[row * crStride + x]
            }
            let used = chromaWidth * (nv12 ? 2 : 1)
            XCTAssertTrue(
                cb[row * chromaStride + used..<(row + 1) * chromaStride].allSatisfy { $0 == 0xA5 },
                "chroma padding changed")
            if !nv12 {
                XCTAssertTrue(
                    cr[row * crStride + used..<(row + 1) * crStride].allSatisfy { $0 == 0xA5 },
                    "chroma padding changed")
            } else {
                XCTAssertTrue(cr.allSatisfy { $0 == 0xA5 }, "NV12 uses one chroma plane")
            }
        }
    }
}

/// The YUV kernel's reference, computed naively: Y'CbCr → R'G'B' codes by the matrix in `Double`, rounded and
/// clamped; the reference look (`Look.apply`, rounded to nearest code); back to Y'CbCr, rounded and clamped.
package enum YUVReference {
    /// The test's own Y'CbCr → R'G'B' (codes, rounded, clamped), written from the standard's equations.
    package static func rgb(_ yuv: SIMD3<Int>, _ c: YUVColorimetry) -> SIMD3<Int> {
        let (yScale, cScale, yOffset) = c.fullRange ? (255.0, 255.0, 0.0) : (219.0, 224.0, 16.0)
        let ey = (Double(yuv.x) - yOffset) / yScale
        let pb = (Double(yuv.y) - 128) / cScale
        let pr = (Double(yuv.z) - 128) / cScale
        let r = ey + (2 - 2 * c.kr) * pr
        let b = ey + (2 - 2 * c.kb) * pb
        let g = (ey - c.kr * r - c.kb * b) / (1 - c.kr - c.kb)
        return SIMD3(code(r * 255), code(g * 255), code(b * 255))
    }

    /// R'G'B' codes → Y'CbCr codes, rounded, clamped.
    package static func yuv(_ rgb: SIMD3<Int>, _ c: YUVColorimetry) -> SIMD3<Int> {
        let (yScale, cScale, yOffset) = c.fullRange ? (255.0, 255.0, 0.0) : (219.0, 224.0, 16.0)
        let (r, g, b) = (Double(rgb.x) / 255, Double(rgb.y) / 255, Double(rgb.z) / 255)
        let ey = c.kr * r + (1 - c.kr - c.kb) * g + c.kb * b
        return SIMD3(
            code(yOffset + yScale * ey), code(128 + cScale * (b - ey) / (2 - 2 * c.kb)),
            code(128 + cScale * (r - ey) / (2 - 2 * c.kr)))
    }

    package static func code(_ value: Double) -> Int { Int(min(255, max(0, value.rounded()))) }

    /// One pixel through the look as the BGRx path sees it.
    package static func reference(_ look: Look, _ input: SIMD3<Int>, _ c: YUVColorimetry) -> SIMD3<Int> {
        let rgb = rgb(input, c)
        let out = look.apply(SIMD3(Double(rgb.x), Double(rgb.y), Double(rgb.z)) / 255)
        return yuv(SIMD3(Int(LUTKernel.code(out.x)), Int(LUTKernel.code(out.y)), Int(LUTKernel.code(out.z))), c)
    }
}
