import FilmtoneTestSupport
import Foundation
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneLooks

/// The reference evaluation against figures nobody on this project computed: colour-science's interpolation goldens
/// and the DOMAIN vectors in `Tests/Resources/luts/reference_values`, plus properties every correct LUT evaluator has
/// (exact grid nodes, identity, axis order, clamping) and the look's slot order and blend.
final class LUTConformanceTests: XCTestCase {
    // MARK: - Reference vectors

    /// colour-science's trilinear and tetrahedral goldens on `Colour_Correct.cube` (16 random inputs), 1e-6.
    func testColourCorrectMatchesTrilinearAndTetrahedralGoldens() throws {
        let records = try SharedLUTs.csv("reference_values/Colour_Correct_interp_vectors.csv")
        XCTAssertEqual(records.count, 16)
        for name in [
            "colour-science/iridas_cube/Colour_Correct.cube", "colour-science/resolve_cube/Colour_Correct.cube",
        ] {
            let lut = try SharedLUTs.load(name)
            var largestMethodDifference = 0.0
            for record in records {
                let input = try record.rgb("in_")
                let trilinear = lut.apply(input, interpolation: .trilinear)
                let tetrahedral = lut.apply(input, interpolation: .tetrahedral)
                assertClose(trilinear, try record.rgb("trilinear_"), tolerance: 1e-6, "trilinear \(input) \(name)")
                assertClose(
                    tetrahedral, try record.rgb("tetrahedral_"), tolerance: 1e-6, "tetrahedral \(input) \(name)")
                largestMethodDifference = max(largestMethodDifference, maxDifference(trilinear, tetrahedral))
            }
            // The README's figure: the two methods really differ on this LUT (so the goldens tell them apart).
            XCTAssertEqual(largestMethodDifference, 0.041, accuracy: 0.001)
        }
    }

    /// DOMAIN honoured: `(x - min)/(max - min)` before the lookup. The expected columns are OCIO's trilinear output,
    /// printed with 5 decimals or fewer, so each value is checked to half a unit in its last printed decimal (5e-6
    /// for `0.06272`; 5e-5 for the `Colour_Correct` row, printed with 4). Tetrahedral gives the same figures except
    /// on `Colour_Correct.cube`, whose table is not separable (its tetrahedral goldens are the test above). The
    /// `ffmpeg_5.1` columns, which ignore DOMAIN_MIN, must not match where they differ from the expected ones.
    func testDomainVectors() throws {
        let records = try SharedLUTs.csv("reference_values/domain_vectors.csv")
        XCTAssertEqual(records.count, 7)
        for record in records {
            let name = try XCTUnwrap(record["lut"])
            let lut = try SharedLUTs.load(name)
            let input = try record.rgb("in_")
            let expected = try record.rgb("expected_")
            let tolerance = record.printedPrecision("expected_") + 1e-12
            let ffmpeg = try record.rgb("ffmpeg_5.1_")
            let methods: [Interpolation] =
                name.hasSuffix("Colour_Correct.cube") ? [.trilinear] : [.trilinear, .tetrahedral]
            for method in methods {
                let actual = lut.apply(input, interpolation: method)
                assertClose(actual, expected, tolerance: tolerance, "\(method) \(name) \(input)")
                if maxDifference(ffmpeg, expected) > 1e-3 {
                    XCTAssertGreaterThan(maxDifference(actual, ffmpeg), 1e-3, "\(name): matches FFmpeg's DOMAIN bug")
                }
            }
        }
    }

    /// The linear tables of the DOMAIN vectors, where the exact answers are known: checked far tighter than the
    /// printed precision allows above.
    func testDomainOnLinearTablesIsExact() throws {
        // ocio/iridas_3d.cube: DOMAIN_MIN 0 1 0, DOMAIN_MAX 2 2 1, nodes at twice the unit cube. Green 0.5 is
        // below its domain (1…2) and clamps to 0.
        let ocio = try SharedLUTs.load("ocio/iridas_3d.cube")
        for method in Interpolation.allCases where method != .nearest {
            assertClose(ocio.apply([0.25, 0.5, 0.75], interpolation: method), [0.25, 0, 1.5], tolerance: 1e-12)
            assertClose(ocio.apply([1, 1, 1], interpolation: method), [1, 0, 2], tolerance: 1e-12)
        }
    }

