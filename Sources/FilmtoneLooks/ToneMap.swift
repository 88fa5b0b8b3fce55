import Dispatch
import Foundation
import Synchronization

/// HDR to SDR as a look's input transform: PQ (SMPTE ST 2084) or HLG (ARIB STD-B67) R'G'B' with BT.2020 primaries
/// in, BT.709 SDR R'G'B' out. The math is evaluated once per node of a 3D table (`cubeLUT`); the LUT engine then
/// costs one table lookup a pixel, as for a loaded `.cube` file, and a 16-bit input (`LUTKernel16`) keeps the 10
/// bits of the source up to the curve.
///
/// The steps, per node (non-linear R'G'B' in 0…1):
/// 1. To display light in cd/m²: PQ's EOTF; for HLG the inverse OETF then the OOTF of BT.2100 for a 1000 cd/m²
///    display (system gamma 1.2).
/// 2. Gamut: the BT.2020 → BT.709 matrix in linear light (as ffmpeg's `zscale=p=bt709`).
/// 3. Tone: BT.2390's EETF (the Hermite knee in the PQ domain) maps 0…`sourcePeak` to 0…`targetPeak`, applied to
///    the largest of R, G, B and the three scaled by the same ratio, so hue and saturation are kept (as ffmpeg's
///    `tonemap`, `desat=0`). Colours still outside BT.709 are clipped.
/// 4. Out: `targetPeak` is SDR white (1.0), encoded with BT.709's transfer (as `zscale=t=bt709`).
public struct ToneMap: Equatable, Sendable {
    /// The HDR transfer of the source.
    public enum Transfer: String, Sendable, CaseIterable {
        /// SMPTE ST 2084, absolute: code 1.0 is 10 000 cd/m².
        case pq
        /// ARIB STD-B67, relative: code 1.0 is the display's peak (`hlgDisplayPeak`).
        case hlg
    }

    public var transfer: Transfer
    /// The brightest the source is taken to be (cd/m²), brought to SDR white: `sourcePeak(maxContentLight:
    /// masteringPeak:)` of the stream's HDR10 metadata, 1000 when it states none. Brighter PQ codes are clipped.
    public var sourcePeak: Double = ToneMap.defaultSourcePeak
    /// The SDR white the source's light is mapped to (cd/m²): 100, BT.1886's reference display.
    public var targetPeak: Double = 100
    /// Nodes per side of the table: 65³ (3.3 MiB as `Double`); PQ is perceptually uniform, so the nodes are evenly
    /// spread over what the eye tells apart.
    public var tableSize: Int = 65

    public init(transfer: Transfer) { self.transfer = transfer }

    /// The name `probe` reports for what is applied, e.g. `tone-map: pq→bt709 bt2390`.
    public var summary: String { "tone-map: \(transfer.rawValue)→bt709 bt2390" }

    /// HLG's nominal display peak (cd/m²) for its OOTF (BT.2100 table 5, system gamma 1.2).
    public static let hlgDisplayPeak = 1000.0

    // MARK: - Transfer functions (BT.2100)

    static let m1 = 2610.0 / 16384
    static let m2 = 2523.0 / 4096 * 128
    static let c1 = 3424.0 / 4096
    static let c2 = 2413.0 / 4096 * 32
    static let c3 = 2392.0 / 4096 * 32

