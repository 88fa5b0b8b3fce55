import FilmtoneTestSupport
import Synchronization
import XCTest

/// `ftgst thumb` end to end through the built binary, on local fixtures: JSON on stdout, `[CODE]` on stderr,
/// exit statuses, files in the cache folder.
final class ThumbCLITests: XCTestCase {
    private var cache: URL!

    override func setUpWithError() throws {
        cache = try TestEnvironment.temporaryDirectory(self)
    }

    private func thumb(_ source: String, _ options: [String] = [], name: String? = nil) throws -> ProcessResult {
        var arguments = ["thumb", source, "--cache-dir", cache.path] + options
        if let name { arguments += ["--cache-name", name] }
        return try Run.ftgst(arguments)
    }

    private func success(_ result: ProcessResult, file: StaticString = #filePath, line: UInt = #line) throws
        -> [String: Any]
    {
        XCTAssertEqual(result.status, 0, "stderr: \(result.stderr)", file: file, line: line)
        XCTAssertEqual(result.stderr, "", file: file, line: line)
        XCTAssertEqual(result.stdout.filter { $0 == "\n" }.count, 1, "one line of JSON", file: file, line: line)
        return try result.json(file: file, line: line)
    }

    private func cacheFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: cache.path).sorted()
    }

    // MARK: - Success

    /// A thumbnail named over its own source (`--cache-dir` and `--cache-name` beside it, or `-o` through a hard
    /// link) is refused before anything is written: the photo is left byte for byte as it was.
    func testAThumbnailNamedOverItsSourceIsRefusedAndTheSourceKept() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let photo = folder.appendingPathComponent("photo.jpg").path
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("photo.jpg"), toPath: photo)
        let link = folder.appendingPathComponent("link.jpg").path
        try FileManager.default.linkItem(atPath: photo, toPath: link)
        let before = try Data(contentsOf: URL(fileURLWithPath: photo))
        for options in [
            ["--cache-dir", folder.path, "--cache-name", "photo"],
            ["--cache-dir", folder.path + "/.", "--cache-name", "link.jpg"], ["-o", link],
        ] {
            let result = try Run.ftgst(["thumb", photo] + options)
            assertFailure(result, code: "INVALID_ARGUMENT", status: 64)
            XCTAssertTrue(result.stderr.contains("source itself"), result.stderr)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: photo)), before)
    }

    func testVideoThumbnailJSONDescribesTheWrittenFile() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let json = try success(try thumb(clip, ["--time-ms", "1000"], name: "first"))
        let path = cache.appendingPathComponent("first.jpg").path
        XCTAssertEqual(json["path"] as? String, path)
        XCTAssertEqual(json["uri"] as? String, URL(fileURLWithPath: path).absoluteString)
        XCTAssertEqual(json["format"] as? String, "jpeg")
        XCTAssertEqual(json["cached"] as? Bool, false)
        // 320×240 fits the default 512 box: not upscaled.
        XCTAssertEqual(json["width"] as? Int, 320)
        XCTAssertEqual(json["height"] as? Int, 240)
        let image = try DecodedImage.read(path)
        XCTAssertEqual(image.width, 320)
        XCTAssertEqual(image.height, 240)
        XCTAssertEqual(try cacheFiles(), ["first.jpg"])
        // Default name: thumb-<uuid>.jpg
        let other = try success(try thumb(clip))
        let name = URL(fileURLWithPath: try XCTUnwrap(other["path"] as? String)).lastPathComponent
        XCTAssertTrue(name.hasPrefix("thumb-") && name.hasSuffix(".jpg") && name.count == 6 + 36 + 4, name)
    }

    func testExactFrameMatchesFFmpegsFrameAndNotItsNeighbours() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        // clip.mp4: 30 fps, keyframes every second, scrolling picture. 1400 ms = frame 42 (mid-GOP).
        let json = try success(try thumb(clip, ["--time-ms", "1400", "--tolerance-ms", "0", "--format", "png"]))
        XCTAssertEqual(json["timeMs"] as? Int, 1400)
        let ours = try DecodedImage.read(try XCTUnwrap(json["path"] as? String))
        let exact = try DecodedImage.frame(of: clip, index: 42, width: 320, height: 240)
        let before = try DecodedImage.frame(of: clip, index: 41, width: 320, height: 240)
        let after = try DecodedImage.frame(of: clip, index: 43, width: 320, height: 240)
        let distance = ours.meanDifference(exact)
        XCTAssertLessThan(distance, 4, "same frame, two decoders and converters")
        XCTAssertLessThan(distance * 2, ours.meanDifference(before))
        XCTAssertLessThan(distance * 2, ours.meanDifference(after))
    }

    func testTimeBetweenFramesReturnsTheFrameOnScreen() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        // 1010 ms lies inside frame 30 (1000…1033 ms).
        let json = try success(try thumb(clip, ["--time-ms", "1010", "--tolerance-ms", "0", "--format", "png"]))
        XCTAssertEqual(json["timeMs"] as? Int, 1000)
        let ours = try DecodedImage.read(try XCTUnwrap(json["path"] as? String))
        let onScreen = try DecodedImage.frame(of: clip, index: 30, width: 320, height: 240)
        let next = try DecodedImage.frame(of: clip, index: 31, width: 320, height: 240)
        XCTAssertLessThan(ours.meanDifference(onScreen) * 2, ours.meanDifference(next))
    }

    func testToleranceAllowsTheKeyframeAndZeroToleranceDecodesForward() throws {
        let clip = try TestEnvironment.fixture("longgop.mp4")  // one keyframe, at 0
        let loose = try success(try thumb(clip, ["--time-ms", "3500", "--tolerance-ms", "4000"]))
        XCTAssertEqual(loose["timeMs"] as? Int, 0, "within tolerance: the keyframe, no decoding forward")
        let exact = try success(try thumb(clip, ["--time-ms", "3500", "--tolerance-ms", "0"]))
        XCTAssertEqual(exact["timeMs"] as? Int, 3500)
        let near = try success(try thumb(clip, ["--time-ms", "3500", "--tolerance-ms", "1000"]))
        let nearTime = try XCTUnwrap(near["timeMs"] as? Int)
        XCTAssertLessThanOrEqual(
            abs(nearTime - 3500), 1000, "the keyframe is too far: the result must still be within tolerance")
    }

    func testScalesDownIntoTheBoxKeepingAspect() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let json = try success(try thumb(clip, ["--max-width", "160", "--max-height", "400"]))
        XCTAssertEqual(json["width"] as? Int, 160)
        XCTAssertEqual(json["height"] as? Int, 120)
        let image = try DecodedImage.read(try XCTUnwrap(json["path"] as? String))
        XCTAssertEqual([image.width, image.height], [160, 120])
    }

    func testDownscalingIsFilteredNotAliased() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        // 4× down from 320×240: a 2-tap bilinear scaler skips source pixels and aliases the bar edges.
        let json = try success(
            try thumb(
                clip,
                [
                    "--time-ms", "1400", "--tolerance-ms", "0", "--max-width", "80",
                    "--format", "png",
                ]))
        let ours = try DecodedImage.read(try XCTUnwrap(json["path"] as? String))
        let filtered = try DecodedImage.frame(of: clip, index: 42, width: 80, height: 60, scaler: "lanczos")
        XCTAssertLessThan(ours.meanDifference(filtered), 2.5)
    }

    func testRotatedClipComesOutUprightLikeFFmpegsAutorotate() throws {
        let clip = try TestEnvironment.fixture("rotated.mp4")
        let json = try success(try thumb(clip, ["--time-ms", "1000", "--tolerance-ms", "0", "--format", "png"]))
        XCTAssertEqual(json["width"] as? Int, 240)
        XCTAssertEqual(json["height"] as? Int, 320)
        let ours = try DecodedImage.read(try XCTUnwrap(json["path"] as? String))
        let upright = try DecodedImage.frame(of: clip, index: 30, width: 240, height: 320)
        let sideways = try DecodedImage.frame(
            of: try TestEnvironment.fixture("clip.mp4"), index: 30, width: 320,
            height: 240
        ).rotatedClockwise()
        XCTAssertLessThan(ours.meanDifference(upright), 4)
        XCTAssertGreaterThan(
            ours.meanDifference(sideways), 3 * ours.meanDifference(upright),
            "turned the wrong way")
    }

    /// An SD clip with no colour description, turned upright to 480x640: the matrix is guessed from the coded
    /// 640x480 (BT.601, as ffmpeg does), never from the rotated size, which a guess would take for HD (BT.709).
    func testRotationNeverChangesColours() throws {
        let clip = try TestEnvironment.fixture("rotated-sd.mp4")
        let json = try success(
            try thumb(clip, ["--time-ms", "0", "--max-width", "480", "--max-height", "640", "--format", "png"]))
        XCTAssertEqual(json["width"] as? Int, 480)
        XCTAssertEqual(json["height"] as? Int, 640)
        let ours = try DecodedImage.read(try XCTUnwrap(json["path"] as? String))
        let upright = try DecodedImage.frame(of: clip, index: 0, width: 480, height: 640)
        XCTAssertLessThan(ours.meanDifference(upright), 2)
    }

    func testEXIFOrientationOfAPhotoIsApplied() throws {
        let photo = try TestEnvironment.fixture("photo-exif.jpg")  // 320×240 stored, EXIF 6: rotate 90° clockwise
        let json = try success(try thumb(photo, ["--time-ms", "5000", "--format", "png"]))
        XCTAssertEqual(json["width"] as? Int, 240)
        XCTAssertEqual(json["height"] as? Int, 320)
        XCTAssertEqual(json["timeMs"] as? Int, 0, "the time is ignored for photos")
        let ours = try DecodedImage.read(try XCTUnwrap(json["path"] as? String))
        let stored = try DecodedImage.read(photo)  // ffmpeg 5.1 does not apply EXIF orientation
        XCTAssertEqual([stored.width, stored.height], [320, 240])
        XCTAssertLessThan(ours.meanDifference(stored.rotatedClockwise()), 4)
    }

    /// A local JPEG, PNG or still WebP is decoded by TurboJPEG, libpng or libwebp without starting GStreamer
    /// (whose start-up costs more than the decode): `gst_init` opens `GST_DEBUG_FILE`, so the file appears for a
    /// video and not for a photo. A JPEG TurboJPEG stops on (truncated) is still GStreamer's, with its
    /// DECODE_FAILED.
    func testAPhotoThumbnailNeverStartsGStreamer() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        func run(_ source: String, log: String) throws -> (ProcessResult, Bool) {
            let path = folder.appendingPathComponent(log).path
            let result = try Run.ftgst(
                ["thumb", source, "--cache-dir", cache.path, "--max-width", "100"],
                environment: ["GST_DEBUG": "1", "GST_DEBUG_FILE": path])
            return (result, FileManager.default.fileExists(atPath: path))
        }
        var made: [ProcessResult] = []
        for name in ["photo.jpg", "photo.png", "photo.webp"] {
            let (photo, started) = try run(try TestEnvironment.fixture(name), log: "\(name).log")
            XCTAssertEqual(try success(photo)["width"] as? Int, 100, name)
            XCTAssertFalse(started, "the \(name) path started GStreamer")
            made.append(photo)
        }
        let (video, videoStarted) = try run(try TestEnvironment.fixture("clip.mp4"), log: "video.log")
        XCTAssertEqual(try success(video)["width"] as? Int, 100)
        XCTAssertTrue(videoStarted, "GST_DEBUG_FILE is how this test sees GStreamer start")
        made.append(video)

        let whole = try Data(contentsOf: URL(fileURLWithPath: try TestEnvironment.fixture("photo.jpg")))
        let truncated = folder.appendingPathComponent("truncated.jpg")
        try whole.prefix(whole.count * 3 / 4).write(to: truncated)
        let (cut, cutStarted) = try run(truncated.path, log: "cut.log")
        assertFailure(cut, code: "DECODE_FAILED", status: 68)
        XCTAssertTrue(cutStarted, "a JPEG TurboJPEG cannot finish goes to GStreamer")
        let names = try made.map {
            URL(fileURLWithPath: try XCTUnwrap($0.json()["path"] as? String)).lastPathComponent
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: cache.path).filter { !$0.hasPrefix(".") }
        XCTAssertEqual(left.sorted(), names.sorted(), "nothing of the failed one is left")
    }

    /// 16-bit PNGs decode to ffmpeg's colours: RGBA, and RGB, which pngdec 1.22 gets wrong (red as yellow) and
    /// which preview and export still refuse (ErrorCodeCLITests); a thumbnail reads it through libpng.
    func test16BitPNGsHaveFFmpegsColours() throws {
        for name in ["deep16a.png", "deep16.png"] {
            let photo = try TestEnvironment.fixture(name)
            let json = try success(try thumb(photo, ["--format", "png"]))
            let ours = try DecodedImage.read(try XCTUnwrap(json["path"] as? String))
            XCTAssertEqual(ours.width, 64)
            XCTAssertLessThan(ours.meanDifference(try DecodedImage.read(photo)), 2, name)
        }
    }

    func testPNGPhotoIsNotUpscaled() throws {
        let json = try success(try thumb(try TestEnvironment.fixture("photo.png"), ["--format", "png"]))
        XCTAssertEqual(json["width"] as? Int, 200)
        XCTAssertEqual(json["height"] as? Int, 150)
        let photo = try TestEnvironment.fixture("photo.jpg")
        let scaled = try success(try thumb(photo, ["--max-width", "100"]))
        XCTAssertEqual([scaled["width"] as? Int, scaled["height"] as? Int], [100, 75])
    }

    func testNonSquarePixelsComeOutSquare() throws {
        let json = try success(try thumb(try TestEnvironment.fixture("anamorphic.mp4"), ["--max-width", "1000"]))
        XCTAssertEqual(json["width"] as? Int, 640, "360 coded × 16/9")
        XCTAssertEqual(json["height"] as? Int, 240)
    }

    func testOddSizedClip() throws {
        let clip = try TestEnvironment.fixture("odd.mp4")
        let json = try success(try thumb(clip))
        XCTAssertEqual([json["width"] as? Int, json["height"] as? Int], [321, 241])
        let small = try success(try thumb(clip, ["--max-width", "101"]))
        XCTAssertEqual(small["width"] as? Int, 101)
        XCTAssertEqual(small["height"] as? Int, 76)
    }

    /// offset.mp4 is clip.mp4 with its video starting 10 s in (an empty edit). qtdemux sends a GAP for the empty edit,
    /// which used to preroll the sink with no frame to pull: every thumbnail waited out `--timeout-ms` and failed. The
    /// frame asked for at 0 is the first picture (what ffmpeg -ss 0 and players show); its time is where probe's
    /// timeline puts the first frame (probe's duration less the video's own 3 s), and a second later is clip's 1 s.
    func testVideoThatStartsLaterAnswersWithItsFirstFrame() throws {
        let offset = try TestEnvironment.fixture("offset.mp4")
        let clip = try TestEnvironment.fixture("clip.mp4")
        let probed = try XCTUnwrap(try Run.ftgst(["probe", offset]).json()["durationMs"] as? Int)
        let start = probed - 3000
        // A hang would be DECODE_FAILED "timed out after 20000 ms", well inside Run's own 60 s deadline.
        let first = try success(
            try thumb(offset, ["--time-ms", "0", "--tolerance-ms", "0", "--format", "png", "--timeout-ms", "20000"]))
        XCTAssertEqual(first["timeMs"] as? Int, start)
        let ours = try DecodedImage.read(try XCTUnwrap(first["path"] as? String))
        let frame0 = try DecodedImage.frame(of: clip, index: 0, width: 320, height: 240)
        XCTAssertLessThan(ours.meanDifference(frame0), 4, "clip's first frame")
        XCTAssertLessThan(
            ours.meanDifference(frame0) * 2,
            ours.meanDifference(try DecodedImage.frame(of: clip, index: 1, width: 320, height: 240)))
        let later = try success(
            try thumb(
                offset,
                ["--time-ms", "\(start + 1000)", "--tolerance-ms", "0", "--format", "png", "--timeout-ms", "20000"]))
        XCTAssertEqual(later["timeMs"] as? Int, start + 1000)
        let second = try DecodedImage.read(try XCTUnwrap(later["path"] as? String))
        XCTAssertLessThan(
            second.meanDifference(try DecodedImage.frame(of: clip, index: 30, width: 320, height: 240)), 4)
        // The default tolerance takes the first frame without a seek.
        XCTAssertEqual(try success(try thumb(offset, ["--timeout-ms", "20000"]))["timeMs"] as? Int, start)
    }

    /// An animated GIF is a photo (probe: `isImage`, one frame): thumb and preview show its first frame at time 0,
    /// promptly, although GStreamer 1.22's GIF demuxer never reaches EOS.
    func testAnimatedGIFIsAPhotoShowingItsFirstFrame() throws {
        let gif = try TestEnvironment.fixture("animated.gif")
        // Success is one JSON line and nothing on stderr: probe used to print a GStreamer-CRITICAL here
        // (gst-libav's GIF demuxer dividing by a zero rate for a frame-count query).
        for name in ["animated.gif", "photo.gif"] {
            let probed = try Run.ftgst(["probe", try TestEnvironment.fixture(name), "--timeout-ms", "20000"])
            XCTAssertEqual(probed.status, 0, probed.stderr)
            XCTAssertEqual(probed.stderr, "", name)
            XCTAssertEqual(try probed.json()["isImage"] as? Bool, true)
        }
        let first = try DecodedImage.frame(of: gif, index: 0, width: 64, height: 48)
        let json = try success(try thumb(gif, ["--time-ms", "500", "--format", "png", "--timeout-ms", "20000"]))
        XCTAssertEqual(json["timeMs"] as? Int, 0)
        XCTAssertLessThan(try DecodedImage.read(try XCTUnwrap(json["path"] as? String)).meanDifference(first), 3)
        let preview = cache.appendingPathComponent("preview.png").path
        let previewed = try Run.ftgst(["preview", gif, "-o", preview, "--timeout-ms", "20000"])
        XCTAssertEqual(previewed.status, 0, previewed.stderr)
        XCTAssertLessThan(try DecodedImage.read(preview).meanDifference(first), 3)
    }

    func testTenBitHEVC() throws {
        let json = try success(
            try thumb(
                try TestEnvironment.fixture("hevc10.mp4"),
                ["--time-ms", "500", "--tolerance-ms", "0"]))
        XCTAssertEqual(json["timeMs"] as? Int, 500)
        XCTAssertEqual(json["width"] as? Int, 320)
    }

    func testQualityChangesJPEGSize() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let high = try success(try thumb(clip, ["--quality", "1"]))
        let low = try success(try thumb(clip, ["--quality", "0.1"]))
        let size = { (path: Any?) in
            try XCTUnwrap(FileManager.default.attributesOfItem(atPath: try XCTUnwrap(path as? String))[.size] as? Int)
        }
        XCTAssertGreaterThan(try size(high["path"]), try size(low["path"]) * 2)
    }

    // MARK: - Cache

    func testExistingNameIsReturnedWithoutDecodingAndTouched() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let request = ["--time-ms", "2000", "--tolerance-ms", "0"]
        let first = try success(try thumb(clip, request, name: "same"))
        let path = try XCTUnwrap(first["path"] as? String)
        let old = Date(timeIntervalSinceNow: -3600)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path)
        let second = try success(try thumb(clip, request, name: "same"))
        XCTAssertEqual(second["cached"] as? Bool, true)
        XCTAssertEqual(second["timeMs"] as? Int, 2000)
        XCTAssertEqual(second["width"] as? Int, 320)
        XCTAssertEqual(second["path"] as? String, path)
        let touched = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
        XCTAssertGreaterThan(touched.timeIntervalSince(old), 3000)
    }

    func testACacheHitMustMatchEverythingThatWasAsked() throws {
        let temp = try TestEnvironment.temporaryDirectory(self)
        let clip = temp.appendingPathComponent("clip.mp4").path
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: clip)
        let exact = ["--tolerance-ms", "0", "--time-ms"]
        XCTAssertEqual(try success(try thumb(clip, exact + ["1000"], name: "x"))["cached"] as? Bool, false)
        XCTAssertEqual(try success(try thumb(clip, exact + ["1000"], name: "x"))["cached"] as? Bool, true)

        // Another time: the old frame must not come back.
        let later = try success(try thumb(clip, exact + ["2000"], name: "x"))
        XCTAssertEqual(later["cached"] as? Bool, false)
        XCTAssertEqual(later["timeMs"] as? Int, 2000)
        let picture = try DecodedImage.read(cache.appendingPathComponent("x.jpg").path)
        let frame60 = try DecodedImage.frame(of: clip, index: 60, width: 320, height: 240)
        let frame30 = try DecodedImage.frame(of: clip, index: 30, width: 320, height: 240)
        XCTAssertLessThan(picture.meanDifference(frame60) * 2, picture.meanDifference(frame30), "the new frame")

        // Another box, quality, tolerance: each rebuilt.
        let small = try success(try thumb(clip, exact + ["2000", "--max-width", "160"], name: "x"))
        XCTAssertEqual(small["cached"] as? Bool, false)
        XCTAssertEqual(small["width"] as? Int, 160)
        for options in [exact + ["2000", "--max-width", "160", "--quality", "0.3"], ["--time-ms", "2000"]] {
            XCTAssertEqual(try success(try thumb(clip, options, name: "x"))["cached"] as? Bool, false, "\(options)")
        }
        XCTAssertEqual(try success(try thumb(clip, ["--time-ms", "2000"], name: "x"))["cached"] as? Bool, true)

        // The source changed (same path, new mtime), or another source: rebuilt.
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: clip)
        XCTAssertEqual(try success(try thumb(clip, ["--time-ms", "2000"], name: "x"))["cached"] as? Bool, false)
        let other = try success(try thumb(try TestEnvironment.fixture("photo.jpg"), ["--time-ms", "2000"], name: "x"))
        XCTAssertEqual(other["cached"] as? Bool, false)
        XCTAssertEqual(try cacheFiles(), ["x.jpg"])

        // The source is gone: no picture can be said to match it.
        try FileManager.default.removeItem(atPath: clip)
        assertFailure(try thumb(clip, ["--time-ms", "2000"], name: "x"), code: "FILE_NOT_FOUND", status: 66)
    }

    func testACacheNameMayCarryItsExtension() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        XCTAssertEqual(
            try success(try thumb(clip, [], name: "x.jpg"))["path"] as? String,
            cache.appendingPathComponent("x.jpg").path)
        XCTAssertEqual(
            try success(try thumb(clip, ["--format", "png"], name: "y.png"))["path"] as? String,
            cache.appendingPathComponent("y.png").path)
        assertFailure(try thumb(clip, [], name: "z.png"), code: "INVALID_ARGUMENT", status: 64)
        XCTAssertEqual(try cacheFiles(), ["x.jpg", "y.png"])
    }

    func testOutputWritesAFileOfItsOwnNotACacheEntry() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let folder = try TestEnvironment.temporaryDirectory(self)
        let file = folder.appendingPathComponent("mine.png").path
        for _ in 0..<2 {
            let json = try success(
                try Run.ftgst(["thumb", clip, "--time-ms", "1400", "--tolerance-ms", "0", "-o", file]))
            XCTAssertEqual(json["path"] as? String, file)
            XCTAssertEqual(json["format"] as? String, "png")
            XCTAssertEqual(json["cached"] as? Bool, false, "never a cache hit")
            XCTAssertEqual(json["timeMs"] as? Int, 1400)
        }
        let ours = try DecodedImage.read(file)
        let exact = try DecodedImage.frame(of: clip, index: 42, width: 320, height: 240)
        XCTAssertLessThan(ours.meanDifference(exact), 4)
        let bytes = [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: file)))
        XCTAssertEqual(Array(bytes.prefix(4)), [0x89, 0x50, 0x4E, 0x47])
        XCTAssertFalse(String(decoding: bytes, as: UTF8.self).contains("ftgst"), "no cache stamp")
        let jpeg = folder.appendingPathComponent("mine.JPEG").path
        XCTAssertEqual(try success(try Run.ftgst(["thumb", clip, "--output", jpeg]))["format"] as? String, "jpeg")
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted(), ["mine.JPEG", "mine.png"])

        let refused: [([String], String, Int32)] = [
            (["-o", folder.appendingPathComponent("a.gif").path], "UNSUPPORTED_FORMAT", 67),
            (["-o", file, "--format", "jpeg"], "INVALID_ARGUMENT", 64),
            (["-o", file, "--cache-dir", cache.path], "INVALID_ARGUMENT", 64),
            (["-o", file, "--cache-name", "n"], "INVALID_ARGUMENT", 64),
            (["-o", file, "--cache-cap-mb", "5"], "INVALID_ARGUMENT", 64),
            (["-o", folder.appendingPathComponent("missing/a.png").path], "WRITE_FAILED", 73),
            (["-o", folder.appendingPathComponent("late.png").path, "--time-ms", "9000"], "DECODE_FAILED", 68),
        ]
        for (options, code, status) in refused {
            assertFailure(try Run.ftgst(["thumb", clip] + options), code: code, status: status)
        }
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted(), ["mine.JPEG", "mine.png"])
        let photo = folder.appendingPathComponent("photo.jpg").path
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("photo.jpg"), toPath: photo)
        assertFailure(try Run.ftgst(["thumb", photo, "-o", photo]), code: "INVALID_ARGUMENT", status: 64)
        XCTAssertEqual(
            FileManager.default.contents(atPath: photo),
            FileManager.default.contents(atPath: try TestEnvironment.fixture("photo.jpg")))
    }

    func testCorruptCacheEntryIsRebuiltNotServed() throws {
        let target = cache.appendingPathComponent("broken.jpg")
        try Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 0]).write(to: target)
        let json = try success(try thumb(try TestEnvironment.fixture("clip.mp4"), name: "broken"))
        XCTAssertEqual(json["cached"] as? Bool, false)
        XCTAssertEqual(try DecodedImage.read(target.path).width, 320)
    }

    /// A thumbnail of the noise fixture at full size (1200×900 PNG, over 1 MiB): one is alone over the smallest cap.
    private func bigThumb(_ name: String?, cap: String = "1") throws -> ProcessResult {
        try thumb(
            try TestEnvironment.fixture("noise.png"),
            ["--cache-cap-mb", cap, "--format", "png", "--max-width", "1200", "--max-height", "1200"], name: name)
    }

    private func age(_ name: String, by seconds: TimeInterval) throws {
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -seconds)],
            ofItemAtPath: cache.appendingPathComponent(name).path)
    }

    func testEvictionDeletesOnlyThumbnailsFtgstWroteOldestFirstNeverTheNewOne() throws {
        // Two of ftgst's own thumbnails (stamped), made earlier with a large cap, then aged.
        _ = try success(try bigThumb("older", cap: "100"))
        _ = try success(try bigThumb("old", cap: "100"))
        try age("older.png", by: 200)
        try age("old.png", by: 100)
        // Files of the user's, older still and large: never ftgst's to delete.
        let holiday = cache.appendingPathComponent("important-holiday.jpg")
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("photo.jpg"), toPath: holiday.path)
        try Data(count: 2 * 1024 * 1024).write(to: cache.appendingPathComponent("notes.bin"))
        try Data(count: 2 * 1024 * 1024).write(to: cache.appendingPathComponent("video.png"))
        for name in ["important-holiday.jpg", "notes.bin", "video.png"] { try age(name, by: 1000) }

        let json = try success(try bigThumb("fresh"))
        // The new file alone is over 1 MiB: both older thumbnails go, the new one stays, the user's files stay.
        XCTAssertEqual(try cacheFiles(), ["fresh.png", "important-holiday.jpg", "notes.bin", "video.png"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: try XCTUnwrap(json["path"] as? String)))
        XCTAssertEqual(
            FileManager.default.contents(atPath: holiday.path),
            FileManager.default.contents(atPath: try TestEnvironment.fixture("photo.jpg")))
    }

    func testAnEmptyFolderIsAnInvalidArgumentAndTheCurrentFolderIsLeftAlone() throws {
        // Run from a folder of the user's: an empty --cache-dir used to mean it, and eviction then emptied it.
        let cwd = try TestEnvironment.temporaryDirectory(self)
        try Data(count: 2 * 1024 * 1024).write(to: cwd.appendingPathComponent("important-holiday.jpg"))
        let clip = try TestEnvironment.fixture("clip.mp4")
        let runs: [[String]] = [
            ["thumb", clip, "--cache-dir", "", "--cache-cap-mb", "1"],
            ["mezzanine", clip, "--cache-dir", "", "--cache-max-mb", "1"],
            ["preview", clip, "--mezzanine-dir", "", "-o", cache.appendingPathComponent("p.png").path],
        ]
        for words in runs {
            let result = try Run.process(
                URL(fileURLWithPath: "/bin/bash"),
                ["-c", "cd \"$0\" && exec \"$@\"", cwd.path, TestEnvironment.binary.path] + words)
            assertFailure(result, code: "INVALID_ARGUMENT", status: 64)
            XCTAssertEqual(
                try FileManager.default.contentsOfDirectory(atPath: cwd.path), ["important-holiday.jpg"],
                "\(words.first ?? "")")
        }
        XCTAssertEqual(try cacheFiles(), [])
    }

    func testConcurrentRunsIntoASmallCacheReturnPathsThatStillExist() throws {
        // Every thumbnail is alone over the 1 MiB cap, so each run's eviction would take every sibling's file.
        // The server holds every request until all runs have made one: each run has started before any wrote, so
        // none may evict another's (younger than itself), and every returned path must exist once all returned.
        let server = try HTTPTestServer(root: TestEnvironment.fixtures)
        defer { server.stop() }
        let runs = 20
        let group = DispatchGroup()
        let collected = Mutex<[ProcessResult]>([])
        for run in 0..<runs {
            // A query of its own per run, so the server can tell that every run has made its first request.
            let arguments = [
                "thumb", server.url("/gate/noise.png?run=\(run)"), "--cache-dir", cache.path, "--cache-cap-mb", "1",
                "--format", "png", "--max-width", "1200", "--max-height", "1200", "--timeout-ms", "120000",
            ]
            group.enter()
            DispatchQueue.global().async {
                let result = try? Run.ftgst(arguments, timeout: 180)
                if let result { collected.withLock { $0.append(result) } }
                group.leave()
            }
        }
        let deadline = Date().addingTimeInterval(120)
        func waiting() -> Int { Set(server.requests.map(\.path)).count }
        while waiting() < runs, Date() < deadline { usleep(20_000) }
        XCTAssertEqual(waiting(), runs, "every run reached the server before any went on")
        server.openGate()
        XCTAssertEqual(group.wait(timeout: .now() + 200), .success)
        let results = collected.withLock { $0 }
        XCTAssertEqual(results.count, runs)
        var paths: Set<String> = []
        for result in results {
            guard result.status == 0, let path = (try? result.json())?["path"] as? String else {
                XCTFail("failed: \(result.stderr)")
                continue
            }
            paths.insert(path)
            XCTAssertTrue(FileManager.default.fileExists(atPath: path), "returned but evicted: \(path)")
        }
        XCTAssertEqual(paths.count, runs)
        // A later run, started after them all, evicts them down to its own file.
        let later = try success(try bigThumb("later"))
        XCTAssertEqual(try cacheFiles(), ["later.png"])
        XCTAssertEqual(later["cached"] as? Bool, false)
    }

    func testConcurrentWritersOfTheSameNameLeaveOneCompleteFile() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let group = DispatchGroup()
        let collected = Mutex<[ProcessResult]>([])
        let cachePath = cache.path
        for index in 0..<4 {
            group.enter()
            DispatchQueue.global().async {
                let result = try? Run.ftgst([
                    "thumb", clip, "--cache-dir", cachePath, "--cache-name", "race",
                    "--time-ms", String(500 * index), "--tolerance-ms", "0",
                ])
                if let result { collected.withLock { $0.append(result) } }
                group.leave()
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success)
        let results = collected.withLock { $0 }
        XCTAssertEqual(results.count, 4)
        for result in results { XCTAssertEqual(result.status, 0, result.stderr) }
        XCTAssertEqual(try cacheFiles(), ["race.jpg"], "no temporary left behind")
        XCTAssertEqual(try DecodedImage.read(cache.appendingPathComponent("race.jpg").path).width, 320)
    }

    // MARK: - Errors, each through the CLI

    func testInvalidURL() throws {
        assertFailure(try thumb("ftp://example.com/a.mp4"), code: "INVALID_URL", status: 65)
        assertFailure(try thumb("http://"), code: "INVALID_URL", status: 65)
        XCTAssertEqual(try cacheFiles(), [])
    }

    func testFileNotFound() throws {
        assertFailure(try thumb("/nonexistent/clip.mp4"), code: "FILE_NOT_FOUND", status: 66)
        assertFailure(try thumb("file:///nonexistent/clip%20x.mp4"), code: "FILE_NOT_FOUND", status: 66)
        XCTAssertEqual(try cacheFiles(), [])
    }

    func testDecodeFailures() throws {
        for (fixture, options) in [
            ("truncated.mp4", []), ("empty.mp4", []), ("garbage.bin", []),
            ("clip.mp4", ["--time-ms", "9000"]),
            ("truncated-faststart.mp4", ["--time-ms", "2500", "--tolerance-ms", "0"]),
        ] {
            let result = try thumb(try TestEnvironment.fixture(fixture), options)
            assertFailure(result, code: "DECODE_FAILED", status: 68)
        }
        XCTAssertEqual(try cacheFiles(), [], "a failed run leaves nothing in the cache folder")
    }

    func testUnsupportedFormats() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        assertFailure(try thumb(clip, ["--format", "gif"]), code: "UNSUPPORTED_FORMAT", status: 67)
        // A file GStreamer recognises (text/html) but no decoder handles.
        assertFailure(try thumb(try TestEnvironment.fixture("notmedia.html")), code: "UNSUPPORTED_FORMAT", status: 67)
        XCTAssertEqual(try cacheFiles(), [])
    }

    func testWriteFailedUnderARegularFile() throws {
        let file = cache.appendingPathComponent("plain-file")
        try Data([1]).write(to: file)
        let result = try Run.ftgst([
            "thumb", try TestEnvironment.fixture("clip.mp4"),
            "--cache-dir", file.appendingPathComponent("thumbs").path,
        ])
        assertFailure(result, code: "WRITE_FAILED", status: 73)
        XCTAssertEqual(try cacheFiles(), ["plain-file"])
    }

    func testWriteFailedOnAFullDisk() throws {
        // A file-size limit makes write(2) fail with EFBIG (SIGXFSZ ignored), as a full disk would with ENOSPC.
        let script = "trap '' XFSZ; ulimit -f 1; exec \"$0\" \"$@\""
        let result = try Run.process(
            URL(fileURLWithPath: "/bin/bash"),
            [
                "-c", script, TestEnvironment.binary.path, "thumb",
                try TestEnvironment.fixture("clip.mp4"), "--format", "png",
                "--cache-dir", cache.path,
            ])
        assertFailure(result, code: "WRITE_FAILED", status: 73)
        XCTAssertEqual(try cacheFiles(), [], "the partial temporary file is removed")
    }

    func testInvalidArguments() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let cases: [[String]] = [
            ["--time-ms", "-1"], ["--time-ms", "abc"], ["--quality", "1.5"], ["--quality", "-0.1"],
            ["--cache-name", "../escape"], ["--cache-name", "a/b"], ["--header", "X-A: b\r\nX-B: c"],
            ["--header", "X-A: b\nc"], ["--max-width", "0"], ["--bogus"], ["--tolerance-ms"],
        ]
        for options in cases {
            assertFailure(try thumb(clip, options), code: "INVALID_ARGUMENT", status: 64)
        }
        assertFailure(try Run.ftgst(["thumb"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try Run.ftgst(["nonsense"]), code: "INVALID_ARGUMENT", status: 64)
        XCTAssertEqual(try cacheFiles(), [])
    }

    // MARK: - Resources

    func testNoGStreamerObjectLeaks() throws {
        let result = try Run.ftgst(
            [
                "thumb", try TestEnvironment.fixture("clip.mp4"), "--time-ms", "1500",
                "--tolerance-ms", "0", "--cache-dir", cache.path,
            ],
            environment: [
                "GST_TRACERS": "leaks", "GST_DEBUG": "GST_TRACER:7",
                "GST_DEBUG_NO_COLOR": "1",
            ])
        XCTAssertEqual(result.status, 0, result.stderr)
        // The tracer must be active for the absence of leaks to mean anything: it declares its record format.
        XCTAssertTrue(
            result.stderr.contains("new format string: object-alive"),
            "leak tracer did not run: \(result.stderr.prefix(500))")
        // A leaked object is reported as one record per object: `object-alive, type-name=(string)GstCaps, …`.
        let leaks = result.stderr.split(separator: "\n").filter {
            $0.contains("object-alive, type-name=(string)") && !$0.contains("new format string")
        }
        XCTAssertEqual(leaks, [], "leaked objects")
    }
}