    // MARK: - Properties

    /// Inputs on grid nodes (DOMAIN included) return the node values exactly, with every method, for every 3D and
    /// 1D reference table.
    func testGridNodesReturnNodeValuesExactly() throws {
        let files = try SharedLUTs.allCubeFiles()
        XCTAssertFalse(files.isEmpty)
        var checked3D = 0
        for name in files {
            let lut = try SharedLUTs.load(name)
            if let table = lut.table3D {
                func input(_ index: Int, _ channel: Int) -> Double {
                    table.domainMin[channel]
                        + (table.domainMax[channel] - table.domainMin[channel]) * Double(index) / Double(table.size - 1)
                }
                for b in 0..<table.size {
                    for g in 0..<table.size {
                        for r in 0..<table.size {
                            let rgb = SIMD3(input(r, 0), input(g, 1), input(b, 2))
                            for method in Interpolation.allCases {
                                let value = table.apply(rgb, interpolation: method)
                                XCTAssertEqual(value, table.node(r, g, b), "\(name) node \(r),\(g),\(b) \(method)")
                            }
                        }
                    }
                }
                checked3D += 1
            }
            if let table = lut.table1D {
                for index in 0..<table.size {
                    let rgb =
                        table.domainMin + (table.domainMax - table.domainMin) * Double(index) / Double(table.size - 1)
                    XCTAssertEqual(table.apply(rgb), table.entry(index), "\(name) entry \(index)")
                }
            }
        }
        XCTAssertGreaterThanOrEqual(checked3D, 10)
    }

    /// `RGB_1_0.5_0.25.cube` scales red by 1, green by 0.5, blue by 0.25: a reader that swaps the axes (blue
    /// fastest) gives other figures.
    func testChannelGainsCatchAxisOrder() throws {
        for name in [
            "colour-science/iridas_cube/RGB_1_0.5_0.25.cube", "colour-science/resolve_cube/RGB_1_0.5_0.25.cube",
        ] {
            let lut = try SharedLUTs.load(name)
            XCTAssertEqual(lut.table3D?.node(3, 0, 0), [1, 0, 0])
            XCTAssertEqual(lut.table3D?.node(0, 3, 0), [0, 0.5, 0])
            for method in Interpolation.allCases {
                XCTAssertEqual(lut.apply([1, 0, 0], interpolation: method), [1, 0, 0])
                XCTAssertEqual(lut.apply([0, 1, 0], interpolation: method), [0, 0.5, 0])
                XCTAssertEqual(lut.apply([0, 0, 1], interpolation: method), [0, 0, 0.25])
            }
            for input in Self.samples {
                let expected = SIMD3(input.x, input.y * 0.5, input.z * 0.25)
                assertClose(lut.apply(input, interpolation: .tetrahedral), expected, tolerance: 1e-6, "\(input)")
                assertClose(lut.apply(input, interpolation: .trilinear), expected, tolerance: 1e-6, "\(input)")
            }
        }
    }

    /// `Unit.cube` is the identity (to its 6 printed decimals) with both blending methods.
    func testIdentityReturnsInput() throws {
        let lut = try SharedLUTs.load("colour-science/iridas_cube/Unit.cube")
        for input in Self.samples {
            assertClose(lut.apply(input, interpolation: .tetrahedral), input, tolerance: 1e-6, "\(input)")
            assertClose(lut.apply(input, interpolation: .trilinear), input, tolerance: 1e-6, "\(input)")
        }
    }

