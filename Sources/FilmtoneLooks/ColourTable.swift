import Dispatch
import Foundation
import Synchronization

// Table entries are written as bytes R G B 0 and read as little-endian words (`packRow`, LUTKernel's row loops).
#if !_endian(little)
    #error("ColourTable assumes a little-endian machine")
#endif

/// A look evaluated at all 2²⁴ 8-bit RGB inputs: `LUTKernel`'s table for looks with a 3D LUT.
///
/// **Memory: 64 MiB** (2²⁴ entries × 4 bytes), allocated once per kernel and held until it is released. Why a full
/// table: the target is a tenth of FFmpeg's CPU time for a 33³ tetrahedral LUT (≈ 3 ms for a 1080p frame, ≈ 1.5 ns
/// a pixel). Interpolating per pixel takes a cell lookup, a tetrahedron choice and four node loads: ≈ 45 ns a pixel
/// in FFmpeg's C, ≈ 6 ns for this file's own SIMD evaluation of one entry; one load from a precomputed table is the
/// only per-pixel work that fits. Three bytes an entry (48 MiB) was measured slower (unaligned loads, an index
/// times 3) and a coarser table would need interpolating again.
///
/// **Layout.** Entry `r | g << 8 | b << 16` holds `r' | g' << 8 | b' << 16`: the index of an RGBx pixel is its
/// little-endian word masked to 24 bits, and other byte orders are one byte swap or shift away, so a pixel costs
/// about five instructions. A Morton (bit-interleaved) order keeps colours that are close in all three channels
/// closer in memory, but its index costs three more table loads a pixel: measured, it was no faster on heavy
/// grain and 1.5–1.8× slower on smooth pictures. A blue step of 256 KiB is harmless with huge pages.
///
/// **Huge pages.** The table is 2 MiB-aligned and `madvise(MADV_HUGEPAGE)`d: 32 TLB entries cover it instead of
/// 16 384, which matters when grain spreads a frame's lookups over many blue planes. Where transparent huge pages
/// are off the advice is a no-op and only TLB misses are added.
///
/// **Build.** Every entry is the look evaluated in `Float` SIMD (`ColourTableBuilder`, `RowSampler`), one blue
/// plane per work item, in parallel: ≈ 80 ms wall on the 2-core test machine for a 33³ LUT, part of it the
/// kernel faulting in the fresh pages. Results are the `Double` reference to within float rounding, so at most 1
/// code value off when the reference lands next to a rounding boundary (≈ 1 channel in 10⁵ for a smooth LUT).
/// Debug builds fill the table lazily instead (`fillRows(usedBy:height:)`).
///
/// **Memory.** The table is a `TableBuffer`, freed with the `ColourTable`; the builder (debug builds keep it for the
/// lazy rows) frees its own tables with it. A refused allocation is an `INTERNAL` error from `init`.
///
/// Sendable: release builds write the entries in `init` only; debug builds write missing rows under
/// `LazyFill.filled`'s lock, and a frame reads only rows it (or an earlier frame) had filled under that lock.
package final class ColourTable: Sendable {
    /// The 64 MiB of `entries`, freed with the table.
    private let storage: TableBuffer<UInt32>
    /// Debug builds only: what fills the table row by row on demand (see `fillRows(usedBy:height:)`).
    private let lazyFill: LazyFill?

    package static let entryCount = 1 << 24
    package static let byteCount = entryCount * MemoryLayout<UInt32>.stride

    /// `INTERNAL` when the 64 MiB (or the builder's tables) cannot be allocated.
    package init(look: Look) throws {
        storage = try Self.allocateEntries(for: "the look's colour table")
        let builder = try ColourTableBuilder(look: look, levels: 256)
        #if DEBUG
            lazyFill = LazyFill(builder)
        #else
            builder.fill(storage.base, rows: (0..<256).map { (blue: $0, greens: Array(0..<256)) })
            lazyFill = nil
        #endif
    }

    /// The 2²⁴ packed results, indexed `r | g << 8 | b << 16`; valid while the table is.
    package var entries: UnsafeMutablePointer<UInt32> { storage.base }

    /// 2²⁴ uninitialised entries for `what` (the error's words): 2 MiB-aligned and advised for huge pages (see above),
    /// or, `sparse`, advised against them, for `YUVKernel`'s table of the same size, which fills only the rows frames
    /// use (a 1080p clip's 909 (U, V) pairs sit in 583 small pages, 2.3 MiB, but touch 31 huge ones, 62 MiB).
    package static func allocateEntries(for what: String, sparse: Bool = false) throws -> TableBuffer<UInt32> {
        try TableBuffer(count: entryCount, hugePages: !sparse, for: what)
    }

    /// Whether every entry is filled (release builds); debug builds fill rows lazily and answer through
    /// `entries(at:into:)`.
    package var isFilled: Bool { lazyFill == nil }

    /// The entries at 256 arbitrary indices (`YUVKernel`'s build). Release builds load them from the table; debug
    /// builds evaluate each one (`ColourTableBuilder.evaluate`), without filling the table: a YUV row's inputs
    /// are spread over up to 256 table rows, and filling those would cost 256 times the work.
    package func entries(at indices: UnsafePointer<UInt32>, into out: UnsafeMutablePointer<UInt32>) {
        if let lazy = lazyFill {
            lazy.builder.evaluate(indices, into: out)
            return
        }
        for index in 0..<256 { out[index] = entries[Int(indices[index])] }
    }

    // MARK: - Debug builds

    /// Unoptimised code evaluates the look well over a hundred times slower than a release build: ≈ 14 s for the whole
    /// table, which would stall an element (and its tests) for that long when it starts. So a debug build fills
    /// the table lazily, one row of 256 entries (one green and blue pair) at a time, the rows each frame uses
    /// before it is mapped. The rows are filled by the same `ColourTableBuilder` code as the eager build, so the
    /// values are the same; release builds fill every row in `init` and this is a no-op.
    private final class LazyFill: Sendable {
        let builder: ColourTableBuilder
        /// One bit per (blue, green) row, `blue << 8 | green`: filled. Held while the rows are written, so two
        /// frames on two threads never fill the same row at once, and a frame finds its rows complete.
        let filled = Mutex([UInt64](repeating: 0, count: 1024))

        init(_ builder: consuming ColourTableBuilder) { self.builder = builder }
    }

    /// Debug builds: fills the rows of the table that `height` rows of `frame` use and that are still empty.
    package func fillRows(usedBy frame: FrameRows, height: Int) {
        guard let lazy = lazyFill else { return }
        let entries = self.entries
        lazy.filled.withLock { filled in
            var missing: [Int: [Int]] = [:]  // blue → greens
            let (step, green, blue) = (frame.layout.bytesPerPixel, frame.layout.green, frame.layout.blue)
            for row in 0..<height {
                var pixel = frame.base + frame.stride * row
                for _ in 0..<frame.width {
                    let key = Int(pixel[blue]) << 8 | Int(pixel[green])
                    if filled[key >> 6] & (1 << (key & 63)) == 0 {
                        filled[key >> 6] |= 1 << (key & 63)
                        missing[key >> 8, default: []].append(key & 255)
                    }
                    pixel += step
                }
            }
            if !missing.isEmpty {
                lazy.builder.fill(entries, rows: missing.map { (blue: $0.key, greens: $0.value) })
            }
        }
    }
}

