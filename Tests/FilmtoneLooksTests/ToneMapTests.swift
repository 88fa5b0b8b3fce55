import XCTest

@testable import FilmtoneLooks

/// `ToneMap`: the BT.2100 transfer functions against their published values, BT.2390's EETF (identity below the
/// knee, monotonic, the source peak to SDR white), the whole transform on known colours, and the generated table
/// through the 16-bit kernel against the math.
final class ToneMapTests: XCTestCase {
    // MARK: - Transfer functions

    func testPQMatchesBT2100() {
        // BT.2100 / BT.2408: 100 cd/m² is PQ 0.5081, 1000 cd/m² is 0.7518, 10 000 is 1.
        XCTAssertEqual(ToneMap.linearToPQ(100.0 / 10000), 0.5081, accuracy: 0.0005)
        XCTAssertEqual(ToneMap.linearToPQ(1000.0 / 10000), 0.7518, accuracy: 0.0005)
        XCTAssertEqual(ToneMap.pqToLinear(1), 1, accuracy: 1e-9)
        XCTAssertEqual(ToneMap.pqToLinear(0), 0, accuracy: 1e-12)
        // Code 0 is 7e-7 of 10 000 cd/m², not 0 (PQ's c1^m2): the round trip is checked above it.
        for code in stride(from: 0.05, through: 1.0, by: 0.05) {
            XCTAssertEqual(ToneMap.linearToPQ(ToneMap.pqToLinear(code)), code, accuracy: 1e-9, "PQ round trip \(code)")
        }
    }

    func testHLGMatchesBT2100() {
        // The OETF's two pieces meet at E' = 0.5 (scene light 1/12); 1.0 is scene light 1.
        XCTAssertEqual(ToneMap.hlgToScene(0.5), 1.0 / 12, accuracy: 1e-9)
        XCTAssertEqual(ToneMap.hlgToScene(1), 1, accuracy: 1e-6)
        XCTAssertEqual(ToneMap.hlgToScene(0.25), 0.0625 / 3, accuracy: 1e-12)
        XCTAssertLessThan(ToneMap.hlgToScene(0.5), ToneMap.hlgToScene(0.5001))
    }

    func testBT709OETF() {
        XCTAssertEqual(ToneMap.linearToBT709(1), 1, accuracy: 1e-9)
        XCTAssertEqual(ToneMap.linearToBT709(0.01), 0.045, accuracy: 1e-12)
        XCTAssertEqual(ToneMap.linearToBT709(0.18), 0.409, accuracy: 0.001)
        XCTAssertEqual(ToneMap.linearToBT709(2), 1, "clipped")
    }

    func testGamutMatrixKeepsWhiteAndSendsBT2020GreenOutOfBT709() {
        let m = ToneMap.bt2020ToBT709
        for row in m { XCTAssertEqual(row.sum(), 1, accuracy: 2e-6, "white stays white") }
        // Pure BT.2020 green is outside BT.709: its red and blue come out negative.
        XCTAssertLessThan(m[0].y, 0)
        XCTAssertLessThan(m[2].y, 0)
    }

    // MARK: - BT.2390's EETF

    func testEETFIsIdentityBelowTheKneeAndReachesSDRWhiteAtThePeak() {
        let map = ToneMap(transfer: .pq)
        for nits in [0.0, 0.5, 5, 20] {
            XCTAssertEqual(map.eetf(nits), nits, accuracy: nits * 1e-6 + 1e-9, "below the knee: \(nits)")
        }
        XCTAssertEqual(map.eetf(1000), 100, accuracy: 1e-6, "the source peak is SDR white")
        XCTAssertEqual(map.eetf(4000), 100, accuracy: 1e-6, "above the source peak: clipped")
        // Compressed above the knee, and monotonic all the way.
        XCTAssertLessThan(map.eetf(200), 100)
        XCTAssertGreaterThan(map.eetf(200), map.eetf(100))
        var previous = -1.0
        for step in 0...2000 {
            let value = map.eetf(Double(step) * 0.6)
            XCTAssertGreaterThanOrEqual(value, previous, "monotonic at \(Double(step) * 0.6) cd/m²")
            previous = value
        }
    }

