import FilmtoneTestSupport
import Foundation
import XCTest

@testable import FilmtoneLooks

/// `YUV10Kernel` on whole 10-bit 4:2:0 frames (I420_10LE, P010_10LE; odd sizes, padded strides) against the same
/// block composition computed here in `Double`: Y'CbCr → R'G'B' (clamped to 0…1), the reference look, back; Y' per
/// pixel, U' and V' the mean over each 2×2 block. The contract: every sample within 1 10-bit code.
final class YUV10KernelTests: XCTestCase {
    /// A frame as its 10-bit codes, planes compact.
    private struct Frame10: Equatable {
        var width: Int, height: Int
        var y: [Int], u: [Int], v: [Int]
        var chromaWidth: Int { (width + 1) / 2 }
    }

    private func randomFrame(width: Int, height: Int, seed: UInt64) -> Frame10 {
        var random = PixelRandom(seed: seed)
        let chroma = ((width + 1) / 2) * ((height + 1) / 2)
        // Mostly legal-range codes, some at and past the ends (clamped through R'G'B').
        func code() -> Int {
            Int.random(in: 0..<10, using: &random) == 0
                ? Int.random(in: 0...1023, using: &random)
                : Int.random(in: 64...940, using: &random)
        }
        return Frame10(
            width: width, height: height, y: (0..<(width * height)).map { _ in code() },
            u: (0..<chroma).map { _ in code() }, v: (0..<chroma).map { _ in code() })
    }

    /// The Double composition, rounded and clamped to 10-bit codes.
    private func reference(_ frame: Frame10, _ look: Look, _ c: YUVColorimetry) -> Frame10 {
        var out = frame
        func code(_ value: Double) -> Int { Int(min(1023, max(0, value.rounded()))) }
        for by in 0..<(frame.height + 1) / 2 {
            for bx in 0..<frame.chromaWidth {
                let ci = by * frame.chromaWidth + bx
                var (sumU, sumV, count) = (0.0, 0.0, 0.0)
                for y in (by * 2)..<min(frame.height, by * 2 + 2) {
                    for x in (bx * 2)..<min(frame.width, bx * 2 + 2) {
                        let rgb = c.rgb10(
                            y: Double(frame.y[y * frame.width + x]), u: Double(frame.u[ci]), v: Double(frame.v[ci]))
                        let looked = look.apply(rgb.clamped(lowerBound: .zero, upperBound: .one))
                        let yuv = c.yuv10(rgb: looked.clamped(lowerBound: .zero, upperBound: .one))
                        out.y[y * frame.width + x] = code(yuv.x)
                        (sumU, sumV, count) = (sumU + yuv.y, sumV + yuv.z, count + 1)
                    }
                }
                (out.u[ci], out.v[ci]) = (code(sumU / count), code(sumV / count))
            }
        }
        return out
    }

    /// Writes `frame` into padded planes of `layout`, runs the kernel and reads the codes back; padding must stay.
    private func run(_ frame: Frame10, _ kernel: YUV10Kernel, _ layout: YUV10Layout) -> Frame10? {
        let (w, h, cw, ch) = (frame.width, frame.height, frame.chromaWidth, (frame.height + 1) / 2)
        let lumaStride = w * 2 + 6
        let chromaStride = layout == .i420 ? cw * 2 + 10 : cw * 4 + 2
        var luma = [UInt8](repeating: 0xA5, count: lumaStride * h)
        var cb = [UInt8](repeating: 0xA5, count: chromaStride * ch)
        var cr = [UInt8](repeating: 0xA5, count: chromaStride * ch)
        func put(_ bytes: inout [UInt8], _ at: Int, _ code: Int) {
            let word = layout == .i420 ? UInt16(code) : UInt16(code) << 6
            (bytes[at], bytes[at + 1]) = (UInt8(word & 0xFF), UInt8(word >> 8))
        }
        func get(_ bytes: [UInt8], _ at: Int) -> Int {
            let word = Int(bytes[at]) | Int(bytes[at + 1]) << 8
            return layout == .i420 ? word : word >> 6
        }
        for y in 0..<h { for x in 0..<w { put(&luma, y * lumaStride + x * 2, frame.y[y * w + x]) } }
        for y in 0..<ch {
            for x in 0..<cw {
                if layout == .i420 {
                    put(&cb, y * chromaStride + x * 2, frame.u[y * cw + x])
                    put(&cr, y * chromaStride + x * 2, frame.v[y * cw + x])
                } else {
                    put(&cb, y * chromaStride + x * 4, frame.u[y * cw + x])
                    put(&cb, y * chromaStride + x * 4 + 2, frame.v[y * cw + x])
                }
            }
        }
        let (lumaBefore, cbBefore) = (luma, cb)
        luma.withUnsafeMutableBytes { l in
            cb.withUnsafeMutableBytes { u in
                cr.withUnsafeMutableBytes { v in
                    let planes: YUV10Planes =
                        layout == .i420
                        ? .i420(
                            luma: l.baseAddress!, lumaStride: lumaStride, cb: u.baseAddress!, cr: v.baseAddress!,
                            chromaStride: chromaStride)
                        : .p010(
                            luma: l.baseAddress!, lumaStride: lumaStride, chroma: u.baseAddress!,
                            chromaStride: chromaStride)
                    kernel.apply(to: planes, width: w, height: h)
                }
            }
        }
        // Padding (and, for P010, the 6 low bits of every word) untouched.
        for y in 0..<h {
            for at in (y * lumaStride + w * 2)..<((y + 1) * lumaStride) where luma[at] != lumaBefore[at] {
                XCTFail("luma padding written at row \(y)")
                return nil
            }
        }
        let chromaRow = layout == .i420 ? cw * 2 : cw * 4
        for y in 0..<ch {
            for at in (y * chromaStride + chromaRow)..<((y + 1) * chromaStride) where cb[at] != cbBefore[at] {
                XCTFail("chroma padding written at row \(y)")
                return nil
            }
        }
        var out = frame
        for y in 0..<h { for x in 0..<w { out.y[y * w + x] = get(luma, y * lumaStride + x * 2) } }
        for y in 0..<ch {
            for x in 0..<cw {
                out.u[y * cw + x] = get(cb, y * chromaStride + x * (layout == .i420 ? 2 : 4))
                out.v[y * cw + x] =
                    layout == .i420 ? get(cr, y * chromaStride + x * 2) : get(cb, y * chromaStride + x * 4 + 2)
            }
        }
        return out
    }