/// A look evaluated entry by entry, with no table (`ColourTableBuilder.evaluate`): what fills a `YUVKernel`'s rows
/// on demand, so that an 8-bit Y'CbCr look needs no 64 MiB R'G'B' table first. Sendable: immutable.
package final class LookEvaluator: Sendable {
    private let builder: ColourTableBuilder

    /// `INTERNAL` when the builder's tables cannot be allocated.
    package init(look: Look) throws { builder = try ColourTableBuilder(look: look, levels: 256) }

    /// The entries (`r' | g' << 8 | b' << 16`) of 256 inputs `r | g << 8 | b << 16`.
    package func evaluate(_ indices: UnsafePointer<UInt32>, into out: UnsafeMutablePointer<UInt32>) {
        builder.evaluate(indices, into: out)
    }
}

// MARK: - Building

/// The look as a `Float` SIMD evaluator of integer codes (`levels` per channel: 256 for 8-bit inputs, 65 536 for
/// 16-bit ones), laid out for filling a `ColourTable` (8-bit) or for evaluating pixels one by one (`LUTKernel16`).
///
/// The first 3D table the pixels meet (the input LUT's, else the creative LUT's) is sampled at inputs that are a
/// per-channel function of the codes (the 1D tables before it are per channel), so its grid cells are computed
/// once per channel and code, in `Double` with the reference's own `GridCell`: 768 cells instead of 50 M for 8-bit
/// inputs, 196 608 (2.3 MiB) instead of one per pixel for 16-bit ones.
/// Those cells are then exactly the reference's (nearest-node choice and fractions), and only the blends run in
/// `Float`. When the input LUT has a 3D table and there is a creative LUT, the creative LUT's cells depend on the
/// input LUT's (interpolated) result and are computed per entry, in `Float`.
///
/// Nearest with both slots: the input LUT's result is then always one of its nodes, so the creative LUT and the
/// blend are evaluated per node by the reference itself (`Look` semantics in `Double`), and the table samples those
/// composite nodes. This keeps nearest, which jumps at cell midpoints, exactly on the reference's side of every
/// midpoint.
///
/// Non-copyable: it owns its tables (`TableBuffer`s), freed with it. Sendable: they are written in `init` only.
package struct ColourTableBuilder: ~Copyable, Sendable {
    /// The first stage's cell on one axis for one 8-bit code, offsets already multiplied by the axis stride.
    package struct Cell: BitwiseCopyable, Sendable {
        package var origin: Int32
        package var nearest: Int32
        package var fraction: Float
    }

    package enum Mode: Sendable {
        /// The first stage's result is the output.
        case direct
        /// The first stage is the creative LUT; blend it over `separable` (the input LUT's per-channel result).
        case blendOverSeparable
        /// The first stage is the input LUT; run the creative LUT on its result and blend.
        case creativeAfter
    }

    package let interpolation: Interpolation
    package let mode: Mode
    package let intensity: Float
    /// The first 3D table (or the composite nodes, see above).
    package let grid: NodeGrid
    /// Codes per channel: inputs are `code / (levels - 1)`.
    package let levels: Int
    private let cellStorage: TableBuffer<Cell>
    private let separableStorage: TableBuffer<Float>
    /// The creative LUT for `.creativeAfter`.
    package let creative1D: FloatTable1D?
    package let creative3D: FloatTable3D?

    /// `cells[c·levels + code]`.
    package var cells: UnsafeMutablePointer<Cell> { cellStorage.base }
    /// `separable[c·levels + code]`: the input LUT's 1D result (or the input itself), for `.blendOverSeparable`.
    package var separable: UnsafeMutablePointer<Float> { separableStorage.base }
    /// The bytes its tables hold.
    package var byteCount: Int {
        var total = cellStorage.byteCount + separableStorage.byteCount + grid.byteCount
        switch creative1D {
        case .some(let table): total += table.byteCount
        case .none: break
        }
        switch creative3D {
        case .some(let table): total += table.grid.byteCount
        case .none: break
        }
        return total
    }

    /// `INTERNAL` when a table cannot be allocated.
    package init(look: Look, levels: Int) throws {
        precondition(levels >= 2, "at least two codes per channel")
        self.levels = levels
        let creativeLUT = look.intensity > 0 ? look.creativeLUT : nil
        interpolation = look.interpolation
        intensity = Float(look.intensity)
        let input1D = look.inputLUT?.table1D
        let firstTable: CubeLUT.Table3D
        // The per-channel values the first 3D table is sampled at, in Double.
        var firstInputs = [Double](repeating: 0, count: 3 * levels)
        var separableValues = [Double](repeating: 0, count: 3 * levels)
        for code in 0..<levels {
            let value = SIMD3<Double>(repeating: Double(code) / Double(levels - 1))
            let shaped = input1D?.apply(value) ?? value
            for channel in 0..<3 { separableValues[channel * levels + code] = shaped[channel] }
        }
        if let inputTable = look.inputLUT?.table3D {
            firstTable = inputTable
            firstInputs = separableValues
            mode = creativeLUT == nil || look.interpolation == .nearest ? .direct : .creativeAfter
        } else {
            guard let creativeLUT, let creativeTable = creativeLUT.table3D else {
                preconditionFailure("ColourTable is only built for looks with a 3D table")
            }
            firstTable = creativeTable
            mode = .blendOverSeparable
            for code in 0..<levels {
                let x = SIMD3(
                    separableValues[code], separableValues[levels + code], separableValues[2 * levels + code])
                let shaped = creativeLUT.table1D?.apply(x) ?? x
                for channel in 0..<3 { firstInputs[channel * levels + code] = shaped[channel] }
            }
        }

        // Every table is allocated (each may throw) into a local before any is stored: a non-copyable field must
        // be initialised on every path or on none when `init` throws.
        let size = firstTable.size
        let strides = SIMD3(1, size, size * size)
        let cellStorage = try TableBuffer<Cell>(count: 3 * levels, for: "the look's grid cells")
        let separableStorage = try TableBuffer<Float>(count: 3 * levels, for: "the look's input values")
        let (cells, separable) = (cellStorage.base, separableStorage.base)
        for channel in 0..<3 {
            for code in 0..<levels {
                let cell = GridCell(
                    firstInputs[channel * levels + code], min: firstTable.domainMin[channel],
                    max: firstTable.domainMax[channel], size: size)
                cells[channel * levels + code] = Cell(
                    origin: Int32(cell.index * strides[channel]), nearest: Int32(cell.nearest * strides[channel]),
                    fraction: Float(cell.fraction))
                separable[channel * levels + code] = finiteFloat(separableValues[channel * levels + code])
            }
        }

        let grid: NodeGrid
        if mode == .direct, let creativeLUT, look.interpolation == .nearest {
            grid = try NodeGrid(
                size: size, nodes: Self.compositeNodes(firstTable, creative: creativeLUT, intensity: look.intensity))
        } else {
            grid = try NodeGrid(firstTable)
        }
        var creative1D: FloatTable1D? = nil
        var creative3D: FloatTable3D? = nil
        if mode == .creativeAfter, let creativeLUT {
            if let table = creativeLUT.table1D { creative1D = try FloatTable1D(table) }
            if let table = creativeLUT.table3D { creative3D = try FloatTable3D(table) }
        }
        self.cellStorage = cellStorage
        self.separableStorage = separableStorage
        self.grid = grid
        self.creative1D = creative1D
        self.creative3D = creative3D
    }

    /// For nearest with both slots: each input-LUT node run through the rest of the look by the reference.
    /// Parallel over blue slices: a 65³ input LUT is 275 k reference evaluations.
    private static func compositeNodes(_ table: CubeLUT.Table3D, creative: CubeLUT, intensity: Double) throws
        -> TableBuffer<SIMD4<Float>>
    {
        let size = table.size
        let nodes = try NodeGrid.allocateNodes(size: size)
        let shared = SendablePointer(nodes.base)
        DispatchQueue.concurrentPerform(iterations: size) { blue in
            for green in 0..<size {
                for red in 0..<size {
                    let x = table.node(red, green, blue)
                    let out = x * (1 - intensity) + creative.apply(x, interpolation: .nearest) * intensity
                    shared.pointer[red + size * (green + size * blue)] = SIMD4(
                        finiteFloat(out.x), finiteFloat(out.y), finiteFloat(out.z), 0)
                }
            }
        }
        return nodes
    }

    /// Fills the given rows of entries (all 2²⁴ of them: every green for every blue), one blue plane (256 KiB,
    /// written in order) per work item, spread over the cores.
    package func fill(_ entries: UnsafeMutablePointer<UInt32>, rows: [(blue: Int, greens: [Int])]) {
        precondition(levels == 256, "a ColourTable is indexed by 8-bit codes")
        let shared = SendablePointer(entries)
        DispatchQueue.concurrentPerform(iterations: rows.count) { plane in
            let (blue, greens) = rows[plane]
            switch interpolation {
            case .tetrahedral: fillPlane(blue, greens, shared.pointer, Tetrahedral.self)
            case .trilinear: fillPlane(blue, greens, shared.pointer, Trilinear.self)
            case .nearest: fillPlane(blue, greens, shared.pointer, Nearest.self)
            }
        }
    }

    /// Rows of one blue plane, 256 entries (one green code) at a time: the first table's row prepared once
    /// (`RowSampler`), the look evaluated into a row of floats, then the row packed 4 entries per vector.
    private func fillPlane<S: RowSampler>(
        _ blue: Int, _ greens: [Int], _ entries: UnsafeMutablePointer<UInt32>, _: S.Type
    ) {
        withScratch(256, S.rowCapacity(size: grid.size)) { values, row in
            let cells = self.cells
            let b = cells[2 * levels + blue]
            for green in greens {
                let g = cells[levels + green]
                S.prepare(grid, green: g, blue: b, row)
                for red in 0..<256 {
                    let value = S.sample(grid, row, red: cells[red], green: g, blue: b)
                    values[red] = finish(value, red, green, blue, S.self)
                }
                Self.packRow(values, into: entries + (blue << 16 | green << 8))
            }
        }
    }

    /// The look's unclamped results (lanes 0-2) for the given greens of one blue plane, one row of 256 reds at a
    /// time handed to `body` with its green: `fillPlane`'s arithmetic without the packing (`UnclampedTable`).
    package func values(
        blue: Int, greens: [Int], _ body: (_ green: Int, _ values: UnsafeMutablePointer<SIMD4<Float>>) -> Void
    ) {
        precondition(levels == 256, "8-bit inputs")
        switch interpolation {
        case .tetrahedral: values(blue, greens, body, Tetrahedral.self)
        case .trilinear: values(blue, greens, body, Trilinear.self)
        case .nearest: values(blue, greens, body, Nearest.self)
        }
    }

    private func values<S: RowSampler>(
        _ blue: Int, _ greens: [Int], _ body: (Int, UnsafeMutablePointer<SIMD4<Float>>) -> Void, _: S.Type
    ) {
        withScratch(256, S.rowCapacity(size: grid.size)) { values, row in
            let cells = self.cells
            let b = cells[2 * levels + blue]
            for green in greens {
                let g = cells[levels + green]
                S.prepare(grid, green: g, blue: b, row)
                for red in 0..<256 {
                    let value = S.sample(grid, row, red: cells[red], green: g, blue: b)
                    values[red] = finish(value, red, green, blue, S.self)
                }
                body(green, values)
            }
        }
    }

    /// Entries for 256 arbitrary 8-bit inputs (`r | g << 8 | b << 16`), each evaluated alone with `firstStage`
    /// and `finish` (as `LUTKernel16` does) and packed like a table row: a table's entries up to float rounding.
    package func evaluate(_ indices: UnsafePointer<UInt32>, into out: UnsafeMutablePointer<UInt32>) {
        precondition(levels == 256, "8-bit inputs")
        switch interpolation {
        case .tetrahedral: evaluate(indices, out, Tetrahedral.self)
        case .trilinear: evaluate(indices, out, Trilinear.self)
        case .nearest: evaluate(indices, out, Nearest.self)
        }
    }

    private func evaluate<S: CellSampler>(
        _ indices: UnsafePointer<UInt32>, _ out: UnsafeMutablePointer<UInt32>, _: S.Type
    ) {
        withScratch(256, 1) { values, _ in
            for entry in 0..<256 {
                let index = Int(indices[entry])
                let (red, green, blue) = (index & 255, index >> 8 & 255, index >> 16 & 255)
                values[entry] = finish(firstStage(red, green, blue, S.self), red, green, blue, S.self)
            }
            Self.packRow(values, into: out)
        }
    }

    /// The first table at one input given as codes (0..<levels per channel): its cells from `cells` (exactly the
    /// reference's), blended with `S`. `finish` does the rest; together they are what `LUTKernel16` runs per pixel,
    /// the same arithmetic as a `ColourTable` entry without the row rearrangement.
    @inline(__always)
    package func firstStage<S: CellSampler>(_ red: Int, _ green: Int, _ blue: Int, _: S.Type) -> SIMD4<Float> {
        let (r, g, b) = (cells[red], cells[levels &+ green], cells[2 &* levels &+ blue])
        return S.sample(
            grid, origin: Int(r.origin &+ g.origin &+ b.origin), nearest: Int(r.nearest &+ g.nearest &+ b.nearest),
            SIMD3(r.fraction, g.fraction, b.fraction))
    }

    /// The rest of the look after the first table: the output in lanes 0-2 (0…1, unclamped), 0 in lane 3.
    @inline(__always)
    package func finish<S: CellSampler>(_ value: SIMD4<Float>, _ red: Int, _ green: Int, _ blue: Int, _: S.Type)
        -> SIMD4<Float>
    {
        switch mode {
        case .direct:
            return value
        case .blendOverSeparable:
            let x = SIMD4(separable[red], separable[levels &+ green], separable[2 &* levels &+ blue], 0)
            return x * (1 - intensity) + value * intensity
        case .creativeAfter:
            var creative = value
            switch creative1D {
            case .some(let table): creative = table.apply(creative)
            case .none: break
            }
            switch creative3D {
            case .some(let table): creative = table.apply(creative, S.self)
            case .none: break
            }
            return value * (1 - intensity) + creative * intensity
        }
    }

    /// 256 values, 0…1, → 256 entries `r | g << 8 | b << 16` (bytes R G B 0 in memory): codes clamped and
    /// rounded half away from zero like the reference's `rounded()`, four entries (16 lanes) per step so the
    /// clamps are `maxps`/`cmpps` and the narrowing is `packuswb`.
    ///
    /// Rounding without a float-to-integer conversion (whose range checks would be per lane): adding 1.5·2²³ to a
    /// value in 0…255 leaves it rounded to an integer (to even on ties) in the low mantissa bits; subtracting it
    /// again gives that integer as a float, and where it is exactly 0.5 below the value (a tie rounded down) one is
    /// added. Ties matter: LUTs with short decimal values (0.5 → 127.5) hit them on every grid node.
    @inline(__always)
    package static func packRow(_ row: UnsafeMutablePointer<SIMD4<Float>>, into entries: UnsafeMutablePointer<UInt32>) {
        let values = UnsafeRawPointer(row).assumingMemoryBound(to: SIMD16<Float>.self)
        let out = UnsafeMutableRawPointer(entries)
        let magic: Float = 12_582_912
        for step in 0..<64 {
            var scaled = values[step] * 255
            scaled.replace(with: 0, where: scaled .< 0)
            scaled.replace(with: 255, where: scaled .> 255)
            var codes = (scaled + magic) - magic
            codes.replace(with: codes + 1, where: scaled - codes .>= 0.5)
            let bits = unsafeBitCast(codes + magic, to: SIMD16<UInt32>.self)
            out.storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: bits), toByteOffset: step * 16, as: SIMD16<UInt8>.self)
        }
    }
}

