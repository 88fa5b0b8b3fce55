import FilmtoneTestSupport
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneLooks

/// A look table whose memory cannot be allocated is an `INTERNAL` error the caller sees, never a crash: from the
/// allocation itself (a size no system can give), and through every kernel (the tests' allocation limit, so no
/// memory is exhausted). The element's side is in `LUTFilterElementTests`.
final class TableBufferTests: XCTestCase {
    private func assertInternal(
        _ build: @autoclosure () throws -> Any, _ message: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try build(), file: file, line: line) { error in
            XCTAssertEqual((error as? FilmtoneError)?.code, .internalError, "\(error)", file: file, line: line)
            XCTAssertEqual((error as? FilmtoneError)?.message, message, file: file, line: line)
        }
    }

    func testAnAllocationTheSystemRefusesThrowsInternal() {
        // 2⁶⁰ bytes: more than the address space, refused by posix_memalign at once (nothing is touched).
        assertInternal(
            try TableBuffer<UInt32>(count: 1 << 58, for: "a test table").count,
            "cannot allocate 1073741824 GiB for a test table")
        assertInternal(
            try TableBuffer<UInt32>(count: 1 << 58, hugePages: true, for: "a test table").count,
            "cannot allocate 1073741824 GiB for a test table")
        // A byte count that overflows `Int` is refused before asking.
        assertInternal(
            try TableBuffer<SIMD4<Float>>(count: Int.max / 8, for: "a test grid").count,
            "cannot allocate more than the address space for a test grid")
    }

    func testTheAllocationsThatSucceedAreAlignedForTheirLoads() throws {
        let table = try ColourTable.allocateEntries(for: "a test table")
        XCTAssertEqual(Int(bitPattern: table.base) % (2 << 20), 0, "huge-page aligned")
        XCTAssertEqual(table.byteCount, 64 << 20)
        let nodes = try NodeGrid.allocateNodes(size: 3)
        XCTAssertEqual(Int(bitPattern: nodes.base) % 16, 0, "SIMD4<Float> aligned")
        XCTAssertEqual(nodes.count, 27)
    }

    func testEveryKernelThrowsWhenItsTableCannotBeAllocated() throws {
        let look = try Look(creativeLUT: LUTKernelTests.synthetic)
        let rgb = try LUTKernel(look: look)
        try TableAllocation.withLimit(1 << 20) {
            assertInternal(try LUTKernel(look: look), "cannot allocate 64 MiB for the look's colour table")
            // The YUV kernel builds no RGB table (it evaluates the look row by row): its own table is what fails,
            // built from a look or from an RGB kernel.
            assertInternal(
                try YUVKernel(look: look, colorimetry: .bt709), "cannot allocate 64 MiB for the look's Y'CbCr table")
            assertInternal(
                try YUVKernel(rgb: rgb, colorimetry: .bt709), "cannot allocate 64 MiB for the look's Y'CbCr table")
            // 3 × 65 536 cells of 12 bytes.
            assertInternal(try LUTKernel16(look: look), "cannot allocate 2.3 MiB for the look's grid cells")
        }
        // Looks without a table allocate nothing and still build; the limit is gone afterwards.
        let oneD = try SharedLUTs.load("ocio/iridas_1d.cube")
        try TableAllocation.withLimit(0) {
            XCTAssertEqual(try LUTKernel(look: try Look()).strategy, .identity)
            XCTAssertEqual(try LUTKernel(look: try Look(inputLUT: oneD)).strategy, .perChannel)
            XCTAssertEqual(try LUTKernel16(look: try Look(inputLUT: oneD)).strategy, .perChannel)
            XCTAssertEqual(try YUVKernel(look: try Look(), colorimetry: .bt709).tableByteCount, 0)
        }
        XCTAssertEqual(try LUTKernel(look: look).tableByteCount, 64 << 20)
        XCTAssertEqual(try LUTKernel16(look: look).strategy, .perPixel)
    }

    func testSizesAreWrittenForPeople() {
        XCTAssertEqual(TableAllocation.describe(64 << 20), "64 MiB")
        XCTAssertEqual(TableAllocation.describe(3 * 65_536 * 12), "2.3 MiB")
        XCTAssertEqual(TableAllocation.describe(33 * 33 * 33 * 16), "561.5 KiB")
        XCTAssertEqual(TableAllocation.describe(768), "768 bytes")
        XCTAssertEqual(TableAllocation.describe(3 << 30), "3 GiB")
    }
}
