import Dispatch
import FilmtoneTestSupport
import Foundation
import XCTest

@testable import FilmtoneLooks

/// `LUTKernel` against the reference `Look.apply`: every checked 8-bit input within 1 code value of the reference
/// rounded to nearest, for real LUTs, a synthetic 33³ look, every interpolation, both slots and the intensity; and
/// frame handling: the six layouts (and an unusual one), padded strides, alpha and x bytes, odd sizes.
///
/// Debug builds evaluate the look well over a hundred times slower than release builds, so there `LUTKernel` fills its table
/// lazily, only the (green, blue) rows a frame uses (`ColourTable`); the inputs here are chosen to use few rows
/// (whole blue planes, or grids whose random extras stay on the grid's rows), and the reference runs on both
/// cores. `ftgst-bench lut-check` (bench/README.md) checks all 2²⁴ inputs against a release build's full table.
final class LUTKernelTests: XCTestCase {
    // MARK: - Accuracy

    /// The synthetic 33³ look on whole 256×256 planes (an edge and an inner one), plus random pixels.
    func testSyntheticLookMatchesTheReferenceOnWholePlanes() throws {
        var random = PixelRandom(seed: 1)
        for method in Interpolation.allCases {
            let look = try Look(inputLUT: Self.synthetic, interpolation: method)
            let planes = [255, 131]
            let kernel = try LUTKernel(look: look)
            XCTAssertEqual(kernel.strategy, .fullTable)
            let inputs = planes.flatMap { Self.grid(blue: $0, step: 1) } + random.pixels(1024, bluePlanes: planes)
            assertMatchesReference(look, kernel, inputs, "synthetic 33³ \(method)")
        }
    }

    /// Every reference LUT (1D, 3D, 1D shaper + 3D, with DOMAIN and input ranges), every interpolation: a grid of
    /// inputs on one blue plane per case (planes vary from case to case), plus random pixels.
    func testSharedLUTsMatchTheReference() throws {
        let files = try SharedLUTs.allCubeFiles()
        XCTAssertGreaterThanOrEqual(files.count, 15)
        var random = PixelRandom(seed: 2)
        var kinds = Set<CubeLUT.Kind>()
        for name in files {
            let lut = try SharedLUTs.load(name)
            kinds.insert(lut.kind)
            for method in Interpolation.allCases {
                let look = try Look(inputLUT: lut, interpolation: method)
                let blue = [0, 255, random.code()].randomElement(using: &random)!
                let rows = Self.codes(step: 5)
                let kernel = try LUTKernel(look: look)
                XCTAssertEqual(kernel.strategy, lut.kind == .oneD ? LUTKernel.Strategy.perChannel : .fullTable, name)
                let inputs = Self.grid(blue: blue, step: 5) + random.pixels(256, bluePlanes: [blue], greenRows: rows)
                assertMatchesReference(look, kernel, inputs, "\(name) \(method) blue \(blue)")
            }
        }
        XCTAssertEqual(kinds, [.oneD, .threeD, .shaperAnd3D])
    }

    /// 1D-only looks need no 3D table: the per-channel tables are the reference itself, on any input.
    func testOneDimensionalLooksAreExactPerChannel() throws {
        var random = PixelRandom(seed: 3)
        let input = try SharedLUTs.load("ocio/iridas_1d.cube")
        let creative = try SharedLUTs.load("colour-science/iridas_cube/ACES_Proxy_10_to_ACES.cube")
        let look = try Look(inputLUT: input, creativeLUT: creative, intensity: 0.5)
        let kernel = try LUTKernel(look: look)
        XCTAssertEqual(kernel.strategy, .perChannel)
        XCTAssertEqual(kernel.tableByteCount, 768)
        let inputs = Self.grid(blue: 17, step: 3) + random.pixels(4096, bluePlanes: Array(0..<256))
        assertMatchesReference(look, kernel, inputs, "1D + 1D", tolerance: 0)
    }

