import FilmtoneTestSupport
import Foundation
import XCTest

/// HDR to SDR (issue 13, item 7) on `hdr-pq.mp4` and `hdr-hlg.mp4` (640x360 HEVC Main 10, 24 fps, testsrc2 as PQ
/// or HLG codes with BT.2020 primaries; each frame shows its own time and number). ftgst's thumbnail of frame 12
/// (500 ms) against ffmpeg's `zscale` + `tonemap` reference of the same frame: the curves differ (BT.2390's EETF
/// here, Möbius there, both ratio-preserving with no desaturation), so the check is a bound on the mean difference
/// per channel, and the image without the tone map must be far from the reference.
final class ToneMapCLITests: XCTestCase {
    /// Frame 12 of `video` through ffmpeg's tone map (the zscale + tonemap chain), as RGB. It ends in RGB
    /// rather than `format=yuv420p`: a second 4:2:0 pass would blur the chroma at the bars' edges into the
    /// comparison.
    private func reference(_ video: String, toneMapped: Bool) throws -> DecodedImage {
        let chain =
            toneMapped
            ? "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=mobius:desat=0,"
                + "zscale=t=bt709,format=gbrp"
                // The codes as they are, only turned into RGB (full range) with the stream's own matrix.
            : "zscale=r=pc,format=gbrp"
        let output = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("reference.png")
        let run = try Run.tool(
            "ffmpeg",
            ["-v", "error", "-y", "-i", video, "-vf", "select=eq(n\\,12),\(chain)", "-frames:v", "1", output.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        return try DecodedImage.read(output.path)
    }

    /// The mean absolute difference of each channel (R, G, B), 0…255.
    private func channelDifferences(_ a: DecodedImage, _ b: DecodedImage) -> [Double] {
        guard a.width == b.width, a.height == b.height, a.rgb.count == b.rgb.count, !a.rgb.isEmpty else {
            XCTFail("images differ in size: \(a.width)×\(a.height) vs \(b.width)×\(b.height)")
            return [.nan, .nan, .nan]
        }
        var totals = [0, 0, 0]
        for index in 0..<a.rgb.count { totals[index % 3] += abs(Int(a.rgb[index]) - Int(b.rgb[index])) }
        return totals.map { Double($0) / Double(a.rgb.count / 3) }
    }

    private func thumbnail(_ video: String, _ extra: [String] = []) throws -> DecodedImage {
        let output = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("thumb.png")
        let run = try Run.ftgst(
            ["thumb", video, "--time-ms", "500", "--tolerance-ms", "0", "--max-width", "640", "-o", output.path]
                + extra)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try run.json()["timeMs"] as? Int, 500)
        return try DecodedImage.read(output.path)
    }

    /// Mapped: every channel within `bound` of ffmpeg's tone map. Not mapped: every channel at least 12 off it
    /// (the washed-out look), and the mapped image at least three times closer.
    private func assertToneMapped(_ fixture: String, bound: Double) throws {
        let video = try TestEnvironment.fixture(fixture)
        let reference = try reference(video, toneMapped: true)
        let mapped = channelDifferences(try thumbnail(video), reference)
        let unmapped = channelDifferences(try thumbnail(video, ["--tone-map", "off"]), reference)
        for channel in 0..<3 {
            XCTAssertLessThan(mapped[channel], bound, "\(fixture) channel \(channel): \(mapped) vs \(unmapped)")
            XCTAssertGreaterThan(unmapped[channel], 12, "\(fixture) channel \(channel) without the tone map")
            XCTAssertLessThan(mapped[channel] * 3, unmapped[channel], "\(fixture) channel \(channel)")
        }
    }

    // MARK: - Against ffmpeg

    /// Measured: 0.9, 4.9, 1.7 with the tone map; 25.3, 28.7, 20.5 without.
    func testPQThumbnailIsCloseToFFmpegsToneMap() throws {
        try assertToneMapped("hdr-pq.mp4", bound: 8)
    }

    /// Measured: 2.5, 2.0, 2.4 with the tone map; 21.8, 22.6, 15.0 without.
    func testHLGThumbnailIsCloseToFFmpegsToneMap() throws {
        try assertToneMapped("hdr-hlg.mp4", bound: 6)
    }

    /// HDR10's static metadata sets the curve's peak: `hdr-pq4000.mp4` (the same picture, MaxCLL and mastering
    /// peak 4000 cd/m²) keeps the ≈ 1500 cd/m² highlights below white, where `hdr-pq.mp4` (nothing stated:
    /// 1000) clips them. Measured: 3 376 against 39 686 pixels with green ≥ 250. Both stay close to ffmpeg's
    /// tone map, which reads the same metadata.
    func testTheStatedPeakIsTheCurvesPeak() throws {
        func brightPixels(_ image: DecodedImage) -> Int {
            stride(from: 1, to: image.rgb.count, by: 3).filter { image.rgb[$0] >= 250 }.count
        }
        let stated = try TestEnvironment.fixture("hdr-pq4000.mp4")
        let mapped = try thumbnail(stated)
        let assumed = try thumbnail(try TestEnvironment.fixture("hdr-pq.mp4"))
        XCTAssertLessThan(brightPixels(mapped) * 4, brightPixels(assumed))
        let differences = channelDifferences(mapped, try reference(stated, toneMapped: true))
        for channel in 0..<3 { XCTAssertLessThan(differences[channel], 8, "channel \(channel): \(differences)") }
    }

    /// `--tone-map off`: the codes as decoded, as ffmpeg shows them without a tone map.
    func testOffGivesTheCodesAsTheyAre() throws {
        let video = try TestEnvironment.fixture("hdr-pq.mp4")
        let off = channelDifferences(
            try thumbnail(video, ["--tone-map", "off"]), try reference(video, toneMapped: false))
        for channel in 0..<3 { XCTAssertLessThan(off[channel], 2, "channel \(channel): \(off)") }
    }

    /// The 10 bits reach the curve whole: a PQ grey ramp with ≤ 1 code between neighbours comes out as an SDR ramp
    /// that only rises, by at most 1 code a pixel, with ≥ 240 levels (measured: 246). Cut to 8-bit RGB before the
    /// tone map (`videoconvert ! RGB ! ftlut tone-map=pq`), the same ramp has steps of up to 7 codes, goes down in
    /// places and keeps 179 levels.
    func testA10BitRampIsNotBanded() throws {
        let ramp = try TestEnvironment.fixture("hdr-ramp10.mkv")
        let output = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("ramp.png").path
        let run = try Run.ftgst(["thumb", ramp, "--max-width", "1024", "--format", "png", "-o", output])
        XCTAssertEqual(run.status, 0, run.stderr)
        let image = try DecodedImage.read(output)
        XCTAssertEqual([image.width, image.height], [1024, 32])
        for channel in 0..<3 {
            let row = (0..<image.width).map { Int(image.rgb[(16 * image.width + $0) * 3 + channel]) }
            let steps = zip(row.dropFirst(), row).map { $0 - $1 }
            XCTAssertGreaterThanOrEqual(steps.min() ?? -1, 0, "channel \(channel): the ramp only rises")
            XCTAssertLessThanOrEqual(steps.max() ?? 99, 1, "channel \(channel): no band wider than one code")
            XCTAssertGreaterThanOrEqual(Set(row).count, 240, "channel \(channel): levels kept")
            XCTAssertGreaterThan(row.last ?? 0, 200, "channel \(channel): 240 cd/m² is near SDR white")
        }
    }

    /// An SDR source is not touched: the same bytes with the tone map on or off, for a video and a photo.
    func testSDRSourcesAreUnchanged() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        for fixture in ["clip.mp4", "hevc10.mp4", "photo.png"] {
            let video = try TestEnvironment.fixture(fixture)
            var files: [Data] = []
            for setting in ["on", "off"] {
                let output = folder.appendingPathComponent("\(fixture)-\(setting).png").path
                let run = try Run.ftgst(["thumb", video, "--time-ms", "300", "--tone-map", setting, "-o", output])
                XCTAssertEqual(run.status, 0, run.stderr)
                files.append(try XCTUnwrap(FileManager.default.contents(atPath: output)))
            }
            XCTAssertEqual(files[0], files[1], "\(fixture): --tone-map must not change an SDR source")
        }
    }

