import FilmtoneTestSupport
import Foundation
import XCTest

/// `ftgst man`: ftgst(1) renders without a warning, with a section per command, the exit statuses of docs/CLI.md,
/// and every environment variable the sources read.
final class ManPageCLITests: XCTestCase {
    func testRendersWithoutWarnings() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let page = folder.appendingPathComponent("ftgst.1")
        let printed = try Run.ftgst(["man"])
        XCTAssertEqual(printed.status, 0, printed.stderr)
        XCTAssertEqual(printed.stderr, "")
        try printed.stdout.write(to: page, atomically: true, encoding: .utf8)
        // groff with every warning on (-ww), tbl for the exit status table, output thrown away (-z).
        let groff = try Run.tool("groff", ["-t", "-man", "-Tutf8", "-ww", "-z", page.path])
        XCTAssertEqual(groff.status, 0, groff.stderr)
        XCTAssertEqual(groff.stderr, "", "groff warnings")
        for width in ["80", "60"] {
            let man = try Run.process(
                URL(fileURLWithPath: "/usr/bin/man"), ["--warnings", "-l", page.path],
                environment: ["MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": width, "MAN_KEEP_FORMATTING": ""])
            XCTAssertEqual(man.status, 0, man.stderr)
            XCTAssertEqual(man.stderr, "", "man -l warnings at \(width) columns")
            XCTAssertTrue(man.stdout.contains("FTGST(1)"), man.stdout)
        }
        let text = try ManPageText.render(self)
        for heading in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT"] {
            XCTAssertNotNil(text.section(heading), "no \(heading)")
        }
        for heading in ["FILES", "EXAMPLES", "SEE ALSO"] { XCTAssertNotNil(text.section(heading), "no \(heading)") }
        XCTAssertTrue(try XCTUnwrap(text.section("SEE ALSO")).contains("gst-launch-1.0(1)"))
        XCTAssertTrue(try XCTUnwrap(text.section("SYNOPSIS")).contains("ftgst export SOURCE -o OUT [options]"))
    }

    /// Every row of docs/CLI.md's table of errors, `CODE` and exit status, is a row of EXIT STATUS, and no other.
    func testExitStatusTableIsTheDocumentedOne() throws {
        let docs = try String(
            contentsOf: TestEnvironment.packageRoot.appendingPathComponent("docs/CLI.md"), encoding: .utf8)
        let errors = try XCTUnwrap(docs.range(of: "\n## Errors\n")).upperBound
        var documented: [String: String] = [:]
        for line in docs[errors...].split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            documented[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = cells[1]
        }
        XCTAssertGreaterThan(documented.count, 10)
        let section = try XCTUnwrap(try ManPageText.render(self).section("EXIT STATUS"))
        var listed: [String: String] = [:]
        for line in section.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.count >= 2, let status = Int(words[0]), words[1].allSatisfy({ $0.isUppercase || $0 == "_" }) {
                listed[String(words[1])] = String(status)
            }
        }
        XCTAssertEqual(listed, documented)
        XCTAssertTrue(section.contains("0"), section)
    }

    /// Each environment variable the sources read (`environment["NAME"]`, `environment: "NAME"`) has an entry.
    func testEnvironmentNamesWhatTheSourcesRead() throws {
        let section = try XCTUnwrap(try ManPageText.render(self).section("ENVIRONMENT"))
        let sources = TestEnvironment.packageRoot.appendingPathComponent("Sources")
        let walker = try XCTUnwrap(FileManager.default.enumerator(atPath: sources.path))
        var names: Set<String> = []
        let pattern = try NSRegularExpression(pattern: #"(?:environment\[|environmentMilliseconds\()"([A-Z_]+)""#)
        for case let path as String in walker where path.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                names.insert((text as NSString).substring(with: match.range(at: 1)))
            }
        }
        XCTAssertTrue(names.isSuperset(of: ["FTGST_PRESETS", "XDG_CACHE_HOME", "FTGST_SHARE_TIMEOUT_MS"]), "\(names)")
        for name in names.subtracting(["PATH"]) {
            XCTAssertTrue(section.contains(name), "\(name) is read but not in ENVIRONMENT")
        }
    }
}

/// ftgst(1) as `man -l` renders it at 80 columns, without formatting; minus signs and hyphens as ASCII `-`.
struct ManPageText {
    let text: String

    static func render(_ testCase: XCTestCase) throws -> ManPageText {
        let folder = try TestEnvironment.temporaryDirectory(testCase)
        let page = folder.appendingPathComponent("ftgst.1")
        try Run.ftgst(["man"]).stdout.write(to: page, atomically: true, encoding: .utf8)
        let man = try Run.process(
            URL(fileURLWithPath: "/usr/bin/man"), ["-l", page.path],
            environment: ["MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "80", "MAN_KEEP_FORMATTING": ""])
        XCTAssertEqual(man.status, 0, man.stderr)
        let plain = man.stdout.replacingOccurrences(of: "\u{2212}", with: "-")
            .replacingOccurrences(of: "\u{2010}", with: "-")
        return ManPageText(text: plain)
    }

    /// The lines under a heading (`EXIT STATUS` at column 0, or a command's `   ftgst thumb` at column 3) up to the
    /// next heading of the same level or above.
    func section(_ heading: String) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let level = heading.hasPrefix("ftgst ") ? "   " : ""
        guard let start = lines.firstIndex(where: { $0 == level + heading }) else { return nil }
        // A section heading starts at column 0; a command's at column 3.
        func endsIt(_ line: Substring) -> Bool {
            if let first = line.first, first != " " { return true }
            return !level.isEmpty && line.hasPrefix(level)
                && line.dropFirst(level.count).first.map { $0 != " " } == true
        }
        let end = lines[(start + 1)...].firstIndex(where: endsIt) ?? lines.endIndex
        return lines[(start + 1)..<end].joined(separator: "\n")
    }
}
