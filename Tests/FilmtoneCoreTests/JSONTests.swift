import XCTest

@testable import FilmtoneCore

/// `JSONValue.parse`: the strict reader of request files.
final class JSONTests: XCTestCase {
    private func parse(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

    private func assertRefused(_ text: String, _ reason: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try parse(text), text, file: file, line: line) { error in
            let message = (error as? JSONValue.ParseError)?.reason ?? "\(error)"
            XCTAssertTrue(message.contains(reason), "\(text): \(message)", file: file, line: line)
        }
    }

    func testNumbersStayNumbers() throws {
        XCTAssertEqual(try parse("0"), .int(0))
        XCTAssertEqual(try parse("1"), .int(1))
        XCTAssertEqual(try parse("-0"), .int(0))
        XCTAssertEqual(try parse("9223372036854775807"), .int(.max))
        XCTAssertEqual(try parse("9223372036854775808"), .double(9_223_372_036_854_775_808))
        XCTAssertEqual(try parse("1.5"), .double(1.5))
        XCTAssertEqual(try parse("1E2"), .double(100))
        XCTAssertEqual(try parse("-2.5e-3"), .double(-0.0025))
        XCTAssertEqual(try parse("true"), .bool(true))
        for bad in ["01", "1.", ".5", "+1", "1e", "-", "0x10", "NaN", "Infinity"] {
            XCTAssertThrowsError(try parse(bad), bad)
        }
        assertRefused("1e400", "out of range")
    }

    func testObjectsKeepTheirOrderAndRefuseADuplicateKey() throws {
        XCTAssertEqual(
            try parse(#" {"b": 1, "a": [true, null, "x"], "c": {}} "#),
            .object([("b", .int(1)), ("a", .array([.bool(true), .null, .string("x")])), ("c", .object([]))]))
        assertRefused(#"{"a": 1, "a": 2}"#, "duplicate key 'a'")
        assertRefused(#"{"a": {"b": 1, "b": 1}}"#, "duplicate key 'b'")
        // Two spellings of one key are one key.
        assertRefused(#"{"a": 1, "\u0061": 2}"#, "duplicate key 'a'")
        XCTAssertEqual(
            try parse(#"[{"a": 1}, {"a": 2}]"#), .array([.object([("a", .int(1))]), .object([("a", .int(2))])]))
    }

    func testStrings() throws {
        XCTAssertEqual(try parse(#""a\"\\\/\b\f\n\r\t\u00e9\ud83c\udfac""#), .string("a\"\\/\u{08}\u{0C}\n\r\té🎬"))
        XCTAssertEqual(try JSONValue.parse(Array("\"café\"".utf8)), .string("café"))
        assertRefused(#""\ud83c""#, "unpaired surrogate")
        assertRefused(#""\x""#, "invalid escape")
        assertRefused("\"a\nb\"", "control character")
        assertRefused("\"abc", "unterminated")
        XCTAssertThrowsError(try JSONValue.parse([0x22, 0xC3, 0x28, 0x22]), "invalid UTF-8")
        XCTAssertThrowsError(try JSONValue.parse([0x22, 0xC0, 0xAF, 0x22]), "an overlong '/'")
        XCTAssertThrowsError(try JSONValue.parse([0x22, 0xED, 0xA0, 0x80, 0x22]), "a UTF-8 surrogate")
    }

    func testWholeTextsOnly() throws {
        XCTAssertEqual(try JSONValue.parse([0xEF, 0xBB, 0xBF] + Array("{}".utf8)), .object([]), "a BOM is allowed")
        assertRefused("{} {}", "after the JSON value")
        assertRefused("", "unexpected end")
        assertRefused("{\"a\" 1}", "expected ':'")
        assertRefused("[1,]", "unexpected character")
        assertRefused("{\"a\":1,}", "expected a key")
        assertRefused(String(repeating: "[", count: 600) + String(repeating: "]", count: 600), "nested deeper")
    }

    func testWhatItWritesReadsBack() throws {
        let value = JSONValue.object([
            ("s", .string("a \"q\" \u{01}\n")), ("n", .int(-3)), ("d", .double(0.25)), ("l", .array([.null])),
        ])
        XCTAssertEqual(try JSONValue.parse(Array(value.serialized.utf8)), value)
    }
}
