import FilmtoneTestSupport
import Foundation
import XCTest

@testable import FilmtoneCore

/// The pure-Swift SHA-256 against the FIPS 180-2 example messages, chunking, padding boundaries, and
/// `sha256sum` on generated files.
final class SHA256Tests: XCTestCase {
    // MARK: - FIPS 180-2 appendix B vectors

    func testEmptyMessage() {
        XCTAssertEqual(SHA256.hex(of: []), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    func testABC() {
        XCTAssertEqual(
            SHA256.hex(of: Array("abc".utf8)),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    func test448BitMessage() {
        let message = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        XCTAssertEqual(message.utf8.count * 8, 448)
        XCTAssertEqual(
            SHA256.hex(of: Array(message.utf8)),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    func test896BitMessage() {
        let message =
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
            + "mnopqrstnopqrstu"
        XCTAssertEqual(message.utf8.count * 8, 896)
        XCTAssertEqual(
            SHA256.hex(of: Array(message.utf8)),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
    }

    func testOneMillionA() {
        XCTAssertEqual(
            SHA256.hex(of: [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testOneMillionAFedInOddChunks() {
        var hasher = SHA256()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 999)
        var left = 1_000_000
        while left > 0 {
            let take = min(left, chunk.count)
            chunk.prefix(take).withUnsafeBytes { hasher.update($0) }
            left -= take
        }
        XCTAssertEqual(
            SHA256.hexString(hasher.finalize()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    // MARK: - Chunking

    /// Any split of the input gives the same digest as one update: the pending-block logic is exercised at
    /// every offset around the 64-byte block.
    func testSplitsDoNotChangeTheDigest() {
        let data = TestBytes.pseudoRandom(count: 1000, seed: 7)
        let whole = SHA256.hex(of: data)
        for chunkSize in [1, 3, 7, 55, 56, 63, 64, 65, 127, 128, 129, 999] {
            var hasher = SHA256()
            var offset = 0
            while offset < data.count {
                let end = min(offset + chunkSize, data.count)
                data[offset..<end].withUnsafeBytes { hasher.update($0) }
                offset = end
            }
            XCTAssertEqual(SHA256.hexString(hasher.finalize()), whole, "chunk size \(chunkSize)")
        }
    }

    // MARK: - Against sha256sum

    /// Lengths around the padding boundaries (55/56 bytes leave room for the length or not; 64 is a block).
    func testPaddingBoundariesAgainstSha256sum() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        for count in [1, 55, 56, 57, 63, 64, 65, 119, 120, 128] {
            let file = folder.appendingPathComponent("m\(count).bin")
            let data = TestBytes.pseudoRandom(count: count, seed: UInt64(count))
            try Data(data).write(to: file)
            XCTAssertEqual(SHA256.hex(of: data), try sha256sum(file), "length \(count)")
        }
    }

    /// A file larger than several chunks, hashed streaming with the default and with an odd chunk size.
    func testFileAgainstSha256sum() throws {
        let file = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("big.bin")
        try Data(TestBytes.pseudoRandom(count: 3 * 1024 * 1024 + 17, seed: 42)).write(to: file)
        let expected = try sha256sum(file)
        XCTAssertEqual(try SHA256.hash(file: file.path), expected)
        XCTAssertEqual(try SHA256.hash(file: file.path, chunkSize: 4097), expected)
    }

    func testMissingFileThrowsTheSystemCallError() {
        XCTAssertThrowsError(try SHA256.hash(file: "/nonexistent/ftgst-sha")) { error in
            XCTAssertEqual((error as? SystemCallError)?.errno, ENOENT)
        }
    }

    func testCancelledHashThrowsCancelled() throws {
        let file = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("c.bin")
        try Data(TestBytes.pseudoRandom(count: 10, seed: 1)).write(to: file)
        XCTAssertThrowsError(try SHA256.hash(file: file.path, isCancelled: { true })) { error in
            XCTAssertEqual((error as? FilmtoneError)?.code, .cancelled)
        }
    }

    // MARK: - Helpers

    private func sha256sum(_ file: URL) throws -> String {
        let result = try Run.tool("sha256sum", [file.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        return String(result.stdout.prefix(64))
    }

    /// Deterministic pseudo-random bytes (xorshift64*).
}
