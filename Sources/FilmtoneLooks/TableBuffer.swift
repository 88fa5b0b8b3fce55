import FilmtoneCore
import Foundation
import Synchronization

/// Memory for one of a kernel's tables: `count` uninitialised values of a trivial type, allocated in `init`
/// (a refused allocation is a thrown `INTERNAL` error, never a crash) and freed in `deinit`.
///
/// Every table the looks module allocates lives in one of these. Being non-copyable, a buffer has exactly one
/// owner, so its memory is freed once, when that owner goes, and no copy can outlive the free: the owners (the
/// kernels' tables and builders) are non-copyable too, or a `final class` holding one.
///
/// The frame and build loops take `base`, a plain pointer, as they did before there was an owner: owning the
/// memory costs nothing per pixel.
package struct TableBuffer<Element: BitwiseCopyable>: ~Copyable {
    /// The first of `count` values; uninitialised until the owner writes them (they are trivial, so plain
    /// assignment through the pointer initialises them).
    package let base: UnsafeMutablePointer<Element>
    package let count: Int

    /// `count` values for `what` (the end of "cannot allocate 64 MiB for …", e.g. "the look's colour table").
    ///
    /// `hugePages`: 2 MiB-aligned (the huge-page size on x86-64, and on arm64 with 4 KiB pages) and
    /// `madvise(MADV_HUGEPAGE)`d, for tables whose loads are spread over tens of MiB (`ColourTable`). The advice
    /// may fail (no transparent huge pages) and then leaves ordinary pages. Otherwise the alignment is the
    /// element's, at least 16 bytes (`SIMD4<Float>` nodes are loaded as aligned vectors).
    /// `hugePages`: 2 MiB-aligned and advised for transparent huge pages (a table filled whole and read all over);
    /// false: advised against them (`MADV_NOHUGEPAGE`), so a table filled in places (`YUVKernel`'s rows) takes memory
    /// 4 KiB at a time even where the system gives huge pages to every large mapping.
    package init(count: Int, hugePages: Bool = false, for what: String) throws {
        precondition(count > 0, "an empty table")
        let (byteCount, overflow) = count.multipliedReportingOverflow(by: MemoryLayout<Element>.stride)
        guard !overflow, byteCount <= TableAllocation.limit else {
            throw TableAllocation.refused(overflow ? Int.max : byteCount, what)
        }
        // A large table starts on a page of its own (the allocator's header is on the page before), so what it holds
        // in memory is its own pages only (`residentByteCount`).
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let alignment =
            hugePages ? 2 << 20 : Swift.max(byteCount >= 2 << 20 ? page : 16, MemoryLayout<Element>.alignment)
        var raw: UnsafeMutableRawPointer? = nil
        guard posix_memalign(&raw, alignment, byteCount) == 0, let raw else {
            throw TableAllocation.refused(byteCount, what)
        }
        if hugePages {
            _ = madvise(raw, byteCount, Int32(MADV_HUGEPAGE))
        } else if byteCount >= 2 << 20 {
            _ = madvise(raw, byteCount / page * page, Int32(MADV_NOHUGEPAGE))
        }
        base = raw.bindMemory(to: Element.self, capacity: count)
        self.count = count
    }

    /// The elements are trivial (`BitwiseCopyable`): nothing to deinitialise, only the memory to free.
    deinit { free(base) }

    package var byteCount: Int { count * MemoryLayout<Element>.stride }

    /// Bytes of the buffer the kernel holds in memory now (`mincore`, whole pages): what filling part of it cost.
    package var residentByteCount: Int {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = Int(bitPattern: base) / page * page
        let end = (Int(bitPattern: base) + byteCount + page - 1) / page * page
        var vector = [UInt8](repeating: 0, count: (end - start) / page)
        guard mincore(UnsafeMutableRawPointer(bitPattern: start), end - start, &vector) == 0 else { return byteCount }
        return vector.reduce(0) { $0 + Int($1 & 1) } * page
    }
}

// Unchecked Sendable: a buffer is memory and a pointer to it, handed to whoever owns it next. What is written through
// `base` is its owners' to order, and they do: each writes its tables in its `init` (before any other thread can
// see it), or, for debug builds' lazy rows, under a lock (`ColourTable`, `YUVKernel`); afterwards they only read.
extension TableBuffer: @unchecked Sendable where Element: Sendable {}

/// How a refused allocation is reported, and the tests' way of refusing one on purpose.
package enum TableAllocation {
    /// Tests only: allocations of more bytes than this fail as if the system had refused them, so that the error
    /// path can be tested without exhausting memory. `Int.max` (no limit but the system's) outside
    /// `withLimit(_:_:)`.
    private static let limitStorage = Atomic<Int>(Int.max)

    package static var limit: Int { limitStorage.load(ordering: .relaxed) }

    /// Runs `body` with allocations over `bytes` refused (`TableBuffer.init` throws), then lifts the limit again.
    /// Process-wide: for tests that run one at a time (XCTest's default), including pipelines whose streaming
    /// threads build a kernel while `body` waits for them.
    package static func withLimit<R>(_ bytes: Int, _ body: () throws -> R) rethrows -> R {
        limitStorage.store(bytes, ordering: .relaxed)
        defer { limitStorage.store(Int.max, ordering: .relaxed) }
        return try body()
    }

    /// `INTERNAL`: "cannot allocate 64 MiB for the look's colour table".
    fileprivate static func refused(_ byteCount: Int, _ what: String) -> FilmtoneError {
        FilmtoneError(.internalError, "cannot allocate \(describe(byteCount)) for \(what)")
    }

    /// 67108864 → "64 MiB", 2359296 → "2.3 MiB", 9216 → "9 KiB", 48 → "48 bytes".
    package static func describe(_ byteCount: Int) -> String {
        if byteCount == Int.max { return "more than the address space" }
        func scaled(_ unit: Int, _ name: String) -> String {
            if byteCount % unit == 0 { return "\(byteCount / unit) \(name)" }
            return "\((Double(byteCount) / Double(unit) * 10).rounded() / 10) \(name)"
        }
        if byteCount >= 1 << 30 { return scaled(1 << 30, "GiB") }
        if byteCount >= 1 << 20 { return scaled(1 << 20, "MiB") }
        if byteCount >= 1 << 10 { return scaled(1 << 10, "KiB") }
        return "\(byteCount) bytes"
    }
}