    /// Both slots: input LUT, then the creative LUT blended by intensity 0, 0.5 and 1, every interpolation. The
    /// input LUT is the reference non-linear `Colour_Correct.cube` (size 4), the creative one the synthetic look.
    func testBothSlotsBlendByIntensity() throws {
        var random = PixelRandom(seed: 4)
        let input = try SharedLUTs.load("colour-science/iridas_cube/Colour_Correct.cube")
        for method in Interpolation.allCases {
            for intensity in [0, 0.5, 1] {
                let look = try Look(
                    inputLUT: input, creativeLUT: Self.synthetic, intensity: intensity, interpolation: method)
                let blue = random.code()
                let step = method == .tetrahedral && intensity == 0.5 ? 1 : 4
                let rows = Self.codes(step: step)
                let kernel = try LUTKernel(look: look)
                let inputs = Self.grid(blue: blue, step: step) + random.pixels(256, bluePlanes: [blue], greenRows: rows)
                assertMatchesReference(look, kernel, inputs, "both slots \(method) intensity \(intensity)")
            }
        }
        // The intensity really blends: half-way differs from both ends.
        let half = try Look(inputLUT: input, creativeLUT: Self.synthetic, intensity: 0.5)
        let none = try Look(inputLUT: input, creativeLUT: Self.synthetic, intensity: 0)
        let full = try Look(inputLUT: input, creativeLUT: Self.synthetic, intensity: 1)
        let pixel: [UInt8] = [200, 40, 90]
        let outputs = try [none, half, full].map { look in
            try LUTKernel(look: look).applied(
                to: pixel, width: 1, height: 1, layout: .rgb)
        }
        XCTAssertNotEqual(outputs[1], outputs[0])
        XCTAssertNotEqual(outputs[1], outputs[2])
    }

    /// Either slot may be empty, and the slots may hold any kind: creative only, a 1D input with a 3D creative
    /// (the creative table is then the first 3D table), a shaper + 3D input with a 1D creative.
    func testSlotCombinations() throws {
        var random = PixelRandom(seed: 5)
        let oneD = try SharedLUTs.load("ocio/iridas_1d.cube")
        let shaper = try SharedLUTs.load("colour-science/resolve_cube/LogC_Video.cube")
        let looks: [(String, Look)] = [
            ("creative only", try Look(creativeLUT: Self.synthetic, intensity: 0.5)),
            ("1D input, 3D creative", try Look(inputLUT: oneD, creativeLUT: Self.synthetic, intensity: 0.7)),
            ("shaper input, 1D creative", try Look(inputLUT: shaper, creativeLUT: oneD, intensity: 0.4)),
            (
                "shaper input, 3D creative, nearest",
                try Look(inputLUT: shaper, creativeLUT: Self.synthetic, intensity: 0.6, interpolation: .nearest)
            ),
            (
                "3D input, 3D creative, trilinear",
                try Look(inputLUT: Self.synthetic, creativeLUT: shaper, intensity: 0.3, interpolation: .trilinear)
            ),
        ]
        for (label, look) in looks {
            let blue = random.code()
            let rows = Self.codes(step: 4)
            let kernel = try LUTKernel(look: look)
            let inputs = Self.grid(blue: blue, step: 4) + random.pixels(256, bluePlanes: [blue], greenRows: rows)
            assertMatchesReference(look, kernel, inputs, label)
        }
    }

    /// Inputs on grid nodes give the node values, with every method. `Colour_Correct.cube` has 4 nodes per axis,
    /// at codes 0, 85, 170 and 255.
    func testGridNodesReturnNodeValues() throws {
        let lut = try SharedLUTs.load("colour-science/iridas_cube/Colour_Correct.cube")
        let table = try XCTUnwrap(lut.table3D)
        for method in Interpolation.allCases {
            let kernel = try LUTKernel(look: try Look(inputLUT: lut, interpolation: method))
            for (b, blue) in [(1, 85), (3, 255)] {
                for g in 0..<4 {
                    for r in 0..<4 {
                        let output = kernel.applied(
                            to: [UInt8(r * 85), UInt8(g * 85), UInt8(blue)], width: 1, height: 1, layout: .rgb)
                        let node = table.node(r, g, b)
                        XCTAssertEqual(
                            output, [LUTKernel.code(node.x), LUTKernel.code(node.y), LUTKernel.code(node.z)],
                            "\(method) node (\(r), \(g), \(b))")
                    }
                }
            }
        }
    }

