// Unit tests of the export's pure parts (presets, the plan, quoting) and of the library API in process.

import FilmtoneTestSupport
import Foundation
import Synchronization
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneGst

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
        ExportPlan.Inputs(
            source: .local(path: "/media/in put.mp4"), headers: [], isJPEG: false, displayWidth: 641,
            displayHeight: 361, maxWidth: 16384, maxHeight: 16384, look: look, audio: audio,
            sourceAudioCodec: codec, output: "/out/o.mp4")
    }

    func testEveryShippedPresetParses() throws {
        let presets = try ExportPresets.all()
        XCTAssertEqual(
            Set(presets.map(\.name)).isSuperset(of: [
                "h264-mp4", "hevc-mp4", "prores-mov", "ffv1-mkv",
                "jpeg", "png",
            ]), true)
        XCTAssertEqual(presets.first { $0.name == "prores-mov" }?.depth, 10)
        XCTAssertEqual(ExportPresets.choose(for: "a.MOV", isImage: false, among: presets)?.name, "prores-mov")
        XCTAssertNil(ExportPresets.choose(for: "a.webm", isImage: false, among: presets), "no guessing")
        XCTAssertNil(ExportPresets.choose(for: "a.png", isImage: false, among: presets), "a video is not a PNG")
        XCTAssertEqual(ExportPresets.choose(for: "a.png", isImage: true, among: presets)?.name, "png")
        XCTAssertEqual(ExportPresets.choose(for: "a.JPG", isImage: true, among: presets)?.name, "jpeg")
        XCTAssertNil(ExportPresets.choose(for: "a.mp4", isImage: true, among: presets))
    }

    /// The presets compiled into the library are pipelines/presets, file for file: regenerate them with
    /// scripts/builtin-presets after editing a preset.
    func testBuiltinPresetsMatchTheFiles() throws {
        let folder = TestEnvironment.packageRoot.appendingPathComponent("pipelines/presets")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".preset") }.sorted()
        XCTAssertEqual(ExportPresets.builtin.map(\.file), files, "run scripts/builtin-presets")
        for entry in ExportPresets.builtin {
            let text = try String(contentsOf: folder.appendingPathComponent(entry.file), encoding: .utf8)
            XCTAssertEqual(entry.text, text, "\(entry.file) differs from its file: run scripts/builtin-presets")
        }
    }

    /// Nothing depends on where the program runs: without a folder the presets are the library's own.
    func testPresetsComeFromTheFolderGivenElseTheEnvironmentElseTheLibrary() throws {
        XCTAssertEqual(try ExportPresets.location(folder: nil, environment: [:]), .builtin)
        XCTAssertEqual(try ExportPresets.location(folder: nil, environment: ["FTGST_PRESETS": ""]), .builtin)
        XCTAssertEqual(try ExportPresets.location(folder: nil, environment: ["FTGST_PRESETS": "/e"]), .folder("/e"))
        XCTAssertEqual(try ExportPresets.location(folder: "/f", environment: ["FTGST_PRESETS": "/e"]), .folder("/f"))
        XCTAssertThrowsError(try ExportPresets.location(folder: "", environment: [:]))
        let builtin = try ExportPresets.all(environment: [:])
        XCTAssertEqual(builtin.first { $0.name == "h264-mp4" }?.path, "builtin:h264-mp4.preset")
        XCTAssertEqual(builtin.map(\.name), builtin.map(\.name).sorted())
        XCTAssertThrowsError(try ExportPresets.all(folder: "/nonexistent/ftgst-presets", environment: [:])) {
            XCTAssertEqual(($0 as? FilmtoneError)?.code, .fileNotFound)
        }
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
        XCTAssertEqual(plan.words.prefix(3), ["filesrc", "name=source", "!"])
        XCTAssertFalse(zip(plan.words, plan.words.dropFirst()).contains { $0 == "!" && $1 == "!" })
        XCTAssertFalse(plan.words.contains("ftlut"))
        XCTAssertEqual(plan.audio, .copy)
        XCTAssertTrue(
            plan.words.contains("caps=video/x-raw,width=640,height=360,pixel-aspect-ratio=1/1"),
            "641×361 rounded down to even for 4:2:0")
        XCTAssertEqual(plan.words.suffix(2), ["filesink", "name=out"])
        XCTAssertEqual(
            plan.settings,
            [
                .init(element: "source", property: "location", value: .text("/media/in put.mp4")),
                .init(element: "out", property: "location", value: .text("/out/o.mp4")),
            ])

        let look = LookSettings(inputLUT: nil, creativeLUT: "/l/c.cube", intensity: 0.5, interpolation: .trilinear)
        let looked = try ExportPlan.make(preset: try preset(minimal), inputs(look: look))
        let index = try XCTUnwrap(looked.words.firstIndex(of: "ftlut"))
        XCTAssertEqual(
            Array(looked.words[index...].prefix(5)),
            ["ftlut", "name=look", "intensity=0.5", "interpolation=trilinear", "!"])
        XCTAssertTrue(
            looked.settings.contains(.init(element: "look", property: "creative-lut", value: .text("/l/c.cube"))))
    }

    /// No user value is ever a word of the parsed description: a path that reads as pipeline text stays a value.
    func testUserValuesAreSettingsNeverPipelineWords() throws {
        let hostile = "/m/a.mp4\t!\tfilesink\tlocation=victim.txt \"q\" it's = x"
        let look = LookSettings(inputLUT: hostile + ".cube", creativeLUT: nil, intensity: 1, interpolation: .nearest)
        var inputs = self.inputs(look: look)
        inputs.source = .local(path: hostile)
        inputs.output = hostile + ".mp4"
        let plan = try ExportPlan.make(preset: try preset(minimal), inputs)
        XCTAssertFalse(plan.words.contains { $0.contains("victim") }, "\(plan.words)")
        XCTAssertEqual(plan.words.filter { $0 == "filesink" }.count, 1)
        XCTAssertEqual(
            plan.settings.map(\.value),
            [.text(hostile), .text(hostile + ".cube"), .text(hostile + ".mp4")])
        // The printed command carries each value as one quoted word beside its element's name.
        let command = plan.commandWords(plan.settings)
        XCTAssertEqual(
            command.prefix(3),
            ["filesrc", "name=source", "location=\"/m/a.mp4\t!\tfilesink\tlocation=victim.txt \\\"q\\\" it's = x\""])
        XCTAssertNil(ExportPlan.inexpressible(plan.settings))
        inputs.output = "/out/ends in a quote\""
        let quoted = try ExportPlan.make(preset: try preset(minimal), inputs)
        XCTAssertEqual(ExportPlan.inexpressible(quoted.settings)?.element, "out")
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
        XCTAssertTrue(
            ExportPlan.outputSize(
                displayWidth: 1920, displayHeight: 1080, maxWidth: 1280, maxHeight: 1280,
                even: true) == (1280, 720))
        XCTAssertTrue(
            ExportPlan.outputSize(
                displayWidth: 320, displayHeight: 240, maxWidth: 4000, maxHeight: 4000,
                even: true) == (320, 240))
        XCTAssertTrue(
            ExportPlan.outputSize(
                displayWidth: 321, displayHeight: 241, maxWidth: 4000, maxHeight: 4000,
                even: false) == (321, 241))
        XCTAssertTrue(
            ExportPlan.outputSize(
                displayWidth: 1000, displayHeight: 3, maxWidth: 100, maxHeight: 100,
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
        XCTAssertEqual(text, "headers, X-Token=(string)\"a \\\"b\\\" c\";")
    }
}

/// The decisions an export makes from its request, the source's probe and the presets: no media, no GStreamer,
/// probe reports written by hand.
final class ExportDecisionTests: XCTestCase {
    private func preset(
        _ name: String, sources: String = "video", extensions: String, trims: Bool = true,
        depth: Int = 8
    ) throws -> ExportPreset {
        let trim = trims ? "{trim} " : ""
        return try ExportPreset.parse(
            """
            extensions: \(extensions)
            sources: \(sources)
            even-size: yes
            depth: \(depth)
            audio: aac
            pipeline:
            {source} src. ! \(trim){size} ! {look} ! x264enc ! mux. {audio} mp4mux name=mux ! {output}
            """, name: name, path: "\(name).preset")
    }

    private func presets() throws -> [ExportPreset] {
        [
            try preset("vid", extensions: "mp4"), try preset("notrim", extensions: "mov", trims: false),
            try preset("deep", extensions: "mkv", depth: 10),
            try preset("img", sources: "image", extensions: "png jpg"),
        ]
    }

    private func video(
        codec: String = "h264", display: (Int, Int) = (1920, 1080), rate: String? = "30/1",
        frames: Int64? = 90, bitDepth: Int? = 8
    ) -> VideoStreamReport {
        VideoStreamReport(
            codec: codec, profile: nil, width: display.0, height: display.1, displayWidth: display.0,
            displayHeight: display.1, rotation: 0, pixelAspectRatio: "1/1", frameRate: rate,
            frameCount: frames, bitDepth: bitDepth, chromaFormat: "4:2:0", colorimetry: nil, hdr: .none)
    }

    private func clip(duration: Int64? = 3000, video: VideoStreamReport? = nil, audio: String? = "aac")
        -> ProbeReport
    {
        ProbeReport(
            container: "mp4", isImage: false, durationMilliseconds: duration, video: video ?? self.video(),
            audio: audio.map { AudioStreamReport(codec: $0, channels: 2, sampleRate: 48000) },
            inputTransform: nil)
    }

    private func photo(codec: String = "jpeg") -> ProbeReport {
        ProbeReport(
            container: codec, isImage: true, durationMilliseconds: nil,
            video: video(codec: codec, display: (240, 320), rate: nil, frames: 1), audio: nil,
            inputTransform: nil)
    }

    private func request(_ output: String, _ configure: (inout ExportOptions) -> Void = { _ in }) throws
        -> ExportRequest
    {
        var options = ExportOptions(source: "/media/in.mp4")
        options.output = "/out/" + output
        configure(&options)
        return try ExportRequest(options, environment: [:])
    }

    private func assertRefused(
        _ code: FilmtoneError.Code, _ text: String, file: StaticString = #filePath,
        line: UInt = #line, _ body: () throws -> Any
    ) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual((error as? FilmtoneError)?.code, code, "\(error)", file: file, line: line)
            XCTAssertTrue((error as? FilmtoneError)?.message.contains(text) == true, "\(error)", file: file, line: line)
        }
    }

    private func plan(_ output: String, _ source: ProbeReport, _ configure: (inout ExportOptions) -> Void = { _ in })
        throws -> ExportPlan
    {
        let request = try request(output, configure)
        return try ExportPlan.make(
            request, source: source,
            preset: try ExportPlan.preset(for: request, source: source, among: try presets()))
    }

    func testPresetIsTheNamedOneElseChosenByExtensionAndSourceKind() throws {
        let all = try presets()
        XCTAssertEqual(try ExportPlan.preset(for: try request("a.MP4"), source: clip(), among: all).name, "vid")
        XCTAssertEqual(try ExportPlan.preset(for: try request("a.jpg"), source: photo(), among: all).name, "img")
        XCTAssertEqual(
            try ExportPlan.preset(
                for: try request("a.webm") { $0.preset = "notrim" }, source: clip(),
                among: all
            ).name, "notrim", "a named preset writes any extension")
        assertRefused(.invalidArgument, "no preset writes '.webm' for this video (.mp4, .mov, .mkv); name one") {
            try ExportPlan.preset(for: try self.request("a.webm"), source: self.clip(), among: all)
        }
        assertRefused(.invalidArgument, "no preset writes no extension for this photo (.png, .jpg)") {
            try ExportPlan.preset(for: try self.request("a"), source: self.photo(), among: all)
        }
        assertRefused(.invalidArgument, "no preset writes '.png' for this video") {
            try ExportPlan.preset(for: try self.request("a.png"), source: self.clip(), among: all)
        }
        assertRefused(.invalidArgument, "preset img takes image sources; this source is a video") {
            try ExportPlan.preset(for: try self.request("a.png") { $0.preset = "img" }, source: self.clip(), among: all)
        }
        assertRefused(.invalidArgument, "preset vid takes video sources; this source is a photo") {
            try ExportPlan.preset(
                for: try self.request("a.mp4") { $0.preset = "vid" }, source: self.photo(), among: all)
        }
        assertRefused(.invalidArgument, "unknown preset 'nope' (known: vid, notrim, deep, img)") {
            try ExportPlan.preset(
                for: try self.request("a.mp4") { $0.preset = "nope" }, source: self.clip(), among: all)
        }
    }

    func testASourceWithoutPictureIsRefusedBeforeThePresetsAreRead() throws {
        struct Unreadable: Error {}
        let audioOnly = ProbeReport(
            container: "mp4", isImage: false, durationMilliseconds: 1000, video: nil,
            audio: AudioStreamReport(codec: "aac", channels: 2, sampleRate: 48000),
            inputTransform: nil)
        func unreadable() throws -> [ExportPreset] { throw Unreadable() }
        assertRefused(.unsupportedFormat, "no video or picture") {
            try ExportPlan.preset(for: try self.request("a.mp4"), source: audioOnly, among: try unreadable())
        }
        assertRefused(.unsupportedFormat, "no video or picture") {
            try ExportPlan.make(try self.request("a.mp4"), source: audioOnly, preset: try self.presets()[0])
        }
    }

    func testCutIsNormalisedAndRefusedWhereItCannotBe() throws {
        let vid = try presets()[0]
        let notrim = try presets()[1]
        XCTAssertEqual(
            try ExportPlan.keptRange(start: 0, end: nil, source: clip(), preset: notrim), ExportPlan.Trim(),
            "a start of 0 is no cut")
        XCTAssertEqual(
            try ExportPlan.keptRange(start: 0, end: 3000, source: clip(), preset: notrim),
            ExportPlan.Trim(), "an end at the duration is no cut")
        XCTAssertEqual(
            try ExportPlan.keptRange(start: 500, end: 9000, source: clip(), preset: vid),
            ExportPlan.Trim(start: 500, end: nil))
        XCTAssertEqual(
            try ExportPlan.keptRange(start: 5000, end: nil, source: clip(duration: nil), preset: vid),
            ExportPlan.Trim(start: 5000, end: nil), "an unknown duration cannot refuse a start")
        assertRefused(.invalidArgument, "--start-ms 3000 is at or beyond the end (3000 ms)") {
            try ExportPlan.keptRange(start: 3000, end: nil, source: self.clip(), preset: vid)
        }
        assertRefused(.invalidArgument, "a photo cannot be trimmed") {
            try ExportPlan.keptRange(start: 5, end: nil, source: self.photo(), preset: vid)
        }
        assertRefused(.invalidArgument, "preset notrim cannot trim") {
            try ExportPlan.keptRange(start: 1000, end: 2000, source: self.clip(), preset: notrim)
        }

        let cut = try plan("a.mp4", clip()) {
            $0.startMilliseconds = 1000
            $0.endMilliseconds = 2000
        }
        XCTAssertEqual(cut.inputs.trim, ExportPlan.Trim(start: 1000, end: 2000))
        let index = try XCTUnwrap(cut.words.firstIndex(of: "fttrim"))
        XCTAssertEqual(
            Array(cut.words[index...].prefix(4)),
            ["fttrim", "name=trim", "start=1000000000", "stop=2000000000"])
        XCTAssertTrue(cut.words.contains("name=audiotrim"), "the audio is cut the same")
        XCTAssertFalse(try plan("a.mp4", clip()) { $0.startMilliseconds = 0 }.words.contains("fttrim"))
    }

    /// `fttrim` cuts in stream time; an MPEG-TS's starts 766.67 ms before its first frame's: the cut points move
    /// by the probe's `timelineStart` so that `--start-ms 1000` is 1 s after the first frame.
    func testCutPointsAreOnTheZeroBasedTimeline() throws {
        var ts = clip()
        ts.timelineStart = .nanoseconds(766_666_666)
        let cut = try plan("a.mp4", ts) {
            $0.startMilliseconds = 1000
            $0.endMilliseconds = 2000
        }
        XCTAssertEqual(cut.inputs.trim, ExportPlan.Trim(start: 1000, end: 2000, origin: 766_666_666))
        let index = try XCTUnwrap(cut.words.firstIndex(of: "fttrim"))
        XCTAssertEqual(
            Array(cut.words[index...].prefix(4)), ["fttrim", "name=trim", "start=1766666666", "stop=2766666666"])
        XCTAssertFalse(
            try plan("a.mp4", ts) { $0.startMilliseconds = 0 }.words.contains("fttrim"), "the whole source: no cut")
    }

    func testFrameTotalIsTheProbesCountOrTheFramesOnScreenInTheCut() {
        XCTAssertEqual(ExportPlan.totalFrames(clip(), start: nil, end: nil), 90, "the probe's count")
        XCTAssertEqual(
            ExportPlan.totalFrames(clip(video: video(frames: nil)), start: nil, end: nil), 90,
            "duration × rate")
        XCTAssertEqual(ExportPlan.totalFrames(clip(), start: 1000, end: 2000), 30)
        XCTAssertEqual(ExportPlan.totalFrames(clip(), start: 1010, end: 2000), 30, "the frame on screen at 1010 ms too")
        XCTAssertEqual(ExportPlan.totalFrames(clip(), start: 1000, end: 2010), 31)
        XCTAssertEqual(ExportPlan.totalFrames(clip(), start: 2000, end: 9000), 30, "the cut ends with the source")
        XCTAssertEqual(ExportPlan.totalFrames(clip(video: video(rate: "30000/1001")), start: 0, end: nil), 90)
        XCTAssertNil(ExportPlan.totalFrames(clip(video: video(rate: nil)), start: 1000, end: nil), "no rate")
        XCTAssertNil(ExportPlan.totalFrames(clip(duration: nil, video: video(frames: nil)), start: nil, end: nil))
        XCTAssertEqual(ExportPlan.totalFrames(photo(), start: nil, end: nil), 1)
    }

    func testASourceThatEndsEarlyIsDecodeFailed() throws {
        XCTAssertNoThrow(try ExportPlan.checkComplete(rendered: 90, expected: 90, exact: true))
        XCTAssertNoThrow(try ExportPlan.checkComplete(rendered: 88, expected: 90, exact: true), "a dropped last frame")
        XCTAssertNoThrow(try ExportPlan.checkComplete(rendered: 5, expected: nil, exact: false), "nothing to check")
        XCTAssertNoThrow(try ExportPlan.checkComplete(rendered: 28, expected: 30, exact: false), "an estimate")
        XCTAssertNoThrow(
            try ExportPlan.checkComplete(rendered: 31, expected: 36, exact: false, reached: 990, span: 990),
            "a variable-rate cut with fewer frames than its average rate says, covering its span")
        XCTAssertThrowsError(
            try ExportPlan.checkComplete(rendered: 31, expected: 36, exact: false, reached: 800, span: 990),
            "short of frames and of time")
        XCTAssertThrowsError(
            try ExportPlan.checkComplete(rendered: 70, expected: 90, exact: true, reached: 3000, span: 3000),
            "the probe's own count is not overruled")
        for (rendered, exact) in [(81, true), (37, true), (0, true), (70, false)] {
            XCTAssertThrowsError(try ExportPlan.checkComplete(rendered: Int64(rendered), expected: 90, exact: exact)) {
                XCTAssertEqual(($0 as? FilmtoneError)?.code, .decodeFailed)
            }
        }
        XCTAssertTrue(try plan("a.mp4", clip()).totalFramesIsExact)
        XCTAssertFalse(try plan("a.mp4", clip()) { $0.endMilliseconds = 1000 }.totalFramesIsExact)
    }

    func testMezzanineIsPlannedForVideosAndRefusedForAPhoto() throws {
        XCTAssertTrue(try plan("a.mp4", clip()) { $0.mezzanine = true }.buildsMezzanine)
        XCTAssertFalse(try plan("a.mp4", clip()).buildsMezzanine)
        assertRefused(.invalidArgument, "a photo has no mezzanine") {
            try self.plan("a.png", self.photo()) { $0.mezzanine = true }
        }
    }

    func testPlanTakesSizeDepthAudioAndJPEGParsingFromTheProbe() throws {
        let jpeg = try plan("p.png", photo())
        XCTAssertEqual(Array(jpeg.words.prefix(5)), ["filesrc", "name=source", "!", "jpegparse", "!"])
        XCTAssertTrue(
            jpeg.words.contains("caps=video/x-raw,width=240,height=320,pixel-aspect-ratio=1/1"),
            "the probe's upright display size")
        XCTAssertEqual(jpeg.totalFrames, 1)
        XCTAssertFalse(try plan("p.png", photo(codec: "png")).words.contains("jpegparse"))

        XCTAssertEqual(try plan("a.mkv", clip(video: video(bitDepth: 10))).depth, 10)
        XCTAssertEqual(try plan("a.mkv", clip(video: video(bitDepth: 8))).depth, 8)
        XCTAssertEqual(try plan("a.mp4", clip(video: video(bitDepth: 10))).depth, 8, "capped by the preset")
        assertRefused(.invalidArgument, "--depth 10 needs a 10-bit preset") {
            try self.plan("a.mp4", self.clip()) { $0.depth = .ten }
        }
        XCTAssertEqual(try plan("a.mp4", clip(audio: "aac")).audio, .copy)
        XCTAssertEqual(try plan("a.mp4", clip(audio: "opus")).audio, .aac)
        XCTAssertEqual(try plan("a.mp4", clip(audio: nil)).audio, .none)
        assertRefused(.unsupportedFormat, "cannot copy opus audio") {
            try self.plan("a.mp4", self.clip(audio: "opus")) { $0.audio = .copy }
        }
        let scaled = try plan("a.mp4", clip()) { $0.maxWidth = 641 }
        XCTAssertEqual([scaled.width, scaled.height], [640, 360])
    }

    /// A photo export ends after its first picture, whatever the decoder does after it (GStreamer 1.22's GIF
    /// demuxer never sends EOS): `queue ! imagefreeze num-buffers=1` sits in front of the size filter, for photos only.
    func testAPhotoExportEndsAfterItsFirstPicture() throws {
        for photo in [try plan("p.png", photo()), try plan("p.jpg", photo(codec: "gst-libav-gif"))] {
            let words = photo.words
            let size = try XCTUnwrap(words.firstIndex(of: "name=size")) - 1
            XCTAssertEqual(Array(words[(size - 5)..<size]), ["queue", "!", "imagefreeze", "num-buffers=1", "!"])
        }
        XCTAssertFalse(try plan("a.mp4", clip()).words.contains("imagefreeze"), "a video ends with its source")
    }

    func testTheStagingFilesSettingsDifferOnlyInTheFileSinksLocation() throws {
        let plan = try plan("a.mp4", clip())
        XCTAssertEqual(plan.settings.last, .init(element: "out", property: "location", value: .text("/out/a.mp4")))
        let staged = plan.settings(writingTo: "/out/.a.mp4.ftgst-1-2.part")
        XCTAssertEqual(staged.count, plan.settings.count)
        XCTAssertEqual(
            zip(plan.settings, staged).filter { $0 != $1 }.map(\.1),
            [.init(element: "out", property: "location", value: .text("/out/.a.mp4.ftgst-1-2.part"))])
    }
}

