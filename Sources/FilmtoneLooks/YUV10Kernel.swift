import Dispatch

// MARK: - 10-bit 4:2:0 frames (I420_10LE, P010_10LE)

/// How the samples of a 10-bit 4:2:0 frame are stored. Every sample is a little-endian 16-bit word.
public enum YUV10Layout: Equatable, Sendable {
    /// Three planes (Y, U, V), the 10 bits in the low bits of each word (`I420_10LE`).
    case i420
    /// Two planes (Y, then U and V interleaved), the 10 bits in the high bits of each word (`P010_10LE`).
    case p010
}

/// The planes of a 10-bit 4:2:0 frame, walked by stride (in bytes). Not Sendable, like the pointers it holds.
public struct YUV10Planes {
    public var layout: YUV10Layout
    public var luma: UnsafeMutableRawPointer
    public var lumaStride: Int
    public var cb: UnsafeMutableRawPointer
    public var cr: UnsafeMutableRawPointer
    public var chromaStride: Int
    public var crStride: Int

    public static func i420(
        luma: UnsafeMutableRawPointer, lumaStride: Int, cb: UnsafeMutableRawPointer, cr: UnsafeMutableRawPointer,
        chromaStride: Int, crStride: Int? = nil
    ) -> YUV10Planes {
        YUV10Planes(
            layout: .i420, luma: luma, lumaStride: lumaStride, cb: cb, cr: cr, chromaStride: chromaStride,
            crStride: crStride ?? chromaStride)
    }

    public static func p010(
        luma: UnsafeMutableRawPointer, lumaStride: Int, chroma: UnsafeMutableRawPointer, chromaStride: Int
    ) -> YUV10Planes {
        YUV10Planes(
            layout: .p010, luma: luma, lumaStride: lumaStride, cb: chroma, cr: chroma + 2,
            chromaStride: chromaStride, crStride: chromaStride)
    }

    /// Bytes between horizontally adjacent chroma samples of one plane.
    var chromaStep: Int { layout == .i420 ? 2 : 4 }
}

extension YUVColorimetry {
    /// 10-bit Y'CbCr codes → R'G'B' on 0…1 (unclamped). Limited range is the 8-bit range times 4 (Y 64…940, C
    /// 64…960); full range spans 0…1023 with chroma centred on 512.
    public func rgb10(y: Double, u: Double, v: Double) -> SIMD3<Double> {
        let scale = fullRange ? 255.0 / 1023 : 0.25
        let rgb = self.rgb(y: y * scale, u: 128 + (u - 512) * scale, v: 128 + (v - 512) * scale)
        return rgb / 255
    }

    /// R'G'B' on 0…1 → 10-bit Y'CbCr codes (unrounded, unclamped).
    public func yuv10(rgb: SIMD3<Double>) -> SIMD3<Double> {
        let scale = fullRange ? 1023.0 / 255 : 4
        let yuv = self.yuv(rgb: rgb * 255)
        return SIMD3(yuv.x * scale, 512 + (yuv.y - 128) * scale, 512 + (yuv.z - 128) * scale)
    }
}

/// Applies a look to 10-bit 4:2:0 frames in place through the 16-bit RGB kernel (`LUTKernel16`, the same cells and
/// blend as on RGBA64 frames): each pixel Y'CbCr → R'G'B' (the colorimetry's matrix and range, 16-bit codes,
/// clamped), the 16-bit look, then back to 10-bit Y'CbCr, rounded. As in `YUVKernel`, each 2×2 block shares its
/// (U, V): the four pixels are converted with it, and the block's U', V' are the rounded mean of the four results.
/// Accuracy: every output sample within 1 10-bit code of the same computation in `Double` with the reference look
/// (`YUV10KernelTests`).
///
/// No table of its own: a kernel is the 16-bit kernel plus the colorimetry, so building one costs what
/// `LUTKernel16` does (a few ms). Block rows are split across the cores.
public struct YUV10Kernel: Sendable {
    public let rgb: LUTKernel16
    public let colorimetry: YUVColorimetry

    public init(rgb: LUTKernel16, colorimetry: YUVColorimetry) {
        self.rgb = rgb
        self.colorimetry = colorimetry
    }

    public func apply(to planes: YUV10Planes, width: Int, height: Int) {
        precondition(width >= 0 && height >= 0, "negative frame size")
        if width == 0 || height == 0 || rgb.strategy == .identity { return }
        let frame = UncheckedPlanes(planes: planes)
        let blockRows = (height + 1) / 2
        let (rgb, matrix) = (rgb, Matrix(colorimetry))
        LUTKernel.forEachBand(height: blockRows, pixels: width * height) { rows in
            // Two rows of RGBA64 for one block row, reused for every block row of the band.
            let scratch = UnsafeMutableRawPointer.allocate(byteCount: width * 16, alignment: 16)
            defer { scratch.deallocate() }
            for blockRow in rows {
                frame.mapBlockRow(blockRow, width: width, height: height, scratch: scratch, rgb: rgb, matrix: matrix)
            }
        }
    }

