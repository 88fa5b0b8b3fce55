import Dispatch
import Foundation
import Synchronization

/// A look whose intensity is chosen per call, for the engine's warm previews: the intensity never rebuilds a
/// table. `LUTKernel` bakes the intensity into its table (`round(x·(1 − i) + c·i)`, `x` the input LUT's result and
/// `c` the creative LUT's, both unclamped); mixing two clamped 8-bit tables instead would be wrong wherever a LUT
/// leaves 0…1 (a highlight pushed past white still pulls a blend up). So this kernel keeps both results
/// *unclamped*, as 16-bit fixed point (1/8192 of the unit, −4…4: 1/32 of a code value), and blends them per pixel
/// with the same formula, clamps and rounds like `ColourTableBuilder.packRow`: at most 1 code value from
/// `LUTKernel` at the same intensity (a blend landing within 1/64 of a code of a rounding boundary may round the
/// other way).
///
/// Each side is what it needs: nothing (no input LUT: `x` is the pixel), 768 floats (no 3D table: per channel,
/// from the reference on the grey ramp), or an `UnclampedTable` (a 3D table: 96 MiB, filled by rows on demand).
public final class BlendKernel: Sendable {
    package enum Side: Sendable {
        case identity
        case perChannel([Float])
        case table(UnclampedTable)
    }

    let base: Side
    let full: Side?

    /// `input` and `creative`: the two slots (nil: empty). `INTERNAL` when a table cannot be allocated.
    public init(input: CubeLUT?, creative: CubeLUT?, interpolation: Interpolation) throws {
        let baseLook = try Look(inputLUT: input, intensity: 0, interpolation: interpolation)
        base = try Self.side(baseLook)
        full = try creative.map {
            try Self.side(Look(inputLUT: input, creativeLUT: $0, intensity: 1, interpolation: interpolation))
        }
    }

    private static func side(_ look: Look) throws -> Side {
        let creative = look.intensity > 0 ? look.creativeLUT : nil
        if look.inputLUT == nil && creative == nil { return .identity }
        if look.inputLUT?.table3D == nil && creative?.table3D == nil {
            var values = [Float](repeating: 0, count: 768)
            for input in 0..<256 {
                let out = look.apply(SIMD3(repeating: Double(input) / 255))
                for channel in 0..<3 { values[channel * 256 + input] = Float(out[channel]) }
            }
            return .perChannel(values)
        }
        return .table(try UnclampedTable(look: look))
    }

    /// The bytes its tables hold (an `UnclampedTable` counts in full, filled or not).
    public var byteCount: Int {
        func bytes(_ side: Side?) -> Int {
            switch side {
            case .table(let table)?: return table.byteCount
            case .perChannel?: return 768 * 4
            default: return 0
            }
        }
        return bytes(base) + bytes(full) + 256
    }

    /// Applies the look at `intensity` (0…1) to packed 8-bit RGB (3 bytes a pixel, rows `width · 3` apart).
    public func apply(to pixels: UnsafeMutablePointer<UInt8>, width: Int, height: Int, intensity: Double) {
        guard width > 0, height > 0 else { return }
        let count = width * height
        for side in [base, full] {
            if case .table(let table)? = side { table.fillRows(usedBy: pixels, count: count) }
        }
        let weight = Float(full == nil ? 0 : min(1, max(0, intensity)))
        let shared = SendablePointer(pixels)
        let (base, full) = (self.base, self.full ?? .identity)
        LUTKernel.forEachBand(height: height, pixels: count) { rows in
            for pixel in rows.lowerBound * width..<rows.upperBound * width {
                let p = shared.pointer + pixel * 3
                let index = Int(p[0]) | Int(p[1]) << 8 | Int(p[2]) << 16
                let x = Self.value(base, p, index)
                let v = weight == 0 ? x : x * (1 - weight) + Self.value(full, p, index) * weight
                var scaled = v * 255
                scaled.replace(with: 0, where: scaled .< 0)
                scaled.replace(with: 255, where: scaled .> 255)
                let codes = (scaled + 0.5).rounded(.down)
                p[0] = UInt8(codes.x)
                p[1] = UInt8(codes.y)
                p[2] = UInt8(codes.z)
            }
        }
    }

    @inline(__always)
    private static func value(_ side: Side, _ p: UnsafeMutablePointer<UInt8>, _ index: Int) -> SIMD3<Float> {
        switch side {
        case .identity:
            return SIMD3(Float(p[0]), Float(p[1]), Float(p[2])) / 255
        case .perChannel(let values):
            return SIMD3(values[Int(p[0])], values[256 + Int(p[1])], values[512 + Int(p[2])])
        case .table(let table):
            let entry = table.entries + index * 3
            return SIMD3(Float(entry[0]), Float(entry[1]), Float(entry[2])) / UnclampedTable.scale
        }
    }
}

/// A look evaluated at 8-bit RGB inputs, unclamped, as 16-bit fixed point (`BlendKernel`): 2²⁴ × 3 values,
/// **96 MiB**, indexed `r | g << 8 | b << 16`. Rows of 256 entries (one green and blue pair) are filled on demand,
/// those a frame uses before it is mapped, by the same `ColourTableBuilder` arithmetic as a `ColourTable`'s
/// (so the values are `LUTKernel`'s before its clamp and rounding); a row bitmap under a lock says which are filled.
package final class UnclampedTable: Sendable {
    package static let scale: Float = 8192
    private let storage: TableBuffer<Int16>
    private let builder: ColourTableBuilder
    private let filled = Mutex([UInt64](repeating: 0, count: 1024))

    package init(look: Look) throws {
        storage = try TableBuffer(count: 3 << 24, hugePages: true, for: "the look's unclamped table")
        builder = try ColourTableBuilder(look: look, levels: 256)
    }

    package var byteCount: Int { storage.byteCount }
    package var entries: UnsafeMutablePointer<Int16> { storage.base }

    /// Fills the rows that `count` packed RGB pixels use and that are still empty.
    package func fillRows(usedBy pixels: UnsafePointer<UInt8>, count: Int) {
        filled.withLock { filled in
            var missing: [Int: [Int]] = [:]  // blue → greens
            for pixel in 0..<count {
                let key = Int(pixels[pixel * 3 + 2]) << 8 | Int(pixels[pixel * 3 + 1])
                if filled[key >> 6] & (1 << (key & 63)) == 0 {
                    filled[key >> 6] |= 1 << (key & 63)
                    missing[key >> 8, default: []].append(key & 255)
                }
            }
            guard !missing.isEmpty else { return }
            let rows = missing.map { (blue: $0.key, greens: $0.value) }
            let shared = SendablePointer(entries)
            DispatchQueue.concurrentPerform(iterations: rows.count) { plane in
                let (blue, greens) = rows[plane]
                builder.values(blue: blue, greens: greens) { green, values in
                    let out = shared.pointer + (blue << 16 | green << 8) * 3
                    for red in 0..<256 {
                        var scaled = (values[red] * UnclampedTable.scale).rounded(.toNearestOrAwayFromZero)
                        scaled.replace(with: -32768, where: scaled .< -32768)
                        scaled.replace(with: 32767, where: scaled .> 32767)
                        out[red * 3] = Int16(scaled.x)
                        out[red * 3 + 1] = Int16(scaled.y)
                        out[red * 3 + 2] = Int16(scaled.z)
                    }
                }
            }
        }
    }
}