    // MARK: - Storyboards and previews

    func testStoryboardTilesAreToneMapped() throws {
        let video = try TestEnvironment.fixture("hdr-pq.mp4")
        let folder = try TestEnvironment.temporaryDirectory(self)
        var sheets: [DecodedImage] = []
        for setting in ["on", "off"] {
            let run = try Run.ftgst([
                "storyboard", video, "-o", folder.appendingPathComponent(setting).path, "--every", "0.5",
                "--columns", "2", "--rows", "1", "--width", "640", "--tone-map", setting,
            ])
            XCTAssertEqual(run.status, 0, run.stderr)
            sheets.append(try DecodedImage.read(folder.appendingPathComponent("\(setting)/sheet-001.jpg").path))
        }
        // The second tile is the frame at 500 ms: compared with the reference, JPEG's loss included.
        let reference = try reference(video, toneMapped: true)
        func tile(_ sheet: DecodedImage) -> DecodedImage {
            var rgb: [UInt8] = []
            for y in 0..<360 { rgb += sheet.rgb[((y * sheet.width) + 640) * 3..<((y * sheet.width) + 1280) * 3] }
            return DecodedImage(width: 640, height: 360, rgb: rgb)
        }
        XCTAssertEqual(sheets[0].width, 1280)
        let mapped = channelDifferences(tile(sheets[0]), reference)
        let unmapped = channelDifferences(tile(sheets[1]), reference)
        for channel in 0..<3 {
            XCTAssertLessThan(mapped[channel], 9, "channel \(channel): \(mapped) vs \(unmapped)")
            XCTAssertLessThan(mapped[channel] * 2, unmapped[channel], "channel \(channel)")
        }
    }