    /// The colorimetry as the per-pixel loop uses it, in `Float`: 10-bit codes to 16-bit R'G'B' codes and back.
    struct Matrix: Sendable {
        let yScale: Float, yOffset: Float, cScale: Float
        let rV: Float, gU: Float, gV: Float, bU: Float
        let kr: Float, kg: Float, kb: Float, uOfB: Float, vOfR: Float

        init(_ c: YUVColorimetry) {
            // Y' 0…1 = (y - offset) · yScale; Pb, Pr = (code - 512) · cScale.
            let (luma, chroma): (Double, Double) = c.fullRange ? (1023, 1023) : (876, 896)
            yOffset = c.fullRange ? 0 : 64
            yScale = Float(1 / luma)
            cScale = Float(1 / chroma)
            rV = Float(2 * (1 - c.kr))
            bU = Float(2 * (1 - c.kb))
            gU = Float(2 * c.kb * (1 - c.kb) / c.kg)
            gV = Float(2 * c.kr * (1 - c.kr) / c.kg)
            (kr, kg, kb) = (Float(c.kr), Float(c.kg), Float(c.kb))
            uOfB = Float(1 / (2 * (1 - c.kb)))
            vOfR = Float(1 / (2 * (1 - c.kr)))
        }
    }
}

/// The planes handed to the band work items.
///
/// Unchecked Sendable: each work item reads and writes its own block rows only (two luma rows and one chroma row
/// each), and the frame outlives them (`apply` returns only when every band has).
private struct UncheckedPlanes: @unchecked Sendable {
    let planes: YUV10Planes

    @inline(__always) private func load(_ p: UnsafeMutableRawPointer) -> Float {
        let word = UInt16(littleEndian: p.loadUnaligned(as: UInt16.self))
        return Float(planes.layout == .i420 ? word & 0x3FF : word >> 6)
    }

    @inline(__always) private func store(_ value: Float, _ p: UnsafeMutableRawPointer) {
        let code = UInt16(min(1023, max(0, value.rounded())))
        p.storeBytes(of: (planes.layout == .i420 ? code : code << 6).littleEndian, toByteOffset: 0, as: UInt16.self)
    }

    @inline(__always) private func code16(_ value: Float) -> UInt16 {
        UInt16(min(65535, max(0, (value * 65535).rounded())))
    }

    func mapBlockRow(
        _ blockRow: Int, width: Int, height: Int, scratch: UnsafeMutableRawPointer, rgb: LUTKernel16,
        matrix m: YUV10Kernel.Matrix
    ) {
        let top = blockRow * 2
        let rows = min(2, height - top)
        let cbRow = planes.cb + blockRow * planes.chromaStride
        let crRow = planes.cr + blockRow * planes.crStride
        let pixels = scratch.assumingMemoryBound(to: UInt16.self)
        // Y'CbCr → 16-bit R'G'B' (scratch row r at r · width pixels of 4 samples).
        for r in 0..<rows {
            let luma = planes.luma + (top + r) * planes.lumaStride
            for x in 0..<width {
                let (pb, pr) = (
                    (load(cbRow + x / 2 * planes.chromaStep) - 512) * m.cScale,
                    (load(crRow + x / 2 * planes.chromaStep) - 512) * m.cScale
                )
                let y = (load(luma + x * 2) - m.yOffset) * m.yScale
                let at = (r * width + x) * 4
                pixels[at] = code16(y + m.rV * pr)
                pixels[at + 1] = code16(y - m.gU * pb - m.gV * pr)
                pixels[at + 2] = code16(y + m.bU * pb)
            }
        }
        rgb.apply(to: scratch, width: width, height: rows, stride: width * 8, layout: .rgba64)
        // Back: Y' per pixel, U' and V' the mean over each block.
        let scale: Float = 1 / 65535
        for blockX in 0..<(width + 1) / 2 {
            var (sumU, sumV, count): (Float, Float, Float) = (0, 0, 0)
            for r in 0..<rows {
                let luma = planes.luma + (top + r) * planes.lumaStride
                for x in (blockX * 2)..<min(width, blockX * 2 + 2) {
                    let at = (r * width + x) * 4
                    let (red, green, blue) = (
                        Float(pixels[at]) * scale, Float(pixels[at + 1]) * scale, Float(pixels[at + 2]) * scale
                    )
                    let y = m.kr * red + m.kg * green + m.kb * blue
                    store(m.yOffset + y / m.yScale, luma + x * 2)
                    sumU += (blue - y) * m.uOfB
                    sumV += (red - y) * m.vOfR
                    count += 1
                }
            }
            store(512 + sumU / count / m.cScale, cbRow + blockX * planes.chromaStep)
            store(512 + sumV / count / m.cScale, crRow + blockX * planes.chromaStep)
        }
    }
}
