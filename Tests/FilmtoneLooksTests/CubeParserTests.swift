import FilmtoneTestSupport
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneLooks

/// The `.cube` parser on tiny inline LUTs: every dialect feature it accepts, every malformation it refuses (with the
/// exact `file:line: reason`), hostile input, and every real file in `Tests/Resources/luts`.
final class CubeParserTests: XCTestCase {
    /// The 2×2×2 identity, red fastest.
    static let identityRows = ["0 0 0", "1 0 0", "0 1 0", "1 1 0", "0 0 1", "1 0 1", "0 1 1", "1 1 1"]

    private func parse(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> CubeLUT {
        do {
            return try CubeLUT.parse(data: Array(text.utf8), fileName: "t.cube")
        } catch {
            XCTFail("\(error)", file: file, line: line)
            throw error
        }
    }

    /// Asserts `LUT_INVALID` with exactly `t.cube:<line>: <reason>`.
    private func assertRejects(
        _ text: String, line expectedLine: Int, _ reason: String, file: StaticString = #filePath,
        line: UInt = #line
    ) {
        assertRejects(bytes: Array(text.utf8), line: expectedLine, reason, file: file, line: line)
    }

    private func assertRejects(
        bytes: [UInt8], line expectedLine: Int, _ reason: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try CubeLUT.parse(data: bytes, fileName: "t.cube"), file: file, line: line) { error in
            guard let error = error as? FilmtoneError else { return XCTFail("not a FilmtoneError: \(error)") }
            XCTAssertEqual(error.code, .lutInvalid, file: file, line: line)
            XCTAssertEqual(error.message, "t.cube:\(expectedLine): \(reason)", file: file, line: line)
        }
    }

    private func identity(header: String = "LUT_3D_SIZE 2\n") -> String {
        header + Self.identityRows.joined(separator: "\n") + "\n"
    }

    // MARK: - Accepted

    func testMinimalThreeDimensionalTable() throws {
        let lut = try parse(identity())
        XCTAssertEqual(lut.kind, .threeD)
        XCTAssertNil(lut.title)
        XCTAssertNil(lut.table1D)
        let table = try XCTUnwrap(lut.table3D)
        XCTAssertEqual(table.size, 2)
        XCTAssertEqual(table.domainMin, [0, 0, 0])
        XCTAssertEqual(table.domainMax, [1, 1, 1])
        // Red fastest: row 1 is node (1,0,0), row 2 node (0,1,0), row 4 node (0,0,1).
        XCTAssertEqual(table.node(1, 0, 0), [1, 0, 0])
        XCTAssertEqual(table.node(0, 1, 0), [0, 1, 0])
        XCTAssertEqual(table.node(0, 0, 1), [0, 0, 1])
        XCTAssertEqual(table.float32Values(), table.values.map(Float.init))
    }

    func testMinimalOneDimensionalTable() throws {
        let lut = try parse("LUT_1D_SIZE 2\n0 0 0\n1 2 3\n")
        XCTAssertEqual(lut.kind, .oneD)
        XCTAssertEqual(lut.table1D?.size, 2)
        XCTAssertEqual(lut.table1D?.entry(1), [1, 2, 3])
        XCTAssertNil(lut.table3D)
    }

    func testLineEndingsCRLFAndCR() throws {
        let lf = try parse(identity())
        XCTAssertEqual(try parse(identity().replacingOccurrences(of: "\n", with: "\r\n")), lf)
        XCTAssertEqual(try parse(identity().replacingOccurrences(of: "\n", with: "\r")), lf)
        // Line numbers count CRLF and CR as one break each.
        let broken = "LUT_3D_SIZE 2\n0 0 0\n0 0\n"
        assertRejects(broken.replacingOccurrences(of: "\n", with: "\r\n"), line: 3, "a row needs 3 numbers, found 2")
        assertRejects(broken.replacingOccurrences(of: "\n", with: "\r"), line: 3, "a row needs 3 numbers, found 2")
        // A blank CRLF line is one line, not two.
        assertRejects("LUT_3D_SIZE 2\r\n\r\n0 0\r\n", line: 3, "a row needs 3 numbers, found 2")
    }

