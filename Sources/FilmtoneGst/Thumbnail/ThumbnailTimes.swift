import FilmtoneCore
import Foundation

/// One time `ftgst thumb` is asked for (issue 13, item 2): an absolute time on the timeline, or a fraction of the
/// media's duration (`10%`, or one of `--count N`'s evenly spaced times), which is only known once the source is
/// open.
public enum ThumbnailTime: Equatable, Sendable {
    /// Milliseconds on the 0-based timeline.
    case milliseconds(Int64)
    /// A fraction of the duration, 0 ≤ f ≤ 1 (1 is the end: the last frame, whose end the duration is).
    case fraction(Double)
    /// `--time auto`: a frame worth showing, picked from keyframes of the first third (`FrameInterest`).
    case auto

    /// The time in milliseconds once the duration is known (a fraction is rounded down to whole milliseconds, and
    /// is at most 1 ms before the end: `100%` is the last frame, not a time past it).
    public func resolved(durationMilliseconds: Int64) -> Int64 {
        switch self {
        case .milliseconds(let value): return value
        case .fraction(let f):
            let time = Int64((Double(durationMilliseconds) * f).rounded(.down))
            return durationMilliseconds > 0 ? min(time, durationMilliseconds - 1) : time
        case .auto: return 0
        }
    }

    /// `--count N`: the middles of N equal parts of the duration, (i + 0.5) / N for i in 0..<N. Never the very
    /// first frame (often black, a fade-in) nor the end (past the last frame), and evenly spaced with the same
    /// margin at both ends, as a contact sheet is. N is 1…1000.
    public static func evenlySpaced(count: Int) throws -> [ThumbnailTime] {
        guard (1...1000).contains(count) else {
            throw FilmtoneError(.invalidArgument, "--count must be 1…1000")
        }
        return (0..<count).map { .fraction((Double($0) + 0.5) / Double(count)) }
    }

    /// `--time-ms A,B,C`: whole milliseconds, comma-separated (one value is today's `--time-ms N`).
    public static func parseMilliseconds(list text: String) throws -> [ThumbnailTime] {
        try items(text, option: "--time-ms").map { item in
            guard let value = Int64(item), item.allSatisfy(\.isASCII) else {
                throw FilmtoneError(.invalidArgument, "--time-ms takes whole milliseconds: \(item)")
            }
            guard (0...FrameOptions.maxMilliseconds).contains(value) else {
                throw FilmtoneError(.invalidArgument, "--time-ms must be 0…\(FrameOptions.maxMilliseconds): \(item)")
            }
            return .milliseconds(value)
        }
    }

    /// `--time A,B,C`, each one of: `12.5` or `12.5s` (seconds, as ffmpeg's `-ss`), `1:02.5` (M:SS), `1:00:02.5`
    /// (H:MM:SS; minutes and seconds below 60 after the first field), `10%` (of the duration, 0…100). Digits and one
    /// `.` only: no sign, no exponent, no spaces. Sub-millisecond digits are dropped (rounded down).
    /// `auto` alone picks the frame (`FrameInterest`); it takes no other time beside it.
    public static func parse(list text: String) throws -> [ThumbnailTime] {
        if text == "auto" { return [.auto] }
        let times = try items(text, option: "--time")
        guard !times.contains("auto") else {
            throw FilmtoneError(.invalidArgument, "--time auto picks one frame: give it alone, not in a list (\(text))")
        }
        return try times.map(parse(_:))
    }

    /// One `--time` item (see `parse(list:)`).
    public static func parse(_ item: String) throws -> ThumbnailTime {
        func bad(_ why: String) -> FilmtoneError {
            FilmtoneError(.invalidArgument, "--time \(item): \(why) (write 12.5s, 1:02.5, 1:00:02.5 or 10%)")
        }
        if item.hasSuffix("%") {
            guard let percent = decimal(item.dropLast()) else { throw bad("not a percentage") }
            guard percent.value <= 100 * 1000 else { throw bad("a percentage must be 0…100") }
            return .fraction(Double(percent.value) / 100_000)
        }
        let body = item.hasSuffix("s") ? item.dropLast() : Substring(item)
        let fields = body.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(fields.count), !(item.hasSuffix("s") && fields.count > 1) else {
            throw bad("not a time")
        }
        // Every field but the last is a whole number; the last may have a fraction.
        var total: Int64 = 0
        for (index, field) in fields.enumerated() {
            let isLast = index == fields.count - 1
            guard let number = decimal(field), isLast || number.value % 1000 == 0 else { throw bad("not a time") }
            if index > 0 {
                // After H or M, the field is two digits below 60 (`1:02.5`, not `1:2.5` nor `1:75`).
                guard number.integerDigits == 2, number.value < 60_000 else {
                    throw bad("minutes and seconds after a ':' are two digits below 60")
                }
            }
            let (scaled, overflow) = total.multipliedReportingOverflow(by: 60)
            guard !overflow, scaled <= FrameOptions.maxMilliseconds else { throw bad("too far") }
            total = scaled + number.value
            guard total <= FrameOptions.maxMilliseconds else { throw bad("too far") }
        }
        return .milliseconds(total)
    }

    /// The comma-separated items of an option's value; an empty item (`1000,,2000`, a trailing comma) is refused.
    private static func items(_ text: String, option: String) throws -> [String] {
        let items = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !items.contains(where: \.isEmpty) else {
            throw FilmtoneError(.invalidArgument, "\(option) has an empty time: \(text)")
        }
        return items
    }

    /// `D+` or `D+.D*` / `.D+` in thousandths (the digits past the third decimal dropped); nil for anything else.
    private static func decimal(_ text: Substring) -> (value: Int64, integerDigits: Int)? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, whole.count <= 13, whole.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            return nil
        }
        let fraction = parts.count == 2 ? parts[1] : ""
        guard fraction.allSatisfy({ $0.isASCII && $0.isNumber }), !(whole.isEmpty && fraction.isEmpty)
        else { return nil }
        let milli = (fraction + "000").prefix(3)
        guard let w = Int64(whole.isEmpty ? "0" : String(whole)), let m = Int64(milli) else { return nil }
        return (w * 1000 + m, whole.count)
    }
}
