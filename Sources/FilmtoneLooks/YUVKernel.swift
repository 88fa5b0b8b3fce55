import Dispatch
import Foundation
import Synchronization

// MARK: - Colorimetry

/// How 8-bit Y'CbCr codes map to 8-bit R'G'B' codes: the matrix (its Kr and Kb) and the range, as GStreamer's
/// `GstVideoColorimetry` gives them (`matrix`, `range`). Limited range: Y' 16…235, Cb/Cr 16…240 around 128; full
/// range: all three 0…255, chroma around 128 with a scale of 255 (GStreamer's `gst_video_color_range_offsets`).
public struct YUVColorimetry: Equatable, Sendable, CustomStringConvertible {
    public var kr: Double
    public var kb: Double
    public var fullRange: Bool

    public init(kr: Double, kb: Double, fullRange: Bool) {
        self.kr = kr
        self.kb = kb
        self.fullRange = fullRange
    }

    /// BT.601, limited range (GStreamer's default for YUV frames up to 576 lines).
    public static let bt601 = YUVColorimetry(kr: 0.299, kb: 0.114, fullRange: false)
    /// BT.709, limited range (GStreamer's default above 576 lines, below 2160).
    public static let bt709 = YUVColorimetry(kr: 0.2126, kb: 0.0722, fullRange: false)
    /// BT.2020 (non-constant luminance), limited range (GStreamer's default from 2160 lines).
    public static let bt2020 = YUVColorimetry(kr: 0.2627, kb: 0.0593, fullRange: false)

    /// The same matrix in the other range.
    public func fullRange(_ full: Bool) -> YUVColorimetry { YUVColorimetry(kr: kr, kb: kb, fullRange: full) }

    /// What GStreamer assumes for YUV caps without a usable matrix (`gst_video_info_from_caps`'s default
    /// colorimetry): BT.2020 from 2160 lines, BT.709 above 576, BT.601 otherwise; limited range.
    public static func gstreamerDefault(height: Int) -> YUVColorimetry {
        height >= 2160 ? .bt2020 : (height > 576 ? .bt709 : .bt601)
    }

    public var description: String {
        let name =
            [(YUVColorimetry.bt601, "bt601"), (.bt709, "bt709"), (.bt2020, "bt2020")].first {
                $0.0.kr == kr && $0.0.kb == kb
            }?.1 ?? "Kr \(kr) Kb \(kb)"
        return "\(name) \(fullRange ? "full" : "limited") range"
    }

    package var kg: Double { 1 - kr - kb }
    /// Code units per unit of Y' (219 limited, 255 full) relative to R'G'B' codes (255), and the same for chroma.
    package var lumaScale: Double { fullRange ? 1 : 219.0 / 255 }
    package var chromaScale: Double { fullRange ? 1 : 224.0 / 255 }
    package var lumaOffset: Double { fullRange ? 0 : 16 }

    /// Y'CbCr codes → R'G'B' codes (0…255 scale, unrounded, unclamped).
    public func rgb(y: Double, u: Double, v: Double) -> SIMD3<Double> {
        let luma = (y - lumaOffset) / lumaScale
        let (pb, pr) = ((u - 128) / chromaScale, (v - 128) / chromaScale)
        let red = luma + 2 * (1 - kr) * pr
        let blue = luma + 2 * (1 - kb) * pb
        let green = luma - (2 * kb * (1 - kb) * pb + 2 * kr * (1 - kr) * pr) / kg
        return SIMD3(red, green, blue)
    }

    /// R'G'B' codes (0…255 scale) → Y'CbCr codes (unrounded, unclamped).
    public func yuv(rgb: SIMD3<Double>) -> SIMD3<Double> {
        let luma = kr * rgb.x + kg * rgb.y + kb * rgb.z
        return SIMD3(
            lumaOffset + luma * lumaScale, 128 + (rgb.z - luma) / (2 * (1 - kb)) * chromaScale,
            128 + (rgb.x - luma) / (2 * (1 - kr)) * chromaScale)
    }
}

