// Unit tests of the export's pure parts (presets, the plan, quoting) and of the library API in process.

import FilmtoneTestSupport
import Foundation
import XCTest
@testable import FilmtoneGst
@testable import FilmtoneCore

final class ExportPlanTests: XCTestCase {
    private func preset(_ body: String) throws -> ExportPreset {
        try ExportPreset.parse(body, name: "test", path: "test.preset")
    }

    private let minimal = """
        description: test
        extensions: mp4
        sources: video
        even-size: yes
        audio: aac
        pipeline:
        {source} src. ! video/x-raw ! videoscale ! {size} ! {look} ! x264enc ! mux. {audio} mp4mux name=mux ! {output}
        """

    private func inputs(look: LookSettings? = nil, audio: AudioMode = .auto, codec: String? = "aac")
        -> ExportPlan.Inputs
    {
        ExportPlan.Inputs(source: .local(path: "/media/in put.mp4"), headers: [], isJPEG: false, displayWidth: 641,
                          displayHeight: 361, maxWidth: 16384, maxHeight: 16384, look: look, audio: audio,
                          sourceAudioCodec: codec, output: "/out/o.mp4")
    }

    func testEveryShippedPresetParses() throws {
        let presets = try ExportPresets.all()
        XCTAssertEqual(Set(presets.map(\.name)).isSuperset(of: ["h264-mp4", "hevc-mp4", "prores-mov", "ffv1-mkv",
                                                              "jpeg", "png"]), true)
        XCTAssertEqual(presets.first { $0.name == "prores-mov" }?.depth, 10)
        XCTAssertEqual(ExportPresets.choose(for: "a.MOV", isImage: false, among: presets)?.name, "prores-mov")
        XCTAssertNil(ExportPresets.choose(for: "a.webm", isImage: false, among: presets), "no guessing")
        XCTAssertNil(ExportPresets.choose(for: "a.png", isImage: false, among: presets), "a video is not a PNG")
        XCTAssertEqual(ExportPresets.choose(for: "a.png", isImage: true, among: presets)?.name, "png")
        XCTAssertEqual(ExportPresets.choose(for: "a.JPG", isImage: true, among: presets)?.name, "jpeg")
        XCTAssertNil(ExportPresets.choose(for: "a.mp4", isImage: true, among: presets))
    }

    func testMalformedPresetsAreRefusedWithFileAndLine() {
        XCTAssertThrowsError(try preset("colour: red\npipeline:\n{source} ! {size} ! {output}")) { error in
            XCTAssertEqual((error as? FilmtoneError)?.code, .invalidArgument)
            XCTAssertTrue((error as? FilmtoneError)?.message.contains("test.preset:1") == true)
        }
        XCTAssertThrowsError(try preset("pipeline:\n{source} ! {size} ! {bitrate} ! {output}"))
        XCTAssertThrowsError(try preset("pipeline:\n{source} ! {size} ! fakesink"), "no {output}")
        XCTAssertThrowsError(try preset("description: x"), "no pipeline")
    }

    func testPlanFillsPlaceholdersAndDropsAnEmptyLookWithOneLink() throws {
        let plan = try ExportPlan.make(preset: try preset(minimal), inputs())
        XCTAssertEqual(plan.words.prefix(3), ["filesrc", "location=/media/in put.mp4", "!"])
        XCTAssertFalse(zip(plan.words, plan.words.dropFirst()).contains { $0 == "!" && $1 == "!" })
        XCTAssertFalse(plan.words.contains("ftlut"))
        XCTAssertEqual(plan.audio, .copy)
        XCTAssertTrue(plan.words.contains("caps=video/x-raw,width=640,height=360,pixel-aspect-ratio=1/1"),
                      "641×361 rounded down to even for 4:2:0")
        XCTAssertEqual(plan.words.suffix(2), ["filesink", "location=/out/o.mp4"])

        let look = LookSettings(inputLUT: nil, creativeLUT: "/l/c.cube", intensity: 0.5, interpolation: .trilinear)
        let looked = try ExportPlan.make(preset: try preset(minimal), inputs(look: look))
        let index = try XCTUnwrap(looked.words.firstIndex(of: "ftlut"))
        XCTAssertEqual(Array(looked.words[index...].prefix(6)),
                       ["ftlut", "name=look", "creative-lut=/l/c.cube", "intensity=0.5", "interpolation=trilinear", "!"])
    }

