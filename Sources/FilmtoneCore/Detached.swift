import Foundation

/// Runs a blocking job (bus waits with deadlines) on its own thread, off the cooperative pool, and turns task
/// cancellation into the flag the job polls.
package func runDetached<T: Sendable>(
    _ job: @escaping @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) throws -> T
) async throws -> T {
    let cancelled = AtomicFlag()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try job({ cancelled.isSet() }) })
            }
        }
    } onCancel: {
        cancelled.set()
    }
}