final class ExportAPITests: XCTestCase {
    private func options(_ work: URL, source: String, output: String, workspace: String = "workspace")
        -> ExportOptions
    {
        var options = ExportOptions(source: source)
        options.output = work.appendingPathComponent(output).path
        options.workspace = work.appendingPathComponent(workspace).path
        options.maxWidth = 160
        return options
    }

    /// Four exports failing in one process within a second each keep their record: names were the second, the pid
    /// and the result, so they replaced one another and one `-failed.json` was left (issue 28).
    func testEveryFailedExportKeepsItsRecord() async throws {
        let work = try TestEnvironment.temporaryDirectory(self)
        let source = try TestEnvironment.fixture("truncated.mp4")
        for index in 0..<4 {
            do {
                _ = try await runExport(options(work, source: source, output: "out\(index).mp4")) { _ in }
                XCTFail("a truncated source must fail")
            } catch let error as FilmtoneError {
                XCTAssertEqual(error.code, .decodeFailed, "\(error)")
            }
        }
        let records = try FileManager.default.contentsOfDirectory(
            atPath: work.appendingPathComponent("workspace/records").path)
        XCTAssertEqual(records.filter { $0.hasSuffix(".json") && $0.contains("-failed") }.count, 4, "\(records)")
    }

    func testRunExportReportsProgressAndCancelExportStopsIt() async throws {
        let work = try TestEnvironment.temporaryDirectory(self)
        let collected = ProgressLog()
        let result = try await runExport(
            options(
                work, source: try TestEnvironment.fixture("clip.mp4"),
                output: "a.mp4")
        ) { collected.add($0) }
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

    /// `ExportOptions.presets` replaces the built-in presets with a folder's.
    func testRunExportChoosesAmongThePresetsFolderGiven() async throws {
        let work = try TestEnvironment.temporaryDirectory(self)
        let folder = work.appendingPathComponent("presets", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: TestEnvironment.packageRoot.appendingPathComponent("pipelines/presets/h264-mp4.preset"),
            to: folder.appendingPathComponent("house.preset"))
        var options = options(work, source: try TestEnvironment.fixture("clip.mp4"), output: "h.mp4")
        options.presets = folder.path
        let result = try await runExport(options)
        XCTAssertEqual(result.preset, "house")
        XCTAssertTrue(FileManager.default.fileExists(atPath: result.path))
    }

    /// Through the library too: a path that reads as pipeline text is only ever a value; a tab is refused.
    func testPathsThatReadAsPipelineTextAreOnlyValues() async throws {
        let work = try TestEnvironment.temporaryDirectory(self)
        let source = work.appendingPathComponent("in ! filesink location=victim.txt \"q\" = x.mp4").path
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: source)
        let result = try await runExport(options(work, source: source, output: "it's ! \"o\" = 1.mp4"))
        XCTAssertEqual(result.frames, 90)
        XCTAssertTrue(FileManager.default.fileExists(atPath: result.path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: "victim.txt"))
        do {
            _ = try await runExport(options(work, source: work.path + "/a\tb.mp4", output: "t.mp4"))
            XCTFail("a tab in the source is refused")
        } catch let error as FilmtoneError {
            XCTAssertEqual(error.code, .invalidURL)
        }
    }

