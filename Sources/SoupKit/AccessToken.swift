import FilmtoneCore
import Foundation

/// The secret every request to a `LocalServer` must carry: 32 bytes from `/dev/urandom`, as 64 lower-case hex digits.
package struct AccessToken: Sendable, Equatable {
    package let hex: String

    /// A fresh random token. Throws `INTERNAL` if `/dev/urandom` cannot be read.
    package static func random() throws -> AccessToken {
        guard let handle = FileHandle(forReadingAtPath: "/dev/urandom") else {
            throw FilmtoneError(.internalError, "cannot open /dev/urandom for the server's token")
        }
        defer { try? handle.close() }
        let bytes = handle.readData(ofLength: 32)
        guard bytes.count == 32 else {
            throw FilmtoneError(.internalError, "short read from /dev/urandom for the server's token")
        }
        return AccessToken(hex: bytes.map { String(format: "%02x", $0) }.joined())
    }

    /// Whether `candidate` is this token, in time that depends on its length only (no early exit on the first
    /// differing byte, which would let a client find the token byte by byte from response times).
    package func matches(_ candidate: String?) -> Bool {
        guard let candidate else { return false }
        let a = Array(hex.utf8)
        let b = Array(candidate.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