    func testByteOrderMark() throws {
        let lut = try parse("\u{FEFF}TITLE \"bom\"\n" + identity())
        XCTAssertEqual(lut.title, "bom")
        XCTAssertEqual(try parse("\u{FEFF}" + identity()).table3D?.size, 2)
        // Only at the very start: elsewhere it is not whitespace.
        assertRejects("LUT_3D_SIZE 2\n\u{FEFF}0 0 0\n", line: 2, "'\\xEF\\xBB\\xBF0' is not a number")
    }

    func testTabsAndSpaces() throws {
        let text =
            "LUT_3D_SIZE\t2\n"
            + Self.identityRows.map { "\t " + $0.replacingOccurrences(of: " ", with: "\t\t") + " \t" }
            .joined(separator: "\n")
        XCTAssertEqual(try parse(text), try parse(identity()))
    }

    func testCommentsAndBlankLinesAnywhere() throws {
        let text = """
            # leading comment

            TITLE "x" # after the title
              # indented comment
            LUT_3D_SIZE 2 # after a keyword

            0 0 0
            # between rows
            1 0 0 # after a row
            0 1 0

            1 1 0
            0 0 1
            #
            1 0 1
            0 1 1
            1 1 1
            # trailing comment

            """
        let lut = try parse(text)
        XCTAssertEqual(lut.title, "x")
        XCTAssertEqual(lut.table3D, try parse(identity()).table3D)
    }

    func testNumberForms() throws {
        let lut = try parse("LUT_1D_SIZE 4\n.75 1. 1e-3\n+1 -.5E+1 2.5e2\n0.0 -0 00012\n1E3 1.5e-0 -2\n")
        let values = try XCTUnwrap(lut.table1D?.values)
        XCTAssertEqual(values, [0.75, 1, 0.001, 1, -5, 250, 0, 0, 12, 1000, 1.5, -2])
    }

    /// The parser's fast decimal path gives bit for bit what `Double(String)` gives, on random literals of every
    /// shape (short and long mantissas, fractions, exponents inside and outside the fast path's range).
    func testNumberConversionMatchesDoubleParsingExactly() {
        var generator = SplitMix(seed: 2024)
        func random(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(generator.next() % UInt64(range.count)) }
        for _ in 0..<50_000 {
            var text = ["", "-", "+"][random(0...2)]
            let digits = (0..<random(1...20)).map { _ in String(random(0...9)) }.joined()
            let point = random(-1...digits.count)  // -1: no point
            text += point < 0 ? digits : String(digits.prefix(point)) + "." + String(digits.dropFirst(point))
            if random(0...2) == 0 {
                text += ["e", "E"][random(0...1)] + ["", "-", "+"][random(0...2)] + String(random(0...40))
            }
            let expected = Double(text)!
            let actual = Array(text.utf8).withUnsafeBufferPointer { CubeParser.decimal($0) }
            guard case .value(let value) = actual, value.bitPattern == expected.bitPattern else {
                return XCTFail("\(text): \(actual) vs \(expected)")
            }
        }
    }

    func testOutputsOutsideZeroToOne() throws {
        let lut = try parse("LUT_1D_SIZE 2\n-0.5 -1e3 0\n2.5 113 704.3\n")
        XCTAssertEqual(lut.table1D?.entry(0), [-0.5, -1000, 0])
        XCTAssertEqual(lut.table1D?.entry(1), [2.5, 113, 704.3])
    }

    func testNoFinalNewline() throws {
        let text = identity().trimmingCharacters(in: .newlines)
        XCTAssertFalse(text.hasSuffix("\n"))
        XCTAssertEqual(try parse(text), try parse(identity()))
    }

    func testKeywordsAreCaseInsensitive() throws {
        let lut = try parse(identity(header: "title \"lower\"\nlut_3d_size 2\nDomain_Min 0 0 0\ndomain_max 2 2 2\n"))
        XCTAssertEqual(lut.title, "lower")
        XCTAssertEqual(lut.table3D?.domainMax, [2, 2, 2])
        XCTAssertEqual(
            try parse("Lut_1d_Size 2\nLut_1d_Input_Range 0 4\n0 0 0\n1 1 1\n").table1D?.domainMax, [4, 4, 4])
    }