    /// PQ's EOTF: code 0…1 to 0…1 of 10 000 cd/m².
    public static func pqToLinear(_ code: Double) -> Double {
        let p = pow(max(code, 0), 1 / m2)
        return pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1)
    }

    /// PQ's inverse EOTF: 0…1 of 10 000 cd/m² to code 0…1.
    public static func linearToPQ(_ linear: Double) -> Double {
        let y = pow(max(linear, 0), m1)
        return pow((c1 + c2 * y) / (1 + c3 * y), m2)
    }

    static let hlgA = 0.17883277
    static let hlgB = 1 - 4 * hlgA
    static let hlgC = 0.5 - hlgA * log(4 * hlgA)

    /// HLG's inverse OETF: code 0…1 to scene light 0…1.
    public static func hlgToScene(_ code: Double) -> Double {
        let e = max(code, 0)
        return e <= 0.5 ? e * e / 3 : (exp((e - hlgC) / hlgA) + hlgB) / 12
    }

    /// BT.709's OETF (what `zscale=t=bt709` writes): linear 0…1 to code 0…1.
    public static func linearToBT709(_ linear: Double) -> Double {
        let l = min(max(linear, 0), 1)
        return l < 0.018 ? 4.5 * l : 1.099 * pow(l, 0.45) - 0.099
    }

    /// BT.2020 to BT.709 primaries in linear light, rows R, G, B (BT.2087's matrix, six decimals: each row sums
    /// to 1 within 1e-6, so white stays white).
    public static let bt2020ToBT709: [SIMD3<Double>] = [
        SIMD3(1.660491, -0.587641, -0.072850),
        SIMD3(-0.124550, 1.132900, -0.008349),
        SIMD3(-0.018151, -0.100579, 1.118730),
    ]

    // MARK: - The curve

    /// BT.2390's EETF on a luminance in cd/m²: the same value below the knee, then a Hermite spline reaching
    /// `targetPeak` at `sourcePeak`; black is kept at 0 (no lift). Monotonic, and continuous with its slope at the
    /// knee.
    public func eetf(_ nits: Double) -> Double { Curve(self).eetf(nits) }

    /// What the EETF needs of the peaks, in the PQ domain, computed once for a table's nodes.
    struct Curve {
        let sourceMax: Double
        let maxLum: Double
        let knee: Double

        init(_ map: ToneMap) {
            sourceMax = ToneMap.linearToPQ(map.sourcePeak / 10000)
            maxLum = ToneMap.linearToPQ(map.targetPeak / 10000) / sourceMax
            knee = 1.5 * maxLum - 0.5
        }

        func eetf(_ nits: Double) -> Double {
            let e1 = min(ToneMap.linearToPQ(max(nits, 0) / 10000) / sourceMax, 1)
            var e2 = e1
            if e1 > knee && knee < 1 {
                let t = (e1 - knee) / (1 - knee)
                let (t2, t3) = (t * t, t * t * t)
                e2 = (2 * t3 - 3 * t2 + 1) * knee + (t3 - 2 * t2 + t) * (1 - knee) + (-2 * t3 + 3 * t2) * maxLum
            }
            return ToneMap.pqToLinear(e2 * sourceMax) * 10000
        }
    }

    /// Display light (cd/m², BT.2020 primaries) of one channel's code, before the OOTF for HLG: PQ's EOTF, or
    /// HLG's inverse OETF (scene light 0…1).
    func channelLight(_ code: Double) -> Double {
        switch transfer {
        case .pq: return Self.pqToLinear(code) * 10000
        case .hlg: return Self.hlgToScene(code)
        }
    }

    /// Display light (cd/m², BT.2020 primaries) from `channelLight` of the three channels: for HLG, BT.2100's OOTF
    /// Fd = Lw · Ys^(γ−1) · E, Ys the scene luminance with BT.2020 weights.
    func displayLight(channels: SIMD3<Double>) -> SIMD3<Double> {
        guard transfer == .hlg else { return channels }
        let ys = 0.2627 * channels.x + 0.6780 * channels.y + 0.0593 * channels.z
        let gain = ys > 0 ? pow(ys, 1.2 - 1) : 0
        return channels * (Self.hlgDisplayPeak * gain)
    }

    /// The SDR BT.709 R'G'B' (0…1) for one HDR R'G'B' code triple (0…1): the steps of the type's summary.
    public func apply(_ code: SIMD3<Double>) -> SIMD3<Double> {
        let channels = SIMD3(channelLight(code.x), channelLight(code.y), channelLight(code.z))
        return sdr(light: displayLight(channels: channels), Curve(self))
    }

    /// Steps 2 to 4 on display light.
    func sdr(light: SIMD3<Double>, _ curve: Curve) -> SIMD3<Double> {
        let m = Self.bt2020ToBT709
        var rgb = SIMD3((m[0] * light).sum(), (m[1] * light).sum(), (m[2] * light).sum())
        rgb = rgb.replacing(with: 0, where: rgb .< 0)
        let peak = rgb.max()
        if peak > 0 { rgb *= curve.eetf(peak) / peak }
        rgb /= targetPeak
        return SIMD3(Self.linearToBT709(rgb.x), Self.linearToBT709(rgb.y), Self.linearToBT709(rgb.z))
    }

    /// The source peak for PQ from HDR10's static metadata: MaxCLL (the content's brightest pixel) when stated,
    /// else the mastering display's peak, else `defaultSourcePeak`; clamped to 400…10 000 cd/m² (below 400 the
    /// knee would sit at SDR white and the curve lose its roll-off; a bogus 0 or 65 535 is common). HLG is relative
    /// to its display and ignores it.
    public static func sourcePeak(maxContentLight: Double?, masteringPeak: Double?) -> Double {
        let stated = [maxContentLight, masteringPeak].compactMap { $0 }.first { $0 > 0 }
        return min(max(stated ?? defaultSourcePeak, 400), 10000)
    }

    /// The source peak taken when nothing is stated: the usual mastering peak.
    public static let defaultSourcePeak = 1000.0

    /// The table of `ToneMap(transfer:)` with `sourcePeak` (PQ only; whole cd/m²) and the default size, built once
    /// per process per transfer and peak (under a lock: a batch, the engine or a storyboard's pipelines share it).
    public static func table(for transfer: Transfer, sourcePeak: Double = defaultSourcePeak) -> CubeLUT {
        var map = ToneMap(transfer: transfer)
        if transfer == .pq { map.sourcePeak = sourcePeak.rounded() }
        let key = "\(transfer.rawValue) \(map.sourcePeak)"
        if let table = tables.withLock({ $0[key] }) { return table }
        let table = map.cubeLUT()  // outside the lock: a few ms
        return tables.withLock { cache in
            if let first = cache[key] { return first }
            cache[key] = table
            return table
        }
    }

    private static let tables = Mutex<[String: CubeLUT]>([:])

    /// The whole transform as a 3D `.cube`-style table over 0…1 R'G'B' (`tableSize`³ nodes, red fastest), for a
    /// look's input slot: `apply` at every node, with each axis's light decoded once (a node's channels take only
    /// `tableSize` values) and the EETF's constants once; blue slices in parallel. ≈ 275 k nodes for 65³.
    public func cubeLUT() -> CubeLUT {
        let n = max(2, tableSize)
        let axis = (0..<n).map { channelLight(Double($0) / Double(n - 1)) }
        let curve = Curve(self)
        let slice = n * n * 3
        let values = [Double](unsafeUninitializedCapacity: n * slice) { buffer, count in
            let base = buffer.baseAddress!
            // Each iteration writes its own blue slice: no two threads touch the same element.
            nonisolated(unsafe) let out = base
            DispatchQueue.concurrentPerform(iterations: n) { b in
                var index = b * slice
                for g in 0..<n {
                    for r in 0..<n {
                        let result = sdr(light: displayLight(channels: SIMD3(axis[r], axis[g], axis[b])), curve)
                        (out + index).initialize(to: result.x)
                        (out + index + 1).initialize(to: result.y)
                        (out + index + 2).initialize(to: result.z)
                        index += 3
                    }
                }
            }
            count = n * slice
        }
        let table = CubeLUT.Table3D(
            size: n, domainMin: SIMD3(repeating: 0), domainMax: SIMD3(repeating: 1), values: values)
        return CubeLUT(title: summary, table1D: nil, table3D: table)
    }
}