// MARK: - Frames

/// The planes of an 8-bit 4:2:0 frame, walked by stride: I420 (three planes) or NV12 (Y, then Cb and Cr
/// interleaved: `chromaStep` 2, `cr` one byte after `cb`). Not Sendable, like the pointers it holds: whoever
/// mapped the frame decides which thread writes it (`YUVKernel.apply` splits it into disjoint bands itself).
public struct YUV420Planes {
    public var luma: UnsafeMutablePointer<UInt8>
    public var lumaStride: Int
    public var cb: UnsafeMutablePointer<UInt8>
    public var cr: UnsafeMutablePointer<UInt8>
    /// Bytes between rows of the Cb plane (NV12: of the interleaved plane).
    public var chromaStride: Int
    /// Bytes between rows of the Cr plane: `chromaStride` for NV12, I420's third plane's own stride.
    public var crStride: Int
    /// Bytes between horizontally adjacent chroma samples of one plane: 1 (I420) or 2 (NV12).
    public var chromaStep: Int

    public static func i420(
        luma: UnsafeMutablePointer<UInt8>, lumaStride: Int, cb: UnsafeMutablePointer<UInt8>,
        cr: UnsafeMutablePointer<UInt8>, chromaStride: Int, crStride: Int? = nil
    ) -> YUV420Planes {
        YUV420Planes(
            luma: luma, lumaStride: lumaStride, cb: cb, cr: cr, chromaStride: chromaStride,
            crStride: crStride ?? chromaStride, chromaStep: 1)
    }

    public static func nv12(
        luma: UnsafeMutablePointer<UInt8>, lumaStride: Int, chroma: UnsafeMutablePointer<UInt8>, chromaStride: Int
    ) -> YUV420Planes {
        YUV420Planes(
            luma: luma, lumaStride: lumaStride, cb: chroma, cr: chroma + 1, chromaStride: chromaStride,
            crStride: chromaStride, chromaStep: 2)
    }
}

// MARK: - Kernel

/// Applies a `Look` to 8-bit 4:2:0 frames (I420, NV12) in place, without converting them to RGB and back.
///
/// **Table.** A row is the 256 Y' entries of one (U, V) pair; entry `y` of the pair's row holds `y' | u' << 8 |
/// v' << 16`: the pixel converted to R'G'B' exactly as a conversion to packed RGB would (the colorimetry's matrix,
/// rounded to nearest code, clamped), looked up in the look (each entry evaluated alone, `LookEvaluator`, the same
/// arithmetic as the RGB kernel's table up to float rounding), converted back, rounded and clamped. Room for all
/// 2¹⁶ rows, 4 bytes an entry: **64 MiB of address space**.
///
/// **Rows on demand, packed.** Before each frame, one pass over its chroma samples finds the pairs whose rows are
/// still empty, and those rows are filled (over the cores when there are many) in the next free places of the
/// table, in the order frames first use them; a 256 KiB index gives each pair's row. Memory is taken only for the
/// rows frames use, four to a 4 KiB page (the table is advised against huge pages), and there is no R'G'B' table at
/// all. The pairs a video uses are scattered over the (U, V) plane: placed at `u << 8 | v << 16`, `clip1080`'s
/// 4520 rows touched 2159 pages (8.4 MiB) where packed they take 4.4 MiB. Before, release builds built the whole R'G'B' table and then the
/// whole Y'CbCr one (≈ 155 ms, 128 MiB at once, 64 MiB held: an export's peak was that much above ffmpeg's, issue
/// 30); a video's colours use a fraction of the rows (docs/PERFORMANCE.md, "Where an export's memory goes").
///
/// **Frames.** Each 2×2 block shares one (U, V): the four luma samples are looked up with it (four loads from one
/// 1 KiB row of the table) and written back; the block's U', V' are the rounded mean of the four results. Odd
/// widths and heights give 1- or 2-pixel blocks at the right and bottom edges, averaged over what is there.
///
/// Sendable: rows are written under `LazyRows`'s lock before the frame that needs them reads them, and never again,
/// so one kernel may run frames on several threads at once.
public final class YUVKernel: Sendable {
    public let colorimetry: YUVColorimetry
    public let strategy: LUTKernel.Strategy
    /// Address space the kernel reserves for its table: 0 (identity) or 64 MiB (memory is taken as rows fill).
    public var tableByteCount: Int { entries == nil ? 0 : ColourTable.byteCount }