    /// A header value with spaces is set as a structure field, never parsed: it reaches the server whole.
    func testHeaderValueWithSpacesReachesTheServer() async throws {
        let work = try TestEnvironment.temporaryDirectory(self)
        let server = try HTTPTestServer.serving("clip-faststart.mp4", in: self).server
        defer { server.stop() }
        server.requiredHeader = ("Authorization", "Bearer x \"y\"")
        var options = options(work, source: server.url("/auth/clip.mp4"), output: "h.mp4")
        options.headers = ["Authorization: Bearer x \"y\""]
        let result = try await runExport(options)
        XCTAssertEqual(result.frames, 90)
        XCTAssertTrue(server.requests.contains { $0.headers["authorization"] == "Bearer x \"y\"" })
    }

    func testEventStreamEndsWithTheResult() async throws {
        let work = try TestEnvironment.temporaryDirectory(self)
        var last: ExportEvent? = nil
        var count = 0
        for try await event in exportEvents(
            options(
                work, source: try TestEnvironment.fixture("clip.mp4"),
                output: "s.mp4"))
        {
            last = event
            count += 1
        }
        guard case .finished(let result)? = last else { return XCTFail("no result event") }
        XCTAssertEqual(result.frames, 90)
        XCTAssertGreaterThan(count, 2)
    }
}

