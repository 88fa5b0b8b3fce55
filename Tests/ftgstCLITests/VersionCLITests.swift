import FilmtoneTestSupport
import Foundation
import XCTest

/// `ftgst --version`: ftgst's version, the git commit it was built from and the GStreamer it runs on.
final class VersionCLITests: XCTestCase {
    func testVersionNamesTheCommitAndGStreamer() throws {
        let result = try Run.ftgst(["--version"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        let pattern = try NSRegularExpression(
            pattern:
                #"^ftgst ([0-9]+\.[0-9]+\.[0-9]+) \(commit ([0-9a-f]{7,40})(-dirty)?, (GStreamer [0-9]+\.[0-9]+\.[0-9]+)\)\n$"#
        )
        let text = result.stdout
        let match = try XCTUnwrap(
            pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)), "--version: \(text)")
        func group(_ index: Int) -> String? {
            Range(match.range(at: index), in: text).map { String(text[$0]) }
        }
        // The GStreamer it runs on: the library gst-launch-1.0 reports too.
        let launch = try Run.tool("gst-launch-1.0", ["--version"])
        XCTAssertTrue(launch.stdout.contains(try XCTUnwrap(group(4))), "\(launch.stdout) against \(text)")

        // Built from this checkout: the commit is HEAD's, dirty exactly when the built sources differ from it.
        let root = TestEnvironment.packageRoot.path
        let head = try Run.tool("git", ["-C", root, "rev-parse", "HEAD"])
        XCTAssertEqual(head.status, 0, head.stderr)
        let commit = try XCTUnwrap(group(2))
        XCTAssertTrue(head.stdout.hasPrefix(commit), "\(commit) is not HEAD (\(head.stdout))")
        let short = try Run.tool("git", ["-C", root, "rev-parse", "--short", "HEAD"])
        XCTAssertEqual(short.stdout, commit + "\n")
        let diff = try Run.tool(
            "git", ["-C", root, "diff", "--quiet", "HEAD", "--", "Package.swift", "Sources", "Plugins"])
        XCTAssertEqual(group(3) != nil, diff.status != 0, "-dirty against git diff: \(text)")

        XCTAssertEqual(try Run.ftgst(["version"]).stdout, text)
    }
}