/// A pointer handed to `concurrentPerform` work items (a table being built).
///
/// Unchecked Sendable: the work items write disjoint parts of what it points to (one blue plane, one group of rows,
/// one chunk of codes each), and it is owned by whoever started them and outlives them: `concurrentPerform` returns
/// only when every work item has.
package struct SendablePointer<T>: @unchecked Sendable {
    package let pointer: UnsafeMutablePointer<T>
    package init(_ pointer: UnsafeMutablePointer<T>) { self.pointer = pointer }
}

/// Two scratch rows of `SIMD4<Float>` for one work item, for the length of `body` (on its stack when they fit).
@inline(__always)
private func withScratch<R>(
    _ first: Int, _ second: Int, _ body: (UnsafeMutablePointer<SIMD4<Float>>, UnsafeMutablePointer<SIMD4<Float>>) -> R
) -> R {
    withUnsafeTemporaryAllocation(of: SIMD4<Float>.self, capacity: first) { a in
        withUnsafeTemporaryAllocation(of: SIMD4<Float>.self, capacity: second) { b in
            body(a.baseAddress!, b.baseAddress!)
        }
    }
}

/// `Double` → `Float` without overflowing to infinity (LUT values are finite but may exceed `Float`'s range;
/// anything beyond ±1e30 clamps to 0…255 codes the same way).
private func finiteFloat(_ value: Double) -> Float {
    Float(Swift.max(-1e30, Swift.min(1e30, value)))
}

