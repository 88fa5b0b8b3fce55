import FilmtoneTestSupport
import Foundation
import XCTest

/// `ftgst completion bash|zsh|fish`, run as the shells run it: the bash script sourced in a real bash with
/// COMP_WORDS/COMP_CWORD set, the fish script asked with `complete -C`, the zsh script parsed and registered.
final class CompletionCLITests: XCTestCase {
    /// Commands, options, choices, preset names and filtered files, as bash offers them.
    func testBashCompletesCommandsOptionsChoicesPresetsAndFiles() throws {
        let bash = try ShellCompletion(self)
        XCTAssertEqual(try bash.complete(["ex"]), ["export"])
        XCTAssertEqual(try bash.complete(["export", "--pre"]), ["--preset", "--presets"])
        XCTAssertEqual(try bash.complete(["export", "--progress", ""]), ["auto", "bar", "jsonl", "none"])
        XCTAssertEqual(try bash.complete(["export", "--progress", "=", "j"]), ["jsonl"], "--progress=j")
        XCTAssertEqual(try bash.complete(["thumb", "--format", ""]), ["jpeg", "png"])
        XCTAssertEqual(try bash.complete(["lut", ""]), ["--help", "-h", "inspect"])
        XCTAssertEqual(try bash.complete(["completion", ""]), ["bash", "fish", "zsh"])
        XCTAssertEqual(try bash.complete(["mezzanine", "--cache-d"]), [], "old spellings are read, not offered")

        // The preset names are the ones `ftgst presets` lists, asked of the binary being completed.
        let presets = try Run.ftgst(["presets"])
        XCTAssertEqual(presets.status, 0, presets.stderr)
        let names = try presets.stdout.split(separator: "\n").map { line -> String in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return try XCTUnwrap(object?["name"] as? String)
        }
        XCTAssertFalse(names.isEmpty)
        XCTAssertEqual(try bash.complete(["export", "--preset", ""]), names.sorted())
        XCTAssertEqual(
            try bash.complete(["export", "--preset", "=", "h"]), names.filter { $0.hasPrefix("h") }.sorted())

        // A --presets DIR on the line is where the names come from.
        let mine = try TestEnvironment.temporaryDirectory(self)
        try FileManager.default.copyItem(
            at: TestEnvironment.packageRoot.appendingPathComponent("pipelines/presets/h264-mp4.preset"),
            to: mine.appendingPathComponent("house.preset"))
        let own = try Run.ftgst(["presets", "--presets", mine.path])
        XCTAssertEqual(own.status, 0, own.stderr)
        XCTAssertEqual(try bash.complete(["export", "--presets", mine.path, "--preset", ""]), ["house"])

        // Files with the extensions an option takes (any case), and folders to walk into; nothing else.
        for name in ["a.cube", "b.CUBE", "c.txt", "d.json"] {
            _ = FileManager.default.createFile(
                atPath: bash.directory.appendingPathComponent(name).path, contents: Data())
        }
        try FileManager.default.createDirectory(
            at: bash.directory.appendingPathComponent("looks"), withIntermediateDirectories: true)
        XCTAssertEqual(try bash.complete(["export", "--input-lut", ""]), ["a.cube", "b.CUBE", "looks"])
        XCTAssertEqual(try bash.complete(["lut", "inspect", ""]), ["a.cube", "b.CUBE", "looks"])
        XCTAssertEqual(try bash.complete(["preview", "--request", ""]), ["d.json", "looks"])
        XCTAssertEqual(try bash.complete(["save", "--library", ""]), ["looks"])
        XCTAssertEqual(try bash.complete(["probe", "c"]), ["c.txt"])
        XCTAssertEqual(try bash.complete(["thumb", "--time-ms", ""]), [], "a number: nothing to offer")
    }