    func testEETFIsContinuousAtTheKnee() {
        let map = ToneMap(transfer: .pq)
        // The knee in the PQ domain (BT.2390: KS = 1.5 · maxLum − 0.5), in cd/m².
        let sourceMax = ToneMap.linearToPQ(0.1)
        let ks = 1.5 * ToneMap.linearToPQ(0.01) / sourceMax - 0.5
        let knee = ToneMap.pqToLinear(ks * sourceMax) * 10000
        XCTAssertEqual(map.eetf(knee * 0.999), knee * 0.999, accuracy: 0.01)
        XCTAssertEqual(map.eetf(knee * 1.001), knee * 1.001, accuracy: 0.05, "no step at the knee")
    }

    // MARK: - The whole transform

    func testKnownColours() {
        let pq = ToneMap(transfer: .pq)
        XCTAssertEqual(pq.apply(SIMD3(repeating: 0)), SIMD3(repeating: 0))
        // 1000 cd/m² white (PQ 0.7518) is SDR white; so is anything brighter.
        let white = pq.apply(SIMD3(repeating: ToneMap.linearToPQ(0.1)))
        for channel in 0..<3 { XCTAssertEqual(white[channel], 1, accuracy: 1e-5) }
        for channel in 0..<3 { XCTAssertEqual(pq.apply(SIMD3(repeating: 1))[channel], 1, accuracy: 1e-5) }
        // A dim grey below the knee (5 cd/m²) keeps its light: 5 % of SDR white, BT.709-encoded.
        let grey = pq.apply(SIMD3(repeating: ToneMap.linearToPQ(5.0 / 10000)))
        for channel in 0..<3 { XCTAssertEqual(grey[channel], ToneMap.linearToBT709(0.05), accuracy: 1e-5) }
        // Ratios are kept: a bright red stays red with no green or blue added.
        let red = pq.apply(SIMD3(ToneMap.linearToPQ(0.05), 0, 0))
        XCTAssertGreaterThan(red.x, 0.9)
        XCTAssertEqual(red.y, 0)
        XCTAssertEqual(red.z, 0)

        // HLG: 1.0 is the 1000 cd/m² display peak, so SDR white; mid grey stays neutral.
        let hlg = ToneMap(transfer: .hlg)
        let hlgWhite = hlg.apply(SIMD3(repeating: 1))
        for channel in 0..<3 { XCTAssertEqual(hlgWhite[channel], 1, accuracy: 1e-5) }
        let hlgGrey = hlg.apply(SIMD3(repeating: 0.5))
        XCTAssertEqual(hlgGrey.x, hlgGrey.y, accuracy: 1e-5)
        XCTAssertEqual(hlgGrey.y, hlgGrey.z, accuracy: 1e-5)
        XCTAssertGreaterThan(hlgGrey.x, 0.2)
        XCTAssertLessThan(hlgGrey.x, 0.8)
    }

    /// MaxCLL first, then the mastering peak, then 1000; clamped to 400…10 000.
    func testTheSourcePeakComesFromTheMetadata() {
        XCTAssertEqual(ToneMap.sourcePeak(maxContentLight: nil, masteringPeak: nil), 1000)
        XCTAssertEqual(ToneMap.sourcePeak(maxContentLight: 4000, masteringPeak: 1000), 4000)
        XCTAssertEqual(ToneMap.sourcePeak(maxContentLight: nil, masteringPeak: 2000), 2000)
        XCTAssertEqual(ToneMap.sourcePeak(maxContentLight: 0, masteringPeak: 2000), 2000, "MaxCLL 0: unknown")
        XCTAssertEqual(ToneMap.sourcePeak(maxContentLight: 50, masteringPeak: nil), 400)
        XCTAssertEqual(ToneMap.sourcePeak(maxContentLight: 65535, masteringPeak: nil), 10000)
        // A brighter source peak rolls off later: 1500 cd/m² is white at 1000, below white at 4000.
        var bright = ToneMap(transfer: .pq)
        bright.sourcePeak = 4000
        XCTAssertEqual(ToneMap(transfer: .pq).eetf(1500), 100, accuracy: 1e-6)
        XCTAssertLessThan(bright.eetf(1500), 99)
        XCTAssertEqual(bright.eetf(4000), 100, accuracy: 1e-6)
        // One table per transfer and peak, shared; HLG ignores the peak.
        XCTAssertEqual(ToneMap.table(for: .pq, sourcePeak: 4000), ToneMap.table(for: .pq, sourcePeak: 4000))
        XCTAssertNotEqual(ToneMap.table(for: .pq, sourcePeak: 4000), ToneMap.table(for: .pq))
        XCTAssertEqual(ToneMap.table(for: .hlg, sourcePeak: 4000), ToneMap.table(for: .hlg))
    }