    func testPreviewIsToneMappedAndItsRequestFileTakesTheKey() throws {
        let video = try TestEnvironment.fixture("hdr-pq.mp4")
        let folder = try TestEnvironment.temporaryDirectory(self)
        let reference = try reference(video, toneMapped: true)
        let on = folder.appendingPathComponent("on.png").path
        let run = try Run.ftgst(["preview", video, "-o", on, "--time-ms", "500", "--mezzanine", "off"])
        XCTAssertEqual(run.status, 0, run.stderr)
        // The request file's `toneMap`, with the command line's options over it.
        let request = folder.appendingPathComponent("request.json")
        let off = folder.appendingPathComponent("off.png").path
        try JSONSerialization.data(withJSONObject: [
            "source": video, "output": off, "timeMs": 500, "toneMap": "off", "mezzanine": "off",
        ]).write(to: request)
        XCTAssertEqual(try Run.ftgst(["preview", "--request", request.path]).status, 0)
        let mapped = channelDifferences(try DecodedImage.read(on), reference)
        let unmapped = channelDifferences(try DecodedImage.read(off), reference)
        for channel in 0..<3 {
            XCTAssertLessThan(mapped[channel], 8, "channel \(channel): \(mapped) vs \(unmapped)")
            XCTAssertGreaterThan(unmapped[channel], 15, "channel \(channel)")
        }
        let onAgain = folder.appendingPathComponent("on-again.png").path
        let over = try Run.ftgst(["preview", "--request", request.path, "--tone-map", "on", "-o", onAgain])
        XCTAssertEqual(over.status, 0, over.stderr)
        XCTAssertEqual(FileManager.default.contents(atPath: onAgain), FileManager.default.contents(atPath: on))
    }

    /// A mezzanine of a PQ source holds it tone-mapped: a preview read from it is as close to ffmpeg's tone map
    /// as one from the source. With `--tone-map off` the mezzanine is not read (it could not show the codes).
    func testAMezzanineOfAPQSourceIsToneMapped() throws {
        let video = try TestEnvironment.fixture("hdr-pq.mp4")
        let folder = try TestEnvironment.temporaryDirectory(self)
        let store = folder.appendingPathComponent("mezzanines").path
        let built = try Run.ftgst(["mezzanine", video, "--mezzanine-dir", store, "--max-width", "640"])
        XCTAssertEqual(built.status, 0, built.stderr)
        let reference = try reference(video, toneMapped: true)
        for setting in ["on", "off"] {
            let output = folder.appendingPathComponent("\(setting).png").path
            let run = try Run.ftgst([
                "preview", video, "-o", output, "--time-ms", "500", "--max-width", "640", "--mezzanine-dir", store,
                "--tone-map", setting,
            ])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(try run.json()["mezzanine"] as? Bool, setting == "on", setting)
            let differences = channelDifferences(try DecodedImage.read(output), reference)
            for channel in 0..<3 {
                if setting == "on" {
                    XCTAssertLessThan(differences[channel], 8, "from the mezzanine: \(differences)")
                } else {
                    XCTAssertGreaterThan(differences[channel], 12, "off, from the source: \(differences)")
                }
            }
        }
    }

