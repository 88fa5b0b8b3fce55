import Foundation

/// A JSON value that keeps object keys in the order written, so the CLI's output reads as documented.
public indirect enum JSONValue: Equatable, Sendable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool { a.serialized == b.serialized }

    /// Compact JSON text.
    public var serialized: String {
        switch self {
        case .string(let text): return JSONValue.quote(text)
        case .int(let number): return String(number)
        case .double(let number): return number.isFinite ? String(number) : "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .null: return "null"
        case .array(let items): return "[" + items.map(\.serialized).joined(separator: ",") + "]"
        case .object(let fields):
            return "{" + fields.map { JSONValue.quote($0.0) + ":" + $0.1.serialized }.joined(separator: ",") + "}"
        }
    }

    package static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

// MARK: - Reading

extension JSONValue {
    /// Why a text is not the JSON `JSONValue.parse` accepts, with the byte offset where reading stopped.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public var reason: String
        public var offset: Int

        public var description: String { "\(reason) at byte \(offset)" }
    }

    /// Parses one JSON text (RFC 8259) strictly, keeping what `JSONSerialization` loses: a number stays a number
    /// (`0` and `1` are not booleans, as Foundation on Linux gives them back), an integer that fits an `Int64` is
    /// `.int`, and a key written twice in one object is an error (`JSONSerialization` keeps one silently), as are
    /// trailing text, invalid UTF-8, control characters in strings and nesting deeper than 512.
    public static func parse(_ data: some Collection<UInt8>) throws(ParseError) -> JSONValue {
        var reader = JSONReader(bytes: Array(data))
        return try reader.document()
    }
}

/// The recursive-descent reader behind `JSONValue.parse`.
private struct JSONReader {
    let bytes: [UInt8]
    var index = 0
    var depth = 0
    static let maxDepth = 512

    init(bytes: [UInt8]) {
        self.bytes = bytes
        // A UTF-8 byte order mark is allowed before the text (RFC 8259 §8.1 lets a parser ignore it).
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    func failure(_ reason: String) -> JSONValue.ParseError { JSONValue.ParseError(reason: reason, offset: index) }

    mutating func document() throws(JSONValue.ParseError) -> JSONValue {
        let value = try self.value()
        skipWhitespace()
        guard index == bytes.count else { throw failure("unexpected text after the JSON value") }
        return value
    }

    mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    var next: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func expect(_ literal: String, _ value: JSONValue) throws(JSONValue.ParseError) -> JSONValue {
        let utf8 = Array(literal.utf8)
        guard bytes.count - index >= utf8.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
            throw failure("invalid literal")
        }
        index += utf8.count
        return value
    }

    mutating func value() throws(JSONValue.ParseError) -> JSONValue {
        skipWhitespace()
        guard let byte = next else { throw failure("unexpected end of text") }
        switch byte {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character")
        }
    }

    mutating func enter() throws(JSONValue.ParseError) {
        depth += 1
        guard depth <= JSONReader.maxDepth else { throw failure("nested deeper than \(JSONReader.maxDepth)") }
        index += 1
    }

    mutating func object() throws(JSONValue.ParseError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        var fields: [(String, JSONValue)] = []
        var seen: Set<String> = []
        skipWhitespace()
        if next == UInt8(ascii: "}") {
            index += 1
            return .object(fields)
        }
        while true {
            skipWhitespace()
            guard next == UInt8(ascii: "\"") else { throw failure("expected a key in quotes") }
            let keyStart = index
            let key = try string()
            guard seen.insert(key).inserted else {
                throw JSONValue.ParseError(reason: "duplicate key '\(key)'", offset: keyStart)
            }
            skipWhitespace()
            guard next == UInt8(ascii: ":") else { throw failure("expected ':' after a key") }
            index += 1
            fields.append((key, try value()))
            skipWhitespace()
            switch next {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(fields)
            default: throw failure("expected ',' or '}' in an object")
            }
        }
    }

    mutating func array() throws(JSONValue.ParseError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        var items: [JSONValue] = []
        skipWhitespace()
        if next == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            items.append(try value())
            skipWhitespace()
            switch next {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(items)
            default: throw failure("expected ',' or ']' in a list")
            }
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`: `.int` when it has no fraction or exponent and
    /// fits an `Int64`, else `.double` (finite: `1e400` is refused rather than read as infinity).
    mutating func number() throws(JSONValue.ParseError) -> JSONValue {
        let start = index
        func digits(_ reader: inout JSONReader) -> Int {
            let from = reader.index
            while let byte = reader.next, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { reader.index += 1 }
            return reader.index - from
        }
        if next == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        let integerDigits = digits(&self)
        guard integerDigits > 0 else { throw failure("invalid number") }
        guard integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
            throw failure("invalid number (leading zero)")
        }
        var isInteger = true
        if next == UInt8(ascii: ".") {
            index += 1
            isInteger = false
            guard digits(&self) > 0 else { throw failure("invalid number (no digit after '.')") }
        }
        if next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
            index += 1
            isInteger = false
            if next == UInt8(ascii: "+") || next == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw failure("invalid number (no digit in the exponent)") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .int(integer) }
        guard let double = Double(text), double.isFinite else { throw failure("number out of range") }
        return .double(double)
    }

    mutating func string() throws(JSONValue.ParseError) -> String {
        index += 1  // the opening quote
        var scalars = String.UnicodeScalarView()
        while true {
            guard let byte = next else { throw failure("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                index += 1
                scalars.append(try escape())
            case 0x00..<0x20:
                throw failure("control character in a string")
            case 0x00..<0x80:
                scalars.append(Unicode.Scalar(byte))
                index += 1
            default:
                scalars.append(try utf8Scalar())
            }
        }
    }

    /// One multi-byte UTF-8 sequence, validated (no overlong forms, no surrogates, at most U+10FFFF).
    mutating func utf8Scalar() throws(JSONValue.ParseError) -> Unicode.Scalar {
        let lead = bytes[index]
        let (count, minimum): (Int, UInt32) =
            switch lead {
            case 0xC2...0xDF: (2, 0x80)
            case 0xE0...0xEF: (3, 0x800)
            case 0xF0...0xF4: (4, 0x10000)
            default: (0, 0)
            }
        guard count > 0, bytes.count - index >= count else { throw failure("invalid UTF-8") }
        var value = UInt32(lead) & (0xFF >> (count + 1))
        for offset in 1..<count {
            let byte = bytes[index + offset]
            guard byte & 0xC0 == 0x80 else { throw failure("invalid UTF-8") }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        guard value >= minimum, let scalar = Unicode.Scalar(value) else { throw failure("invalid UTF-8") }
        index += count
        return scalar
    }

    mutating func escape() throws(JSONValue.ParseError) -> Unicode.Scalar {
        guard let byte = next else { throw failure("unterminated string") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try hex4()
            if (0xD800..<0xDC00).contains(unit) {
                // A high surrogate must be followed by an escaped low one: together they are one scalar.
                guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index + 1] == UInt8(ascii: "u")
                else { throw failure("unpaired surrogate in a \\u escape") }
                index += 2
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low),
                    let scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                else { throw failure("unpaired surrogate in a \\u escape") }
                return scalar
            }
            guard let scalar = Unicode.Scalar(unit) else { throw failure("unpaired surrogate in a \\u escape") }
            return scalar
        default:
            throw failure("invalid escape in a string")
        }
    }

    mutating func hex4() throws(JSONValue.ParseError) -> UInt32 {
        guard bytes.count - index >= 4,
            let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16),
            bytes[index..<index + 4].allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit })
        else { throw failure("invalid \\u escape") }
        index += 4
        return value
    }
}