    /// Inputs outside a table's domain take its edge values: `ocio/iridas_3d.cube` has green domain 1…2, so every
    /// green code is at or below it and the output does not depend on green.
    func testInputsOutsideTheDomainAreClamped() throws {
        let lut = try SharedLUTs.load("ocio/iridas_3d.cube")
        let kernel = try LUTKernel(look: try Look(inputLUT: lut))
        var frame: [UInt8] = []
        for green in 0..<256 { frame += [123, UInt8(green), 60] }
        let output = kernel.applied(to: frame, width: 256, height: 1, layout: .rgb)
        for green in 0..<256 { XCTAssertEqual(Array(output[green * 3..<green * 3 + 3]), Array(output[0..<3])) }
    }

    // MARK: - Frames

    /// All six layouts and an unusual one (5-byte pixels, channels out of order), with padded strides (row starts
    /// not 4-byte aligned for the 4-byte layouts) on a frame large enough to be split across threads: R, G and B
    /// get the RGB path's results, every other byte (alpha, x, the fifth byte, row padding) is untouched.
    func testLayoutsStridesAndUntouchedBytes() throws {
        var random = PixelRandom(seed: 6)
        let planes = [0, 9, 128, 255]
        let look = try Look(inputLUT: Self.synthetic)
        let kernel = try LUTKernel(look: look)
        let layouts: [PackedRGBLayout] = [
            .rgb, .bgr, .rgbx, .bgrx, .xrgb, .xbgr, PackedRGBLayout(bytesPerPixel: 5, red: 3, green: 0, blue: 4),
        ]
        let (width, height) = (641, 103)  // 66 023 pixels: over the threshold for splitting across threads
        XCTAssertGreaterThan(width * height, LUTKernel.parallelPixelThreshold)
        let pixels = random.pixels(width * height, bluePlanes: planes)
        // The expected colours: the RGB path on a tight frame (checked against the reference above, and here on
        // a sample).
        let tight = kernel.applied(
            to: pixels.flatMap { [$0.x, $0.y, $0.z] }, width: width, height: height, layout: .rgb)
        assertMatchesReference(look, kernel, Array(pixels.prefix(2000)), "RGB sample")
        for layout in layouts {
            let bpp = layout.bytesPerPixel
            let stride = width * bpp + 5
            // Exactly as long as the last row's pixels: nothing past them to read or write.
            var frame = [UInt8](repeating: 0, count: stride * (height - 1) + width * bpp)
            for offset in frame.indices { frame[offset] = UInt8(truncatingIfNeeded: random.next()) }
            var expected = frame
            for (index, pixel) in pixels.enumerated() {
                let base = (index / width) * stride + (index % width) * bpp
                (frame[base + layout.red], frame[base + layout.green], frame[base + layout.blue]) =
                    (pixel.x, pixel.y, pixel.z)
                (expected[base + layout.red], expected[base + layout.green], expected[base + layout.blue]) =
                    (tight[index * 3], tight[index * 3 + 1], tight[index * 3 + 2])
            }
            frame.withUnsafeMutableBufferPointer {
                kernel.apply(to: $0.baseAddress!, width: width, height: height, stride: stride, layout: layout)
            }
            let mismatches = zip(frame, expected).filter { $0 != $1 }.count
            XCTAssertEqual(mismatches, 0, "\(layout)")
        }
    }

