import FilmtoneCore
import Foundation

/// A request file's JSON object, read field by field (`ftgst preview --request`, `ftgst export --request`). A
/// missing key reads as nil; an unknown key or a value of the wrong type is `INVALID_ARGUMENT` naming the key, so
/// a typo never silently falls back to a default.
struct JSONRequest {
    private let object: [String: Any]

    /// `INVALID_ARGUMENT` unless `data` is one JSON object.
    init(_ data: Data) throws {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw JSONRequest.invalid("not a JSON object")
        }
        self.object = object
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
    func value(_ key: String) -> Any? { object[key] }

    func string(_ key: String) throws -> String? {
        guard let value = object[key] else { return nil }
        guard let text = value as? String else { throw invalid("'\(key)' must be a string") }
        return text
    }

    func strings(_ key: String) throws -> [String]? {
        guard let value = object[key] else { return nil }
        guard let list = value as? [String] else { throw invalid("'\(key)' must be a list of strings") }
        return list
    }

    func bool(_ key: String) throws -> Bool? {
        guard let value = object[key] else { return nil }
        guard let flag = value as? Bool else { throw invalid("'\(key)' must be true or false") }
        return flag
    }

    /// JSON `true` is an `NSNumber` too: it is refused here.
    func number(_ key: String) throws -> Double? {
        guard let value = object[key] else { return nil }
        guard let number = value as? NSNumber, !(value is Bool), number.doubleValue.isFinite else {
            throw invalid("'\(key)' must be a number")
        }
        return number.doubleValue
    }

    /// A whole number below 10^15 in magnitude (exact in a `Double`; a time in ms far beyond any media).
    func whole(_ key: String) throws -> Int64? {
        guard let value = try number(key) else { return nil }
        guard value.rounded() == value, abs(value) < 1e15 else { throw invalid("'\(key)' must be a whole number") }
        return Int64(value)
    }
}