// MARK: - Sampling

/// A 3D table as `SIMD4<Float>` nodes (the fourth lane unused: one aligned 16-byte load per node), red fastest,
/// with its tetrahedra precomputed. Non-copyable: it owns both tables (a 256³ LUT's nodes are 256 MiB).
package struct NodeGrid: ~Copyable, Sendable {
    private let nodeStorage: TableBuffer<SIMD4<Float>>
    private let cornerStorage: TableBuffer<SIMD2<Int32>>
    package let size: Int
    package let greenStride: Int
    package let blueStride: Int

    package var nodes: UnsafeMutablePointer<SIMD4<Float>> { nodeStorage.base }
    /// For each ordering of the three fractions, coded `(r ≥ g) | (g ≥ b) << 1 | (r ≥ b) << 2`: the offsets from
    /// the cell origin of the tetrahedron's second and third corners (see `Tetrahedral`). Two codes are
    /// impossible orderings and hold a valid tetrahedron anyway.
    package var corners: UnsafeMutablePointer<SIMD2<Int32>> { cornerStorage.base }
    package var byteCount: Int { nodeStorage.byteCount + cornerStorage.byteCount }

    /// Memory for the `size³` nodes of a grid, filled by the caller and handed to `init(size:nodes:)`.
    package static func allocateNodes(size: Int) throws -> TableBuffer<SIMD4<Float>> {
        try TableBuffer(count: size * size * size, for: "the look's \(size)³ LUT nodes")
    }

    /// A grid over `nodes` (`size³` of them, filled), which it now owns.
    package init(size: Int, nodes: consuming TableBuffer<SIMD4<Float>>) throws {
        precondition(nodes.count == size * size * size, "a grid of size³ nodes")
        self.size = size
        nodeStorage = nodes
        greenStride = size
        blueStride = size * size
        cornerStorage = try TableBuffer(count: 8, for: "the look's tetrahedra")
        let corners = cornerStorage.base
        let (r, g, b) = (1, size, size * size)
        for code in 0..<8 {
            let (redOverGreen, greenOverBlue, redOverBlue) = (code & 1 != 0, code & 2 != 0, code & 4 != 0)
            // The largest fraction's axis, ties to the lower axis; the smallest's, ties to the higher axis: so the
            // two differ even when all three fractions are equal.
            let high = redOverGreen ? (redOverBlue ? r : b) : (greenOverBlue ? g : b)
            var low = greenOverBlue ? (redOverBlue ? b : r) : (redOverGreen ? g : r)
            if low == high { low = high == r ? b : r }  // the impossible codes
            corners[code] = SIMD2(Int32(high), Int32(r + g + b - low))
        }
    }

    package init(_ table: CubeLUT.Table3D) throws {
        let storage = try Self.allocateNodes(size: table.size)
        let (nodes, count) = (storage.base, storage.count)
        table.values.withUnsafeBufferPointer { values in
            for node in 0..<count {
                nodes[node] = SIMD4(
                    finiteFloat(values[node * 3]), finiteFloat(values[node * 3 + 1]), finiteFloat(values[node * 3 + 2]),
                    0)
            }
        }
        try self.init(size: table.size, nodes: storage)
    }
}