/// Two exports side by side in one process, each in its own workspace (one export at a time per workspace). The
/// order of events is forced with gates, never left to the machine's speed: the slow export (long.mp4) is held
/// at its first event until the test has told it to stop, and the quick one (clip.mp4) is held as its rendering
/// starts until then too, so it is running, polling its own stop conditions, while the slow one notices its stop
/// and ends. Every gate is waited on with a deadline.
final class ExportSideBySideTests: XCTestCase {
    private func options(_ work: URL, _ fixture: String, output: String, workspace: String) throws -> ExportOptions {
        var options = ExportOptions(source: try TestEnvironment.fixture(fixture))
        options.output = work.appendingPathComponent(output).path
        options.workspace = work.appendingPathComponent(workspace).path
        options.maxWidth = 160
        return options
    }

    /// Starts the slow export, held at its first event (registered, its workspace locked, its deadline running)
    /// until `release` opens. `held` opens when it is.
    private func startSlow(_ options: ExportOptions, held: Gate, release: Gate, waits: WaitLog)
        -> Task<ExportResult, Error>
    {
        Task {
            try await runExport(options) { _ in
                guard !held.isOpen else { return }
                held.open()
                if !release.wait(seconds: 30) { waits.add("the slow export was never released") }
            }
        }
    }

