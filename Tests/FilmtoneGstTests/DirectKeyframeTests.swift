import FilmtoneTestSupport
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneElements
@testable import FilmtoneGst
@testable import GstKit

/// The desktop thumbnailer's direct path (`DirectKeyframe`, `MP4VideoTrack`, `LibavStill`) against what it stands in
/// for: qtdemux's sample tables and keyframe seeks, GStreamer's colours, ffprobe's packets.
final class DirectKeyframeTests: XCTestCase {
    /// Plain MP4/MOV files of H.264 and HEVC the path takes: B-frames with and without an edit list, open and closed
    /// GOPs, a movie longer than its video, variable frame rate, a black start, SD and HD.
    static let taken = [
        "direct-h264-bframes.mp4", "direct-h264-noedit.mp4", "direct-hevc-opengop.mp4", "direct-hevc-closed.mov",
        "direct-h264-faststart.mov", "direct-h264-audio.mp4", "direct-hd-unstated.mp4", "direct-sd-fullrange.mp4",
        "matrix-h264-bframes.mp4", "matrix-hevc8.mp4", "bframes.mp4", "longgop.mp4", "vfr.mp4", "black-start.mp4",
        "clip-faststart.mp4", "sd.mp4",
    ]

    /// Every keyframe seek a `--time auto` sample could make, every 23 ms over the whole clip: the direct path's
    /// keyframe and its 0-based time are the ones qtdemux's KEY_UNIT|SNAP_BEFORE seek gives through the frame
    /// pipeline, and so is the duration the samples are placed by.
    func testKeyframeSeeksLandWhereQtdemuxLands() throws {
        for fixture in Self.taken {
            let path = try TestEnvironment.fixture(fixture)
            let track = try MP4VideoTrack.read(path: path)
            let timing = try DirectKeyframe.Timing(track)
            let leading = DirectKeyframe.LeadingPictures(track: track, file: try POSIXFile(path: path, flags: O_RDONLY))
            let source = try OpenedFrameSource(
                FrameRequest(
                    source: .local(path: path), headers: [], time: .zero, tolerance: .zero, maxWidth: 64,
                    maxHeight: 64, timeoutMilliseconds: 60_000),
                watching: PictureFormatWatch(), deadline: Deadline(after: 60_000), keeps: true, isCancelled: { false })
            defer { source.stop() }
            XCTAssertEqual(timing.durationMilliseconds, source.durationMilliseconds, fixture)
            var (checked, declined) = (0, 0)
            for ms in stride(from: Int64(0), to: timing.durationMilliseconds, by: 23) {
                let frame = try source.keyframe(
                    before: .milliseconds(ms), deadline: Deadline(after: 20_000), isCancelled: { false })
                guard let sample = timing.shownSample(before: .milliseconds(ms), isDropped: leading.isRASL) else {
                    // Declined: the picture shown is not a keyframe (a sound sample began just before one).
                    XCTAssertFalse(
                        track.times.syncSamples.contains { timing.time(of: $0) == frame.time },
                        "\(fixture) at \(ms) ms: declined, yet GStreamer showed a keyframe at \(frame.time)")
                    declined += 1
                    continue
                }
                XCTAssertEqual(timing.time(of: sample), frame.time, "\(fixture) at \(ms) ms: sample \(sample)")
                checked += 1
            }
            XCTAssertGreaterThan(checked, 10, fixture)
            XCTAssertLessThan(declined, checked / 4, fixture)
        }
    }

