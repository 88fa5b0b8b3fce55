import FilmtoneCore
import Foundation

/// A parsed `.cube` look-up table: Adobe Cube 1.0 (one 1D or one 3D table, `DOMAIN_MIN`/`DOMAIN_MAX`) or the
/// Resolve flavour (`LUT_1D_INPUT_RANGE`/`LUT_3D_INPUT_RANGE`, a 1D shaper followed by a 3D table in one file).
///
/// Pure Swift, no GStreamer: parsed once (an element does it in `start()`, never per frame), then evaluated by
/// `apply(_:interpolation:)` (LUTInterpolation.swift). Values are kept as `Double` for the reference path;
/// `Table3D.float32Values()` gives the compact table frame kernels upload.
public struct CubeLUT: Equatable, Sendable {
    /// What the file holds; the raw value is what `ftgst lut inspect` prints.
    public enum Kind: String, Sendable {
        case oneD = "1d"
        case threeD = "3d"
        /// A Resolve 1D shaper, applied first, then a 3D table.
        case shaperAnd3D = "1d+3d"
    }

    /// Three 1D curves (red, green, blue) sampled at `size` evenly spaced inputs across the domain.
    public struct Table1D: Equatable, Sendable {
        /// 2…65536.
        public let size: Int
        /// Input mapped to the first entry, per channel.
        public let domainMin: SIMD3<Double>
        /// Input mapped to the last entry, per channel; above `domainMin` in every channel.
        public let domainMax: SIMD3<Double>
        /// `size × 3` values, the rows of the file in order: `[r0, g0, b0, r1, g1, b1, …]`.
        public let values: [Double]

        /// Entry `index` (0..<size) as RGB.
        @inlinable
        public func entry(_ index: Int) -> SIMD3<Double> {
            SIMD3(values[index * 3], values[index * 3 + 1], values[index * 3 + 2])
        }
    }

    /// A 3D table of `size³` RGB nodes over the domain; red varies fastest in `values`, then green, then blue.
    public struct Table3D: Equatable, Sendable {
        /// 2…256 nodes per axis.
        public let size: Int
        public let domainMin: SIMD3<Double>
        public let domainMax: SIMD3<Double>
        /// `size³ × 3` values, the rows of the file in order (node `(r, g, b)` is row `r + size·(g + size·b)`).
        public let values: [Double]

        /// The value at grid node (r, g, b), each 0..<size.
        @inlinable
        public func node(_ r: Int, _ g: Int, _ b: Int) -> SIMD3<Double> {
            let base = (r + size * (g + size * b)) * 3
            return SIMD3(values[base], values[base + 1], values[base + 2])
        }

        /// The same table as `Float`, in the same order: the compact form frame kernels upload. Derived on demand
        /// (once, when a kernel starts) so a parsed LUT holds a single copy of its values.
        public func float32Values() -> [Float] {
            values.map { Float($0) }
        }
    }

    /// `TITLE`, when the file has one.
    public let title: String?
    /// The 1D table: the whole LUT for kind `1d`, the shaper (applied first) for `1d+3d`.
    public let table1D: Table1D?
    /// The 3D table, for kinds `3d` and `1d+3d`.
    public let table3D: Table3D?

    /// Built only by the parser, which guarantees at least one table and consistent sizes.
    package init(title: String?, table1D: Table1D?, table3D: Table3D?) {
        precondition(table1D != nil || table3D != nil, "a CubeLUT has at least one table")
        self.title = title
        self.table1D = table1D
        self.table3D = table3D
    }

    public var kind: Kind {
        switch (table1D, table3D) {
        case (.some, .some): return .shaperAnd3D
        case (.some, .none): return .oneD
        default: return .threeD
        }
    }

    // MARK: - Loading

    /// The largest file `load(path:)` reads: a 256³ table (the largest size allowed) is 16.8 M rows, and 32 bytes
    /// per row covers three numbers with 7 decimals and a sign each. Anything bigger is refused before reading.
    public static let maximumFileBytes = 512 << 20

    /// Parses `.cube` text. Errors are `LUT_INVALID` with the message `fileName:line: reason`.
    ///
    /// One linear pass over the bytes; memory is bounded by the declared size (and by what the rest of the file
    /// can still hold), never by what a hostile file claims.
    public static func parse(data: [UInt8], fileName: String) throws -> CubeLUT {
        try data.withUnsafeBufferPointer { bytes in
            var parser = CubeParser(bytes: bytes, fileName: fileName)
            return try parser.parse()
        }
    }

    /// Reads and parses a `.cube` file. `FILE_NOT_FOUND` when it is missing, a directory or unreadable;
    /// `LUT_INVALID` when it is larger than `maximumFileBytes` (checked before reading) or does not parse; error
    /// messages name the file as `path`.
    public static func load(path: String) throws -> CubeLUT {
        let bytes = try readFile(path, limit: maximumFileBytes)
        return try parse(data: bytes, fileName: path)
    }

    /// The whole file, refusing more than `limit` bytes. The size is checked with `fstat` before reading and again
    /// while reading (a file may grow in between), so memory never exceeds `limit + 1` bytes.
    package static func readFile(_ path: String, limit: Int) throws -> [UInt8] {
        // O_NONBLOCK: a FIFO without a writer would block `open` forever; it is refused below as not a regular
        // file. The flag has no effect on reads of regular files.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw FilmtoneError(.fileNotFound, "no such file: \(path)") }
            throw FilmtoneError(.fileNotFound, "cannot open \(path): \(String(cString: strerror(code)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw FilmtoneError(.fileNotFound, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw FilmtoneError(.fileNotFound, "is a directory, not a file: \(path)")
        default: throw FilmtoneError(.fileNotFound, "not a regular file: \(path)")
        }
        if Int64(info.st_size) > Int64(limit) {
            throw FilmtoneError(
                .lutInvalid, "\(path): file is \(info.st_size) bytes, over the \(limit >> 20) MiB limit")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw FilmtoneError(.fileNotFound, "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            guard bytes.count + count <= limit else {
                throw FilmtoneError(.lutInvalid, "\(path): file is over the \(limit >> 20) MiB limit")
            }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return bytes
    }
}

// MARK: - Inspection

extension CubeLUT {
    /// What `ftgst lut inspect` prints: title, kind, size, (shaperSize,) domainMin, domainMax. For `1d+3d` the
    /// size and domain are the 3D table's and `shaperSize` is the 1D shaper's.
    public var inspection: JSONValue {
        let main: (size: Int, min: SIMD3<Double>, max: SIMD3<Double>)
        if let table3D {
            main = (table3D.size, table3D.domainMin, table3D.domainMax)
        } else if let table1D {
            main = (table1D.size, table1D.domainMin, table1D.domainMax)
        } else {
            preconditionFailure("a CubeLUT has at least one table")
        }
        func triple(_ value: SIMD3<Double>) -> JSONValue {
            .array([.double(value.x), .double(value.y), .double(value.z)])
        }
        var fields: [(String, JSONValue)] = [
            ("title", title.map { .string($0) } ?? .null), ("kind", .string(kind.rawValue)),
            ("size", .int(Int64(main.size))),
        ]
        if kind == .shaperAnd3D, let table1D { fields.append(("shaperSize", .int(Int64(table1D.size)))) }
        fields += [("domainMin", triple(main.min)), ("domainMax", triple(main.max))]
        return .object(fields)
    }
}