    private func assertCancelled(
        _ task: Task<ExportResult, Error>, reason: CancelReason, workspace: String?,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        do {
            _ = try await task.value
            XCTFail("the slow export should have been stopped", file: file, line: line)
        } catch let error as FilmtoneError {
            XCTAssertEqual(error.code, .cancelled, "\(error)", file: file, line: line)
            XCTAssertEqual(error.message, reason.rawValue, file: file, line: line)
        }
        let records = URL(fileURLWithPath: try XCTUnwrap(workspace)).appendingPathComponent("records")
        let names = try FileManager.default.contentsOfDirectory(atPath: records.path)
        XCTAssertEqual(names.count, 1, "\(names)", file: file, line: line)
        let data = try XCTUnwrap(FileManager.default.contents(atPath: records.appendingPathComponent(names[0]).path))
        let record = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(record["cancelReason"] as? String, reason.rawValue, file: file, line: line)
    }

    /// `stop` is called once both run; the slow export must then end `CANCELLED` with `reason`, and the quick one,
    /// released with it from inside its rendering stage, must still finish.
    private func assertStoppingTheSlowOneLeavesTheQuickOne(
        reason: CancelReason, slow adjust: (inout ExportOptions) -> Void = { _ in },
        stop: (_ slow: Task<ExportResult, Error>, _ slowWorkspace: URL) async throws -> Void,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        let work = try TestEnvironment.temporaryDirectory(self)
        var slow = try options(work, "long.mp4", output: "slow.mp4", workspace: "slow-workspace")
        adjust(&slow)
        let quick = try options(work, "clip.mp4", output: "quick.mp4", workspace: "quick-workspace")
        let slowHeld = Gate()
        let releaseSlow = Gate()
        let quickRendering = Gate()
        let waits = WaitLog()
        defer { for gate in [slowHeld, releaseSlow, quickRendering] { gate.open() } }

        let slowTask = startSlow(slow, held: slowHeld, release: releaseSlow, waits: waits)
        defer { slowTask.cancel() }  // a test that failed half-way leaves no export running into the next one
        let quickTask = Task {
            defer { quickRendering.open() }  // a quick export that fails early must not keep the test waiting
            return try await runExport(quick) { event in
                guard event.stage == .rendering, !quickRendering.isOpen else { return }
                quickRendering.open()
                if !releaseSlow.wait(seconds: 30) { waits.add("the slow export was never released") }
            }
        }
        let slowRuns = await slowHeld.waitAsync(seconds: 30)
        let quickRenders = await quickRendering.waitAsync(seconds: 30)
        XCTAssertTrue(slowRuns && quickRenders, "both exports run", file: file, line: line)

        try await stop(slowTask, URL(fileURLWithPath: try XCTUnwrap(slow.workspace)))
        releaseSlow.open()
        try await assertCancelled(slowTask, reason: reason, workspace: slow.workspace, file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: try XCTUnwrap(slow.output)), file: file, line: line)

