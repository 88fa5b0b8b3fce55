import Foundation
import XCTest

@testable import FilmtoneGst
@testable import FilmtoneLooks

/// `YUVKernel` against the composition computed naively here: Y'CbCr → R'G'B' codes by the matrix in `Double`,
/// rounded and clamped; the reference look (`Look.apply`, rounded to nearest code, as `referenceApply`); back to
/// Y'CbCr, rounded and clamped. Table entries and whole 4:2:0 frames (2×2 blocks, odd sizes, padded strides) within
/// 1 code.
final class YUVKernelTests: XCTestCase {
    static let lookPath = SharedLUTs.root.appendingPathComponent("colour-science/iridas_cube/Colour_Correct.cube").path

    // MARK: - The naive composition

    /// The test's own Y'CbCr → R'G'B' (codes, rounded, clamped), written from the standard's equations.
    static func rgb(_ yuv: SIMD3<Int>, _ c: YUVColorimetry) -> SIMD3<Int> {
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
    static func yuv(_ rgb: SIMD3<Int>, _ c: YUVColorimetry) -> SIMD3<Int> {
        let (yScale, cScale, yOffset) = c.fullRange ? (255.0, 255.0, 0.0) : (219.0, 224.0, 16.0)
        let (r, g, b) = (Double(rgb.x) / 255, Double(rgb.y) / 255, Double(rgb.z) / 255)
        let ey = c.kr * r + (1 - c.kr - c.kb) * g + c.kb * b
        return SIMD3(
            code(yOffset + yScale * ey), code(128 + cScale * (b - ey) / (2 - 2 * c.kb)),
            code(128 + cScale * (r - ey) / (2 - 2 * c.kr)))
    }

    static func code(_ value: Double) -> Int { Int(min(255, max(0, value.rounded()))) }

    /// One pixel through the look as the BGRx path sees it.
    static func reference(_ look: Look, _ input: SIMD3<Int>, _ c: YUVColorimetry) -> SIMD3<Int> {
        let rgb = rgb(input, c)
        let out = look.apply(SIMD3(Double(rgb.x), Double(rgb.y), Double(rgb.z)) / 255)
        return yuv(SIMD3(Int(LUTKernel.code(out.x)), Int(LUTKernel.code(out.y)), Int(LUTKernel.code(out.z))), c)
    }

    // MARK: - Tests

    /// The matrices are the standards' (pinned on a few colours), and the test's conversions invert each other.
    func testConversionsArePinned() {
        XCTAssertEqual(Self.yuv(SIMD3(255, 0, 0), .bt601), SIMD3(81, 90, 240))
        XCTAssertEqual(Self.yuv(SIMD3(255, 0, 0), .bt709), SIMD3(63, 102, 240))
        XCTAssertEqual(Self.yuv(SIMD3(255, 255, 255), .bt709), SIMD3(235, 128, 128))
        XCTAssertEqual(Self.yuv(SIMD3(255, 255, 255), .bt709.fullRange(true)), SIMD3(255, 128, 128))
        XCTAssertEqual(Self.rgb(SIMD3(16, 128, 128), .bt2020), SIMD3(0, 0, 0))
        for c in [YUVColorimetry.bt601, .bt709, .bt2020, .bt709.fullRange(true)] {
            // The library's unrounded conversions agree with the test's.
            let library = c.rgb(y: 81, u: 90, v: 240)
            XCTAssertEqual(SIMD3(Self.code(library.x), Self.code(library.y), Self.code(library.z)),
                           Self.rgb(SIMD3(81, 90, 240), c), "\(c)")
        }
        XCTAssertEqual(YUVColorimetry.gstreamerDefault(height: 576), .bt601)
        XCTAssertEqual(YUVColorimetry.gstreamerDefault(height: 1080), .bt709)
        XCTAssertEqual(YUVColorimetry.gstreamerDefault(height: 2160), .bt2020)
    }

    /// Table entries (edges, the legal range's ends, random inputs) against the naive composition, for a 3D look
    /// and a 1D one, each matrix and both ranges.
    func testTableEntriesMatchTheNaiveComposition() throws {
        let lut3D = try CubeLUT.load(path: Self.lookPath)
        let lut1D = try SharedLUTs.load("ocio/iridas_1d.cube")
        var random = PixelRandom(seed: 41)
        let edges = [0, 1, 16, 17, 127, 128, 235, 240, 254, 255]
        let looks: [(String, Look, [YUVColorimetry])] = [
            ("3D tetrahedral", try Look(creativeLUT: lut3D), [.bt601, .bt709, .bt2020, .bt709.fullRange(true)]),
            ("3D trilinear at 0.6", try Look(creativeLUT: lut3D, intensity: 0.6, interpolation: .trilinear), [.bt709]),
            ("1D", try Look(inputLUT: lut1D), [.bt601, .bt601.fullRange(true)]),
        ]
        for (label, look, colorimetries) in looks {
            for c in colorimetries {
                let kernel = try YUVKernel(look: look, colorimetry: c)
                XCTAssertEqual(kernel.tableByteCount, 64 << 20)
                var inputs: [SIMD3<Int>] = []
                // Few (U, V) rows: debug builds fill the rows used, 256 entries each.
                let chroma = edges.map { SIMD2($0, $0) } + edges.map { SIMD2($0, 255 - $0) }
                    + (0..<24).map { _ in SIMD2(random.code(), random.code()) }
                for uv in chroma {
                    inputs += edges.map { SIMD3($0, uv.x, uv.y) }
                    inputs += (0..<16).map { _ in SIMD3(random.code(), uv.x, uv.y) }
                }
                var worst = 0
                var changed = 0
                for input in inputs {
                    let entry = kernel.entry(y: input.x, u: input.y, v: input.z)
                    let actual = SIMD3(Int(entry.x), Int(entry.y), Int(entry.z))
                    let expected = Self.reference(look, input, c)
                    let difference = (0..<3).map { abs(actual[$0] - expected[$0]) }.max()!
                    if difference > 1 { XCTFail("\(label) \(c) \(input): \(actual), expected \(expected)") }
                    worst = max(worst, difference)
                    if expected != Self.reference(try Look(), input, c) { changed += 1 }
                }
                XCTAssertLessThanOrEqual(worst, 1, "\(label) \(c)")
                XCTAssertGreaterThan(changed, inputs.count / 2, "\(label): the look must change most inputs")
            }
        }
    }

    /// A look without LUT leaves frames exactly as they are, and holds no table.
    func testIdentityLookHoldsNoTable() throws {
        let kernel = try YUVKernel(look: try Look(), colorimetry: .bt709)
        XCTAssertEqual(kernel.strategy, .identity)
        XCTAssertEqual(kernel.tableByteCount, 0)
        var frame = Frame420(width: 5, height: 3, seed: 42)
        let before = frame
        frame.apply(kernel, nv12: false, lumaPadding: 3, chromaPadding: 1)
        XCTAssertEqual(frame.planes, before.planes)
    }

    /// Whole frames, I420 and NV12, odd and even sizes, padded strides: every sample against the naive 2×2 block
    /// composition, padding untouched (`Frame420.apply` checks it).
    func testFramesMatchTheBlockReference() throws {
        let look = try Look(creativeLUT: try CubeLUT.load(path: Self.lookPath), intensity: 0.9)
        for c in [YUVColorimetry.bt709, .bt601.fullRange(true)] {
            let kernel = try YUVKernel(look: look, colorimetry: c)
            for (width, height) in [(1, 1), (2, 2), (7, 5), (8, 3), (33, 17)] {
                for nv12 in [false, true] {
                    var frame = Frame420(width: width, height: height, seed: UInt64(width * 100 + height))
                    let expected = frame.reference(look, c)
                    frame.apply(kernel, nv12: nv12, lumaPadding: 5, chromaPadding: 3)
                    XCTAssertNotEqual(frame.planes, Frame420(width: width, height: height,
                                                             seed: UInt64(width * 100 + height)).planes)
                    XCTAssertLessThanOrEqual(frame.maxDifference(expected), 1, "\(c) \(width)×\(height) nv12 \(nv12)")
                }
            }
        }
    }
}

// MARK: - A test frame

/// An 8-bit 4:2:0 frame as three compact planes (no padding), random samples.
struct Frame420: Equatable {
    let width: Int
    let height: Int
    var y: [UInt8]
    var u: [UInt8]
    var v: [UInt8]

