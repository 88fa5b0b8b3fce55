import FilmtoneCore
import FilmtoneTestSupport
import XCTest

@testable import FilmtoneGst

/// `DolbyVisionConfiguration` and `DolbyVisionReader`: the record's fields and what they mean, the MP4 and Matroska
/// walks on the generated fixtures and on hand-built files (64-bit box sizes, an audio track first, damage), and
/// the probe report.
final class DolbyVisionTests: XCTestCase {
    /// A record as Dolby's specification lays it out.
    private func record(profile: Int, level: Int, compatibility: Int, el: Bool = false, bl: Bool = true) -> [UInt8] {
        let flags = profile << 9 | level << 3 | 4 | (el ? 2 : 0) | (bl ? 1 : 0)
        return [1, 0, UInt8(flags >> 8), UInt8(flags & 0xFF), UInt8(compatibility << 4), 0, 0, 0]
            + [UInt8](
                repeating: 0, count: 16)
    }

    func testTheRecordsFieldsAndTheLayerShown() throws {
        let cases: [(profile: Int, compatibility: Int, el: Bool, layer: DolbyVisionConfiguration.BaseLayer?)] = [
            (8, 4, false, .hlg), (8, 1, false, .hdr10), (8, 2, false, .sdr), (7, 6, true, .hdr10), (4, 2, true, .sdr),
            (9, 2, false, .sdr), (10, 4, false, .hlg), (5, 0, false, nil),
            // An id ftgst does not know, and profile 5 whatever it claims.
            (8, 3, false, nil), (5, 1, false, nil),
        ]
        for (profile, compatibility, el, layer) in cases {
            let configuration = try XCTUnwrap(
                DolbyVisionConfiguration(
                    record: record(profile: profile, level: 9, compatibility: compatibility, el: el)))
            XCTAssertEqual(configuration.profile, profile)
            XCTAssertEqual(configuration.level, 9)
            XCTAssertEqual(configuration.compatibility, compatibility)
            XCTAssertTrue(configuration.hasRPU)
            XCTAssertTrue(configuration.hasBaseLayer)
            XCTAssertEqual(configuration.hasEnhancementLayer, el)
            XCTAssertEqual(configuration.baseLayer, layer, "\(profile).\(compatibility)")
            XCTAssertEqual(configuration.refusal?.code, layer == nil ? .unsupportedFormat : nil)
        }
        XCTAssertEqual(DolbyVisionConfiguration(record: record(profile: 8, level: 4, compatibility: 4))?.name, "8.4")
        XCTAssertEqual(DolbyVisionConfiguration(record: record(profile: 5, level: 6, compatibility: 0))?.name, "5")
        // No base layer at all: nothing to show.
        XCTAssertNil(
            DolbyVisionConfiguration(record: record(profile: 8, level: 4, compatibility: 4, bl: false))?.baseLayer)
        // Not a record: another major version, too short.
        var three = record(profile: 8, level: 4, compatibility: 4)
        three[0] = 3
        XCTAssertNil(DolbyVisionConfiguration(record: three))
        XCTAssertNil(DolbyVisionConfiguration(record: [1, 0, 16, 37]))
    }

    func testTheFixturesRecordsAreFoundInEachContainer() throws {
        let expected: [(String, profile: Int, compatibility: Int)] = [
            ("dovi-p84.mov", 8, 4), ("dovi-p84.mkv", 8, 4), ("dovi-p81.mp4", 8, 1), ("dovi-p5.mp4", 5, 0),
            ("dovi-p5.mov", 5, 0), ("dovi-p5.mkv", 5, 0),
        ]
        for (fixture, profile, compatibility) in expected {
            let found = try XCTUnwrap(
                DolbyVisionReader.configuration(of: .local(path: try TestEnvironment.fixture(fixture))), fixture)
            XCTAssertEqual(found.profile, profile, fixture)
            XCTAssertEqual(found.compatibility, compatibility, fixture)
        }
        for fixture in [
            "hdr-hlg.mp4", "matrix-hevc10.mov", "matrix-hevc10.mkv", "clip.webm", "clip.ts", "truncated.mp4",
            "empty.mp4", "garbage.bin", "photo.avif", "tone.m4a", "matrix-frag.mp4",
        ] {
            XCTAssertNil(
                DolbyVisionReader.configuration(of: .local(path: try TestEnvironment.fixture(fixture))), fixture)
        }
        let remote = try XCTUnwrap(URL(string: "http://127.0.0.1/a.mp4"))
        XCTAssertNil(DolbyVisionReader.configuration(of: .remote(url: remote)))
        XCTAssertNoThrow(
            try DolbyVisionReader.refuseUnshowable(.local(path: try TestEnvironment.fixture("dovi-p84.mov"))))
        XCTAssertThrowsError(
            try DolbyVisionReader.refuseUnshowable(.local(path: try TestEnvironment.fixture("dovi-p5.mkv")))
        ) {
            XCTAssertEqual(($0 as? FilmtoneError)?.code, .unsupportedFormat)
        }
    }

