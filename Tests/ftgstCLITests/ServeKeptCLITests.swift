// `ftgst serve`'s kept pipelines (issue 12, item 3): per source the engine keeps the opened, prerolled pipeline, so
// a new preview time is a seek or a forward step on it. Every frame it gives must be the one-shot `ftgst preview`'s
// for the same request, pixel for pixel: forward steps of a frame and of half a second, backward and far jumps, the
// last frame, times past the end (DECODE_FAILED, the engine still serving), a mezzanine, a source changed on disk,
// requests at once. The answer's `warm.pipeline` says a kept pipeline answered; no test asserts a timing.

import FilmtoneCore
import FilmtoneTestSupport
import Foundation
import XCTest

final class ServeKeptCLITests: XCTestCase {
    private var work: URL!
    private var mezzanines: String { work.appendingPathComponent("mezzanines").path }

    override func setUpWithError() throws {
        try super.setUpWithError()
        work = try TestEnvironment.temporaryDirectory(self)
        for folder in ["runtime", "mezzanines"] {
            try FileManager.default.createDirectory(
                at: work.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
    }

    private func startEngine(_ arguments: [String] = [], environment: [String: String] = [:]) throws
        -> EngineProcess
    {
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = work.appendingPathComponent("runtime").path
        env.merge(environment) { $1 }
        let engine = try EngineProcess(
            executable: TestEnvironment.binary, arguments: ["serve"] + arguments, environment: env)
        addTeardownBlock { engine.kill() }
        return engine
    }

    private var nextID: Int64 = 0

    /// The request file's object for `source` at `time` (320 wide, mezzanines read from the test's folder).
    private var extraParams: [(String, JSONValue)] = []

    private func params(_ source: String, _ time: Int64) -> [(String, JSONValue)] {
        [
            ("source", .string(source)), ("timeMs", .int(time)), ("maxWidth", .int(320)),
            ("mezzanineDir", .string(mezzanines)),
        ] + extraParams
    }

    /// One renderPreviewFrame through `engine`, written to `name`; its whole answer.
    private func enginePreview(
        _ engine: EngineProcess, _ params: [(String, JSONValue)], _ name: String, file: StaticString = #filePath,
        line: UInt = #line
    ) throws -> JSONValue {
        nextID += 1
        let output = work.appendingPathComponent(name).path
        engine.request(id: nextID, "renderPreviewFrame", .object(params + [("output", .string(output))]))
        return try engine.response(id: nextID, timeout: 120, file: file, line: line)
    }

    /// `ftgst preview --request` for the same object, written to `name`; its result object, nil when it failed
    /// (`failure` then holds the code it printed).
    private func oneShot(_ params: [(String, JSONValue)], _ name: String) throws -> (JSONValue?, String) {
        let request = work.appendingPathComponent(name + ".json")
        let output = work.appendingPathComponent(name).path
        try Data(JSONValue.object(params + [("output", .string(output))]).serialized.utf8).write(to: request)
        let result = try Run.ftgst(["preview", "--request", request.path])
        guard result.status == 0 else { return (nil, result.stderr) }
        return (try JSONValue.parse(Array(result.stdout.utf8)), result.stderr)
    }

    /// The engine's preview at `time` and the one-shot one: the same frame (time), the same pixels exactly (no look:
    /// nothing may differ), or the same error code. Returns the engine's `warm.pipeline`.
    @discardableResult
    private func assertSameAsOneShot(
        _ engine: EngineProcess, _ source: String, _ time: Int64, _ label: String, fromMezzanine: Bool = false,
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> Bool? {
        let name = "\(label)-\(time).png"
        let answer = try enginePreview(engine, params(source, time), name, file: file, line: line)
        let (cli, stderr) = try oneShot(params(source, time), name + "-cli.png")
        guard let cli else {
            XCTAssertEqual(
                answer["error"]?["data"]?["code"], .string("DECODE_FAILED"), answer.serialized, file: file, line: line)
            XCTAssertTrue(stderr.contains("DECODE_FAILED"), "\(label) \(time): \(stderr)", file: file, line: line)
            return nil
        }
        let result = try XCTUnwrap(answer["result"], "\(label) \(time): \(answer.serialized)", file: file, line: line)
        XCTAssertEqual(result["timeMs"], cli["timeMs"], "\(label) \(time): the frame shown", file: file, line: line)
        XCTAssertEqual(result["mezzanine"], cli["mezzanine"], "\(label) \(time)", file: file, line: line)
        XCTAssertEqual(result["mezzanine"], .bool(fromMezzanine), "\(label) \(time)", file: file, line: line)
        let warm = try DecodedImage.read(work.appendingPathComponent(name).path)
        let cold = try DecodedImage.read(work.appendingPathComponent(name + "-cli.png").path)
        XCTAssertEqual([warm.width, warm.height], [cold.width, cold.height], name, file: file, line: line)
        XCTAssertEqual(maxByteDifference(warm.rgb, cold.rgb), 0, "\(label) \(time): pixels", file: file, line: line)
        guard case .bool(let pipeline)? = result["warm"]?["pipeline"] else { return nil }
        return pipeline
    }

    /// Forward steps (a frame, half a second, across a keyframe), backward jumps, a far jump, the last frame and
    /// times past the end, on clips with keyframes every 30 frames, one GOP, B-frames and a variable rate: each
    /// frame is the one-shot preview's, and after the first every one comes from the kept pipeline, also after a
    /// time past the end refused before the pipeline was touched.
    func testKeptPipelineFramesEqualTheOneShotPreviews() throws {
        let plans: [(fixture: String, times: [Int64], pastEnd: Int64)] = [
            ("clip.mp4", [1400, 1433, 1467, 1500, 2000, 2033, 900, 1100, 0, 2900, 2990, 2999, 300], 3100),
            ("longgop.mp4", [500, 533, 1033, 1050, 3900, 3990, 200, 3000, 2500, 100], 4500),
            ("bframes.mp4", [700, 733, 750, 1250, 1283, 400, 2990, 1000], 3100),
            ("vfr.mp4", [700, 725, 733, 750, 1200, 1000, 1690, 1699, 100], 2500),
        ]
        for plan in plans {
            let source = try TestEnvironment.fixture(plan.fixture)
            let engine = try startEngine()
            var answered: [Bool?] = []
            for time in plan.times {
                answered.append(try assertSameAsOneShot(engine, source, time, plan.fixture))
            }
            XCTAssertNil(try assertSameAsOneShot(engine, source, plan.pastEnd, plan.fixture), "past the end")
            // Still serving, from the same pipeline: the refusal did not touch it.
            answered.append(try assertSameAsOneShot(engine, source, plan.times[1] + 1, plan.fixture + "-again"))
            XCTAssertEqual(answered.first, false, "\(plan.fixture): the first preview opens the pipeline")
            XCTAssertEqual(
                answered.dropFirst().filter { $0 != true }.count, 0, "\(plan.fixture): kept pipeline: \(answered)")
            engine.closeInput()
            XCTAssertTrue(engine.waitForExit(timeout: 30))
        }
    }

    /// The frame-exactness matrix through the engine (issue 28): `renderPreviewFrame` cold (the first request opens
    /// the pipeline), then warm forward and back on the kept one; each picture shows the frame on screen at the
    /// time asked (`FrameBarcode`), with its time. Clips: HEVC 10-bit MOV (what phones record), H.264 with B-frames,
    /// AV1, AVI (no presentation times), a short TS (reads forward) and H.264 turning 4:4:4 mid-stream
    /// (fth264dec's way back).
    func testMatrixClipsAreExactThroughTheEngine() throws {
        let cells: [(frame: Int, ms: Int64)] = [(18, 740), (23, 940), (39, 1580), (0, 20), (13, 540), (12, 480)]
        let engine = try startEngine()
        for clip in [
            "matrix-hevc10.mov", "matrix-h264-bframes.mp4", "matrix-av1.mkv", "matrix-h264.avi", "matrix-h264.ts",
            "matrix-h264-to-444.ts",
        ] {
            let source = try TestEnvironment.fixture(clip)
            for (index, cell) in cells.enumerated() {
                let name = "matrix-\(clip)-\(index).png"
                let answer = try enginePreview(engine, params(source, cell.ms), name)
                let what = "\(clip) at \(cell.ms) ms"
                let result = try XCTUnwrap(answer["result"], "\(what): \(answer.serialized)")
                XCTAssertEqual(result["timeMs"], .int(Int64(cell.frame) * FrameBarcode.frameMilliseconds), what)
                let image = try DecodedImage.read(work.appendingPathComponent(name).path)
                XCTAssertEqual(FrameBarcode.number(image), cell.frame, what)
            }
        }
        engine.closeInput()
        XCTAssertTrue(engine.waitForExit(timeout: 30))
    }

    /// A source that cannot seek (a TS too short for tsdemux's estimate) is read forward by its kept pipeline; asked
    /// to go back, the engine drops it and answers from a new one (`OpenedFrameSource.CannotGoBack`): every frame
    /// is still the one-shot preview's, and the next request forward is the new kept pipeline's (issue 28).
    func testASourceThatCannotSeekIsReopenedToGoBack() throws {
        let source = try TestEnvironment.fixture("matrix-h264.ts")
        let engine = try startEngine()
        let answered = try [1020, 1540, 540, 940].map { try assertSameAsOneShot(engine, source, $0, "ts") }
        XCTAssertEqual(answered, [false, true, false, true], "forward kept, back reopened, then kept again")
        engine.closeInput()
        XCTAssertTrue(engine.waitForExit(timeout: 30))
    }

    /// With a tolerance the kept pipeline never steps forward: it follows the seek plan (the keyframe first when it
    /// is near enough), and its frames are the one-shot preview's.
    func testWithAToleranceTheKeptPipelineFollowsTheSeekPlan() throws {
        for (fixture, tolerance, times) in [
            ("clip.mp4", Int64(200), [Int64(1400), 1433, 1500, 1900, 1000, 2900, 500]),
            ("longgop.mp4", 1500, [1400, 1433, 3500, 1000]),
        ] {
            extraParams = [("toleranceMs", .int(tolerance))]
            let source = try TestEnvironment.fixture(fixture)
            let engine = try startEngine()
            var answered: [Bool?] = []
            for time in times { answered.append(try assertSameAsOneShot(engine, source, time, "tol-\(fixture)")) }
            XCTAssertEqual(answered, [false] + Array(repeating: true, count: times.count - 1), fixture)
        }
    }

    /// A time past the end that only the end of the stream reveals (an MPEG-TS: its duration is not trusted) is
    /// DECODE_FAILED; the pipeline that reached it is dropped, and the next preview opens a new one rightly.
    func testAnEndOfStreamWithoutAFrameDropsTheKeptPipeline() throws {
        let source = try TestEnvironment.fixture("clip.ts")
        let engine = try startEngine()
        XCTAssertEqual(try assertSameAsOneShot(engine, source, 1000, "ts"), false)
        XCTAssertNil(try assertSameAsOneShot(engine, source, 3100, "ts"))
        XCTAssertEqual(try assertSameAsOneShot(engine, source, 1500, "ts"), false, "dropped: opened again")
        XCTAssertEqual(try assertSameAsOneShot(engine, source, 2966, "ts"), true)
    }

    /// With a ready mezzanine the engine keeps the mezzanine's pipeline: its frames (a seek is one decode in an
    /// all-intra file) are the one-shot preview's from the same mezzanine.
    func testAMezzaninesPipelineIsKeptToo() throws {
        let source = work.appendingPathComponent("long.mp4").path
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("longgop.mp4"), toPath: source)
        let built = try Run.ftgst(["mezzanine", source, "--mezzanine-dir", mezzanines], timeout: 120)
        XCTAssertEqual(built.status, 0, built.stderr)
        let engine = try startEngine()
        var answered: [Bool?] = []
        for time: Int64 in [2000, 2033, 2500, 1000, 3900, 100] {
            answered.append(try assertSameAsOneShot(engine, source, time, "mezz", fromMezzanine: true))
        }
        XCTAssertEqual(answered.first, false, "the first opens the mezzanine's pipeline")
        XCTAssertEqual(answered.dropFirst().filter { $0 != true }.count, 0, "the mezzanine's pipeline: \(answered)")
    }

    /// A source replaced on disk at the same path gets a new pipeline (the old one stopped), with the new file's
    /// frames; a budget too small for a pipeline keeps none and still answers rightly.
    func testASourceChangedOnDiskGetsANewPipelineAndATinyBudgetKeepsNone() throws {
        let source = work.appendingPathComponent("clip.mp4")
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: source.path)
        let engine = try startEngine()
        XCTAssertEqual(try assertSameAsOneShot(engine, source.path, 1000, "before"), false)
        XCTAssertEqual(try assertSameAsOneShot(engine, source.path, 1200, "before"), true)
        try Data(contentsOf: URL(fileURLWithPath: try TestEnvironment.fixture("bframes.mp4"))).write(
            to: source, options: .atomic)
        XCTAssertEqual(try assertSameAsOneShot(engine, source.path, 1300, "after"), false, "a new file: a new pipeline")
        XCTAssertEqual(try assertSameAsOneShot(engine, source.path, 1333, "after"), true)

        let tiny = try startEngine(["--memory-mb", "0"])
        for time: Int64 in [1000, 1033, 500] {
            XCTAssertEqual(try assertSameAsOneShot(tiny, source.path, time, "tiny"), false, "nothing is kept")
        }
    }

    /// Requests for one source at once: one uses the kept pipeline, the others grab on their own; every answer is
    /// the frame asked for.
    func testRequestsAtOnceForOneSourceEachGetTheirFrame() throws {
        let source = try TestEnvironment.fixture("clip.mp4")
        let engine = try startEngine()
        XCTAssertEqual(try assertSameAsOneShot(engine, source, 500, "first"), false)
        let times: [Int64] = [600, 1500, 700, 2500, 633, 1000]
        var ids: [(Int64, Int64)] = []
        for time in times {
            nextID += 1
            let output = work.appendingPathComponent("at-once-\(time).png").path
            engine.request(
                id: nextID, "renderPreviewFrame", .object(params(source, time) + [("output", .string(output))]))
            ids.append((nextID, time))
        }
        for (id, time) in ids {
            let answer = try engine.response(id: id, timeout: 120)
            let (cli, _) = try oneShot(params(source, time), "at-once-\(time).png-cli.png")
            XCTAssertEqual(answer["result"]?["timeMs"], cli?["timeMs"], answer.serialized)
            let warm = try DecodedImage.read(work.appendingPathComponent("at-once-\(time).png").path)
            let cold = try DecodedImage.read(work.appendingPathComponent("at-once-\(time).png-cli.png").path)
            XCTAssertEqual(maxByteDifference(warm.rgb, cold.rgb), 0, "\(time)")
        }
    }

    /// A session that keeps pipelines for several sources (a budget small enough that some are evicted), steps and
    /// seeks on them, refuses times past the end, then exits: the leak tracer finds nothing alive.
    func testASessionWithKeptPipelinesLeavesNoGStreamerObjectAlive() throws {
        let engine = try startEngine(
            ["--memory-mb", "30"],
            environment: ["GST_TRACERS": "leaks", "GST_DEBUG": "GST_TRACER:7", "GST_DEBUG_NO_COLOR": "1"])
        let sources = try ["clip.mp4", "longgop.mp4", "bframes.mp4", "clip.mkv"].map { try TestEnvironment.fixture($0) }
        var pipelines = 0
        for round in 0..<3 {
            for (index, source) in sources.enumerated() {
                for time: Int64 in [Int64(400 + 100 * round), Int64(433 + 100 * round), 2000, 300, 9000] {
                    let answer = try enginePreview(engine, params(source, time), "leak-\(index).png")
                    if answer["result"]?["warm"]?["pipeline"] == .bool(true) { pipelines += 1 }
                }
            }
        }
        XCTAssertGreaterThan(pipelines, 0, "kept pipelines answered")
        engine.closeInput()
        XCTAssertTrue(engine.waitForExit(timeout: 30))
        XCTAssertEqual(engine.exitStatus, 0)
        let stderr = engine.stderr
        XCTAssertTrue(
            stderr.contains("new format string: object-alive"), "leak tracer did not run: \(stderr.prefix(500))")
        let leaks = stderr.split(separator: "\n").filter {
            $0.contains("object-alive, type-name=(string)") && !$0.contains("new format string")
        }
        XCTAssertEqual(leaks, [], "leaked objects")
    }
}
