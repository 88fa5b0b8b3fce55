package import CGst
import Foundation

/// A `GstClockTime` as a Swift value. "None" (`GST_CLOCK_TIME_NONE`) is represented by `nil` at the use site.
package struct ClockTime: Sendable, Comparable, Hashable, CustomStringConvertible {
    package var nanoseconds: UInt64

    package init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// nil for `GST_CLOCK_TIME_NONE`.
    package init?(raw: GstClockTime) {
        guard raw != ftgst_clock_time_none() else { return nil }
        self.nanoseconds = UInt64(raw)  // GstClockTime is guint64, which imports as UInt on Linux
    }

    /// Negative times are zero; times beyond `UInt64` nanoseconds saturate (validation keeps them far lower).
    package static func milliseconds(_ ms: Int64) -> ClockTime {
        let (product, overflow) = UInt64(max(0, ms)).multipliedReportingOverflow(by: 1_000_000)
        return ClockTime(nanoseconds: overflow ? UInt64.max - 1 : product)
    }

    package static let zero = ClockTime(nanoseconds: 0)

    /// Whole milliseconds, rounded down.
    package var milliseconds: Int64 { Int64(nanoseconds / 1_000_000) }

    package var raw: GstClockTime { GstClockTime(nanoseconds) }

    package static func < (a: ClockTime, b: ClockTime) -> Bool { a.nanoseconds < b.nanoseconds }

    package var description: String { String(format: "%.3f s", Double(nanoseconds) / 1e9) }

    /// The raw "none" value, for C calls that take an optional time.
    package static func raw(_ time: ClockTime?) -> GstClockTime { time?.raw ?? ftgst_clock_time_none() }
}

/// A point in time after which a wait gives up. Every wait in ftgst takes one (STYLE lesson 8).
package struct Deadline: Sendable {
    package let end: ContinuousClock.Instant

    package init(after milliseconds: Int64) {
        end = ContinuousClock.now.advanced(by: .milliseconds(milliseconds))
    }

    package var hasPassed: Bool { ContinuousClock.now >= end }

    /// What is left, never negative, at most `cap` when given (so a loop can wake up to check cancellation).
    package func remaining(cap: ClockTime? = nil) -> ClockTime {
        let left = ContinuousClock.now.duration(to: end)
        let (seconds, attoseconds) = left.components
        let ns = seconds < 0 ? 0 : UInt64(seconds) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        let value = ClockTime(nanoseconds: ns)
        if let cap, cap < value { return cap }
        return value
    }
}
