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
        fillTables(usedBy: pixels, count: width * height)
        blend(
            SendablePointer(pixels), width, height, locator(base, nil), locator(full, nil),
            weight: weight(intensity))
    }

    /// The frame's lookups through this kernel's 3D tables, in pixel order, for `apply(_:to:…)`: what makes a new
    /// intensity on the same frame a pass over memory in order instead of a random read of the 96 MiB tables a
    /// pixel (a cache miss each: 3/4 of the time of `apply(to:)` on a 1280×720 photo). 6 bytes a pixel a side
    /// with a table (`byteCount`); nothing for the others, which are cheap to read at apply time.
    public func gather(from pixels: UnsafePointer<UInt8>, width: Int, height: Int) -> GatheredLookups {
        let count = max(0, width) * max(0, height)
        fillTables(usedBy: pixels, count: count)
        func gathered(_ side: Side?) -> [Int16]? {
            guard case .table(let table)? = side, count > 0 else { return nil }
            let entries = SendablePointer(table.entries)
            let frame = SendablePointer(UnsafeMutablePointer(mutating: pixels))
            return [Int16](unsafeUninitializedCapacity: count * 3) { buffer, initialized in
                let out = SendablePointer(buffer.baseAddress!)
                LUTKernel.forEachBand(height: height, pixels: count) { rows in
                    for pixel in rows.lowerBound * width..<rows.upperBound * width {
                        let p = frame.pointer + pixel * 3
                        let entry = entries.pointer + (Int(p[0]) | Int(p[1]) << 8 | Int(p[2]) << 16) &* 3
                        (out.pointer + pixel * 3).initialize(from: entry, count: 3)
                    }
                }
                initialized = count * 3
            }
        }
        return GatheredLookups(width: width, height: height, base: gathered(base), full: gathered(full))
    }

    /// `apply(to:…)` over the same frame's pixels given to `gather`, reading the gathered lookups instead of the
    /// tables: byte for byte the same result at every intensity (the same loops and arithmetic, another place to
    /// read each entry from).
    public func apply(
        _ lookups: GatheredLookups, to pixels: UnsafeMutablePointer<UInt8>, width: Int, height: Int,
        intensity: Double
    ) {
        precondition(lookups.width == width && lookups.height == height, "gathered from a frame of another size")
        guard width > 0, height > 0 else { return }
        Self.withEntries(lookups.base) { base in
            Self.withEntries(lookups.full) { full in
                blend(
                    SendablePointer(pixels), width, height, locator(self.base, base), locator(self.full, full),
                    weight: weight(intensity))
            }
        }
    }

    private static func withEntries(_ entries: [Int16]?, _ body: (UnsafeBufferPointer<Int16>?) -> Void) {
        guard let entries else { return body(nil) }
        entries.withUnsafeBufferPointer { body($0) }
    }

    private func fillTables(usedBy pixels: UnsafePointer<UInt8>, count: Int) {
        for side in [base, full] {
            if case .table(let table)? = side { table.fillRows(usedBy: pixels, count: count) }
        }
    }

    private func weight(_ intensity: Double) -> Float {
        Float(full == nil ? 0 : min(1, max(0, intensity)))
    }

    /// Where a side's entries are read: its table (indexed by colour), or what `gather` collected from it (indexed
    /// by pixel); nil for a side without a table.
    private func locator(_ side: Side?, _ gathered: UnsafeBufferPointer<Int16>?) -> EntryLocator? {
        guard case .table(let table)? = side else { return nil }
        if let gathered {
            precondition(gathered.baseAddress != nil, "gathered without this side's table")
            return EntryLocator(entries: UnsafeMutablePointer(mutating: gathered.baseAddress!), byPixel: true)
        }
        return EntryLocator(entries: table.entries, byPixel: false)
    }

    private func blend(
        _ frame: SendablePointer<UInt8>, _ width: Int, _ height: Int, _ baseEntries: EntryLocator?,
        _ fullEntries: EntryLocator?, weight: Float
    ) {
        switch (base, full ?? .identity) {
        case (.identity, .table):
            Self.blendOverPixels(frame, width, height, fullEntries!, weight)
        case (.table, .table):
            Self.blendTables(frame, width, height, baseEntries!, fullEntries!, weight)
        case (.perChannel(let values), .table):
            Self.blend(
                frame, width, height, PerChannelReader(values: values), TableReader(entries: fullEntries!), weight)
        case (.table, .perChannel(let values)):
            Self.blend(
                frame, width, height, TableReader(entries: baseEntries!), PerChannelReader(values: values), weight)
        case (.table, .identity):
            Self.blend(frame, width, height, TableReader(entries: baseEntries!), IdentityReader(), weight)
        default:
            // Neither side has a 3D table: per channel, cheap whatever the path.
            Self.blend(frame, width, height, AnyReader(side: base), AnyReader(side: full ?? .identity), weight)
        }
    }

    /// 0…255 (scaled) → the code: clamped, rounded half up.
    @inline(__always)
    private static func code(_ value: Float) -> UInt8 {
        UInt8(truncatingIfNeeded: Int32(min(max(value, 0), 255) + 0.5))
    }

    /// The common case (a creative LUT alone) written out: `x` is the pixel itself.
    private static func blendOverPixels(
        _ frame: SendablePointer<UInt8>, _ width: Int, _ height: Int, _ table: EntryLocator, _ weight: Float
    ) {
        let keep = 1 - weight
        let over = 255 * weight / UnclampedTable.scale
        LUTKernel.forEachBand(height: height, pixels: width * height) { rows in
            let pixels = frame.pointer
            var pixel = rows.lowerBound * width
            var p = pixels + pixel * 3
            let end = pixels + rows.upperBound * width * 3
            while p < end {
                let (r, g, b) = (Int(p[0]), Int(p[1]), Int(p[2]))
                let entry = table.entry(r | g << 8 | b << 16, pixel)
                p[0] = code(Float(r) * keep + Float(entry[0]) * over)
                p[1] = code(Float(g) * keep + Float(entry[1]) * over)
                p[2] = code(Float(b) * keep + Float(entry[2]) * over)
                p += 3
                pixel += 1
            }
        }
    }

    /// Both slots with 3D tables, written out like `blendOverPixels`.
    private static func blendTables(
        _ frame: SendablePointer<UInt8>, _ width: Int, _ height: Int, _ base: EntryLocator,
        _ full: EntryLocator, _ weight: Float
    ) {
        let keep = 255 * (1 - weight) / UnclampedTable.scale
        let over = 255 * weight / UnclampedTable.scale
        LUTKernel.forEachBand(height: height, pixels: width * height) { rows in
            let pixels = frame.pointer
            var pixel = rows.lowerBound * width
            var p = pixels + pixel * 3
            let end = pixels + rows.upperBound * width * 3
            while p < end {
                let index = Int(p[0]) | Int(p[1]) << 8 | Int(p[2]) << 16
                let (x, c) = (base.entry(index, pixel), full.entry(index, pixel))
                p[0] = code(Float(x[0]) * keep + Float(c[0]) * over)
                p[1] = code(Float(x[1]) * keep + Float(c[1]) * over)
                p[2] = code(Float(x[2]) * keep + Float(c[2]) * over)
                p += 3
                pixel += 1
            }
        }
    }

    /// The whole frame in bands across the cores; generic over concrete readers, so each pair is its own loop.
    @inline(never)
    private static func blend<B: SideReader, F: SideReader>(
        _ frame: SendablePointer<UInt8>, _ width: Int, _ height: Int, _ base: B, _ full: F, _ weight: Float
    ) {
        LUTKernel.forEachBand(height: height, pixels: width * height) { rows in
            blend(frame.pointer, rows.lowerBound * width..<rows.upperBound * width, base, full, weight)
        }
    }

    /// One band of pixels: `x·(1 − weight) + c·weight`, clamped to 0…255 and rounded half up (as `packRow`).
    @inline(__always)
    private static func blend<B: SideReader, F: SideReader>(
        _ pixels: UnsafeMutablePointer<UInt8>, _ range: Range<Int>, _ base: B, _ full: F, _ weight: Float
    ) {
        let keep = 255 * (1 - weight)  // the base side weighs 1 - weight (1 when weight is 0: c is x then)
        let over = 255 * weight
        for pixel in range {
            let p = pixels + pixel * 3
            let (r, g, b) = (Int(p[0]), Int(p[1]), Int(p[2]))
            let index = r | g << 8 | b << 16
            let x = base.value(r, g, b, index, pixel)
            let c = weight == 0 ? x : full.value(r, g, b, index, pixel)
            p[0] = code(x.x * keep + c.x * over)
            p[1] = code(x.y * keep + c.y * over)
            p[2] = code(x.z * keep + c.z * over)
        }
    }
}

