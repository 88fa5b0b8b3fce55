import FilmtoneCore

/// How a 3D table is sampled between its grid nodes. The raw value is the CLI name.
public enum Interpolation: String, CaseIterable, Sendable {
    /// The cell is split into six tetrahedra along its grey diagonal; four nodes are blended (FFmpeg `vf_lut3d`,
    /// colour-science `table_interpolation_tetrahedral`). Keeps neutrals on the diagonal; the usual default.
    case tetrahedral
    /// All eight corners of the cell, blended axis by axis.
    case trilinear
    /// The closest node, no blending (halfway rounds up). For checking tables, not for pictures.
    case nearest

    /// `tetrahedral`.
    public static let `default` = Interpolation.tetrahedral
}

// MARK: - Reference evaluation

/// The reference evaluation in `Double`: what GPU and SIMD kernels are checked against, one pixel at a time.
///
/// Every input is first normalised by its table's domain, `(x - min) / (max - min)`, and clamped to 0…1 (NaN
/// counts as 0), so inputs outside the domain take the edge values. Inputs on grid nodes return the node values
/// exactly: blends are written `a·(1 - f) + b·f`, which is `a` at `f = 0` and `b` at `f = 1` with no rounding.
extension CubeLUT {
    /// The LUT applied to one RGB value: the 1D table (the shaper, when there is also a 3D table) first, then the
    /// 3D table with `interpolation`. 1D tables are always interpolated linearly.
    public func apply(_ rgb: SIMD3<Double>, interpolation: Interpolation = .default) -> SIMD3<Double> {
        var value = rgb
        if let table1D { value = table1D.apply(value) }
        if let table3D { value = table3D.apply(value, interpolation: interpolation) }
        return value
    }
}

extension CubeLUT.Table1D {
    /// Each channel through its own curve, linearly between entries.
    public func apply(_ rgb: SIMD3<Double>) -> SIMD3<Double> {
        var out = SIMD3<Double>()
        for channel in 0..<3 {
            let cell = GridCell(rgb[channel], min: domainMin[channel], max: domainMax[channel], size: size)
            let low = values[cell.index * 3 + channel]
            let high = values[(cell.index + 1) * 3 + channel]
            out[channel] = low * (1 - cell.fraction) + high * cell.fraction
        }
        return out
    }
}

extension CubeLUT.Table3D {
    /// The table sampled at `rgb` with `interpolation`.
    public func apply(_ rgb: SIMD3<Double>, interpolation: Interpolation = .default) -> SIMD3<Double> {
        let r = GridCell(rgb.x, min: domainMin.x, max: domainMax.x, size: size)
        let g = GridCell(rgb.y, min: domainMin.y, max: domainMax.y, size: size)
        let b = GridCell(rgb.z, min: domainMin.z, max: domainMax.z, size: size)
        switch interpolation {
        case .nearest:
            return node(r.nearest, g.nearest, b.nearest)
        case .trilinear:
            return trilinear(r, g, b)
        case .tetrahedral:
            return tetrahedral(r, g, b)
        }
    }

    private func trilinear(_ r: GridCell, _ g: GridCell, _ b: GridCell) -> SIMD3<Double> {
        func mix(_ a: SIMD3<Double>, _ c: SIMD3<Double>, _ f: Double) -> SIMD3<Double> { a * (1 - f) + c * f }
        let (r0, r1, g0, g1, b0, b1) = (r.index, r.index + 1, g.index, g.index + 1, b.index, b.index + 1)
        let c00 = mix(node(r0, g0, b0), node(r1, g0, b0), r.fraction)
        let c10 = mix(node(r0, g1, b0), node(r1, g1, b0), r.fraction)
        let c01 = mix(node(r0, g0, b1), node(r1, g0, b1), r.fraction)
        let c11 = mix(node(r0, g1, b1), node(r1, g1, b1), r.fraction)
        return mix(mix(c00, c10, g.fraction), mix(c01, c11, g.fraction), b.fraction)
    }

