import FilmtoneTestSupport
import Foundation
import XCTest

/// How every command reads its words, through the built binary: `-h`, one spelling per option with the old ones
/// as aliases, "did you mean" for a near miss, and deadlines as options.
final class ArgumentsCLITests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = try TestEnvironment.temporaryDirectory(self)
    }

    private func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// `ftgst thumb -h` was `FILE_NOT_FOUND ./-h`: `-h` is `--help` in every command.
    func testDashHIsHelpInEveryCommand() throws {
        let commands: [([String], String)] = [
            (["thumb"], "usage: ftgst thumb"), (["preview"], "usage: ftgst preview"), (["probe"], "usage: ftgst probe"),
            (["export"], "usage: ftgst export"), (["mezzanine"], "usage: ftgst mezzanine"),
            (["save"], "usage: ftgst save"), (["share"], "usage: ftgst share"), (["presets"], "usage: ftgst presets"),
            (["cancel"], "usage: ftgst cancel"), (["lut"], "usage: ftgst lut"),
            (["lut", "inspect"], "usage: ftgst lut"),
        ]
        for (words, usage) in commands {
            for help in ["-h", "--help"] {
                let result = try Run.ftgst(words + [help])
                XCTAssertEqual(result.status, 0, "\(words) \(help): \(result.stderr)")
                XCTAssertTrue(result.stdout.hasPrefix(usage), "\(words) \(help): \(result.stdout)")
                XCTAssertEqual(result.stderr, "")
            }
        }
        // A file really named -h is still reachable.
        let named = try Run.ftgst(["thumb", "--cache-dir", path("c"), "--", "-h"])
        assertFailure(named, code: "FILE_NOT_FOUND", status: 66)
        let dotted = try Run.ftgst(["probe", "./-h"])
        assertFailure(dotted, code: "FILE_NOT_FOUND", status: 66)
    }

    /// Any other word starting with `-` is an unknown option, not a file name; a near miss names the option meant.
    func testUnknownOptionsSayWhatWasMeant() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        let cases: [([String], String)] = [
            (["thumb", clip, "--tiem-ms", "5"], "unknown option --tiem-ms (did you mean --time-ms?)"),
            (["thumb", clip, "--cache-cap", "5"], "unknown option --cache-cap (did you mean --cache-max-mb?)"),
            (["preview", clip, "-o", path("p.png"), "--intensty", "1"], "(did you mean --intensity?)"),
            (["mezzanine", clip, "--cachedir", path("m")], "(did you mean --mezzanine-dir?)"),
            (["export", clip, "-o", path("e.mp4"), "--mezanine"], "(did you mean --build-mezzanine?)"),
            (["share", clip, "--prnt"], "(did you mean --print?)"),
            (["thumb", clip, "-help"], "unknown option -help (did you mean --help?)"),
            (["probe", "-x"], "unknown option -x"),
            (["thum", clip], "unknown command 'thum' (did you mean thumb?)"),
        ]
        for (words, message) in cases {
            let result = try Run.ftgst(words)
            assertFailure(result, code: "INVALID_ARGUMENT", status: 64)
            XCTAssertTrue(result.stderr.contains(message), "\(words): \(result.stderr)")
        }
        let far = try Run.ftgst(["thumb", clip, "--zzzzzz", "1"])
        assertFailure(far, code: "INVALID_ARGUMENT", status: 64)
        XCTAssertFalse(far.stderr.contains("did you mean"), far.stderr)
    }

    /// One spelling across commands (`--cache-max-mb`, `--mezzanine-dir`, `--build-mezzanine`); the old ones
    /// (`--cache-cap-mb`, `mezzanine --cache-dir`, `export --mezzanine`) still work.
    func testOneSpellingPerOptionAndTheOldOnesAsAliases() throws {
        let clip = try TestEnvironment.fixture("clip.mp4")
        for cap in ["--cache-max-mb", "--cache-cap-mb"] {
            let thumb = try Run.ftgst(["thumb", clip, "--cache-dir", path("thumbs"), cap, "1", "--max-width", "32"])
            XCTAssertEqual(thumb.status, 0, "\(cap): \(thumb.stderr)")
            assertFailure(
                try Run.ftgst(["thumb", clip, "--cache-dir", path("thumbs"), cap, "0"]), code: "INVALID_ARGUMENT",
                status: 64)
        }
        let mezzanines = path("mezzanines")
        let built = try Run.ftgst(
            ["mezzanine", clip, "--cache-dir", mezzanines, "--cache-cap-mb", "64", "--max-width", "64"], timeout: 120)
        XCTAssertEqual(built.status, 0, built.stderr)
        let status = try Run.ftgst(
            ["mezzanine", clip, "--mezzanine-dir", mezzanines, "--cache-max-mb", "64", "--max-width", "64", "--status"])
        XCTAssertEqual(status.stdout, #"{"status":"ready"}"# + "\n", status.stderr)
        // The folder preview reads is the same option, with the same name.
        let preview = try Run.ftgst(
            [
                "preview", clip, "--time-ms", "1000", "--max-width", "64", "--mezzanine-dir", mezzanines, "-o",
                path("p.png"),
            ])
        XCTAssertEqual(preview.status, 0, preview.stderr)
        XCTAssertEqual(try preview.json()["mezzanine"] as? Bool, true)

        // export: both spellings reach the export's own check (a photo has no mezzanine), none is unknown.
        let photo = try TestEnvironment.fixture("photo.png")
        for flag in ["--build-mezzanine", "--mezzanine"] {
            let result = try Run.ftgst(["export", photo, "-o", path("e.png"), flag, "--workspace", path("ws")])
            assertFailure(result, code: "INVALID_ARGUMENT", status: 64)
            XCTAssertFalse(result.stderr.contains("unknown option"), "\(flag): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("mezzanine"), "\(flag): \(result.stderr)")
        }
    }
}