    private func worst(_ a: Frame10, _ b: Frame10) -> Int {
        zip(a.y + a.u + a.v, b.y + b.u + b.v).map { abs($0 - $1) }.max() ?? Int.max
    }

    func testFramesMatchTheDoubleCompositionWithinOneCode() throws {
        let look = try SharedLUTs.load("colour-science/iridas_cube/Colour_Correct.cube")
        let gains = try SharedLUTs.load("colour-science/iridas_cube/RGB_1_0.5_0.25.cube")
        let cases: [(String, Look, YUVColorimetry)] = [
            ("3D tetrahedral, BT.709", try Look(creativeLUT: look), .bt709),
            (
                "3D trilinear at 0.6, BT.2020", try Look(creativeLUT: look, intensity: 0.6, interpolation: .trilinear),
                .bt2020
            ),
            (
                "both slots, BT.601 full range", try Look(inputLUT: gains, creativeLUT: look, intensity: 0.8),
                .bt601.fullRange(true)
            ),
            ("1D gains, BT.709", try Look(inputLUT: gains), .bt709),
        ]
        for (index, (label, look, c)) in cases.enumerated() {
            let kernel = YUV10Kernel(rgb: try LUTKernel16(look: look), colorimetry: c)
            for (layout, size) in [(YUV10Layout.i420, (37, 23)), (.p010, (64, 18)), (.i420, (1, 1))] {
                let frame = randomFrame(width: size.0, height: size.1, seed: UInt64(index * 10 + size.0))
                guard let output = run(frame, kernel, layout) else { continue }
                XCTAssertNotEqual(output, frame, "\(label) \(layout): the look must change the picture")
                XCTAssertLessThanOrEqual(worst(output, reference(frame, look, c)), 1, "\(label) \(layout) \(size)")
            }
        }
    }

    /// An empty look leaves every sample as it was.
    func testAnEmptyLookLeavesTheFrameAlone() throws {
        let kernel = YUV10Kernel(rgb: try LUTKernel16(look: try Look()), colorimetry: .bt709)
        let frame = randomFrame(width: 9, height: 5, seed: 3)
        XCTAssertEqual(run(frame, kernel, .p010), frame)
    }

    /// The conversions are the standards' at 10 bits (limited range = the 8-bit range × 4).
    func testTenBitConversionsArePinned() {
        let white = YUVColorimetry.bt709.yuv10(rgb: SIMD3(1, 1, 1))
        XCTAssertEqual(white.x, 940, accuracy: 1e-9)
        XCTAssertEqual(white.y, 512, accuracy: 1e-9)
        let black = YUVColorimetry.bt2020.rgb10(y: 64, u: 512, v: 512)
        XCTAssertEqual(black.x, 0, accuracy: 1e-9)
        let full = YUVColorimetry.bt709.fullRange(true).rgb10(y: 1023, u: 512, v: 512)
        XCTAssertEqual(full.y, 1, accuracy: 1e-9)
    }
}