    func testSummaries() {
        XCTAssertEqual(ToneMap(transfer: .pq).summary, "tone-map: pq→bt709 bt2390")
        XCTAssertEqual(ToneMap(transfer: .hlg).summary, "tone-map: hlg→bt709 bt2390")
    }

    // MARK: - The table

    func testTableNodesAreTheMath() throws {
        var map = ToneMap(transfer: .pq)
        map.tableSize = 9
        let lut = map.cubeLUT()
        let table = try XCTUnwrap(lut.table3D)
        XCTAssertNil(lut.table1D)
        XCTAssertEqual(table.size, 9)
        XCTAssertEqual(table.values.count, 9 * 9 * 9 * 3)
        for (r, g, b) in [(0, 0, 0), (8, 8, 8), (3, 5, 7), (8, 0, 2)] {
            let expected = map.apply(SIMD3(Double(r), Double(g), Double(b)) / 8)
            XCTAssertEqual(table.node(r, g, b), expected, "node \(r),\(g),\(b) (red fastest)")
        }
    }

    /// The shipped table (65³) through the 16-bit kernel, as `ftlut` runs it on a tone-mapped frame, against the
    /// math itself, for a grid of 10-bit inputs: a fifth of an 8-bit code on average.
    func testKernel16OfTheTableFollowsTheMath() throws {
        for transfer in ToneMap.Transfer.allCases {
            let map = ToneMap(transfer: transfer)
            let kernel = try LUTKernel16(look: try Look(inputLUT: ToneMap.table(for: transfer)))
            var pixels: [UInt16] = []
            var expected: [SIMD3<Double>] = []
            for r in stride(from: 0, through: 1023, by: 93) {
                for g in stride(from: 0, through: 1023, by: 101) {
                    for b in stride(from: 0, through: 1023, by: 127) {
                        // A 10-bit code widened to 16 bits as videoconvert does (the top bits repeated below).
                        let wide = [r, g, b].map { UInt16($0 * 64 + $0 / 16) }
                        pixels += wide + [65535]
                        expected.append(map.apply(SIMD3(wide.map { Double($0) / 65535 })))
                    }
                }
            }
            let count = expected.count
            pixels.withUnsafeMutableBytes { raw in
                kernel.apply(
                    to: raw.baseAddress!, width: count, height: 1, stride: count * 8, layout: .rgba64)
            }
            var (worst, total) = (0.0, 0.0)
            for (index, want) in expected.enumerated() {
                for channel in 0..<3 {
                    let difference = abs(Double(pixels[index * 4 + channel]) / 65535 - want[channel])
                    worst = max(worst, difference)
                    total += difference
                }
                XCTAssertEqual(pixels[index * 4 + 3], 65535, "alpha untouched")
            }
            // Measured: mean 0.05 (PQ) and 0.04 (HLG) of an 8-bit code; worst 4.2 and 7.1 codes, where the curve
            // bends sharply between two nodes (a colour clipped into BT.709, HLG's OOTF near black).
            XCTAssertLessThan(total / Double(3 * count), 0.2 / 255, "\(transfer): mean difference from the math")
            XCTAssertLessThan(worst, 8.0 / 255, "\(transfer): worst difference from the math")
        }
    }
}