    /// The 2²⁴ entries (nil for an identity look), freed with the kernel: address space reserved whole, memory
    /// taken as rows are filled.
    private let table: TableBuffer<UInt32>?
    /// What fills the rows frames use (nil for an identity look).
    private let lazyRows: LazyRows?

    /// The kernel for `look`: its (U, V) rows are filled as frames use them, each entry evaluated from the look
    /// directly (`LookEvaluator`), with no R'G'B' table. Throws `INTERNAL` when the table's address space cannot be
    /// had ("cannot allocate 64 MiB for the look's Y'CbCr table").
    public convenience init(look: Look, colorimetry: YUVColorimetry) throws {
        let strategy = LUTKernel.strategy(for: look)
        let source: RGBSource? =
            switch strategy {
            case .identity: nil
            case .perChannel: .perChannel(LUTKernel.perChannelTable(look))
            case .fullTable: .evaluator(try LookEvaluator(look: look))
            }
        try self.init(source: source, colorimetry: colorimetry, strategy: strategy)
    }

    /// The kernel whose rows are filled from `rgb`'s results (its table, when it has one).
    public convenience init(rgb: LUTKernel, colorimetry: YUVColorimetry) throws {
        let source: RGBSource? =
            switch rgb.plan {
            case .identity: nil
            case .perChannel(let table): .perChannel(table)
            case .fullTable(let table): .table(table)
            }
        try self.init(source: source, colorimetry: colorimetry, strategy: rgb.strategy)
    }

    private init(source: RGBSource?, colorimetry: YUVColorimetry, strategy: LUTKernel.Strategy) throws {
        self.colorimetry = colorimetry
        self.strategy = strategy
        guard let source else {
            table = nil
            lazyRows = nil
            return
        }
        let table = try ColourTable.allocateEntries(for: "the look's Y'CbCr table", sparse: true)
        self.table = consume table
        lazyRows = LazyRows(YUVRowBuilder(colorimetry: colorimetry, source: source))
    }

    /// The table's entries while the kernel lives; nil for an identity look.
    private var entries: UnsafeMutablePointer<UInt32>? {
        switch table {
        case .some(let table): return table.base
        case .none: return nil
        }
    }

    /// Bytes of the table in memory now: the pages of the rows filled so far (tests and benchmarks).
    package var residentTableBytes: Int {
        switch table {
        case .some(let table): return table.residentByteCount
        case .none: return 0
        }
    }

    /// The table's entry for one input (tests and benchmarks; its row is filled first).
    package func entry(y: Int, u: Int, v: Int) -> SIMD3<UInt8> {
        guard let entries, let lazyRows else { return SIMD3(UInt8(y), UInt8(u), UInt8(v)) }
        lazyRows.fill(keys: [v << 8 | u], entries)
        let packed = entries[Int(lazyRows.rowStarts[v << 8 | u]) | y]
        return SIMD3(
            UInt8(truncatingIfNeeded: packed), UInt8(truncatingIfNeeded: packed >> 8),
            UInt8(truncatingIfNeeded: packed >> 16))
    }

