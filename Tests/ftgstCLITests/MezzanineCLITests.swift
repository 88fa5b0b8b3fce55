import FilmtoneTestSupport
import XCTest

/// `ftgst mezzanine` and `ftgst preview --mezzanine` end to end through the built binary, on copies of the long-GOP
/// fixture (120 frames, one keyframe) so that a test can touch, rewrite or corrupt them.
final class MezzanineCLITests: XCTestCase {
    private var folder: URL!
    private var cache: String!
    private var clip: String!

    override func setUpWithError() throws {
        folder = try TestEnvironment.temporaryDirectory(self)
        cache = folder.appendingPathComponent("mezzanines").path
        clip = try copyOfLongGOP("long.mp4")
    }

    private func copyOfLongGOP(_ name: String) throws -> String {
        let path = folder.appendingPathComponent(name).path
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("longgop.mp4"), toPath: path)
        return path
    }

    private func out(_ name: String) -> String { folder.appendingPathComponent(name).path }

    private func success(_ result: ProcessResult, file: StaticString = #filePath, line: UInt = #line) throws
        -> [String: Any]
    {
        XCTAssertEqual(result.status, 0, "stderr: \(result.stderr)", file: file, line: line)
        return try result.json(file: file, line: line)
    }

    private func mezzanine(_ source: String, _ extra: [String] = []) throws -> [String: Any] {
        try success(try Run.ftgst(["mezzanine", source, "--cache-dir", cache] + extra))
    }

    func testBuildingAMezzanineLeavesNoGStreamerObjectAlive() throws {
        let result = try Run.ftgst(
            ["mezzanine", try TestEnvironment.fixture("clip.mp4"), "--cache-dir", cache],
            environment: ["GST_TRACERS": "leaks", "GST_DEBUG": "GST_TRACER:7", "GST_DEBUG_NO_COLOR": "1"])
        XCTAssertEqual(try success(result)["built"] as? Bool, true)
        XCTAssertTrue(
            result.stderr.contains("new format string: object-alive"),
            "leak tracer did not run: \(result.stderr.prefix(500))")
        let leaks = result.stderr.split(separator: "\n").filter {
            $0.contains("object-alive, type-name=(string)") && !$0.contains("new format string")
        }
        XCTAssertEqual(leaks.count, 0, "leaked objects: \(leaks.prefix(3))")
    }

    private func status(_ source: String) throws -> String? {
        try success(try Run.ftgst(["mezzanine", source, "--cache-dir", cache, "--status"]))["status"] as? String
    }

    private func preview(_ source: String, time: Int, _ output: String, _ extra: [String] = []) throws -> [String: Any]
    {
        try success(
            try Run.ftgst(
                [
                    "preview", source, "--time-ms", String(time), "--mezzanine-dir", cache,
                    "-o", out(output),
                ] + extra))
    }

    private func cacheFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: cache).sorted()
    }

    // MARK: - Building

    func testBuildsAnIntraFrameMezzanineThenHitsTheCache() throws {
        XCTAssertEqual(try status(clip), "missing")
        let first = try mezzanine(clip)
        XCTAssertEqual(first["built"] as? Bool, true)
        XCTAssertEqual([first["width"] as? Int, first["height"] as? Int], [320, 240])
        XCTAssertEqual(first["frames"] as? Int, 120)
        XCTAssertEqual(first["durationMs"] as? Int, 4000)
        XCTAssertEqual((first["key"] as? String)?.count, 64)
        XCTAssertNotNil(first["buildMs"] as? Int)
        let path = try XCTUnwrap(first["path"] as? String)
        XCTAssertEqual(
            (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value,
            (first["sizeBytes"] as? NSNumber)?.int64Value)

        // Every frame a keyframe, the source's timestamps kept (ffprobe: an independent demuxer).
        let packets = try Run.tool(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "v:0", "-show_entries",
                "packet=pts_time,flags", "-of", "csv=p=0", path,
            ])
        let rows = packets.stdout.split(separator: "\n").map { $0.split(separator: ",") }
        XCTAssertEqual(rows.count, 120)
        XCTAssertTrue(rows.allSatisfy { $0.count == 2 && $0[1].hasPrefix("K") }, "every frame a keyframe")
        let times = rows.compactMap { $0.first.flatMap { Double($0) } }.sorted()
        XCTAssertEqual(times.first ?? -1, 0, accuracy: 1e-6)
        XCTAssertEqual(times.last ?? -1, 119.0 / 30, accuracy: 1e-3)
        let codec = try Run.tool(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "v:0", "-show_entries",
                "stream=codec_name", "-of", "csv=p=0", path,
            ])
        XCTAssertEqual(codec.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "mjpeg")

        XCTAssertEqual(try status(clip), "ready")
        let second = try mezzanine(clip)
        XCTAssertEqual(second["built"] as? Bool, false, "a cache hit")
        XCTAssertEqual(second["key"] as? String, first["key"] as? String)
        XCTAssertEqual(second["path"] as? String, path)
        XCTAssertEqual(try cacheFiles().count, 2, "the mezzanine and its manifest, no temporary")
    }

    func testRotatedSourceIsStoredUpright() throws {
        let rotated = try mezzanine(try TestEnvironment.fixture("rotated.mp4"))
        XCTAssertEqual([rotated["width"] as? Int, rotated["height"] as? Int], [240, 320])
        let json = try preview(try TestEnvironment.fixture("rotated.mp4"), time: 1500, "r.png")
        XCTAssertEqual(json["mezzanine"] as? Bool, true)
        XCTAssertEqual([json["width"] as? Int, json["height"] as? Int], [240, 320])
        _ = try preview(try TestEnvironment.fixture("rotated.mp4"), time: 1500, "r-direct.png", ["--mezzanine", "off"])
        XCTAssertGreaterThan(psnr(try DecodedImage.read(out("r.png")), try DecodedImage.read(out("r-direct.png"))), 35)
    }

    // MARK: - Previews from the mezzanine

    func testPreviewFromTheMezzanineIsTheSameExactFrame() throws {
        _ = try mezzanine(clip)
        // 2500 ms is frame 75 (74 is shown at 2466, 76 from 2533.3); the bars move 8 px a frame, so neighbours differ.
        let via = try preview(clip, time: 2500, "via.png")
        XCTAssertEqual(via["mezzanine"] as? Bool, true)
        XCTAssertEqual(via["timeMs"] as? Int, 2500)
        let direct = try preview(clip, time: 2500, "direct.png", ["--mezzanine", "off"])
        XCTAssertEqual(direct["mezzanine"] as? Bool, false)
        XCTAssertEqual(
            [via["width"] as? Int, via["height"] as? Int], [direct["width"] as? Int, direct["height"] as? Int])
        for (time, name) in [(2466, "before.png"), (2540, "after.png")] {
            _ = try preview(clip, time: time, name, ["--mezzanine", "off"])
        }
        let image = try DecodedImage.read(out("via.png"))
        let same = psnr(image, try DecodedImage.read(out("direct.png")))
        XCTAssertGreaterThan(same, 35, "only JPEG coding apart")
        for neighbour in ["before.png", "after.png"] {
            XCTAssertLessThan(
                psnr(image, try DecodedImage.read(out(neighbour))), same - 10,
                "closer to the frame at 2500 ms than to \(neighbour)")
        }
        // A frame boundary: 2033 ms is still frame 60 (2000.0 ms), on both paths.
        XCTAssertEqual(try preview(clip, time: 2033, "edge.png")["timeMs"] as? Int, 2000)

        // The look applies after reading, as from the source.
        let look = SharedLUTs.look
        _ = try preview(clip, time: 2500, "look-via.png", ["--creative-lut", look])
        _ = try preview(clip, time: 2500, "look-direct.png", ["--creative-lut", look, "--mezzanine", "off"])
        XCTAssertGreaterThan(
            psnr(
                try DecodedImage.read(out("look-via.png")),
                try DecodedImage.read(out("look-direct.png"))), 32)

        // A JSON request can turn it off too.
        let request = folder.appendingPathComponent("request.json")
        try JSONSerialization.data(withJSONObject: [
            "source": clip!, "timeMs": 2500, "mezzanine": "off",
            "mezzanineDir": cache!, "output": out("req.png"),
        ])
        .write(to: request)
        XCTAssertEqual(try success(try Run.ftgst(["preview", "--request", request.path]))["mezzanine"] as? Bool, false)
    }

    func testAMezzanineSmallerThanThePreviewIsNotUsed() throws {
        _ = try mezzanine(clip, ["--max-width", "160", "--max-height", "160"])
        XCTAssertEqual(try preview(clip, time: 1000, "big.png")["mezzanine"] as? Bool, false, "would upscale")
        let small = try preview(clip, time: 1000, "small.png", ["--max-width", "100"])
        XCTAssertEqual(small["mezzanine"] as? Bool, true)
        XCTAssertEqual([small["width"] as? Int, small["height"] as? Int], [100, 75])
    }

    // MARK: - Staleness and damage

    func testChangedSourceMakesItStaleAndItIsRebuiltInItsSlot() throws {
        let first = try mezzanine(clip)
        // Same bytes, new mtime: the identity changed.
        let later = Date().addingTimeInterval(60)
        try FileManager.default.setAttributes([.modificationDate: later], ofItemAtPath: clip)
        XCTAssertEqual(try status(clip), "stale")
        XCTAssertEqual(try preview(clip, time: 1000, "p.png")["mezzanine"] as? Bool, false)
        // New content.
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: clip))
        handle.seekToEndOfFile()
        handle.write(Data([0, 0, 0, 8, 0x66, 0x72, 0x65, 0x65]))  // a `free` box: still a valid MP4
        try handle.close()
        XCTAssertEqual(try status(clip), "stale")
        let rebuilt = try mezzanine(clip)
        XCTAssertEqual(rebuilt["built"] as? Bool, true)
        XCTAssertNotEqual(rebuilt["key"] as? String, first["key"] as? String)
        XCTAssertEqual(rebuilt["path"] as? String, first["path"] as? String, "the stale one is replaced, not kept")
        XCTAssertEqual(try cacheFiles().count, 2)
        XCTAssertEqual(try preview(clip, time: 1000, "q.png")["mezzanine"] as? Bool, true)
    }

    func testCorruptMezzanineIsNeverUsedAndIsRebuilt() throws {
        let path = try XCTUnwrap(try mezzanine(clip)["path"] as? String)
        // Garbage over the middle of the file, in place.
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.seek(toFileOffset: 400_000)
        handle.write(Data(repeating: 0x5A, count: 100_000))
        try handle.close()
        XCTAssertEqual(try status(clip), "stale")
        XCTAssertEqual(try preview(clip, time: 2500, "p.png")["mezzanine"] as? Bool, false)
        XCTAssertEqual(try mezzanine(clip)["built"] as? Bool, true)
        XCTAssertEqual(try preview(clip, time: 2500, "p2.png")["mezzanine"] as? Bool, true)

        // Truncated.
        XCTAssertEqual(truncate(path, 300_000), 0)
        XCTAssertEqual(try status(clip), "stale")
        XCTAssertEqual(try preview(clip, time: 2500, "p3.png")["mezzanine"] as? Bool, false)
        XCTAssertEqual(try mezzanine(clip)["built"] as? Bool, true)

        // A garbage manifest is no manifest.
        let manifest = path.replacingOccurrences(of: ".mov", with: ".json")
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: manifest))
        XCTAssertEqual(try status(clip), "stale")
        XCTAssertEqual(try preview(clip, time: 2500, "p4.png")["mezzanine"] as? Bool, false)
        XCTAssertEqual(try mezzanine(clip)["built"] as? Bool, true)
    }

    func testAFrameWhoseTimeDoesNotMatchIsRefusedAndTheSourceIsUsed() throws {
        let path = try XCTUnwrap(try mezzanine(clip)["path"] as? String)
        // Damage the frames shown from 2500 to 2700 ms in place (their JPEG headers zeroed), then give the file back
        // its mtime: size, mtime and inode are the manifest's, so only the frame's time can tell. The decoder drops
        // the damaged frames and hands over the next good one, 2733 ms, for a request of 2500 ms.
        var before = stat()
        XCTAssertEqual(stat(path, &before), 0)
        let packets = try Run.tool(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time,pos",
                "-of", "csv=p=0", path,
            ])
        let damaged = packets.stdout.split(separator: "\n").compactMap { row -> UInt64? in
            let fields = row.split(separator: ",")
            guard fields.count == 2, let time = Double(fields[0]), let position = UInt64(fields[1]),
                time > 2.49, time < 2.71
            else { return nil }
            return position
        }
        XCTAssertEqual(damaged.count, 7, "frames 75…81: \(packets.stdout.prefix(200))")
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        for position in damaged {
            try handle.seek(toOffset: position)
            handle.write(Data(count: 16))
        }
        try handle.close()
        var times = [before.st_atim, before.st_mtim]
        XCTAssertEqual(utimensat(AT_FDCWD, path, &times, 0), 0)
        var after = stat()
        XCTAssertEqual(stat(path, &after), 0)
        XCTAssertEqual(
            [after.st_size, after.st_mtim.tv_sec, after.st_mtim.tv_nsec, Int(after.st_ino)],
            [before.st_size, before.st_mtim.tv_sec, before.st_mtim.tv_nsec, Int(before.st_ino)])
        XCTAssertEqual(try status(clip), "ready", "the damage is invisible to the manifest's checks")

        let json = try preview(clip, time: 2500, "p.png")
        XCTAssertEqual(json["mezzanine"] as? Bool, false, "a frame at another time is refused")
        XCTAssertEqual(json["timeMs"] as? Int, 2500)
        _ = try preview(clip, time: 2500, "direct.png", ["--mezzanine", "off"])
        XCTAssertGreaterThan(
            psnr(try DecodedImage.read(out("p.png")), try DecodedImage.read(out("direct.png"))), 60,
            "the source's frame")
        // Where the frames are intact it is still used; `ftgst mezzanine` sees the damage by its hash.
        XCTAssertEqual(try preview(clip, time: 1000, "q.png")["mezzanine"] as? Bool, true)
        XCTAssertEqual(try mezzanine(clip)["built"] as? Bool, true)
        XCTAssertEqual(try preview(clip, time: 2500, "r.png")["mezzanine"] as? Bool, true)
    }

    // MARK: - The cap

    func testTheCapEvictsTheLeastRecentlyUsed() throws {
        // Each mezzanine is ~1.6 MB; a 4 MB cap holds two.
        let a = clip!
        let b = try copyOfLongGOP("b.mp4")
        let c = try copyOfLongGOP("c.mp4")
        let pathA = try XCTUnwrap(try mezzanine(a, ["--cache-max-mb", "4"])["path"] as? String)
        let pathB = try XCTUnwrap(try mezzanine(b, ["--cache-max-mb", "4"])["path"] as? String)
        // Make the order explicit (not up to the clock's resolution): A older than B, then A used by a preview.
        let manifestA = pathA.replacingOccurrences(of: ".mov", with: ".json")
        let manifestB = pathB.replacingOccurrences(of: ".mov", with: ".json")
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-200)], ofItemAtPath: manifestA)
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-100)], ofItemAtPath: manifestB)
        XCTAssertEqual(try preview(a, time: 1000, "use-a.png")["mezzanine"] as? Bool, true)
        _ = try mezzanine(c, ["--cache-max-mb", "4"])
        XCTAssertEqual(try status(a), "ready", "recently used: kept")
        XCTAssertEqual(try status(b), "missing", "least recently used: evicted, video and manifest")
        XCTAssertEqual(try status(c), "ready")
        XCTAssertEqual(try cacheFiles().count, 4)
    }

    func testEvictionLeavesFilesItDidNotWrite() throws {
        // The user's files in the folder, older than anything ftgst writes there and together far over the cap:
        // a video, a file named like a slot but without a manifest, and a manifest-like file that is not one.
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        let foreign = [
            "holiday.mov", "0123456789abcdef-0123456789abcdef.mov", "0123456789abcdef-fedcba9876543210.json",
        ]
        for name in foreign {
            let url = URL(fileURLWithPath: cache).appendingPathComponent(name)
            try Data(count: 2 * 1024 * 1024).write(to: url)
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -1000)], ofItemAtPath: url.path)
        }
        let older = try XCTUnwrap(
            try mezzanine(try copyOfLongGOP("older.mp4"), ["--cache-max-mb", "100"])["path"] as? String)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -500)],
            ofItemAtPath: older.replacingOccurrences(of: ".mov", with: ".json"))
        // ~1.6 MB, alone over a 1 MB cap: the older mezzanine goes, nothing else does.
        let built = try mezzanine(clip, ["--cache-max-mb", "1"])
        XCTAssertEqual(built["built"] as? Bool, true)
        let path = try XCTUnwrap(built["path"] as? String)
        let name = URL(fileURLWithPath: path).lastPathComponent
        XCTAssertEqual(
            try cacheFiles(),
            (foreign + [name, name.replacingOccurrences(of: ".mov", with: ".json")]).sorted())
    }

    // MARK: - Failures

    func testFailuresLeaveNothingInTheCache() throws {
        let cases: [(String, [String], String, Int32)] = [
            (try TestEnvironment.fixture("garbage.bin"), [], "DECODE_FAILED", 68),
            (try TestEnvironment.fixture("truncated.mp4"), [], "DECODE_FAILED", 68),
            (try TestEnvironment.fixture("photo.jpg"), [], "UNSUPPORTED_FORMAT", 67),
            (out("missing.mp4"), [], "FILE_NOT_FOUND", 66),
            ("ftp://host/x.mp4", [], "INVALID_URL", 65),
            (clip, ["--max-width", "0"], "INVALID_ARGUMENT", 64),
            (clip, ["--cache-max-mb", "0"], "INVALID_ARGUMENT", 64),
            (clip, ["--timeout-ms", "1"], "DECODE_FAILED", 68),
        ]
        for (source, extra, code, exitStatus) in cases {
            assertFailure(
                try Run.ftgst(["mezzanine", source, "--cache-dir", cache] + extra), code: code,
                status: exitStatus)
            XCTAssertEqual((try? cacheFiles()) ?? [], [], "nothing left after \(code) \(extra)")
        }
        let plainFile = out("plain-file")
        try Data([1]).write(to: URL(fileURLWithPath: plainFile))
        assertFailure(
            try Run.ftgst(["mezzanine", clip, "--cache-dir", plainFile + "/sub"]), code: "WRITE_FAILED",
            status: 73)
        assertFailure(
            try Run.ftgst(["preview", clip, "--mezzanine", "always", "-o", out("x.png")]),
            code: "INVALID_ARGUMENT", status: 64)
    }

    // MARK: - Helpers

    /// PSNR in dB over all RGB channel values (infinite for identical images).
    private func psnr(_ a: DecodedImage, _ b: DecodedImage) -> Double {
        XCTAssertEqual(a.rgb.count, b.rgb.count)
        var sum = 0.0
        for i in 0..<min(a.rgb.count, b.rgb.count) {
            let d = Double(a.rgb[i]) - Double(b.rgb[i])
            sum += d * d
        }
        let mse = sum / Double(max(1, a.rgb.count))
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }
}