    /// Frame sizes from 1×1 up, odd widths and heights, single rows and columns, in RGB and RGBx, through every
    /// strategy (identity, per-channel, full table).
    func testFrameSizes() throws {
        var random = PixelRandom(seed: 7)
        let oneD = try SharedLUTs.load("colour-science/iridas_cube/Demo.cube")
        let looks = [
            try Look(), try Look(inputLUT: oneD), try Look(inputLUT: Self.synthetic, interpolation: .trilinear),
        ]
        for look in looks {
            let kernel = try LUTKernel(look: look)
            for (width, height) in [(1, 1), (1, 7), (7, 1), (3, 5), (17, 3), (129, 131)] {
                for layout in [PackedRGBLayout.rgb, .rgbx] {
                    let pixels = random.pixels(width * height, bluePlanes: [42])
                    let bpp = layout.bytesPerPixel
                    var frame = [UInt8](repeating: 7, count: pixels.count * bpp)
                    for (index, pixel) in pixels.enumerated() {
                        (frame[index * bpp], frame[index * bpp + 1], frame[index * bpp + 2]) = (
                            pixel.x, pixel.y, pixel.z
                        )
                    }
                    let output = kernel.applied(to: frame, width: width, height: height, layout: layout)
                    // Spot checks against the reference (all pixels for small frames).
                    for index in Swift.stride(from: 0, to: pixels.count, by: max(1, pixels.count / 64)) {
                        let expected = Self.reference(look, pixels[index])
                        let actual = SIMD3(output[index * bpp], output[index * bpp + 1], output[index * bpp + 2])
                        XCTAssertLessThanOrEqual(
                            Self.difference(actual, expected), 1, "\(kernel.strategy) \(width)×\(height) \(layout)")
                        if bpp == 4 { XCTAssertEqual(output[index * 4 + 3], 7) }
                    }
                }
            }
        }
    }

    /// Which tables a look gets, and the memory they hold.
    func testStrategiesAndMemory() throws {
        let oneD = try SharedLUTs.load("colour-science/iridas_cube/Demo.cube")
        let empty = try LUTKernel(look: try Look())
        XCTAssertEqual(empty.strategy, .identity)
        XCTAssertEqual(empty.tableByteCount, 0)
        // A creative LUT at intensity 0 is off: an identity, whatever the LUT.
        XCTAssertEqual(try LUTKernel(look: try Look(creativeLUT: Self.synthetic, intensity: 0)).strategy, .identity)
        XCTAssertEqual(try LUTKernel(look: try Look(inputLUT: oneD, creativeLUT: oneD)).strategy, .perChannel)
        let full = try LUTKernel(look: try Look(inputLUT: Self.synthetic))
        XCTAssertEqual(full.strategy, .fullTable)
        XCTAssertEqual(full.tableByteCount, 64 << 20)
        // The identity leaves every byte alone.
        let frame: [UInt8] = [1, 2, 3, 4, 5, 6]
        XCTAssertEqual(empty.applied(to: frame, width: 2, height: 1, layout: .rgb), frame)
    }

    // MARK: - Helpers

    /// A 33³ film-like look (saturation, split toning, S-curve, channel crosstalk: not separable, so
    /// tetrahedral and trilinear differ), written as `.cube` text and parsed. Throws (fails the test using it) if
    /// the parser under test refuses it, instead of trapping and ending every test.
    static var synthetic: CubeLUT {
        get throws { try syntheticParsed.get() }
    }

    private static let syntheticParsed = Result<CubeLUT, Error> {
        let size = 33
        var text = "TITLE \"synthetic\"\nLUT_3D_SIZE \(size)\n"
        for blue in 0..<size {
            for green in 0..<size {
                for red in 0..<size {
                    let rgb = SIMD3(Double(red), Double(green), Double(blue)) / Double(size - 1)
                    let luma = (rgb * SIMD3(0.2126, 0.7152, 0.0722)).sum()
                    var value = luma + (rgb - luma) * 1.3
                    value += (1 - luma) * (1 - luma) * SIMD3(-0.05, 0.02, 0.06) + luma * luma * SIMD3(0.06, 0, -0.05)
                    value = value.clamped(lowerBound: .zero, upperBound: .one)
                    value = value * value * (3 - 2 * value) * 0.7 + value * 0.3
                    value = SIMD3(
                        0.9 * value.x + 0.07 * value.y + 0.03 * value.z,
                        0.04 * value.x + 0.92 * value.y + 0.04 * value.z,
                        0.02 * value.x + 0.08 * value.y + 0.9 * value.z)
                    text += "\(value.x) \(value.y) \(value.z)\n"
                }
            }
        }
        return try CubeLUT.parse(data: Array(text.utf8), fileName: "synthetic.cube")
    }