    /// Applies the look to a `width`×`height` 4:2:0 frame in place. Only the samples of the picture are read and
    /// written (padding between rows, and NV12's other chroma bytes, never). Large frames are split into bands of
    /// block rows across the cores, like `LUTKernel.apply`.
    public func apply(to planes: YUV420Planes, width: Int, height: Int) {
        precondition(width >= 0 && height >= 0, "negative frame size")
        guard let entries, width > 0, height > 0 else { return }
        let (chromaWidth, chromaHeight) = ((width + 1) / 2, (height + 1) / 2)
        precondition(height <= 1 || planes.lumaStride >= width, "luma stride shorter than a row")
        precondition(
            chromaHeight <= 1
                || min(planes.chromaStride, planes.crStride) >= (chromaWidth - 1) * planes.chromaStep + 1,
            "chroma stride shorter than a row")
        guard let lazyRows else { return }
        lazyRows.fill(usedBy: planes, chromaWidth: chromaWidth, chromaHeight: chromaHeight, entries)
        let frame = YUVBlocks(
            planes: planes, width: width, height: height, entries: entries, rowStarts: lazyRows.rowStarts)
        let interleaved = planes.chromaStep != 1
        LUTKernel.forEachBand(height: chromaHeight, pixels: width * height) { rows in
            if interleaved { frame.map(rows: rows, step: 2) } else { frame.map(rows: rows, step: 1) }
        }
    }

    // MARK: - Rows on demand

    /// The (U, V) rows filled so far, one bit each (`v << 8 | u`), where each is in the table, and what fills the
    /// others.
    ///
    /// Unchecked Sendable: `rowStarts` is written under `filled`'s lock, each pair's entry once, before the frame
    /// that needs it reads it (that frame's `fill` took the lock after the write); other frames read only the entries
    /// of their own pairs, also written before.
    private final class LazyRows: @unchecked Sendable {
        let builder: YUVRowBuilder
        /// Held while rows are written, so two frames on two threads never fill the same row at once, and a frame
        /// finds its rows complete. `next`: the first free row of the table.
        let filled = Mutex((bits: [UInt64](repeating: 0, count: 1024), next: 0))
        /// Where pair `v << 8 | u`'s row starts in the table (an entry index: the row's place × 256); 0 until filled.
        let rowStarts: UnsafeMutablePointer<UInt32>

        init(_ builder: YUVRowBuilder) {
            self.builder = builder
            rowStarts = .allocate(capacity: 1 << 16)
            rowStarts.initialize(repeating: 0, count: 1 << 16)
        }

        deinit { rowStarts.deallocate() }

        /// Fills the rows of the frame's (U, V) pairs that are still empty: one pass over the chroma samples
        /// (a pair equal to the one before it is not looked up again), then the missing rows, over the cores when
        /// there are many.
        func fill(
            usedBy planes: YUV420Planes, chromaWidth: Int, chromaHeight: Int, _ entries: UnsafeMutablePointer<UInt32>
        ) {
            filled.withLock { filled in
                var missing: [Int] = []
                filled.bits.withUnsafeMutableBufferPointer { bits in
                    let step = planes.chromaStep
                    var last = -1
                    for row in 0..<chromaHeight {
                        let cb = planes.cb + planes.chromaStride * row
                        let cr = planes.cr + planes.crStride * row
                        for column in 0..<chromaWidth {
                            let key = Int(cr[column &* step]) << 8 | Int(cb[column &* step])
                            if key == last { continue }
                            last = key
                            let bit = UInt64(1) << (key & 63)
                            if bits[key >> 6] & bit == 0 {
                                bits[key >> 6] |= bit
                                missing.append(key)
                            }
                        }
                    }
                }
                fillRows(missing, entries, next: &filled.next)
            }
        }

        func fill(keys: [Int], _ entries: UnsafeMutablePointer<UInt32>) {
            filled.withLock { filled in
                var missing: [Int] = []
                for key in keys where filled.bits[key >> 6] & (1 << (key & 63)) == 0 {
                    filled.bits[key >> 6] |= 1 << (key & 63)
                    missing.append(key)
                }
                fillRows(missing, entries, next: &filled.next)
            }
        }