extension ThumbCLITests {
    func testAFIFOIsRefusedInsteadOfBlocking() throws {
        let fifo = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("pipe.mp4").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        assertFailure(
            try Run.ftgst(["thumb", fifo, "--cache-dir", cache.path], timeout: 20), code: "FILE_NOT_FOUND",
            status: 66)
    }
}

extension ThumbCLITests {
    /// Values that used to overflow nanosecond or byte arithmetic (a trap, exit 132) are refused as usage errors.
    func testHugeNumbersAreInvalidArgumentsNotCrashes() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let huge = String(Int64.max)
        for option in ["--time-ms", "--tolerance-ms", "--timeout-ms", "--cache-cap-mb"] {
            assertFailure(try thumb(clip, [option, huge]), code: "INVALID_ARGUMENT", status: 64)
        }
        assertFailure(
            try Run.ftgst(["preview", clip, "--time-ms", huge, "-o", cache.appendingPathComponent("p.png").path]),
            code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try Run.ftgst(["probe", clip, "--timeout-ms", huge]), code: "INVALID_ARGUMENT", status: 64)
        // The largest accepted time is a clean DECODE_FAILED (past the end), not a trap.
        assertFailure(
            try thumb(clip, ["--time-ms", "1000000000000", "--tolerance-ms", "0"]), code: "DECODE_FAILED",
            status: 68)
    }
}
