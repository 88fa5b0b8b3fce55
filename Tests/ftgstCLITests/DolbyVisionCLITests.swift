import FilmtoneCore
import FilmtoneTestSupport
import Foundation
import XCTest

/// Dolby Vision (issue 30, item 2), through the built binary, on fixtures whose configuration records
/// `scripts/mp4-dovi` wrote (pipelines/fixtures/dovi-*): profile 8.4 (HLG base layer, `.mov` and Matroska), 8.1
/// (HDR10 base layer, moov first) and 5 (no compatible base layer: a `dvh1` entry, a plain `hvc1` entry, Matroska).
/// The profile 5 fixtures' samples are an ordinary PQ stream that GStreamer decodes without complaint, so only the
/// configuration record can make ftgst refuse them: exactly the case of a real profile 5 file, which decodes green
/// and purple.
final class DolbyVisionCLITests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = try TestEnvironment.temporaryDirectory(self)
    }

    private func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    private func probe(_ fixture: String) throws -> (video: [String: Any], transform: [String: Any]) {
        let result = try Run.ftgst(["probe", try TestEnvironment.fixture(fixture)])
        XCTAssertEqual(result.status, 0, "\(fixture): \(result.stderr)")
        let json = try result.json()
        return (
            try XCTUnwrap(json["video"] as? [String: Any], fixture),
            try XCTUnwrap(json["inputTransform"] as? [String: Any], fixture)
        )
    }

    func testProbeReportsTheConfigurationAndWhichLayerIsShown() throws {
        let showable: [(String, profile: Int, compatibility: Int, layer: String, hdr: String)] = [
            ("dovi-p84.mov", 8, 4, "hlg", "hlg"), ("dovi-p84.mkv", 8, 4, "hlg", "hlg"),
            ("dovi-p81.mp4", 8, 1, "hdr10", "pq"),
        ]
        for (fixture, profile, compatibility, layer, hdr) in showable {
            let (video, transform) = try probe(fixture)
            let dolbyVision = try XCTUnwrap(video["dolbyVision"] as? [String: Any], fixture)
            XCTAssertEqual(dolbyVision["profile"] as? Int, profile, fixture)
            XCTAssertEqual(dolbyVision["level"] as? Int, 4, fixture)
            XCTAssertEqual(dolbyVision["compatibility"] as? Int, compatibility, fixture)
            XCTAssertEqual(dolbyVision["baseLayer"] as? String, layer, fixture)
            XCTAssertEqual(dolbyVision["enhancementLayer"] as? Bool, false, fixture)
            XCTAssertEqual(video["hdr"] as? String, hdr, fixture)
            XCTAssertEqual(transform["policy"] as? String, "hdr-to-sdr", fixture)
            let reason = try XCTUnwrap(transform["reason"] as? String)
            XCTAssertTrue(
                reason.hasPrefix("Dolby Vision 8.\(compatibility), shown through its \(layer) base layer; "), reason)
            XCTAssertTrue((transform["applied"] as? String)?.hasPrefix("tone-map: ") == true, fixture)
        }
        for fixture in ["dovi-p5.mp4", "dovi-p5.mov", "dovi-p5.mkv"] {
            let (video, transform) = try probe(fixture)
            let dolbyVision = try XCTUnwrap(video["dolbyVision"] as? [String: Any], fixture)
            XCTAssertEqual(dolbyVision["profile"] as? Int, 5, fixture)
            XCTAssertEqual(dolbyVision["level"] as? Int, 6, fixture)
            XCTAssertEqual(dolbyVision["compatibility"] as? Int, 0, fixture)
            XCTAssertTrue(dolbyVision["baseLayer"] is NSNull, fixture)
            XCTAssertEqual(transform["applied"] as? String, "none", fixture)
            XCTAssertTrue((transform["reason"] as? String)?.contains("cannot be shown") == true, fixture)
        }
        // The same streams without the record, and other containers: null.
        for fixture in ["hdr-hlg.mp4", "hdr-pq.mp4", "matrix-hevc10.mov", "matrix-hevc10.mkv", "clip.webm"] {
            XCTAssertTrue(try probe(fixture).video["dolbyVision"] is NSNull, fixture)
        }
    }

    /// Profiles 8.4 and 8.1 are shown as their base layers: the thumbnail is byte for byte the one of the same stream
    /// without the record (tone-mapped).
    func testShowableProfilesGiveTheirBaseLayersPicture() throws {
        let pairs = [
            ("dovi-p84.mov", "hdr-hlg.mp4"), ("dovi-p84.mkv", "hdr-hlg.mp4"), ("dovi-p81.mp4", "hdr-pq.mp4"),
        ]
        for (fixture, plain) in pairs {
            var pictures: [Data] = []
            for (index, source) in [fixture, plain].enumerated() {
                let output = path("\(fixture)-\(index).png")
                let result = try Run.ftgst([
                    "thumb", try TestEnvironment.fixture(source), "--time-ms", "500", "--tolerance-ms", "0", "-o",
                    output,
                ])
                XCTAssertEqual(result.status, 0, "\(source): \(result.stderr)")
                pictures.append(try Data(contentsOf: URL(fileURLWithPath: output)))
            }
            XCTAssertFalse(pictures[0].isEmpty)
            XCTAssertEqual(pictures[0], pictures[1], "\(fixture) against \(plain)")
        }
    }

    /// Profile 5 in each of its three forms: every command that shows or encodes pictures refuses it with
    /// UNSUPPORTED_FORMAT, saying why, and writes nothing.
    func testProfile5IsRefusedByEveryCommandThatShowsPictures() throws {
        for fixture in ["dovi-p5.mp4", "dovi-p5.mov", "dovi-p5.mkv"] {
            let source = try TestEnvironment.fixture(fixture)
            let runs: [(String, [String])] = [
                ("thumb", ["thumb", source, "--cache-dir", path("thumbs")]),
                ("thumb -o", ["thumb", source, "-o", path("t.png")]),
                ("preview", ["preview", source, "-o", path("p.png")]),
                ("storyboard", ["storyboard", source, "-o", path("sb"), "--every", "0.5"]),
                ("thumbnailer", ["thumbnailer", "-s", "128", "-i", source, "-o", path("tn.png")]),
                ("export", ["export", source, "-o", path("e.mp4"), "--workspace", path("ws")]),
                ("export --dry-run", ["export", source, "-o", path("e.mp4"), "--dry-run"]),
                ("mezzanine", ["mezzanine", source, "--cache-dir", path("mz")]),
            ]
            for (name, words) in runs {
                let result = try Run.ftgst(words)
                assertFailure(result, code: "UNSUPPORTED_FORMAT", status: 67)
                XCTAssertTrue(
                    result.stderr.contains("[UNSUPPORTED_FORMAT] Dolby Vision profile 5 cannot be shown: "),
                    "\(name) \(fixture): \(result.stderr)")
                XCTAssertTrue(result.stderr.contains("IPTPQc2"), "\(name) \(fixture): \(result.stderr)")
            }
            for name in ["t.png", "p.png", "tn.png", "e.mp4"] {
                XCTAssertFalse(FileManager.default.fileExists(atPath: path(name)), "\(fixture): \(name)")
            }
            let storyboard = (try? FileManager.default.contentsOfDirectory(atPath: path("sb"))) ?? []
            XCTAssertEqual(storyboard, [], fixture)
            let thumbs = (try? FileManager.default.contentsOfDirectory(atPath: path("thumbs"))) ?? []
            XCTAssertFalse(thumbs.contains { $0.hasSuffix(".jpg") || $0.hasSuffix(".png") }, "\(fixture): \(thumbs)")
        }
    }

    /// In a batch the refusal is that job's result; the job beside it still runs.
    func testABatchJobOfProfile5FailsAloneWithTheCode() throws {
        let jobs = [
            [
                "id": "p5", "kind": "thumbnail", "source": try TestEnvironment.fixture("dovi-p5.mkv"), "timeMs": 500,
                "output": path("p5.png"),
            ],
            [
                "id": "p84", "kind": "thumbnail", "source": try TestEnvironment.fixture("dovi-p84.mov"), "timeMs": 500,
                "output": path("p84.png"),
            ],
        ]
        let lines = try jobs.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
        let file = path("jobs.jsonl")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let run = try Run.ftgst(["batch", file], timeout: 120)
        XCTAssertEqual(run.status, 65, run.stderr)
        let results = try run.stdout.split(separator: "\n").map {
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        XCTAssertEqual(results.count, 2, run.stdout)
        let failed = try XCTUnwrap(results.first { $0["id"] as? String == "p5" })
        let error = try XCTUnwrap(failed["error"] as? [String: Any], "\(failed)")
        XCTAssertEqual(error["code"] as? String, "UNSUPPORTED_FORMAT")
        XCTAssertTrue((error["message"] as? String)?.contains("Dolby Vision profile 5") == true, "\(error)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("p5.png")))
        XCTAssertTrue(FileManager.default.fileExists(atPath: path("p84.png")))
    }

    /// From a URL (a real HTTP server on 127.0.0.1) ftgst does not read the file itself: the record is found in the
    /// bytes entering the demuxer (`DolbyVisionScanner`), moov first or last, MP4 or Matroska. Profile 5 is refused
    /// with the same message by the frame commands and `export`; `probe` describes it; 8.4 is shown.
    func testRemoteSourcesAreJudgedFromTheBytesTheDemuxerReads() throws {
        let root = folder.appendingPathComponent("served")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        for name in ["dovi-p5.mp4", "dovi-p5.mov", "dovi-p5.mkv", "dovi-p84.mov", "dovi-p84.mkv", "dovi-p5-long.mp4"] {
            try FileManager.default.copyItem(
                atPath: try TestEnvironment.fixture(name), toPath: root.appendingPathComponent(name).path)
        }
        let server = try HTTPTestServer(root: root)
        defer { server.stop() }
        for name in ["dovi-p5.mp4", "dovi-p5.mov", "dovi-p5.mkv"] {
            let url = server.url("/media/\(name)")
            for (what, words) in [
                ("thumb", ["thumb", url, "-o", path("r.png")]), ("preview", ["preview", url, "-o", path("r.jpg")]),
                ("export", ["export", url, "-o", path("r.mp4"), "--workspace", path("ws")]),
            ] {
                let result = try Run.ftgst(words, timeout: 60)
                assertFailure(result, code: "UNSUPPORTED_FORMAT", status: 67)
                XCTAssertTrue(
                    result.stderr.contains("[UNSUPPORTED_FORMAT] Dolby Vision profile 5 cannot be shown: "),
                    "\(what) \(name): \(result.stderr)")
            }
            for output in ["r.png", "r.jpg", "r.mp4"] {
                XCTAssertFalse(FileManager.default.fileExists(atPath: path(output)), "\(name): \(output)")
            }
            let probe = try Run.ftgst(["probe", url], timeout: 60)
            XCTAssertEqual(probe.status, 0, "\(name): \(probe.stderr)")
            let video = try XCTUnwrap(try probe.json()["video"] as? [String: Any])
            let dolbyVision = try XCTUnwrap(video["dolbyVision"] as? [String: Any], "\(name)")
            XCTAssertEqual(dolbyVision["profile"] as? Int, 5, name)
        }
        // Refused as soon as the record arrives, not when the file has: served slowly (its first 64 KiB at once,
        // then 16 KiB/s: 40 s for the 0.7 MB file), the job must end with the refusal well within its 8 s deadline
        // (waiting for the file would end it as REMOTE_FETCH_FAILED, timed out).
        let slow = try Run.ftgst(
            ["thumb", server.url("/slow/dovi-p5-long.mp4"), "--timeout-ms", "8000", "-o", path("s.png")], timeout: 60)
        assertFailure(slow, code: "UNSUPPORTED_FORMAT", status: 67)
        XCTAssertTrue(slow.stderr.contains("Dolby Vision profile 5"), slow.stderr)
        // A server that ignores Range: the demuxer reads through the media data to the moov at the end.
        let unranged = try Run.ftgst(["thumb", server.url("/norange/dovi-p5.mov"), "-o", path("n.png")], timeout: 60)
        assertFailure(unranged, code: "UNSUPPORTED_FORMAT", status: 67)
        XCTAssertTrue(unranged.stderr.contains("Dolby Vision profile 5"), unranged.stderr)
        for name in ["dovi-p84.mov", "dovi-p84.mkv"] {
            let result = try Run.ftgst(
                ["thumb", server.url("/media/\(name)"), "--time-ms", "500", "-o", path("\(name).png")], timeout: 60)
            XCTAssertEqual(result.status, 0, "\(name): \(result.stderr)")
            let probe = try Run.ftgst(["probe", server.url("/media/\(name)")], timeout: 60)
            let video = try XCTUnwrap(try probe.json()["video"] as? [String: Any])
            XCTAssertEqual((video["dolbyVision"] as? [String: Any])?["baseLayer"] as? String, "hlg", name)
        }
    }

    /// The engine's preview of profile 5 is the same error, with the exit status as its code.
    func testTheEngineRefusesProfile5Previews() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = path("runtime")
        try FileManager.default.createDirectory(atPath: path("runtime"), withIntermediateDirectories: true)
        let engine = try EngineProcess(
            executable: TestEnvironment.binary, arguments: ["serve"], environment: environment)
        addTeardownBlock { engine.kill() }
        engine.request(
            id: 1, "renderPreviewFrame",
            .object([("source", .string(try TestEnvironment.fixture("dovi-p5.mp4"))), ("timeMs", .int(500))]))
        let response = try engine.response(id: 1)
        XCTAssertEqual(response["error"]?["code"]?.int, 67, response.serialized)
        XCTAssertEqual(response["error"]?["data"]?["code"]?.string, "UNSUPPORTED_FORMAT")
        XCTAssertTrue(response["error"]?["message"]?.string?.contains("Dolby Vision profile 5") == true)
        engine.request(
            id: 2, "renderPreviewFrame",
            .object([("source", .string(try TestEnvironment.fixture("dovi-p84.mov"))), ("timeMs", .int(500))]))
        XCTAssertNil(try engine.response(id: 2)["error"], "profile 8.4 is shown")
    }
}
