import FilmtoneCore
import Foundation
import XCTest

/// Starts `job`, which fetches `path` from `server` (a `/stall/…` path: headers and the first 4 KiB, then silence
/// until the server stops), cancels the job's task once the server has seen the request — not at a guessed
/// moment before or after it started — and checks that the job ends with `CANCELLED` promptly.
///
/// The promise is "within a second"; the check allows 5 s, room for a loaded machine and still far below the
/// job's own 30 s time-out, which is when the stalled fetch would end without the cancel.
package func assertCancelledWhileStalled<T: Sendable>(
    on server: HTTPTestServer, path: String, file: StaticString = #filePath, line: UInt = #line,
    _ job: @escaping @Sendable () async throws -> T
) async {
    let task = Task { try await job() }
    let stalling = await server.waitForRequest(to: path, timeout: 30)
    XCTAssertTrue(stalling, "the job never asked for \(path)", file: file, line: line)
    let cancelledAt = ContinuousClock.now
    task.cancel()
    do {
        _ = try await task.value
        XCTFail("expected CANCELLED", file: file, line: line)
    } catch let error as FilmtoneError {
        XCTAssertEqual(error.code, .cancelled, error.message, file: file, line: line)
    } catch {
        XCTFail("expected a FilmtoneError, got \(error)", file: file, line: line)
    }
    XCTAssertLessThan(
        ContinuousClock.now - cancelledAt, .seconds(5), "a cancel stops promptly", file: file,
        line: line)
}
