import FilmtoneLooks
import Foundation
import XCTest

/// The reference LUTs and vectors in `<packageRoot>/Tests/Resources/luts` (OpenColorIO's and colour-science's test
/// files, BSD-3-Clause; see the README there), written by other projects and checked in, so the tests need nothing
/// beside the repository. Their absence fails the test (never skips it): the conformance suite is only meaningful
/// against them. (The name is from when they were read from a shared folder beside the repository.)
package enum SharedLUTs {
    package static let root: URL = TestEnvironment.packageRoot.appendingPathComponent("Tests/Resources/luts")

    /// `Colour_Correct.cube` (size 4, non-linear): the look the element and CLI tests apply.
    package static let look = root.appendingPathComponent("colour-science/iridas_cube/Colour_Correct.cube").path
    /// `RGB_1_0.5_0.25.cube`: channel gains, which catch axis-order bugs.
    package static let gains = root.appendingPathComponent("colour-science/iridas_cube/RGB_1_0.5_0.25.cube").path

    /// The path of a reference file, e.g. `ocio/iridas_3d.cube`.
    package static func path(_ relative: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let path = root.appendingPathComponent(relative).path
        guard FileManager.default.fileExists(atPath: path) else {
            XCTFail("reference LUT file \(relative) missing under \(root.path)", file: file, line: line)
            throw CocoaError(.fileNoSuchFile)
        }
        return path
    }

    package static func load(_ relative: String, file: StaticString = #filePath, line: UInt = #line) throws -> CubeLUT {
        try CubeLUT.load(path: try path(relative, file: file, line: line))
    }

    /// Every `.cube` file among the reference files, as paths relative to `root`, sorted.
    package static func allCubeFiles(file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory), isDirectory.boolValue,
            let walker = FileManager.default.enumerator(atPath: root.path)
        else {
            XCTFail("reference LUT folder missing: \(root.path)", file: file, line: line)
            throw CocoaError(.fileNoSuchFile)
        }
        return walker.compactMap { $0 as? String }.filter { $0.hasSuffix(".cube") }.sorted()
    }

    /// A reference CSV as records keyed by the header's column names; `#` lines and blank lines are
    /// skipped.
    package static func csv(_ relative: String, file: StaticString = #filePath, line: UInt = #line) throws
        -> [[String: String]]
    {
        let text = try String(contentsOfFile: try path(relative, file: file, line: line), encoding: .utf8)
        let lines = text.split(whereSeparator: \.isNewline).map(String.init).filter {
            !$0.trimmingCharacters(in: .whitespaces).isEmpty && !$0.hasPrefix("#")
        }
        guard let header = lines.first?.split(separator: ",").map(String.init) else {
            XCTFail("\(relative) has no header", file: file, line: line)
            throw CocoaError(.coderReadCorrupt)
        }
        return try lines.dropFirst().map { record in
            let fields = record.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == header.count else {
                XCTFail(
                    "\(relative): '\(record)' has \(fields.count) fields, header \(header.count)", file: file,
                    line: line)
                throw CocoaError(.coderReadCorrupt)
            }
            return Dictionary(uniqueKeysWithValues: zip(header, fields))
        }
    }
}

extension Dictionary where Key == String, Value == String {
    /// Three columns `<prefix>r`, `<prefix>g`, `<prefix>b` as numbers.
    package func rgb(_ prefix: String, file: StaticString = #filePath, line: UInt = #line) throws -> SIMD3<Double> {
        var out = SIMD3<Double>()
        for (index, channel) in ["r", "g", "b"].enumerated() {
            guard let text = self[prefix + channel], let value = Double(text) else {
                XCTFail("column \(prefix + channel) missing or not a number in \(self)", file: file, line: line)
                throw CocoaError(.coderReadCorrupt)
            }
            out[index] = value
        }
        return out
    }

