import Foundation

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
    /// The brightest the source is taken to be (cd/m²): 1000, the usual mastering peak when the stream carries no
    /// metadata. Brighter PQ codes are clipped.
    public var sourcePeak: Double = 1000
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
    public func eetf(_ nits: Double) -> Double {
        let sourceMax = Self.linearToPQ(sourcePeak / 10000)
        let e1 = min(Self.linearToPQ(max(nits, 0) / 10000) / sourceMax, 1)
        let maxLum = Self.linearToPQ(targetPeak / 10000) / sourceMax
        let ks = 1.5 * maxLum - 0.5
        var e2 = e1
        if e1 > ks && ks < 1 {
            let t = (e1 - ks) / (1 - ks)
            let (t2, t3) = (t * t, t * t * t)
            e2 =
                (2 * t3 - 3 * t2 + 1) * ks + (t3 - 2 * t2 + t) * (1 - ks) + (-2 * t3 + 3 * t2) * maxLum
        }
        return Self.pqToLinear(e2 * sourceMax) * 10000
    }

    /// Display light (cd/m², BT.2020 primaries) of one R'G'B' code triple.
    func displayLight(_ code: SIMD3<Double>) -> SIMD3<Double> {
        switch transfer {
        case .pq:
            return SIMD3(Self.pqToLinear(code.x), Self.pqToLinear(code.y), Self.pqToLinear(code.z)) * 10000
        case .hlg:
            let scene = SIMD3(Self.hlgToScene(code.x), Self.hlgToScene(code.y), Self.hlgToScene(code.z))
            // BT.2100's OOTF: Fd = Lw · Ys^(γ−1) · E, Ys the scene luminance with BT.2020 weights.
            let ys = 0.2627 * scene.x + 0.6780 * scene.y + 0.0593 * scene.z
            let gain = ys > 0 ? pow(ys, 1.2 - 1) : 0
            return scene * (Self.hlgDisplayPeak * gain)
        }
    }

    /// The SDR BT.709 R'G'B' (0…1) for one HDR R'G'B' code triple (0…1): the steps of the type's summary.
    public func apply(_ code: SIMD3<Double>) -> SIMD3<Double> {
        let light = displayLight(code)
        let m = Self.bt2020ToBT709
        var rgb = SIMD3(
            (m[0] * light).sum(), (m[1] * light).sum(), (m[2] * light).sum())
        rgb = rgb.replacing(with: 0, where: rgb .< 0)
        let peak = rgb.max()
        if peak > 0 { rgb *= eetf(peak) / peak }
        rgb /= targetPeak
        return SIMD3(Self.linearToBT709(rgb.x), Self.linearToBT709(rgb.y), Self.linearToBT709(rgb.z))
    }

    /// The table of `ToneMap(transfer:)` with the default peaks and size, built once per process on first use
    /// (a Swift global is initialised once, thread-safely): a batch, the engine or a storyboard's pipelines share it.
    public static func table(for transfer: Transfer) -> CubeLUT {
        switch transfer {
        case .pq: return pqTable
        case .hlg: return hlgTable
        }
    }

    private static let pqTable = ToneMap(transfer: .pq).cubeLUT()
    private static let hlgTable = ToneMap(transfer: .hlg).cubeLUT()

    /// The whole transform as a 3D `.cube`-style table over 0…1 R'G'B' (`tableSize`³ nodes, red fastest), for a
    /// look's input slot. ≈ 275 k evaluations of `apply` for 65³, a few tens of ms, once per pipeline.
    public func cubeLUT() -> CubeLUT {
        let n = max(2, tableSize)
        var values = [Double](repeating: 0, count: n * n * n * 3)
        let scale = 1 / Double(n - 1)
        values.withUnsafeMutableBufferPointer { out in
            var index = 0
            for b in 0..<n {
                for g in 0..<n {
                    for r in 0..<n {
                        let result = apply(SIMD3(Double(r), Double(g), Double(b)) * scale)
                        out[index] = result.x
                        out[index + 1] = result.y
                        out[index + 2] = result.z
                        index += 3
                    }
                }
            }
        }
        let table = CubeLUT.Table3D(
            size: n, domainMin: SIMD3(repeating: 0), domainMax: SIMD3(repeating: 1), values: values)
        return CubeLUT(title: summary, table1D: nil, table3D: table)
    }
}
