import Dispatch
import Foundation

/// Where the channels sit in one pixel of a packed 8-bit RGB frame (RGB, BGR, RGBx, BGRx, xRGB, RGBA, …).
public struct PackedRGBLayout: Equatable, Sendable {
    public var bytesPerPixel: Int
    public var red: Int
    public var green: Int
    public var blue: Int

    public init(bytesPerPixel: Int, red: Int, green: Int, blue: Int) {
        self.bytesPerPixel = bytesPerPixel
        self.red = red
        self.green = green
        self.blue = blue
    }

    public static let rgb = PackedRGBLayout(bytesPerPixel: 3, red: 0, green: 1, blue: 2)
    public static let bgr = PackedRGBLayout(bytesPerPixel: 3, red: 2, green: 1, blue: 0)
    public static let rgbx = PackedRGBLayout(bytesPerPixel: 4, red: 0, green: 1, blue: 2)
    public static let bgrx = PackedRGBLayout(bytesPerPixel: 4, red: 2, green: 1, blue: 0)
    public static let xrgb = PackedRGBLayout(bytesPerPixel: 4, red: 1, green: 2, blue: 3)
    public static let xbgr = PackedRGBLayout(bytesPerPixel: 4, red: 3, green: 2, blue: 1)
}

/// Applies a `Look` to 8-bit frames in place. Built once per look (tables precomputed in `init`), then called per
/// frame; the frame is walked row by row through `stride` (rows may be padded), channels other than R, G, B (alpha,
/// padding) are left untouched. Results are the reference `Look.apply` rounded to nearest, within 1 code value.
///
/// An 8-bit input has only 2²⁴ values, so the whole look is evaluated once for every one of them and each frame
/// pixel becomes a single table load. What `init` builds depends on the look (`strategy`):
///
/// - `.identity` (no LUT in either slot, or only a creative LUT at intensity 0 and no input LUT): nothing; `apply`
///   returns at once.
/// - `.perChannel` (no 3D table in either slot): every output channel depends on its own input channel only, so
///   three 256-entry byte tables (768 B) are exact.
/// - `.fullTable` (any 3D table): a 256³ table of packed results, 4 bytes each: **64 MiB**, held for the kernel's
///   life. See `ColourTable` for its layout, huge pages, and why it is worth its memory.
///
/// Per-frame cost is memory-bound (one table load a pixel): a 1080p frame with a 33³ tetrahedral look costs ≈ 4 ms
/// of CPU on the 2-core test machine, ≈ 1/25 of FFmpeg's `lut3d` (`make bench-lut`, docs/PERFORMANCE.md).
///
/// Sendable: immutable after `init` (the table's rows that debug builds fill later are filled under a lock, see
/// `ColourTable`), so one kernel may run frames on several threads at once.
public final class LUTKernel: Sendable {
    /// How the per-frame work is done; chosen by `init` from the look (see the type's documentation).
    public enum Strategy: String, Sendable {
        case identity
        case perChannel
        case fullTable
    }

    public let look: Look
    /// What `init` chose for this look.
    public let strategy: Strategy
    /// Memory the kernel holds for its tables, in bytes: 0, 768, or 64 MiB.
    public var tableByteCount: Int {
        switch plan {
        case .identity: return 0
        case .perChannel(let table): return table.count
        case .fullTable: return ColourTable.byteCount
        }
    }

    /// Internal so that `YUVKernel` can build its table from this kernel's results.
    package enum Plan: Sendable {
        case identity
        /// `[red 0…255, green 0…255, blue 0…255]` output codes.
        case perChannel([UInt8])
        case fullTable(ColourTable)
    }

    package let plan: Plan