    func testTitles() throws {
        XCTAssertEqual(try parse(identity(header: "TITLE \"A test 3D-LUT.\"\nLUT_3D_SIZE 2\n")).title, "A test 3D-LUT.")
        XCTAssertEqual(try parse(identity(header: "TITLE \"Lumière – été\"\nLUT_3D_SIZE 2\n")).title, "Lumière – été")
        XCTAssertEqual(try parse(identity(header: "TITLE \"\"\nLUT_3D_SIZE 2\n")).title, "")
        // Unquoted: the rest of the line, trimmed.
        XCTAssertEqual(try parse(identity(header: "TITLE  plain words \t\nLUT_3D_SIZE 2\n")).title, "plain words")
        // Keywords in any order before the rows.
        XCTAssertEqual(try parse(identity(header: "LUT_3D_SIZE 2\nTITLE \"after\"\n")).title, "after")
    }

    func testAdobeDomain() throws {
        let lut = try parse(identity(header: "LUT_3D_SIZE 2\nDOMAIN_MIN -0.1 -0.15 -0.2\nDOMAIN_MAX 1.5 2 3\n"))
        XCTAssertEqual(lut.table3D?.domainMin, [-0.1, -0.15, -0.2])
        XCTAssertEqual(lut.table3D?.domainMax, [1.5, 2, 3])
        // Each is optional: the other keeps its default (0 0 0 / 1 1 1).
        XCTAssertEqual(try parse(identity(header: "LUT_3D_SIZE 2\nDOMAIN_MAX 4 4 4\n")).table3D?.domainMin, [0, 0, 0])
        XCTAssertEqual(
            try parse(identity(header: "LUT_3D_SIZE 2\nDOMAIN_MIN -1 -1 -1\n")).table3D?.domainMax, [1, 1, 1])
        let oneD = try parse("LUT_1D_SIZE 2\nDOMAIN_MIN -2 1 0\nDOMAIN_MAX 2 2 1\n0 0 0\n1 1 1\n")
        XCTAssertEqual(oneD.table1D?.domainMin, [-2, 1, 0])
    }

    func testResolveShaperAndCube() throws {
        let text =
            "LUT_1D_SIZE 3\nLUT_1D_INPUT_RANGE -1 3\nLUT_3D_SIZE 2\nLUT_3D_INPUT_RANGE 0.0 4.0\n"
            + "0 0 0\n0.5 0.5 0.5\n1 1 1\n\n" + Self.identityRows.joined(separator: "\n")
        let lut = try parse(text)
        XCTAssertEqual(lut.kind, .shaperAnd3D)
        XCTAssertEqual(lut.table1D?.size, 3)
        XCTAssertEqual(lut.table1D?.domainMin, [-1, -1, -1])
        XCTAssertEqual(lut.table1D?.domainMax, [3, 3, 3])
        XCTAssertEqual(lut.table1D?.entry(2), [1, 1, 1])
        XCTAssertEqual(lut.table3D?.size, 2)
        XCTAssertEqual(lut.table3D?.domainMin, [0, 0, 0])
        XCTAssertEqual(lut.table3D?.domainMax, [4, 4, 4])
        XCTAssertEqual(lut.table3D?.node(1, 0, 0), [1, 0, 0])
        // Without ranges, both default to 0…1; the size keywords may come in either order.
        let plain = try parse(
            "LUT_3D_SIZE 2\nLUT_1D_SIZE 2\n0 0 0\n1 1 1\n" + Self.identityRows.joined(separator: "\n"))
        XCTAssertEqual(plain.table1D?.domainMax, [1, 1, 1])
        XCTAssertEqual(plain.table3D?.domainMax, [1, 1, 1])
        XCTAssertEqual(plain.table1D?.entry(1), [1, 1, 1])
    }

    func testRangeForTheMissingTableSetsTheOtherOne() throws {
        // colour-science's Resolve eotf_sRGB_3D.cube: LUT_1D_INPUT_RANGE on a 3D-only table.
        let threeD = try parse(identity(header: "LUT_3D_SIZE 2\nLUT_1D_INPUT_RANGE -1 3\n"))
        XCTAssertEqual(threeD.table3D?.domainMin, [-1, -1, -1])
        XCTAssertEqual(threeD.table3D?.domainMax, [3, 3, 3])
        let oneD = try parse("LUT_1D_SIZE 2\nLUT_3D_INPUT_RANGE 0 2\n0 0 0\n1 1 1\n")
        XCTAssertEqual(oneD.table1D?.domainMax, [2, 2, 2])
    }

    func testLargestOneDimensionalSize() throws {
        let rows = String(repeating: "0.5 0.5 0.5\n", count: 65536)
        XCTAssertEqual(try parse("LUT_1D_SIZE 65536\n" + rows).table1D?.size, 65536)
    }

    // MARK: - Rejected: sizes

