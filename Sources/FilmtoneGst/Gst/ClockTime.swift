internal import CGst
import Foundation

/// A `GstClockTime` as a Swift value. "None" (`GST_CLOCK_TIME_NONE`) is represented by `nil` at the use site.
struct ClockTime: Comparable, Hashable, CustomStringConvertible {
    var nanoseconds: UInt64

    init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// nil for `GST_CLOCK_TIME_NONE`.
    init?(raw: GstClockTime) {
        guard raw != ftgst_clock_time_none() else { return nil }
        self.nanoseconds = UInt64(raw)  // GstClockTime is guint64, which imports as UInt on Linux
    }

    /// Negative times are zero; times beyond `UInt64` nanoseconds saturate (validation keeps them far lower).
    static func milliseconds(_ ms: Int64) -> ClockTime {
        let (product, overflow) = UInt64(max(0, ms)).multipliedReportingOverflow(by: 1_000_000)
        return ClockTime(nanoseconds: overflow ? UInt64.max - 1 : product)
    }

    static let zero = ClockTime(nanoseconds: 0)

    /// Whole milliseconds, rounded down.
    var milliseconds: Int64 { Int64(nanoseconds / 1_000_000) }

    var raw: GstClockTime { GstClockTime(nanoseconds) }

    static func < (a: ClockTime, b: ClockTime) -> Bool { a.nanoseconds < b.nanoseconds }

    var description: String { String(format: "%.3f s", Double(nanoseconds) / 1e9) }

    /// The raw "none" value, for C calls that take an optional time.
    static func raw(_ time: ClockTime?) -> GstClockTime { time?.raw ?? ftgst_clock_time_none() }
}

/// A point in time after which a wait gives up. Every wait in ftgst takes one (STYLE lesson 8).
struct Deadline {
    let end: ContinuousClock.Instant

    init(after milliseconds: Int64) {
        end = ContinuousClock.now.advanced(by: .milliseconds(milliseconds))
    }

    var hasPassed: Bool { ContinuousClock.now >= end }

    /// What is left, never negative, at most `cap` when given (so a loop can wake up to check cancellation).
    func remaining(cap: ClockTime? = nil) -> ClockTime {
        let left = ContinuousClock.now.duration(to: end)
        let (seconds, attoseconds) = left.components
        let ns = seconds < 0 ? 0 : UInt64(seconds) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        let value = ClockTime(nanoseconds: ns)
        if let cap, cap < value { return cap }
        return value
    }
}