    /// 0…255 in steps of `step`, plus 255.
    static func codes(step: Int) -> [Int] {
        Array(Swift.stride(from: 0, to: 256, by: step)) + (255 % step == 0 ? [] : [255])
    }

    /// All (r, g) with r and g in `codes(step:)`, on one blue plane.
    static func grid(blue: Int, step: Int) -> [SIMD3<UInt8>] {
        let codes = codes(step: step)
        return codes.flatMap { g in codes.map { r in SIMD3(UInt8(r), UInt8(g), UInt8(blue)) } }
    }

    static func reference(_ look: Look, _ input: SIMD3<UInt8>) -> SIMD3<UInt8> {
        let output = look.apply(SIMD3(Double(input.x), Double(input.y), Double(input.z)) / 255)
        return SIMD3(LUTKernel.code(output.x), LUTKernel.code(output.y), LUTKernel.code(output.z))
    }

    static func difference(_ a: SIMD3<UInt8>, _ b: SIMD3<UInt8>) -> Int {
        (0..<3).map { abs(Int(a[$0]) - Int(b[$0])) }.max()!
    }

    /// Runs `inputs` through the kernel as one RGB row per 256 pixels and compares each with the reference, on all
    /// cores; reports the worst case and the first few failures.
    func assertMatchesReference(
        _ look: Look, _ kernel: LUTKernel, _ inputs: [SIMD3<UInt8>], _ label: String, tolerance: Int = 1,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let width = min(256, inputs.count)
        let height = (inputs.count + width - 1) / width
        var frame = [UInt8](repeating: 0, count: width * height * 3)
        for (index, input) in inputs.enumerated() {
            (frame[index * 3], frame[index * 3 + 1], frame[index * 3 + 2]) = (input.x, input.y, input.z)
        }
        let output = kernel.applied(to: frame, width: width, height: height, layout: .rgb)
        let chunks = 16
        let results = Results(chunks)
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            var worst = 0
            var failures: [String] = []
            for index in Swift.stride(from: chunk, to: inputs.count, by: chunks) {
                let expected = Self.reference(look, inputs[index])
                let actual = SIMD3(output[index * 3], output[index * 3 + 1], output[index * 3 + 2])
                let difference = Self.difference(actual, expected)
                worst = max(worst, difference)
                if difference > tolerance && failures.count < 3 {
                    failures.append("input \(inputs[index]): kernel \(actual), reference \(expected)")
                }
            }
            results.set(chunk, worst, failures)
        }
        let (worst, failures) = results.merged()
        XCTAssertLessThanOrEqual(
            worst, tolerance, "\(label): \(failures.prefix(5).joined(separator: "; "))", file: file, line: line)
    }
}

/// Per-chunk results written from `concurrentPerform`: each chunk writes only its own slot.
private final class Results: @unchecked Sendable {
    private var worst: [Int]
    private var failures: [[String]]

    init(_ count: Int) {
        worst = Array(repeating: 0, count: count)
        failures = Array(repeating: [], count: count)
    }

    func set(_ chunk: Int, _ worst: Int, _ failures: [String]) {
        self.worst[chunk] = worst
        self.failures[chunk] = failures
    }

    func merged() -> (Int, [String]) { (worst.max() ?? 0, failures.flatMap { $0 }) }
}

extension LUTKernel {
    /// `apply` on a copy of a tightly packed frame.
    func applied(to frame: [UInt8], width: Int, height: Int, layout: PackedRGBLayout) -> [UInt8] {
        var copy = frame
        copy.withUnsafeMutableBufferPointer {
            apply(
                to: $0.baseAddress!, width: width, height: height, stride: width * layout.bytesPerPixel, layout: layout)
        }
        return copy
    }
}