    /// The desktop thumbnailer (no option: always on) gives the tone-mapped picture `thumb --time auto` gives,
    /// not the washed-out one the file managers' thumbnailers show.
    func testTheDesktopThumbnailerToneMaps() throws {
        let video = try TestEnvironment.fixture("hdr-pq.mp4")
        let folder = try TestEnvironment.temporaryDirectory(self)
        let entry = folder.appendingPathComponent("entry.png").path
        let run = try Run.ftgst(["thumbnailer", "-i", video, "-o", entry, "-s", "256"])
        XCTAssertEqual(run.status, 0, run.stderr)
        var pictures: [DecodedImage] = []
        for setting in ["on", "off"] {
            let output = folder.appendingPathComponent("\(setting).png").path
            let thumb = try Run.ftgst([
                "thumb", video, "--time", "auto", "--max-width", "256", "--max-height", "256", "--format", "png",
                "--tone-map", setting, "-o", output,
            ])
            XCTAssertEqual(thumb.status, 0, thumb.stderr)
            pictures.append(try DecodedImage.read(output))
        }
        let picture = try DecodedImage.read(entry)
        XCTAssertLessThan(picture.meanDifference(pictures[0]), 1, "the thumbnailer's picture is tone-mapped")
        XCTAssertGreaterThan(picture.meanDifference(pictures[1]), 15)
    }

    // MARK: - Exports

