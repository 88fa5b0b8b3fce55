import Dispatch
import FilmtoneTestSupport
import Foundation
import Synchronization
import XCTest

@testable import FilmtoneLooks

/// `LUTKernel16` against the reference `Look.apply`: the quality contract of the 16-bit path is every output
/// channel within half a 10-bit code (32 in 16-bit units) of the reference rounded to nearest 16-bit code, for
/// random 16-bit inputs and full 10-bit ramps through the reference `.cube` files, both slots and intensities below 1;
/// identity looks within 1 code; 1D-only looks exact. Then frame handling: the four layouts, padded (odd) strides,
/// alpha and padding untouched, bands across threads.
final class LUTKernel16Tests: XCTestCase {
    /// Half a 10-bit code in 16-bit units (65535 / 1023 / 2 = 32.03).
    static let contract = 32

    // MARK: - Accuracy

    /// Every reference LUT (1D, 3D, shaper + 3D, with DOMAIN and input ranges) in either slot, every interpolation:
    /// random 16-bit inputs plus the 10-bit grey ramp.
    func testSharedLUTsMatchTheReferenceWithinHalfA10BitCode() throws {
        let files = try SharedLUTs.allCubeFiles()
        XCTAssertGreaterThanOrEqual(files.count, 15)
        var random = PixelRandom(seed: 16)
        var worst = 0
        for name in files {
            let lut = try SharedLUTs.load(name)
            for method in Interpolation.allCases {
                let look = try Look(inputLUT: lut, interpolation: method)
                let inputs = Self.randomInputs(600, &random) + Self.greyRamp10()
                worst = max(worst, try assertMatches(look, inputs, "\(name) \(method)"))
                // The same LUT as the creative slot, blended: the blend runs over the input itself.
                let blended = try Look(creativeLUT: lut, intensity: 0.6, interpolation: method)
                worst = max(worst, try assertMatches(blended, Self.randomInputs(300, &random), "\(name) \(method) 0.6"))
            }
        }
        // Measured: float rounding leaves at most a couple of 16-bit codes, far inside the contract.
        XCTAssertLessThanOrEqual(worst, 4, "worst difference over the reference LUTs")
    }

    /// Both slots with intensities below 1, through the full 10-bit ramp on every channel (the other two
    /// channels random per code) and the grey ramp, plus random 16-bit inputs: a 3D input LUT (`Colour_Correct`,
    /// size 4) and a shaper + 3D one (`LogC_Video`) before the synthetic 33³ creative look; a 3D look before a
    /// shaper + 3D creative one.
    func testBothSlotsOnFull10BitRamps() throws {
        var random = PixelRandom(seed: 17)
        let colourCorrect = try SharedLUTs.load("colour-science/iridas_cube/Colour_Correct.cube")
        let logC = try SharedLUTs.load("colour-science/resolve_cube/LogC_Video.cube")
        let looks: [(String, Look)] = [
            (
                "3D + 33³ tetrahedral 0.6",
                try Look(
                    inputLUT: colourCorrect, creativeLUT: LUTKernelTests.synthetic,
                    intensity: 0.6)
            ),
            (
                "3D + 33³ trilinear 0.35",
                try Look(
                    inputLUT: colourCorrect, creativeLUT: LUTKernelTests.synthetic,
                    intensity: 0.35, interpolation: .trilinear)
            ),
            (
                "shaper + 33³ tetrahedral 0.8",
                try Look(
                    inputLUT: logC, creativeLUT: LUTKernelTests.synthetic,
                    intensity: 0.8)
            ),
            (
                "33³ + shaper nearest 0.5",
                try Look(
                    inputLUT: LUTKernelTests.synthetic, creativeLUT: logC,
                    intensity: 0.5, interpolation: .nearest)
            ),
            ("3D + 33³ tetrahedral 1", try Look(inputLUT: colourCorrect, creativeLUT: LUTKernelTests.synthetic)),
        ]
        for (label, look) in looks {
            let inputs = Self.channelRamps10(&random) + Self.greyRamp10() + Self.randomInputs(2000, &random)
            try assertMatches(look, inputs, label)
        }
    }

    /// The intensity really blends, in 16 bits too: half-way differs from both ends, 0 is the input slot alone.
    func testIntensityBlends() throws {
        let input = try SharedLUTs.load("colour-science/iridas_cube/Colour_Correct.cube")
        let pixel = SIMD3<UInt16>(51_234, 9_000, 30_001)
        let outputs = try [0, 0.5, 1].map { intensity in
            try Self.applied(
                LUTKernel16(
                    look: try Look(
                        inputLUT: input, creativeLUT: LUTKernelTests.synthetic,
                        intensity: intensity)), [pixel])[0]
        }
        XCTAssertNotEqual(outputs[1], outputs[0])
        XCTAssertNotEqual(outputs[1], outputs[2])
        let inputOnly = try Self.applied(LUTKernel16(look: try Look(inputLUT: input)), [pixel])[0]
        XCTAssertEqual(outputs[0], inputOnly)
    }

