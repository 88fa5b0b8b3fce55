import Foundation

/// SHA-256 (FIPS 180-4), in pure Swift: CryptoKit does not exist on Linux and swift-crypto cannot be fetched on
/// the build machines. Incremental, so a file of any size is hashed in fixed-size chunks (`hash(file:)`).
///
/// Only what ftgst needs: content keys for the library ledger. Not constant-time; never use it for secrets.
package struct SHA256 {
    /// The digest length in bytes.
    package static let byteCount = 32

    /// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64 primes.
    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    /// FIPS 180-4 §5.3.3: the initial hash value.
    private var state: [UInt32] = [
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
    ]
    /// Bytes of an incomplete 64-byte block, waiting for more input.
    private var pending: [UInt8] = []
    /// Total message length in bytes so far (the padding encodes it in bits, modulo 2^64).
    private var length: UInt64 = 0

    package init() {
        pending.reserveCapacity(64)
    }

    /// Adds `bytes` to the message.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        length &+= UInt64(bytes.count)
        var offset = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<take])
            offset = take
            guard pending.count == 64 else { return }
            pending.withUnsafeBytes { compress(blocks: $0) }
            pending.removeAll(keepingCapacity: true)
        }
        let whole = (bytes.count - offset) / 64 * 64
        if whole > 0 { compress(blocks: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + whole)])) }
        offset += whole
        if offset < bytes.count { pending.append(contentsOf: bytes[offset...]) }
    }

    /// Adds `bytes` to the message.
    package mutating func update<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        let array = Array(bytes)
        array.withUnsafeBytes { update($0) }
    }

    /// Pads the message (FIPS 180-4 §5.1.1) and returns the 32-byte digest. Call it once: the padding is fed
    /// through `update`, so the hasher is spent afterwards.
    package mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        var tail: [UInt8] = [0x80]
        let used = (pending.count + 1) % 64
        tail += [UInt8](repeating: 0, count: used <= 56 ? 56 - used : 120 - used)
        for shift in stride(from: 56, through: 0, by: -8) {
            tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        tail.withUnsafeBytes { update($0) }
        precondition(pending.isEmpty, "SHA-256 padding must end on a block boundary")
        var digest: [UInt8] = []
        digest.reserveCapacity(SHA256.byteCount)
        for word in state {
            digest += [
                UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8),
                UInt8(truncatingIfNeeded: word),
            ]
        }
        return digest
    }

    /// The digest of `bytes` as 64 lowercase hex digits (what `sha256sum` prints).
    package static func hex<Bytes: Sequence<UInt8>>(of bytes: Bytes) -> String {
        var hasher = SHA256()
        hasher.update(bytes)
        return hexString(hasher.finalize())
    }

    /// Lowercase hex of a digest.
    package static func hexString(_ digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(digest.count * 2)
        for byte in digest {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The hex digest of the file at `path`, read in `chunkSize` chunks: memory stays bounded whatever the file's
    /// size. `isCancelled` is polled between chunks (throws `CANCELLED`). Open and read failures are thrown as
    /// `SystemCallError`, for the caller to map to its own code.
    package static func hash(file path: String, chunkSize: Int = 1 << 20, isCancelled: () -> Bool = { false }) throws
        -> String
    {
        let file = try POSIXFile(path: path, flags: O_RDONLY)
        var hasher = SHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }
            let count = try file.read(into: buffer)
            if count == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
        return hexString(hasher.finalize())
    }

    // MARK: - Compression (FIPS 180-4 §6.2.2)

    /// Runs the compression function over whole 64-byte blocks.
    private mutating func compress(blocks: UnsafeRawBufferPointer) {
        precondition(blocks.count % 64 == 0)
        SHA256.roundConstants.withUnsafeBufferPointer { k in
            state.withUnsafeMutableBufferPointer { h in
                withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                    var blockStart = 0
                    while blockStart < blocks.count {
                        for t in 0..<16 {
                            let i = blockStart + t * 4
                            w[t] =
                                UInt32(blocks[i]) << 24 | UInt32(blocks[i + 1]) << 16 | UInt32(blocks[i + 2]) << 8
                                | UInt32(blocks[i + 3])
                        }
                        for t in 16..<64 {
                            let s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
                            let s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
                            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
                        }
                        var a = h[0]
                        var b = h[1]
                        var c = h[2]
                        var d = h[3]
                        var e = h[4]
                        var f = h[5]
                        var g = h[6]
                        var hh = h[7]
                        for t in 0..<64 {
                            let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
                            let choice = (e & f) ^ (~e & g)
                            let t1 = hh &+ s1 &+ choice &+ k[t] &+ w[t]
                            let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
                            let majority = (a & b) ^ (a & c) ^ (b & c)
                            let t2 = s0 &+ majority
                            hh = g
                            g = f
                            f = e
                            e = d &+ t1
                            d = c
                            c = b
                            b = a
                            a = t1 &+ t2
                        }
                        h[0] &+= a
                        h[1] &+= b
                        h[2] &+= c
                        h[3] &+= d
                        h[4] &+= e
                        h[5] &+= f
                        h[6] &+= g
                        h[7] &+= hh
                        blockStart += 64
                    }
                }
            }
        }
    }
}

@inline(__always) private func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