    /// Half a unit in the last decimal written in each of the three columns: the precision the value was printed
    /// with (`0.06272` → 5e-6, `0.2711` → 5e-5, `0.25` → 5e-3).
    package func printedPrecision(_ prefix: String) -> SIMD3<Double> {
        var out = SIMD3<Double>()
        for (index, channel) in ["r", "g", "b"].enumerated() {
            let text = self[prefix + channel] ?? ""
            let decimals = text.split(separator: ".").dropFirst().first?.count ?? 0
            out[index] = 0.5 * pow(10, -Double(decimals))
        }
        return out
    }
}

/// Asserts two RGB values are within `tolerance` in every channel.
package func assertClose(
    _ actual: SIMD3<Double>, _ expected: SIMD3<Double>, tolerance: Double, _ message: String = "",
    file: StaticString = #filePath, line: UInt = #line
) {
    assertClose(actual, expected, tolerance: SIMD3(repeating: tolerance), message, file: file, line: line)
}

package func assertClose(
    _ actual: SIMD3<Double>, _ expected: SIMD3<Double>, tolerance: SIMD3<Double>,
    _ message: String = "", file: StaticString = #filePath, line: UInt = #line
) {
    for channel in 0..<3 where !(abs(actual[channel] - expected[channel]) <= tolerance[channel]) {
        XCTFail(
            "channel \(channel): \(actual) vs expected \(expected) (tolerance \(tolerance[channel])) \(message)",
            file: file, line: line)
        return
    }
}

/// The largest per-channel absolute difference.
package func maxDifference(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Double {
    let difference = a - b
    return max(abs(difference.x), abs(difference.y), abs(difference.z))
}

extension Look {
    /// The reference result for a packed 8-bit frame: each pixel through `apply` in Double, rounded to nearest
    /// (`LUTKernel.code`); bytes other than R, G, B are kept. What every frame-level test compares against.
    package func referenceApply(toPacked input: [UInt8], layout: PackedRGBLayout = .rgb) -> [UInt8] {
        var output = input
        for index in stride(from: 0, to: input.count - layout.bytesPerPixel + 1, by: layout.bytesPerPixel) {
            let rgb =
                SIMD3<Double>(
                    Double(input[index + layout.red]), Double(input[index + layout.green]),
                    Double(input[index + layout.blue])) / 255
            let mapped = apply(rgb)
            output[index + layout.red] = LUTKernel.code(mapped.x)
            output[index + layout.green] = LUTKernel.code(mapped.y)
            output[index + layout.blue] = LUTKernel.code(mapped.z)
        }
        return output
    }
}

/// The largest per-byte difference between two byte arrays; arrays of different lengths fail the test.
package func maxByteDifference(_ a: [UInt8], _ b: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> Int {
    XCTAssertEqual(a.count, b.count, "compared arrays differ in length", file: file, line: line)
    return zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
}

extension Look {
    /// The reference result for one 16-bit input: `apply` in Double on `code / 65535`, rounded to nearest 16-bit
    /// code (`LUTKernel16.code`). What every 16-bit test compares against.
    package func reference16(_ input: SIMD3<UInt16>) -> SIMD3<UInt16> {
        let output = apply(SIMD3(Double(input.x), Double(input.y), Double(input.z)) / 65535)
        return SIMD3(LUTKernel16.code(output.x), LUTKernel16.code(output.y), LUTKernel16.code(output.z))
    }
}

/// The largest per-channel difference between two 16-bit colours.
package func difference16(_ a: SIMD3<UInt16>, _ b: SIMD3<UInt16>) -> Int {
    (0..<3).map { abs(Int(a[$0]) - Int(b[$0])) }.max()!
}

/// A 10-bit code as 16 bits, the way GStreamer's converters widen it: the code in the top bits, its top bits
/// repeated below (0 → 0, 1023 → 65535).
package func widened10(_ code: Int) -> UInt16 { UInt16(code << 6 | code >> 4) }
