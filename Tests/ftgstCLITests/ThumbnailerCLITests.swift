import FilmtoneTestSupport
import Foundation
import XCTest

/// `ftgst thumbnailer` (issue 13, item 5): the freedesktop Thumbnail Managing Standard's thumbnailer and cache
/// writer, and the installed `ftgst.thumbnailer` entry run by GNOME's own thumbnail factory inside bubblewrap.
final class ThumbnailerCLITests: XCTestCase {
    private var dir: URL!

    /// Not under /tmp: GNOME's sandbox binds its own folder over /tmp, and bwrap would make mount points for
    /// anything of ours below it there.
    override func setUpWithError() throws {
        dir = TestEnvironment.packageRoot.appendingPathComponent(".build/test-homes/\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    /// A PNG's `tEXt` entries and its size, read chunk by chunk (fails on a PNG that does not end in IEND).
    private func png(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws
        -> (width: Int, height: Int, text: [String: String])
    {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(
            Array(bytes.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], file: file, line: line)
        func be32(_ i: Int) -> Int {
            Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
        }
        var offset = 8
        var size = (0, 0)
        var text: [String: String] = [:]
        var ended = false
        while offset + 12 <= bytes.count {
            let length = be32(offset)
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let data = Array(bytes[(offset + 8)..<(offset + 8 + length)])
            if type == "IHDR" { size = (be32(offset + 8), be32(offset + 12)) }
            if type == "tEXt", let zero = data.firstIndex(of: 0) {
                text[String(decoding: data[..<zero], as: UTF8.self)] = String(
                    decoding: data[(zero + 1)...], as: UTF8.self)
            }
            if type == "IEND" { ended = true }
            offset += 12 + length
        }
        XCTAssertTrue(ended, "a complete PNG", file: file, line: line)
        return (size.0, size.1, text)
    }

    private func mtime(_ path: String) throws -> String {
        let date = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
        return String(Int64(date.timeIntervalSince1970.rounded(.down)))
    }

    /// The freedesktop cache's name of a URI: its MD5, by coreutils' md5sum.
    private func md5(_ text: String) throws -> String {
        let input = dir.appendingPathComponent("md5-input")
        try Data(text.utf8).write(to: input)
        let result = try Run.tool("md5sum", [input.path])
        return String(result.stdout.prefix(32))
    }

    private func copy(_ fixture: String, as name: String) throws -> String {
        let target = dir.appendingPathComponent(name).path
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture(fixture), toPath: target)
        return target
    }

    /// `-i IN -o OUT -s SIZE`: the picked frame (`--time auto`'s), in the box, as a PNG carrying the spec's keys.
    func testTheFactoryFormWritesAPNGWithTheSpecsKeys() throws {
        let video = try copy("dull-start.mp4", as: "dull start.mp4")
        let out = dir.appendingPathComponent("thumb.png").path
        let result = try Run.ftgst(["thumbnailer", "-s", "64", "-i", video, "-o", out])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "", "a desktop thumbnailer prints nothing (its stdout is the file manager's)")
        let image = try png(out)
        XCTAssertEqual([image.width, image.height], [64, 48])
        XCTAssertEqual(image.text["Thumb::URI"], "file://" + video.replacingOccurrences(of: " ", with: "%20"))
        XCTAssertEqual(image.text["Thumb::MTime"], try mtime(video))
        XCTAssertEqual(image.text["Thumb::Size"], String(try Data(contentsOf: URL(fileURLWithPath: video)).count))
        XCTAssertEqual(image.text["Thumb::Movie::Length"], "12")
        let reference = try DecodedImage.frame(of: video, index: 30, width: 64, height: 48)
        XCTAssertLessThan(try DecodedImage.read(out).meanDifference(reference), 4, "ffmpeg's frame at 3 s")

        // Never upscaled: a 200x150 photo asked for 512 stays 200x150 (and has no movie length).
        let photo = dir.appendingPathComponent("photo.png").path
        XCTAssertEqual(
            try Run.ftgst(["thumbnailer", "-s", "512", "-i", try TestEnvironment.fixture("photo.png"), "-o", photo])
                .status, 0)
        let still = try png(photo)
        XCTAssertEqual([still.width, still.height], [200, 150])
        XCTAssertNil(still.text["Thumb::Movie::Length"])
    }

    /// `Thumb::Mimetype`: the input's type by the shared MIME database's names, whichever way it was decoded
    /// (the photo path; a container opened from its first bytes; GStreamer's type finder for a TS).
    func testTheThumbnailSaysTheInputsMimeType() throws {
        let cases = [
            ("clip.mp4", "video/mp4"), ("clip.mkv", "video/x-matroska"), ("clip.webm", "video/webm"),
            ("clip.ts", "video/mp2t"), ("photo.jpg", "image/jpeg"), ("photo.png", "image/png"),
            ("photo.webp", "image/webp"),
        ]
        for (fixture, mimeType) in cases {
            let out = dir.appendingPathComponent("\(fixture).png").path
            let result = try Run.ftgst([
                "thumbnailer", "-s", "128", "-i", try TestEnvironment.fixture(fixture), "-o", out,
            ])
            XCTAssertEqual(result.status, 0, "\(fixture): \(result.stderr)")
            XCTAssertEqual(try png(out).text["Thumb::Mimetype"], mimeType, fixture)
        }
    }

    /// `--cache`: `$XDG_CACHE_HOME/thumbnails/normal/MD5(URI).png`, 0600 in 0700 folders; kept while the source's
    /// mtime is the same, remade when it changes; `-s 256` is `large`.
    func testTheCacheFormWritesTheSharedCacheAndKeepsAValidEntry() throws {
        let video = try copy("clip.mp4", as: "clip.mp4")
        let cache = dir.appendingPathComponent("cache")
        let environment = ["XDG_CACHE_HOME": cache.path]
        let first = try Run.ftgst(["thumbnailer", "--cache", "-i", video], environment: environment)
        XCTAssertEqual(first.status, 0, first.stderr)
        let entry = cache.appendingPathComponent("thumbnails/normal/\(try md5("file://" + video)).png")
        XCTAssertEqual(try first.json()["path"] as? String, entry.path)
        XCTAssertEqual(try first.json()["cached"] as? Bool, false)
        let image = try png(entry.path)
        XCTAssertEqual([image.width, image.height], [128, 96])
        XCTAssertEqual(image.text["Thumb::URI"], "file://" + video)
        func mode(_ url: URL) throws -> Int {
            try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
        }
        XCTAssertEqual(try mode(entry), 0o600)
        XCTAssertEqual(try mode(entry.deletingLastPathComponent()), 0o700)
        XCTAssertEqual(try mode(cache.appendingPathComponent("thumbnails")), 0o700)

        let again = try Run.ftgst(["thumbnailer", "--cache", "-i", video], environment: environment)
        XCTAssertEqual(try again.json()["cached"] as? Bool, true)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 1_000_000_000)], ofItemAtPath: video)
        let changed = try Run.ftgst(["thumbnailer", "--cache", "-i", video], environment: environment)
        XCTAssertEqual(try changed.json()["cached"] as? Bool, false, "a new mtime makes the entry stale")
        XCTAssertEqual(try png(entry.path).text["Thumb::MTime"], "1000000000")