        let result = try await quickTask.value
        XCTAssertEqual(result.frames, 90, file: file, line: line)
        XCTAssertTrue(FileManager.default.fileExists(atPath: try XCTUnwrap(quick.output)), file: file, line: line)
        XCTAssertEqual(waits.entries, [], file: file, line: line)
    }

    func testOneExportsTimeoutStopsItAloneWhileAnotherRenders() async throws {
        try await assertStoppingTheSlowOneLeavesTheQuickOne(
            reason: .timeout, slow: { $0.timeoutMilliseconds = 300 },
            stop: { _, _ in
                // Its deadline started before its first event, which is held: past 300 ms now, whatever the machine.
                try await Task.sleep(for: .milliseconds(400))
            })
    }

    func testCancellingOneExportsTaskStopsItAloneWhileAnotherRenders() async throws {
        try await assertStoppingTheSlowOneLeavesTheQuickOne(reason: .api) { slow, _ in slow.cancel() }
    }

    func testACancelRequestInOneWorkspaceStopsItsExportAloneWhileAnotherRenders() async throws {
        // What `ftgst cancel --workspace` writes.
        try await assertStoppingTheSlowOneLeavesTheQuickOne(reason: .externalCommand) { _, workspace in
            try Workspace(folder: workspace).requestCancel()
        }
    }

    func testCancelExportReachesTheExportStillRunningAfterAnotherFinished() async throws {
        let work = try TestEnvironment.temporaryDirectory(self)
        let slow = try options(work, "long.mp4", output: "slow.mp4", workspace: "slow-workspace")
        let quick = try options(work, "clip.mp4", output: "quick.mp4", workspace: "quick-workspace")
        let slowHeld = Gate()
        let releaseSlow = Gate()
        let waits = WaitLog()
        defer { for gate in [slowHeld, releaseSlow] { gate.open() } }
        XCTAssertFalse(cancelExport(reason: .api), "nothing runs yet")

        let slowTask = startSlow(slow, held: slowHeld, release: releaseSlow, waits: waits)
        defer { slowTask.cancel() }  // a test that failed half-way leaves no export running into the next one
        let slowRuns = await slowHeld.waitAsync(seconds: 30)
        XCTAssertTrue(slowRuns, "the slow export runs")
        let result = try await runExport(quick)
        XCTAssertEqual(result.frames, 90, "the quick export finished beside the slow one")
        XCTAssertTrue(cancelExport(reason: .api), "the slow export still runs after the quick one ended")
        releaseSlow.open()
        try await assertCancelled(slowTask, reason: .api, workspace: slow.workspace)
        XCTAssertFalse(cancelExport(reason: .api), "nothing runs now")
        XCTAssertEqual(waits.entries, [])
    }
}