    var chromaWidth: Int { (width + 1) / 2 }
    var chromaHeight: Int { (height + 1) / 2 }
    var planes: [[UInt8]] { [y, u, v] }

    init(width: Int, height: Int, seed: UInt64) {
        var random = PixelRandom(seed: seed)
        self.width = width
        self.height = height
        y = (0..<width * height).map { _ in UInt8.random(in: 0...255, using: &random) }
        let count = (width + 1) / 2 * ((height + 1) / 2)
        u = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
        v = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    init(width: Int, height: Int, y: [UInt8], u: [UInt8], v: [UInt8]) {
        (self.width, self.height, self.y, self.u, self.v) = (width, height, y, u, v)
    }

    /// The naive composition per pixel with its block's (U, V); the block's U', V' the rounded mean of its pixels'.
    func reference(_ look: Look, _ c: YUVColorimetry) -> Frame420 {
        var out = self
        for row in 0..<chromaHeight {
            for column in 0..<chromaWidth {
                let (cu, cv) = (Int(u[row * chromaWidth + column]), Int(v[row * chromaWidth + column]))
                var sums = SIMD2(0, 0)
                var count = 0
                for dy in 0..<2 where 2 * row + dy < height {
                    for dx in 0..<2 where 2 * column + dx < width {
                        let at = (2 * row + dy) * width + 2 * column + dx
                        let result = YUVKernelTests.reference(look, SIMD3(Int(y[at]), cu, cv), c)
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

    func maxDifference(_ other: Frame420) -> Int {
        zip(planes.joined(), other.planes.joined()).map { abs(Int($0) - Int($1)) }.max() ?? 0
    }

    /// Lays the frame out as I420 or NV12 with padded rows (padding bytes 0xA5; I420's Cr plane 2 bytes wider
    /// than its Cb plane), runs the kernel, checks the padding is untouched and reads the planes back.
    mutating func apply(_ kernel: YUVKernel, nv12: Bool, lumaPadding: Int, chromaPadding: Int) {
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
                    let planes = nv12
                        ? YUV420Planes.nv12(luma: luma.baseAddress!, lumaStride: lumaStride, chroma: cb.baseAddress!,
                                            chromaStride: chromaStride)
                        : .i420(luma: luma.baseAddress!, lumaStride: lumaStride, cb: cb.baseAddress!,
                                cr: cr.baseAddress!, chromaStride: chromaStride, crStride: crStride)
                    kernel.apply(to: planes, width: width, height: height)
                }
            }
        }
        for row in 0..<height {
            for x in 0..<width { y[row * width + x] = luma[row * lumaStride + x] }
            XCTAssertTrue(luma[row * lumaStride + width..<(row + 1) * lumaStride].allSatisfy { $0 == 0xA5 },
                          "luma padding changed")
        }
        for row in 0..<chromaHeight {
            for x in 0..<chromaWidth {
                u[row * chromaWidth + x] = cb[row * chromaStride + x * (nv12 ? 2 : 1)]
                v[row * chromaWidth + x] = nv12 ? cb[row * chromaStride + 2 * x + 1] : cr[row * crStride + x]
            }
            let used = chromaWidth * (nv12 ? 2 : 1)
            XCTAssertTrue(cb[row * chromaStride + used..<(row + 1) * chromaStride].allSatisfy { $0 == 0xA5 },
                          "chroma padding changed")
            if !nv12 {
                XCTAssertTrue(cr[row * crStride + used..<(row + 1) * crStride].allSatisfy { $0 == 0xA5 },
                              "chroma padding changed")
            } else {
                XCTAssertTrue(cr.allSatisfy { $0 == 0xA5 }, "NV12 uses one chroma plane")
            }
        }
    }
}
