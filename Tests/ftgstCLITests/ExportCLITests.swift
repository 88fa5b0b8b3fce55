// End-to-end tests of `ftgst export`, `ftgst presets` and `ftgst cancel` through the built CLI: real encoders,
// real muxers, real processes for busy/cancel/signals, ffprobe/ffmpeg as the independent judge of the output.

import FilmtoneTestSupport
import Foundation
import Synchronization
import XCTest

#if canImport(Glibc)
    import Glibc
    @testable import FilmtoneLooks
#endif

final class ExportCLITests: XCTestCase {
    private var work: URL!
    private var workspace: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        work = try TestEnvironment.temporaryDirectory(self)
        workspace = work.appendingPathComponent("workspace")
    }

    private var lut: String {
        SharedLUTs.root.appendingPathComponent("colour-science/resolve_cube/Colour_Correct.cube").path
    }

    private func export(_ source: String, _ output: String, _ extra: [String] = [], timeout: TimeInterval = 120) throws
        -> ProcessResult
    {
        try Run.ftgst(
            ["export", source, "-o", output, "--workspace", workspace.path, "--progress", "none"] + extra,
            timeout: timeout)
    }

    /// ffprobe's view of one stream: `codec_name`, `width`, `pix_fmt`, … as strings.
    private func stream(_ path: String, _ selector: String) throws -> [String: String] {
        let result = try Run.tool(
            "ffprobe",
            [
                "-v", "error", "-select_streams", selector, "-show_entries",
                "stream=codec_name,profile,width,height,pix_fmt,nb_frames,sample_rate",
                "-of", "default=noprint_wrappers=1", path,
            ])
        var fields: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }

    /// MD5 of the decoded video frames (ffmpeg `-f md5`): equal only if every decoded pixel is equal.
    private func videoMD5(_ path: String) throws -> String {
        let result = try Run.tool("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v", "-f", "md5", "-"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func jsonObject(_ path: String) throws -> [String: Any] {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: path), "missing \(path)")
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// H.264 and HEVC (10-bit too) are rendered through ftgst's own decoders (issue 30, item 4): the same pictures as
    /// gst-libav's, so the same encoded frames, and the record names the decoder. A stream that turns 4:4:4
    /// mid-way, which fth264dec gives up on, is rendered again with avdec_h264: every frame still there.
    func testTheOwnDecodersRenderAvdecsFramesAndGiveWayMidStream() throws {
        for (clip, own, frames) in [
            ("clip.mp4", "fth264dec", 90), ("hevc10.mp4", "fth265dec", 30), ("matrix-h264-to-444.ts", "avdec_h264", 40),
        ] {
            let source = try TestEnvironment.fixture(clip)
            var sums: [String] = []
            for plain in [false, true] {
                let output = work.appendingPathComponent("\(clip)-\(plain).mp4").path
                let result = try Run.ftgst(
                    [
                        "export", source, "-o", output, "--workspace", workspace.path, "--progress", "none",
                        "--preset", "h264-mp4", "--audio", "none",
                    ], environment: plain ? ["FTGST_NO_OWN_DECODER": "1"] : [:], timeout: 120)
                XCTAssertEqual(result.status, 0, "\(clip): \(result.stderr)")
                let bench = try jsonObject(output + ".ftgst-bench.json")
                XCTAssertEqual(bench["frames"] as? Int, frames, clip)
                let expected = plain ? (clip.contains("hevc") ? "avdec_h265" : "avdec_h264") : own
                XCTAssertEqual(bench["videoDecoder"] as? String, expected, "\(clip)\(plain ? ", plain" : "")")
                sums.append(try videoMD5(output))
            }
            XCTAssertEqual(sums.first, sums.last, "\(clip): not the same encoded pictures")
        }
    }

    /// Files in `folder`, hidden ones (the `.part` staging files) included.
    private func names(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    // MARK: - Presets

    func testPresetsListsEveryPresetWithItsDescription() throws {
        let result = try Run.ftgst(["presets"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let presets = try result.stdout.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let names = presets.compactMap { $0["name"] as? String }
        for required in ["h264-mp4", "hevc-mp4", "prores-mov", "ffv1-mkv", "jpeg", "png"] {
            XCTAssertTrue(names.contains(required), "missing preset \(required) in \(names)")
        }
        for preset in presets {
            XCTAssertFalse((preset["description"] as? String ?? "").isEmpty, "\(preset)")
        }
    }

    // MARK: - Outputs

    func testH264ExportIsUprightScaledLookedWithAudioAndRecords() throws {
        let source = try TestEnvironment.fixture("rotated.mp4")
        let plain = work.appendingPathComponent("plain.mp4").path
        let looked = work.appendingPathComponent("looked.mp4").path
        XCTAssertEqual(try export(source, plain, ["--max-width", "120"]).status, 0)
        let result = try export(source, looked, ["--max-width", "120", "--creative-lut", lut])
        XCTAssertEqual(result.status, 0, result.stderr)
        let json = try result.json()
        XCTAssertEqual(json["path"] as? String, looked)
        XCTAssertEqual(json["preset"] as? String, "h264-mp4")
        XCTAssertEqual(json["frames"] as? Int, 90)

        // Upright (the stored 320×240 with a 90° matrix shows as 240×320), fitted to 120 wide, pinned 4:2:0 High.
        let video = try stream(looked, "v:0")
        XCTAssertEqual(video["codec_name"], "h264")
        XCTAssertEqual(video["profile"], "High")
        XCTAssertEqual(video["pix_fmt"], "yuv420p")
        XCTAssertEqual(video["width"], "120")
        XCTAssertEqual(video["height"], "160")
        XCTAssertEqual(video["nb_frames"], "90")
        XCTAssertEqual(try stream(looked, "a:0")["codec_name"], "aac", "the AAC track is kept")

        // The look was applied: the looked frame is much closer to the reference look applied to the plain
        // export's frame than to the plain frame itself (both went through the same lossy encoder).
        let withLook = try DecodedImage.frame(of: looked, index: 45, width: 120, height: 160)
        let without = try DecodedImage.frame(of: plain, index: 45, width: 120, height: 160)
        let look = try Look(
            inputLUT: nil, creativeLUT: try CubeLUT.load(path: lut), intensity: 1,
            interpolation: .tetrahedral)
        let expected = DecodedImage(width: 120, height: 160, rgb: look.referenceApply(toPacked: without.rgb))
        XCTAssertGreaterThan(withLook.meanDifference(without), 2)
        XCTAssertLessThan(withLook.meanDifference(expected), withLook.meanDifference(without) / 2)

        // Sidecar: request, preset, pipeline, the LUT's SHA-256 (checked with sha256sum), both probes, versions.
        let sidecar = try jsonObject(looked + ".ftgst.json")
        XCTAssertEqual((sidecar["preset"] as? [String: Any])?["name"] as? String, "h264-mp4")
        XCTAssertTrue((sidecar["pipeline"] as? String ?? "").contains("ftx264enc"))
        let luts = try XCTUnwrap(sidecar["luts"] as? [[String: Any]])
        let sum = try Run.tool("sha256sum", [lut]).stdout.split(separator: " ").first.map(String.init)
        XCTAssertEqual(luts.first?["sha256"] as? String, sum)
        XCTAssertEqual(((sidecar["source"] as? [String: Any])?["video"] as? [String: Any])?["rotation"] as? Int, 270)
        XCTAssertEqual(((sidecar["output"] as? [String: Any])?["video"] as? [String: Any])?["width"] as? Int, 120)
        XCTAssertNotNil(sidecar["gstreamer"] as? String)
        let version = try Run.ftgst(["--version"]).stdout.split(separator: " ")  // "ftgst 0.1.0 (GStreamer …)"
        XCTAssertEqual(sidecar["ftgst"] as? String, version.dropFirst().first.map(String.init), "\(version)")

        // Benchmark record: every stage timed, frames, CPU, peak memory, the pressure count.
        let bench = try jsonObject(looked + ".ftgst-bench.json")
        XCTAssertEqual(bench["result"] as? String, "ok")
        let stages = try XCTUnwrap(bench["stages"] as? [String: Any])
        XCTAssertEqual(Set(stages.keys), ["probing", "rendering", "finalizing"])
        XCTAssertEqual(bench["frames"] as? Int, 90)
        XCTAssertGreaterThan(bench["cpuMs"] as? Int ?? 0, 0)
        XCTAssertGreaterThan(bench["peakMemoryBytes"] as? Int ?? 0, 10_000_000)
        XCTAssertNotNil(bench["memoryPressureCount"] as? Int, "PSI or cgroup counters exist on this machine")
        XCTAssertTrue(names(in: work).allSatisfy { !$0.hasSuffix(".part") }, "\(names(in: work))")
    }

    func testAnExportLeavesNoGStreamerObjectAlive() throws {
        let out = work.appendingPathComponent("leaks.mp4").path
        let result = try Run.ftgst(
            [
                "export", try TestEnvironment.fixture("clip.mp4"), "-o", out, "--workspace", workspace.path,
                "--progress", "none",
            ],
            environment: ["GST_TRACERS": "leaks", "GST_DEBUG": "GST_TRACER:7", "GST_DEBUG_NO_COLOR": "1"],
            timeout: 120)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: out))
        // The tracer must be active for the absence of leaks to mean anything: it declares its record format.
        XCTAssertTrue(
            result.stderr.contains("new format string: object-alive"),
            "leak tracer did not run: \(result.stderr.prefix(500))")
        let leaks = result.stderr.split(separator: "\n").filter {
            $0.contains("object-alive, type-name=(string)") && !$0.contains("new format string")
        }
        XCTAssertEqual(leaks.count, 0, "leaked objects: \(leaks.prefix(3))")
    }

    func testProgressLinesAreMonotonicEndAtOneAndTheResultComesLast() throws {
        let output = work.appendingPathComponent("progress.mp4").path
        let result = try Run.ftgst([
            "export", try TestEnvironment.fixture("clip.mp4"), "-o", output,
            "--workspace", workspace.path, "--progress", "jsonl",
        ])
        XCTAssertEqual(result.status, 0, result.stderr)
        let events = try result.stdout.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let progress = events.filter { $0["event"] as? String == "progress" }
        XCTAssertGreaterThanOrEqual(progress.count, 3)
        let fractions = progress.compactMap { $0["progress"] as? Double }
        XCTAssertEqual(fractions.count, progress.count)
        XCTAssertEqual(fractions, fractions.sorted(), "progress never decreases")
        XCTAssertEqual(fractions.last, 1)
        let stages = progress.compactMap { $0["stage"] as? String }
        let order = ["probing", "rendering", "finalizing"]
        let ranks = stages.map { order.firstIndex(of: $0) ?? order.count }
        XCTAssertTrue(ranks.allSatisfy { $0 < order.count }, "only known stages: \(stages)")
        XCTAssertEqual(ranks, ranks.sorted(), "stages in order: \(stages)")
        XCTAssertEqual(stages.first, "probing")
        XCTAssertEqual(stages.last, "finalizing")
        XCTAssertEqual(progress.last?["currentFrame"] as? Int, 90)
        XCTAssertEqual(progress.last?["totalFrames"] as? Int, 90)
        XCTAssertEqual(events.last?["event"] as? String, "result")
        XCTAssertEqual(events.last?["path"] as? String, output)
    }

    /// `--progress jsonl` ended with the last progress event on a failure: a program reading stdout never learned
    /// how it ended. The stream now ends with an `error` event carrying the code, message and exit status.
    func testProgressLinesEndWithTheErrorOnAFailure() throws {
        let result = try export(
            try TestEnvironment.fixture("truncated90-faststart.mp4"), work.appendingPathComponent("e.mp4").path,
            ["--progress", "jsonl", "--max-width", "160"])
        XCTAssertEqual(result.status, 68, result.stderr)
        XCTAssertTrue(result.stderr.hasPrefix("[DECODE_FAILED] "), result.stderr)
        let events = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        XCTAssertEqual(events.count, result.stdout.split(separator: "\n").count, "every line is JSON")
        XCTAssertGreaterThan(events.count, 1, result.stdout)
        let last = events.last
        XCTAssertEqual(last?["event"] as? String, "error", result.stdout)
        XCTAssertEqual(last?["code"] as? String, "DECODE_FAILED")
        XCTAssertEqual(last?["exitStatus"] as? Int, 68)
        XCTAssertTrue((last?["message"] as? String)?.contains("ended early") == true, result.stdout)
        XCTAssertEqual(events.dropLast().filter { $0["event"] as? String != "progress" }.count, 0)

        let refused = try export(
            work.appendingPathComponent("missing.mp4").path, work.appendingPathComponent("m.mp4").path,
            ["--progress", "jsonl"])
        XCTAssertEqual(refused.status, 66, refused.stderr)
        XCTAssertTrue(refused.stderr.hasPrefix("[FILE_NOT_FOUND] "), refused.stderr)
        let lastLine = refused.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let object = (try? JSONSerialization.jsonObject(with: Data(lastLine.utf8))) as? [String: Any]
        XCTAssertEqual(object?["event"] as? String, "error", refused.stdout)
        XCTAssertEqual(object?["code"] as? String, "FILE_NOT_FOUND")
    }

    /// On a terminal the bar (stderr) and the result (stdout) share one screen: the result starts a line of its
    /// own instead of being glued to the end of the bar's line.
    func testOnATerminalTheResultStartsItsOwnLine() throws {
        let output = work.appendingPathComponent("tty.mp4").path
        // `script` runs the export on a pseudo-terminal (stdout and stderr both a tty) and copies the screen.
        let result = try Run.process(
            URL(fileURLWithPath: "/usr/bin/script"),
            [
                "-qec",
                [
                    TestEnvironment.binary.path, "export", try TestEnvironment.fixture("clip.mp4"), "-o", output,
                    "--workspace", workspace.path, "--max-width", "160",
                ].map(ExportCLITests.shellQuote).joined(separator: " "),
                "/dev/null",
            ], timeout: 120)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        let screen = result.stdout.replacingOccurrences(of: "\r\n", with: "\n")
        XCTAssertTrue(screen.contains("frames"), "a bar was drawn: \(screen.debugDescription)")
        XCTAssertTrue(
            screen.contains("\n{\"event\":\"result\""), "the result on a line of its own: \(screen.debugDescription)")
    }

    private static func shellQuote(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    func testDryRunPrintsOnlyACommandThatReproducesTheExport() throws {
        let source = try TestEnvironment.fixture("rotated.mp4")
        let byHand = work.appendingPathComponent("by hand.mp4").path  // a space: quoting must hold
        let exported = work.appendingPathComponent("exported.mp4").path
        let dry = try export(source, byHand, ["--creative-lut", lut, "--max-width", "200", "--dry-run"])
        XCTAssertEqual(dry.status, 0, dry.stderr)
        XCTAssertEqual(dry.stdout.split(separator: "\n").count, 1, "one command line, nothing else")
        XCTAssertFalse(FileManager.default.fileExists(atPath: byHand), "a dry run writes nothing")
        XCTAssertTrue(dry.stdout.contains("GST_PLUGIN_PATH="), "the ftlut plugin path is set in the command")

        let ran = try Run.process(URL(fileURLWithPath: "/bin/bash"), ["-c", dry.stdout], timeout: 120)
        XCTAssertEqual(ran.status, 0, ran.stderr)
        XCTAssertEqual(try export(source, exported, ["--creative-lut", lut, "--max-width", "200"]).status, 0)
        XCTAssertEqual(try videoMD5(byHand), try videoMD5(exported), "same decoded frames by hand and by ftgst")
        XCTAssertEqual(try stream(byHand, "a:0")["codec_name"], "aac")
    }

    /// The issue's injection: a folder whose name reads as pipeline text once split at its tabs
    /// (`small.mp4 ! filesink location=victim.txt filesrc location=..`) overwrote victim.txt and exited 0. A
    /// control character in a path is refused before anything runs, and no path is ever parsed as pipeline text.
    func testAPathCannotInjectPipelineElements() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        try FileManager.default.copyItem(atPath: clip, toPath: work.appendingPathComponent("small.mp4").path)
        let victim = work.appendingPathComponent("victim.txt")
        try Data("victim".utf8).write(to: victim)
        let folder = work.appendingPathComponent("small.mp4\t!\tfilesink\tlocation=victim.txt\tfilesrc\tlocation=..")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: clip, toPath: folder.appendingPathComponent("clip.mp4").path)
        let output = work.appendingPathComponent("out.mp4").path
        for extra in [[], ["--dry-run"]] {
            // From inside `work`, so that the relative `victim.txt` of the injection would land on the victim.
            let result = try Run.process(
                URL(fileURLWithPath: "/bin/bash"),
                [
                    "-c", "cd \"$1\" && exec \"$0\" export \"$2\" -o \"$3\" --workspace \"$4\" \"${@:5}\"",
                    TestEnvironment.binary.path, work.path, folder.appendingPathComponent("clip.mp4").path, output,
                    workspace.path,
                ] + extra, timeout: 120)
            assertFailure(result, code: "INVALID_URL", status: 65)
            XCTAssertTrue(result.stderr.contains("control character (U+0009)"), result.stderr)
            XCTAssertEqual(try String(contentsOf: victim, encoding: .utf8), "victim", "the victim is untouched")
            XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        }
    }

    /// Tabs and newlines, typed or as `%0A`/`%09` in a file URI, in the source, OUT or a LUT path: a clear refusal
    /// before anything runs, in every command that takes the path.
    func testControlCharactersInAnyPathAreRefusedInEveryCommand() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let out = work.appendingPathComponent("o.mp4").path
        let jpg = work.appendingPathComponent("o.jpg").path
        for source in ["\(work.path)/a\tb.mp4", "\(work.path)/a\nb.mp4", "file://\(work.path)/a%0Ab.mp4"] {
            for arguments in [
                ["export", source, "-o", out, "--workspace", workspace.path],
                ["thumb", source, "--cache-dir", work.appendingPathComponent("cache").path],
                ["preview", source, "-o", jpg], ["probe", source],
                ["mezzanine", source, "--cache-dir", work.appendingPathComponent("mezz").path],
            ] {
                let result = try Run.ftgst(arguments)
                assertFailure(result, code: "INVALID_URL", status: 65)
                XCTAssertTrue(result.stderr.contains("control character"), "\(arguments): \(result.stderr)")
            }
        }
        for bad in ["\(work.path)/o\t.mp4", "\(work.path)/o\n.mp4"] {
            assertFailure(try export(clip, bad), code: "INVALID_ARGUMENT", status: 64)
            assertFailure(try export(clip, out, ["--creative-lut", bad]), code: "INVALID_ARGUMENT", status: 64)
            assertFailure(try Run.ftgst(["preview", clip, "-o", bad + ".jpg"]), code: "INVALID_ARGUMENT", status: 64)
            assertFailure(
                try Run.ftgst(["preview", clip, "-o", jpg, "--input-lut", bad]), code: "INVALID_ARGUMENT", status: 64)
        }
        XCTAssertEqual(names(in: work).filter { $0 != "workspace" }, [], "nothing written for any of them")
    }

    /// Spaces, quotes, `!` and `=` in the source, OUT and the LUT's path simply work, in the export and in the
    /// printed command, which reproduces it.
    func testPathsWithQuotesBangsAndEqualsSignsExportAndDryRunTheSame() throws {
        let folder = work.appendingPathComponent("it's \"a\" ! b=c \\ d")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let source = folder.appendingPathComponent("in \"x\" ! filesink location=v.mp4").path
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: source)
        let look = folder.appendingPathComponent("look ! 'q' = \"r\".cube").path
        try FileManager.default.copyItem(atPath: lut, toPath: look)
        let exported = folder.appendingPathComponent("out ! \"e\" = 1.mp4").path
        let byHand = folder.appendingPathComponent("by hand ! 'h' = 2.mp4").path
        let options = ["--creative-lut", look, "--max-width", "160"]

        let result = try export(source, exported, options)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try stream(exported, "v:0")["nb_frames"], "90")
        let dry = try export(source, byHand, options + ["--dry-run"])
        XCTAssertEqual(dry.status, 0, dry.stderr)
        let ran = try Run.process(URL(fileURLWithPath: "/bin/bash"), ["-c", dry.stdout], timeout: 120)
        XCTAssertEqual(ran.status, 0, ran.stderr)
        XCTAssertEqual(try videoMD5(byHand), try videoMD5(exported), "same decoded frames by hand and by ftgst")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("v.mp4").path))

        // The one value gst-launch-1.0 cannot be given back: one ending in `"` or `\`. The export runs; the dry
        // run says why it cannot print it.
        let endsInQuote = folder.appendingPathComponent("q\"").path
        try FileManager.default.copyItem(atPath: source, toPath: endsInQuote)
        let refused = try export(endsInQuote, folder.appendingPathComponent("d.mp4").path, ["--dry-run"])
        assertFailure(refused, code: "INVALID_ARGUMENT", status: 64)
        XCTAssertTrue(refused.stderr.contains("cannot be given it as a property value"), refused.stderr)
        let ok = try export(endsInQuote, folder.appendingPathComponent("d.mp4").path, ["--max-width", "160"])
        XCTAssertEqual(ok.status, 0, ok.stderr)
    }

    func testTrimKeepsTheFramesOnScreenInTheRangeInSyncAndTheDryRunCutsTheSame() throws {
        let source = try TestEnvironment.fixture("clip.mp4")  // 30 fps, every frame different
        let output = work.appendingPathComponent("cut.mp4").path
        let result = try export(source, output, ["--start-ms", "1010", "--end-ms", "2000"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try result.json()["frames"] as? Int, 30, "frames 30…59: the one on screen at 1.010 s first")
        let video = try stream(output, "v:0")
        XCTAssertEqual(video["nb_frames"], "30")
        // The first frame kept is source frame 30 (shown 1.000–1.033 s), not its neighbours.
        let first = try DecodedImage.frame(of: output, index: 0, width: 320, height: 240)
        let distances = try [29, 30, 31].map {
            first.meanDifference(try DecodedImage.frame(of: source, index: $0, width: 320, height: 240))
        }
        XCTAssertLessThan(distances[1], distances[0])
        XCTAssertLessThan(distances[1], distances[2])
        // Audio starts with the picture (within one AAC packet) and lasts as long.
        let audio = try Run.tool(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "a:0", "-show_entries",
                "stream=start_time,duration", "-of", "csv=p=0", output,
            ])
        let times = audio.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
            .compactMap { Double($0) }
        XCTAssertEqual(times.count, 2, audio.stdout)
        XCTAssertLessThan(times.first ?? 1, 0.03)
        XCTAssertEqual(times.last ?? 0, 1.0, accuracy: 0.05)

        let byHand = work.appendingPathComponent("cut-by-hand.mp4").path
        let dry = try export(source, byHand, ["--start-ms", "1010", "--end-ms", "2000", "--dry-run"])
        XCTAssertTrue(dry.stdout.contains("fttrim"), dry.stdout)
        let ran = try Run.process(URL(fileURLWithPath: "/bin/bash"), ["-c", dry.stdout], timeout: 120)
        XCTAssertEqual(ran.status, 0, ran.stderr)
        XCTAssertEqual(try videoMD5(byHand), try videoMD5(output))

        assertFailure(
            try export(source, work.appendingPathComponent("x.mp4").path, ["--start-ms", "5000"]),
            code: "INVALID_ARGUMENT", status: 64)
        assertFailure(
            try export(
                source, work.appendingPathComponent("x.mp4").path,
                ["--start-ms", "2000", "--end-ms", "1000"]), code: "INVALID_ARGUMENT", status: 64)
    }

    func testMezzanineStageBuildsTheSourcesMezzanineBeforeRendering() throws {
        let cache = work.appendingPathComponent("cache")
        let source = try TestEnvironment.fixture("clip.mp4")
        let output = work.appendingPathComponent("with-mezzanine.mp4").path
        let result = try Run.ftgst(
            [
                "export", source, "-o", output, "--workspace", workspace.path, "--mezzanine",
                "--progress", "jsonl",
            ], environment: ["XDG_CACHE_HOME": cache.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let events = try result.stdout.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        var stages: [String] = []
        for stage in events.compactMap({ $0["stage"] as? String }) where stages.last != stage { stages.append(stage) }
        XCTAssertEqual(stages, ["probing", "mezzanine", "rendering", "finalizing"])
        let fractions = events.compactMap { $0["progress"] as? Double }
        XCTAssertEqual(fractions, fractions.sorted())
        XCTAssertEqual(events.last { $0["stage"] as? String == "mezzanine" }?["currentFrame"] as? Int, 90)

        let sidecar = try jsonObject(output + ".ftgst.json")
        let mezzanine = try XCTUnwrap(sidecar["mezzanine"] as? [String: Any])
        XCTAssertTrue(FileManager.default.fileExists(atPath: mezzanine["path"] as? String ?? ""))
        let status = try Run.ftgst(["mezzanine", source, "--status"], environment: ["XDG_CACHE_HOME": cache.path])
        XCTAssertTrue(status.stdout.contains("\"ready\""), "previews of the source now find it: \(status.stdout)")
        let stages2 = try XCTUnwrap(try jsonObject(output + ".ftgst-bench.json")["stages"] as? [String: Any])
        XCTAssertEqual(Set(stages2.keys), ["probing", "mezzanine", "rendering", "finalizing"])
    }

    func testOddSizedSourceIsRoundedToEvenForFourTwoZero() throws {
        let output = work.appendingPathComponent("odd.mp4").path
        let result = try export(try TestEnvironment.fixture("odd.mp4"), output)
        XCTAssertEqual(result.status, 0, result.stderr)
        let video = try stream(output, "v:0")
        XCTAssertEqual(video["width"], "320")
        XCTAssertEqual(video["height"], "240")
        XCTAssertEqual(video["pix_fmt"], "yuv420p", "an unpinned x264 would pick 4:4:4 from this source")
    }

    func testTenBitHEVCSourceToH264AndToTenBitProRes() throws {
        let source = try TestEnvironment.fixture("hevc10.mp4")
        let h264 = work.appendingPathComponent("from10.mp4").path
        XCTAssertEqual(try export(source, h264).status, 0)
        XCTAssertEqual(try stream(h264, "v:0")["pix_fmt"], "yuv420p", "h264-mp4 is pinned to 8-bit 4:2:0")
        XCTAssertEqual(try stream(h264, "v:0")["nb_frames"], "30")

        let prores = work.appendingPathComponent("from10.mov").path
        let result = try export(source, prores, ["--creative-lut", lut])
        XCTAssertEqual(result.status, 0, result.stderr)
        let video = try stream(prores, "v:0")
        XCTAssertEqual(video["codec_name"], "prores")
        XCTAssertEqual(video["profile"], "HQ")
        XCTAssertEqual(video["pix_fmt"], "yuv422p10le")
        let sidecar = try jsonObject(prores + ".ftgst.json")
        XCTAssertEqual(sidecar["audio"] as? String, "none", "the source has no audio")
        XCTAssertEqual(sidecar["depth"] as? Int, 10, "a 10-bit source into a 10-bit preset stays 10-bit")
        let output = try XCTUnwrap((sidecar["output"] as? [String: Any])?["video"] as? [String: Any])
        XCTAssertEqual(output["bitDepth"] as? Int, 10, "ProRes 422 is 10-bit by definition")
        XCTAssertEqual(output["chromaFormat"] as? String, "4:2:2")
    }

    func testHEVCAndLosslessFFV1Presets() throws {
        let source = try TestEnvironment.fixture("clip.mp4")
        let hevc = work.appendingPathComponent("clip-hevc.mp4").path
        XCTAssertEqual(try export(source, hevc, ["--preset", "hevc-mp4", "--audio", "aac"]).status, 0)
        XCTAssertEqual(try stream(hevc, "v:0")["codec_name"], "hevc")
        XCTAssertEqual(try stream(hevc, "a:0")["codec_name"], "aac")

        let ffv1 = work.appendingPathComponent("clip.mkv").path
        let result = try export(source, ffv1, ["--audio", "none"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try stream(ffv1, "v:0")["codec_name"], "ffv1")
        XCTAssertEqual(try stream(ffv1, "v:0")["pix_fmt"], "yuv444p")
        XCTAssertEqual(try stream(ffv1, "a:0")["codec_name"], nil, "--audio none: no audio track")
    }

    func testPhotoExportIsUprightAndAVideoPresetIsRefused() throws {
        let photo = try TestEnvironment.fixture("photo-exif.jpg")  // 320×240 stored, EXIF rotate-90
        let png = work.appendingPathComponent("photo.png").path
        let result = try export(photo, png, ["--creative-lut", lut])
        XCTAssertEqual(result.status, 0, result.stderr)
        let picture = try stream(png, "v:0")
        XCTAssertEqual(picture["codec_name"], "png")
        XCTAssertEqual(picture["width"], "240")
        XCTAssertEqual(picture["height"], "320")

        let refused = try export(photo, work.appendingPathComponent("photo.mp4").path, ["--preset", "h264-mp4"])
        assertFailure(refused, code: "INVALID_ARGUMENT", status: 64)
    }

    /// GStreamer 1.22's GIF demuxer never sends EOS (after the last frame it keeps reading at the end of the file), so
    /// a photo export of any GIF ran until its deadline. A photo export ends after its first picture: an animated
    /// GIF gives its first frame, a still GIF its picture, and the `--dry-run` command ends too. A video preset is
    /// refused: a GIF is a photo here, as probe says.
    func testAGIFExportsItsFirstPictureAndEnds() throws {
        for name in ["animated.gif", "photo.gif"] {
            let gif = try TestEnvironment.fixture(name)
            for ext in ["png", "jpg"] {
                let output = work.appendingPathComponent("\(name).\(ext)").path
                // A hang would be [CANCELLED] timeout after 20 s, inside Run's own 120 s deadline.
                let result = try export(gif, output, ["--timeout-ms", "20000"])
                XCTAssertEqual(result.status, 0, "\(name) → .\(ext): \(result.stderr)")
                let json = try result.json()
                XCTAssertEqual(json["frames"] as? Int, 1, "\(name) → .\(ext)")
                XCTAssertEqual([json["width"] as? Int, json["height"] as? Int], [64, 48])
                XCTAssertEqual(try stream(output, "v:0")["codec_name"], ext == "png" ? "png" : "mjpeg")
            }
        }
        let gif = try TestEnvironment.fixture("animated.gif")
        // The PNG is the first frame (the last one differs from it by ~11 per channel on average).
        let picture = try DecodedImage.read(work.appendingPathComponent("animated.gif.png").path)
        let first = try DecodedImage.frame(of: gif, index: 0, width: 64, height: 48)
        XCTAssertLessThan(picture.meanDifference(first), 4, "through Y444 and back: a little rounding")
        XCTAssertLessThan(
            picture.meanDifference(first) * 3,
            picture.meanDifference(try DecodedImage.frame(of: gif, index: 9, width: 64, height: 48)))
        let byHand = work.appendingPathComponent("by hand.png").path
        let dry = try export(gif, byHand, ["--dry-run"])
        XCTAssertEqual(dry.status, 0, dry.stderr)
        let ran = try Run.process(URL(fileURLWithPath: "/bin/bash"), ["-c", dry.stdout], timeout: 30)
        XCTAssertEqual(ran.status, 0, ran.stderr)
        XCTAssertEqual(try stream(byHand, "v:0")["codec_name"], "png")

        let mp4 = work.appendingPathComponent("animated.mp4").path
        let byExtension = try export(gif, mp4, ["--timeout-ms", "20000"])
        assertFailure(byExtension, code: "INVALID_ARGUMENT", status: 64)
        XCTAssertTrue(byExtension.stderr.contains("photo"), byExtension.stderr)
        let byName = try export(gif, mp4, ["--preset", "h264-mp4", "--timeout-ms", "20000"])
        assertFailure(byName, code: "INVALID_ARGUMENT", status: 64)
        XCTAssertTrue(byName.stderr.contains("photo"), byName.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: mp4))
    }

    func testRequestFileIsPreviewsRequestPlusExportFields() throws {
        let output = work.appendingPathComponent("request.mp4").path
        let request = work.appendingPathComponent("request.json")
        let body: [String: Any] = [
            "source": try TestEnvironment.fixture("clip.mp4"), "output": output,
            "creativeLut": lut, "intensity": 0.5, "timeMs": 1000, "format": "png",
            "preset": "h264-mp4", "maxWidth": 160, "audio": "none",
        ]
        try JSONSerialization.data(withJSONObject: body).write(to: request)
        let result = try Run.ftgst(["export", "--request", request.path, "--workspace", workspace.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try stream(output, "v:0")["width"], "160")
        XCTAssertNil(try stream(output, "a:0")["codec_name"])
        let recorded = try XCTUnwrap(try jsonObject(output + ".ftgst.json")["request"] as? [String: Any])
        XCTAssertEqual(recorded["intensity"] as? Double, 0.5)

        try JSONSerialization.data(withJSONObject: ["source": "x.mp4", "output": output, "bitrate": 5]).write(
            to: request)
        assertFailure(try Run.ftgst(["export", "--request", request.path]), code: "INVALID_ARGUMENT", status: 64)
    }

    // MARK: - Errors

    func testExistingOutputIsKeptWithoutOverwriteAndReplacedWithIt() throws {
        let output = work.appendingPathComponent("exists.mp4")
        try Data("keep me".utf8).write(to: output)
        let refused = try export(try TestEnvironment.fixture("clip.mp4"), output.path)
        assertFailure(refused, code: "WRITE_FAILED", status: 73)
        XCTAssertEqual(try String(contentsOf: output, encoding: .utf8), "keep me")
        XCTAssertEqual(names(in: work).filter { $0.hasSuffix(".part") }, [])

        let replaced = try export(try TestEnvironment.fixture("clip.mp4"), output.path, ["--overwrite"])
        XCTAssertEqual(replaced.status, 0, replaced.stderr)
        XCTAssertEqual(try stream(output.path, "v:0")["codec_name"], "h264")
    }

    /// An existing sidecar or benchmark record is someone's file until --overwrite says otherwise; the source
    /// itself is never one, whatever --overwrite says.
    func testExistingSidecarsAreKeptWithoutOverwriteAndTheSourceNeverReplaced() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        for suffix in [".ftgst.json", ".ftgst-bench.json"] {
            let output = work.appendingPathComponent("o\(suffix.count).mp4").path
            try Data("theirs".utf8).write(to: URL(fileURLWithPath: output + suffix))
            let refused = try export(clip, output, ["--max-width", "160"])
            assertFailure(refused, code: "WRITE_FAILED", status: 73)
            XCTAssertTrue(refused.stderr.contains("exists (use --overwrite)"), refused.stderr)
            XCTAssertEqual(try String(contentsOfFile: output + suffix, encoding: .utf8), "theirs")
            XCTAssertFalse(FileManager.default.fileExists(atPath: output), "all or nothing: no OUT either")
            let replaced = try export(clip, output, ["--max-width", "160", "--overwrite"])
            XCTAssertEqual(replaced.status, 0, replaced.stderr)
            XCTAssertNotEqual(try String(contentsOfFile: output + suffix, encoding: .utf8), "theirs")
        }
        XCTAssertEqual(names(in: work).filter { $0.hasSuffix(".part") }, [])

        // The source named as OUT's sidecar or record: refused before anything runs, even with --overwrite.
        for suffix in [".ftgst.json", ".ftgst-bench.json"] {
            let output = work.appendingPathComponent("s\(suffix.count).mp4").path
            try FileManager.default.copyItem(atPath: clip, toPath: output + suffix)
            let refused = try export(output + suffix, output, ["--overwrite"])
            assertFailure(refused, code: "INVALID_ARGUMENT", status: 64)
            XCTAssertTrue(refused.stderr.contains("would overwrite the source"), refused.stderr)
            XCTAssertTrue(FileManager.default.contentsEqual(atPath: output + suffix, andPath: clip))
            XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        }
    }

    /// A name that appears while the export renders (OUT, or its sidecar) is kept, and nothing of the export is
    /// left placed: the sidecar and record it had already put beside OUT are taken back.
    func testAFileAppearingWhileExportingIsKeptAndNothingOfOursIsLeft() throws {
        let root = try TestEnvironment.temporaryDirectory(self)
        let clip = root.appendingPathComponent("clip.mp4")
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip-faststart.mp4"), toPath: clip.path)
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: clip.path)[.size] as? Int64)
        let server = try HTTPTestServer(root: root)
        defer { server.stop() }
        // The first 64 KiB at once (rendering starts), the rest over at least 8 s: the file is created well before
        // the export can reach its end, however fast the machine.
        server.slowPace = HTTPTestServer.Pace(fullSpeedBytes: 64 * 1024, bytesPerSecond: max(1, (size - 64 * 1024) / 8))
        for (index, appearing) in ["", ".ftgst.json"].enumerated() {
            let output = work.appendingPathComponent("appear\(index).mp4").path
            let running = try RunningExport(
                source: server.url("/slow/clip.mp4"), output: output, workspace: workspace.path,
                extra: ["--max-width", "160"])
            addTeardownBlock { running.kill() }
            try running.waitUntilRendering()
            try Data("theirs".utf8).write(to: URL(fileURLWithPath: output + appearing))
            running.waitForExit(timeout: 120)
            XCTAssertEqual(running.exitStatus, 73, running.stderr)
            XCTAssertTrue(running.stderr.contains("appeared while exporting"), running.stderr)
            XCTAssertEqual(try String(contentsOfFile: output + appearing, encoding: .utf8), "theirs")
            let left = names(in: work).filter { $0.hasPrefix("appear\(index)") || $0.hasPrefix(".appear\(index)") }
            XCTAssertEqual(left, ["appear\(index).mp4\(appearing)"], "only their file, nothing of ours")
        }
    }

    func testImpossibleOutputPathIsWriteFailedAndLeavesNothing() throws {
        let blocker = work.appendingPathComponent("a-file")
        try Data("x".utf8).write(to: blocker)
        let result = try export(try TestEnvironment.fixture("clip.mp4"), blocker.path + "/out.mp4")
        assertFailure(result, code: "WRITE_FAILED", status: 73)
        XCTAssertEqual(names(in: work).filter { $0 != "workspace" }, ["a-file"])
        let records = names(in: workspace.appendingPathComponent("records"))
        XCTAssertEqual(records.count, 1)
        XCTAssertTrue(records.first?.hasSuffix("-failed.json") == true, "\(records)")
    }

    /// A preset of one's own whose `ftx264enc` setting x264 does not know: `WRITE_FAILED` naming the setting and the
    /// names x264 knows, one line on stderr (x264 is not asked, so it prints nothing of its own), nothing written.
    func testAPresetSettingX264RefusesIsWriteFailedAndLeavesNothing() throws {
        let presets = work.appendingPathComponent("presets")
        try FileManager.default.createDirectory(at: presets, withIntermediateDirectories: true)
        let builtin = try String(
            contentsOf: TestEnvironment.packageRoot.appendingPathComponent("pipelines/presets/h264-mp4.preset"),
            encoding: .utf8)
        XCTAssertTrue(builtin.contains("speed-preset=veryfast"))
        try builtin.replacingOccurrences(of: "speed-preset=veryfast", with: "speed-preset=warp")
            .write(to: presets.appendingPathComponent("h264-mp4.preset"), atomically: true, encoding: .utf8)
        let output = work.appendingPathComponent("warp.mp4").path
        let result = try export(
            try TestEnvironment.fixture("clip.mp4"), output, ["--presets", presets.path, "--preset", "h264-mp4"])
        assertFailure(result, code: "WRITE_FAILED", status: 73)
        XCTAssertTrue(
            result.stderr.contains("x264 refused 320×240 pictures: preset warp: no such preset (ultrafast"),
            result.stderr)
        XCTAssertEqual(names(in: work).filter { $0 != "workspace" && $0 != "presets" }, [], "nothing written")
    }

    func testFullDiskDuringEncodingIsWriteFailedAndLeavesNothing() throws {
        // `ulimit -f` caps the files this process may write (tests run as root, so permissions cannot).
        let output = work.appendingPathComponent("full.mp4").path
        let command = "ulimit -f 100; exec \"$0\" export \"$1\" -o \"$2\" --workspace \"$3\" --preset ffv1-mkv"
        let result = try Run.process(
            URL(fileURLWithPath: "/bin/bash"),
            [
                "-c", command, TestEnvironment.binary.path,
                try TestEnvironment.fixture("clip.mp4"), output, workspace.path,
            ], timeout: 120)
        assertFailure(result, code: "WRITE_FAILED", status: 73)
        XCTAssertEqual(names(in: work), ["workspace"], "no output, no staging file")
    }

    func testInputErrorsKeepTheirCodes() throws {
        let output = work.appendingPathComponent("x.mp4").path
        assertFailure(
            try export(work.appendingPathComponent("missing.mp4").path, output),
            code: "FILE_NOT_FOUND", status: 66)
        assertFailure(try export("ftp://example.invalid/a.mp4", output), code: "INVALID_URL", status: 65)
        assertFailure(
            try export(try TestEnvironment.fixture("truncated.mp4"), output),
            code: "DECODE_FAILED", status: 68)
        let badLUT = work.appendingPathComponent("bad.cube")
        try Data("LUT_3D_SIZE 2\n0 0 0\n".utf8).write(to: badLUT)
        assertFailure(
            try export(try TestEnvironment.fixture("clip.mp4"), output, ["--creative-lut", badLUT.path]),
            code: "LUT_INVALID", status: 76)
        assertFailure(
            try export(try TestEnvironment.fixture("clip.mp4"), output, ["--preset", "nope"]),
            code: "INVALID_ARGUMENT", status: 64)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }

    /// A file cut short with its index intact (a download or a recording stopped at 40 % or 90 %) reaches a clean
    /// end of stream with part of its frames: that is DECODE_FAILED and nothing at OUT, never a short export.
    func testASourceCutShortIsDecodeFailedAndLeavesNothing() throws {
        for name in ["truncated-faststart.mp4", "truncated90-faststart.mp4"] {
            let output = work.appendingPathComponent("cut-\(name)").path
            let result = try export(try TestEnvironment.fixture(name), output, ["--max-width", "160"])
            assertFailure(result, code: "DECODE_FAILED", status: 68)
            XCTAssertTrue(result.stderr.contains("of its 90 frames could be decoded"), result.stderr)
            XCTAssertEqual(names(in: work).filter { $0 != "workspace" }, [], "nothing at OUT, nothing beside it")
        }
        let records = names(in: workspace.appendingPathComponent("records")).filter { $0.hasSuffix("-failed.json") }
        XCTAssertEqual(records.count, 2)
        // The whole clip, and a cut of it, still export.
        let whole = try export(
            try TestEnvironment.fixture("clip-faststart.mp4"), work.appendingPathComponent("w.mp4").path)
        XCTAssertEqual(whole.status, 0, whole.stderr)
    }

    func testRequestsThatCannotBeExportedAreRefusedWithTheirCodes() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let photo = try TestEnvironment.fixture("photo.jpg")
        let refused = try export(clip, work.appendingPathComponent("clip.webm").path)
        assertFailure(refused, code: "INVALID_ARGUMENT", status: 64)
        XCTAssertTrue(refused.stderr.contains("no preset writes '.webm'"), refused.stderr)
        assertFailure(
            try export(clip, work.appendingPathComponent("clip.png").path), code: "INVALID_ARGUMENT",
            status: 64)
        assertFailure(
            try export(photo, work.appendingPathComponent("p.jpg").path, ["--start-ms", "5"]),
            code: "INVALID_ARGUMENT", status: 64)
        assertFailure(
            try export(photo, work.appendingPathComponent("p.jpg").path, ["--mezzanine"]),
            code: "INVALID_ARGUMENT", status: 64)
        assertFailure(
            try export(try TestEnvironment.fixture("tone.m4a"), work.appendingPathComponent("t.mp4").path),
            code: "UNSUPPORTED_FORMAT", status: 67)
        assertFailure(
            try export(clip, work.appendingPathComponent("c.mp4").path, ["--depth", "12"]),
            code: "INVALID_ARGUMENT", status: 64)
        XCTAssertEqual(names(in: work).filter { $0 != "workspace" }, [], "nothing written for any of them")
    }

    func testRemoteSourceWithHeadersAndARemoteFailure() throws {
        let server = try HTTPTestServer.serving("clip-faststart.mp4", in: self).server
        defer { server.stop() }
        let output = work.appendingPathComponent("remote.mp4").path
        let result = try export(server.url("/auth/clip.mp4"), output, ["--header", "X-Token: secret"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try stream(output, "v:0")["nb_frames"], "90")
        let sidecar = try String(contentsOfFile: output + ".ftgst.json", encoding: .utf8)
        XCTAssertFalse(sidecar.contains("secret"), "header values are not written beside the video")
        XCTAssertTrue(sidecar.contains("X-Token: ***"))

        let dry = try export(
            server.url("/auth/clip.mp4"), work.appendingPathComponent("remote-dry.mp4").path,
            ["--header", "X-Token: secret", "--dry-run"])
        let ran = try Run.process(URL(fileURLWithPath: "/bin/bash"), ["-c", dry.stdout], timeout: 120)
        XCTAssertEqual(ran.status, 0, "the header reaches the server from the printed command too: \(ran.stderr)")

        assertFailure(
            try export(server.url("/status/404/clip.mp4"), work.appendingPathComponent("r2.mp4").path),
            code: "REMOTE_FETCH_FAILED", status: 69)
    }

    /// README's own example: `--header 'Authorization: Bearer x'` failed in export (`could not set property
    /// "extra-headers"`) while thumb and probe took it. A value with spaces (and quotes) reaches the server from
    /// every command, and from the printed `--dry-run` command.
    func testHeaderValuesWithSpacesReachTheServerFromEveryCommand() throws {
        let server = try HTTPTestServer.serving("clip-faststart.mp4", in: self).server
        defer { server.stop() }
        let value = "Bearer x \"y\" z\\"
        server.requiredHeader = ("Authorization", value)
        let header = ["--header", "Authorization: \(value)"]
        let source = server.url("/auth/clip.mp4")
        let output = work.appendingPathComponent("auth.mp4").path
        let cache = work.appendingPathComponent("cache").path

        let exported = try export(source, output, header + ["--max-width", "160"])
        XCTAssertEqual(exported.status, 0, exported.stderr)
        XCTAssertEqual(try stream(output, "v:0")["nb_frames"], "90")
        for arguments in [
            ["thumb", source, "--cache-dir", cache], ["probe", source],
            ["preview", source, "-o", work.appendingPathComponent("p.jpg").path, "--mezzanine", "off"],
            ["mezzanine", source, "--cache-dir", work.appendingPathComponent("mezz").path],
        ] {
            let result = try Run.ftgst(arguments + header, timeout: 120)
            XCTAssertEqual(result.status, 0, "\(arguments.first ?? ""): \(result.stderr)")
        }
        let dry = try export(source, work.appendingPathComponent("auth-dry.mp4").path, header + ["--dry-run"])
        XCTAssertEqual(dry.status, 0, dry.stderr)
        XCTAssertFalse(dry.stdout.isEmpty)
        server.clearRequests()
        let ran = try Run.process(URL(fileURLWithPath: "/bin/bash"), ["-c", dry.stdout], timeout: 120)
        XCTAssertEqual(ran.status, 0, ran.stderr)
        let sent = server.requests.filter { $0.path == "/auth/clip.mp4" }.map { $0.headers["authorization"] }
        XCTAssertFalse(sent.isEmpty, "the printed command fetched the source")
        XCTAssertEqual(Set(sent), [value], "the header arrived whole from the printed command")
    }

    /// A password or a query token in the source's URL is hidden in every file the export leaves on disk (the
    /// sidecar, the benchmark record, the failure record), as header values are.
    func testSecretsInTheSourceURLAreNotWrittenToDisk() throws {
        let server = try HTTPTestServer.serving("clip-faststart.mp4", in: self).server
        defer { server.stop() }
        func secretURL(_ path: String) -> String {
            server.url(path).replacingOccurrences(of: "http://", with: "http://user:PASSW0RD@") + "?token=T0KEN&x=1"
        }
        let output = work.appendingPathComponent("secret.mp4").path
        let result = try export(secretURL("/media/clip.mp4"), output, ["--max-width", "160"])
        XCTAssertEqual(result.status, 0, result.stderr)
        for file in [output + ".ftgst.json", output + ".ftgst-bench.json"] {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            XCTAssertFalse(text.contains("PASSW0RD"), "\(file): \(text)")
            XCTAssertFalse(text.contains("T0KEN"), "\(file): \(text)")
            XCTAssertTrue(text.contains("user:***@127.0.0.1"), "\(file): \(text)")
            XCTAssertTrue(text.contains("token=***&x=***"), "\(file): \(text)")
        }

        let failed = try export(secretURL("/status/404/clip.mp4"), work.appendingPathComponent("f.mp4").path)
        assertFailure(failed, code: "REMOTE_FETCH_FAILED", status: 69)
        let folder = workspace.appendingPathComponent("records")
        let records = names(in: folder).filter { $0.hasSuffix("-failed.json") }
        XCTAssertEqual(records.count, 1, "\(names(in: folder))")
        for name in records {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            XCTAssertFalse(text.contains("PASSW0RD") || text.contains("T0KEN"), text)
            XCTAssertTrue(text.contains("user:***@"), text)
        }
    }

    // MARK: - Busy, cancel, signals

    // These tests stop an export while it renders. The export reads `SlowRemoteClip` (long-faststart.mp4 from the
    // test server's `/slow/` route): its first frames arrive at once, the rest at a pace that keeps any export of
    // it running for at least `minimumSeconds` (≥ 180 s), however fast the machine. So "still running when the
    // signal arrives" holds by construction, and the bounds below can be generous enough for a loaded machine (both
    // cores busy) while still telling a prompt stop from an export that ran on.

    /// The longest a stop may take from the signal (or the `cancel` command) to the exit. The promise is "within
    /// a second" (the render loop checks every 50 ms); 5 s leaves room for a debug build on a loaded machine
    /// and is still a small fraction of the ≥ 180 s an export of the slow clip would otherwise run.
    private static let promptStop: TimeInterval = 5

    /// An export of the slow clip (`SlowRemoteClip`) started as a real process, with its output collected.
    // @unchecked Sendable: the pipe handlers (on Foundation's threads) touch only `collected`, a Mutex; the
    // process and the pipes are used from the test's thread.
    private final class RunningExport: @unchecked Sendable {
        let process = Process()
        let output: String
        private let out = Pipe()
        private let err = Pipe()
        private let collected = Mutex<(stdout: String, stderr: String, openPipes: Int)>(("", "", 2))

        init(source: String, output: String, workspace: String, extra: [String] = []) throws {
            self.output = output
            process.executableURL = TestEnvironment.binary
            // The default preset for .mp4 (h264-mp4): the pace of the source, not the encoder, makes it slow.
            process.arguments =
                ["export", source, "-o", output, "--workspace", workspace, "--progress", "jsonl"]
                + extra
            process.standardOutput = out
            process.standardError = err
            process.standardInput = FileHandle.nullDevice
            for (pipe, isStdout) in [(out, true), (err, false)] {
                pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
                    let data = handle.availableData
                    if data.isEmpty {
                        // EOF: without this the handler would be called again and again with no data.
                        handle.readabilityHandler = nil
                        self?.closed()
                    } else {
                        self?.append(data, toStdout: isStdout)
                    }
                }
            }
            try process.run()
        }

        private func append(_ data: Data, toStdout: Bool) {
            let text = String(decoding: data, as: UTF8.self)
            collected.withLock {
                if toStdout { $0.stdout += text } else { $0.stderr += text }
            }
        }

        private func closed() {
            collected.withLock { $0.openPipes -= 1 }
        }

        var stdout: String { collected.withLock { $0.stdout } }
        var stderr: String { collected.withLock { $0.stderr } }
        private var pipesAtEOF: Bool { collected.withLock { $0.openPipes == 0 } }

        /// The exit status, nil while the process runs (`Process.terminationStatus` would trap).
        var exitStatus: Int32? { process.isRunning ? nil : process.terminationStatus }

        /// The complete JSON lines on stdout so far (a line still being written is left out).
        var events: [[String: Any]] {
            var text = stdout
            if let end = text.lastIndex(of: "\n") { text = String(text[...end]) } else { return [] }
            return text.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }

        /// The latest rendering event with at least one frame rendered, if any.
        var lastRendering: [String: Any]? {
            events.last { $0["stage"] as? String == "rendering" && ($0["currentFrame"] as? Int ?? 0) > 0 }
        }

        /// Waits (at most 60 s) for a rendering event with frames done.
        func waitUntilRendering() throws {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                if lastRendering != nil { return }
                guard process.isRunning else { break }
                usleep(20_000)
            }
            XCTFail("the export never started rendering: \(stdout) \(stderr)")
            throw CocoaError(.executableLoad)
        }

        /// Fails unless the export is running and its last event is a rendering one short of the last frame:
        /// whatever stops it next stops it mid-render.
        func assertStillRendering(file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertTrue(process.isRunning, "the export already ended: \(stderr)", file: file, line: line)
            let last = events.last
            XCTAssertEqual(
                last?["stage"] as? String, "rendering", "\(String(describing: last))", file: file,
                line: line)
            XCTAssertLessThan(last?["currentFrame"] as? Int ?? Int.max, SlowRemoteClip.frames, file: file, line: line)
        }

        /// Waits (at most `timeout` s) for the exit, then (at most 5 s) for both pipes to reach EOF, so stdout and
        /// stderr are complete. A process still running at the deadline is killed. Returns the seconds until the
        /// exit was seen.
        @discardableResult
        func waitForExit(timeout: TimeInterval = 30) -> TimeInterval {
            let start = Date()
            process.waitForExit(timeout: timeout)
            let waited = Date().timeIntervalSince(start)
            if process.isRunning {
                XCTFail("the export was still running after \(timeout) s; killed")
                kill()
            }
            let drained = Date().addingTimeInterval(5)
            while !pipesAtEOF && Date() < drained { usleep(5_000) }
            if pipesAtEOF {
                // Both at their end, their handlers gone: closed here (not inside a handler, which runs on the
                // queue `close` waits for), because Foundation's Pipe leaves its read end open.
                try? out.fileHandleForReading.close()
                try? err.fileHandleForReading.close()
            }
            return waited
        }

        /// SIGKILL, then waits (at most 5 s) for the exit.
        func kill() {
            guard process.isRunning else { return }
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitForExit(timeout: 5)
        }
    }

    private func assertCancelled(
        _ run: RunningExport, reason: String, file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        XCTAssertEqual(run.exitStatus, 130, run.stderr, file: file, line: line)
        XCTAssertEqual(run.stderr, "[CANCELLED] \(reason)\n", file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: run.output), "nothing at OUT", file: file, line: line)
        XCTAssertEqual(names(in: work).filter { $0 != "workspace" }, [], "no staging file left", file: file, line: line)
        let folder = workspace.appendingPathComponent("records")
        let records = names(in: folder).filter { $0.hasSuffix("-cancelled.json") }
        XCTAssertEqual(records.count, 1, "\(names(in: folder))", file: file, line: line)
        let name = try XCTUnwrap(records.first, "no cancelled record in \(names(in: folder))", file: file, line: line)
        let record = try jsonObject(folder.appendingPathComponent(name).path)
        XCTAssertEqual(record["result"] as? String, "cancelled", file: file, line: line)
        XCTAssertEqual(record["cancelReason"] as? String, reason, file: file, line: line)
        let frames = record["frames"] as? Int ?? 0
        XCTAssertGreaterThan(frames, 0, "it was cancelled mid-render", file: file, line: line)
        XCTAssertLessThan(frames, SlowRemoteClip.frames, "it was cancelled mid-render", file: file, line: line)
        assertEndsCancelled(run, reason: reason, file: file, line: line)
    }

    /// The JSON lines end with how the export ended: a `cancelled` event with the code, reason and exit status.
    private func assertEndsCancelled(
        _ run: RunningExport, reason: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        let last = run.events.last
        XCTAssertEqual(last?["event"] as? String, "cancelled", "\(run.stdout)", file: file, line: line)
        XCTAssertEqual(last?["code"] as? String, "CANCELLED", file: file, line: line)
        XCTAssertEqual(last?["reason"] as? String, reason, file: file, line: line)
        XCTAssertEqual(last?["exitStatus"] as? Int, 130, file: file, line: line)
        XCTAssertEqual(run.events.filter { $0["event"] as? String == "cancelled" }.count, 1, file: file, line: line)
    }

    /// Starts exporting the slow clip to `output`, waits until it renders (unless `waitForRendering` is false).
    /// The process is killed when the test ends, should a failed assertion leave it running.
    private func startSlowExport(_ output: String, extra: [String] = [], waitForRendering: Bool = true) throws
        -> RunningExport
    {
        let clip = try SlowRemoteClip(self)
        let running = try RunningExport(
            source: clip.url, output: work.appendingPathComponent(output).path,
            workspace: workspace.path, extra: extra)
        addTeardownBlock { running.kill() }
        if waitForRendering { try running.waitUntilRendering() }
        return running
    }

    func testSecondExportIsBusyAndCancelCommandStopsTheFirst() throws {
        let running = try startSlowExport("long.mp4")

        let start = Date()
        let second = try export(try TestEnvironment.fixture("clip.mp4"), work.appendingPathComponent("second.mp4").path)
        assertFailure(second, code: "EXPORT_BUSY", status: 75)
        // A queued export would wait for the first, which runs ≥ 180 s; 10 s covers starting a debug binary
        // on a loaded machine.
        XCTAssertLessThan(Date().timeIntervalSince(start), 10, "refused at once, not queued")
        XCTAssertFalse(FileManager.default.fileExists(atPath: work.appendingPathComponent("second.mp4").path))

        running.assertStillRendering()
        let cancelStart = Date()
        let cancel = try Run.ftgst(["cancel", "--workspace", workspace.path])
        XCTAssertEqual(cancel.status, 0, cancel.stderr)
        XCTAssertEqual(try cancel.json()["cancelled"] as? Bool, true)
        running.waitForExit()
        // Includes starting the `cancel` process, hence the bound of a prompt stop plus a process start.
        XCTAssertLessThan(
            Date().timeIntervalSince(cancelStart), Self.promptStop + 5,
            "stopped promptly (plus a process start)")
        try assertCancelled(running, reason: "externalCommand")

        let idle = try Run.ftgst(["cancel", "--workspace", workspace.path])
        XCTAssertEqual(try idle.json()["cancelled"] as? Bool, false)
    }

    func testSIGINTCancelsPromptlyAndLeavesNothing() throws {
        let running = try startSlowExport("int.mp4")
        running.assertStillRendering()
        kill(running.process.processIdentifier, SIGINT)
        XCTAssertLessThan(running.waitForExit(), Self.promptStop, "stopped promptly")
        try assertCancelled(running, reason: "userInterrupt")
    }

    func testSecondCtrlCExitsAtOnceAndStillLeavesNoStagingFile() throws {
        let running = try startSlowExport("twice.mp4")
        running.assertStillRendering()
        kill(running.process.processIdentifier, SIGINT)
        kill(running.process.processIdentifier, SIGINT)
        XCTAssertLessThan(running.waitForExit(), Self.promptStop)
        XCTAssertEqual(running.exitStatus, 130)
        XCTAssertEqual(names(in: work).filter { $0 != "workspace" }, [], "no OUT, no .part, no sidecar")
        assertEndsCancelled(running, reason: "userInterrupt")
    }

    func testSIGTERMCancelsWithReasonTerminated() throws {
        let running = try startSlowExport("term.mp4")
        running.assertStillRendering()
        kill(running.process.processIdentifier, SIGTERM)
        XCTAssertLessThan(running.waitForExit(), Self.promptStop)
        try assertCancelled(running, reason: "terminated")
    }

    func testTimeoutCancelsWithReasonTimeout() throws {
        // 8 s: long enough for a loaded machine to probe and render its first frames (the record must show a
        // cancel mid-render), far shorter than the ≥ 180 s the slow clip takes to arrive.
        let running = try startSlowExport("slow.mp4", extra: ["--timeout-ms", "8000"], waitForRendering: false)
        let seconds = running.waitForExit(timeout: 60)
        XCTAssertGreaterThanOrEqual(seconds, 7, "not before the timeout (minus the process start)")
        XCTAssertNotNil(running.lastRendering, "it was rendering when the timeout hit: \(running.stdout)")
        try assertCancelled(running, reason: "timeout")
    }

    func testKilledExportNeverLeavesTheWorkspaceLocked() throws {
        let running = try startSlowExport("killed.mp4")
        running.assertStillRendering()
        running.kill()
        running.waitForExit()
        if !running.process.isRunning {
            XCTAssertEqual(running.process.terminationReason, .uncaughtSignal, "killed, not finished")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: running.output), "a killed export leaves nothing at OUT")
        let next = try export(try TestEnvironment.fixture("clip.mp4"), work.appendingPathComponent("next.mp4").path)
        XCTAssertEqual(next.status, 0, "the kernel released the lock: \(next.stderr)")
    }
}