    func testMissingSize() {
        assertRejects("0 0 0\n", line: 1, "data before LUT_1D_SIZE or LUT_3D_SIZE")
        assertRejects("TITLE \"x\"\n# no size\n", line: 2, "missing LUT_1D_SIZE or LUT_3D_SIZE")
        assertRejects("", line: 1, "missing LUT_1D_SIZE or LUT_3D_SIZE")
        assertRejects("\u{FEFF}", line: 1, "missing LUT_1D_SIZE or LUT_3D_SIZE")
        assertRejects("LUT_3D_SIZE\n", line: 1, "LUT_3D_SIZE needs a size")
        assertRejects("LUT_1D_SIZE # none\n", line: 1, "LUT_1D_SIZE needs a size")
    }

    func testNonIntegerSize() {
        assertRejects("LUT_3D_SIZE 2.0\n", line: 1, "LUT_3D_SIZE must be a whole number, got '2.0'")
        assertRejects("LUT_3D_SIZE two\n", line: 1, "LUT_3D_SIZE must be a whole number, got 'two'")
        assertRejects("LUT_3D_SIZE -2\n", line: 1, "LUT_3D_SIZE must be a whole number, got '-2'")
        assertRejects("LUT_1D_SIZE 1e3\n", line: 1, "LUT_1D_SIZE must be a whole number, got '1e3'")
        assertRejects("LUT_3D_SIZE 2 2\n", line: 1, "LUT_3D_SIZE takes one number, found 2")
    }

    func testOutOfRangeSize() {
        assertRejects("LUT_3D_SIZE 1\n", line: 1, "LUT_3D_SIZE must be between 2 and 256, got 1")
        assertRejects("LUT_3D_SIZE 0\n", line: 1, "LUT_3D_SIZE must be between 2 and 256, got 0")
        assertRejects("LUT_3D_SIZE 257\n", line: 1, "LUT_3D_SIZE must be between 2 and 256, got 257")
        assertRejects("LUT_3D_SIZE 100000\n", line: 1, "LUT_3D_SIZE must be between 2 and 256, got 100000")
        assertRejects(
            "LUT_3D_SIZE 99999999999999999999999\n", line: 1,
            "LUT_3D_SIZE must be between 2 and 256, got 99999999999999999999999")
        assertRejects("LUT_1D_SIZE 1\n", line: 1, "LUT_1D_SIZE must be between 2 and 65536, got 1")
        assertRejects("LUT_1D_SIZE 65537\n", line: 1, "LUT_1D_SIZE must be between 2 and 65536, got 65537")
    }

    func testTwoDimensionalSizeIsRefused() {
        assertRejects("LUT_2D_SIZE 4\n", line: 1, "LUT_2D_SIZE is not supported (only 1D and 3D tables)")
    }

    func testHugeDeclaredSizeWithFewRows() {
        // 256³ rows declared, 3 present: refused at the end without reserving 256³ × 3 doubles (the reservation is
        // capped by what the rest of the file could hold), and quickly.
        let start = Date()
        assertRejects("LUT_3D_SIZE 256\n0 0 0\n0 0 0\n0 0 0\n", line: 4, "LUT_3D_SIZE 256 needs 16777216 rows, found 3")
        // Parsing four lines takes well under a millisecond, even in a debug build with both cores busy, so 1 s is
        // a bound a loaded machine meets by a wide margin; it catches work in proportion to the declared 256³ rows.
        XCTAssertLessThan(Date().timeIntervalSince(start), 1)
    }

    // MARK: - Rejected: rows

    func testWrongNumberOfRows() {
        let rows = Self.identityRows
        assertRejects(
            "LUT_3D_SIZE 2\n" + rows.dropLast().joined(separator: "\n") + "\n", line: 8,
            "LUT_3D_SIZE 2 needs 8 rows, found 7")
        assertRejects(
            "LUT_3D_SIZE 2\n" + (rows + ["0 0 0"]).joined(separator: "\n"), line: 10,
            "LUT_3D_SIZE 2 needs 8 rows; this is row 9")
        assertRejects("LUT_3D_SIZE 2\n", line: 1, "LUT_3D_SIZE 2 needs 8 rows, found 0")
        assertRejects("LUT_1D_SIZE 3\n0 0 0\n1 1 1\n", line: 3, "LUT_1D_SIZE 3 needs 3 rows, found 2")
        assertRejects(
            "LUT_1D_SIZE 2\nLUT_3D_SIZE 2\n0 0 0\n1 1 1\n" + rows.joined(separator: "\n") + "\n1 1 1\n",
            line: 13, "LUT_1D_SIZE 2 and LUT_3D_SIZE 2 need 10 rows; this is row 11")
        assertRejects(
            "LUT_1D_SIZE 2\nLUT_3D_SIZE 2\n0 0 0\n1 1 1\n", line: 4,
            "LUT_1D_SIZE 2 and LUT_3D_SIZE 2 need 10 rows, found 2")
    }

