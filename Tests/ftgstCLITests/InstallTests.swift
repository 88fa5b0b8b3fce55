import FilmtoneTestSupport
import Foundation
import XCTest

/// The staged install (`make stage`: `make install PREFIX=/usr DESTDIR=.build/stage`, what the .deb holds), run as
/// a user would run it: only the staged `usr/bin` and the system folders on PATH, no checkout around, a clean
/// environment. `make test` stages the tree and names it in FTGST_STAGE.
final class InstallTests: XCTestCase {
    private var stage: URL!
    private var home: URL!

    override func setUpWithError() throws {
        guard let path = ProcessInfo.processInfo.environment["FTGST_STAGE"] else {
            XCTFail("FTGST_STAGE is not set: run the suite with `make test`, which stages the install")
            throw CocoaError(.fileNoSuchFile)
        }
        stage = URL(fileURLWithPath: path)
        home = try TestEnvironment.temporaryDirectory(self)
    }

    private var binary: URL { stage.appendingPathComponent("usr/bin/ftgst") }

    /// The staged plugin folder, `usr/lib/<multiarch>/gstreamer-1.0`.
    private func pluginFolder() throws -> URL {
        let lib = stage.appendingPathComponent("usr/lib")
        let found = try FileManager.default.contentsOfDirectory(atPath: lib.path).map {
            lib.appendingPathComponent($0).appendingPathComponent("gstreamer-1.0")
        }.filter { FileManager.default.fileExists(atPath: $0.appendingPathComponent("libgstfilmtone.so").path) }
        XCTAssertEqual(found.count, 1, "plugin folders under \(lib.path): \(found)")
        return try XCTUnwrap(found.first)
    }

    /// A clean environment: PATH with the staged binaries and the system's, a HOME of its own, a fresh GStreamer
    /// registry (so no plugin scan of this machine's user is reused).
    private func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = [
            "PATH": "\(stage.appendingPathComponent("usr/bin").path):/usr/bin:/bin",
            "HOME": home.path,
            "XDG_CACHE_HOME": home.appendingPathComponent("cache").path,
            "XDG_RUNTIME_DIR": home.path,
            "GST_REGISTRY": home.appendingPathComponent("registry.bin").path,
        ]
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Runs a command by name from the clean PATH, in the temporary home (outside the checkout).
    private func run(_ words: [String], _ extra: [String: String] = [:], timeout: TimeInterval = 120) throws
        -> ProcessResult
    {
        try Run.process(
            URL(fileURLWithPath: "/usr/bin/env"), words, environment: environment(extra), timeout: timeout,
            directory: home, onlyEnvironment: true)
    }

    private func copyIntoHome(_ path: String, as name: String) throws -> String {
        let target = home.appendingPathComponent(name)
        try FileManager.default.copyItem(atPath: path, toPath: target.path)
        return name
    }

    private var look: String {
        get throws {
            try copyIntoHome(
                SharedLUTs.root.appendingPathComponent("colour-science/resolve_cube/Three_Dimensional_Table.cube").path,
                as: "look.cube")
        }
    }