    /// Inputs outside the domain take the edge values; NaN counts as the bottom of the domain and never traps.
    func testInputsOutsideTheDomainAreClamped() throws {
        let lut = try SharedLUTs.load("colour-science/iridas_cube/Colour_Correct.cube")
        for method in Interpolation.allCases {
            XCTAssertEqual(
                lut.apply([-0.5, 1.7, 0.3], interpolation: method), lut.apply([0, 1, 0.3], interpolation: method))
            XCTAssertEqual(
                lut.apply([-.infinity, .infinity, 2], interpolation: method),
                lut.apply([0, 1, 1], interpolation: method))
            XCTAssertEqual(
                lut.apply([.nan, 0.5, 0.5], interpolation: method), lut.apply([0, 0.5, 0.5], interpolation: method))
        }
        // Per-channel DOMAIN: eotf_sRGB_3D.cube's red domain is -0.1…1.5.
        let srgb = try SharedLUTs.load("colour-science/iridas_cube/eotf_sRGB_3D.cube")
        XCTAssertEqual(srgb.apply([-3, -0.15, -0.2]), srgb.table3D?.node(0, 0, 0))
        XCTAssertEqual(srgb.apply([9, 2, 3]), srgb.table3D?.node(7, 7, 7))
    }

    /// 1D tables: per-channel DOMAIN, linear between entries, clamped outside.
    func testOneDimensionalTables() throws {
        // Demo.cube: DOMAIN_MAX 1 2 3, entries (0,0,0), (0.5,1,1.5), (1,1,1).
        let demo = try SharedLUTs.load("colour-science/iridas_cube/Demo.cube")
        XCTAssertEqual(demo.apply([0.5, 1, 1.5]), [0.5, 1, 1.5])
        assertClose(demo.apply([0.25, 0.5, 0.75]), [0.25, 0.5, 0.75], tolerance: 1e-15)
        assertClose(demo.apply([0.75, 1.5, 2.25]), [0.75, 1, 1.25], tolerance: 1e-15)
        XCTAssertEqual(demo.apply([-1, 5, 3]), [0, 1, 1])
        // ocio/iridas_1d.cube: DOMAIN_MIN -2 1 0, DOMAIN_MAX 2 2 1, 5 entries; the middle one is (0.4, 0.5, 0.6).
        let ocio = try SharedLUTs.load("ocio/iridas_1d.cube")
        XCTAssertEqual(ocio.apply([0, 1.5, 0.5]), [0.4, 0.5, 0.6])
        assertClose(ocio.apply([-1.5, 1.125, 0.125]), [-0.5, -0.95, -1.4], tolerance: 1e-12)
    }

    /// Resolve 1D shaper + 3D: the shaper (over its own range) runs first, then the 3D table over its range.
    func testShaperRunsBeforeTheCube() throws {
        // ocio/resolve_1d3d.cube: shaper over -1…3 (6 entries), cube over 0…4 (3 nodes: 0, 2, 4). Input 1.4 is
        // shaper entry 3, (2.1, 2.0, 2.0); in the cube that is r = 1.05 nodes, g = b = node 1: 95% of node (1,1,1),
        // (0.5, 0.5, 0.5), and 5% of node (2,1,1), (0, 0.5, 0.5).
        let lut = try SharedLUTs.load("ocio/resolve_1d3d.cube")
        XCTAssertEqual(lut.kind, .shaperAnd3D)
        for method in [Interpolation.trilinear, .tetrahedral] {
            assertClose(lut.apply([1.4, 1.4, 1.4], interpolation: method), [0.475, 0.5, 0.5], tolerance: 1e-12)
        }
        // Input 3 is the shaper's last entry, (0, 0, 0): the cube's first node, (1.1, 1.1, 1.1).
        XCTAssertEqual(lut.apply([3, 3, 3]), [1.1, 1.1, 1.1])
        // Same as applying the two tables by hand.
        let shaper = try XCTUnwrap(lut.table1D)
        let cube = try XCTUnwrap(lut.table3D)
        for input in Self.samples.map({ $0 * 4 - 1 }) {
            XCTAssertEqual(lut.apply(input), cube.apply(shaper.apply(input)))
        }
    }

    /// The Resolve `eotf_sRGB_3D.cube` declares its range with LUT_1D_INPUT_RANGE -1 3 on a 3D-only table; taken
    /// as the cube's domain, its nodes are the sRGB EOTF at -1…3 (as the file's values show).
    func testInputRangeOfAThreeDimensionalOnlyResolveFile() throws {
        let lut = try SharedLUTs.load("colour-science/resolve_cube/eotf_sRGB_3D.cube")
        XCTAssertEqual(lut.table3D?.domainMin, [-1, -1, -1])
        XCTAssertEqual(lut.table3D?.domainMax, [3, 3, 3])
        func eotf(_ v: Double) -> Double { v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }
        for k in 0..<8 {
            let v = -1 + 4 * Double(k) / 7
            assertClose(lut.apply([v, v, v]), [eotf(v), eotf(v), eotf(v)], tolerance: 1e-6, "k=\(k)")
        }
    }

