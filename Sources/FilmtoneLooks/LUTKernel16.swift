import Dispatch
import Foundation

/// Where the channels sit in one pixel of a packed 16-bit-per-channel RGB frame (RGBA64_LE, BGRA64_LE, ARGB64_LE,
/// ABGR64_LE): offsets counted in 16-bit samples, each sample little-endian.
public struct PackedRGB16Layout: Equatable, Sendable {
    public var samplesPerPixel: Int
    public var red: Int
    public var green: Int
    public var blue: Int

    public init(samplesPerPixel: Int, red: Int, green: Int, blue: Int) {
        self.samplesPerPixel = samplesPerPixel
        self.red = red
        self.green = green
        self.blue = blue
    }

    public var bytesPerPixel: Int { samplesPerPixel * 2 }

    public static let rgba64 = PackedRGB16Layout(samplesPerPixel: 4, red: 0, green: 1, blue: 2)
    public static let bgra64 = PackedRGB16Layout(samplesPerPixel: 4, red: 2, green: 1, blue: 0)
    public static let argb64 = PackedRGB16Layout(samplesPerPixel: 4, red: 1, green: 2, blue: 3)
    public static let abgr64 = PackedRGB16Layout(samplesPerPixel: 4, red: 3, green: 2, blue: 1)
}

/// Applies a `Look` to 16-bit-per-channel frames in place: the 16-bit sibling of `LUTKernel`, for 10-bit (and
/// deeper) sources that 8 bits would band. Rows are walked by `stride`, samples other than R, G, B (alpha) and row
/// padding are never touched. Results are the reference `Look.apply` rounded to nearest 16-bit code, within float
/// rounding: at most 1 code off (of 65 535) in `ftgst-bench lut16-check` (6.3 M inputs per look, 0.2–5 % of
/// channels 1 off), far inside the contract of half a 10-bit code (32).
///
/// A 16-bit input has 2⁴⁸ values, so no full table: the look is evaluated per pixel in `Float` SIMD, with what
/// does not depend on the pixel as a whole precomputed (`ColourTableBuilder` with 65 536 levels, the same code that
/// fills the 8-bit table):
///
/// - `.identity` (no LUT in either slot, or only a creative LUT at intensity 0): nothing; `apply` returns at once.
/// - `.perChannel` (no 3D table): three 65 536-entry tables of 16-bit results from the `Double` reference
///   (384 KiB), exact.
/// - `.perPixel` (any 3D table): the first 3D table's grid cell and fraction for every channel and code, from the
///   reference's own `GridCell` in `Double` (2.3 MiB), so a pixel costs three cell loads, one tetrahedral (or
///   trilinear) blend of 4 (8) nodes, and, with both slots, the creative LUT and the blend in `Float`. Nearest with
///   both slots samples composite nodes evaluated by the reference, as the 8-bit table does.
///
/// Build: ≈ 8 ms (196 608 grid cells). Per frame: ≈ 100 ms of CPU for a 1080p RGBA64 frame through a 33³
/// tetrahedral look on the 2-core test machine, 0.83× FFmpeg's `lut3d` on the same frame (`make bench-lut16`,
/// docs/PERFORMANCE.md).
///
/// Sendable: immutable after `init`, so one kernel may run frames on several threads at once.
public final class LUTKernel16: Sendable {
    public enum Strategy: String, Sendable {
        case identity
        case perChannel
        case perPixel
    }

    public let look: Look
    public let strategy: Strategy

    /// Non-copyable, because `.perPixel`'s builder owns its tables: they are freed with the kernel.
    private enum Plan: ~Copyable, Sendable {
        case identity
        /// `[red 0…65535, green 0…65535, blue 0…65535]` output codes.
        case perChannel([UInt16])
        case perPixel(ColourTableBuilder)
    }

    private let plan: Plan

    /// Memory the kernel holds for its tables, in bytes (the grid cells, separable values and the first 3D
    /// table's nodes; with both slots, the creative LUT's tables too).
    public var tableByteCount: Int {
        switch plan {
        case .identity: return 0
        case .perChannel(let table): return table.count * 2
        case .perPixel(let builder): return builder.byteCount
        }
    }

    public static let levels = 65_536

