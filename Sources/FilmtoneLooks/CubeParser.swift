import FilmtoneCore

/// The `.cube` reader behind `CubeLUT.parse`: one linear pass over the bytes, line by line, no regular expressions.
///
/// Grammar (both dialects): lines end in LF, CRLF or CR; an optional UTF-8 byte-order mark starts the file; tokens
/// are separated by spaces and tabs; a token starting with `#` starts a comment that runs to the end of the line.
/// Keywords (case-insensitive) come first, then the rows: three numbers each, the 1D rows (if any) before the 3D
/// rows, red varying fastest in the 3D table. Every error is `LUT_INVALID` with `file:line: reason`.
///
/// Memory: the tables never hold more rows than declared (an extra row is an error before it is stored), and the
/// up-front reservation is also capped by how many rows the rest of the file could still hold, so a tiny file that
/// declares `LUT_3D_SIZE 256` costs nothing.
package struct CubeParser {
    /// Keywords, matched without regard to case.
    package enum Keyword: String, CaseIterable {
        case title = "TITLE"
        case size1D = "LUT_1D_SIZE"
        case size2D = "LUT_2D_SIZE"
        case size3D = "LUT_3D_SIZE"
        case domainMin = "DOMAIN_MIN"
        case domainMax = "DOMAIN_MAX"
        case inputRange1D = "LUT_1D_INPUT_RANGE"
        case inputRange3D = "LUT_3D_INPUT_RANGE"

        package static let spellings: [([UInt8], Keyword)] = allCases.map { (Array($0.rawValue.utf8), $0) }
    }

    package static let sizeRange1D = 2...65536
    package static let sizeRange3D = 2...256

    private let bytes: UnsafeBufferPointer<UInt8>
    private let fileName: String
    /// The current line, counted from 1.
    private var line = 0
    /// Where the current line starts (for the reservation cap).
    private var lineStart = 0

    // MARK: Header state

    /// The line of each keyword seen, for duplicates and for errors found once the header is complete.
    private var keywordLines: [Keyword: Int] = [:]
    private var title: String?
    private var size1D: Int?
    private var size3D: Int?
    private var domainMin: SIMD3<Double>?
    private var domainMax: SIMD3<Double>?
    private var inputRange1D: (min: Double, max: Double)?
    private var inputRange3D: (min: Double, max: Double)?

    // MARK: Data state

    private var headerComplete = false
    private var domain1D = (min: SIMD3<Double>(repeating: 0), max: SIMD3<Double>(repeating: 1))
    private var domain3D = (min: SIMD3<Double>(repeating: 0), max: SIMD3<Double>(repeating: 1))
    private var expectedRows1D = 0
    private var expectedRows3D = 0
    private var values1D: [Double] = []
    private var values3D: [Double] = []
    private var rows = 0

    package init(bytes: UnsafeBufferPointer<UInt8>, fileName: String) {
        self.bytes = bytes
        self.fileName = fileName
    }

    // MARK: - Lines

    package mutating func parse() throws -> CubeLUT {
        var position = 0
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { position = 3 }
        while position < bytes.count {
            line += 1
            lineStart = position
            var end = position
            while end < bytes.count {
                let byte = bytes[end]
                if byte == .lf || byte == .cr { break }
                // Text never holds control characters other than tab: this is how binary junk is caught even when
                // it happens to sit in a comment.
                if (byte < 0x20 && byte != .tab) || byte == 0x7F {
                    throw fail("binary data (control byte \(Self.hex(byte)))")
                }
                end += 1
            }
            position = end
            if position < bytes.count {
                position += (bytes[position] == .cr && position + 1 < bytes.count && bytes[position + 1] == .lf) ? 2 : 1
            }
            try handleLine(lineStart..<end)
        }
        return try finish()
    }

    private mutating func handleLine(_ range: Range<Int>) throws {
        var cursor = range.lowerBound
        guard let first = nextToken(&cursor, end: range.upperBound) else { return }  // blank or comment
        if Self.isLetter(bytes[first.lowerBound]) {
            if let keyword = keyword(first) {
                try handleKeyword(keyword, after: first.upperBound, end: range.upperBound)
                return
            }
            if !Self.isNonFiniteSpelling(bytes[first]) {
                throw fail("unknown keyword '\(display(first))'")
            }
            // `nan`, `inf`: a row with a non-number in it, reported as such below.
        }
        try handleRow(first: first, cursor: cursor, end: range.upperBound)
    }

    /// The next token at or after `cursor`, or nil at the end of the line or at a comment.
    private func nextToken(_ cursor: inout Int, end: Int) -> Range<Int>? {
        while cursor < end, bytes[cursor] == .space || bytes[cursor] == .tab { cursor += 1 }
        guard cursor < end, bytes[cursor] != .hash else { return nil }
        let start = cursor
        while cursor < end, bytes[cursor] != .space, bytes[cursor] != .tab { cursor += 1 }
        return start..<cursor
    }

    // MARK: - Keywords

    private func keyword(_ token: Range<Int>) -> Keyword? {
        for (spelling, keyword) in Keyword.spellings where spelling.count == token.count {
            var same = true
            for (offset, letter) in spelling.enumerated() where Self.upper(bytes[token.lowerBound + offset]) != letter {
                same = false
                break
            }
            if same { return keyword }
        }
        return nil
    }

    private mutating func handleKeyword(_ keyword: Keyword, after start: Int, end: Int) throws {
        let name = keyword.rawValue
        guard rows == 0 else { throw fail("\(name) after the data (keywords come before the rows)") }
        if let first = keywordLines[keyword] { throw fail("duplicate \(name) (first on line \(first))") }
        keywordLines[keyword] = line
        var cursor = start
        switch keyword {
        case .title:
            title = try parseTitle(from: start, end: end)
        case .size2D:
            throw fail("LUT_2D_SIZE is not supported (only 1D and 3D tables)")
        case .size1D:
            size1D = try parseSize(name, range: Self.sizeRange1D, cursor: &cursor, end: end)
        case .size3D:
            size3D = try parseSize(name, range: Self.sizeRange3D, cursor: &cursor, end: end)
        case .domainMin:
            let numbers = try parseNumbers(name, count: 3, cursor: &cursor, end: end)
            domainMin = SIMD3(numbers[0], numbers[1], numbers[2])
        case .domainMax:
            let numbers = try parseNumbers(name, count: 3, cursor: &cursor, end: end)
            domainMax = SIMD3(numbers[0], numbers[1], numbers[2])
        case .inputRange1D, .inputRange3D:
            let numbers = try parseNumbers(name, count: 2, cursor: &cursor, end: end)
            guard numbers[0] < numbers[1] else {
                throw fail("\(name) min must be below max, got \(numbers[0]) and \(numbers[1])")
            }
            if keyword == .inputRange1D {
                inputRange1D = (numbers[0], numbers[1])
            } else {
                inputRange3D = (numbers[0], numbers[1])
            }
        }
    }

    /// `TITLE "text"`; an unquoted title is taken as the rest of the line. Must be UTF-8.
    private func parseTitle(from start: Int, end: Int) throws -> String {
        var cursor = start
        while cursor < end, bytes[cursor] == .space || bytes[cursor] == .tab { cursor += 1 }
        guard cursor < end else { throw fail("TITLE needs a quoted string") }
        var text: Range<Int>
        if bytes[cursor] == .quote {
            var close = cursor + 1
            while close < end, bytes[close] != .quote { close += 1 }
            guard close < end else { throw fail("TITLE string has no closing quote") }
            text = (cursor + 1)..<close
            var after = close + 1
            if nextToken(&after, end: end) != nil { throw fail("unexpected text after the TITLE string") }
        } else {
            var last = end
            while last > cursor, bytes[last - 1] == .space || bytes[last - 1] == .tab { last -= 1 }
            text = cursor..<last
        }
        guard let title = String(validating: UnsafeBufferPointer(rebasing: bytes[text]), as: UTF8.self) else {
            throw fail("TITLE is not valid UTF-8")
        }
        return title
    }

    private func parseSize(_ name: String, range: ClosedRange<Int>, cursor: inout Int, end: Int) throws -> Int {
        guard let token = nextToken(&cursor, end: end) else { throw fail("\(name) needs a size") }
        var extra = 0
        while nextToken(&cursor, end: end) != nil { extra += 1 }
        guard extra == 0 else { throw fail("\(name) takes one number, found \(extra + 1)") }
        guard bytes[token].allSatisfy(Self.isDigit) else {
            throw fail("\(name) must be a whole number, got '\(display(token))'")
        }
        // Past 7 significant digits it is out of range whatever the digits are; stopping there cannot overflow.
        let significant = bytes[token].drop { $0 == .zero }
        let value = significant.count > 7 ? Int.max : significant.reduce(0) { $0 * 10 + Int($1 - .zero) }
        guard range.contains(value) else {
            throw fail("\(name) must be between \(range.lowerBound) and \(range.upperBound), got \(display(token))")
        }
        return value
    }

    /// Exactly `count` numbers after a keyword.
    private func parseNumbers(_ name: String, count: Int, cursor: inout Int, end: Int) throws -> [Double] {
        var numbers: [Double] = []
        var found = 0
        while let token = nextToken(&cursor, end: end) {
            let value = try number(token)
            if found < count { numbers.append(value) }
            found += 1
        }
        guard found == count else { throw fail("\(name) needs \(count) numbers, found \(found)") }
        return numbers
    }

    // MARK: - Rows

    private mutating func handleRow(first: Range<Int>, cursor start: Int, end: Int) throws {
        guard size1D != nil || size3D != nil else { throw fail("data before LUT_1D_SIZE or LUT_3D_SIZE") }
        if !headerComplete { try completeHeader() }
        var row = SIMD3<Double>()
        var count = 0
        var cursor = start
        var token: Range<Int>? = first
        while let current = token {
            let value = try number(current)
            if count < 3 { row[count] = value }
            count += 1
            token = nextToken(&cursor, end: end)
        }
        guard count == 3 else { throw fail("a row needs 3 numbers, found \(count)") }
        guard rows < expectedRows1D + expectedRows3D else {
            throw fail("\(declaration) \(rowsVerb) \(expectedRows1D + expectedRows3D) rows; this is row \(rows + 1)")
        }
        if rows < expectedRows1D {
            values1D.append(row.x)
            values1D.append(row.y)
            values1D.append(row.z)
        } else {
            values3D.append(row.x)
            values3D.append(row.y)
            values3D.append(row.z)
        }
        rows += 1
    }

    /// Runs once, at the first row (or at the end of a file without rows): resolves the domains and reserves the
    /// tables.
    private mutating func completeHeader() throws {
        headerComplete = true
        let hasDomain = domainMin != nil || domainMax != nil
        let domainLine = max(keywordLines[.domainMin] ?? 0, keywordLines[.domainMax] ?? 0)
        if hasDomain {
            let low = domainMin ?? SIMD3(repeating: 0)
            let high = domainMax ?? SIMD3(repeating: 1)
            for channel in 0..<3 where !(low[channel] < high[channel]) {
                let names = ["red", "green", "blue"]
                throw fail(
                    "DOMAIN_MIN must be below DOMAIN_MAX in every channel (\(names[channel]): \(low[channel]) is not"
                        + " below \(high[channel]))", line: domainLine)
            }
            if size1D != nil && size3D != nil {
                throw fail(
                    "DOMAIN_MIN/DOMAIN_MAX cannot be used with both a 1D shaper and a 3D table (use"
                        + " LUT_1D_INPUT_RANGE and LUT_3D_INPUT_RANGE)", line: domainLine)
            }
        }
        typealias Source = (name: String, line: Int, min: SIMD3<Double>, max: SIMD3<Double>)
        var domainSource: Source? = nil
        if hasDomain {
            domainSource = (
                "DOMAIN_MIN/DOMAIN_MAX", domainLine, domainMin ?? SIMD3(repeating: 0),
                domainMax ?? SIMD3(repeating: 1)
            )
        }
        let range1D: Source? = inputRange1D.map {
            ("LUT_1D_INPUT_RANGE", keywordLines[.inputRange1D]!, SIMD3(repeating: $0.min), SIMD3(repeating: $0.max))
        }
        let range3D: Source? = inputRange3D.map {
            ("LUT_3D_INPUT_RANGE", keywordLines[.inputRange3D]!, SIMD3(repeating: $0.min), SIMD3(repeating: $0.max))
        }
        /// The one keyword that sets a table's domain; two are a conflict.
        func single(_ sources: [Source?]) throws -> (min: SIMD3<Double>, max: SIMD3<Double>)? {
            let present = sources.compactMap { $0 }.sorted { $0.line < $1.line }
            if present.count > 1 {
                throw fail("\(present[0].name) and \(present[1].name) both set the domain", line: present[1].line)
            }
            return present.first.map { ($0.min, $0.max) }
        }
        switch (size1D != nil, size3D != nil) {
        case (true, true):
            if let domain = try single([range1D]) { domain1D = domain }
            if let domain = try single([range3D]) { domain3D = domain }
        case (true, false):
            // A range keyword for the table the file does not have is taken for the one it has (files written by
            // colour-science 0.3.11 put LUT_1D_INPUT_RANGE on a 3D-only table; its values show it is meant).
            if let domain = try single([domainSource, range1D, range3D]) { domain1D = domain }
        default:
            if let domain = try single([domainSource, range3D, range1D]) { domain3D = domain }
        }
        expectedRows1D = size1D ?? 0
        expectedRows3D = size3D.map { $0 * $0 * $0 } ?? 0
        // A row is at least "0 0 0" plus a line break: the rest of the file holds at most this many.
        let possibleRows = (bytes.count - lineStart) / 6 + 1
        values1D.reserveCapacity(3 * min(expectedRows1D, possibleRows))
        values3D.reserveCapacity(3 * min(expectedRows3D, possibleRows))
    }

    private mutating func finish() throws -> CubeLUT {
        line = max(line, 1)
        guard size1D != nil || size3D != nil else { throw fail("missing LUT_1D_SIZE or LUT_3D_SIZE") }
        if !headerComplete { try completeHeader() }
        let expected = expectedRows1D + expectedRows3D
        guard rows == expected else { throw fail("\(declaration) \(rowsVerb) \(expected) rows, found \(rows)") }
        let table1D = size1D.map {
            CubeLUT.Table1D(size: $0, domainMin: domain1D.min, domainMax: domain1D.max, values: values1D)
        }
        let table3D = size3D.map {
            CubeLUT.Table3D(size: $0, domainMin: domain3D.min, domainMax: domain3D.max, values: values3D)
        }
        return CubeLUT(title: title, table1D: table1D, table3D: table3D)
    }

    /// `LUT_3D_SIZE 4`, `LUT_1D_SIZE 6 and LUT_3D_SIZE 3`: what the row count comes from.
    private var declaration: String {
        [size1D.map { "LUT_1D_SIZE \($0)" }, size3D.map { "LUT_3D_SIZE \($0)" }].compactMap { $0 }
            .joined(separator: " and ")
    }

    private var rowsVerb: String { size1D != nil && size3D != nil ? "need" : "needs" }

    // MARK: - Numbers

    /// A finite decimal number, or `LUT_INVALID` naming the token.
    private func number(_ token: Range<Int>) throws -> Double {
        switch Self.decimal(UnsafeBufferPointer(rebasing: bytes[token])) {
        case .notANumber: throw fail("'\(display(token))' is not a number")
        case .value(let value) where value.isFinite: return value
        case .value: throw fail("'\(display(token))' is out of range")
        }
    }

    package enum Decimal: Equatable {
        case notANumber
        /// Correctly rounded; infinite when the literal is beyond `Double`'s range.
        case value(Double)
    }

    /// Exact powers of ten: every one up to 1e22 is a `Double` without rounding.
    private static let powersOfTen: [Double] = (0...22).map { exponent in
        (0..<exponent).reduce(1.0) { product, _ in product * 10 }
    }

    /// The number grammar: optional sign, digits with an optional fraction (`1`, `1.`, `.75`, `1.5`), an optional
    /// exponent with digits (`1e-3`); nothing else (`nan`, `inf`, hex, `1,0`, `0.0e` are not numbers). Checked here
    /// first, so `Double(String)` never sees what it would also accept.
    ///
    /// Fast path (Clinger): with at most 15 digits the digits form an exact integer `m`, and for a power of ten
    /// `10^k` with |k| ≤ 22 (also exact), `m·10^k` or `m/10^k` is one correctly rounded operation, so the result is
    /// the same as `Double(String)`'s; `CubeParserTests` checks that. It covers the numbers LUT files are made of and
    /// makes parsing several times faster. Anything else goes to `Double(String)`.
    package static func decimal(_ token: UnsafeBufferPointer<UInt8>) -> Decimal {
        var index = 0
        let end = token.count
        var negative = false
        if index < end, token[index] == .plus || token[index] == .minus {
            negative = token[index] == .minus
            index += 1
        }
        var digits = 0
        var mantissa: UInt64 = 0
        var fractionDigits = 0
        while index < end, isDigit(token[index]) {
            if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(token[index] - .zero) }
            index += 1
            digits += 1
        }
        if index < end, token[index] == .dot {
            index += 1
            while index < end, isDigit(token[index]) {
                if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(token[index] - .zero) }
                index += 1
                digits += 1
                fractionDigits += 1
            }
        }
        guard digits > 0 else { return .notANumber }
        var exponent = 0
        var exponentDigits = 0
        if index < end, (token[index] | 0x20) == .lowerE {
            index += 1
            var exponentNegative = false
            if index < end, token[index] == .plus || token[index] == .minus {
                exponentNegative = token[index] == .minus
                index += 1
            }
            while index < end, isDigit(token[index]) {
                if exponent < 100_000 { exponent = exponent * 10 + Int(token[index] - .zero) }
                index += 1
                exponentDigits += 1
            }
            guard exponentDigits > 0 else { return .notANumber }
            if exponentNegative { exponent = -exponent }
        }
        guard index == end else { return .notANumber }
        let scale = exponent - fractionDigits
        if digits <= 15, abs(scale) <= 22 {
            let magnitude = scale < 0 ? Double(mantissa) / powersOfTen[-scale] : Double(mantissa) * powersOfTen[scale]
            return .value(negative ? -magnitude : magnitude)
        }
        return Double(String(decoding: token, as: UTF8.self)).map(Decimal.value) ?? .notANumber
    }

    // MARK: - Errors

    private func fail(_ reason: String, line errorLine: Int? = nil) -> FilmtoneError {
        FilmtoneError(.lutInvalid, "\(fileName):\(errorLine ?? line): \(reason)")
    }

    /// A token as it may appear in a one-line message: printable ASCII kept, other bytes as `\xNN`, at most 32
    /// bytes shown.
    private func display(_ token: Range<Int>) -> String {
        var text = ""
        for byte in bytes[token].prefix(32) {
            if byte >= 0x20 && byte < 0x7F && byte != .backslash {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else if byte == .backslash {
                text += "\\\\"
            } else {
                text += "\\x" + Self.hex(byte).dropFirst(2)
            }
        }
        return token.count > 32 ? text + "..." : text
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "0x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0xF)])
    }

    // MARK: - Bytes

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= .zero && byte <= .zero + 9 }
    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
    private static func upper(_ byte: UInt8) -> UInt8 { byte >= 0x61 && byte <= 0x7A ? byte - 0x20 : byte }

    /// `nan`, `inf`, `infinity` in any case: numbers to some parsers, rejected here as numbers, not keywords.
    private static func isNonFiniteSpelling(_ token: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        let lower = token.map { $0 | 0x20 }
        return lower == Array("nan".utf8) || lower == Array("inf".utf8) || lower == Array("infinity".utf8)
    }
}

extension UInt8 {
    fileprivate static let tab: UInt8 = 0x09
    fileprivate static let lf: UInt8 = 0x0A
    fileprivate static let cr: UInt8 = 0x0D
    fileprivate static let space: UInt8 = 0x20
    fileprivate static let quote: UInt8 = 0x22
    fileprivate static let hash: UInt8 = 0x23
    fileprivate static let plus: UInt8 = 0x2B
    fileprivate static let minus: UInt8 = 0x2D
    fileprivate static let dot: UInt8 = 0x2E
    fileprivate static let zero: UInt8 = 0x30
    fileprivate static let lowerE: UInt8 = 0x65
    fileprivate static let backslash: UInt8 = 0x5C
}
