import FilmtoneCore
import Foundation

/// A request file's JSON object, read field by field (`ftgst preview --request`, `ftgst export --request`). A
/// missing key reads as nil; an unknown key or a value of the wrong type is `INVALID_ARGUMENT` naming the key, so
/// a typo never silently falls back to a default.
struct JSONRequest {
    private let object: [String: JSONValue]

    /// `INVALID_ARGUMENT` unless `data` is one JSON object, read strictly (`JSONValue.parse`): a key written twice
    /// is refused (which of the two would win is nobody's guess), and numbers stay numbers (`"intensity": 1` is
    /// the number 1, which `JSONSerialization` on Linux gives back as `true`).
    init(_ data: Data) throws {
        let value: JSONValue
        do {
            value = try JSONValue.parse(data)
        } catch {
            throw JSONRequest.invalid("not valid JSON: \(error)")
        }
        guard case .object(let fields) = value else { throw JSONRequest.invalid("not a JSON object") }
        try self.init(fields: fields)
    }

    /// An object already parsed by `JSONValue.parse` (a line of `ftgst batch`'s jobs file), whose keys are unique.
    init(fields: [(String, JSONValue)]) throws {
        object = Dictionary(fields, uniquingKeysWith: { first, _ in first })  // keys are unique: parse checks
    }

    /// Refuses the first key (in sorted order) that is not in `known`.
    func refuseUnknownKeys(_ known: Set<String>) throws {
        if let unknown = object.keys.filter({ !known.contains($0) }).sorted().first {
            throw invalid("unknown key '\(unknown)'")
        }
    }

    func invalid(_ message: String) -> FilmtoneError { JSONRequest.invalid(message) }

    private static func invalid(_ message: String) -> FilmtoneError {
        FilmtoneError(.invalidArgument, "request: \(message)")
    }

    /// The raw value, for a field that takes more than one type (`depth`: `"8"` or `8`).
    func value(_ key: String) -> JSONValue? { object[key] }

    func string(_ key: String) throws -> String? {
        guard let value = object[key] else { return nil }
        guard case .string(let text) = value else { throw invalid("'\(key)' must be a string") }
        return text
    }

    func strings(_ key: String) throws -> [String]? {
        guard let value = object[key] else { return nil }
        guard case .array(let items) = value else { throw invalid("'\(key)' must be a list of strings") }
        return try items.map { item in
            guard case .string(let text) = item else { throw invalid("'\(key)' must be a list of strings") }
            return text
        }
    }

    func bool(_ key: String) throws -> Bool? {
        guard let value = object[key] else { return nil }
        guard case .bool(let flag) = value else { throw invalid("'\(key)' must be true or false") }
        return flag
    }

    /// Any JSON number (`0`, `1`, `-2.5e3`); `true` and `false` are not numbers.
    func number(_ key: String) throws -> Double? {
        guard let value = object[key] else { return nil }
        switch value {
        case .int(let integer): return Double(integer)
        case .double(let double): return double
        default: throw invalid("'\(key)' must be a number")
        }
    }

    /// A whole number below 10^15 in magnitude (exact in a `Double`; a time in ms far beyond any media).
    func whole(_ key: String) throws -> Int64? {
        guard let value = object[key] else { return nil }
        let limit: Int64 = 1_000_000_000_000_000
        switch value {
        case .int(let integer):
            guard integer > -limit, integer < limit else { throw invalid("'\(key)' must be a whole number") }
            return integer
        case .double(let double):
            guard double.rounded() == double, abs(double) < Double(limit) else {
                throw invalid("'\(key)' must be a whole number")
            }
            return Int64(double)
        default:
            throw invalid("'\(key)' must be a number")
        }
    }
}