    /// The zsh and fish scripts parse (`zsh -n`, `fish -n`); zsh registers `_ftgst` for ftgst; fish completes
    /// commands, options, choices and preset names.
    func testZshAndFishScripts() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let zsh = folder.appendingPathComponent("_ftgst")
        let fish = folder.appendingPathComponent("ftgst.fish")
        for (shell, url) in [("zsh", zsh), ("fish", fish)] {
            let script = try Run.ftgst(["completion", shell])
            XCTAssertEqual(script.status, 0, script.stderr)
            try script.stdout.write(to: url, atomically: true, encoding: .utf8)
            let check = try Run.tool(shell, ["-n", url.path])
            XCTAssertEqual(check.status, 0, "\(shell) -n: \(check.stderr)")
            XCTAssertEqual(check.stderr, "")
        }
        XCTAssertTrue(try String(contentsOf: zsh, encoding: .utf8).hasPrefix("#compdef ftgst\n"))
        let registered = try Run.tool(
            "zsh",
            [
                "-fc",
                #"autoload -Uz compinit && compinit -u -d "$1/zcompdump"; source "$1/_ftgst"; print -r -- $_comps[ftgst]"#,
                "zsh", folder.path,
            ])
        XCTAssertEqual(registered.stdout, "_ftgst\n", registered.stderr)

        func fishComplete(_ line: String) throws -> [String] {
            let result = try Run.tool("fish", ["-c", "source $argv[1]; complete -C $argv[2]", fish.path, line])
            XCTAssertEqual(result.status, 0, result.stderr)
            return result.stdout.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }.sorted()
        }
        let binary = TestEnvironment.binary.path
        XCTAssertEqual(try fishComplete("\(binary) ex"), ["export"])
        XCTAssertEqual(try fishComplete("\(binary) export --pre"), ["--preset", "--presets"])
        XCTAssertEqual(try fishComplete("\(binary) export --progress "), ["auto", "bar", "jsonl", "none"])
        XCTAssertEqual(try fishComplete("\(binary) lut "), ["inspect"])
        let names = try Run.ftgst(["presets"]).stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["name"] as? String
        }
        XCTAssertEqual(try fishComplete("\(binary) export --preset "), names.sorted())
    }

    func testUnknownShellIsBadUsage() throws {
        for words in [["completion"], ["completion", "tcsh"], ["completion", "bash", "zsh"]] {
            let result = try Run.ftgst(words)
            XCTAssertEqual(result.status, 64, "\(words): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("[INVALID_ARGUMENT] completion"), result.stderr)
            XCTAssertTrue(result.stderr.contains("bash, zsh or fish"), result.stderr)
            XCTAssertEqual(result.stdout, "")
        }
    }
}

/// The bash script `ftgst completion bash` prints, sourced in a real bash for each question: COMP_WORDS is
/// `ftgst WORDS…` (the built binary's path as the first word, so preset names come from it), COMP_CWORD the last.
struct ShellCompletion {
    let script: URL
    /// The current folder of the completing shell (files are completed there).
    let directory: URL

    init(_ testCase: XCTestCase) throws {
        let folder = try TestEnvironment.temporaryDirectory(testCase)
        script = folder.appendingPathComponent("ftgst.bash")
        directory = folder.appendingPathComponent("cwd")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let printed = try Run.ftgst(["completion", "bash"])
        XCTAssertEqual(printed.status, 0, printed.stderr)
        XCTAssertEqual(printed.stderr, "")
        try printed.stdout.write(to: script, atomically: true, encoding: .utf8)
    }

    /// What bash offers for the last of `words` (after `ftgst`), sorted.
    func complete(_ words: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let program = #"""
            source "$1" || exit 3
            shift
            COMP_WORDS=("$@")
            COMP_CWORD=$(( $# - 1 ))
            COMPREPLY=()
            _ftgst
            (( ${#COMPREPLY[@]} )) && printf '%s\n' "${COMPREPLY[@]}"
            exit 0
            """#
        let result = try Run.process(
            URL(fileURLWithPath: "/bin/bash"),
            ["--norc", "--noprofile", "-c", program, "bash", script.path, TestEnvironment.binary.path] + words,
            directory: directory)
        XCTAssertEqual(result.status, 0, "\(words): \(result.stderr)", file: file, line: line)
        XCTAssertEqual(result.stderr, "", "\(words)", file: file, line: line)
        return result.stdout.split(separator: "\n").map(String.init).sorted()
    }
}
