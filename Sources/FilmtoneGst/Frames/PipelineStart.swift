import Foundation
import FilmtoneCore
import GstKit

extension Pipeline {
    /// `pause()`, and when the state change fails at once: the error the pipeline posted, classified, or
    /// DECODE_FAILED when it posted none. Shared by every driver that prerolls.
    func startPrerolling(remote: Bool) throws {
        guard !pause() else { return }
        if case .error(let cause) = waitForAsyncDone(deadline: Deadline(after: 200), isCancelled: { false }) {
            throw ErrorClassifier.classify(cause, remote: remote)
        }
        throw FilmtoneError(.decodeFailed, "the pipeline could not start (state change failed)")
    }
}