    /// The export of `fixture` (ffv1-mkv: lossless, so the picture is what the pipeline made), its colour tags, and
    /// its frame 12 (500 ms) as RGB read through the tags (zscale).
    private func exported(_ fixture: String, _ extra: [String] = []) throws -> (tags: [String], frame: DecodedImage) {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let output = folder.appendingPathComponent("\(fixture)\(extra.joined()).mkv").path
        let run = try Run.ftgst(
            ["export", try TestEnvironment.fixture(fixture), "--audio", "none", "-o", output] + extra)
        XCTAssertEqual(run.status, 0, run.stderr)
        let probe = try Run.tool(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "v", "-show_entries",
                "stream=color_space,color_transfer,color_primaries", "-of", "csv=p=0", output,
            ])
        let frame = folder.appendingPathComponent("\(fixture)\(extra.joined())-frame.png").path
        let decode = try Run.tool(
            "ffmpeg",
            [
                "-v", "error", "-y", "-i", output, "-vf", "select=eq(n\\,12),zscale=r=pc,format=gbrp", "-frames:v", "1",
                frame,
            ])
        XCTAssertEqual(decode.status, 0, decode.stderr)
        return (
            probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").map(String.init),
            try DecodedImage.read(frame)
        )
    }

    private func preview(_ fixture: String, _ extra: [String] = []) throws -> DecodedImage {
        let output = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("\(fixture)-preview.png")
        let run = try Run.ftgst(
            [
                "preview", try TestEnvironment.fixture(fixture), "--time-ms", "500", "--max-width", "640", "-o",
                output.path,
            ]
                + extra)
        XCTAssertEqual(run.status, 0, run.stderr)
        return try DecodedImage.read(output.path)
    }

    /// An export shows what the preview of the same frame shows: an HLG or PQ source tone-mapped to SDR BT.709 and
    /// tagged so. Measured (mean per channel): ≤ 0.6 for both, where the codes as decoded are ≥ 15 off.
    func testAnExportIsToneMappedAsItsPreview() throws {
        for fixture in ["hdr-hlg.mp4", "hdr-pq.mp4"] {
            let export = try exported(fixture)
            XCTAssertEqual(export.tags, ["bt709", "bt709", "bt709"], "\(fixture): tagged SDR BT.709")
            let mapped = channelDifferences(export.frame, try preview(fixture))
            let raw = channelDifferences(export.frame, try preview(fixture, ["--tone-map", "off"]))
            for channel in 0..<3 {
                XCTAssertLessThan(mapped[channel], 1.5, "\(fixture) channel \(channel): \(mapped)")
                XCTAssertGreaterThan(raw[channel], 12, "\(fixture) channel \(channel) against the codes: \(raw)")
            }
        }
    }

    /// A PQ export's curve takes HDR10's stated peak from the caps, as the preview's does: `hdr-pq4000.mp4` keeps
    /// its highlights below white where `hdr-pq.mp4` (1000 cd/m² assumed) clips them, and matches its preview.
    func testAPQExportTakesTheStatedPeak() throws {
        func brightPixels(_ image: DecodedImage) -> Int {
            stride(from: 1, to: image.rgb.count, by: 3).filter { image.rgb[$0] >= 250 }.count
        }
        let stated = try exported("hdr-pq4000.mp4").frame
        let assumed = try exported("hdr-pq.mp4").frame
        XCTAssertLessThan(brightPixels(stated) * 4, brightPixels(assumed))
        let differences = channelDifferences(stated, try preview("hdr-pq4000.mp4"))
        for channel in 0..<3 { XCTAssertLessThan(differences[channel], 1.5, "channel \(channel): \(differences)") }
    }

    /// `--tone-map off` (and `"toneMap": "off"` in a request file) keeps an HDR delivery: the HLG tags and codes.
    func testAnExportWithTheToneMapOffKeepsTheHDR() throws {
        let off = try exported("hdr-hlg.mp4", ["--tone-map", "off"])
        XCTAssertEqual(off.tags, ["bt2020nc", "arib-std-b67", "bt2020"])
        let raw = channelDifferences(off.frame, try preview("hdr-hlg.mp4", ["--tone-map", "off"]))
        for channel in 0..<3 { XCTAssertLessThan(raw[channel], 1.5, "channel \(channel): \(raw)") }
        let folder = try TestEnvironment.temporaryDirectory(self)
        let request = folder.appendingPathComponent("off.json")
        let output = folder.appendingPathComponent("request.mp4").path
        try JSONSerialization.data(withJSONObject: [
            "source": try TestEnvironment.fixture("hdr-hlg.mp4"), "output": output, "toneMap": "off",
        ]).write(to: request)
        let run = try Run.ftgst(["export", "--request", request.path, "--dry-run"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertFalse(run.stdout.contains("tonemap"), run.stdout)
        let on = try Run.ftgst(["export", try TestEnvironment.fixture("hdr-hlg.mp4"), "-o", output, "--dry-run"])
        XCTAssertTrue(on.stdout.contains("ftlut name=tonemap tone-map=hlg"), on.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output), "a dry run writes nothing")
    }

    // MARK: - Cache keys, probe, errors

    /// The same cache name asked again with the other setting is rebuilt, not returned from the cache.
    func testTheCacheKeyHoldsTheSetting() throws {
        let video = try TestEnvironment.fixture("hdr-pq.mp4")
        let cache = try TestEnvironment.temporaryDirectory(self).path
        func thumb(_ setting: String) throws -> [String: Any] {
            let run = try Run.ftgst([
                "thumb", video, "--time-ms", "500", "--tolerance-ms", "0", "--max-width", "640", "--cache-dir", cache,
                "--cache-name", "hdr", "--format", "png", "--tone-map", setting,
            ])
            XCTAssertEqual(run.status, 0, run.stderr)
            return try run.json()
        }
        XCTAssertEqual(try thumb("on")["cached"] as? Bool, false)
        XCTAssertEqual(try thumb("on")["cached"] as? Bool, true)
        let off = try thumb("off")
        XCTAssertEqual(off["cached"] as? Bool, false, "another tone-map setting is another picture")
        let reference = try reference(video, toneMapped: true)
        let offImage = try DecodedImage.read(try XCTUnwrap(off["path"] as? String))
        XCTAssertGreaterThan(channelDifferences(offImage, reference)[1], 15)
    }

    func testProbeSaysWhatIsApplied() throws {
        for (fixture, applied) in [
            ("hdr-pq.mp4", "tone-map: pq→bt709 bt2390"), ("hdr-hlg.mp4", "tone-map: hlg→bt709 bt2390"),
            ("clip.mp4", "none"),
        ] {
            let run = try Run.ftgst(["probe", try TestEnvironment.fixture(fixture)])
            XCTAssertEqual(run.status, 0, run.stderr)
            let transform = try XCTUnwrap(try run.json()["inputTransform"] as? [String: Any], fixture)
            XCTAssertEqual(transform["applied"] as? String, applied, fixture)
            if applied != "none" { XCTAssertEqual(transform["policy"] as? String, "hdr-to-sdr", fixture) }
        }
    }

    func testABadSettingIsAnInvalidArgument() throws {
        let video = try TestEnvironment.fixture("hdr-pq.mp4")
        let folder = try TestEnvironment.temporaryDirectory(self)
        for words in [
            ["thumb", video, "--tone-map", "auto", "-o", folder.appendingPathComponent("t.png").path],
            ["storyboard", video, "--tone-map", "", "-o", folder.appendingPathComponent("s").path],
            ["preview", video, "--tone-map", "ON", "-o", folder.appendingPathComponent("p.png").path],
            ["export", video, "--tone-map", "1", "-o", folder.appendingPathComponent("e.mp4").path],
        ] {
            assertFailure(try Run.ftgst(words), code: "INVALID_ARGUMENT", status: 64)
        }
        for value: Any in ["yes", true] {
            let request = folder.appendingPathComponent("bad.json")
            try JSONSerialization.data(withJSONObject: [
                "source": video, "output": folder.appendingPathComponent("r.png").path, "toneMap": value,
            ]).write(to: request)
            assertFailure(try Run.ftgst(["preview", "--request", request.path]), code: "INVALID_ARGUMENT", status: 64)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("t.png").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("s").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("e.mp4").path))
    }
}