    func testTheStagedTreeHoldsTheBinaryThePluginThePresetsAndTheDocs() throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: binary.path))
        _ = try pluginFolder()
        let presets = try FileManager.default.contentsOfDirectory(
            atPath: stage.appendingPathComponent("usr/share/ftgst/presets").path)
        XCTAssertTrue(presets.contains("h264-mp4.preset"), "\(presets)")
        XCTAssertTrue(
            FileManager.default.fileExists(
                atPath: stage.appendingPathComponent("usr/share/ftgst/studio/index.html").path),
            "the studio's page")
        // The studio's launcher entry and icon, where desktops look for them; the entry runs what is installed.
        let entry = stage.appendingPathComponent("usr/share/applications/ftgst-studio.desktop").path
        let validated = try Run.tool("desktop-file-validate", [entry])
        XCTAssertEqual(validated.status, 0, validated.stdout + validated.stderr)
        XCTAssertTrue(try String(contentsOfFile: entry, encoding: .utf8).contains("\nExec=ftgst studio %f\n"))
        XCTAssertTrue(
            FileManager.default.fileExists(
                atPath: stage.appendingPathComponent("usr/share/icons/hicolor/scalable/apps/ftgst-studio.svg").path),
            "the studio's icon")
        for doc in ["README.md", "CLI.md", "LOOKS.md"] {
            XCTAssertTrue(
                FileManager.default.fileExists(atPath: stage.appendingPathComponent("usr/share/doc/ftgst/\(doc)").path),
                doc)
        }
    }

    /// The Swift runtime is linked in: nothing the binary or the plugin loads comes from the toolchain.
    func testNeitherTheBinaryNorThePluginNeedsTheSwiftToolchain() throws {
        for file in [binary.path, try pluginFolder().appendingPathComponent("libgstfilmtone.so").path] {
            let ldd = try Run.tool("ldd", [file])
            XCTAssertEqual(ldd.status, 0, ldd.stderr)
            XCTAssertFalse(ldd.stdout.contains("not found"), ldd.stdout)
            for library in ["libswift", "libFoundation", "libdispatch", "libBlocksRuntime", "/swift/"] {
                XCTAssertFalse(ldd.stdout.contains(library), "\(file) loads \(library):\n\(ldd.stdout)")
            }
        }
        // serve --listen's server: libsoup 3, which scripts/deb's dpkg -S turns into a Depends on libsoup-3.0-0.
        let ldd = try Run.tool("ldd", [binary.path])
        XCTAssertTrue(ldd.stdout.contains("libsoup-3.0.so.0"), ldd.stdout)
    }

    /// `ftgst serve --listen` from PATH serves the installed studio page (share/ftgst/studio), not a checkout's.
    func testTheInstalledServeListenServesTheInstalledStudio() throws {
        let engine = try EngineProcess(
            executable: binary, arguments: ["serve", "--listen", "127.0.0.1:0", "--allow", home.path],
            environment: environment())
        addTeardownBlock { engine.kill() }
        let url = try XCTUnwrap(try engine.waitFor(timeout: 30, "the url line") { _ in true }["url"]?.string)
        let page = try Run.tool("curl", ["-s", "--max-time", "10", "-w", "\n%{http_code}", url], timeout: 20)
        XCTAssertEqual(page.status, 0, page.stderr)
        XCTAssertTrue(page.stdout.hasSuffix("\n200"), page.stdout)
        XCTAssertTrue(page.stdout.contains("studio"), page.stdout)
        engine.closeInput()
        XCTAssertTrue(engine.waitForExit(timeout: 10))
        XCTAssertEqual(engine.exitStatus, 0, engine.stderr)
        // Read once the process has ended and its stderr is drained.
        XCTAssertTrue(
            engine.stderr.contains("studio: \(stage.appendingPathComponent("usr/share/ftgst/studio").path)"),
            engine.stderr)
    }

    /// From PATH, outside the checkout: presets (compiled in), a thumbnail, a preview and an export with a look.
    func testTheInstalledCommandsWorkFromPathOutsideTheCheckout() throws {
        let clip = try copyIntoHome(try TestEnvironment.fixture("clip.mp4"), as: "clip.mp4")
        let look = try self.look

        let presets = try run(["ftgst", "presets"])
        XCTAssertEqual(presets.status, 0, presets.stderr)
        XCTAssertTrue(presets.stdout.contains(#""name":"h264-mp4""#), presets.stdout)

        let thumb = try run(["ftgst", "thumb", clip, "--time-ms", "1000"])
        XCTAssertEqual(thumb.status, 0, thumb.stderr)
        let thumbPath = try XCTUnwrap(try thumb.json()["path"] as? String)
        XCTAssertTrue(thumbPath.hasPrefix(home.appendingPathComponent("cache/ftgst").path), thumbPath)
        XCTAssertTrue(FileManager.default.fileExists(atPath: thumbPath))

        let preview = try run(["ftgst", "preview", clip, "--creative-lut", look, "-o", "p.png"])
        XCTAssertEqual(preview.status, 0, preview.stderr)
        let plain = try run(["ftgst", "preview", clip, "-o", "plain.png"])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertNotEqual(
            try Data(contentsOf: home.appendingPathComponent("p.png")),
            try Data(contentsOf: home.appendingPathComponent("plain.png")), "the look changed nothing")

        let export = try run(["ftgst", "export", clip, "--creative-lut", look, "-o", "out.mp4"], timeout: 300)
        XCTAssertEqual(export.status, 0, export.stderr)
        let probe = try run(["ftgst", "probe", "out.mp4"])
        XCTAssertEqual(probe.status, 0, probe.stderr)
        XCTAssertEqual((try probe.json()["video"] as? [String: Any])?["frameCount"] as? Int, 90, probe.stdout)
    }

    /// `--dry-run` names the installed plugin folder, and its command runs with plain gst-launch-1.0.
    func testADryRunNamesTheInstalledPluginAndRuns() throws {
        let clip = try copyIntoHome(try TestEnvironment.fixture("clip.mp4"), as: "clip.mp4")
        let look = try self.look
        let dry = try run(["ftgst", "export", clip, "--creative-lut", look, "-o", "dry.mp4", "--dry-run"])
        XCTAssertEqual(dry.status, 0, dry.stderr)
        XCTAssertTrue(dry.stdout.contains(try pluginFolder().path), dry.stdout)
        let command = dry.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let shell = try run(["bash", "-c", command], timeout: 300)
        XCTAssertEqual(shell.status, 0, shell.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: home.appendingPathComponent("dry.mp4").path))
    }

    /// The plugin alone, as GStreamer users load it.
    func testThePluginLoadsIntoPlainGStreamerTools() throws {
        let plugins = try pluginFolder().path
        let inspect = try run(["gst-inspect-1.0", "ftlut"], ["GST_PLUGIN_PATH": plugins])
        XCTAssertEqual(inspect.status, 0, inspect.stderr)
        XCTAssertTrue(inspect.stdout.contains("Film look LUT"), inspect.stdout)
        XCTAssertTrue(inspect.stdout.contains("\(plugins)/libgstfilmtone.so"), inspect.stdout)
        let look = try self.look
        let launch = try run(
            [
                "gst-launch-1.0", "-q", "videotestsrc", "num-buffers=10", "!", "ftlut", "creative-lut=\(look)",
                "intensity=0.5", "!", "videoconvert", "!", "fakesink",
            ], ["GST_PLUGIN_PATH": plugins])
        XCTAssertEqual(launch.status, 0, launch.stderr)
    }

    /// Installed in GStreamer's path (as the .deb does), the plugin's file is in the registry of ftgst's own
    /// process too. ftgst used to find `ftlut` there and load the file (a second Swift runtime in the process, and
    /// whatever version is installed); it uses the elements built into it, and never loads the file.
    func testFtgstUsesItsOwnElementsWithThePluginOnGStreamersPath() throws {
        let clip = try copyIntoHome(try TestEnvironment.fixture("clip.mp4"), as: "clip.mp4")
        let look = try self.look
        let plugins = ["GST_PLUGIN_PATH": try pluginFolder().path]
        // The registry is built first, so the scan (which loads every plugin, in a helper process) is done
        // before ftgst runs: a load logged while ftgst runs is ftgst's own.
        let scan = try run(["gst-inspect-1.0", "ftlut"], plugins)
        XCTAssertEqual(scan.status, 0, scan.stderr)
        var logged = plugins
        logged["GST_DEBUG"] = "GST_PLUGIN_LOADING:4"
        logged["GST_DEBUG_NO_COLOR"] = "1"
        let preview = try run(["ftgst", "preview", clip, "--creative-lut", look, "-o", "p.png"], logged)
        XCTAssertEqual(preview.status, 0, preview.stderr)
        XCTAssertFalse(preview.stderr.contains("CRITICAL"), preview.stderr)
        XCTAssertTrue(preview.stderr.contains("loaded"), "the log shows no plugin loading at all: \(preview.stderr)")
        XCTAssertFalse(
            preview.stderr.split(separator: "\n").contains { $0.contains("libgstfilmtone.so\" loaded") },
            preview.stderr)
        let reference = try run(["ftgst", "preview", clip, "--creative-lut", look, "-o", "q.png"])
        XCTAssertEqual(
            try Data(contentsOf: home.appendingPathComponent("p.png")),
            try Data(contentsOf: home.appendingPathComponent("q.png")))
        XCTAssertEqual(reference.status, 0)
    }

    /// `man ftgst` finds the installed page under the prefix's man folder, and it renders.
    func testManFindsTheInstalledPage() throws {
        let page = stage.appendingPathComponent("usr/share/man/man1/ftgst.1.gz")
        XCTAssertTrue(FileManager.default.fileExists(atPath: page.path))
        let man = try run(
            ["man", "--warnings", "ftgst"],
            ["MANPATH": stage.appendingPathComponent("usr/share/man").path, "MANPAGER": "cat", "MANWIDTH": "80"])
        XCTAssertEqual(man.status, 0, man.stderr)
        XCTAssertEqual(man.stderr, "")
        for section in ["NAME", "SYNOPSIS", "EXIT STATUS", "ftgst export", "--preset"] {
            XCTAssertTrue(man.stdout.contains(section), "man ftgst lacks \(section)")
        }
    }

    /// The installed bash completion, loaded as bash-completion loads it (by command name, from the prefix's
    /// completions folder), completes `ftgst ex<TAB>` and the installed presets.
    func testTheInstalledBashCompletionCompletes() throws {
        let script = stage.appendingPathComponent("usr/share/bash-completion/completions/ftgst")
        let program = #"""
            source "$1" || exit 3
            shift
            handler=$(complete -p ftgst | sed -n 's/.*-F \([^ ]*\).*/\1/p')
            [ -n "$handler" ] || exit 4
            COMP_WORDS=("$@")
            COMP_CWORD=$(( $# - 1 ))
            COMPREPLY=()
            "$handler" ftgst "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            (( ${#COMPREPLY[@]} )) && printf '%s\n' "${COMPREPLY[@]}"
            exit 0
            """#
        func complete(_ words: [String]) throws -> [String] {
            let result = try run(
                ["bash", "--norc", "--noprofile", "-c", program, "bash", script.path, "ftgst"] + words)
            XCTAssertEqual(result.status, 0, "\(words): \(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init).sorted()
        }
        XCTAssertEqual(try complete(["ex"]), ["export"])
        XCTAssertTrue(try complete(["export", "--preset", ""]).contains("h264-mp4"))
    }
}