        /// Rows `keys` (`v << 8 | u`), placed from row `next` on, in chunks of 64 over the cores when there are
        /// more than 64.
        private func fillRows(_ keys: [Int], _ entries: UnsafeMutablePointer<UInt32>, next: inout Int) {
            for key in keys {
                rowStarts[key] = UInt32(next << 8)
                next += 1
            }
            let chunk = 64
            let shared = SendablePointer(entries)
            let starts = SendablePointer(rowStarts)
            let builder = self.builder
            keys.withUnsafeBufferPointer { keys in
                nonisolated(unsafe) let keys = keys
                let work: @Sendable (Int) -> Void = { part in
                    withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 512) { scratch in
                        for key in keys[(part * chunk)..<min(keys.count, (part + 1) * chunk)] {
                            builder.fillRow(
                                u: key & 255, v: key >> 8, into: shared.pointer + Int(starts.pointer[key]),
                                scratch: scratch.baseAddress!)
                        }
                    }
                }
                let parts = (keys.count + chunk - 1) / chunk
                if parts <= 1 {
                    if parts == 1 { work(0) }
                } else {
                    DispatchQueue.concurrentPerform(iterations: parts, execute: work)
                }
            }
        }
    }
}

// MARK: - Building

/// Where a (U, V) row's R'G'B' results come from: the RGB kernel's 768-byte per-channel table, its full table, or
/// the look evaluated entry by entry.
private enum RGBSource: Sendable {
    case perChannel([UInt8])
    case table(ColourTable)
    case evaluator(LookEvaluator)
}

/// Fills one (U, V) row of 256 entries in three batches: Y'CbCr → R'G'B' indices, the RGB look's results for
/// them, back to Y'CbCr. Conversions are in 16.16 fixed point from coefficients computed in `Double` (so rounding
/// differs from `Double` only within a few thousandths of a half code).
private struct YUVRowBuilder: Sendable {
    package static let one = Int32(1 << 16)
    package let source: RGBSource
    /// Y'CbCr → R'G'B': `luma[y]` (with the rounding half), `redV`, `greenU`, `greenV`, `blueU` per chroma code.
    package let toRGB: [Int32]
    /// R'G'B' → Y'CbCr: the weights of R, G and B in Y', Cb and Cr, each splatted over 8 lanes, and the offsets
    /// with the rounding half.
    package let lumaWeights: (SIMD8<Int32>, SIMD8<Int32>, SIMD8<Int32>)
    package let cbWeights: (SIMD8<Int32>, SIMD8<Int32>, SIMD8<Int32>)
    package let crWeights: (SIMD8<Int32>, SIMD8<Int32>, SIMD8<Int32>)
    package let offsets: (SIMD8<Int32>, SIMD8<Int32>, SIMD8<Int32>)

    package init(colorimetry c: YUVColorimetry, source: RGBSource) {
        self.source = source
        func fixed(_ value: Double) -> Int32 { Int32((value * Double(Self.one)).rounded()) }
        var toRGB = [Int32](repeating: 0, count: 5 * 256)
        for code in 0..<256 {
            let chroma = (Double(code) - 128) / c.chromaScale
            toRGB[code] = fixed((Double(code) - c.lumaOffset) / c.lumaScale + 0.5)
            toRGB[256 + code] = fixed(2 * (1 - c.kr) * chroma)
            toRGB[512 + code] = fixed(-2 * c.kb * (1 - c.kb) / c.kg * chroma)
            toRGB[768 + code] = fixed(-2 * c.kr * (1 - c.kr) / c.kg * chroma)
            toRGB[1024 + code] = fixed(2 * (1 - c.kb) * chroma)
        }
        let (kr, kg, kb) = (c.kr, c.kg, c.kb)
        let (cbScale, crScale) = (c.chromaScale / (2 * (1 - kb)), c.chromaScale / (2 * (1 - kr)))
        func splat(_ value: Double) -> SIMD8<Int32> { SIMD8(repeating: fixed(value)) }
        lumaWeights = (splat(kr * c.lumaScale), splat(kg * c.lumaScale), splat(kb * c.lumaScale))
        cbWeights = (splat(-kr * cbScale), splat(-kg * cbScale), splat((1 - kb) * cbScale))
        crWeights = (splat((1 - kr) * crScale), splat(-kg * crScale), splat(-kb * crScale))
        offsets = (splat(c.lumaOffset + 0.5), splat(128.5), splat(128.5))
        self.toRGB = toRGB
    }

