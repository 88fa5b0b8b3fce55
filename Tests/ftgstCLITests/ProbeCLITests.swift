import FilmtoneTestSupport
import Foundation
import XCTest

/// `ftgst probe` end to end through the built binary: local fixtures, a remote source that needs a header, the
/// error codes, and a cross-check against ffprobe.
final class ProbeCLITests: XCTestCase {
    private func probe(_ source: String, _ options: [String] = []) throws -> ProcessResult {
        try Run.ftgst(["probe", source] + options)
    }

    /// A successful run: status 0, empty stderr, one line of JSON.
    private func success(_ result: ProcessResult, file: StaticString = #filePath, line: UInt = #line) throws
        -> [String: Any]
    {
        XCTAssertEqual(result.status, 0, "stderr: \(result.stderr)", file: file, line: line)
        XCTAssertEqual(result.stderr, "", file: file, line: line)
        XCTAssertEqual(result.stdout.filter { $0 == "\n" }.count, 1, "one line of JSON", file: file, line: line)
        return try result.json(file: file, line: line)
    }

    private func probeFixture(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws
        -> (json: [String: Any], video: [String: Any])
    {
        let json = try success(try probe(try TestEnvironment.fixture(name)), file: file, line: line)
        let video = try XCTUnwrap(json["video"] as? [String: Any], "video object", file: file, line: line)
        return (json, video)
    }

    // MARK: - Videos

    func testClipDescribesContainerVideoAndAudio() throws {
        let result = try probe(try TestEnvironment.fixture("clip.mp4"))
        let (json, video) = try probeFixture("clip.mp4")
        // Keys in the documented order.
        XCTAssertTrue(
            result.stdout.hasPrefix(
                #"{"container":"mp4","isImage":false,"durationMs":3000,"video":{"codec":"h264","profile":"high","width":320,"height":240,"displayWidth":320,"displayHeight":240,"rotation":0,"pixelAspectRatio":"1/1","frameRate":"30/1","frameCount":90,"bitDepth":8,"chromaFormat":"4:2:0","colorimetry":{"primaries":"#
            ), result.stdout)
        XCTAssertEqual(json["container"] as? String, "mp4")
        XCTAssertEqual(json["isImage"] as? Bool, false)
        XCTAssertEqual(json["durationMs"] as? Int, 3000)
        XCTAssertEqual(video["codec"] as? String, "h264")
        XCTAssertEqual(video["width"] as? Int, 320)
        XCTAssertEqual(video["height"] as? Int, 240)
        XCTAssertEqual(video["frameRate"] as? String, "30/1")
        XCTAssertEqual(video["frameCount"] as? Int, 90)
        XCTAssertEqual(video["rotation"] as? Int, 0)
        XCTAssertEqual(video["bitDepth"] as? Int, 8)
        XCTAssertEqual(video["chromaFormat"] as? String, "4:2:0")
        XCTAssertEqual(video["hdr"] as? String, "none")
        // x264 writes a BT.601 (SMPTE 170M) VUI for this SD clip; ffprobe agrees (see below).
        let colorimetry = try XCTUnwrap(video["colorimetry"] as? [String: Any])
        XCTAssertEqual(colorimetry["primaries"] as? String, "smpte170m")
        XCTAssertEqual(colorimetry["transfer"] as? String, "bt601")
        XCTAssertEqual(colorimetry["matrix"] as? String, "bt601")
        XCTAssertEqual(colorimetry["range"] as? String, "limited")
        let audio = try XCTUnwrap(json["audio"] as? [String: Any])
        XCTAssertEqual(audio["codec"] as? String, "aac")
        XCTAssertEqual(audio["channels"] as? Int, 2)
        XCTAssertEqual(audio["sampleRate"] as? Int, 48000)
        let transform = try XCTUnwrap(json["inputTransform"] as? [String: Any])
        XCTAssertEqual(transform["policy"] as? String, "passthrough")
        XCTAssertFalse((transform["reason"] as? String ?? "").isEmpty)
    }

    /// The same facts as ffprobe, an independent reader: codec, size, frame rate, frame count, colour.
    func testClipAgreesWithFFprobe() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let (json, video) = try probeFixture("clip.mp4")
        let ffprobe = try Run.tool(
            "ffprobe",
            [
                "-v", "error", "-show_entries",
                "stream=codec_type,codec_name,width,height,r_frame_rate,nb_frames,color_primaries,channels,sample_rate"
                    + ":format=duration", "-of", "json", clip,
            ])
        XCTAssertEqual(ffprobe.status, 0, ffprobe.stderr)
        let parsed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(ffprobe.stdout.utf8)) as? [String: Any])
        let streams = try XCTUnwrap(parsed["streams"] as? [[String: Any]])
        let theirVideo = try XCTUnwrap(streams.first { $0["codec_type"] as? String == "video" })
        let theirAudio = try XCTUnwrap(streams.first { $0["codec_type"] as? String == "audio" })
        XCTAssertEqual(video["codec"] as? String, theirVideo["codec_name"] as? String)
        XCTAssertEqual(video["width"] as? Int, theirVideo["width"] as? Int)
        XCTAssertEqual(video["height"] as? Int, theirVideo["height"] as? Int)
        XCTAssertEqual(video["frameRate"] as? String, theirVideo["r_frame_rate"] as? String)
        XCTAssertEqual((video["frameCount"] as? Int).map(String.init), theirVideo["nb_frames"] as? String)
        XCTAssertEqual(
            (video["colorimetry"] as? [String: Any])?["primaries"] as? String,
            theirVideo["color_primaries"] as? String)
        let audio = try XCTUnwrap(json["audio"] as? [String: Any])
        XCTAssertEqual(audio["codec"] as? String, theirAudio["codec_name"] as? String)
        XCTAssertEqual(audio["channels"] as? Int, theirAudio["channels"] as? Int)
        XCTAssertEqual((audio["sampleRate"] as? Int).map(String.init), theirAudio["sample_rate"] as? String)
        let format = try XCTUnwrap(parsed["format"] as? [String: Any])
        let seconds = try XCTUnwrap(Double(format["duration"] as? String ?? ""))
        XCTAssertEqual(Double(json["durationMs"] as? Int ?? 0) / 1000, seconds, accuracy: 0.05)
    }

    func testRotatedClipReportsRotationAndUprightSize() throws {
        let (_, video) = try probeFixture("rotated.mp4")
        // ffprobe says rotation 90 (counter-clockwise display matrix); GStreamer's convention is 270 clockwise.
        XCTAssertEqual(video["rotation"] as? Int, 270)
        XCTAssertEqual(video["width"] as? Int, 320)
        XCTAssertEqual(video["height"] as? Int, 240)
        XCTAssertEqual(video["displayWidth"] as? Int, 240)
        XCTAssertEqual(video["displayHeight"] as? Int, 320)
    }

    func testAnamorphicClipReportsPixelAspectAndDisplayWidth() throws {
        let (json, video) = try probeFixture("anamorphic.mp4")
        XCTAssertEqual(video["width"] as? Int, 360)
        XCTAssertEqual(video["pixelAspectRatio"] as? String, "16/9")
        XCTAssertEqual(video["displayWidth"] as? Int, 640)
        XCTAssertEqual(video["displayHeight"] as? Int, 240)
        XCTAssertTrue(json["audio"] is NSNull, "no audio stream: null")
    }

    func testTenBitHEVCReadsDepthFromTheParser() throws {
        let (_, video) = try probeFixture("hevc10.mp4")
        XCTAssertEqual(video["codec"] as? String, "h265")
        XCTAssertEqual(video["profile"] as? String, "main-10")
        XCTAssertEqual(video["bitDepth"] as? Int, 10)
        XCTAssertEqual(video["chromaFormat"] as? String, "4:2:0")
        XCTAssertEqual(video["frameCount"] as? Int, 30)
    }

    func testOddSizedClipIsFourFourFour() throws {
        let (_, video) = try probeFixture("odd.mp4")
        XCTAssertEqual(video["width"] as? Int, 321)
        XCTAssertEqual(video["height"] as? Int, 241)
        XCTAssertEqual(video["chromaFormat"] as? String, "4:4:4")
        XCTAssertEqual(video["profile"] as? String, "high-4:4:4")
    }

    // MARK: - Photos

    func testJPEGWithEXIFOrientation() throws {
        let (json, video) = try probeFixture("photo-exif.jpg")
        XCTAssertEqual(json["container"] as? String, "jpeg")
        XCTAssertEqual(json["isImage"] as? Bool, true)
        XCTAssertTrue(json["durationMs"] is NSNull, "photos have no duration")
        XCTAssertEqual(video["codec"] as? String, "jpeg")
        XCTAssertEqual(video["rotation"] as? Int, 90)
        XCTAssertEqual(video["width"] as? Int, 320)
        XCTAssertEqual(video["height"] as? Int, 240)
        XCTAssertEqual(video["displayWidth"] as? Int, 240)
        XCTAssertEqual(video["displayHeight"] as? Int, 320)
        XCTAssertEqual(video["bitDepth"] as? Int, 8)
        XCTAssertEqual(video["chromaFormat"] as? String, "4:2:0")
        XCTAssertTrue(video["frameRate"] is NSNull)
        XCTAssertEqual(video["frameCount"] as? Int, 1)
        XCTAssertEqual((json["inputTransform"] as? [String: Any])?["policy"] as? String, "assume-srgb")
    }

    func testPNG() throws {
        let (json, video) = try probeFixture("photo.png")
        XCTAssertEqual(json["container"] as? String, "png")
        XCTAssertEqual(json["isImage"] as? Bool, true)
        XCTAssertEqual(video["codec"] as? String, "png")
        XCTAssertEqual(video["width"] as? Int, 200)
        XCTAssertEqual(video["height"] as? Int, 150)
        XCTAssertEqual(video["rotation"] as? Int, 0)
        XCTAssertEqual(video["bitDepth"] as? Int, 8, "from the IHDR chunk")
        XCTAssertEqual(video["chromaFormat"] as? String, "4:4:4")
        XCTAssertTrue(json["audio"] is NSNull)
    }

    // MARK: - Remote

    func testRemoteSourceSendsTheHeaderAndFailsWithoutIt() throws {
        let server = try HTTPTestServer.serving("clip.mp4", in: self).server
        defer { server.stop() }

        let json = try success(try probe(server.url("/auth/clip.mp4"), ["--header", "X-Token: secret"]))
        XCTAssertEqual(json["container"] as? String, "mp4")
        XCTAssertEqual(json["durationMs"] as? Int, 3000)
        XCTAssertEqual((json["video"] as? [String: Any])?["frameCount"] as? Int, 90)
        XCTAssertEqual((json["audio"] as? [String: Any])?["codec"] as? String, "aac")
        let media = server.requests.filter { $0.path == "/auth/clip.mp4" }
        XCTAssertFalse(media.isEmpty)
        XCTAssertTrue(media.allSatisfy { $0.headers["x-token"] == "secret" }, "the header is on every request")
        XCTAssertTrue(media.allSatisfy { $0.headers["user-agent"]?.hasPrefix("ftgst/") == true })

        assertFailure(try probe(server.url("/auth/clip.mp4")), code: "REMOTE_FETCH_FAILED", status: 69)
        assertFailure(try probe(server.url("/media/missing.mp4")), code: "REMOTE_FETCH_FAILED", status: 69)
        let notFound = try probe(server.url("/status/404/clip.mp4"))
        assertFailure(notFound, code: "REMOTE_FETCH_FAILED", status: 69)
        XCTAssertTrue(notFound.stderr.contains("HTTP 404"), notFound.stderr)
    }

    /// A faststart file on a server without Range is described in full (the probe never seeks).
    func testRemoteSourceWithoutRangeSupport() throws {
        let server = try HTTPTestServer.serving("clip-faststart.mp4", in: self).server
        defer { server.stop() }
        let json = try success(try probe(server.url("/norange/clip.mp4")))
        XCTAssertEqual(json["durationMs"] as? Int, 3000)
        XCTAssertEqual((json["video"] as? [String: Any])?["frameCount"] as? Int, 90)
    }

    // MARK: - Errors

    func testErrorsUseThumbsCodes() throws {
        assertFailure(try probe("ftp://example.com/a.mp4"), code: "INVALID_URL", status: 65)
        assertFailure(try probe("http://"), code: "INVALID_URL", status: 65)
        assertFailure(try probe("/nonexistent/clip.mp4"), code: "FILE_NOT_FOUND", status: 66)
        assertFailure(try probe(TestEnvironment.fixtures.path), code: "FILE_NOT_FOUND", status: 66)
        for name in ["truncated.mp4", "garbage.bin", "empty.mp4"] {
            assertFailure(try probe(try TestEnvironment.fixture(name)), code: "DECODE_FAILED", status: 68)
        }
        assertFailure(try probe(try TestEnvironment.fixture("notmedia.html")), code: "UNSUPPORTED_FORMAT", status: 67)
    }

    func testUsageErrors() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        assertFailure(try Run.ftgst(["probe"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try Run.ftgst(["probe", clip, clip]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try probe(clip, ["--timeout-ms", "0"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try probe(clip, ["--timeout-ms", "soon"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try probe(clip, ["--header", "no colon"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try probe(clip, ["--max-width", "10"]), code: "INVALID_ARGUMENT", status: 64)
        let help = try Run.ftgst(["probe", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.hasPrefix("usage: ftgst probe"), help.stdout)
    }
}