    /// Throws `INTERNAL` when the tables' memory cannot be allocated.
    public init(look: Look) throws {
        self.look = look
        let creative = look.intensity > 0 ? look.creativeLUT : nil
        if look.inputLUT == nil && creative == nil {
            plan = .identity
            strategy = .identity
        } else if look.inputLUT?.table3D == nil && creative?.table3D == nil {
            plan = .perChannel(Self.perChannelTable(look))
            strategy = .perChannel
        } else {
            plan = .perPixel(try ColourTableBuilder(look: look, levels: Self.levels))
            strategy = .perPixel
        }
    }

    /// Without a 3D table each output channel depends on its own input channel only: the reference on the grey
    /// ramp gives every entry exactly.
    private static func perChannelTable(_ look: Look) -> [UInt16] {
        var table = [UInt16](repeating: 0, count: 3 * levels)
        table.withUnsafeMutableBufferPointer { buffer in
            let shared = SendablePointer(buffer.baseAddress!)
            DispatchQueue.concurrentPerform(iterations: 16) { chunk in
                for input in Swift.stride(from: chunk, to: levels, by: 16) {
                    let output = look.apply(SIMD3(repeating: Double(input) / Double(levels - 1)))
                    shared.pointer[input] = code(output.x)
                    shared.pointer[levels + input] = code(output.y)
                    shared.pointer[2 * levels + input] = code(output.z)
                }
            }
        }
        return table
    }

    /// 0…1 → 0…65535, rounded to nearest, clamped: how the reference is turned into 16-bit codes.
    @inline(__always)
    public static func code(_ value: Double) -> UInt16 {
        UInt16(min(65535, max(0, (value * 65535).rounded())))
    }

    // MARK: - Frames

    /// Applies the look to `height` rows of `width` pixels starting at `base`, `stride` bytes apart (`stride` and
    /// `base` need not be 2-byte aligned). Only the R, G, B samples are read and written; alpha and the padding at
    /// the end of each row are never touched. Large frames are split into bands of rows across the cores, as
    /// `LUTKernel` does.
    public func apply(
        to base: UnsafeMutableRawPointer, width: Int, height: Int, stride: Int, layout: PackedRGB16Layout
    ) {
        precondition(width >= 0 && height >= 0, "negative frame size")
        let samples = 0..<layout.samplesPerPixel
        precondition(
            samples.contains(layout.red) && samples.contains(layout.green) && samples.contains(layout.blue),
            "channel offsets outside the pixel")
        precondition(height <= 1 || stride >= width * layout.bytesPerPixel, "stride shorter than a row")
        if width == 0 || height == 0 { return }
        let frame = FrameRows16(base: base, width: width, stride: stride, layout: layout)
        switch plan {
        case .identity:
            return
        case .perChannel(let table):
            LUTKernel.forEachBand(height: height, pixels: width * height) { rows in
                table.withUnsafeBufferPointer { frame.mapPerChannel(rows: rows, table: $0.baseAddress!) }
            }
        case .perPixel(let builder):
            LUTKernel.forEachBand(height: height, pixels: width * height) { rows in
                switch builder.interpolation {
                case .tetrahedral: frame.mapPerPixel(rows: rows, builder, Tetrahedral.self)
                case .trilinear: frame.mapPerPixel(rows: rows, builder, Trilinear.self)
                case .nearest: frame.mapPerPixel(rows: rows, builder, Nearest.self)
                }
            }
        }
    }
}

// MARK: - Row loops

