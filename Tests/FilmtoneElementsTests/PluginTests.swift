import FilmtoneElements
import FilmtoneTestSupport
import XCTest

@testable import FilmtoneLooks

/// The loadable plugin (libgstfilmtone.so, built by `make build`) in plain GStreamer tools, outside ftgst.
final class PluginTests: XCTestCase {
    private var pluginDirectory: String {
        ProcessInfo.processInfo.environment["FTGST_PLUGIN_DIR"]
            ?? TestEnvironment.packageRoot.appendingPathComponent(".build/gst-plugins-debug").path
    }

    private func gst(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) throws
        -> ProcessResult
    {
        XCTAssertTrue(
            FileManager.default.fileExists(atPath: pluginDirectory + "/libgstfilmtone.so"),
            "plugin not built: run `make build` (copies it to \(pluginDirectory))")
        return try Run.process(
            URL(fileURLWithPath: "/usr/bin/env"), [tool] + arguments,
            environment: [
                "GST_PLUGIN_PATH": pluginDirectory,
                // A private registry, so no stale cache from another build is used.
                "GST_REGISTRY": FileManager.default.temporaryDirectory
                    .appendingPathComponent("ftgst-registry-\(UUID().uuidString).bin").path,
            ].merging(environment) { $1 })
    }

    func testInspectDocumentsTheElement() throws {
        let result = try gst("gst-inspect-1.0", ["ftlut"])
        XCTAssertEqual(result.status, 0, result.stderr)
        for text in [
            "Film look LUT", "filmtone", "input-lut", "creative-lut", "intensity", "interpolation",
            "tetrahedral", "trilinear", "nearest", "RGBx", "I420", "NV12", "I420_10LE", "P010_10LE", "RGBA64_LE",
        ] {
            XCTAssertTrue(result.stdout.contains(text), "gst-inspect-1.0 ftlut lacks \(text)")
        }
    }

    func testInspectShowsTheOriginAndARunnableExampleLaunchLine() throws {
        let result = try gst("gst-inspect-1.0", ["ftlut"])
        XCTAssertEqual(result.status, 0, result.stderr)
        // GStreamer's wording for a package without a public URL, not a made-up address.
        let origin = result.stdout.split(separator: "\n").first { $0.contains("Origin URL") }
        XCTAssertEqual(
            origin?.split(separator: " ", omittingEmptySubsequences: true).dropFirst(2).joined(separator: " "),
            "Unknown package origin", result.stdout)
        XCTAssertFalse(result.stdout.contains(".invalid"), result.stdout)
        // The description ends with an example launch line, which runs as shown (with a real look.cube).
        guard let range = result.stdout.range(of: "Example: gst-launch-1.0 ") else {
            return XCTFail("gst-inspect-1.0 ftlut shows no example launch line:\n\(result.stdout)")
        }
        let line = result.stdout[range.upperBound...].prefix { $0 != "\n" }
        var words = line.split(separator: " ").map(String.init)
        XCTAssertTrue(words.contains("ftlut") && words.contains("creative-lut=look.cube"), String(line))
        words = words.map { $0 == "creative-lut=look.cube" ? "creative-lut=\(SharedLUTs.look)" : $0 }
        let launched = try gst("gst-launch-1.0", ["-q"] + words)
        XCTAssertEqual(launched.status, 0, "\(line): \(launched.stderr)")
    }