    /// Row (u, v), 256 entries at `row`; `scratch` holds 512 words.
    package func fillRow(
        u: Int, v: Int, into row: UnsafeMutablePointer<UInt32>, scratch: UnsafeMutablePointer<UInt32>
    ) {
        let (indices, results) = (scratch, scratch + 256)
        rgbIndices(u: u, v: v, into: indices)
        switch source {
        case .table(let table) where table.isFilled:
            for y in 0..<256 { results[y] = table.entries[Int(indices[y])] }
        case .table(let table):
            table.entries(at: indices, into: results)
        case .evaluator(let evaluator):
            evaluator.evaluate(indices, into: results)
        case .perChannel(let table):
            table.withUnsafeBufferPointer { t in
                for y in 0..<256 {
                    let index = indices[y]
                    results[y] =
                        UInt32(t[Int(index & 255)]) | UInt32(t[256 + Int(index >> 8 & 255)]) << 8
                        | UInt32(t[512 + Int(index >> 16)]) << 16
                }
            }
        }
        convertBack(results, into: row)
    }

    /// The R'G'B' table indices of row (u, v): 256 words.
    private func rgbIndices(u: Int, v: Int, into indices: UnsafeMutablePointer<UInt32>) {
        toRGB.withUnsafeBufferPointer { t in
            let (redV, greenUV, blueU) = (t[256 + v], t[512 + u] &+ t[768 + v], t[1024 + u])
            for y in 0..<256 {
                let luma = t[y]
                let red = clampCode((luma &+ redV) >> 16)
                let green = clampCode((luma &+ greenUV) >> 16)
                let blue = clampCode((luma &+ blueU) >> 16)
                indices[y] = red | green << 8 | blue << 16
            }
        }
    }

    /// 256 R'G'B' results → one row of Y'CbCr entries, 8 at a time in `Int32` lanes (multiplies rather than
    /// per-code tables: nine table loads an entry were the build's largest cost after the RGB table itself).
    private func convertBack(_ results: UnsafeMutablePointer<UInt32>, into row: UnsafeMutablePointer<UInt32>) {
        let (wy, wu, wv) = (lumaWeights, cbWeights, crWeights)
        let (offsetY, offsetU, offsetV) = offsets
        let (low, high) = (SIMD8<Int32>(repeating: 0), SIMD8<Int32>(repeating: 255))
        let input = UnsafeRawPointer(results)
        let output = UnsafeMutableRawPointer(row)
        for chunk in 0..<32 {
            let rgb = SIMD8<Int32>(
                truncatingIfNeeded: input.loadUnaligned(fromByteOffset: chunk * 32, as: SIMD8<UInt32>.self))
            let (r, g, b) = (rgb & 255, rgb &>> 8 & 255, rgb &>> 16 & 255)
            let luma = ((r &* wy.0 &+ g &* wy.1 &+ b &* wy.2 &+ offsetY) &>> 16).clamped(
                lowerBound: low, upperBound: high)
            let cb = ((r &* wu.0 &+ g &* wu.1 &+ b &* wu.2 &+ offsetU) &>> 16).clamped(
                lowerBound: low, upperBound: high)
            let cr = ((r &* wv.0 &+ g &* wv.1 &+ b &* wv.2 &+ offsetV) &>> 16).clamped(
                lowerBound: low, upperBound: high)
            output.storeBytes(
                of: SIMD8<UInt32>(truncatingIfNeeded: luma | cb &<< 8 | cr &<< 16), toByteOffset: chunk * 32,
                as: SIMD8<UInt32>.self)
        }
    }
}

@inline(__always)
private func clampCode(_ value: Int32) -> UInt32 { UInt32(min(max(value, 0), 255)) }

// MARK: - Block loop