/// One 16-bit frame as the row loops see it (see `FrameRows`).
///
/// Unchecked Sendable: bands are disjoint row ranges, so no two threads write the same byte, and the frame outlives
/// them (`apply` returns only when every band has).
package struct FrameRows16: @unchecked Sendable {
    package let base: UnsafeMutableRawPointer
    package let width: Int
    package let stride: Int
    package let layout: PackedRGB16Layout

    @inline(__always)
    private func load(_ pixel: UnsafeMutableRawPointer, _ sample: Int) -> Int {
        Int(UInt16(littleEndian: pixel.loadUnaligned(fromByteOffset: sample &* 2, as: UInt16.self)))
    }

    @inline(__always)
    private func store(_ value: UInt16, _ pixel: UnsafeMutableRawPointer, _ sample: Int) {
        pixel.storeBytes(of: value.littleEndian, toByteOffset: sample &* 2, as: UInt16.self)
    }

    package func mapPerChannel(rows: Range<Int>, table: UnsafePointer<UInt16>) {
        let (step, red, green, blue) = (layout.bytesPerPixel, layout.red, layout.green, layout.blue)
        let levels = LUTKernel16.levels
        for row in rows {
            var pixel = base + stride * row
            for _ in 0..<width {
                store(table[load(pixel, red)], pixel, red)
                store(table[levels &+ load(pixel, green)], pixel, green)
                store(table[2 &* levels &+ load(pixel, blue)], pixel, blue)
                pixel += step
            }
        }
    }

    /// The look evaluated for each pixel, then rounded to 16-bit codes as `ColourTableBuilder.packRow` rounds to
    /// 8-bit ones. The rest of the look after the first table is chosen once per band (`Rest`), so the common
    /// looks (one 3D LUT, or a 3D creative LUT blended over a 1D or empty input slot) run a short loop with
    /// nothing of the creative-after-input path in it.
    package func mapPerPixel<S: CellSampler>(rows: Range<Int>, _ builder: borrowing ColourTableBuilder, _: S.Type) {
        switch builder.mode {
        case .direct: mapPixels(rows: rows, builder, S.self, Direct.self)
        case .blendOverSeparable: mapPixels(rows: rows, builder, S.self, BlendOverSeparable.self)
        case .creativeAfter: mapPixels(rows: rows, builder, S.self, CreativeAfter.self)
        }
    }

    /// Codes are clamped, then rounded half away from zero like the reference's `rounded()`, without a
    /// float-to-integer conversion: adding 1.5·2²³ leaves the value rounded (to even) in the low mantissa bits,
    /// and a tie rounded down is bumped up.
    @inline(__always)
    private func mapPixels<S: CellSampler, R: Rest>(
        rows: Range<Int>, _ builder: borrowing ColourTableBuilder, _: S.Type, _: R.Type
    ) {
        let (step, red, green, blue) = (layout.bytesPerPixel, layout.red, layout.green, layout.blue)
        let magic: Float = 12_582_912
        for row in rows {
            var pixel = base + stride &* row
            for _ in 0..<width {
                let (r, g, b) = (load(pixel, red), load(pixel, green), load(pixel, blue))
                let first = builder.firstStage(r, g, b, S.self)
                var scaled = R.finish(builder, first, r, g, b, S.self) * 65535
                scaled.replace(with: 0, where: scaled .< 0)
                scaled.replace(with: 65535, where: scaled .> 65535)
                var codes = (scaled + magic) - magic
                codes.replace(with: codes + 1, where: scaled - codes .>= 0.5)
                let bits = unsafeBitCast(codes + magic, to: SIMD4<UInt32>.self)
                store(UInt16(truncatingIfNeeded: bits.x), pixel, red)
                store(UInt16(truncatingIfNeeded: bits.y), pixel, green)
                store(UInt16(truncatingIfNeeded: bits.z), pixel, blue)
                pixel += step
            }
        }
    }
}

/// What follows the first 3D table, per `ColourTableBuilder.Mode`.
private protocol Rest {
    static func finish<S: CellSampler>(
        _ builder: borrowing ColourTableBuilder, _ value: SIMD4<Float>, _ red: Int, _ green: Int, _ blue: Int, _: S.Type
    ) -> SIMD4<Float>
}

private enum Direct: Rest {
    @inline(__always)
    package static func finish<S: CellSampler>(
        _ builder: borrowing ColourTableBuilder, _ value: SIMD4<Float>, _ red: Int, _ green: Int, _ blue: Int, _: S.Type
    ) -> SIMD4<Float> { value }
}

private enum BlendOverSeparable: Rest {
    @inline(__always)
    package static func finish<S: CellSampler>(
        _ builder: borrowing ColourTableBuilder, _ value: SIMD4<Float>, _ red: Int, _ green: Int, _ blue: Int, _: S.Type
    ) -> SIMD4<Float> {
        let (separable, levels) = (builder.separable, builder.levels)
        let x = SIMD4(separable[red], separable[levels &+ green], separable[2 &* levels &+ blue], 0)
        return x * (1 - builder.intensity) + value * builder.intensity
    }
}

private enum CreativeAfter: Rest {
    @inline(__always)
    package static func finish<S: CellSampler>(
        _ builder: borrowing ColourTableBuilder, _ value: SIMD4<Float>, _ red: Int, _ green: Int, _ blue: Int, _: S.Type
    ) -> SIMD4<Float> {
        builder.finish(value, red, green, blue, S.self)
    }
}
