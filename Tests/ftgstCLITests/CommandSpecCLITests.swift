import FilmtoneTestSupport
import Foundation
import XCTest

/// One table per command feeds `--help`, the parser, the man page and the completions: each command's options, as
/// the bash completion offers them, are exactly the ones its `--help` and its man page section list, and the parser
/// accepts every one of them.
final class CommandSpecCLITests: XCTestCase {
    func testEveryOptionIsInHelpManPageAndParser() throws {
        let bash = try ShellCompletion(self)
        let manPage = try ManPageText.render(self)
        let commands = try CommandPaths.all(bash)
        XCTAssertTrue(commands.contains(["thumb"]) && commands.contains(["lut", "inspect"]), "\(commands)")
        for path in commands {
            let name = path.joined(separator: " ")
            let options = Set(try bash.complete(path + ["--"]))
            XCTAssertTrue(options.contains("--help"), "\(name): \(options)")
            let shorts = Set(try bash.complete(path + ["-"]).filter { !$0.hasPrefix("--") })
            XCTAssertTrue(shorts.contains("-h"), "\(name): \(shorts)")

            let help = try Run.ftgst(path + ["--help"])
            XCTAssertEqual(help.status, 0, "\(name): \(help.stderr)")
            XCTAssertTrue(help.stdout.hasPrefix("usage: ftgst \(name)"), help.stdout)
            let column = OptionColumn(help.stdout, indent: "  ")
            XCTAssertEqual(column.long, options, "\(name): --help's options against the completion's")
            XCTAssertEqual(column.short, shorts, "\(name): --help's short options against the completion's")

            let section = try XCTUnwrap(manPage.section("ftgst \(name)"), "no man page section for \(name)")
            let manColumn = OptionColumn(section, indent: "       ")
            XCTAssertEqual(manColumn.long, options, "\(name): the man page's options against the completion's")
            XCTAssertEqual(manColumn.short, shorts, "\(name): the man page's short options against the completion's")

            // The parser knows each one: given before --help (with a value when it takes one), help is printed.
            // `--name=1` first: a flag refuses the value ("takes no value"), an option cannot take --help as it.
            for option in options.union(shorts) {
                let short = !option.hasPrefix("--")
                var accepted = try Run.ftgst(path + (short ? [option, "1"] : ["\(option)=1"]) + ["--help"])
                if accepted.status != 0 { accepted = try Run.ftgst(path + [option, "--help"]) }
                XCTAssertEqual(accepted.status, 0, "\(name) \(option): \(accepted.stderr)")
                XCTAssertTrue(accepted.stdout.hasPrefix("usage: ftgst \(name)"), "\(name) \(option)")
            }
            // And nothing else: a spelling outside the table is refused.
            let unknown = try Run.ftgst(path + ["--not-an-option", "--help"])
            XCTAssertEqual(unknown.status, 64, "\(name): \(unknown.stderr)")
        }
    }

    /// `ftgst --help` lists the commands the completion offers (man and completion in its closing line).
    func testTopLevelHelpListsEveryCommand() throws {
        let bash = try ShellCompletion(self)
        let help = try Run.ftgst(["--help"])
        XCTAssertEqual(help.status, 0, help.stderr)
        let words = try bash.complete([""])
        XCTAssertEqual(words.filter { $0.hasPrefix("-") }, ["--help", "--version"])
        for word in words where !word.hasPrefix("-") {
            let listed = help.stdout.split(separator: "\n").contains { $0.hasPrefix("  \(word)") }
            XCTAssertTrue(listed || help.stdout.contains("ftgst \(word) "), "\(word) not in ftgst --help")
        }
        XCTAssertTrue(help.stdout.contains("  --version"), help.stdout)
    }
}

/// The command paths (`["thumb"]`, `["lut", "inspect"]`): the words bash completes after `ftgst`; a command whose
/// line in `ftgst --help` goes on with a lower-case word has that subcommand.
enum CommandPaths {
    static func all(_ bash: ShellCompletion) throws -> [[String]] {
        let help = try Run.ftgst(["--help"]).stdout.split(separator: "\n")
        return try bash.complete([""]).filter { !$0.hasPrefix("-") }.flatMap { word -> [[String]] in
            let line = help.first { $0.hasPrefix("  \(word) ") }
            let second = line?.split(separator: " ").dropFirst().first.map(String.init) ?? ""
            if !second.isEmpty, second.allSatisfy(\.isLowercase) {
                return try bash.complete([word, ""]).filter { !$0.hasPrefix("-") }.map { [word, $0] }
            }
            return [[word]]
        }
    }
}

/// The options named at the start of lines that begin with `indent` then `-` (`  -o, --output OUT  …`).
struct OptionColumn {
    var long: Set<String> = []
    var short: Set<String> = []

    init(_ text: String, indent: String) {
        for line in text.split(separator: "\n") where line.hasPrefix(indent + "-") {
            let head = line.dropFirst(indent.count).split(separator: " ")
            guard let first = head.first else { continue }
            if first.hasSuffix(","), first.count == 3 {
                short.insert(String(first.dropLast()))
                if head.count > 1 { long.insert(String(head[1])) }
            } else if first.hasPrefix("--") {
                long.insert(String(first))
            }
        }
    }
}
