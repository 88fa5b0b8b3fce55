import Foundation

/// A flag set once from any thread and polled from others: task cancellation, "caps seen", "GStreamer started".
package final class AtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    package init() {}

    package func set() {
        lock.lock()
        value = true
        lock.unlock()
    }

    package func isSet() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}