    func testInterpolationCLINames() {
        XCTAssertEqual(Interpolation.allCases.map(\.rawValue), ["tetrahedral", "trilinear", "nearest"])
        XCTAssertEqual(Interpolation(rawValue: "trilinear"), .trilinear)
        XCTAssertNil(Interpolation(rawValue: "cubic"))
        XCTAssertEqual(Interpolation.default, .tetrahedral)
    }

    func testNearestPicksTheClosestNode() throws {
        let lut = try SharedLUTs.load("colour-science/iridas_cube/Colour_Correct.cube")
        let table = try XCTUnwrap(lut.table3D)
        // Nodes at 0, 1/3, 2/3, 1: 0.16 → 0, 0.17 → 1, 0.9 → 3.
        XCTAssertEqual(lut.apply([0.16, 0.17, 0.9], interpolation: .nearest), table.node(0, 1, 3))
    }

    // MARK: - Looks

    func testLookBlendsTheCreativeLUTOverTheInputLUT() throws {
        let input = try SharedLUTs.load("colour-science/iridas_cube/Colour_Correct.cube")
        let creative = try SharedLUTs.load("colour-science/iridas_cube/RGB_1_0.5_0.25.cube")
        for method in Interpolation.allCases {
            let off = try Look(inputLUT: input, creativeLUT: creative, intensity: 0, interpolation: method)
            let full = try Look(inputLUT: input, creativeLUT: creative, intensity: 1, interpolation: method)
            let half = try Look(inputLUT: input, creativeLUT: creative, intensity: 0.5, interpolation: method)
            for rgb in Self.samples {
                let x = input.apply(rgb, interpolation: method)
                let c = creative.apply(x, interpolation: method)
                XCTAssertEqual(off.apply(rgb), x)
                XCTAssertEqual(full.apply(rgb), c)
                assertClose(half.apply(rgb), (x + c) / 2, tolerance: 1e-15)
            }
        }
        // Order matters: input slot first. The two orders give different results on this pair.
        let forward = try Look(inputLUT: input, creativeLUT: creative)
        let backward = try Look(inputLUT: creative, creativeLUT: input)
        XCTAssertGreaterThan(maxDifference(forward.apply([0.9, 0.2, 0.4]), backward.apply([0.9, 0.2, 0.4])), 0.01)
    }

    func testEmptySlotsAreTheIdentity() throws {
        let lut = try SharedLUTs.load("colour-science/iridas_cube/Colour_Correct.cube")
        let empty = try Look(intensity: 0.7)
        let inputOnly = try Look(inputLUT: lut, intensity: 0.3)
        let creativeOnly = try Look(creativeLUT: lut, intensity: 0.25)
        for rgb in Self.samples {
            XCTAssertEqual(empty.apply(rgb), rgb)
            XCTAssertEqual(inputOnly.apply(rgb), lut.apply(rgb))
            assertClose(creativeOnly.apply(rgb), rgb + (lut.apply(rgb) - rgb) * 0.25, tolerance: 1e-15)
        }
    }

    func testLookRefusesIntensityOutsideZeroToOne() {
        for intensity in [-0.01, 1.01, .nan, .infinity] {
            XCTAssertThrowsError(try Look(intensity: intensity)) { error in
                XCTAssertEqual((error as? FilmtoneError)?.code, .invalidArgument, "\(intensity)")
            }
        }
    }

    // MARK: - Helpers

    /// Deterministic inputs spread over the unit cube, including its corners.
    static let samples: [SIMD3<Double>] = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        var out: [SIMD3<Double>] = [[0, 0, 0], [1, 1, 1], [1, 0, 0], [0, 1, 1], [0.5, 0.5, 0.5]]
        for _ in 0..<200 { out.append(SIMD3(next(), next(), next())) }
        return out
    }()
}
