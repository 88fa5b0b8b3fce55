import FilmtoneTestSupport
import XCTest

@testable import FilmtoneLooks

/// `ftgst preview` end to end through the built binary.
final class PreviewCLITests: XCTestCase {
    private var folder: URL!
    private let look = SharedLUTs.look

    override func setUpWithError() throws {
        folder = try TestEnvironment.temporaryDirectory(self)
    }

    private func out(_ name: String) -> String { folder.appendingPathComponent(name).path }

    private func success(_ result: ProcessResult, file: StaticString = #filePath, line: UInt = #line) throws
        -> [String: Any]
    {
        XCTAssertEqual(result.status, 0, "stderr: \(result.stderr)", file: file, line: line)
        return try result.json(file: file, line: line)
    }

    func testPhotoPreviewAppliesTheLookLikeTheReference() throws {
        let photo = try TestEnvironment.fixture("photo.png")
        let json = try success(
            try Run.ftgst([
                "preview", photo, "--creative-lut", look, "--intensity", "0.6",
                "--interpolation", "trilinear", "-o", out("p.png"),
            ]))
        XCTAssertEqual(json["path"] as? String, out("p.png"))
        XCTAssertEqual(json["width"] as? Int, 200)
        XCTAssertEqual(json["height"] as? Int, 150)
        XCTAssertEqual(json["timeMs"] as? Int, 0)
        XCTAssertNotNil(json["renderMs"] as? Int)
        let rendered = try DecodedImage.read(out("p.png"))
        let source = try DecodedImage.read(photo)
        let reference = try Look(
            inputLUT: nil, creativeLUT: try CubeLUT.load(path: look), intensity: 0.6,
            interpolation: .trilinear)
        XCTAssertLessThanOrEqual(
            maxByteDifference(rendered.rgb, reference.referenceApply(toPacked: source.rgb)), 1,
            "PNG photo at native size: the look alone decides each pixel")
    }

    func testVideoPreviewIsTheExactFrameWithTheLook() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let plain = try success(try Run.ftgst(["preview", clip, "--time-ms", "1400", "-o", out("plain.png")]))
        XCTAssertEqual(plain["timeMs"] as? Int, 1400, "preview defaults to the exact frame")
        let looked = try success(
            try Run.ftgst([
                "preview", clip, "--time-ms", "1400", "--creative-lut", look,
                "-o", out("look.png"),
            ]))
        XCTAssertEqual(looked["timeMs"] as? Int, 1400)
        let a = try DecodedImage.read(out("plain.png"))
        let b = try DecodedImage.read(out("look.png"))
        XCTAssertGreaterThan(a.meanDifference(b), 5, "the look must show")
        // Intensity 0 is the plain frame.
        _ = try success(
            try Run.ftgst([
                "preview", clip, "--time-ms", "1400", "--creative-lut", look,
                "--intensity", "0", "-o", out("zero.png"),
            ]))
        XCTAssertEqual(try DecodedImage.read(out("zero.png")).rgb, a.rgb)
    }

    /// A video that starts later (an empty edit) used to wait out `--timeout-ms`: the sink prerolled on qtdemux's GAP.
    func testVideoThatStartsLaterShowsItsFirstFrame() throws {
        let offset = try TestEnvironment.fixture("offset.mp4")
        let clip = try TestEnvironment.fixture("clip.mp4")
        let probed = try XCTUnwrap(try Run.ftgst(["probe", offset]).json()["durationMs"] as? Int)
        let json = try success(
            try Run.ftgst(["preview", offset, "--time-ms", "0", "--timeout-ms", "20000", "-o", out("first.png")]))
        XCTAssertEqual(json["timeMs"] as? Int, probed - 3000, "the first frame, on probe's timeline")
        let frame = try DecodedImage.read(out("first.png"))
        XCTAssertLessThan(frame.meanDifference(try DecodedImage.frame(of: clip, index: 0, width: 320, height: 240)), 4)
    }

    func testRequestFileAndOverrides() throws {
        let request = folder.appendingPathComponent("request.json")
        let body: [String: Any] = [
            "source": try TestEnvironment.fixture("rotated.mp4"), "creativeLut": look,
            "intensity": 0.5, "timeMs": 1000, "maxWidth": 120, "format": "jpeg",
            "output": out("req.jpg"),
        ]
        try JSONSerialization.data(withJSONObject: body).write(to: request)
        let json = try success(try Run.ftgst(["preview", "--request", request.path]))
        XCTAssertEqual(json["path"] as? String, out("req.jpg"))
        XCTAssertEqual([json["width"] as? Int, json["height"] as? Int], [120, 160], "upright and scaled")
        let overridden = try success(
            try Run.ftgst([
                "preview", "--request", request.path, "--max-width", "60",
                "-o", out("req2.jpg"),
            ]))
        XCTAssertEqual(overridden["width"] as? Int, 60)
    }