/// The cancel tokens and the registry of running exports, without media.
final class ExportCancelTests: XCTestCase {
    func testTheFirstReasonWins() {
        let token = ExportCancelToken()
        XCTAssertNil(token.reason)
        token.cancel(.timeout)
        token.cancel(.api)
        XCTAssertEqual(token.reason, .timeout)

        let raced = ExportCancelToken()
        DispatchQueue.concurrentPerform(iterations: 64) { raced.cancel(CancelReason.allCases[$0 % 5]) }
        let first = raced.reason
        XCTAssertNotNil(first)
        raced.cancel(.userInterrupt)
        XCTAssertEqual(raced.reason, first, "one reason, kept")
    }

    func testCancelAllReachesEveryRunningExportAndSaysWhetherOneRan() {
        let running = RunningExports()
        XCTAssertFalse(running.cancelAll(.api), "none is running")
        let finished = ExportCancelToken()
        let other = ExportCancelToken()
        let third = ExportCancelToken()
        running.register(finished)
        running.register(other)
        running.register(third)
        running.unregister(finished)
        XCTAssertTrue(running.cancelAll(.api), "two still run")
        XCTAssertNil(finished.reason, "an export that ended is not touched")
        XCTAssertEqual(other.reason, .api)
        XCTAssertEqual(third.reason, .api)
        running.unregister(other)
        running.unregister(third)
        XCTAssertFalse(running.cancelAll(.api))
    }