    /// The standard six-tetrahedra split (FFmpeg `interp_tetrahedral`, colour-science): the ordering of the three
    /// fractions picks the tetrahedron, whose four corners always include the cell's origin and far corner.
    private func tetrahedral(_ r: GridCell, _ g: GridCell, _ b: GridCell) -> SIMD3<Double> {
        let (fr, fg, fb) = (r.fraction, g.fraction, b.fraction)
        let (r0, r1, g0, g1, b0, b1) = (r.index, r.index + 1, g.index, g.index + 1, b.index, b.index + 1)
        let c000 = node(r0, g0, b0)
        let c111 = node(r1, g1, b1)
        if fr > fg {
            if fg > fb {  // r > g > b
                return c000 * (1 - fr) + node(r1, g0, b0) * (fr - fg) + node(r1, g1, b0) * (fg - fb) + c111 * fb
            } else if fr > fb {  // r > b >= g
                return c000 * (1 - fr) + node(r1, g0, b0) * (fr - fb) + node(r1, g0, b1) * (fb - fg) + c111 * fg
            } else {  // b >= r > g
                return c000 * (1 - fb) + node(r0, g0, b1) * (fb - fr) + node(r1, g0, b1) * (fr - fg) + c111 * fg
            }
        } else {
            if fb > fg {  // b > g >= r
                return c000 * (1 - fb) + node(r0, g0, b1) * (fb - fg) + node(r0, g1, b1) * (fg - fr) + c111 * fr
            } else if fb > fr {  // g >= b > r
                return c000 * (1 - fg) + node(r0, g1, b0) * (fg - fb) + node(r0, g1, b1) * (fb - fr) + c111 * fr
            } else {  // g >= r >= b
                return c000 * (1 - fg) + node(r0, g1, b0) * (fg - fr) + node(r1, g1, b0) * (fr - fb) + c111 * fb
            }
        }
    }
}

/// Where one input channel falls on a table axis of `size` nodes: the lower node of its cell (0…size-2) and the
/// fraction across the cell (0…1). The top of the domain is the far edge of the last cell (fraction 1), so
/// `index + 1` is always a node.
package struct GridCell {
    package var index: Int
    package var fraction: Double

    /// Positions closer than this to a node are taken as the node itself: an input computed as
    /// `min + k·(max - min)/(size - 1)` lands a few ulps off `k` after normalising, and should still return the
    /// node exactly. It is far below anything a pixel value can resolve.
    package static let snap = 1e-9

    package init(_ value: Double, min: Double, max: Double, size: Int) {
        var unit = (value - min) / (max - min)
        if !(unit > 0) { unit = 0 }  // below the domain, or NaN
        if unit > 1 { unit = 1 }
        var position = unit * Double(size - 1)
        let node = position.rounded()
        if abs(position - node) < GridCell.snap { position = node }
        index = Swift.min(Int(position), size - 2)
        fraction = position - Double(index)
    }

    /// The closest node (halfway rounds up).
    package var nearest: Int { fraction < 0.5 ? index : index + 1 }
}

// MARK: - Looks

/// A look: an input LUT (e.g. camera log to Rec. 709), then a creative LUT blended in by `intensity`.
///
/// `x = inputLUT(rgb)`, `out = mix(x, creativeLUT(x), intensity)`. An empty slot is the identity, so a look with
/// neither LUT returns its input.
public struct Look: Equatable, Sendable {
    /// Applied first, in full.
    public let inputLUT: CubeLUT?
    /// Applied to the input LUT's result, blended by `intensity`.
    public let creativeLUT: CubeLUT?
    /// 0 (creative LUT off) … 1 (creative LUT in full).
    public let intensity: Double
    /// How both LUTs' 3D tables are sampled.
    public let interpolation: Interpolation

    /// `INVALID_ARGUMENT` unless `intensity` is a number in 0…1.
    public init(
        inputLUT: CubeLUT? = nil, creativeLUT: CubeLUT? = nil, intensity: Double = 1,
        interpolation: Interpolation = .default
    ) throws {
        guard intensity >= 0 && intensity <= 1 else {
            throw FilmtoneError(.invalidArgument, "intensity must be between 0 and 1, got \(intensity)")
        }
        self.inputLUT = inputLUT
        self.creativeLUT = creativeLUT
        self.intensity = intensity
        self.interpolation = interpolation
    }

    /// The look applied to one RGB value: `x + (creative(x) - x)·intensity`, evaluated as
    /// `x·(1 - intensity) + creative(x)·intensity` (the same blend, exact at intensity 0 and 1).
    public func apply(_ rgb: SIMD3<Double>) -> SIMD3<Double> {
        let x = inputLUT?.apply(rgb, interpolation: interpolation) ?? rgb
        guard let creativeLUT else { return x }
        let creative = creativeLUT.apply(x, interpolation: interpolation)
        return x * (1 - intensity) + creative * intensity
    }
}
