import Synchronization

/// A flag set once from any thread and polled from others: task cancellation, "caps seen", "GStreamer started".
/// Sendable without `@unchecked`: its only state is an `Atomic`.
package final class AtomicFlag: Sendable {
    private let value = Atomic<Bool>(false)

    package init() {}

    package func set() {
        value.store(true, ordering: .releasing)
    }

    package func isSet() -> Bool {
        value.load(ordering: .acquiring)
    }
}