        let large = try Run.ftgst(["thumbnailer", "--cache", "-s", "256", "-i", video], environment: environment)
        XCTAssertEqual(large.status, 0, large.stderr)
        let big = try png(cache.appendingPathComponent("thumbnails/large/\(try md5("file://" + video)).png").path)
        XCTAssertEqual([big.width, big.height], [256, 192])
    }

    /// A file that cannot be decoded: the error, and the spec's failure entry (a PNG with Thumb::URI and
    /// Thumb::MTime under fail/ftgst-VERSION/), nothing in normal/.
    func testAFailureIsReportedAndRecordedForTheCache() throws {
        let garbage = try copy("garbage.bin", as: "garbage.mp4")
        let cache = dir.appendingPathComponent("cache")
        let result = try Run.ftgst(
            ["thumbnailer", "--cache", "-i", garbage], environment: ["XDG_CACHE_HOME": cache.path])
        assertFailure(result, code: "DECODE_FAILED", status: 68)
        let version = try XCTUnwrap(try Run.ftgst(["--version"]).stdout.split(separator: " ").dropFirst().first)
        let failure = cache.appendingPathComponent(
            "thumbnails/fail/ftgst-\(version)/\(try md5("file://" + garbage)).png")
        let entry = try png(failure.path)
        XCTAssertEqual(entry.text["Thumb::URI"], "file://" + garbage)
        XCTAssertEqual(entry.text["Thumb::MTime"], try mtime(garbage))
        XCTAssertFalse(
            FileManager.default.fileExists(
                atPath: cache.appendingPathComponent("thumbnails/normal/\(try md5("file://" + garbage)).png").path))
        // A picture GStreamer cannot decode (CMYK JPEG) is recorded the same way.
        let cmyk = try copy("cmyk.jpg", as: "cmyk.jpg")
        assertFailure(
            try Run.ftgst(["thumbnailer", "--cache", "-i", cmyk], environment: ["XDG_CACHE_HOME": cache.path]),
            code: "UNSUPPORTED_FORMAT", status: 67)
        XCTAssertEqual(
            try png(failure.deletingLastPathComponent().appendingPathComponent("\(try md5("file://" + cmyk)).png").path)
                .text["Thumb::URI"], "file://" + cmyk)
    }

    func testErrors() throws {
        let out = dir.appendingPathComponent("x.png").path
        let clip = try TestEnvironment.fixture("clip.mp4")
        assertFailure(
            try Run.ftgst(["thumbnailer", "-i", "http://127.0.0.1:9/clip.mp4", "-o", out]), code: "INVALID_URL",
            status: 65)
        assertFailure(
            try Run.ftgst(["thumbnailer", "-i", dir.appendingPathComponent("none.mp4").path, "-o", out]),
            code: "FILE_NOT_FOUND", status: 66)
        assertFailure(try Run.ftgst(["thumbnailer", "-o", out]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try Run.ftgst(["thumbnailer", "-i", clip]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(
            try Run.ftgst(["thumbnailer", "-i", clip, "-o", out, "--cache"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(
            try Run.ftgst(["thumbnailer", "-i", clip, "--cache", "-s", "100"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(
            try Run.ftgst(["thumbnailer", "-i", clip, "-o", out, "-s", "0"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(
            try Run.ftgst(["thumbnailer", "-i", clip, "-o", dir.appendingPathComponent("no/such/x.png").path]),
            code: "WRITE_FAILED", status: 73)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [], "nothing written")

        // The input as its own output, and an empty -o: refused before anything is read or written.
        let video = try copy("clip.mp4", as: "clip.mp4")
        let before = try Data(contentsOf: URL(fileURLWithPath: video))
        assertFailure(try Run.ftgst(["thumbnailer", "-i", video, "-o", video]), code: "INVALID_ARGUMENT", status: 64)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: video)), before, "the input is untouched")
        assertFailure(try Run.ftgst(["thumbnailer", "-i", video, "-o", ""]), code: "INVALID_ARGUMENT", status: 64)
        // --cache with neither XDG_CACHE_HOME nor HOME absolute: no folder to write to.
        assertFailure(
            try Run.process(
                TestEnvironment.binary, ["thumbnailer", "--cache", "-i", video],
                environment: ["PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": "relative", "HOME": "also-relative"],
                directory: dir, onlyEnvironment: true),
            code: "WRITE_FAILED", status: 73)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["clip.mp4"], "nothing written")
    }

    /// The installed entry, run by GNOME's thumbnail factory (gnome-desktop through PyGObject) exactly as Nautilus
    /// runs it: in bubblewrap with only /usr read-only, the input and its /tmp bound, seccomp, no network. The
    /// staged install's bin folder stands where an installed ftgst would be (`Tests/Resources/thumbnailer/bwrap`
    /// adds that one bind), so the static binary must start with nothing but /usr.
    func testGNOMEsThumbnailFactoryRunsTheInstalledEntryInItsSandbox() throws {
        let stage = try XCTUnwrap(
            ProcessInfo.processInfo.environment["FTGST_STAGE"], "run with `make test`, which stages the install")
        let share = URL(fileURLWithPath: stage).appendingPathComponent("usr/share")
        let entry = try String(
            contentsOf: share.appendingPathComponent("thumbnailers/ftgst.thumbnailer"), encoding: .utf8)
        XCTAssertTrue(entry.contains("\nExec=ftgst thumbnailer -s %s -i %i -o %o\n"), entry)
        let types = try XCTUnwrap(entry.split(separator: "\n").first { $0.hasPrefix("MimeType=") })
        for type in ["video/mp4", "video/quicktime", "video/x-matroska", "video/webm", "video/mp2t"] {
            XCTAssertTrue(types.split(separator: "=")[1].split(separator: ";").contains(Substring(type)), type)
        }

        let video = try copy("dull-start.mp4", as: "holiday.mp4")
        let home = dir.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let resources = TestEnvironment.packageRoot.appendingPathComponent("Tests/Resources/thumbnailer")
        let log = dir.appendingPathComponent("bwrap.log")
        let result = try Run.process(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [resources.appendingPathComponent("gnome_factory.py").path, video, "video/mp4"],
            environment: [
                "PATH": "\(resources.path):\(stage)/usr/bin:/usr/local/bin:/usr/bin:/bin", "HOME": home.path,
                "XDG_CACHE_HOME": home.appendingPathComponent("cache").path,
                "XDG_DATA_DIRS": "\(share.path):/usr/share", "GSETTINGS_BACKEND": "memory",
                "FTGST_STAGED_BIN": "\(stage)/usr/bin", "FTGST_BWRAP_LOG": log.path,
            ], timeout: 120, onlyEnvironment: true)
        XCTAssertEqual(result.status, 0, result.stderr)
        let out = try result.json()
        XCTAssertEqual(out["can"] as? Bool, true, "the factory found the entry for video/mp4: \(out)")
        XCTAssertEqual(out["generated"] as? Bool, true, "\(out); stderr: \(result.stderr)")
        XCTAssertEqual(out["width"] as? Int, 128)
        XCTAssertEqual(out["height"] as? Int, 96)
        let sandbox = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map(String.init)
        for flag in ["--unshare-all", "--seccomp", "--die-with-parent"] { XCTAssertTrue(sandbox.contains(flag), flag) }
        XCTAssertEqual(
            Array(sandbox.suffix(8)),
            [
                "ftgst", "thumbnailer", "-s", "128", "-i", "/tmp/gnome-desktop-file-to-thumbnail.mp4", "-o",
                "/tmp/gnome-desktop-thumbnailer.png",
            ])
        // What the factory saved is ftgst's picture: the keyframe at 3 s, not the black first frame.
        let saved = try XCTUnwrap(out["saved"] as? String)
        XCTAssertEqual(
            saved, home.appendingPathComponent("cache/thumbnails/normal/\(try md5("file://" + video)).png").path)
        let reference = try DecodedImage.frame(of: video, index: 30, width: 128, height: 96)
        XCTAssertLessThan(try DecodedImage.read(saved).meanDifference(reference), 4)
    }
}