    /// The scanner finds each fixture's record in its bytes fed in small and large pieces (a record split between
    /// two), and nothing in files without one.
    func testTheScannerFindsTheRecordInTheBytesADemuxerReads() throws {
        func scan(_ fixture: String, piece: Int) throws -> DolbyVisionConfiguration? {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try TestEnvironment.fixture(fixture))))
            var scanner = DolbyVisionScanner()
            var offset = 0
            while offset < bytes.count, !scanner.isDone {
                let end = min(bytes.count, offset + piece)
                _ = bytes[offset..<end].withUnsafeBytes { scanner.scan($0) }
                offset = end
            }
            return scanner.found
        }
        let expected: [(String, Int, Int)] = [
            ("dovi-p84.mov", 8, 4), ("dovi-p84.mkv", 8, 4), ("dovi-p81.mp4", 8, 1), ("dovi-p5.mp4", 5, 0),
            ("dovi-p5.mov", 5, 0), ("dovi-p5.mkv", 5, 0),
        ]
        for (fixture, profile, compatibility) in expected {
            for piece in [7, 61, 4096, 1 << 20] {
                let found = try XCTUnwrap(try scan(fixture, piece: piece), "\(fixture) in pieces of \(piece)")
                XCTAssertEqual(found.profile, profile, fixture)
                XCTAssertEqual(found.compatibility, compatibility, fixture)
            }
        }
        for fixture in ["clip.mp4", "hdr-hlg.mp4", "matrix-hevc10.mkv", "matrix-hevc10.mov", "clip.webm", "long.mp4"] {
            XCTAssertNil(try scan(fixture, piece: 65_536), fixture)
        }
        // A box of another size, or a record of another version, is not taken for one.
        let box: [UInt8] = [0, 0, 0, 33] + Array("dvcC".utf8) + record(profile: 5, level: 6, compatibility: 0) + [0]
        XCTAssertNil(DolbyVisionScanner.record(in: box))
        var version3 = [0, 0, 0, 32] + Array("dvcC".utf8) + record(profile: 5, level: 6, compatibility: 0)
        XCTAssertEqual(DolbyVisionScanner.record(in: version3)?.profile, 5)
        version3[8] = 3
        XCTAssertNil(DolbyVisionScanner.record(in: version3))
    }

    // MARK: - Hand-built MP4s

    private func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        be32(8 + payload.count) + Array(type.utf8) + payload
    }

    private func be32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (24 - 8 * $0)) & 0xFF) } }

    private func track(handler: String, entry: String, children: [UInt8]) -> [UInt8] {
        let hdlr = box("hdlr", [UInt8](repeating: 0, count: 8) + Array(handler.utf8) + [UInt8](repeating: 0, count: 13))
        let sampleEntry = box(entry, [UInt8](repeating: 0, count: 78) + children)
        let stsd = box("stsd", [0, 0, 0, 0] + be32(1) + sampleEntry)
        let stbl = box("stbl", stsd + box("stts", be32(0) + be32(0)))
        let minf = box("minf", box("vmhd", [UInt8](repeating: 0, count: 12)) + stbl)
        return box(
            "trak",
            box("tkhd", [UInt8](repeating: 0, count: 84))
                + box("mdia", box("mdhd", [UInt8](repeating: 0, count: 24)) + hdlr + minf))
    }

    private func configuration(_ bytes: [UInt8]) -> DolbyVisionConfiguration? {
        DolbyVisionReader.configuration(size: Int64(bytes.count)) { offset, count in
            guard offset >= 0, offset < bytes.count else { return nil }
            return Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)])
        }
    }

    /// A 64-bit `mdat` before `moov`, an audio track (whose entry also holds a record) before the video track, and a
    /// record after the `hvcC` and a `colr` box.
    func testTheWalkFollowsLargeSizesAndTakesTheFirstVideoTrack() throws {
        let ftyp = box("ftyp", Array("isom".utf8) + be32(0))
        let mdatPayload = [UInt8](repeating: 0xAB, count: 100)
        let mdat = be32(1) + Array("mdat".utf8) + [0, 0, 0, 0] + be32(16 + mdatPayload.count) + mdatPayload
        let audio = track(
            handler: "soun", entry: "mp4a", children: box("dvvC", record(profile: 5, level: 1, compatibility: 0)))
        let video = track(
            handler: "vide", entry: "hvc1",
            children: box("hvcC", [1, 2, 3]) + box("colr", Array("nclx".utf8) + [0, 9, 0, 18, 0, 9, 0])
                + box("dvvC", record(profile: 8, level: 4, compatibility: 4)))
        let moov = box("moov", box("mvhd", [UInt8](repeating: 0, count: 100)) + audio + video)
        let found = try XCTUnwrap(configuration(ftyp + mdat + moov))
        XCTAssertEqual(found.profile, 8)
        XCTAssertEqual(found.baseLayer, .hlg)
        // A dvwC box (profiles above 10) is read the same way.
        let wide = box(
            "moov",
            track(
                handler: "vide", entry: "hvc1", children: box("dvwC", record(profile: 20, level: 1, compatibility: 0))))
        XCTAssertEqual(configuration(ftyp + wide)?.profile, 20)
        // The first video track decides: one without a record is not shown as the second's profile.
        let plain = track(handler: "vide", entry: "hvc1", children: box("hvcC", [1, 2, 3]))
        XCTAssertNil(configuration(ftyp + box("moov", plain + video)))
    }

    /// Damage gives nil, never a trap: a box size past the end, a size below its header, a cut record, a file cut
    /// inside `moov`.
    func testDamagedFilesGiveNothing() throws {
        let video = track(
            handler: "vide", entry: "dvh1", children: box("dvcC", record(profile: 5, level: 6, compatibility: 0)))
        let whole = box("ftyp", Array("isom".utf8)) + box("moov", video)
        XCTAssertEqual(configuration(whole)?.profile, 5)
        for cut in stride(from: 0, to: whole.count, by: 7) {
            _ = configuration(Array(whole.prefix(cut)))
        }
        var oversized = whole
        oversized.replaceSubrange(12..<16, with: be32(whole.count))  // moov's size, past the end
        XCTAssertNil(configuration(oversized))
        var tiny = whole
        tiny[12..<16] = [0, 0, 0, 4]
        XCTAssertNil(configuration(tiny))
        let short = box("moov", track(handler: "vide", entry: "dvh1", children: box("dvcC", [1, 0, 10])))
        XCTAssertNil(configuration(box("ftyp", []) + short))
    }

    func testTheProbeReportSaysWhichLayerOrWhyNot() throws {
        let video = VideoStreamReport(
            codec: "h265", profile: "main-10", width: 640, height: 360, displayWidth: 640, displayHeight: 360,
            rotation: 0, pixelAspectRatio: "1/1", frameRate: "24/1", frameCount: 24, bitDepth: 10,
            chromaFormat: "4:2:0",
            colorimetry: ColorimetryReport(
                primaries: "bt2020", transfer: "arib-std-b67", matrix: "bt2020", range: "limited"),
            hdr: .hlg)
        let plain = ProbeReport(
            container: "mov", isImage: false, durationMilliseconds: 1000, video: video, audio: nil,
            inputTransform: ProbeRules.inputTransform(colorimetry: video.colorimetry, isImage: false))
        XCTAssertEqual(ProbeRules.report(plain, dolbyVision: nil), plain)

        let shown = ProbeRules.report(
            plain, dolbyVision: DolbyVisionConfiguration(record: record(profile: 8, level: 4, compatibility: 4)))
        XCTAssertEqual(shown.video?.dolbyVision?.profile, 8)
        XCTAssertEqual(shown.inputTransform?.policy, .hdrToSDR)
        XCTAssertEqual(shown.inputTransform?.applied, plain.inputTransform?.applied)
        XCTAssertEqual(
            shown.inputTransform?.reason,
            "Dolby Vision 8.4, shown through its hlg base layer; " + (plain.inputTransform?.reason ?? ""))
        XCTAssertTrue(
            shown.json.serialized.contains(
                #""hdr":"hlg","dolbyVision":{"profile":8,"level":4,"compatibility":4,"baseLayer":"hlg","enhancementLayer":false}}"#
            ),
            shown.json.serialized)

        let refused = ProbeRules.report(
            plain, dolbyVision: DolbyVisionConfiguration(record: record(profile: 5, level: 6, compatibility: 0)))
        XCTAssertEqual(refused.inputTransform?.applied, "none")
        XCTAssertTrue(refused.inputTransform?.reason.hasPrefix("Dolby Vision profile 5 cannot be shown: ") == true)
        XCTAssertTrue(refused.json.serialized.contains(#""baseLayer":null"#))
    }
}
