// Where `ftgst export` and `ftgst presets` find their presets: compiled into the library, so a binary outside this
// checkout exports; `--presets DIR` (and `$FTGST_PRESETS`) replace them with a folder of `*.preset` files.

import FilmtoneTestSupport
import Foundation
import XCTest

final class PresetsCLITests: XCTestCase {
    private var work: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        work = try TestEnvironment.temporaryDirectory(self)
    }

    /// The built binary copied into a folder with no `pipelines/presets` above it, run from another folder with
    /// `$FTGST_PRESETS` empty: what an installed ftgst (or a program linking FilmtoneGst) sees.
    private func runOutsideTheCheckout(_ arguments: [String]) throws -> ProcessResult {
        let bin = work.appendingPathComponent("bin", isDirectory: true)
        let elsewhere = work.appendingPathComponent("elsewhere", isDirectory: true)
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let copy = bin.appendingPathComponent("ftgst")
        if !FileManager.default.fileExists(atPath: copy.path) {
            try FileManager.default.copyItem(at: TestEnvironment.binary, to: copy)
        }
        return try Run.process(
            copy, arguments,
            environment: ["FTGST_PRESETS": "", "XDG_RUNTIME_DIR": work.path, "XDG_CACHE_HOME": work.path],
            timeout: 120, directory: elsewhere)
    }

    private func presetLines(_ result: ProcessResult) throws -> [[String: Any]] {
        try result.stdout.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], "\($0)")
        }
    }

    func testABinaryOutsideTheCheckoutExportsWithTheBuiltinPresets() throws {
        let output = work.appendingPathComponent("out.mp4").path
        let result = try runOutsideTheCheckout([
            "export", try TestEnvironment.fixture("clip.mp4"), "-o", output, "--max-width", "64", "--progress", "none",
            "--workspace", work.appendingPathComponent("ws").path,
        ])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try result.json()["preset"] as? String, "h264-mp4")
        XCTAssertTrue(FileManager.default.fileExists(atPath: output), "no export at \(output)")

        let listed = try runOutsideTheCheckout(["presets"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let presets = try presetLines(listed)
        let names = presets.compactMap { $0["name"] as? String }
        XCTAssertEqual(names, ["ffv1-mkv", "h264-mp4", "hevc-mp4", "hevc10-mp4", "jpeg", "png", "prores-mov"])
        XCTAssertEqual(presets.first?["path"] as? String, "builtin:ffv1-mkv.preset")
    }

    func testPresetsFolderReplacesTheBuiltinOnesInExportAndPresets() throws {
        let folder = work.appendingPathComponent("mine", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let original = TestEnvironment.packageRoot.appendingPathComponent("pipelines/presets/h264-mp4.preset")
        try FileManager.default.copyItem(at: original, to: folder.appendingPathComponent("house.preset"))

        let listed = try Run.ftgst(["presets", "--presets", folder.path])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let presets = try presetLines(listed)
        XCTAssertEqual(presets.compactMap { $0["name"] as? String }, ["house"])
        XCTAssertEqual(presets.first?["path"] as? String, folder.appendingPathComponent("house.preset").path)

        let output = work.appendingPathComponent("out.mp4").path
        let exported = try Run.ftgst(
            [
                "export", try TestEnvironment.fixture("clip.mp4"), "-o", output, "--presets", folder.path,
                "--max-width", "64", "--progress", "none", "--workspace", work.appendingPathComponent("ws").path,
            ], timeout: 120)
        XCTAssertEqual(exported.status, 0, exported.stderr)
        XCTAssertEqual(try exported.json()["preset"] as? String, "house")

        // Only the folder's presets: a built-in name is unknown there.
        let builtinName = try Run.ftgst([
            "export", try TestEnvironment.fixture("clip.mp4"), "-o", work.appendingPathComponent("b.mp4").path,
            "--presets", folder.path, "--preset", "prores-mov", "--workspace", work.appendingPathComponent("ws").path,
        ])
        assertFailure(builtinName, code: "INVALID_ARGUMENT", status: 64)
        XCTAssertTrue(builtinName.stderr.contains("known: house"), builtinName.stderr)
    }

    func testMissingOrEmptyPresetsFolderIsRefused() throws {
        let missing = work.appendingPathComponent("absent").path
        assertFailure(try Run.ftgst(["presets", "--presets", missing]), code: "FILE_NOT_FOUND", status: 66)
        let empty = work.appendingPathComponent("empty", isDirectory: true)
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let none = try Run.ftgst([
            "export", try TestEnvironment.fixture("clip.mp4"), "-o", work.appendingPathComponent("o.mp4").path,
            "--presets", empty.path, "--workspace", work.appendingPathComponent("ws").path,
        ])
        assertFailure(none, code: "FILE_NOT_FOUND", status: 66)
        XCTAssertFalse(FileManager.default.fileExists(atPath: work.appendingPathComponent("o.mp4").path))
        assertFailure(
            try Run.ftgst(["export", "x.mp4", "-o", work.appendingPathComponent("o.mp4").path, "--presets", ""]),
            code: "INVALID_ARGUMENT", status: 64)
    }
}