    /// Identity looks keep every input within 1 code: identity tables of 2, 17 and 33 nodes (tetrahedral and
    /// trilinear), and looks with no LUT or a creative LUT at intensity 0, which leave the frame untouched.
    func testIdentityLooksAreExactWithinOneCode() throws {
        var random = PixelRandom(seed: 18)
        let inputs = Self.randomInputs(3000, &random) + Self.greyRamp10() + Self.channelRamps10(&random)
        for size in [2, 17, 33] {
            let identity = try Self.identityLUT(size: size)
            for method in [Interpolation.tetrahedral, .trilinear] {
                let kernel = try LUTKernel16(look: try Look(creativeLUT: identity, interpolation: method))
                XCTAssertEqual(kernel.strategy, .perPixel)
                let outputs = Self.applied(kernel, inputs)
                let worst = zip(inputs, outputs).map { difference16($0, $1) }.max()!
                XCTAssertLessThanOrEqual(worst, 1, "identity \(size)³ \(method)")
            }
        }
        for look in [try Look(), try Look(creativeLUT: LUTKernelTests.synthetic, intensity: 0)] {
            let kernel = try LUTKernel16(look: look)
            XCTAssertEqual(kernel.strategy, .identity)
            XCTAssertEqual(Self.applied(kernel, inputs), inputs)
        }
    }

    /// 1D-only looks need no 3D table: per-channel tables from the reference itself, exact on any input.
    func testOneDimensionalLooksAreExactPerChannel() throws {
        var random = PixelRandom(seed: 19)
        let look = try Look(
            inputLUT: try SharedLUTs.load("ocio/iridas_1d.cube"),
            creativeLUT: try SharedLUTs.load("colour-science/iridas_cube/ACES_Proxy_10_to_ACES.cube"),
            intensity: 0.5)
        let kernel = try LUTKernel16(look: look)
        XCTAssertEqual(kernel.strategy, .perChannel)
        XCTAssertEqual(kernel.tableByteCount, 3 * 65536 * 2)
        try assertMatches(
            look, Self.randomInputs(4000, &random) + Self.greyRamp10(), "1D + 1D", tolerance: 0,
            kernel: kernel)
    }

    // MARK: - Frames

    /// The four layouts on a frame large enough to be split across threads, with a stride that is padded and odd
    /// (rows start at odd addresses): R, G, B get the same results as a tight RGBA64 frame, alpha and the padding
    /// keep their bytes.
    func testLayoutsStridesAlphaAndPadding() throws {
        var random = PixelRandom(seed: 20)
        let look = try Look(
            inputLUT: try SharedLUTs.load("colour-science/iridas_cube/Colour_Correct.cube"),
            creativeLUT: LUTKernelTests.synthetic, intensity: 0.7)
        let kernel = try LUTKernel16(look: look)
        let (width, height) = (263, 251)  // 66 013 pixels: over the threshold for splitting across threads
        XCTAssertGreaterThan(width * height, LUTKernel.parallelPixelThreshold)
        let pixels = Self.randomInputs(width * height, &random)
        let tight = Self.applied(kernel, pixels)
        try assertMatches(look, Array(pixels.prefix(1500)), "sample", kernel: kernel)
        for layout in [PackedRGB16Layout.rgba64, .bgra64, .argb64, .abgr64] {
            let stride = width * 8 + 7
            var frame = [UInt8](repeating: 0, count: stride * (height - 1) + width * 8)
            for offset in frame.indices { frame[offset] = UInt8(truncatingIfNeeded: random.next()) }
            var expected = frame
            func put(_ bytes: inout [UInt8], _ index: Int, _ sample: Int, _ value: UInt16) {
                let at = (index / width) * stride + (index % width) * 8 + sample * 2
                (bytes[at], bytes[at + 1]) = (UInt8(value & 0xFF), UInt8(value >> 8))
            }
            for (index, pixel) in pixels.enumerated() {
                for (channel, sample) in [layout.red, layout.green, layout.blue].enumerated() {
                    put(&frame, index, sample, pixel[channel])
                    put(&expected, index, sample, tight[index][channel])
                }
            }
            frame.withUnsafeMutableBytes {
                kernel.apply(to: $0.baseAddress!, width: width, height: height, stride: stride, layout: layout)
            }
            XCTAssertEqual(zip(frame, expected).filter { $0 != $1 }.count, 0, "\(layout)")
        }
    }

    /// Small and odd frame sizes through every strategy.
    func testFrameSizes() throws {
        var random = PixelRandom(seed: 21)
        let looks = [
            try Look(), try Look(inputLUT: try SharedLUTs.load("colour-science/iridas_cube/Demo.cube")),
            try Look(inputLUT: LUTKernelTests.synthetic, interpolation: .trilinear),
        ]
        for look in looks {
            let kernel = try LUTKernel16(look: look)
            for (width, height) in [(1, 1), (1, 7), (7, 1), (3, 5), (129, 3)] {
                let pixels = Self.randomInputs(width * height, &random)
                let outputs = Self.applied(kernel, pixels, width: width)
                for (input, output) in zip(pixels, outputs) {
                    XCTAssertLessThanOrEqual(
                        difference16(output, look.reference16(input)), Self.contract,
                        "\(kernel.strategy) \(width)×\(height)")
                }
            }
        }
    }