    func testGstLaunchAppliesTheSameLookAsFtgst() throws {
        let look = SharedLUTs.look
        let folder = try TestEnvironment.temporaryDirectory(self)
        // The issue's launch line runs as is.
        let plain = try gst(
            "gst-launch-1.0",
            [
                "-q", "videotestsrc", "num-buffers=30", "!", "ftlut", "creative-lut=\(look)",
                "!", "videoconvert", "!", "fakesink",
            ])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        // One RGB frame through the plugin, against the same frame through ftgst's in-process element.
        let raw = folder.appendingPathComponent("frame.rgb").path
        let launched = try gst(
            "gst-launch-1.0",
            [
                "-q", "videotestsrc", "num-buffers=1", "pattern=smpte", "!",
                "video/x-raw,format=RGB,width=64,height=48", "!", "ftlut",
                "creative-lut=\(look)", "intensity=0.7", "!", "filesink",
                "location=\(raw)",
            ])
        XCTAssertEqual(launched.status, 0, launched.stderr)
        let pluginBytes = try XCTUnwrap(FileManager.default.contents(atPath: raw))
        let input = try gst(
            "gst-launch-1.0",
            [
                "-q", "videotestsrc", "num-buffers=1", "pattern=smpte", "!",
                "video/x-raw,format=RGB,width=64,height=48", "!", "filesink",
                "location=\(raw).in",
            ])
        XCTAssertEqual(input.status, 0, input.stderr)
        let inputBytes = [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: raw + ".in")))
        XCTAssertEqual(pluginBytes.count, 64 * 48 * 3)
        XCTAssertNotEqual([UInt8](pluginBytes), inputBytes)
        let reference = try Look(
            inputLUT: nil, creativeLUT: try CubeLUT.load(path: look), intensity: 0.7,
            interpolation: .tetrahedral)
        XCTAssertLessThanOrEqual(
            maxByteDifference([UInt8](pluginBytes), reference.referenceApply(toPacked: inputBytes)),
            1, "the plugin's pixels against the reference look")
    }

    func testGstLaunchRunsSixteenBitRGBThroughTheLook() throws {
        let (look, gains) = (SharedLUTs.look, SharedLUTs.gains)
        // The launch line of the issue, on small frames (the tests' plugin is a debug build).
        let plain = try gst(
            "gst-launch-1.0",
            [
                "-q", "videotestsrc", "num-buffers=5", "!",
                "video/x-raw,format=RGBA64_LE,width=160,height=120", "!", "ftlut", "creative-lut=\(look)", "!",
                "videoconvert", "!", "fakesink",
            ])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        // One RGBA64_LE frame through both slots at intensity 0.6, against the reference.
        let raw = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("frame.rgba64").path
        let caps = "video/x-raw,format=RGBA64_LE,width=64,height=48"
        let launched = try gst(
            "gst-launch-1.0",
            [
                "-q", "videotestsrc", "num-buffers=1", "pattern=smpte", "!", caps, "!",
                "ftlut", "input-lut=\(gains)", "creative-lut=\(look)", "intensity=0.6",
                "!", "filesink", "location=\(raw)",
            ])
        XCTAssertEqual(launched.status, 0, launched.stderr)
        let input = try gst(
            "gst-launch-1.0",
            [
                "-q", "videotestsrc", "num-buffers=1", "pattern=smpte", "!", caps, "!",
                "filesink", "location=\(raw).in",
            ])
        XCTAssertEqual(input.status, 0, input.stderr)
        let output = [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: raw)))
        let inputBytes = [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: raw + ".in")))
        XCTAssertEqual(output.count, 64 * 48 * 8)
        XCTAssertEqual(inputBytes.count, output.count)
        XCTAssertNotEqual(output, inputBytes)
        let reference = try Look(
            inputLUT: try CubeLUT.load(path: gains), creativeLUT: try CubeLUT.load(path: look),
            intensity: 0.6)
        func sample(_ bytes: [UInt8], _ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
        var worst = 0
        for at in stride(from: 0, to: min(output.count, inputBytes.count), by: 8) {
            let pixel = SIMD3(sample(inputBytes, at), sample(inputBytes, at + 2), sample(inputBytes, at + 4))
            let result = SIMD3(sample(output, at), sample(output, at + 2), sample(output, at + 4))
            worst = max(worst, difference16(result, reference.reference16(pixel)))
            XCTAssertEqual(sample(output, at + 6), sample(inputBytes, at + 6), "alpha")
        }
        XCTAssertLessThanOrEqual(worst, 32, "the plugin's 16-bit pixels against the reference, in 16-bit codes")
    }

    func testGstLaunchAppliesTheLookToI420InPlace() throws {
        let look = SharedLUTs.look
        let raw = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("frame.i420").path
        // 64×48 I420: rows unpadded (Y 64 bytes, U and V 32), so the file is three compact planes.
        let caps = "video/x-raw,format=I420,width=64,height=48"
        let launched = try gst(
            "gst-launch-1.0",
            [
                "-q", "videotestsrc", "num-buffers=1", "pattern=smpte", "!", caps, "!",
                "ftlut", "creative-lut=\(look)", "intensity=0.7", "!", "filesink",
                "location=\(raw)",
            ])
        XCTAssertEqual(launched.status, 0, launched.stderr)
        let input = try gst(
            "gst-launch-1.0",
            [
                "-q", "videotestsrc", "num-buffers=1", "pattern=smpte", "!", caps, "!",
                "filesink", "location=\(raw).in",
            ])
        XCTAssertEqual(input.status, 0, input.stderr)
        func frame(_ path: String) throws -> Frame420 {
            let bytes = [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: path)))
            guard bytes.count == 64 * 48 * 3 / 2 else {
                XCTFail("\(path): \(bytes.count) bytes, not one 64×48 I420 frame")
                throw CocoaError(.coderReadCorrupt)
            }
            return Frame420(
                width: 64, height: 48, y: Array(bytes[0..<3072]), u: Array(bytes[3072..<3840]),
                v: Array(bytes[3840..<4608]))
        }
        let (output, source) = (try frame(raw), try frame(raw + ".in"))
        XCTAssertNotEqual(output, source)
        let reference = try Look(creativeLUT: try CubeLUT.load(path: look), intensity: 0.7)
        // 48 lines without colorimetry in the caps: GStreamer's default, BT.601 limited range.
        XCTAssertLessThanOrEqual(
            output.maxDifference(source.reference(reference, .bt601)), 1,
            "the plugin's I420 samples against the reference")
        // The same look on NV12, the launch line as is.
        let nv12 = try gst(
            "gst-launch-1.0",
            [
                "-q", "videotestsrc", "num-buffers=5", "!",
                "video/x-raw,format=NV12,width=161,height=91", "!", "ftlut",
                "creative-lut=\(look)", "!", "fakesink",
            ])
        XCTAssertEqual(nv12.status, 0, nv12.stderr)
    }

    func testABadLUTFailsTheLaunchWithTheFileAndLine() throws {
        let bad = try TestEnvironment.temporaryDirectory(self).appendingPathComponent("bad.cube")
        try Data("LUT_3D_SIZE 2\n0 0 0\n".utf8).write(to: bad)
        let result = try gst(
            "gst-launch-1.0",
            [
                "videotestsrc", "num-buffers=1", "!", "ftlut", "creative-lut=\(bad.path)",
                "!", "fakesink",
            ])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue((result.stdout + result.stderr).contains("bad.cube:2:"), result.stdout + result.stderr)
    }

    // MARK: - fth264dec, fth265dec

    /// Each picture's checksum and time through `PARSER ! [FRAMING !] DECODER ! checksumsink` (a SHA-1 of the raw
    /// picture), then the decoder's output caps as `gst-launch-1.0 -v` prints them.
    private func checksums(
        _ fixture: String, demuxer: String, decoder: String, parser: String = "h264parse", framing: String? = nil
    ) throws -> (sums: [String], caps: String?) {
        let launch =
            [
                "filesrc", "location=\(try TestEnvironment.fixture(fixture))", "!", demuxer, "!", parser, "!",
            ] + (framing.map { [$0, "!"] } ?? []) + [decoder, "name=decoder", "!", "checksumsink"]
        let result = try gst("gst-launch-1.0", ["-q"] + launch)
        XCTAssertEqual(result.status, 0, "\(fixture) through \(decoder): \(result.stderr)")
        let verbose = try gst("gst-launch-1.0", ["-v"] + launch)
        let caps = verbose.stdout.split(separator: "\n").first { $0.contains("decoder.GstPad:src: caps = ") }
            .map { String($0[$0.range(of: "caps = ")!.upperBound...]) }
        return (result.stdout.split(separator: "\n").filter { !$0.contains("caps = ") }.map(String.init), caps)
    }

    /// fth264dec gives avdec_h264's pictures, bit for bit and at the same times, in plain gst-launch-1.0: MP4 with
    /// B-frames, variable rate and non-square pixels, Matroska, and MPEG-TS (byte-stream framing, no codec_data).
    func testH264DecoderGivesTheSamePicturesAsAvdec() throws {
        for (fixture, demuxer) in [
            ("bframes.mp4", "qtdemux"), ("vfr.mp4", "qtdemux"), ("anamorphic.mp4", "qtdemux"),
            ("clip.mkv", "matroskademux"), ("clip.ts", "tsdemux"),
        ] {
            let own = try checksums(fixture, demuxer: demuxer, decoder: "fth264dec").sums
            let libav = try checksums(fixture, demuxer: demuxer, decoder: "avdec_h264").sums
            XCTAssertGreaterThan(own.count, 10, "\(fixture): \(own.count) pictures")
            XCTAssertEqual(own, libav, "\(fixture): not avdec_h264's pictures")
        }
    }

    /// fth265dec gives avdec_h265's pictures, bit for bit, at the same times and under the same caps (10-bit
    /// I420_10LE, the chroma siting, the colorimetry, HDR10's metadata): 8-bit HEVC in MP4, Main 10 in MOV
    /// (`hvc1`) and Matroska, HLG and PQ with mastering metadata (`hev1`), and byte-stream framing with its
    /// parameter sets in band. fth264dec likewise on 10-bit H.264 (High 10).
    func testOwnDecodersGiveAvdecsPicturesAndCapsAt8And10Bits() throws {
        let cases: [(String, String, String, String?)] = [
            ("matrix-hevc8.mp4", "qtdemux", "h265parse", nil), ("matrix-hevc10.mov", "qtdemux", "h265parse", nil),
            ("matrix-hevc10.mkv", "matroskademux", "h265parse", nil), ("hdr-hlg.mp4", "qtdemux", "h265parse", nil),
            ("hdr-pq4000.mp4", "qtdemux", "h265parse", nil),
            ("matrix-hevc10.mov", "qtdemux", "h265parse", "video/x-h265,stream-format=byte-stream"),
            ("matrix-h264-high10.mp4", "qtdemux", "h264parse", nil),
        ]
        for (fixture, demuxer, parser, framing) in cases {
            let what = "\(fixture)\(framing.map { " as \($0)" } ?? "")"
            let isHEVC = parser == "h265parse"
            let own = try checksums(
                fixture, demuxer: demuxer, decoder: isHEVC ? "fth265dec" : "fth264dec", parser: parser,
                framing: framing)
            let libav = try checksums(
                fixture, demuxer: demuxer, decoder: isHEVC ? "avdec_h265" : "avdec_h264", parser: parser,
                framing: framing)
            XCTAssertGreaterThan(own.sums.count, 10, "\(what): \(own.sums.count) pictures")
            XCTAssertEqual(own.sums, libav.sums, "\(what): not avdec's pictures")
            XCTAssertEqual(own.caps, libav.caps, "\(what): not avdec's caps")
            XCTAssertNotNil(own.caps, what)
        }
    }

    /// ftav1dec (dav1d through libavcodec) gives libaom's `av1dec` pictures, bit for bit and at the same times (AV1
    /// decoding is exact), the same colorimetry in the caps and the same RGB through videoconvert: 8-bit SD and HD
    /// without colours stated (then neither states any, and converters fill them in by the size), and 10-bit HLG,
    /// whose colours both state.
    func testAV1DecoderGivesTheSamePicturesAsAv1dec() throws {
        for (fixture, demuxer) in [
            ("matrix-av1.mkv", "matroskademux"), ("av1-hlg10.mkv", "matroskademux"), ("av1-720.mp4", "qtdemux"),
        ] {
            let own = try checksums(fixture, demuxer: demuxer, decoder: "ftav1dec", parser: "av1parse")
            let libaom = try checksums(fixture, demuxer: demuxer, decoder: "av1dec", parser: "av1parse")
            XCTAssertGreaterThan(own.sums.count, 10, "\(fixture): \(own.sums.count) pictures")
            XCTAssertEqual(own.sums, libaom.sums, "\(fixture): not av1dec's pictures")
            let colorimetry = { (caps: String?) in
                caps?.split(separator: ",").first { $0.contains("colorimetry=") }.map(String.init)
            }
            XCTAssertEqual(colorimetry(own.caps), colorimetry(libaom.caps), "\(fixture): \(own.caps ?? "")")
            let rgb = try ["ftav1dec", "av1dec"].map { decoder in
                try gst(
                    "gst-launch-1.0",
                    [
                        "-q", "filesrc", "location=\(try TestEnvironment.fixture(fixture))", "!", demuxer, "!",
                        "av1parse", "!", decoder, "!", "videoconvert", "!", "video/x-raw,format=RGB", "!",
                        "checksumsink",
                    ]
                ).stdout
            }
            XCTAssertEqual(rgb[0], rgb[1], "\(fixture): not av1dec's RGB")
        }
        let hlg = try checksums("av1-hlg10.mkv", demuxer: "matroskademux", decoder: "ftav1dec", parser: "av1parse")
        XCTAssertTrue(hlg.caps?.contains("I420_10LE") == true && hlg.caps?.contains("bt2100-hlg") == true, "\(hlg)")
        let inspect = try gst("gst-inspect-1.0", ["ftav1dec"])
        XCTAssertEqual(inspect.status, 0, inspect.stderr)
        for text in ["AV1 decoder (libavcodec)", "video/x-av1", "obu-stream", "tu", "4:2:0", "I420_10LE"] {
            XCTAssertTrue(inspect.stdout.contains(text), "gst-inspect-1.0 ftav1dec lacks \(text)")
        }
    }

    /// What it does not decode as avdec_h264 does (4:4:4 here) it leaves out of its template: decodebin then offers
    /// the stream to avdec_h264. The refusal itself, in a running pipeline, is
    /// `OwnDecoderFallbackTests.testTheElementRefusesInterlacedAnd444CapsByName`: in process, because
    /// gst-launch-1.0 1.22 now and then never exits after an error during preroll (its main loop's quit can come
    /// before the loop runs; 7 runs in 50 with ftgst's plugin of before issue 30 too).
    func testH264DecoderRefusesOtherProfiles() throws {
        let inspect = try gst("gst-inspect-1.0", ["fth264dec"])
        XCTAssertEqual(inspect.status, 0, inspect.stderr)
        for text in [
            "Codec/Decoder/Video", "secondary", "output-corrupt", "max-threads", "progressive-high", "high-10", "I420",
            "I420_10LE",
        ] {
            XCTAssertTrue(inspect.stdout.contains(text), "gst-inspect-1.0 fth264dec lacks \(text)")
        }
        XCTAssertFalse(inspect.stdout.contains("4:4:4"), "a 4:4:4 profile in the template")
        let hevc = try gst("gst-inspect-1.0", ["fth265dec"])
        XCTAssertEqual(hevc.status, 0, hevc.stderr)
        for text in ["HEVC decoder (libavcodec)", "secondary", "video/x-h265", "hvc1", "main-10", "I420_10LE"] {
            XCTAssertTrue(hevc.stdout.contains(text), "gst-inspect-1.0 fth265dec lacks \(text)")
        }
        XCTAssertFalse(hevc.stdout.contains("main-12") || hevc.stdout.contains("main-444"), "a profile it cannot take")
    }

    /// A damaged stream (every 50th TS packet's payload overwritten) is decoded as far as it goes or fails with an
    /// error: the process ends by itself, never by a signal.
    func testH264DecoderSurvivesADamagedStream() throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try TestEnvironment.fixture("clip.ts"))))
        var packet = 188 * 7
        while packet + 188 <= bytes.count {
            for i in (packet + 8)..<(packet + 188) { bytes[i] = UInt8(truncatingIfNeeded: i &* 31) }
            packet += 188 * 50
        }
        let damaged = FileManager.default.temporaryDirectory.appendingPathComponent("ftgst-damaged-\(UUID()).ts")
        try Data(bytes).write(to: damaged)
        defer { try? FileManager.default.removeItem(at: damaged) }
        for outputCorrupt in ["true", "false"] {
            let result = try gst(
                "gst-launch-1.0",
                [
                    "-q", "filesrc", "location=\(damaged.path)", "!", "tsdemux", "!", "h264parse", "!", "fth264dec",
                    "output-corrupt=\(outputCorrupt)", "!", "checksumsink",
                ])
            XCTAssertTrue([0, 1].contains(result.status), "status \(result.status): \(result.stderr)")
            XCTAssertGreaterThan(result.stdout.split(separator: "\n").count, 10, "pictures before and after damage")
        }
    }

    /// libavcodec is opened when the element starts: one that cannot be opened, or a library that is not
    /// libavcodec of the major version ftgst was built for, fails the pipeline with the reason; nothing is read
    /// through a wrong structure layout.
    func testH264DecoderNamesALibavcodecItCannotUse() throws {
        let clip = try TestEnvironment.fixture("matrix-h264-bframes.mp4")
        let launch = [
            "filesrc", "location=\(clip)", "!", "qtdemux", "!", "h264parse", "!", "fth264dec", "!", "fakesink",
        ]
        for (library, reason) in [
            ("/nonexistent/libavcodec.so.59", "cannot open /nonexistent/libavcodec.so.59"),
            (Libav.utilityLibraryName, "missing in \(Libav.utilityLibraryName): avcodec_version"),
        ] {
            let result = try gst("gst-launch-1.0", launch, environment: ["FTGST_LIBAVCODEC": library])
            XCTAssertNotEqual(result.status, 0, library)
            XCTAssertTrue((result.stdout + result.stderr).contains(reason), result.stdout + result.stderr)
        }
        XCTAssertEqual(try gst("gst-launch-1.0", ["-q"] + launch).status, 0, "the default library")
    }

    /// ftx264enc gives ffmpeg's libx264 stream byte for byte with the same settings (`-preset veryfast -crf 20 -g
    /// 250`): B-frames and a GOP longer than the clip, non-square pixels, SD colours stated by the stream and a
    /// centred chroma siting, none stated, 1080p. Then the same encode muxed by mp4mux has ffmpeg's packet times and
    /// keyframe flags (B-frames' decoding times before 0).
    func testX264EncoderGivesFfmpegsLibx264StreamByteForByte() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("ftgst-x264-\(UUID())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let settings = ["speed-preset=veryfast", "crf=20", "key-int-max=250"]
        let ffmpegSettings = ["-an", "-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-g", "250"]
        for fixture in ["matrix-h264-bframes.mp4", "anamorphic.mp4", "clip.mp4", "bars480.mp4", "longgop.mp4"] {
            let clip = try TestEnvironment.fixture(fixture)
            let own = scratch.appendingPathComponent("own.h264").path
            let reference = scratch.appendingPathComponent("ffmpeg.h264").path
            let encoded = try gst(
                "gst-launch-1.0",
                [
                    "-q", "filesrc", "location=\(clip)", "!", "qtdemux", "!", "h264parse", "!", "avdec_h264", "!",
                    "ftx264enc",
                ]
                    + settings + ["!", "filesink", "location=\(own)"])
            XCTAssertEqual(encoded.status, 0, "\(fixture): \(encoded.stderr)")
            let ffmpeg = try Run.tool(
                "ffmpeg", ["-v", "error", "-y", "-i", clip] + ffmpegSettings + ["-f", "h264", reference])
            XCTAssertEqual(ffmpeg.status, 0, ffmpeg.stderr)
            let ownBytes = try Data(contentsOf: URL(fileURLWithPath: own))
            XCTAssertGreaterThan(ownBytes.count, 1000, fixture)
            XCTAssertTrue(
                ownBytes == (try Data(contentsOf: URL(fileURLWithPath: reference))), "\(fixture): not ffmpeg's stream")
        }
        let clip = try TestEnvironment.fixture("matrix-h264-bframes.mp4")
        let own = scratch.appendingPathComponent("own.mp4").path
        let reference = scratch.appendingPathComponent("ffmpeg.mp4").path
        let muxed = try gst(
            "gst-launch-1.0",
            [
                "-q", "filesrc", "location=\(clip)", "!", "qtdemux", "!", "h264parse", "!", "avdec_h264", "!",
                "ftx264enc",
            ]
                + settings + ["!", "h264parse", "!", "mp4mux", "!", "filesink", "location=\(own)"])
        XCTAssertEqual(muxed.status, 0, muxed.stderr)
        XCTAssertEqual(
            try Run.tool("ffmpeg", ["-v", "error", "-y", "-i", clip] + ffmpegSettings + [reference]).status, 0)
        func packets(_ path: String) throws -> [String] {
            try Run.tool(
                "ffprobe",
                [
                    "-v", "error", "-select_streams", "v", "-show_entries", "packet=pts_time,dts_time,flags", "-of",
                    "csv", path,
                ]
            ).stdout.split(separator: "\n").map(String.init)
        }
        let ownPackets = try packets(own)
        XCTAssertGreaterThan(ownPackets.count, 10)
        XCTAssertTrue(ownPackets.first?.contains("-") ?? false, "no decoding time before 0: \(ownPackets.prefix(3))")
        XCTAssertEqual(ownPackets, try packets(reference))
    }

    /// Settings x264 refuses, and pictures it cannot take, fail the pipeline with the reason (checked in process
    /// in `X264EncoderElementTests`); here the element documents itself.
    func testX264EncoderDocumentsItsSettings() throws {
        let inspect = try gst("gst-inspect-1.0", ["ftx264enc"])
        XCTAssertEqual(inspect.status, 0, inspect.stderr)
        for text in [
            "Codec/Encoder/Video", "libx264", "speed-preset", "crf", "key-int-max", "threads", "tune", "I420",
            "byte-stream", "constrained-baseline",
        ] {
            XCTAssertTrue(inspect.stdout.contains(text), "gst-inspect-1.0 ftx264enc lacks \(text)")
        }
    }
}