    /// The tables as ffprobe reads the same file: every packet's byte position, size and keyframe flag.
    func testSampleTablesAreFfprobesPackets() throws {
        for fixture in ["direct-h264-audio.mp4", "direct-hevc-closed.mov", "vfr.mp4", "clip-faststart.mp4"] {
            let path = try TestEnvironment.fixture(fixture)
            let track = try MP4VideoTrack.read(path: path)
            let probe = try Run.tool(
                "ffprobe",
                [
                    "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pos,size,flags", "-of",
                    "csv=p=0", path,
                ])
            let packets = probe.stdout.split(separator: "\n").map { $0.split(separator: ",").map(String.init) }
            XCTAssertEqual(packets.count, track.sizes.count, fixture)
            for (index, packet) in packets.enumerated() where packet.count >= 3 && index < track.sizes.count {
                XCTAssertEqual(Int(packet[0]), track.sizes[index], "\(fixture) sample \(index) size")
                XCTAssertEqual(Int64(packet[1]), track.offsets[index], "\(fixture) sample \(index) position")
                XCTAssertEqual(
                    packet[2].hasPrefix("K"), track.times.syncSamples.contains(index), "\(fixture) sample \(index) key")
            }
        }
    }

    /// What the path declines, and why: each is the GStreamer path's (a turn, non-square pixels, fragments, edit
    /// lists with more than one edit, Dolby Vision, 10 bits, interlacing, other codecs, a truncated file).
    func testFilesThePathCannotBeSureOfAreDeclinedWithTheReason() throws {
        let cases: [(String, String)] = [
            ("rotated.mp4", "turned"), ("anamorphic.mp4", "non-square"), ("matrix-frag.mp4", "fragmented"),
            ("offset.mp4", "edit list of 2"), ("dovi-p84.mov", "Dolby Vision"), ("matrix-hevc10.mov", "not 8-bit"),
            ("matrix-h264-interlaced.mp4", "interlaced"), ("matrix-prores.mov", "apcn track"),
            ("truncated.mp4", "file's end"), ("hdr-hlg.mp4", "not 8-bit"), ("zero-stts.mp4", "do not rise"),
            ("clip.mkv", "not an MP4"),
        ]
        for (fixture, reason) in cases {
            let path = try TestEnvironment.fixture(fixture)
            XCTAssertNil(
                try DirectKeyframe.thumbnail(path: path, size: 64, environment: [:]), "\(fixture) is declined")
            XCTAssertThrowsError(
                try DirectKeyframe.thumbnail(path: path, size: 64, environment: ["FTGST_DIRECT_KEYFRAME": "required"])
            ) { error in
                XCTAssertEqual((error as? FilmtoneError)?.code, .unsupportedFormat, fixture)
                XCTAssertTrue("\(error)".contains(reason), "\(fixture): \(error)")
            }
        }
        XCTAssertNil(
            try DirectKeyframe.thumbnail(
                path: try TestEnvironment.fixture("clip-faststart.mp4"), size: 64,
                environment: ["FTGST_NO_DIRECT_KEYFRAME": "1", "FTGST_DIRECT_KEYFRAME": "required"]),
            "the switch turns the path off")
    }

