import FilmtoneTestSupport
import Foundation
import XCTest

@testable import FilmtoneLooks

/// `BlendKernel.gather` and `apply(_:to:…)`, the engine's fast path for a new intensity on a kept frame, against
/// `apply(to:…)` reading the tables: byte for byte the same at every intensity, for every pair of sides a look can
/// have (a 3D table, per channel, nothing; a 3D input LUT puts a table on both sides), on a frame large enough to
/// be split into bands across the cores.
final class BlendKernelTests: XCTestCase {
    private static let width = 301
    private static let height = 223  // 67 123 pixels: over `parallelPixelThreshold`, so the bands run in parallel

    /// Random pixels on few (green, blue) rows: a debug build fills a table's rows slowly, and only the used ones.
    private static let frame: [UInt8] = {
        var random = PixelRandom(seed: 12)
        let pixels = random.pixels(width * height, bluePlanes: [0, 77, 255], greenRows: [0, 19, 128, 200, 255])
        return pixels.flatMap { [$0.x, $0.y, $0.z] }
    }()

    func testGatheredLookupsGiveTheTablesResultAtEveryIntensity() throws {
        let threeD = try LUTKernelTests.synthetic
        let otherThreeD = try CubeLUT.load(path: SharedLUTs.look)
        let oneD = try SharedLUTs.load("ocio/iridas_1d.cube")
        let cases: [(name: String, input: CubeLUT?, creative: CubeLUT?, gatheredSides: Int)] = [
            ("creative 3D alone", nil, threeD, 1),
            ("3D input, 3D creative", otherThreeD, threeD, 2),
            ("1D input, 3D creative", oneD, threeD, 1),
            ("3D input, 1D creative (3D on both sides)", threeD, oneD, 2),
            ("3D input alone", threeD, nil, 1),
            ("1D input, 1D creative", oneD, oneD, 0),
        ]
        let count = Self.width * Self.height
        for testCase in cases {
            let kernel = try BlendKernel(
                input: testCase.input, creative: testCase.creative, interpolation: .tetrahedral)
            let lookups = Self.frame.withUnsafeBufferPointer {
                kernel.gather(from: $0.baseAddress!, width: Self.width, height: Self.height)
            }
            XCTAssertEqual(lookups.byteCount, testCase.gatheredSides * count * 6 + 64, testCase.name)
            var results: [[UInt8]] = []
            for intensity in [0, 0.3, 0.5, 0.77, 1] {
                var fromTables = Self.frame
                fromTables.withUnsafeMutableBufferPointer {
                    kernel.apply(to: $0.baseAddress!, width: Self.width, height: Self.height, intensity: intensity)
                }
                var fromLookups = Self.frame
                fromLookups.withUnsafeMutableBufferPointer {
                    kernel.apply(
                        lookups, to: $0.baseAddress!, width: Self.width, height: Self.height, intensity: intensity)
                }
                XCTAssertEqual(Self.differing(fromLookups, fromTables), 0, "\(testCase.name) at \(intensity)")
                results.append(fromLookups)
            }
            XCTAssertGreaterThan(
                Self.differing(results.last!, Self.frame), count / 10, "\(testCase.name): the look changes the frame")
            if testCase.creative != nil {
                XCTAssertGreaterThan(
                    Self.differing(results.first!, results.last!), count / 10,
                    "\(testCase.name): intensity 0 and 1 differ")
            }
        }
    }

    /// Lookups gathered from one frame keep answering for it after the frame's buffer is reused for another.
    func testLookupsAreACopyNotAView() throws {
        let kernel = try BlendKernel(input: nil, creative: try LUTKernelTests.synthetic, interpolation: .trilinear)
        var pixels = Self.frame
        let lookups = pixels.withUnsafeBufferPointer {
            kernel.gather(from: $0.baseAddress!, width: Self.width, height: Self.height)
        }
        let expected = Self.applied(kernel, Self.frame, intensity: 0.6)
        pixels.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        var again = Self.frame
        again.withUnsafeMutableBufferPointer {
            kernel.apply(lookups, to: $0.baseAddress!, width: Self.width, height: Self.height, intensity: 0.6)
        }
        XCTAssertEqual(Self.differing(again, expected), 0)
    }

    private static func applied(_ kernel: BlendKernel, _ frame: [UInt8], intensity: Double) -> [UInt8] {
        var out = frame
        out.withUnsafeMutableBufferPointer {
            kernel.apply(to: $0.baseAddress!, width: width, height: height, intensity: intensity)
        }
        return out
    }

    /// How many bytes differ (an XCTAssertEqual of two large arrays would print both).
    private static func differing(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.count == b.count ? zip(a, b).reduce(0) { $0 + ($1.0 == $1.1 ? 0 : 1) } : max(a.count, b.count)
    }
}
