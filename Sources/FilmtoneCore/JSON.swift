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