/// One interpolation method on a `NodeGrid`, given a cell's origin node, its nearest node and the fractions across
/// it: how the creative LUT is sampled at arbitrary values. The formulas are the reference's
/// (LUTInterpolation.swift).
package protocol CellSampler {
    static func sample(_ grid: borrowing NodeGrid, origin: Int, nearest: Int, _ fraction: SIMD3<Float>) -> SIMD4<Float>
}

/// The same method for filling a table row by row: with the green and blue cells fixed along a row, the
/// interpolation is an affine function of the red fraction within each red cell (per tetrahedron for
/// tetrahedral), so `prepare` computes those functions once per row (≈ 32 cells) and `sample` evaluates one for
/// each of the row's 256 entries: a multiply-add instead of the four- or eight-node blend. The result is the
/// reference's formula rearranged, equal up to float rounding.
package protocol RowSampler: CellSampler {
    /// How many vectors `prepare` writes for a table of `size` nodes per axis.
    static func rowCapacity(size: Int) -> Int
    static func prepare(
        _ grid: borrowing NodeGrid, green: ColourTableBuilder.Cell, blue: ColourTableBuilder.Cell,
        _ row: UnsafeMutablePointer<SIMD4<Float>>)
    static func sample(
        _ grid: borrowing NodeGrid, _ row: UnsafeMutablePointer<SIMD4<Float>>, red: ColourTableBuilder.Cell,
        green: ColourTableBuilder.Cell, blue: ColourTableBuilder.Cell
    ) -> SIMD4<Float>
}