    /// Builds the tables for `look`. For a look with a 3D table this evaluates it 16.8 M times, on every core
    /// (≈ 80 ms wall for a 33³ LUT on the 2-core test machine, see docs/PERFORMANCE.md): build a kernel once per
    /// look, when an element starts, never per frame. (Debug builds fill the table lazily instead, see
    /// `ColourTable`.)
    ///
    /// Throws `INTERNAL` when the table's memory cannot be allocated ("cannot allocate 64 MiB for the look's
    /// colour table").
    public init(look: Look) throws {
        self.look = look
        strategy = Self.strategy(for: look)
        switch strategy {
        case .identity: plan = .identity
        case .perChannel: plan = .perChannel(Self.perChannelTable(look))
        case .fullTable: plan = .fullTable(try ColourTable(look: look))
        }
    }

    /// What `init` chooses for `look`, without building anything: no LUT (or a creative one at intensity 0), no 3D
    /// table, or a 3D table somewhere.
    package static func strategy(for look: Look) -> Strategy {
        let creative = look.intensity > 0 ? look.creativeLUT : nil
        if look.inputLUT == nil && creative == nil { return .identity }
        return look.inputLUT?.table3D == nil && creative?.table3D == nil ? .perChannel : .fullTable
    }

    /// Without a 3D table, output channel c is a function of input channel c alone (1D tables are per channel,
    /// the blend is per channel), so evaluating the reference on the grey ramp gives every entry exactly.
    package static func perChannelTable(_ look: Look) -> [UInt8] {
        var table = [UInt8](repeating: 0, count: 768)
        for input in 0..<256 {
            let output = look.apply(SIMD3(repeating: Double(input) / 255))
            table[input] = code(output.x)
            table[256 + input] = code(output.y)
            table[512 + input] = code(output.z)
        }
        return table
    }

    // MARK: - Frames

    /// Frames with fewer pixels than this run on the calling thread: below it, waking the pool costs more than the
    /// pixels (a 256×256 frame takes ≈ 0.1 ms single-threaded).
    public static let parallelPixelThreshold = 1 << 16

    /// Applies the look to `height` rows of `width` pixels starting at `base`, `stride` bytes apart.
    ///
    /// Only the R, G and B bytes of the `width` pixels of each row are read and written: other bytes of a pixel
    /// (alpha, x) and the padding between `width * bytesPerPixel` and `stride` are never touched. Large frames are
    /// split into bands of rows across the cores.
    public func apply(
        to base: UnsafeMutablePointer<UInt8>, width: Int, height: Int, stride: Int, layout: PackedRGBLayout
    ) {
        precondition(width >= 0 && height >= 0, "negative frame size")
        let pixelBytes = 0..<layout.bytesPerPixel
        precondition(
            pixelBytes.contains(layout.red) && pixelBytes.contains(layout.green) && pixelBytes.contains(layout.blue),
            "channel offsets outside the pixel")
        precondition(height <= 1 || stride >= width * layout.bytesPerPixel, "stride shorter than a row")
        if width == 0 || height == 0 { return }
        let frame = FrameRows(base: base, width: width, stride: stride, layout: layout)
        switch plan {
        case .identity:
            return
        case .perChannel(let table):
            Self.forEachBand(height: height, pixels: width * height) { rows in
                table.withUnsafeBufferPointer { frame.mapPerChannel(rows: rows, table: $0.baseAddress!) }
            }
        case .fullTable(let table):
            table.fillRows(usedBy: frame, height: height)  // debug builds only; a no-op in release builds
            Self.forEachBand(height: height, pixels: width * height) { rows in
                frame.mapFullTable(rows: rows, table: table)
            }
        }
    }

    /// Runs `body` over bands of rows covering 0..<height: one band on the calling thread for small frames, else
    /// four bands per core (more than one per core so a core that is busy elsewhere does not hold up the frame;
    /// few enough that a band is tens of thousands of pixels and dispatch costs stay negligible). `body` runs on
    /// several threads at once, each with its own rows.
    package static func forEachBand(height: Int, pixels: Int, _ body: @Sendable (Range<Int>) -> Void) {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        guard pixels >= parallelPixelThreshold, cores > 1, height > 1 else {
            body(0..<height)
            return
        }
        let bands = min(height, cores * 4)
        DispatchQueue.concurrentPerform(iterations: bands) { band in
            body(height * band / bands..<height * (band + 1) / bands)
        }
    }