    // MARK: - Helpers

    static func identityLUT(size: Int) throws -> CubeLUT {
        var text = "LUT_3D_SIZE \(size)\n"
        for blue in 0..<size {
            for green in 0..<size {
                for red in 0..<size {
                    text +=
                        "\(Double(red) / Double(size - 1)) \(Double(green) / Double(size - 1)) "
                        + "\(Double(blue) / Double(size - 1))\n"
                }
            }
        }
        return try CubeLUT.parse(data: Array(text.utf8), fileName: "identity.cube")
    }

    /// Random 16-bit inputs, with the extremes mixed in.
    static func randomInputs(_ count: Int, _ random: inout PixelRandom) -> [SIMD3<UInt16>] {
        (0..<count).map { index in
            if index % 97 == 0 { return SIMD3(0, 65535, UInt16.random(in: 0...65535, using: &random)) }
            return SIMD3(
                UInt16.random(in: 0...65535, using: &random), UInt16.random(in: 0...65535, using: &random),
                UInt16.random(in: 0...65535, using: &random))
        }
    }

    /// All 1024 10-bit greys, widened to 16 bits.
    static func greyRamp10() -> [SIMD3<UInt16>] { (0..<1024).map { SIMD3(repeating: widened10($0)) } }

    /// The full 10-bit ramp on each channel in turn, the other two channels random 10-bit codes.
    static func channelRamps10(_ random: inout PixelRandom) -> [SIMD3<UInt16>] {
        (0..<3).flatMap { channel in
            (0..<1024).map { code in
                var pixel = SIMD3(
                    widened10(Int.random(in: 0..<1024, using: &random)),
                    widened10(Int.random(in: 0..<1024, using: &random)),
                    widened10(Int.random(in: 0..<1024, using: &random)))
                pixel[channel] = widened10(code)
                return pixel
            }
        }
    }

    /// Runs `inputs` through the kernel as a tight RGBA64 frame of `width` pixels a row (alpha 0xA55A), and
    /// checks that alpha is kept.
    static func applied(
        _ kernel: LUTKernel16, _ inputs: [SIMD3<UInt16>], width: Int? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) -> [SIMD3<UInt16>] {
        let width = width ?? min(256, max(1, inputs.count))
        let height = (inputs.count + width - 1) / width
        var frame = [UInt16](repeating: 0xA55A, count: width * height * 4)
        for (index, input) in inputs.enumerated() {
            (frame[index * 4], frame[index * 4 + 1], frame[index * 4 + 2]) = (input.x, input.y, input.z)
        }
        frame.withUnsafeMutableBytes {
            kernel.apply(to: $0.baseAddress!, width: width, height: height, stride: width * 8, layout: .rgba64)
        }
        XCTAssertTrue(
            Swift.stride(from: 3, to: frame.count, by: 4).allSatisfy { frame[$0] == 0xA55A },
            "alpha changed", file: file, line: line)
        return inputs.indices.map { SIMD3(frame[$0 * 4], frame[$0 * 4 + 1], frame[$0 * 4 + 2]) }
    }

    /// Runs `inputs` through `kernel` (a new one for `look` by default) and compares each with the reference on
    /// all cores; returns the worst difference and reports the first failures.
    @discardableResult
    func assertMatches(
        _ look: Look, _ inputs: [SIMD3<UInt16>], _ label: String, tolerance: Int = contract,
        kernel: LUTKernel16? = nil, file: StaticString = #filePath, line: UInt = #line
    ) throws -> Int {
        let outputs = try Self.applied(kernel ?? LUTKernel16(look: look), inputs, file: file, line: line)
        let chunks = 16
        // Per chunk: the worst difference and the first failing index (-1: none), computed locally, stored once.
        let results = Mutex([(worst: Int, firstFailure: Int)](repeating: (0, -1), count: chunks))
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            var result = (worst: 0, firstFailure: -1)
            for index in Swift.stride(from: chunk, to: inputs.count, by: chunks) {
                let difference = difference16(outputs[index], look.reference16(inputs[index]))
                result.worst = max(result.worst, difference)
                if difference > tolerance && result.firstFailure < 0 { result.firstFailure = index }
            }
            results.withLock { $0[chunk] = result }
        }
        let perChunk = results.withLock { $0 }
        let worst = perChunk.map(\.worst)
        let firstFailure = perChunk.map(\.firstFailure)
        let overall = worst.max() ?? 0
        let examples = firstFailure.filter { $0 >= 0 }.prefix(3).map {
            "input \(inputs[$0]): kernel \(outputs[$0]), reference \(look.reference16(inputs[$0]))"
        }
        XCTAssertLessThanOrEqual(
            overall, tolerance, "\(label): \(examples.joined(separator: "; "))", file: file,
            line: line)
        return overall
    }
}