    func testRowsWithoutExactlyThreeNumbers() {
        assertRejects("LUT_3D_SIZE 2\n0 0\n", line: 2, "a row needs 3 numbers, found 2")
        assertRejects("LUT_3D_SIZE 2\n0 0 0 0\n", line: 2, "a row needs 3 numbers, found 4")
        assertRejects("LUT_3D_SIZE 2\n0 0 0\n1\n", line: 3, "a row needs 3 numbers, found 1")
        assertRejects("LUT_3D_SIZE 2\n0 0 0\n1,0,0\n", line: 3, "'1,0,0' is not a number")
    }

    func testNumbersThatAreNotWholeFiniteTokens() {
        let header = "LUT_3D_SIZE 2\n"
        for token in [
            "nan", "NaN", "inf", "-inf", "+Infinity", "1,0", "0.0e", "1e", "1e+", "0x1p3", "0x10", ".", "-",
            "+", "1.2.3", "--1", "1..", "e5", "1e5.0", "1_000", "١",
        ] {
            assertRejects(
                header + "0 \(token) 0\n", line: 2,
                "'\(token.unicodeScalars.allSatisfy(\.isASCII) ? token : "\\xD9\\xA1")' is not a number")
        }
        // nan/inf as the first token are numbers gone wrong, not unknown keywords.
        assertRejects(header + "nan 0 0\n", line: 2, "'nan' is not a number")
        assertRejects(header + "Inf 0 0\n", line: 2, "'Inf' is not a number")
        // Grammatical but not finite.
        assertRejects(header + "0 1e400 0\n", line: 2, "'1e400' is out of range")
        assertRejects(header + "0 -1e309 0\n", line: 2, "'-1e309' is out of range")
        // Keyword arguments go through the same grammar.
        assertRejects(header + "DOMAIN_MIN 0 nan 0\n", line: 2, "'nan' is not a number")
        assertRejects(header + "LUT_3D_INPUT_RANGE 0 1,5\n", line: 2, "'1,5' is not a number")
    }

    func testLongTokensAreShortenedInTheMessage() {
        let token = String(repeating: "7", count: 40) + "x"
        assertRejects(
            "LUT_3D_SIZE 2\n0 0 \(token)\n", line: 2, "'\(String(repeating: "7", count: 32))...' is not a number")
    }

    // MARK: - Rejected: keywords

    func testKeywordAfterData() {
        let start = "LUT_3D_SIZE 2\n0 0 0\n"
        assertRejects(start + "TITLE \"late\"\n", line: 3, "TITLE after the data (keywords come before the rows)")
        assertRejects(
            start + "DOMAIN_MIN 0 0 0\n", line: 3, "DOMAIN_MIN after the data (keywords come before the rows)")
        assertRejects(start + "lut_1d_size 2\n", line: 3, "LUT_1D_SIZE after the data (keywords come before the rows)")
        assertRejects(start + "LUT_2D_SIZE 2\n", line: 3, "LUT_2D_SIZE after the data (keywords come before the rows)")
    }