    /// 0…1 → 0…255, rounded to nearest, clamped.
    @inline(__always)
    package static func code(_ value: Double) -> UInt8 {
        UInt8(min(255, max(0, (value * 255).rounded())))
    }
}

// MARK: - Row loops

/// One frame as the row loops see it. A value type holding the raw pointer so that the bands, run on other threads
/// by `concurrentPerform`, each get a copy.
///
/// Unchecked Sendable: bands are disjoint row ranges, so no two threads write the same byte, and the frame outlives
/// them (`apply` returns only when every band has).
package struct FrameRows: @unchecked Sendable {
    package let base: UnsafeMutablePointer<UInt8>
    package let width: Int
    package let stride: Int
    package let layout: PackedRGBLayout

    package func mapPerChannel(rows: Range<Int>, table: UnsafePointer<UInt8>) {
        let (step, red, green, blue) = (layout.bytesPerPixel, layout.red, layout.green, layout.blue)
        for row in rows {
            var pixel = base + stride * row
            for _ in 0..<width {
                pixel[red] = table[Int(pixel[red])]
                pixel[green] = table[256 + Int(pixel[green])]
                pixel[blue] = table[512 + Int(pixel[blue])]
                pixel += step
            }
        }
    }

    /// The six standard layouts get loops specialised for their byte order (the table index is the pixel's own
    /// bytes, at most byte-swapped); any other layout takes a byte-by-byte loop with offsets read at run time.
    package func mapFullTable(rows: Range<Int>, table: ColourTable) {
        switch layout {
        case .rgbx: mapWords(rows: rows, table: table, RGBx.self)
        case .bgrx: mapWords(rows: rows, table: table, BGRx.self)
        case .xrgb: mapWords(rows: rows, table: table, XRGB.self)
        case .xbgr: mapWords(rows: rows, table: table, XBGR.self)
        case .rgb: mapTriplets(rows: rows, table: table, swapped: false)
        case .bgr: mapTriplets(rows: rows, table: table, swapped: true)
        default: mapBytes(rows: rows, table: table)
        }
    }

    /// 4-byte pixels as one little-endian word: one load, one table load, one store per pixel; the fourth byte is
    /// carried over through a mask, so alpha or x is written back with the value it had.
    @inline(__always)
    private func mapWords<L: WordLayout>(rows: Range<Int>, table: ColourTable, _: L.Type) {
        let entries = table.entries
        for row in rows {
            let pixels = UnsafeMutableRawPointer(base + stride * row)
            for x in 0..<width {
                let word = UInt32(littleEndian: pixels.loadUnaligned(fromByteOffset: x &* 4, as: UInt32.self))
                let entry = entries[Int(L.index(word))]
                pixels.storeBytes(of: L.merge(entry, into: word).littleEndian, toByteOffset: x &* 4, as: UInt32.self)
            }
        }
    }

    /// 3-byte pixels (RGB, or BGR when `swapped`): each pixel is read as a word whose fourth byte belongs to the
    /// next pixel (still unmodified, same row), and written back as 2 + 1 bytes. Writing a whole word would store
    /// over the next pixel's first byte just before that pixel's load, a partial overlap the store buffer cannot
    /// forward, so every load would wait for the previous store. The last pixel of a row is done byte by byte: its
    /// fourth byte may be past the end of the frame.
    @inline(__always)
    private func mapTriplets(rows: Range<Int>, table: ColourTable, swapped: Bool) {
        let entries = table.entries
        for row in rows {
            let pixels = UnsafeMutableRawPointer(base + stride * row)
            for x in 0..<width &- 1 {
                var bytes =
                    UInt32(littleEndian: pixels.loadUnaligned(fromByteOffset: x &* 3, as: UInt32.self))
                    & 0xFF_FFFF
                if swapped { bytes = bytes.byteSwapped &>> 8 }
                var entry = entries[Int(bytes)]
                if swapped { entry = entry.byteSwapped &>> 8 }
                pixels.storeBytes(
                    of: UInt16(truncatingIfNeeded: entry).littleEndian, toByteOffset: x &* 3, as: UInt16.self)
                pixels.storeBytes(
                    of: UInt8(truncatingIfNeeded: entry &>> 16), toByteOffset: x &* 3 &+ 2, as: UInt8.self)
            }
            let last = base + stride * row + (width - 1) * 3
            let (red, blue) = swapped ? (2, 0) : (0, 2)
            let entry = entries[Int(UInt32(last[red]) | UInt32(last[1]) << 8 | UInt32(last[blue]) << 16)]
            last[red] = UInt8(truncatingIfNeeded: entry)
            last[1] = UInt8(truncatingIfNeeded: entry &>> 8)
            last[blue] = UInt8(truncatingIfNeeded: entry &>> 16)
        }
    }

    /// Any layout: three byte loads and three byte stores a pixel, offsets from `layout`.
    private func mapBytes(rows: Range<Int>, table: ColourTable) {
        let entries = table.entries
        let (step, red, green, blue) = (layout.bytesPerPixel, layout.red, layout.green, layout.blue)
        for row in rows {
            var pixel = base + stride * row
            for _ in 0..<width {
                let entry = entries[Int(UInt32(pixel[red]) | UInt32(pixel[green]) << 8 | UInt32(pixel[blue]) << 16)]
                pixel[red] = UInt8(truncatingIfNeeded: entry)
                pixel[green] = UInt8(truncatingIfNeeded: entry &>> 8)
                pixel[blue] = UInt8(truncatingIfNeeded: entry &>> 16)
                pixel += step
            }
        }
    }
}

