import FilmtoneTestSupport
import Foundation
import XCTest

@testable import FilmtoneLooks

/// `YUVKernel` against the composition computed naively here: Y'CbCr → R'G'B' codes by the matrix in `Double`,
/// rounded and clamped; the reference look (`Look.apply`, rounded to nearest code, as `referenceApply`); back to
/// Y'CbCr, rounded and clamped. Table entries and whole 4:2:0 frames (2×2 blocks, odd sizes, padded strides) within
/// 1 code.
final class YUVKernelTests: XCTestCase {
    static let lookPath = SharedLUTs.root.appendingPathComponent("colour-science/iridas_cube/Colour_Correct.cube").path

    // MARK: - Tests

    /// The matrices are the standards' (pinned on a few colours), and the test's conversions invert each other.
    func testConversionsArePinned() {
        XCTAssertEqual(YUVReference.yuv(SIMD3(255, 0, 0), .bt601), SIMD3(81, 90, 240))
        XCTAssertEqual(YUVReference.yuv(SIMD3(255, 0, 0), .bt709), SIMD3(63, 102, 240))
        XCTAssertEqual(YUVReference.yuv(SIMD3(255, 255, 255), .bt709), SIMD3(235, 128, 128))
        XCTAssertEqual(YUVReference.yuv(SIMD3(255, 255, 255), .bt709.fullRange(true)), SIMD3(255, 128, 128))
        XCTAssertEqual(YUVReference.rgb(SIMD3(16, 128, 128), .bt2020), SIMD3(0, 0, 0))
        for c in [YUVColorimetry.bt601, .bt709, .bt2020, .bt709.fullRange(true)] {
            // The library's unrounded conversions agree with the test's.
            let library = c.rgb(y: 81, u: 90, v: 240)
            XCTAssertEqual(
                SIMD3(YUVReference.code(library.x), YUVReference.code(library.y), YUVReference.code(library.z)),
                YUVReference.rgb(SIMD3(81, 90, 240), c), "\(c)")
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
                let chroma =
                    edges.map { SIMD2($0, $0) } + edges.map { SIMD2($0, 255 - $0) }
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
                    let expected = YUVReference.reference(look, input, c)
                    let difference = (0..<3).map { abs(actual[$0] - expected[$0]) }.max()!
                    if difference > 1 { XCTFail("\(label) \(c) \(input): \(actual), expected \(expected)") }
                    worst = max(worst, difference)
                    if expected != YUVReference.reference(try Look(), input, c) { changed += 1 }
                }
                XCTAssertLessThanOrEqual(worst, 1, "\(label) \(c)")
                XCTAssertGreaterThan(changed, inputs.count / 2, "\(label): the look must change most inputs")
            }
        }
    }

    /// The table takes memory for the rows frames use only: none before a frame, one page for a frame of three
    /// (U, V) pairs far apart (their rows packed together), and the same entries as a kernel filled from the RGB kernel's whole table.
    func testRowsTakeMemoryOnlyWhenAFrameUsesThem() throws {
        let look = try Look(creativeLUT: try CubeLUT.load(path: Self.lookPath), intensity: 0.9)
        let kernel = try YUVKernel(look: look, colorimetry: .bt709)
        XCTAssertEqual(kernel.tableByteCount, 64 << 20)
        XCTAssertEqual(kernel.residentTableBytes, 0, "nothing filled before a frame")
        let (width, height) = (64, 32)
        var luma = (0..<width * height).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let pairs: [(UInt8, UInt8)] = [(90, 240), (128, 128), (200, 60)]
        var cb = (0..<(width / 2) * (height / 2)).map { pairs[$0 % 3].0 }
        var cr = (0..<(width / 2) * (height / 2)).map { pairs[$0 % 3].1 }
        luma.withUnsafeMutableBufferPointer { y in
            cb.withUnsafeMutableBufferPointer { u in
                cr.withUnsafeMutableBufferPointer { v in
                    kernel.apply(
                        to: .i420(
                            luma: y.baseAddress!, lumaStride: width, cb: u.baseAddress!, cr: v.baseAddress!,
                            chromaStride: width / 2),
                        width: width, height: height)
                }
            }
        }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        XCTAssertGreaterThan(kernel.residentTableBytes, 0)
        XCTAssertEqual(kernel.residentTableBytes, page, "three rows packed in one page")
        // Filled on demand from the look, the entries are the ones filled from the RGB kernel's table (release
        // builds fill that one whole, in rows of floats: up to float rounding, at most one code apart).
        let fromTable = try YUVKernel(rgb: try LUTKernel(look: look), colorimetry: .bt709)
        var random = PixelRandom(seed: 7)
        var same = 0
        for _ in 0..<2000 {
            let (y, u, v) = (random.code(), random.code(), random.code())
            let (a, b) = (kernel.entry(y: y, u: u, v: v), fromTable.entry(y: y, u: u, v: v))
            let difference = (0..<3).map { abs(Int(a[$0]) - Int(b[$0])) }.max()!
            XCTAssertLessThanOrEqual(difference, 1, "\(y) \(u) \(v): \(a) against \(b)")
            if a == b { same += 1 }
        }
        XCTAssertGreaterThan(same, 1990)
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
                    XCTAssertNotEqual(
                        frame.planes,
                        Frame420(
                            width: width, height: height,
                            seed: UInt64(width * 100 + height)
                        ).planes)
                    XCTAssertLessThanOrEqual(frame.maxDifference(expected), 1, "\(c) \(width)×\(height) nv12 \(nv12)")
                }
            }
        }
    }
}