    func testDomainErrors() {
        let size = "LUT_3D_SIZE 2\n"
        assertRejects(
            size + "DOMAIN_MIN 0 1 0\nDOMAIN_MAX 1 1 1\n", line: 3,
            "DOMAIN_MIN must be below DOMAIN_MAX in every channel (green: 1.0 is not below 1.0)")
        assertRejects(
            size + "DOMAIN_MAX 1 1 0.5\nDOMAIN_MIN 0 0 0.75\n", line: 3,
            "DOMAIN_MIN must be below DOMAIN_MAX in every channel (blue: 0.75 is not below 0.5)")
        // Against the default of the keyword that is absent.
        assertRejects(
            size + "DOMAIN_MIN 2 0 0\n" + Self.identityRows.joined(separator: "\n"), line: 2,
            "DOMAIN_MIN must be below DOMAIN_MAX in every channel (red: 2.0 is not below 1.0)")
        assertRejects(size + "DOMAIN_MIN 0 0\n", line: 2, "DOMAIN_MIN needs 3 numbers, found 2")
        assertRejects(size + "DOMAIN_MAX 1 1 1 1\n", line: 2, "DOMAIN_MAX needs 3 numbers, found 4")
        assertRejects(size + "DOMAIN_MAX\n", line: 2, "DOMAIN_MAX needs 3 numbers, found 0")
        assertRejects(size + "LUT_3D_INPUT_RANGE 0\n", line: 2, "LUT_3D_INPUT_RANGE needs 2 numbers, found 1")
        assertRejects(
            size + "LUT_3D_INPUT_RANGE 1 1\n", line: 2, "LUT_3D_INPUT_RANGE min must be below max, got 1.0 and 1.0")
        assertRejects(
            "LUT_1D_SIZE 2\nLUT_1D_INPUT_RANGE 3 -1\n", line: 2,
            "LUT_1D_INPUT_RANGE min must be below max, got 3.0 and -1.0")
    }

    func testConflictingDomainKeywords() {
        assertRejects(
            identity(header: "LUT_3D_SIZE 2\nDOMAIN_MAX 2 2 2\nLUT_3D_INPUT_RANGE 0 2\n"), line: 3,
            "DOMAIN_MIN/DOMAIN_MAX and LUT_3D_INPUT_RANGE both set the domain")
        assertRejects(
            identity(header: "LUT_3D_SIZE 2\nLUT_1D_INPUT_RANGE 0 2\nLUT_3D_INPUT_RANGE 0 2\n"), line: 3,
            "LUT_1D_INPUT_RANGE and LUT_3D_INPUT_RANGE both set the domain")
        assertRejects(
            "LUT_1D_SIZE 2\nLUT_3D_SIZE 2\nDOMAIN_MIN 0 0 0\n0 0 0\n", line: 3,
            "DOMAIN_MIN/DOMAIN_MAX cannot be used with both a 1D shaper and a 3D table (use"
                + " LUT_1D_INPUT_RANGE and LUT_3D_INPUT_RANGE)")
    }

    func testDuplicateAndUnknownKeywords() {
        assertRejects("LUT_3D_SIZE 2\nlut_3d_size 2\n", line: 2, "duplicate LUT_3D_SIZE (first on line 1)")
        assertRejects("TITLE \"a\"\n\nTITLE \"b\"\n", line: 3, "duplicate TITLE (first on line 1)")
        assertRejects("LUT_4D_SIZE 2\n", line: 1, "unknown keyword 'LUT_4D_SIZE'")
        assertRejects("LUT_3D_SIZE 2\nLUT_IN_VIDEO_RANGE\n", line: 2, "unknown keyword 'LUT_IN_VIDEO_RANGE'")
    }

    func testTitleErrors() {
        assertRejects("TITLE\n", line: 1, "TITLE needs a quoted string")
        assertRejects("TITLE \"open\n", line: 1, "TITLE string has no closing quote")
        assertRejects("TITLE \"a\" b\n", line: 1, "unexpected text after the TITLE string")
        assertRejects(
            bytes: Array("TITLE \"".utf8) + [0xFF, 0xFE] + Array("\"\n".utf8), line: 1,
            "TITLE is not valid UTF-8")
    }

    // MARK: - Rejected: binary

    func testControlBytesAreBinary() {
        assertRejects(
            bytes: Array("LUT_3D_SIZE 2\n# comment".utf8) + [0] + Array(" more\n".utf8), line: 2,
            "binary data (control byte 0x00)")
        assertRejects(bytes: Array("LUT_3D_SIZE 2\n0 0 0\u{7F}\n".utf8), line: 2, "binary data (control byte 0x7F)")
        assertRejects(bytes: [0x1B, 0x5B], line: 1, "binary data (control byte 0x1B)")
    }

    func testRandomBinaryJunkIsRefused() {
        // 4 KiB of deterministic pseudo-random bytes, for several seeds: refused, never a crash or a hang.
        for seed in 1...32 as ClosedRange<UInt64> {
            var generator = SplitMix(seed: seed)
            let junk = (0..<4096).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            XCTAssertThrowsError(try CubeLUT.parse(data: junk, fileName: "junk.bin")) { error in
                let error = error as? FilmtoneError
                XCTAssertEqual(error?.code, .lutInvalid)
                XCTAssertTrue(error?.message.hasPrefix("junk.bin:") ?? false)
                XCTAssertFalse(error?.message.contains("\n") ?? true, "one-line message")
            }
        }
    }

