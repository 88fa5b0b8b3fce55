// `ftgst serve`'s warm previews (issue 12, item 3): frames and looks kept between renderPreviewFrame calls must
// give the pixels the one-shot `ftgst preview` gives for the same request, notice files changed on disk, and stay
// right under any memory budget. The answer's `warm` object says what was reused; no test asserts a timing.

import FilmtoneCore
import FilmtoneTestSupport
import Foundation
import XCTest

final class ServeWarmCLITests: XCTestCase {
    private var work: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        work = try TestEnvironment.temporaryDirectory(self)
        try FileManager.default.createDirectory(
            at: work.appendingPathComponent("runtime"), withIntermediateDirectories: true)
    }

    private func startEngine(_ arguments: [String] = []) throws -> EngineProcess {
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = work.appendingPathComponent("runtime").path
        let engine = try EngineProcess(
            executable: TestEnvironment.binary, arguments: ["serve"] + arguments, environment: env)
        addTeardownBlock { engine.kill() }
        return engine
    }

    private var nextID: Int64 = 0

    /// One renderPreviewFrame through `engine` written to `name` in the test's folder; its answer's result.
    private func warmPreview(
        _ engine: EngineProcess, _ params: [(String, JSONValue)], _ name: String, file: StaticString = #filePath,
        line: UInt = #line
    ) throws -> JSONValue {
        nextID += 1
        let output = work.appendingPathComponent(name).path
        engine.request(id: nextID, "renderPreviewFrame", .object(params + [("output", .string(output))]))
        let answer = try engine.response(id: nextID, timeout: 120, file: file, line: line)
        return try XCTUnwrap(answer["result"], answer.serialized, file: file, line: line)
    }

    /// `ftgst preview` for the same request (the request file's object), written to `name`.
    private func oneShot(
        _ params: [(String, JSONValue)], _ name: String, file: StaticString = #filePath, line: UInt = #line
    )
        throws
    {
        let request = work.appendingPathComponent(name + ".json")
        let output = work.appendingPathComponent(name).path
        try Data(JSONValue.object(params + [("output", .string(output))]).serialized.utf8).write(to: request)
        let result = try Run.ftgst(["preview", "--request", request.path])
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
    }

    /// The warm preview and the one-shot one, pixel by pixel: at most 1 code value apart (the looks' tolerance).
    private func assertSamePixels(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let warm = try DecodedImage.read(work.appendingPathComponent(name).path)
        let cold = try DecodedImage.read(work.appendingPathComponent(name + "-cli.png").path)
        XCTAssertEqual([warm.width, warm.height], [cold.width, cold.height], name, file: file, line: line)
        XCTAssertLessThanOrEqual(maxByteDifference(warm.rgb, cold.rgb), 1, name, file: file, line: line)
    }

    private func request(_ source: String, _ look: [(String, JSONValue)]) -> [(String, JSONValue)] {
        [("source", .string(source)), ("timeMs", .int(1400)), ("maxWidth", .int(320))] + look
    }

    /// The studio's look tiles after its preview: a smaller box of a frame already decoded for a larger one is that
    /// frame scaled down, not decoded again (`warm.frame`), at the size and time a cold request gives, its pixels
    /// within the scalers' difference (`WarmPreviewsTests` checks when the size is certain).
    func testASmallerBoxOfACachedFrameIsScaledFromIt() throws {
        let source = try TestEnvironment.fixture("direct-hd-unstated.mp4")
        let engine = try startEngine()
        let base: [(String, JSONValue)] = [("source", .string(source)), ("timeMs", .int(520))]
        let large = try warmPreview(engine, base + [("maxWidth", .int(960)), ("maxHeight", .int(540))], "large.png")
        XCTAssertEqual(large["warm"]?["frame"], .bool(false), large.serialized)
        let tile = try warmPreview(engine, base + [("maxWidth", .int(192)), ("maxHeight", .int(108))], "tile.png")
        XCTAssertEqual(tile["warm"]?["frame"], .bool(true), "scaled from the 960-px frame: \(tile.serialized)")
        XCTAssertEqual(tile["warm"]?["pipeline"], .bool(false), tile.serialized)

        let cold = try warmPreview(
            try startEngine(), base + [("maxWidth", .int(192)), ("maxHeight", .int(108))], "tile-cold.png")
        XCTAssertEqual(cold["warm"]?["frame"], .bool(false), cold.serialized)
        for key in ["width", "height", "timeMs"] { XCTAssertEqual(tile[key], cold[key], key) }
        let scaled = try DecodedImage.read(work.appendingPathComponent("tile.png").path)
        let decoded = try DecodedImage.read(work.appendingPathComponent("tile-cold.png").path)
        XCTAssertGreaterThan(scaled.psnr(decoded), 30)

    }

    /// Changing only the intensity, then only the LUTs, reuses the frame (and the kernels once seen) and gives
    /// the CLI's pixels each time.
    func testWarmPreviewsEqualTheOneShotPreviewForIntensityAndLUTChanges() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let engine = try startEngine()
        // lookups: the frame's entries read from the look's tables were kept (a new intensity only blends).
        let looks: [(name: String, look: [(String, JSONValue)], frame: Bool, kernels: Bool?, lookups: Bool)] = [
            ("plain.png", [], false, nil, false),
            ("full.png", [("creativeLut", .string(SharedLUTs.look))], true, false, false),
            ("i60.png", [("creativeLut", .string(SharedLUTs.look)), ("intensity", .double(0.6))], true, true, true),
            ("i25.png", [("creativeLut", .string(SharedLUTs.look)), ("intensity", .double(0.25))], true, true, true),
            ("i0.png", [("creativeLut", .string(SharedLUTs.look)), ("intensity", .int(0))], true, true, true),
            (
                "gains.png", [("creativeLut", .string(SharedLUTs.gains)), ("intensity", .double(0.5))], true, false,
                false
            ),
            ("back.png", [("creativeLut", .string(SharedLUTs.look)), ("intensity", .double(0.4))], true, true, true),
            (
                "both.png",
                [
                    ("inputLut", .string(SharedLUTs.look)), ("creativeLut", .string(SharedLUTs.gains)),
                    ("intensity", .double(0.7)), ("interpolation", .string("trilinear")),
                ], true, false, false
            ),
        ]
        for step in looks {
            let result = try warmPreview(engine, request(clip, step.look), step.name)
            XCTAssertEqual(result["timeMs"]?.int, 1400, step.name)
            XCTAssertEqual(result["warm"]?["frame"], .bool(step.frame), "\(step.name): \(result.serialized)")
            XCTAssertEqual(
                result["warm"]?["look"], step.kernels.map { .bool($0) } ?? .null, "\(step.name): \(result.serialized)")
            XCTAssertEqual(result["warm"]?["lookups"], .bool(step.lookups), "\(step.name): \(result.serialized)")
            try oneShot(request(clip, step.look), step.name + "-cli.png")
            try assertSamePixels(step.name)
        }
    }

    /// `toneMap` is part of what a kept frame and pipeline are for: a PQ source's preview with it off after one
    /// with it on (and back) is decoded again, and each equals the one-shot preview of the same request.
    func testTheToneMapSettingIsNotServedFromTheOtherSettingsFrame() throws {
        let video = try TestEnvironment.fixture("hdr-pq.mp4")
        let engine = try startEngine()
        let steps: [(name: String, setting: String, frame: Bool)] = [
            ("tm-on.png", "on", false), ("tm-off.png", "off", false), ("tm-on-again.png", "on", true),
        ]
        for step in steps {
            let params: [(String, JSONValue)] = [
                ("source", .string(video)), ("timeMs", .int(500)), ("maxWidth", .int(320)),
                ("toneMap", .string(step.setting)),
            ]
            let result = try warmPreview(engine, params, step.name)
            XCTAssertEqual(result["warm"]?["frame"], .bool(step.frame), "\(step.name): \(result.serialized)")
            try oneShot(params, step.name + "-cli.png")
            try assertSamePixels(step.name)
        }
        let on = try DecodedImage.read(work.appendingPathComponent("tm-on.png").path)
        let off = try DecodedImage.read(work.appendingPathComponent("tm-off.png").path)
        XCTAssertGreaterThan(on.meanDifference(off), 10, "the two settings are two pictures")
    }

    /// A LUT rewritten at the same path, and a source replaced at the same path, change the next preview.
    func testFilesChangedOnDiskAreNoticed() throws {
        let lut = work.appendingPathComponent("look.cube")
        try FileManager.default.copyItem(atPath: SharedLUTs.look, toPath: lut.path)
        let photo = work.appendingPathComponent("photo.png")
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("photo.png"), toPath: photo.path)
        let engine = try startEngine()
        let params: [(String, JSONValue)] = [
            ("source", .string(photo.path)), ("creativeLut", .string(lut.path)), ("intensity", .double(0.8)),
        ]
        _ = try warmPreview(engine, params, "first.png")
        try oneShot(params, "first.png-cli.png")
        try assertSamePixels("first.png")

        // The same path, new content and mtime (written through a new file renamed over it: a new inode too).
        try Data(contentsOf: URL(fileURLWithPath: SharedLUTs.gains)).write(to: lut, options: .atomic)
        let relooked = try warmPreview(engine, params, "lut.png")
        XCTAssertEqual(relooked["warm"]?["frame"], .bool(true), relooked.serialized)
        XCTAssertEqual(relooked["warm"]?["look"], .bool(false), "the rewritten LUT is parsed again")
        try oneShot(params, "lut.png-cli.png")
        try assertSamePixels("lut.png")
        XCTAssertGreaterThan(
            try DecodedImage.read(work.appendingPathComponent("first.png").path).meanDifference(
                try DecodedImage.read(work.appendingPathComponent("lut.png").path)), 5, "the new LUT shows")

        // The source replaced by another picture of another size.
        try Data(contentsOf: URL(fileURLWithPath: try TestEnvironment.fixture("photo.jpg"))).write(
            to: photo, options: .atomic)
        let replaced = try warmPreview(engine, params, "source.png")
        XCTAssertEqual(replaced["warm"]?["frame"], .bool(false), "the replaced source is decoded again")
        try oneShot(params, "source.png-cli.png")
        try assertSamePixels("source.png")
    }

    /// A budget too small for any entry still answers every preview rightly (nothing is reused); a bad budget is
    /// a usage error.
    func testATinyBudgetEvictsAndStillGivesTheRightPreviews() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let engine = try startEngine(["--memory-mb", "0"])
        for (index, intensity) in [1.0, 0.5, 0.5].enumerated() {
            let look: [(String, JSONValue)] = [
                ("creativeLut", .string(SharedLUTs.look)), ("intensity", .double(intensity)),
            ]
            let name = "tiny-\(index).png"
            let result = try warmPreview(engine, request(clip, look), name)
            XCTAssertEqual(result["warm"]?["frame"], .bool(false), "evicted: \(result.serialized)")
            XCTAssertEqual(result["warm"]?["look"], .bool(false), "evicted: \(result.serialized)")
            try oneShot(request(clip, look), name + "-cli.png")
            try assertSamePixels(name)
        }
        let bad = try Run.ftgst(["serve", "--memory-mb", "-1"])
        XCTAssertEqual(bad.status, 64, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("--memory-mb"), bad.stderr)
    }
}