    func testAudioModesResolve() throws {
        let withAudio = try preset(minimal)
        XCTAssertEqual(try ExportPlan.resolveAudio(.auto, sourceCodec: "aac", preset: withAudio), .copy)
        XCTAssertEqual(try ExportPlan.resolveAudio(.auto, sourceCodec: "opus", preset: withAudio), .aac)
        XCTAssertEqual(try ExportPlan.resolveAudio(.auto, sourceCodec: nil, preset: withAudio), .none)
        XCTAssertEqual(try ExportPlan.resolveAudio(.none, sourceCodec: "aac", preset: withAudio), .none)
        XCTAssertThrowsError(try ExportPlan.resolveAudio(.copy, sourceCodec: "opus", preset: withAudio)) {
            XCTAssertEqual(($0 as? FilmtoneError)?.code, .unsupportedFormat)
        }
        let plan = try ExportPlan.make(preset: withAudio, inputs(audio: .aac, codec: "mp3"))
        XCTAssertTrue(plan.words.contains("avenc_aac"))
        XCTAssertTrue(plan.words.contains("caps=video/x-raw(ANY);audio/x-raw(ANY)"))
    }

    func testOutputSizeIsFittedNeverUpscaledAndEvenWhenAsked() {
        XCTAssertTrue(ExportPlan.outputSize(displayWidth: 1920, displayHeight: 1080, maxWidth: 1280, maxHeight: 1280,
                                            even: true) == (1280, 720))
        XCTAssertTrue(ExportPlan.outputSize(displayWidth: 320, displayHeight: 240, maxWidth: 4000, maxHeight: 4000,
                                            even: true) == (320, 240))
        XCTAssertTrue(ExportPlan.outputSize(displayWidth: 321, displayHeight: 241, maxWidth: 4000, maxHeight: 4000,
                                            even: false) == (321, 241))
        XCTAssertTrue(ExportPlan.outputSize(displayWidth: 1000, displayHeight: 3, maxWidth: 100, maxHeight: 100,
                                            even: true) == (100, 2), "never below 2 for 4:2:0")
    }

    func testShellQuotingSurvivesBash() throws {
        let words = ["location=/a b/it's \"x\"", "caps=video/x-raw(ANY);audio/mpeg", "!", "$HOME"]
        let command = ExportPlan.shellCommand(words: words, pluginDirectory: "/p q")
        XCTAssertTrue(command.hasPrefix("GST_PLUGIN_PATH='/p q'"))
        // bash must hand back exactly the words.
        let script = "printf '%s\\n' " + words.map(ExportPlan.shellQuote).joined(separator: " ")
        let result = try Run.process(URL(fileURLWithPath: "/bin/bash"), ["-c", script])
        XCTAssertEqual(result.stdout, words.joined(separator: "\n") + "\n")
    }

    func testHeaderStructureQuotesValues() {
        let text = ExportPlan.headerStructure([HTTPHeader(name: "X-Token", value: "a \"b\" c")])
        XCTAssertEqual(text, "headers,X-Token=(string)\"a \\\"b\\\" c\"")
    }
}

final class ExportAPITests: XCTestCase {
    private func options(_ work: URL, source: String, output: String) -> ExportOptions {
        var options = ExportOptions(source: source)
        options.output = work.appendingPathComponent(output).path
        options.workspace = work.appendingPathComponent("workspace").path
        options.maxWidth = 160
        return options
    }

    func testRunExportReportsProgressAndCancelExportStopsIt() async throws {
        let work = try TestEnvironment.temporaryDirectory(self)
        let collected = ProgressLog()
        let result = try await runExport(options(work, source: try TestEnvironment.fixture("clip.mp4"),
                                                 output: "a.mp4")) { collected.add($0) }
        XCTAssertEqual(result.frames, 90)
        XCTAssertEqual(collected.events.last?.progress, 1)
        XCTAssertEqual(collected.events.map(\.progress), collected.events.map(\.progress).sorted())
        XCTAssertFalse(cancelExport(reason: .api), "nothing is running now")

        // The slow clip arrives over ≥ 180 s whatever the machine's speed, so the export is still rendering when
        // the first progress event with frames asks it to stop.
        let clip = try SlowRemoteClip(self)
        let slowOutput = work.appendingPathComponent("b.mp4").path
        let slow = options(work, source: clip.url, output: "b.mp4")
        do {
            _ = try await runExport(slow) { event in
                if event.stage == .rendering, event.currentFrame > 0 { cancelExport(reason: .api) }
            }
            XCTFail("the export should have been cancelled")
        } catch let error as FilmtoneError {
            XCTAssertEqual(error.code, .cancelled)
            XCTAssertEqual(error.message, "api")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: slowOutput))
    }

    func testEventStreamEndsWithTheResult() async throws {
        let work = try TestEnvironment.temporaryDirectory(self)
        var last: ExportEvent? = nil
        var count = 0
        for try await event in exportEvents(options(work, source: try TestEnvironment.fixture("clip.mp4"),
                                                    output: "s.mp4")) {
            last = event
            count += 1
        }
        guard case .finished(let result)? = last else { return XCTFail("no result event") }
        XCTAssertEqual(result.frames, 90)
        XCTAssertGreaterThan(count, 2)
    }
}

private final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [ExportProgress] = []
    func add(_ event: ExportProgress) { lock.lock(); list.append(event); lock.unlock() }
    var events: [ExportProgress] { lock.lock(); defer { lock.unlock() }; return list }
}
