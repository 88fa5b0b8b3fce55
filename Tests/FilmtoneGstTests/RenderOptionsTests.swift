// Unit tests of the options previews and exports share (RenderOptions, its JSON reading and checks): no media.

import Foundation
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneGst
@testable import FilmtoneLooks

final class PreviewAndExportOptionsTests: XCTestCase {
    private func json(_ object: [String: Any]) throws -> Data { try JSONSerialization.data(withJSONObject: object) }

    private func assertRefused(
        _ message: String, file: StaticString = #filePath, line: UInt = #line,
        _ body: () throws -> Any
    ) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual((error as? FilmtoneError)?.code, .invalidArgument, "\(error)", file: file, line: line)
            XCTAssertEqual((error as? FilmtoneError)?.message, message, file: file, line: line)
        }
    }

    func testTheSharedFieldsReadAsEachJobsOwnWithEachJobsDefaults() {
        var preview = PreviewOptions(source: "clip.mp4")
        preview.creativeLUT = "look.cube"
        preview.intensity = 0.8
        preview.maxWidth = 640
        XCTAssertEqual(preview.render.creativeLUT, "look.cube")
        XCTAssertEqual(preview.render.intensity, 0.8)
        XCTAssertEqual([preview.maxWidth, preview.maxHeight], [640, 1280])
        XCTAssertEqual(preview.timeoutMilliseconds, 30_000, "a preview always has a deadline")
        preview.timeoutMilliseconds = 500
        XCTAssertEqual(preview.render.timeoutMilliseconds, 500)

        var export = ExportOptions(source: "clip.mp4")
        export.intensity = 0.5
        export.headers = ["X-Token: a"]
        XCTAssertEqual(export.render.intensity, 0.5)
        XCTAssertEqual(export.render.headers, ["X-Token: a"])
        XCTAssertEqual([export.maxWidth, export.maxHeight], [16384, 16384], "never shrunk unless asked")
        XCTAssertNil(export.timeoutMilliseconds, "an export has no deadline unless asked")
        XCTAssertEqual(export.interpolation, .tetrahedral)
    }

    func testPreviewRequestReadsEveryKeyAndRefusesUnknownKeysAndWrongTypes() throws {
        let options = try PreviewOptions.fromJSON(
            try json([
                "source": "a.mp4", "output": "o.png", "headers": ["X-A: 1"], "inputLut": "i.cube",
                "creativeLut": "c.cube",
                "intensity": 0.25, "interpolation": "nearest", "timeMs": 1500, "toleranceMs": 40, "maxWidth": 320,
                "maxHeight": 200, "format": "jpeg", "quality": 0.5, "timeoutMs": 900, "mezzanine": "off",
                "mezzanineDir": "/m",
            ]))
        XCTAssertEqual(
            [options.source, options.output, options.inputLUT, options.creativeLUT],
            ["a.mp4", "o.png", "i.cube", "c.cube"])
        XCTAssertEqual(options.interpolation, .nearest)
        XCTAssertEqual(options.headers, ["X-A: 1"])
        XCTAssertEqual(options.intensity, 0.25)
        XCTAssertEqual(
            [options.timeMilliseconds, options.toleranceMilliseconds, options.timeoutMilliseconds],
            [1500, 40, 900])
        XCTAssertEqual([options.maxWidth, options.maxHeight], [320, 200])
        XCTAssertEqual(options.format, .jpeg)
        XCTAssertEqual(options.mezzanine, .off)
        XCTAssertEqual(options.mezzanineDirectory, "/m")
        XCTAssertEqual(options.quality, 0.5)
        let defaults = try PreviewOptions.fromJSON(try json(["source": "a.mp4"]))
        XCTAssertEqual([defaults.maxWidth, defaults.maxHeight], [1280, 1280])
        XCTAssertEqual(defaults.timeoutMilliseconds, 30_000)

        assertRefused("request: unknown key 'intensty'") {
            try PreviewOptions.fromJSON(try self.json(["source": "a.mp4", "intensty": 0.5]))
        }
        // An export's key is not a preview's.
        assertRefused("request: unknown key 'preset'") {
            try PreviewOptions.fromJSON(try self.json(["source": "a.mp4", "preset": "h264-mp4"]))
        }
        assertRefused("request: 'source' is required") { try PreviewOptions.fromJSON(try self.json(["output": "o"])) }
        assertRefused("request: not a JSON object") { try PreviewOptions.fromJSON(Data("[1]".utf8)) }
        assertRefused("request: 'intensity' must be a number") {
            try PreviewOptions.fromJSON(try self.json(["source": "a.mp4", "intensity": true]))
        }
        assertRefused("request: 'timeMs' must be a whole number") {
            try PreviewOptions.fromJSON(try self.json(["source": "a.mp4", "timeMs": 1.5]))
        }
        // 0 and 1 are numbers (Foundation on Linux reads them as booleans), true is not.
        let zeroOne = try PreviewOptions.fromJSON(
            Data(#"{"source": "a.mp4", "intensity": 1, "toleranceMs": 0, "timeMs": 1, "quality": 0}"#.utf8))
        XCTAssertEqual([zeroOne.intensity, zeroOne.quality], [1, 0])
        XCTAssertEqual([zeroOne.toleranceMilliseconds, zeroOne.timeMilliseconds], [0, 1])
        assertRefused("request: not valid JSON: duplicate key 'intensity' at byte 38") {
            try PreviewOptions.fromJSON(Data(#"{"source": "a.mp4", "intensity": 0.5, "intensity": 1}"#.utf8))
        }
        assertRefused("request: 'headers' must be a list of strings") {
            try PreviewOptions.fromJSON(try self.json(["source": "a.mp4", "headers": "X-A: 1"]))
        }
        assertRefused("request: 'output' must be a string") {
            try PreviewOptions.fromJSON(try self.json(["source": "a.mp4", "output": 3]))
        }
    }

    func testAPreviewsEncodingFollowsItsOutputsExtensionOrIsRefused() throws {
        func format(_ named: String?, _ output: String) throws -> ImageFormat {
            try PreviewRequest.outputFormat(named: named.map(ImageFormat.parse), output: URL(fileURLWithPath: output))
        }
        XCTAssertEqual(try format(nil, "/o/a.jpg"), .jpeg)
        XCTAssertEqual(try format(nil, "/o/a.JPEG"), .jpeg)
        XCTAssertEqual(try format(nil, "/o/a.png"), .png)
        XCTAssertEqual(try format(nil, "/o/a"), .png)
        XCTAssertEqual(try format("jpeg", "/o/a"), .jpeg)
        XCTAssertEqual(try format("JPG", "/o/a.jpeg"), .jpeg)
        for (named, output, code) in [
            (nil, "/o/a.webp", FilmtoneError.Code.unsupportedFormat), ("png", "/o/a.webp", .unsupportedFormat),
            ("gif", "/o/a.png", .unsupportedFormat), ("png", "/o/a.jpg", .invalidArgument),
            ("jpeg", "/o/a.png", .invalidArgument),
        ] as [(String?, String, FilmtoneError.Code)] {
            XCTAssertThrowsError(try format(named, output), "\(named ?? "nil") \(output)") {
                XCTAssertEqual(($0 as? FilmtoneError)?.code, code, "\($0)")
            }
        }
        var options = PreviewOptions(source: "/media/a.mp4")
        options.output = "/out/a.webp"
        XCTAssertThrowsError(try PreviewRequest(options)) {
            XCTAssertEqual(($0 as? FilmtoneError)?.code, .unsupportedFormat)
        }
        options.output = "/out/a.jpg"
        XCTAssertEqual(try PreviewRequest(options).format, .jpeg, "the library honours the extension too")
    }

    func testExportRequestIsThePreviewsPlusTheExportFields() throws {
        let options = try ExportOptions.fromJSON(
            try json([
                "source": "a.mp4", "output": "o.mp4", "creativeLut": "c.cube", "intensity": 0.5, "timeMs": 1000,
                "format": "png", "mezzanine": "auto", "preset": "h264-mp4", "maxWidth": 160, "audio": "none",
                "depth": 10, "buildMezzanine": true, "overwrite": true, "workspace": "/w", "timeoutMs": 5000,
                "startMs": 100, "endMs": 900,
            ]))
        XCTAssertEqual(
            [options.source, options.output, options.creativeLUT, options.preset, options.workspace],
            ["a.mp4", "o.mp4", "c.cube", "h264-mp4", "/w"])
        XCTAssertEqual(options.intensity, 0.5)
        XCTAssertEqual([options.maxWidth, options.maxHeight], [160, 16384], "the export's own default box")
        XCTAssertEqual(options.audio, .none)
        XCTAssertEqual(options.depth, .ten)
        XCTAssertEqual([options.mezzanine, options.overwrite], [true, true])
        XCTAssertEqual(
            [options.timeoutMilliseconds, options.startMilliseconds, options.endMilliseconds],
            [5000, 100, 900])
        XCTAssertEqual(try ExportOptions.fromJSON(try json(["source": "a.mp4", "depth": "8"])).depth, .eight)
        let zero = try ExportOptions.fromJSON(
            Data(#"{"source": "a.mp4", "startMs": 0, "endMs": 1, "intensity": 0, "depth": 10.0}"#.utf8))
        XCTAssertEqual([zero.startMilliseconds, zero.endMilliseconds], [0, 1])
        XCTAssertEqual(zero.intensity, 0)
        XCTAssertEqual(zero.depth, .ten)
        assertRefused("request: not valid JSON: duplicate key 'startMs' at byte 34") {
            try ExportOptions.fromJSON(Data(#"{"source": "a.mp4", "startMs": 0, "startMs": 5}"#.utf8))
        }
        XCTAssertNil(try ExportOptions.fromJSON(try json(["source": "a.mp4"])).timeoutMilliseconds)

        assertRefused("request: unknown key 'bitrate'") {
            try ExportOptions.fromJSON(try self.json(["source": "a.mp4", "bitrate": 5]))
        }
        // A preview's own field is accepted, and still type-checked.
        assertRefused("request: 'format' must be a string") {
            try ExportOptions.fromJSON(try self.json(["source": "a.mp4", "format": 5]))
        }
        assertRefused("request: 'audio' must be auto, copy, aac or none") {
            try ExportOptions.fromJSON(try self.json(["source": "a.mp4", "audio": "mp3"]))
        }
        assertRefused("request: 'depth' must be auto, 8 or 10") {
            try ExportOptions.fromJSON(try self.json(["source": "a.mp4", "depth": 12]))
        }
        assertRefused("request: 'overwrite' must be true or false") {
            try ExportOptions.fromJSON(try self.json(["source": "a.mp4", "overwrite": "yes"]))
        }
        assertRefused("request: 'startMs' must be a whole number") {
            try ExportOptions.fromJSON(try self.json(["source": "a.mp4", "startMs": 0.5]))
        }
        assertRefused("request: 'source' is required") { try ExportOptions.fromJSON(try self.json([:])) }
    }

    func testBothRequestsCheckTheSharedFieldsTheSameWay() throws {
        func preview(_ change: (inout PreviewOptions) -> Void) throws -> PreviewRequest {
            var options = PreviewOptions(source: "/media/a.mp4")
            options.output = "/out/a.png"
            change(&options)
            return try PreviewRequest(options)
        }
        func export(_ change: (inout ExportOptions) -> Void) throws -> ExportRequest {
            var options = ExportOptions(source: "/media/a.mp4")
            options.output = "/out/a.mp4"
            change(&options)
            return try ExportRequest(options, environment: [:])
        }
        let refusals: [(String, (inout RenderOptions) -> Void)] = [
            ("an output path is required (-o OUT)", { $0.output = nil }),
            ("an output path is required (-o OUT)", { $0.output = "" }),
            ("--intensity must be between 0 and 1", { $0.intensity = 1.5 }),
            ("--intensity must be between 0 and 1", { $0.intensity = .nan }),
            ("--max-width must be 1…16384", { $0.maxWidth = 0 }),
            ("--max-height must be 1…16384", { $0.maxHeight = 16385 }),
            ("--timeout-ms must be 1…\(FrameOptions.maxMilliseconds)", { $0.timeoutMilliseconds = 0 }),
        ]
        for (message, change) in refusals {
            assertRefused(message) { try preview { change(&$0.render) } }
            assertRefused(message) { try export { change(&$0.render) } }
        }

        let missing = "/nonexistent/\(UUID().uuidString).cube"
        for request in [{ try preview { $0.creativeLUT = missing } }, { try export { $0.creativeLUT = missing } }]
            as [() throws -> Any]
        {
            XCTAssertThrowsError(try request()) { XCTAssertEqual(($0 as? FilmtoneError)?.code, .fileNotFound) }
        }

        let relative = try preview { $0.output = "rel/a.png" }
        XCTAssertEqual(relative.output.path, FileManager.default.currentDirectoryPath + "/rel/a.png")
        XCTAssertEqual(
            try export { $0.output = "rel/a.mp4" }.output.path,
            FileManager.default.currentDirectoryPath + "/rel/a.mp4")
        XCTAssertNil(try export { $0.creativeLUT = "" }.look, "an empty slot is no LUT: no ftlut in the export")
        XCTAssertEqual(
            try preview { $0.intensity = 0.3 }.frame.look,
            LookSettings(inputLUT: nil, creativeLUT: nil, intensity: 0.3, interpolation: .tetrahedral),
            "a preview always has its ftlut settings")
    }
}