package enum Nearest: RowSampler {
    @inline(__always)
    package static func sample(
        _ grid: borrowing NodeGrid, origin: Int, nearest: Int, _ fraction: SIMD3<Float>
    ) -> SIMD4<Float> {
        grid.nodes[nearest]
    }

    package static func rowCapacity(size: Int) -> Int { 1 }

    @inline(__always)
    package static func prepare(
        _ grid: borrowing NodeGrid, green: ColourTableBuilder.Cell, blue: ColourTableBuilder.Cell,
        _ row: UnsafeMutablePointer<SIMD4<Float>>
    ) {}

    @inline(__always)
    package static func sample(
        _ grid: borrowing NodeGrid, _ row: UnsafeMutablePointer<SIMD4<Float>>, red: ColourTableBuilder.Cell,
        green: ColourTableBuilder.Cell, blue: ColourTableBuilder.Cell
    ) -> SIMD4<Float> {
        grid.nodes[Int(red.nearest &+ green.nearest &+ blue.nearest)]
    }
}

@inline(__always)
private func mix(_ a: SIMD4<Float>, _ c: SIMD4<Float>, _ f: Float) -> SIMD4<Float> { a * (1 - f) + c * f }

package enum Trilinear: RowSampler {
    @inline(__always)
    package static func sample(
        _ grid: borrowing NodeGrid, origin o: Int, nearest: Int, _ f: SIMD3<Float>
    ) -> SIMD4<Float> {
        let (n, g, b) = (grid.nodes, grid.greenStride, grid.blueStride)
        let c00 = mix(n[o], n[o + 1], f.x)
        let c10 = mix(n[o + g], n[o + g + 1], f.x)
        let c01 = mix(n[o + b], n[o + b + 1], f.x)
        let c11 = mix(n[o + g + b], n[o + g + b + 1], f.x)
        return mix(mix(c00, c10, f.y), mix(c01, c11, f.y), f.z)
    }

    package static func rowCapacity(size: Int) -> Int { size }

    /// `row[i]`: the green-blue blend at red node i. Trilinear is multilinear, so blending green and blue first
    /// and red last is the same function as the reference's red-first order.
    @inline(__always)
    package static func prepare(
        _ grid: borrowing NodeGrid, green: ColourTableBuilder.Cell, blue: ColourTableBuilder.Cell,
        _ row: UnsafeMutablePointer<SIMD4<Float>>
    ) {
        let (g, b) = (grid.greenStride, grid.blueStride)
        let n = grid.nodes + Int(green.origin &+ blue.origin)
        for i in 0..<grid.size {
            row[i] = mix(
                mix(n[i], n[i + g], green.fraction), mix(n[i + b], n[i + g + b], green.fraction), blue.fraction)
        }
    }

    @inline(__always)
    package static func sample(
        _ grid: borrowing NodeGrid, _ row: UnsafeMutablePointer<SIMD4<Float>>, red: ColourTableBuilder.Cell,
        green: ColourTableBuilder.Cell, blue: ColourTableBuilder.Cell
    ) -> SIMD4<Float> {
        let i = Int(red.origin)
        return mix(row[i], row[i + 1], red.fraction)
    }
}