    func testASignalStopsEveryRunningExportOrTheNextAndTheSecondOfItsKindMeansExit() {
        let running = RunningExports()
        let one = ExportCancelToken()
        let two = ExportCancelToken()
        running.register(one)
        running.register(two)
        XCTAssertFalse(running.signal(.terminated))
        XCTAssertEqual([one.reason, two.reason], [.terminated, .terminated])
        XCTAssertFalse(running.signal(.userInterrupt), "a signal of another kind is not the user insisting")
        XCTAssertTrue(running.signal(.terminated), "the second SIGTERM: exit now")
        running.unregister(one)
        running.unregister(two)

        // Idle: the signal is forgotten, so it cannot stop a later export...
        let later = ExportCancelToken()
        running.register(later)
        XCTAssertNil(later.reason)
        running.unregister(later)
        // ...but one that arrives while idle (the export still starting) stops the next to register.
        XCTAssertFalse(running.signal(.userInterrupt))
        let starting = ExportCancelToken()
        running.register(starting)
        XCTAssertEqual(starting.reason, .userInterrupt)
        XCTAssertTrue(running.signal(.userInterrupt))
        running.unregister(starting)
    }
}

/// A one-way gate between a test and the threads exports report from: opened once, waited on with a deadline.
private final class Gate: Sendable {
    private let opened = Mutex(false)

    func open() { opened.withLock { $0 = true } }

    var isOpen: Bool { opened.withLock { $0 } }

    /// Blocks this thread (an export's, inside its progress callback) until open; false if `seconds` passed first.
    func wait(seconds: Double) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while !isOpen {
            guard ContinuousClock.now < deadline else { return false }
            usleep(2000)
        }
        return true
    }

    /// The same from a task.
    func waitAsync(seconds: Double) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while !isOpen {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return true
    }
}

/// Waits that ran out, noted from export threads and checked by the test.
private final class WaitLog: Sendable {
    private let list = Mutex<[String]>([])

    func add(_ entry: String) { list.withLock { $0.append(entry) } }

    var entries: [String] { list.withLock { $0 } }
}

private final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [ExportProgress] = []
    func add(_ event: ExportProgress) {
        lock.lock()
        list.append(event)
        lock.unlock()
    }
    var events: [ExportProgress] {
        lock.lock()
        defer { lock.unlock() }
        return list
    }
}