/// One side of a `BlendKernel` read at one pixel, 0…1 unclamped; generic so each pair of sides is its own loop.
protocol SideReader: Sendable {
    func value(_ r: Int, _ g: Int, _ b: Int, _ index: Int, _ pixel: Int) -> SIMD3<Float>
}

struct IdentityReader: SideReader {
    @inline(__always) func value(_ r: Int, _ g: Int, _ b: Int, _ index: Int, _ pixel: Int) -> SIMD3<Float> {
        SIMD3(Float(r), Float(g), Float(b)) * (1 / 255)
    }
}

struct PerChannelReader: SideReader {
    let values: [Float]
    @inline(__always) func value(_ r: Int, _ g: Int, _ b: Int, _ index: Int, _ pixel: Int) -> SIMD3<Float> {
        values.withUnsafeBufferPointer { SIMD3($0[r], $0[256 + g], $0[512 + b]) }
    }
}

/// Either side, chosen per pixel (the per-channel-only looks).
struct AnyReader: SideReader {
    let side: BlendKernel.Side
    @inline(__always) func value(_ r: Int, _ g: Int, _ b: Int, _ index: Int, _ pixel: Int) -> SIMD3<Float> {
        switch side {
        case .identity: return IdentityReader().value(r, g, b, index, pixel)
        case .perChannel(let values): return PerChannelReader(values: values).value(r, g, b, index, pixel)
        case .table(let table):
            return TableReader(entries: EntryLocator(entries: table.entries, byPixel: false))
                .value(r, g, b, index, pixel)
        }
    }
}