/// A 4-byte layout's byte order, for pixels read as little-endian words: the table index `r | g << 8 | b << 16`
/// from a word, and a table entry (same order) put back into a word.
private protocol WordLayout {
    static func index(_ word: UInt32) -> UInt32
    static func merge(_ entry: UInt32, into word: UInt32) -> UInt32
}

/// Bytes R G B x: the word's low 24 bits are the index.
private enum RGBx: WordLayout {
    @inline(__always) package static func index(_ word: UInt32) -> UInt32 { word & 0xFF_FFFF }
    @inline(__always) package static func merge(_ entry: UInt32, into word: UInt32) -> UInt32 {
        word & 0xFF00_0000 | entry
    }
}

/// Bytes B G R x: swapped, `x R G B`, then shifted down.
private enum BGRx: WordLayout {
    @inline(__always) package static func index(_ word: UInt32) -> UInt32 { word.byteSwapped &>> 8 }
    @inline(__always) package static func merge(_ entry: UInt32, into word: UInt32) -> UInt32 {
        word & 0xFF00_0000 | entry.byteSwapped &>> 8
    }
}

/// Bytes x R G B: the word's high 24 bits.
private enum XRGB: WordLayout {
    @inline(__always) package static func index(_ word: UInt32) -> UInt32 { word &>> 8 }
    @inline(__always) package static func merge(_ entry: UInt32, into word: UInt32) -> UInt32 {
        word & 0xFF | entry &<< 8
    }
}

/// Bytes x B G R: swapped, `R G B x`, low 24 bits.
private enum XBGR: WordLayout {
    @inline(__always) package static func index(_ word: UInt32) -> UInt32 { word.byteSwapped & 0xFF_FFFF }
    @inline(__always) package static func merge(_ entry: UInt32, into word: UInt32) -> UInt32 {
        word & 0xFF | entry.byteSwapped
    }
}