/// One frame as the block loop sees it; bands (disjoint ranges of chroma rows, so of luma row pairs) run on
/// other threads with their own copy.
///
/// Unchecked Sendable: no two bands write the same sample (each owns its chroma rows and the luma rows under them),
/// all of them only read `entries`, and the planes outlive them (`apply` returns only when every band has).
private struct YUVBlocks: @unchecked Sendable {
    package let planes: YUV420Planes
    package let width: Int
    package let height: Int
    package let entries: UnsafeMutablePointer<UInt32>
    /// Where each (U, V) pair's row starts in `entries` (`LazyRows.rowStarts`: every pair of the frame is filled).
    package let rowStarts: UnsafeMutablePointer<UInt32>

    /// Chroma rows `rows`: the luma row pairs under them. `step` is the chroma step, passed as a constant so each
    /// layout gets its own loop.
    @inline(__always)
    package func map(rows: Range<Int>, step: Int) {
        let pairs = width / 2
        let oddColumn = width & 1 == 1
        for row in rows {
            let top = planes.luma + planes.lumaStride * (2 * row)
            let hasBottom = 2 * row + 1 < height
            let bottom = hasBottom ? top + planes.lumaStride : top
            let cb = planes.cb + planes.chromaStride * row
            let cr = planes.cr + planes.crStride * row
            if hasBottom {
                for column in 0..<pairs {
                    let base = Int(rowStarts[Int(cr[column &* step]) << 8 | Int(cb[column &* step])])
                    let x = column &* 2
                    let a = entries[base | Int(top[x])]
                    let b = entries[base | Int(top[x &+ 1])]
                    let c = entries[base | Int(bottom[x])]
                    let d = entries[base | Int(bottom[x &+ 1])]
                    top[x] = UInt8(truncatingIfNeeded: a)
                    top[x &+ 1] = UInt8(truncatingIfNeeded: b)
                    bottom[x] = UInt8(truncatingIfNeeded: c)
                    bottom[x &+ 1] = UInt8(truncatingIfNeeded: d)
                    let sum = (a >> 8 & 0xFF) &+ (b >> 8 & 0xFF) &+ (c >> 8 & 0xFF) &+ (d >> 8 & 0xFF)
                    let sumV = (a >> 16) &+ (b >> 16) &+ (c >> 16) &+ (d >> 16)
                    cb[column &* step] = UInt8(truncatingIfNeeded: (sum &+ 2) >> 2)
                    cr[column &* step] = UInt8(truncatingIfNeeded: (sumV &+ 2) >> 2)
                }
            } else {
                for column in 0..<pairs {
                    let base = Int(rowStarts[Int(cr[column &* step]) << 8 | Int(cb[column &* step])])
                    let x = column &* 2
                    let a = entries[base | Int(top[x])]
                    let b = entries[base | Int(top[x &+ 1])]
                    top[x] = UInt8(truncatingIfNeeded: a)
                    top[x &+ 1] = UInt8(truncatingIfNeeded: b)
                    cb[column &* step] = UInt8(truncatingIfNeeded: ((a >> 8 & 0xFF) &+ (b >> 8 & 0xFF) &+ 1) >> 1)
                    cr[column &* step] = UInt8(truncatingIfNeeded: ((a >> 16) &+ (b >> 16) &+ 1) >> 1)
                }
            }
            if oddColumn {
                // The last block of the row: one column, one or two pixels.
                let column = pairs
                let base = Int(rowStarts[Int(cr[column * step]) << 8 | Int(cb[column * step])])
                let x = column * 2
                let a = entries[base | Int(top[x])]
                top[x] = UInt8(truncatingIfNeeded: a)
                var (sumU, sumV, count) = (a >> 8 & 0xFF, a >> 16, UInt32(1))
                if hasBottom {
                    let c = entries[base | Int(bottom[x])]
                    bottom[x] = UInt8(truncatingIfNeeded: c)
                    (sumU, sumV, count) = (sumU + (c >> 8 & 0xFF), sumV + (c >> 16), 2)
                }
                cb[column * step] = UInt8(truncatingIfNeeded: (sumU + count / 2) / count)
                cr[column * step] = UInt8(truncatingIfNeeded: (sumV + count / 2) / count)
            }
        }
    }
}