struct TableReader: SideReader {
    let entries: EntryLocator
    @inline(__always) func value(_ r: Int, _ g: Int, _ b: Int, _ index: Int, _ pixel: Int) -> SIMD3<Float> {
        let entry = entries.entry(index, pixel)
        return SIMD3(Float(entry[0]), Float(entry[1]), Float(entry[2])) * (1 / UnclampedTable.scale)
    }
}

/// Where one side's three entries for a pixel are: at its colour's index in a table, or at the pixel's own place in
/// lookups gathered from the table for that frame (`BlendKernel.gather`).
///
/// Unchecked Sendable: a table's entries are written only under its lock before a frame reads them, gathered
/// lookups are never written after `gather`, and both outlive the call that reads them (the kernel holds its
/// tables; `apply` holds the lookups).
struct EntryLocator: @unchecked Sendable {
    let entries: UnsafeMutablePointer<Int16>
    let byPixel: Bool

    @inline(__always) func entry(_ index: Int, _ pixel: Int) -> UnsafeMutablePointer<Int16> {
        entries + (byPixel ? pixel : index) &* 3
    }
}

/// One frame's lookups through a `BlendKernel`'s 3D tables (`gather`): the unclamped 16-bit entries of each side
/// that has a table, in pixel order. Immutable; the engine keeps one per frame and look (`WarmPreviews`).
public final class GatheredLookups: Sendable {
    public let width: Int
    public let height: Int
    let base: [Int16]?
    let full: [Int16]?

    init(width: Int, height: Int, base: [Int16]?, full: [Int16]?) {
        (self.width, self.height, self.base, self.full) = (width, height, base, full)
    }

    /// The bytes it holds.
    public var byteCount: Int { ((base?.count ?? 0) + (full?.count ?? 0)) * 2 + 64 }
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