    /// Valid files with random bytes overwritten, truncated or duplicated: each either parses into a consistent
    /// table or is `LUT_INVALID`; nothing else (no crash, no other error, no hang).
    func testMutatedFilesParseOrFailCleanly() {
        let original = Array(
            ("TITLE \"m\"\nLUT_1D_SIZE 2\nLUT_3D_SIZE 2\nLUT_3D_INPUT_RANGE 0 1\n0 0 0\n1 1 1\n"
                + Self.identityRows.joined(separator: "\n") + "\n").utf8)
        let alphabet = Array("0123456789 .-+eE#\"\t\r\nLUT_3DSIZEOMAXTINnaf,\u{7F}".utf8) + [0, 0xEF, 0xBB, 0xBF]
        var generator = SplitMix(seed: 7)
        var parsed = 0
        for _ in 0..<3000 {
            var bytes = original
            for _ in 0..<(1 + Int(generator.next() % 4)) {
                let position = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 4 {
                case 0: bytes[position] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: position)
                case 2: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: position)
                default: bytes = Array(bytes[..<position])
                }
                if bytes.isEmpty { break }
            }
            do {
                let lut = try CubeLUT.parse(data: bytes, fileName: "m.cube")
                if let table = lut.table1D { XCTAssertEqual(table.values.count, table.size * 3) }
                if let table = lut.table3D {
                    XCTAssertEqual(table.values.count, table.size * table.size * table.size * 3)
                }
                parsed += 1
            } catch let error as FilmtoneError {
                XCTAssertEqual(error.code, .lutInvalid)
                XCTAssertTrue(error.message.hasPrefix("m.cube:"), error.message)
            } catch {
                XCTFail("unexpected error \(error)")
            }
        }
        XCTAssertGreaterThan(parsed, 0, "some mutations (e.g. digit changes) still parse")
    }

    // MARK: - Real files

    /// Every `.cube` file in `Tests/Resources/luts`, with its kind, sizes, domains and title. A file added there
    /// without an entry here fails the test.
    func testEveryReferenceFileParses() throws {
        struct Expected {
            var kind: CubeLUT.Kind
            var size: Int
            var shaperSize: Int? = nil
            var min: SIMD3<Double> = [0, 0, 0]
            var max: SIMD3<Double> = [1, 1, 1]
            var shaperMin: SIMD3<Double>? = nil
            var shaperMax: SIMD3<Double>? = nil
            var title: String?
        }
        let foundry = "Generated by Foundry::LUT"
        let aces = Expected(kind: .oneD, size: 32, title: "ACES Proxy 10 to ACES")
        let threeD = Expected(kind: .threeD, size: 2, title: nil)
        var expected: [String: Expected] = [:]
        for dialect in ["iridas_cube", "resolve_cube"] {
            let folder = "colour-science/\(dialect)/"
            expected[folder + "ACES_Proxy_10_to_ACES.cube"] = aces
            expected[folder + "Colour_Correct.cube"] = Expected(kind: .threeD, size: 4, title: foundry)
            expected[folder + "RGB_1_0.5_0.25.cube"] = Expected(kind: .threeD, size: 4, title: foundry)
            expected[folder + "Unit.cube"] = Expected(kind: .threeD, size: 4, title: foundry)
            expected[folder + "Three_Dimensional_Table.cube"] = threeD
        }
        expected["colour-science/iridas_cube/Demo.cube"] = Expected(
            kind: .oneD, size: 3, max: [1, 2, 3], title: "Demo")
        expected["colour-science/resolve_cube/Demo.cube"] = Expected(
            kind: .oneD, size: 3, max: [3, 3, 3], title: "Demo")
        expected["colour-science/iridas_cube/eotf_sRGB_3D.cube"] = Expected(
            kind: .threeD, size: 8, min: [-0.1, -0.15, -0.2], max: [1.5, 2, 3], title: "sRGB EOTF")
        expected["colour-science/resolve_cube/eotf_sRGB_3D.cube"] = Expected(
            kind: .threeD, size: 8, min: [-1, -1, -1], max: [3, 3, 3], title: "sRGB EOTF")
        expected["colour-science/resolve_cube/LogC_Video.cube"] = Expected(
            kind: .shaperAnd3D, size: 4, shaperSize: 16, shaperMin: [0, 0, 0], shaperMax: [1, 1, 1],
            title: "AlexaV3 K1S1 LogC to Video Rec709")
        expected["colour-science/resolve_cube/Three_Dimensional_Table_With_Shaper.cube"] = Expected(
            kind: .shaperAnd3D, size: 3, shaperSize: 10, min: [-0.1, -0.1, -0.1], max: [3, 3, 3],
            shaperMin: [-0.1, -0.1, -0.1], shaperMax: [3, 3, 3], title: "LUT3D with My Shaper")
        expected["ocio/iridas_1d.cube"] = Expected(kind: .oneD, size: 5, min: [-2, 1, 0], max: [2, 2, 1], title: nil)
        expected["ocio/iridas_3d.cube"] = Expected(
            kind: .threeD, size: 2, min: [0, 1, 0], max: [2, 2, 1],
            title: "A test 3D-LUT.")
        expected["ocio/resolve_1d3d.cube"] = Expected(
            kind: .shaperAnd3D, size: 3, shaperSize: 6, min: [0, 0, 0], max: [4, 4, 4], shaperMin: [-1, -1, -1],
            shaperMax: [3, 3, 3], title: nil)

        let files = try SharedLUTs.allCubeFiles()
        XCTAssertEqual(files, expected.keys.sorted(), "the reference folder and this list must agree")
        for name in files {
            guard let want = expected[name] else { continue }
            let lut = try SharedLUTs.load(name)
            XCTAssertEqual(lut.kind, want.kind, name)
            XCTAssertEqual(lut.title, want.title, name)
            let main: (size: Int, min: SIMD3<Double>, max: SIMD3<Double>)? =
                want.kind == .oneD
                ? lut.table1D.map { ($0.size, $0.domainMin, $0.domainMax) }
                : lut.table3D.map { ($0.size, $0.domainMin, $0.domainMax) }
            XCTAssertEqual(main?.size, want.size, name)
            XCTAssertEqual(main?.min, want.min, name)
            XCTAssertEqual(main?.max, want.max, name)
            if want.kind == .shaperAnd3D {
                XCTAssertEqual(lut.table1D?.size, want.shaperSize, name)
                XCTAssertEqual(lut.table1D?.domainMin, want.shaperMin, name)
                XCTAssertEqual(lut.table1D?.domainMax, want.shaperMax, name)
            }
        }
    }

    func testReferenceLUTFolderIsPresent() throws {
        var isDirectory: ObjCBool = false
        XCTAssertTrue(
            FileManager.default.fileExists(atPath: SharedLUTs.root.path, isDirectory: &isDirectory)
                && isDirectory.boolValue, "missing \(SharedLUTs.root.path)")
    }

    // MARK: - Loading

    func testLoadRefusesOversizedFilesBeforeReading() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let path = folder.appendingPathComponent("big.cube").path
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(identity().utf8)))
        XCTAssertThrowsError(try CubeLUT.readFile(path, limit: 16)) { error in
            XCTAssertEqual((error as? FilmtoneError)?.code, .lutInvalid)
            XCTAssertEqual((error as? FilmtoneError)?.message.hasPrefix("\(path): file is "), true)
        }
        XCTAssertEqual(try CubeLUT.load(path: path), try parse(identity()))
        XCTAssertThrowsError(try CubeLUT.load(path: folder.path)) { error in
            XCTAssertEqual((error as? FilmtoneError)?.code, .fileNotFound)
        }
        XCTAssertThrowsError(try CubeLUT.load(path: folder.appendingPathComponent("none.cube").path)) { error in
            XCTAssertEqual((error as? FilmtoneError)?.code, .fileNotFound)
        }
        XCTAssertThrowsError(try CubeLUT.load(path: "/dev/zero")) { error in
            XCTAssertEqual((error as? FilmtoneError)?.code, .fileNotFound)
        }
    }

    func testErrorsNameTheFileAsGiven() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let path = folder.appendingPathComponent("bad.cube").path
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("LUT_3D_SIZE 300\n".utf8)))
        XCTAssertThrowsError(try CubeLUT.load(path: path)) { error in
            XCTAssertEqual(
                (error as? FilmtoneError)?.message, "\(path):1: LUT_3D_SIZE must be between 2 and 256, got 300")
        }
    }
}
