import FilmtoneTestSupport
import XCTest

/// `ftgst storyboard` (issue 13, item 3) on `numbered.mp4` (160x120, 90 frames at 30 fps, 3.000 s, keyframes at
/// 0, 1, 2 s; frame n is a flat grey that encodes n): the sheets, the WebVTT cues and the frame in each tile.
final class StoryboardCLITests: XCTestCase {
    private struct Cue {
        var start: Int
        var end: Int
        var sheet: String
        var x: Int
        var y: Int
        var w: Int
        var h: Int
    }

    private func result(_ run: ProcessResult) throws -> [String: Any] {
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stderr, "")
        return try run.json()
    }

    /// `HH:MM:SS.mmm` in ms.
    private func milliseconds(_ text: Substring) throws -> Int {
        let parts = text.split(separator: ":")
        XCTAssertEqual(parts.count, 3, String(text))
        let seconds = parts[2].split(separator: ".")
        XCTAssertEqual(seconds.count, 2, String(text))
        XCTAssertEqual(seconds[1].count, 3, String(text))
        return try [Int(parts[0]), Int(parts[1]), Int(seconds[0]), Int(seconds[1])].map { try XCTUnwrap($0) }
            .enumerated().reduce(0) { total, item in
                total + item.element * [3_600_000, 60_000, 1000, 1][item.offset]
            }
    }

    /// The cues of a WebVTT file as this command writes it: `WEBVTT`, then blank-line-separated cues of a timing
    /// line and one `NAME#xywh=x,y,w,h` line.
    private func cues(_ path: String) throws -> [Cue] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let blocks = text.components(separatedBy: "\n\n")
        XCTAssertEqual(blocks.first, "WEBVTT")
        return try blocks.dropFirst().map { block in
            let lines = block.split(separator: "\n")
            XCTAssertEqual(lines.count, 2, block)
            let times = lines[0].split(separator: " ")
            XCTAssertEqual(times.count, 3, block)
            XCTAssertEqual(times[1], "-->")
            let target = lines[1].split(separator: "#")
            XCTAssertEqual(target.count, 2, block)
            XCTAssertTrue(target[1].hasPrefix("xywh="), block)
            let box = try target[1].dropFirst(5).split(separator: ",").map { try XCTUnwrap(Int($0)) }
            XCTAssertEqual(box.count, 4, block)
            return Cue(
                start: try milliseconds(times[0]), end: try milliseconds(times[2]), sheet: String(target[0]),
                x: box[0], y: box[1], w: box[2], h: box[3])
        }
    }

    /// The rectangle of `image` at (x, y) of w×h, less `inset` pixels on every side (JPEG's 4:2:0 chroma and its
    /// 8×8 blocks blur across a tile's border).
    private func crop(_ image: DecodedImage, x: Int, y: Int, w: Int, h: Int, inset: Int = 12) -> DecodedImage {
        var rgb: [UInt8] = []
        for row in (y + inset)..<(y + h - inset) {
            let start = (row * image.width + x + inset) * 3
            rgb += image.rgb[start..<(start + (w - 2 * inset) * 3)]
        }
        return DecodedImage(width: w - 2 * inset, height: h - 2 * inset, rgb: rgb)
    }

    /// Which frame of `numbered.mp4` a tile shows: the nearest, by mean difference, of ffmpeg's frames next to
    /// `expected` on either side (neighbours differ by 8 luma codes).
    private func frameNumber(_ tile: DecodedImage, near expected: Int) throws -> Int {
        let clip = try TestEnvironment.fixture("numbered.mp4")
        let candidates = max(0, expected - 1)...min(89, expected + 1)
        let distances = try candidates.map { index in
            let frame = try DecodedImage.frame(of: clip, index: index, width: 160, height: 120)
            return (index, tile.meanDifference(crop(frame, x: 0, y: 0, w: 160, h: 120)))
        }
        return distances.min { $0.1 < $1.1 }!.0
    }

    /// 12 tiles of a 3 s clip, 8 a sheet: two sheets (the second half as tall), cues contiguous from 0 to the
    /// duration, each rectangle the tile's place on its sheet and inside it, across the sheet boundary.
    func testSheetsAndCuesCoverTheDuration() throws {
        let clip = try TestEnvironment.fixture("numbered.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("board")
        let out = try result(
            try Run.ftgst([
                "storyboard", clip, "-o", dir.path, "--every", "0.25", "--columns", "4", "--rows", "2",
            ]))
        XCTAssertEqual(out["tiles"] as? Int, 12)
        XCTAssertEqual(out["tileWidth"] as? Int, 160)
        XCTAssertEqual(out["tileHeight"] as? Int, 120)
        XCTAssertEqual(out["durationMs"] as? Int, 3000)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(),
            ["sheet-001.jpg", "sheet-002.jpg", "storyboard.vtt"])
        let sheets = try XCTUnwrap(out["sheets"] as? [[String: Any]])
        XCTAssertEqual(sheets.map { $0["tiles"] as? Int }, [8, 4])
        var sizes: [String: (Int, Int)] = [:]
        for (name, expected) in [("sheet-001.jpg", (640, 240)), ("sheet-002.jpg", (640, 120))] {
            let image = try DecodedImage.read(dir.appendingPathComponent(name).path)
            XCTAssertTrue((image.width, image.height) == expected, "\(name): \(image.width)x\(image.height)")
            sizes[name] = (image.width, image.height)
        }
        let list = try cues(dir.appendingPathComponent("storyboard.vtt").path)
        XCTAssertEqual(list.count, 12)
        XCTAssertEqual(list.first?.start, 0)
        XCTAssertEqual(list.last?.end, 3000)
        for (index, cue) in list.enumerated() {
            XCTAssertEqual(cue.start, index * 250, "cue \(index)")
            if index > 0 { XCTAssertEqual(cue.start, list[index - 1].end, "cue \(index) follows the one before") }
            let slot = index % 8
            XCTAssertEqual(cue.sheet, index < 8 ? "sheet-001.jpg" : "sheet-002.jpg", "cue \(index)")
            XCTAssertEqual([cue.x, cue.y, cue.w, cue.h], [slot % 4 * 160, slot / 4 * 120, 160, 120], "cue \(index)")
            let size = try XCTUnwrap(sizes[cue.sheet])
            XCTAssertTrue(cue.x >= 0 && cue.y >= 0 && cue.x + cue.w <= size.0 && cue.y + cue.h <= size.1)
        }
    }

    /// Each tile is the exact frame on screen at its time (mostly between keyframes), read back from its pixels
    /// at the place its cue names; the reported frame times agree.
    func testEachTileIsTheExactFrame() throws {
        let clip = try TestEnvironment.fixture("numbered.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        let out = try result(
            try Run.ftgst(["storyboard", clip, "-o", dir.path, "--every", "0.35", "--columns", "3", "--rows", "2"]))
        // Tile i at 350·i ms shows frame ⌊350·i·30/1000⌋: 0, 10, 21, 31, 42, 52, 63, 73, 84.
        let expected = (0..<9).map { $0 * 350 * 30 / 1000 }
        XCTAssertEqual(out["frameTimesMs"] as? [Int], expected.map { $0 * 1000 / 30 })
        let list = try cues(dir.appendingPathComponent("storyboard.vtt").path)
        XCTAssertEqual(list.count, 9)
        var sheets: [String: DecodedImage] = [:]
        for (index, cue) in list.enumerated() {
            if sheets[cue.sheet] == nil {
                sheets[cue.sheet] = try DecodedImage.read(dir.appendingPathComponent(cue.sheet).path)
            }
            let tile = crop(try XCTUnwrap(sheets[cue.sheet]), x: cue.x, y: cue.y, w: cue.w, h: cue.h)
            XCTAssertEqual(try frameNumber(tile, near: expected[index]), expected[index], "tile \(index)")
        }
        XCTAssertEqual(sheets.keys.sorted(), ["sheet-001.jpg", "sheet-002.jpg"])
    }

    /// With a tolerance of 1 s the keyframe before each time, or a frame already decoded within 1 s, stands in:
    /// three frames for nine tiles.
    func testToleranceLetsAKeyframeStandIn() throws {
        let clip = try TestEnvironment.fixture("numbered.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        let out = try result(
            try Run.ftgst(["storyboard", clip, "-o", dir.path, "--every", "0.35", "--tolerance", "1"]))
        XCTAssertEqual(out["frameTimesMs"] as? [Int], [0, 0, 0, 1000, 1000, 1000, 2000, 2000, 2000])
        XCTAssertEqual(out["framesUsed"] as? Int, 3)
        XCTAssertEqual(out["toleranceMs"] as? Int, 1000)
        let sheet = try DecodedImage.read(dir.appendingPathComponent("sheet-001.jpg").path)
        XCTAssertEqual(try frameNumber(crop(sheet, x: 3 * 160, y: 0, w: 160, h: 120), near: 30), 30)
    }

    /// The tile height follows the display aspect and is even; the default width is 320 (never upscaled).
    func testTileSizeFromTheAspect() throws {
        let dir = try TestEnvironment.temporaryDirectory(self)
        let odd = try result(
            try Run.ftgst([
                "storyboard", try TestEnvironment.fixture("odd.mp4"), "-o", dir.appendingPathComponent("odd").path,
                "--width", "100", "--every", "0.5",
            ]))
        XCTAssertEqual(odd["tileWidth"] as? Int, 100)
        XCTAssertEqual(odd["tileHeight"] as? Int, 76, "321x241 at 100 wide is 75.08 high: 76, the nearest even")
        let wide = try result(
            try Run.ftgst([
                "storyboard", try TestEnvironment.fixture("anamorphic.mp4"), "-o",
                dir.appendingPathComponent("wide").path, "--every", "0.5",
            ]))
        XCTAssertEqual(wide["tileWidth"] as? Int, 320)
        XCTAssertEqual(wide["tileHeight"] as? Int, 120, "display 640x240 at 320 wide")
        let image = try DecodedImage.read(dir.appendingPathComponent("wide/sheet-001.jpg").path)
        XCTAssertTrue((image.width, image.height) == (640, 120))
    }

    /// The sheet limits are the real sheets': a grid far larger than the tiles fill, or a width the source never
    /// reaches (tiles are never upscaled), makes the small sheet there is; only sheets really over JPEG's side are
    /// refused (above, 600 tiles 160 px wide in one row of 1000).
    func testLimitsAreTheRealSheets() throws {
        let clip = try TestEnvironment.fixture("numbered.mp4")  // 160×120, 3 s: one tile at the default 10 s
        let dir = try TestEnvironment.temporaryDirectory(self)
        for (name, options) in [("grid", ["--columns", "1000", "--rows", "1000"]), ("wide", ["--width", "16384"])] {
            let board = try result(
                try Run.ftgst(["storyboard", clip, "-o", dir.appendingPathComponent(name).path] + options))
            XCTAssertEqual(board["tileWidth"] as? Int, 160, name)
            let sheet = try DecodedImage.read(dir.appendingPathComponent(name + "/sheet-001.jpg").path)
            XCTAssertTrue((sheet.width, sheet.height) == (160, 120), "\(name): \(sheet.width)×\(sheet.height)")
        }
    }

    /// Bad options and sources: the `[CODE]` line and status, and no folder or file left behind.
    func testErrorsLeaveNothing() throws {
        let clip = try TestEnvironment.fixture("numbered.mp4")
        let root = try TestEnvironment.temporaryDirectory(self)
        let dir = root.appendingPathComponent("out").path
        for options in [
            ["--every", "0"], ["--every", "10%"], ["--every", "ten"], ["--tolerance", "-1"], ["--columns", "0"],
            ["--rows", "1001"], ["--width", "0"], ["--quality", "2"], ["--columns", "1000", "--every", "0.005"],
        ] {
            assertFailure(
                try Run.ftgst(["storyboard", clip, "-o", dir] + options), code: "INVALID_ARGUMENT", status: 64)
        }
        assertFailure(try Run.ftgst(["storyboard", clip]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(
            try Run.ftgst(["storyboard", root.appendingPathComponent("missing.mp4").path, "-o", dir]),
            code: "FILE_NOT_FOUND", status: 66)
        assertFailure(
            try Run.ftgst(["storyboard", try TestEnvironment.fixture("garbage.bin"), "-o", dir]),
            code: "DECODE_FAILED", status: 68)
        assertFailure(
            try Run.ftgst(["storyboard", try TestEnvironment.fixture("photo.jpg"), "-o", dir]),
            code: "INVALID_ARGUMENT", status: 64)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root.path), [], "no folder made")
    }

    /// A folder that cannot be written (tests run as root, for whom no mode makes one unwritable: a folder under a
    /// regular file cannot exist, and a regular file is no folder) is `WRITE_FAILED` before decoding.
    func testAnUnwritableFolderIsWriteFailed() throws {
        let clip = try TestEnvironment.fixture("numbered.mp4")
        let root = try TestEnvironment.temporaryDirectory(self)
        let plain = root.appendingPathComponent("plain")
        try Data([1]).write(to: plain)
        for folder in [plain.path, plain.path + "/board", root.path + "/no/such/parent"] {
            assertFailure(try Run.ftgst(["storyboard", clip, "-o", folder]), code: "WRITE_FAILED", status: 73)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root.path), ["plain"])
    }

    /// A rerun into the folder of a good storyboard that fails when its files are placed (a folder where its third
    /// sheet goes) replaces nothing: the previous sheets and VTT are as they were, byte for byte, and no temporary
    /// file is left. (Before, the first two new sheets replaced the old ones and were then taken back: the old VTT
    /// named sheets that no longer existed.)
    func testAFailedRerunLeavesThePreviousStoryboardWhole() throws {
        let clip = try TestEnvironment.fixture("numbered.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("board")
        let first = try result(
            try Run.ftgst(["storyboard", clip, "-o", dir.path, "--every", "0.25", "--columns", "2", "--rows", "2"]))
        XCTAssertEqual((first["sheets"] as? [Any])?.count, 3)
        let sheet3 = dir.appendingPathComponent("sheet-003.jpg")
        try FileManager.default.removeItem(at: sheet3)
        try FileManager.default.createDirectory(at: sheet3, withIntermediateDirectories: false)
        let kept = ["sheet-001.jpg", "sheet-002.jpg", "storyboard.vtt"]
        let before = kept.map { FileManager.default.contents(atPath: dir.appendingPathComponent($0).path) }
        assertFailure(
            try Run.ftgst([
                "storyboard", clip, "-o", dir.path, "--every", "0.25", "--columns", "2", "--rows", "2", "--width", "64",
            ]), code: "WRITE_FAILED", status: 73)
        XCTAssertEqual(kept.map { FileManager.default.contents(atPath: dir.appendingPathComponent($0).path) }, before)
        XCTAssertEqual(
            Set(try FileManager.default.contentsOfDirectory(atPath: dir.path)), Set(kept + ["sheet-003.jpg"]),
            "no temporary file left")
    }

    /// A write that fails after sheets were made (a file-size limit that the small sheets pass and the long VTT
    /// does not, as a full disk would) leaves nothing of the storyboard: only the file that was there before.
    func testAFailedWriteLeavesNothingPartial() throws {
        let clip = try TestEnvironment.fixture("numbered.mp4")
        let dir = try TestEnvironment.temporaryDirectory(self)
        try Data("theirs".utf8).write(to: dir.appendingPathComponent("notes.txt"))
        // 300 tiles of 16x12 on 10×10 sheets: three sheets of ~1 KB each; a 16 KB VTT over `ulimit -f 8` (8 KiB).
        let options = ["--every", "0.01", "--width", "16"]
        let script = "trap '' XFSZ; ulimit -f 8; exec \"$0\" \"$@\""
        let limited = try Run.process(
            URL(fileURLWithPath: "/bin/bash"),
            ["-c", script, TestEnvironment.binary.path, "storyboard", clip, "-o", dir.path] + options)
        assertFailure(limited, code: "WRITE_FAILED", status: 73)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["notes.txt"])
        // Without the limit the same call succeeds: the sheets are small and only the VTT is over it.
        let out = try result(try Run.ftgst(["storyboard", clip, "-o", dir.path] + options))
        XCTAssertEqual(out["tiles"] as? Int, 300)
        let sizes = try (out["sheets"] as? [[String: Any]] ?? []).map {
            try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: $0["path"] as? String ?? "")[.size] as? Int)
        }
        XCTAssertEqual(sizes.count, 3)
        XCTAssertTrue(sizes.allSatisfy { $0 < 8192 }, "\(sizes)")
        let vtt = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("storyboard.vtt").path)
        XCTAssertGreaterThan(try XCTUnwrap(vtt[.size] as? Int), 8192)
    }

    func testHelpManAndCompletionKnowTheCommand() throws {
        let help = try Run.ftgst(["storyboard", "--help"])
        XCTAssertEqual(help.status, 0)
        for option in ["--width", "--columns", "--rows", "--every", "--tolerance", "-o"] {
            XCTAssertTrue(help.stdout.contains(option), option)
        }
        XCTAssertTrue(try Run.ftgst(["--help"]).stdout.contains("storyboard SOURCE -o DIR"))
        XCTAssertTrue(try Run.ftgst(["man"]).stdout.contains("storyboard"))
    }
}
