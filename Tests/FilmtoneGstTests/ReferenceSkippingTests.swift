import XCTest

@testable import FilmtoneGst
@testable import GstKit

final class ReferenceSkippingTests: XCTestCase {
    private func nonReference(_ bytes: [UInt8], _ framing: H264AccessUnit.Framing) -> Bool {
        bytes.withUnsafeBytes { H264AccessUnit.isNonReference($0, framing: framing) }
    }

    /// A NAL unit: header byte (nal_ref_idc, type) and a few payload bytes.
    private func nal(refIdc: UInt8, type: UInt8) -> [UInt8] { [refIdc << 5 | type, 0x88, 0x84, 0x21] }

    private func lengthPrefixed(_ units: [[UInt8]]) -> [UInt8] {
        units.flatMap { [0, 0, 0, UInt8($0.count)] + $0 }
    }

    func testLengthPrefixedAccessUnits() {
        let framing = H264AccessUnit.Framing.lengthPrefixed(lengthSize: 4)
        // SEI (type 6) + non-reference slice: droppable.
        XCTAssertTrue(nonReference(lengthPrefixed([nal(refIdc: 0, type: 6), nal(refIdc: 0, type: 1)]), framing))
        // A reference slice, an IDR, or any reference slice among several: keep.
        XCTAssertFalse(nonReference(lengthPrefixed([nal(refIdc: 2, type: 1)]), framing))
        XCTAssertFalse(nonReference(lengthPrefixed([nal(refIdc: 3, type: 5)]), framing))
        XCTAssertFalse(nonReference(lengthPrefixed([nal(refIdc: 0, type: 1), nal(refIdc: 1, type: 1)]), framing))
        // No slice at all (parameter sets only): keep.
        XCTAssertFalse(nonReference(lengthPrefixed([nal(refIdc: 3, type: 7), nal(refIdc: 3, type: 8)]), framing))
        // Malformed lengths: keep, never guess.
        XCTAssertFalse(nonReference([0, 0, 0, 99] + nal(refIdc: 0, type: 1), framing))
        XCTAssertFalse(nonReference([], framing))
    }

    func testAnnexBAccessUnits() {
        let startCode: [UInt8] = [0, 0, 0, 1]
        XCTAssertTrue(nonReference(startCode + nal(refIdc: 0, type: 9) + startCode + nal(refIdc: 0, type: 1), .annexB))
        XCTAssertFalse(nonReference(startCode + nal(refIdc: 2, type: 1), .annexB))
        XCTAssertFalse(
            nonReference([0, 0, 1] + nal(refIdc: 0, type: 1) + [0, 0, 1] + nal(refIdc: 1, type: 1), .annexB))
    }

    func testFramingFromCaps() {
        XCTAssertEqual(
            H264AccessUnit.framing(streamFormat: "avc", codecData: [1, 0x64, 0, 0x1F, 0xFF]),
            .lengthPrefixed(lengthSize: 4))
        XCTAssertEqual(
            H264AccessUnit.framing(streamFormat: "avc", codecData: [1, 0x64, 0, 0x1F, 0xFD]),
            .lengthPrefixed(lengthSize: 2))
        XCTAssertEqual(H264AccessUnit.framing(streamFormat: "byte-stream", codecData: nil), .annexB)
        XCTAssertNil(H264AccessUnit.framing(streamFormat: "avc", codecData: nil))
        XCTAssertNil(H264AccessUnit.framing(streamFormat: nil, codecData: nil))
    }

    func testOnlyPicturesEndingBeforeTheSegmentQualify() {
        let frame = ClockTime(nanoseconds: 33_333_333)
        XCTAssertTrue(
            H264AccessUnit.endsBeforeSegment(
                time: .milliseconds(900), duration: frame,
                segmentStart: .milliseconds(1000)))
        // On screen at the segment start: it may be the frame asked for.
        XCTAssertFalse(
            H264AccessUnit.endsBeforeSegment(
                time: .milliseconds(980), duration: frame,
                segmentStart: .milliseconds(1000)))
        XCTAssertFalse(
            H264AccessUnit.endsBeforeSegment(
                time: .milliseconds(900), duration: nil,
                segmentStart: .milliseconds(1000)))
        XCTAssertFalse(H264AccessUnit.endsBeforeSegment(time: nil, duration: frame, segmentStart: .milliseconds(1000)))
    }
}
