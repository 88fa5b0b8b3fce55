import FilmtoneTestSupport
import Foundation
import XCTest

/// Error codes that must not mislead, checked across every command that meets the case, through the built binary.
final class ErrorCodeCLITests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = try TestEnvironment.temporaryDirectory(self)
    }

    private func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// Each command that reads SOURCE, with its own options to write under the test's folder.
    private func commands(_ source: String) -> [(String, [String])] {
        [
            ("thumb", ["thumb", source, "--cache-dir", path("thumbs")]),
            ("preview", ["preview", source, "-o", path("p.png")]),
            ("export", ["export", source, "-o", path("e.png"), "--workspace", path("ws")]),
            ("mezzanine", ["mezzanine", source, "--cache-dir", path("mz")]),
        ]
    }

    // MARK: - Pictures GStreamer cannot decode

    /// A CMYK JPEG, an animated WebP and a HEIF image (AVIF) were `DECODE_FAILED` "Internal data stream error" or
    /// "no playable streams", as if the file were broken; they are `UNSUPPORTED_FORMAT`, saying what the file is. A
    /// 16-bit RGB PNG came out with wrong colours (red as yellow); it is refused the same way.
    func testPicturesGStreamerCannotDecodeAreUnsupportedFormatWithTheReason() throws {
        let cases: [(fixture: String, says: String, commands: Set<String>)] = [
            ("cmyk.jpg", "CMYK JPEG", ["thumb", "preview", "export", "mezzanine"]),
            // A mezzanine refuses any photo first ("a still image"), with the same code.
            ("animated.webp", "animated WebP", ["thumb", "preview", "export"]),
            ("photo.avif", "HEIF", ["thumb", "preview", "export", "mezzanine", "probe"]),
            // pngdec 1.22 decodes it without an error but with wrong colours: an export of it used to succeed. A
            // thumbnail decodes it through libpng, right (ThumbCLITests).
            ("deep16.png", "16-bit RGB PNG", ["preview", "export"]),
        ]
        for (fixture, says, names) in cases {
            let source = try TestEnvironment.fixture(fixture)
            var runs = commands(source).filter { names.contains($0.0) }
            if names.contains("probe") { runs.append(("probe", ["probe", source])) }
            for (name, words) in runs {
                let result = try Run.ftgst(words)
                assertFailure(result, code: "UNSUPPORTED_FORMAT", status: 67)
                XCTAssertTrue(result.stderr.contains(says), "\(name) \(fixture): \(result.stderr)")
            }
            if !names.contains("mezzanine") {
                assertFailure(
                    try Run.ftgst(["mezzanine", source, "--cache-dir", path("mz")]), code: "UNSUPPORTED_FORMAT",
                    status: 67)
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("p.png")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("e.png")))
    }

    // MARK: - Unreadable sources

    /// A source that exists but cannot be read was `DECODE_FAILED` in the commands that decode, `FILE_NOT_FOUND` in
    /// `save`, and a success in `share`; it is `FILE_NOT_FOUND` ("cannot read") in every command. As root no mode
    /// makes a file unreadable, so the test reads `/proc/self/mem`: a regular file whose first byte the kernel
    /// refuses (EIO). A mode-000 file is checked too where the tests do not run as root.
    func testAnUnreadableSourceIsFileNotFoundInEveryCommand() throws {
        var sources = ["/proc/self/mem"]
        if getuid() != 0 {
            let locked = path("locked.mp4")
            try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("clip.mp4"), toPath: locked)
            chmod(locked, 0)
            sources.append(locked)
        }
        for source in sources {
            var runs = commands(source)
            runs.append(("probe", ["probe", source]))
            runs.append(("save", ["save", source, "--library", path("library")]))
            runs.append(("share", ["share", source, "--print"]))
            for (name, words) in runs {
                let result = try Run.ftgst(words)
                assertFailure(result, code: "FILE_NOT_FOUND", status: 66)
                XCTAssertTrue(result.stderr.contains("cannot read \(source)"), "\(name): \(result.stderr)")
            }
        }
    }

    // MARK: - Damaged sources

    /// A clip whose index gives every frame the same time (zero-stts.mp4) decodes, but no muxer can write its
    /// frames: the export said `WRITE_FAILED` "Could not multiplex stream", sending the user to check the disk.
    /// It is the source: `DECODE_FAILED`, saying so, and nothing at OUT.
    func testAnExportOfFramesThatCannotBeMuxedIsDecodeFailed() throws {
        let out = path("z.mp4")
        let result = try Run.ftgst(
            ["export", try TestEnvironment.fixture("zero-stts.mp4"), "-o", out, "--workspace", path("ws")])
        assertFailure(result, code: "DECODE_FAILED", status: 68)
        XCTAssertTrue(result.stderr.contains("timestamps are broken"), result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: path("")).filter { $0.hasPrefix(".z.mp4") }, [],
            "a staged file was left")
    }

    /// A truncated PNG or WebP photo fails in the photo path's decoder (libpng, libwebp), which gives it to
    /// GStreamer: `DECODE_FAILED`, exit 68, no thumbnail, as before that path existed.
    func testATruncatedPhotoThumbnailIsDecodeFailed() throws {
        for name in ["noise.png", "photo.webp"] {
            let whole = try Data(contentsOf: URL(fileURLWithPath: try TestEnvironment.fixture(name)))
            let cut = path("cut-\(name)")
            try whole.prefix(whole.count * 2 / 3).write(to: URL(fileURLWithPath: cut))
            assertFailure(
                try Run.ftgst(["thumb", cut, "--cache-dir", path("thumbs")]), code: "DECODE_FAILED", status: 68)
            let written = (try? FileManager.default.contentsOfDirectory(atPath: path("thumbs"))) ?? []
            XCTAssertEqual(written.filter { $0.hasPrefix("thumb-") }, [], name)
        }
    }

    // MARK: - Mezzanine folders that cannot be written

    /// A mezzanine folder that cannot be written is `WRITE_FAILED`, never another code. Tests run as root, for whom
    /// no mode makes a folder unwritable: a folder under a regular file cannot exist, and a regular file is no
    /// folder.
    func testAMezzanineFolderThatCannotBeWrittenIsWriteFailed() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let plain = path("plain")
        try Data([1]).write(to: URL(fileURLWithPath: plain))
        for folder in [plain + "/mezzanines", plain] {
            assertFailure(
                try Run.ftgst(["mezzanine", clip, "--cache-dir", folder]), code: "WRITE_FAILED", status: 73)
            assertFailure(
                try Run.ftgst(
                    [
                        "export", clip, "-o", path("e.mp4"), "--mezzanine", "--max-width", "64", "--workspace",
                        path("ws"),
                    ],
                    environment: ["XDG_CACHE_HOME": folder]),
                code: "WRITE_FAILED", status: 73)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("e.mp4")))
    }

    // MARK: - URLs

    /// A port out of range and a malformed `%`-escape were handed to GStreamer (`REMOTE_FETCH_FAILED` "Error parsing
    /// URL", or a connection attempt), or read as a file name with a literal `%`; they are `INVALID_URL`, before
    /// anything is opened, in every command.
    func testPortsOutOfRangeAndMalformedEscapesAreInvalidURL() throws {
        let urls = [
            "http://127.0.0.1:99999/a.mp4", "http://127.0.0.1:65536/a.mp4", "https://127.0.0.1:0/a.mp4",
            "http://127.0.0.1/a%zz.mp4", "http://127.0.0.1/a%2", "file:///tmp/a%zz.mp4", "file:///tmp/a%00.mp4",
            "file:///tmp/a%2Fb.mp4", "file://localhost:80/tmp/a.mp4",
        ]
        for url in urls {
            var runs = commands(url)
            runs.append(("probe", ["probe", url]))
            for (name, words) in runs {
                let result = try Run.ftgst(words + ["--timeout-ms", "5000"])
                assertFailure(result, code: "INVALID_URL", status: 65)
                XCTAssertFalse(result.stderr.contains("GStreamer"), "\(name) \(url): \(result.stderr)")
            }
        }
        // A file name with a literal '%' is a path, not a URI: still only missing.
        assertFailure(try Run.ftgst(["probe", path("50%.mp4")]), code: "FILE_NOT_FOUND", status: 66)
    }

    // MARK: - Request files

    private func request(_ text: String) throws -> String {
        let file = path("request-\(UUID().uuidString).json")
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }

    /// `"intensity": 1`, `"toleranceMs": 0` and `"startMs": 0` were refused as "must be a number" (Foundation on
    /// Linux reads 0 and 1 as booleans); every JSON number is a number.
    func testRequestFilesTakeZeroAndOneAsNumbers() throws {
        let photo = try TestEnvironment.fixture("photo.png")
        let preview = try request(
            #"{"source": "\#(photo)", "output": "\#(path("zero-one.png"))", "intensity": 1, "toleranceMs": 0, "#
                + #""timeMs": 0, "quality": 1, "maxWidth": 100}"#)
        let result = try Run.ftgst(["preview", "--request", preview])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try result.json()["width"] as? Int, 100)

        let clip = try TestEnvironment.fixture("clip.mp4")
        let export = try request(
            #"{"source": "\#(clip)", "output": "\#(path("zero.mp4"))", "intensity": 1, "startMs": 0, "endMs": 1000, "#
                + #""maxWidth": 64, "workspace": "\#(path("ws"))"}"#)
        let exported = try Run.ftgst(["export", "--request", export], timeout: 120)
        XCTAssertEqual(exported.status, 0, exported.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path("zero.mp4")))
    }

    /// A key written twice was read as whichever one Foundation kept; it is `INVALID_ARGUMENT` naming the key, and
    /// nothing is written.
    func testRequestFilesWithADuplicateKeyAreRefused() throws {
        let photo = try TestEnvironment.fixture("photo.png")
        let body =
            #"{"source": "\#(photo)", "output": "\#(path("dup.png"))", "intensity": 0.2, "intensity": 1}"#
        for command in ["preview", "export"] {
            let workspace = command == "export" ? ["--workspace", path("ws")] : []
            let result = try Run.ftgst([command, "--request", try request(body)] + workspace)
            assertFailure(result, code: "INVALID_ARGUMENT", status: 64)
            XCTAssertTrue(result.stderr.contains("duplicate key 'intensity'"), "\(command): \(result.stderr)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("dup.png")))
        assertFailure(
            try Run.ftgst(["preview", "--request", try request(#"{"source": "a.png", "intensity": true}"#)]),
            code: "INVALID_ARGUMENT", status: 64)
    }
}
