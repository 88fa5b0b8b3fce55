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

    // MARK: - HEVC

    /// An HEVC NAL unit: the two header bytes (type, layer 0 unless given, TemporalId) and a few payload bytes.
    private func hevcNAL(type: UInt8, temporalID: UInt8 = 0, layer: UInt8 = 0) -> [UInt8] {
        [type << 1 | layer >> 5, (layer & 0x1F) << 3 | (temporalID + 1), 0xAF, 0x09, 0x40]
    }

    private func hevcNonReference(_ units: [[UInt8]], highest: Int = 0, lengthSize: Int = 4) -> Bool {
        let bytes = units.flatMap { unit -> [UInt8] in
            (0..<lengthSize).reversed().map { UInt8(truncatingIfNeeded: unit.count >> (8 * $0)) } + unit
        }
        return bytes.withUnsafeBytes {
            HEVCAccessUnit.isNonReference($0, layout: .init(lengthSize: lengthSize, highestTemporalID: highest))
        }
    }

    func testHEVCAccessUnitsOfSubLayerNonReferencePictures() {
        // TRAIL_N, RASL_N, RADL_N, TSA_N, STSA_N with an AUD (35) and a prefix SEI (39): droppable.
        for type: UInt8 in [0, 2, 4, 6, 8] {
            XCTAssertTrue(hevcNonReference([hevcNAL(type: 35), hevcNAL(type: 39), hevcNAL(type: type)]), "\(type)")
        }
        XCTAssertTrue(hevcNonReference([hevcNAL(type: 0), hevcNAL(type: 0)], lengthSize: 2), "two slice segments")
        // Reference pictures: TRAIL_R, RASL_R, CRA, IDR; one reference slice among non-reference ones.
        for type: UInt8 in [1, 9, 19, 21] { XCTAssertFalse(hevcNonReference([hevcNAL(type: type)]), "\(type)") }
        XCTAssertFalse(hevcNonReference([hevcNAL(type: 0), hevcNAL(type: 1)]))
        // Parameter sets only: no slice, keep.
        XCTAssertFalse(hevcNonReference([hevcNAL(type: 32), hevcNAL(type: 33), hevcNAL(type: 34)]))
        // A non-reference picture of a lower sub-layer may be a higher one's reference: only the highest is dropped.
        XCTAssertFalse(hevcNonReference([hevcNAL(type: 0, temporalID: 0)], highest: 1))
        XCTAssertTrue(hevcNonReference([hevcNAL(type: 0, temporalID: 1)], highest: 1))
        XCTAssertFalse(hevcNonReference([hevcNAL(type: 0, temporalID: 1)], highest: 0), "a sub-layer hvcC denies")
        // Another layer (MV-HEVC's second view): keep.
        XCTAssertFalse(hevcNonReference([hevcNAL(type: 0), hevcNAL(type: 0, layer: 1)]))
        // Malformed: a length past the end, a one-byte unit, nothing.
        XCTAssertFalse(
            [0, 0, 0, 99, 0, 1].withUnsafeBytes {
                HEVCAccessUnit.isNonReference($0, layout: .init(lengthSize: 4, highestTemporalID: 0))
            })
        XCTAssertFalse(hevcNonReference([[0]]))
        XCTAssertFalse(hevcNonReference([]))
    }

    func testHEVCLayoutComesFromTheHvcCRecord() {
        var record = [UInt8](repeating: 0, count: 23)
        record[0] = 1
        record[21] = 0b00_001_1_11  // one temporal layer, nested, 4-byte lengths
        XCTAssertEqual(
            HEVCAccessUnit.layout(streamFormat: "hvc1", codecData: record), .init(lengthSize: 4, highestTemporalID: 0))
        record[21] = 0b00_011_0_01  // three temporal layers, 2-byte lengths
        XCTAssertEqual(
            HEVCAccessUnit.layout(streamFormat: "hev1", codecData: record), .init(lengthSize: 2, highestTemporalID: 2))
        record[21] = 0b00_000_0_11  // numTemporalLayers 0: unknown, nothing is skipped
        XCTAssertNil(HEVCAccessUnit.layout(streamFormat: "hvc1", codecData: record))
        XCTAssertNil(HEVCAccessUnit.layout(streamFormat: "byte-stream", codecData: nil))
        XCTAssertNil(HEVCAccessUnit.layout(streamFormat: "hvc1", codecData: Array(record.prefix(22))))
        record[0] = 0
        XCTAssertNil(HEVCAccessUnit.layout(streamFormat: "hvc1", codecData: record), "not version 1")
    }
}
