import FilmtoneTestSupport
import Foundation
import XCTest

/// `ftgst thumbnailer`'s direct path (no GStreamer: the MP4's sample tables, libavcodec, libswscale) against the
/// GStreamer path it stands in for (`FTGST_NO_DIRECT_KEYFRAME=1`), through the CLI. `FTGST_DIRECT_KEYFRAME=required`
/// makes a declined file fail, so each run below is known to have taken the direct path.
final class ThumbnailerDirectCLITests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws {
        dir = try TestEnvironment.temporaryDirectory(self)
    }

    private func thumbnail(_ fixture: String, direct: Bool, size: Int = 256) throws -> String {
        let out = dir.appendingPathComponent("\(fixture)-\(direct ? "direct" : "plain").png").path
        let environment = direct ? ["FTGST_DIRECT_KEYFRAME": "required"] : ["FTGST_NO_DIRECT_KEYFRAME": "1"]
        let run = try Run.ftgst(
            ["thumbnailer", "-s", String(size), "-i", try TestEnvironment.fixture(fixture), "-o", out],
            environment: environment, timeout: 60)
        XCTAssertEqual(run.status, 0, "\(fixture) \(direct ? "direct" : "plain"): \(run.stderr)")
        return out
    }

    /// A PNG's `tEXt` entries (the spec's keys and ftgst's time stamp).
    private func text(_ path: String) throws -> [String: String] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var offset = 8
        var entries: [String: String] = [:]
        while offset + 12 <= bytes.count {
            let length = bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            guard offset + 12 + length <= bytes.count else { break }
            let data = bytes[(offset + 8)..<(offset + 8 + length)]
            if bytes[(offset + 4)..<(offset + 8)].elementsEqual("tEXt".utf8), let zero = data.firstIndex(of: 0) {
                entries[String(decoding: data[..<zero], as: UTF8.self)] = String(
                    decoding: data[(zero + 1)...], as: UTF8.self)
            }
            offset += 12 + length
        }
        return entries
    }

    /// The same file's thumbnail both ways: the same keys (URI, mtime, size, MIME type, length) and the same frame
    /// time, the same size, and the same picture up to the scalers (GStreamer's chain of Lanczos scalers and
    /// `videoconvert` against libswscale's one Lanczos pass; same-frame pairs measure 34–44 dB here).
    func testTheDirectPathGivesTheGStreamerPathsThumbnail() throws {
        for fixture in [
            "direct-h264-bframes.mp4", "direct-h264-noedit.mp4", "direct-hevc-opengop.mp4", "direct-hevc-closed.mov",
            "direct-h264-faststart.mov", "direct-h264-audio.mp4", "direct-hd-unstated.mp4", "direct-sd-fullrange.mp4",
            "black-start.mp4", "dull-start.mp4", "clip.mp4", "sd.mp4",
        ] {
            let direct = try thumbnail(fixture, direct: true)
            let plain = try thumbnail(fixture, direct: false)
            XCTAssertEqual(try text(direct), try text(plain), fixture)
            let a = try DecodedImage.read(direct)
            let b = try DecodedImage.read(plain)
            XCTAssertEqual([a.width, a.height], [b.width, b.height], fixture)
            XCTAssertGreaterThan(a.psnr(b), 30, fixture)
        }
    }

    /// The frame each path picks, read from the barcode: the clips' first 24 frames are flat grey, so the samples
    /// of the first third are dull and the thumbnail is the first keyframe after them (frame 24 with GOPs of 12,
    /// frame 30 with GOPs of 10), whatever the GOP shape, container or edit list.
    func testTheDirectPathPicksTheSameKeyframe() throws {
        let expected = [
            "direct-h264-bframes.mp4": 24, "direct-h264-noedit.mp4": 24, "direct-hevc-opengop.mp4": 24,
            "direct-hevc-closed.mov": 30, "direct-h264-faststart.mov": 30, "direct-h264-audio.mp4": 24,
        ]
        for (fixture, frame) in expected {
            let direct = try thumbnail(fixture, direct: true)
            XCTAssertEqual(FrameBarcode.number(try DecodedImage.read(direct)), frame, fixture)
            XCTAssertEqual(try text(direct)["ftgst"], "timeMs=\(frame * 40)", fixture)
            XCTAssertEqual(
                FrameBarcode.number(try DecodedImage.read(try thumbnail(fixture, direct: false))), frame, fixture)
        }
    }

    /// The direct picture is ffmpeg's own conversion of that frame (libswscale, Lanczos, BT.601 full range as the
    /// stream states), value for value; and for an HD clip with no colours stated, the BT.709 GStreamer assumes:
    /// the GStreamer path's picture is nearer the direct one than ffmpeg's BT.601 reading of the same frame.
    func testTheDirectPathsColoursAreTheStreamsAndGStreamers() throws {
        func reference(_ fixture: String, matrix: String, range: String, width: Int, height: Int) throws
            -> DecodedImage
        {
            try DecodedImage.frame(
                of: try TestEnvironment.fixture(fixture), index: 0, width: width, height: height,
                filter: "scale=\(width):\(height):flags=lanczos+accurate_rnd+full_chroma_int+full_chroma_inp"
                    + ":in_color_matrix=\(matrix):in_range=\(range):out_range=pc,format=rgb24")
        }
        let fullRange = try DecodedImage.read(try thumbnail("direct-sd-fullrange.mp4", direct: true))
        XCTAssertLessThan(
            fullRange.meanDifference(
                try reference("direct-sd-fullrange.mp4", matrix: "bt601", range: "pc", width: 256, height: 144)),
            0.05)

        let hd = try DecodedImage.read(try thumbnail("direct-hd-unstated.mp4", direct: true))
        let as709 = try reference("direct-hd-unstated.mp4", matrix: "bt709", range: "tv", width: 256, height: 144)
        XCTAssertLessThan(hd.meanDifference(as709), 0.05)
        let as601 = try reference("direct-hd-unstated.mp4", matrix: "bt601", range: "tv", width: 256, height: 144)
        let gstreamer = try DecodedImage.read(try thumbnail("direct-hd-unstated.mp4", direct: false))
        XCTAssertLessThan(gstreamer.meanDifference(hd) * 1.5, gstreamer.meanDifference(as601))
    }

    /// Declined files are thumbnailed all the same, by the GStreamer path (a turned one upright).
    func testDeclinedFilesAreThumbnailedByGStreamer() throws {
        let out = dir.appendingPathComponent("rotated.png").path
        let run = try Run.ftgst(
            ["thumbnailer", "-s", "64", "-i", try TestEnvironment.fixture("rotated.mp4"), "-o", out])
        XCTAssertEqual(run.status, 0, run.stderr)
        let image = try DecodedImage.read(out)
        XCTAssertGreaterThan(image.height, image.width, "upright: the 90° turn applied")
        let refused = try Run.ftgst(
            ["thumbnailer", "-s", "64", "-i", try TestEnvironment.fixture("rotated.mp4"), "-o", out + ".2"],
            environment: ["FTGST_DIRECT_KEYFRAME": "required"])
        XCTAssertEqual(refused.status, 67, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("[UNSUPPORTED_FORMAT]"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + ".2"))
    }
}