package enum Tetrahedral: RowSampler {
    /// The reference's six branches as one formula: with the fractions sorted, `high ≥ middle ≥ low` on axes
    /// A, B, C, the result is `c000·(1 - high) + c[A]·(high - middle) + c[A+B]·(middle - low) + c111·low`. The
    /// corners come from `grid.corners`, indexed by the three comparisons, instead of branches. Ties between
    /// fractions may pick another tetrahedron than the reference: their shared face gives the same value.
    @inline(__always)
    package static func sample(
        _ grid: borrowing NodeGrid, origin o: Int, nearest: Int, _ f: SIMD3<Float>
    ) -> SIMD4<Float> {
        let (fr, fg, fb) = (f.x, f.y, f.z)
        let code = (fr >= fg ? 1 : 0) | (fg >= fb ? 2 : 0) | (fr >= fb ? 4 : 0)
        let corner = grid.corners[code]
        let high = max(fr, max(fg, fb))
        let low = min(fr, min(fg, fb))
        let middle = max(min(fr, fg), min(max(fr, fg), fb))
        let n = grid.nodes + o
        return n[0] * (1 - high) + n[Int(corner.x)] * (high - middle) + n[Int(corner.y)] * (middle - low)
            + n[1 &+ grid.greenStride &+ grid.blueStride] * low
    }

    package static func rowCapacity(size: Int) -> Int { (size - 1) * 6 }

    /// With green and blue fixed (`high`/`low` their larger/smaller fraction, M the axis of the larger), the red
    /// fraction `f` falls in one of three orderings, and in each the tetrahedral blend is `P + Q·f`:
    ///
    /// - f ≥ high (red, M, other): `c000·(1-f) + c[r]·(f-high) + c[r+M]·(high-low) + c111·low`
    /// - high > f ≥ low (M, red, other): `c000·(1-high) + c[M]·(high-f) + c[r+M]·(f-low) + c111·low`
    /// - f < low (M, other, red): `c000·(1-high) + c[M]·(high-low) + c[g+b]·(low-f) + c111·f`
    ///
    /// `row[6i + 2k]`, `row[6i + 2k + 1]` are P and Q for red cell i and ordering k. At the boundaries the
    /// neighbouring orderings agree (shared faces), so ties may go either way.
    @inline(__always)
    package static func prepare(
        _ grid: borrowing NodeGrid, green: ColourTableBuilder.Cell, blue: ColourTableBuilder.Cell,
        _ row: UnsafeMutablePointer<SIMD4<Float>>
    ) {
        let (g, b) = (grid.greenStride, grid.blueStride)
        let greenHigher = green.fraction >= blue.fraction
        let m = greenHigher ? g : b
        let high = greenHigher ? green.fraction : blue.fraction
        let low = greenHigher ? blue.fraction : green.fraction
        var n = grid.nodes + Int(green.origin &+ blue.origin)
        var out = row
        for _ in 0..<grid.size - 1 {
            let (c000, cR, cM, cRM, cGB, c111) = (n[0], n[1], n[m], n[1 + m], n[g + b], n[1 + g + b])
            let tail = cRM * (high - low) + c111 * low
            out[0] = c000 - cR * high + tail
            out[1] = cR - c000
            let head = c000 * (1 - high)
            out[2] = head + cM * high + (c111 - cRM) * low
            out[3] = cRM - cM
            out[4] = head + cM * (high - low) + cGB * low
            out[5] = c111 - cGB
            n += 1
            out += 6
        }
    }

    @inline(__always)
    package static func sample(
        _ grid: borrowing NodeGrid, _ row: UnsafeMutablePointer<SIMD4<Float>>, red: ColourTableBuilder.Cell,
        green: ColourTableBuilder.Cell, blue: ColourTableBuilder.Cell
    ) -> SIMD4<Float> {
        let f = red.fraction
        let high = max(green.fraction, blue.fraction)
        let low = min(green.fraction, blue.fraction)
        let ordering = f >= high ? 0 : (f >= low ? 2 : 4)
        let affine = row + (Int(red.origin) &* 6 &+ ordering)
        return affine[0] + affine[1] * f
    }
}