    /// Damaged sample tables are declined or read, never a crash or a hang: 1000 copies of a file with bytes of its
    /// `moov` changed at random (seeded), each read, timed and sought as the path does.
    func testDamagedTablesAreDeclinedNeverACrash() throws {
        let original = [UInt8](
            try Data(contentsOf: URL(fileURLWithPath: try TestEnvironment.fixture("direct-h264-audio.mp4"))))
        let moov = try XCTUnwrap(
            original.indices.first { original[$0..<min($0 + 4, original.count)].elementsEqual("moov".utf8) })
        let moovEnd = moov - 4 + original[(moov - 4)..<moov].reduce(0) { $0 << 8 | Int($1) }
        var random = SplitMix(seed: 30)
        var (read, declined) = (0, 0)
        for _ in 0..<1000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                bytes[Int.random(in: moov..<moovEnd, using: &random)] = UInt8.random(
                    in: 0...255, using: &random)
            }
            do {
                let track = try MP4VideoTrack.read(size: Int64(bytes.count)) { offset, count in
                    guard offset >= 0, offset < bytes.count else { return nil }
                    return Array(bytes[Int(offset)..<min(Int(offset) + count, bytes.count)])
                }
                let timing = try DirectKeyframe.Timing(track)
                for ms in FrameInterest.sampleTimes(durationMilliseconds: timing.durationMilliseconds) {
                    if let sample = timing.shownSample(before: .milliseconds(ms), isDropped: { _ in false }) {
                        XCTAssertTrue(track.times.syncSamples.contains(sample))
                        XCTAssertLessThanOrEqual(track.offsets[sample] + Int64(track.sizes[sample]), Int64(bytes.count))
                    }
                }
                read += 1
            } catch is MP4VideoTrack.Declined {
                declined += 1
            }
        }
        XCTAssertGreaterThan(declined, 0)
        XCTAssertGreaterThan(read, 0, "changes to unused bytes leave a readable file")
    }

    /// GStreamer's colour rules: what is stated wins (and must agree), else BT.709 above 576 lines and BT.601 up
    /// to it; HDR transfers, BT.2020 and a 4K picture without a stated matrix are declined.
    func testColoursFollowGStreamersRules() throws {
        func picture(height: Int = 1080, format: Int32 = 0, matrix: Int32 = 2, transfer: Int32 = 2, range: Int32 = 0)
            -> LibavStill.Picture
        {
            LibavStill.Picture(
                width: 16, height: height, format: format, primaries: 2, transfer: transfer, matrix: matrix,
                range: range, interlaced: false, keyFrame: true)
        }
        typealias Colours = DirectKeyframe.Colours
        XCTAssertEqual(try Colours(picture(), box: nil), Colours(bt709: true, fullRange: false))
        XCTAssertEqual(try Colours(picture(height: 576), box: nil), Colours(bt709: false, fullRange: false))
        XCTAssertEqual(try Colours(picture(height: 480, matrix: 1), box: nil), Colours(bt709: true, fullRange: false))
        XCTAssertEqual(try Colours(picture(matrix: 6), box: nil), Colours(bt709: false, fullRange: false))
        XCTAssertEqual(try Colours(picture(format: 12), box: nil), Colours(bt709: true, fullRange: true))
        XCTAssertEqual(try Colours(picture(), box: (1, 1, 5, true)), Colours(bt709: false, fullRange: true))
        XCTAssertThrowsError(try Colours(picture(matrix: 1), box: (1, 1, 6, false)), "stated twice, differently")
        XCTAssertThrowsError(try Colours(picture(transfer: 18), box: nil), "HLG")
        XCTAssertThrowsError(try Colours(picture(), box: (1, 16, 1, false)), "PQ in the container")
        XCTAssertThrowsError(try Colours(picture(matrix: 9), box: nil), "BT.2020")
        XCTAssertThrowsError(try Colours(picture(height: 2160), box: nil), "4K, unstated: GStreamer's BT.2020")
        XCTAssertThrowsError(try Colours(picture(format: 62), box: nil), "10 bits")
        XCTAssertThrowsError(try Colours(picture(range: 1), box: (1, 1, 1, true)), "ranges differ")
    }

    /// A sample whose statistics sit at a threshold is left to GStreamer: its scaler could tip the verdict.
    func testVerdictsAtAThresholdAreLeftToGStreamer() {
        XCTAssertNoThrow(try DirectKeyframe.checkClear(.init(mean: 120, deviation: 40)))
        XCTAssertNoThrow(try DirectKeyframe.checkClear(.init(mean: 10, deviation: 0)))
        XCTAssertThrowsError(try DirectKeyframe.checkClear(.init(mean: FrameInterest.darkMean + 1, deviation: 40)))
        XCTAssertThrowsError(try DirectKeyframe.checkClear(.init(mean: FrameInterest.brightMean - 1, deviation: 40)))
        XCTAssertThrowsError(
            try DirectKeyframe.checkClear(.init(mean: 120, deviation: FrameInterest.flatDeviation + 0.5)))
    }
}