    /// The output's extension is honoured (a JPEG under `.jpg`/`.jpeg`, a PNG under `.png`) or refused, never
    /// ignored: `-o x.jpg` used to write a PNG under that name.
    /// A preview written over what it reads is refused before anything runs, by path or through a hard link:
    /// the source, or a LUT file; each is left byte for byte as it was.
    func testAPreviewOverItsSourceOrLUTIsRefusedAndNothingIsLost() throws {
        let photo = out("photo.png")
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("photo.png"), toPath: photo)
        let link = out("link.png")
        try FileManager.default.linkItem(atPath: photo, toPath: link)
        let lut = out("look.cube")
        try FileManager.default.copyItem(atPath: look, toPath: lut)
        let photoBytes = try Data(contentsOf: URL(fileURLWithPath: photo))
        let lutBytes = try Data(contentsOf: URL(fileURLWithPath: lut))
        for (arguments, what) in [
            (["preview", photo, "-o", photo], "source"), (["preview", photo, "-o", link], "source"),
            (["preview", photo, "--creative-lut", lut, "-o", lut, "--format", "png"], "creative LUT"),
            (["preview", photo, "--input-lut", lut, "-o", lut, "--format", "png"], "input LUT"),
        ] {
            let result = try Run.ftgst(arguments)
            assertFailure(result, code: "INVALID_ARGUMENT", status: 64)
            XCTAssertTrue(result.stderr.contains("would overwrite the \(what)"), result.stderr)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: photo)), photoBytes)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: lut)), lutBytes)
    }

    /// A PNG is decoded by pngdec alone: GStreamer's pngparse, which decodebin would plug first, costs time
    /// quadratic in the file's size (a 24 MP PNG's preview failed at the 5 s local-stall rule with it).
    func testAPNGPreviewIsDecodedWithoutPNGParse() throws {
        let result = try Run.ftgst(
            ["preview", try TestEnvironment.fixture("photo.png"), "-o", out("p.png")],
            environment: ["GST_DEBUG": "GST_ELEMENT_FACTORY:4", "GST_DEBUG_NO_COLOR": "1"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("creating element \"pngdec\""), "the log names the elements made")
        XCTAssertFalse(result.stderr.contains("creating element \"pngparse\""), "pngparse was plugged")
    }

    func testTheOutputsExtensionDecidesTheEncodingOrIsRefused() throws {
        let photo = try TestEnvironment.fixture("photo.png")
        func magic(_ name: String) -> [UInt8] {
            Array((FileManager.default.contents(atPath: out(name)) ?? Data()).prefix(4))
        }
        let jpegMagic: [UInt8] = [0xFF, 0xD8, 0xFF]
        let pngMagic: [UInt8] = [0x89, 0x50, 0x4E, 0x47]
        for name in ["a.jpg", "b.JPEG", "c.jpeg"] {
            _ = try success(try Run.ftgst(["preview", photo, "-o", out(name)]))
            XCTAssertEqual(Array(magic(name).prefix(3)), jpegMagic, "\(name) holds a JPEG")
        }
        for (name, format) in [("d.png", []), ("e", []), ("f", ["--format", "jpeg"]), ("g.jpg", ["--format", "jpg"])] {
            _ = try success(try Run.ftgst(["preview", photo, "-o", out(name)] + format))
        }
        XCTAssertEqual(magic("d.png"), pngMagic)
        XCTAssertEqual(magic("e"), pngMagic, "no extension: PNG, as before")
        XCTAssertEqual(Array(magic("f").prefix(3)), jpegMagic)
        XCTAssertEqual(Array(magic("g.jpg").prefix(3)), jpegMagic)

        let refused: [(String, [String], String, Int32)] = [
            ("x.webp", [], "UNSUPPORTED_FORMAT", 67), ("x.gif", [], "UNSUPPORTED_FORMAT", 67),
            ("x.webp", ["--format", "png"], "UNSUPPORTED_FORMAT", 67),
            ("x.jpg", ["--format", "png"], "INVALID_ARGUMENT", 64),
            ("x.png", ["--format", "jpeg"], "INVALID_ARGUMENT", 64),
        ]
        for (name, format, code, status) in refused {
            let result = try Run.ftgst(["preview", photo, "-o", out(name)] + format)
            assertFailure(result, code: code, status: status)
            XCTAssertTrue(
                result.stderr.contains(name.split(separator: ".").last.map(String.init) ?? name), result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out(name)), "nothing written under \(name)")
        }
        // The same rule for a request file's output.
        let request = folder.appendingPathComponent("webp.json")
        try JSONSerialization.data(withJSONObject: ["source": photo, "output": out("r.webp")]).write(to: request)
        assertFailure(try Run.ftgst(["preview", "--request", request.path]), code: "UNSUPPORTED_FORMAT", status: 67)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out("r.webp")))
    }

    /// A faststart file on a server without Range: the preview reads forward to the exact frame (it failed with
    /// "Server does not support seeking").
    func testRemotePreviewWithoutRangeSupport() throws {
        let server = try HTTPTestServer.serving("clip-faststart.mp4", in: self).server
        defer { server.stop() }
        let json = try success(
            try Run.ftgst([
                "preview", server.url("/norange/clip.mp4"), "--time-ms", "1500", "--timeout-ms", "10000",
                "-o", out("norange.png"),
            ]))
        XCTAssertEqual(json["timeMs"] as? Int, 1500)
        let ours = try DecodedImage.read(out("norange.png"))
        let exact = try DecodedImage.frame(
            of: try TestEnvironment.fixture("clip-faststart.mp4"), index: 45, width: 320, height: 240)
        XCTAssertLessThan(ours.meanDifference(exact), 2)
    }

    func testRemotePreview() throws {
        let server = try HTTPTestServer.serving("clip-faststart.mp4", in: self).server
        defer { server.stop() }
        let json = try success(
            try Run.ftgst([
                "preview", server.url("/auth/clip.mp4"), "--header", "X-Token: secret",
                "--creative-lut", look, "--time-ms", "2000", "-o", out("remote.png"),
            ]))
        XCTAssertEqual(json["timeMs"] as? Int, 2000)
        XCTAssertTrue(server.requests.allSatisfy { $0.headers["x-token"] == "secret" })
    }

    func testErrorsLeaveNothingAtTheOutput() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let bad = folder.appendingPathComponent("bad.cube")
        try Data("LUT_3D_SIZE 2\n0 0 0\n".utf8).write(to: bad)
        let target = out("never.png")
        let cases: [([String], String, Int32)] = [
            (["--creative-lut", bad.path], "LUT_INVALID", 76),
            (["--input-lut", out("missing.cube")], "FILE_NOT_FOUND", 66),
            (["--intensity", "1.5"], "INVALID_ARGUMENT", 64),
            (["--interpolation", "cubic"], "INVALID_ARGUMENT", 64),
            (["--format", "gif"], "UNSUPPORTED_FORMAT", 67),
            (["--time-ms", "9000"], "DECODE_FAILED", 68),
        ]
        for (options, code, status) in cases {
            assertFailure(try Run.ftgst(["preview", clip, "-o", target] + options), code: code, status: status)
        }
        assertFailure(try Run.ftgst(["preview", clip]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try Run.ftgst(["preview", "/nonexistent.mp4", "-o", target]), code: "FILE_NOT_FOUND", status: 66)
        assertFailure(try Run.ftgst(["preview", "ftp://x/y.mp4", "-o", target]), code: "INVALID_URL", status: 65)
        assertFailure(
            try Run.ftgst(["preview", try TestEnvironment.fixture("truncated.mp4"), "-o", target]),
            code: "DECODE_FAILED", status: 68)
        let plainFile = out("plain-file")
        try Data([1]).write(to: URL(fileURLWithPath: plainFile))
        assertFailure(try Run.ftgst(["preview", clip, "-o", plainFile + "/x.png"]), code: "WRITE_FAILED", status: 73)
        let request = folder.appendingPathComponent("typo.json")
        try Data(#"{"source": "x.mp4", "intensty": 0.5}"#.utf8).write(to: request)
        assertFailure(
            try Run.ftgst(["preview", "--request", request.path, "-o", target]), code: "INVALID_ARGUMENT",
            status: 64)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target))
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted(),
            ["bad.cube", "plain-file", "typo.json"], "no temporary file left either")
    }
}