// MARK: - Float tables for the creative stage

/// Where `value` falls on axes of `size` nodes over a domain, in `Float`: the reference `GridCell` without its
/// node snapping (which only matters to nearest, and this path never samples nearest, see `ColourTableBuilder`).
@inline(__always)
private func floatCells(_ value: SIMD4<Float>, minimum: SIMD4<Float>, inverseRange: SIMD4<Float>, size: Int)
    -> (index: SIMD4<Int32>, fraction: SIMD4<Float>)
{
    let top = Float(size - 1)
    var index = SIMD4<Int32>()
    var fraction = SIMD4<Float>()
    for channel in 0..<3 {
        // Below the domain or NaN → 0 (`max` returns its second argument for NaN), above → 1.
        let unit = min(max((value[channel] - minimum[channel]) * inverseRange[channel], 0), 1)
        let position = unit * top
        let cell = min(Int32(position), Int32(size - 2))
        index[channel] = cell
        fraction[channel] = position - Float(cell)
    }
    return (index, fraction)
}

/// A `Table1D` as `Float`, same order (`[r0, g0, b0, r1, …]`). Non-copyable: it owns the values.
package struct FloatTable1D: ~Copyable, Sendable {
    private let storage: TableBuffer<Float>
    package let size: Int
    package let minimum: SIMD4<Float>
    package let inverseRange: SIMD4<Float>

    package var values: UnsafeMutablePointer<Float> { storage.base }
    package var byteCount: Int { storage.byteCount }

    package init(_ table: CubeLUT.Table1D) throws {
        size = table.size
        storage = try TableBuffer(count: size * 3, for: "the look's 1D table")
        let values = storage.base
        for index in 0..<size * 3 { values[index] = finiteFloat(table.values[index]) }
        minimum = SIMD4(
            finiteFloat(table.domainMin.x), finiteFloat(table.domainMin.y), finiteFloat(table.domainMin.z), 0)
        let inverse = 1 / (table.domainMax - table.domainMin)
        inverseRange = SIMD4(finiteFloat(inverse.x), finiteFloat(inverse.y), finiteFloat(inverse.z), 0)
    }

    @inline(__always)
    package func apply(_ value: SIMD4<Float>) -> SIMD4<Float> {
        let (index, fraction) = floatCells(value, minimum: minimum, inverseRange: inverseRange, size: size)
        var out = SIMD4<Float>()
        for channel in 0..<3 {
            let low = values[Int(index[channel]) * 3 + channel]
            let high = values[(Int(index[channel]) + 1) * 3 + channel]
            out[channel] = low * (1 - fraction[channel]) + high * fraction[channel]
        }
        return out
    }
}

/// A `Table3D` as a `NodeGrid` with its domain, sampled at arbitrary values. Non-copyable, like its grid.
package struct FloatTable3D: ~Copyable, Sendable {
    package let grid: NodeGrid
    package let minimum: SIMD4<Float>
    package let inverseRange: SIMD4<Float>

    package init(_ table: CubeLUT.Table3D) throws {
        grid = try NodeGrid(table)
        minimum = SIMD4(
            finiteFloat(table.domainMin.x), finiteFloat(table.domainMin.y), finiteFloat(table.domainMin.z), 0)
        let inverse = 1 / (table.domainMax - table.domainMin)
        inverseRange = SIMD4(finiteFloat(inverse.x), finiteFloat(inverse.y), finiteFloat(inverse.z), 0)
    }

    @inline(__always)
    package func apply<S: CellSampler>(_ value: SIMD4<Float>, _: S.Type) -> SIMD4<Float> {
        let size = grid.size
        let (index, fraction) = floatCells(value, minimum: minimum, inverseRange: inverseRange, size: size)
        let origin = Int(index.x) + size * (Int(index.y) + size * Int(index.z))
        var near = index
        near.replace(with: index &+ 1, where: fraction .>= 0.5)
        let nearest = Int(near.x) + size * (Int(near.y) + size * Int(near.z))
        return S.sample(grid, origin: origin, nearest: nearest, SIMD3(fraction.x, fraction.y, fraction.z))
    }
}
