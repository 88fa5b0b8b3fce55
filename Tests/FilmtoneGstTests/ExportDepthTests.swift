// 10 bits end to end: a smooth 10-bit luma ramp through export presets, judged on the decoded Y plane
// (ffmpeg decodes; the source's own decoded row is the reference, so the fixture's rounding is not in question).

import FilmtoneTestSupport
import Foundation
import XCTest

@testable import FilmtoneGst
@testable import FilmtoneLooks

final class ExportDepthTests: XCTestCase {
    private var work: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        work = try TestEnvironment.temporaryDirectory(self)
    }

    private func lut(_ name: String) -> String {
        SharedLUTs.root.appendingPathComponent("colour-science/resolve_cube/\(name)").path
    }

    private func export(_ output: String, _ extra: [String]) throws -> [String: Any] {
        let result = try Run.ftgst(
            [
                "export", try TestEnvironment.fixture("ramp10.mkv"), "-o",
                work.appendingPathComponent(output).path, "--workspace",
                work.appendingPathComponent("workspace").path, "--progress", "none",
            ] + extra,
            timeout: 120)
        XCTAssertEqual(result.status, 0, result.stderr)
        let sidecar = try XCTUnwrap(
            FileManager.default.contents(
                atPath: work.appendingPathComponent(output).path + ".ftgst.json"))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: sidecar) as? [String: Any])
    }

    /// Row 16 of the first frame's Y plane, as 10-bit codes.
    private func lumaRow(_ path: String, pixelFormat: String) throws -> [Int] {
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("ftgst-y-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: raw) }
        let decoded = try Run.tool(
            "ffmpeg",
            [
                "-v", "error", "-y", "-i", path, "-frames:v", "1", "-f", "rawvideo",
                "-pix_fmt", pixelFormat, raw.path,
            ])
        XCTAssertEqual(decoded.status, 0, decoded.stderr)
        let data = try Data(contentsOf: raw)
        let rowBytes = 1024 * 2
        return (0..<1024).map { x in
            Int(data[16 * rowBytes + 2 * x]) | Int(data[16 * rowBytes + 2 * x + 1]) << 8
        }
    }

    private func source() throws -> [Int] {
        try lumaRow(try TestEnvironment.fixture("ramp10.mkv"), pixelFormat: "yuv444p10le")
    }

    private static func meanDifference(_ a: [Int], _ b: [Int]) -> Double {
        Double(zip(a, b).map { abs($0 - $1) }.reduce(0, +)) / Double(a.count)
    }

    private static func steps(_ row: [Int]) -> [Int] {
        zip(row, row.dropFirst()).map { abs($1 - $0) }
    }

    func testTenBitRampStaysTenBitAndDepthEightShowsEightBitSteps() throws {
        let ramp = try source()
        XCTAssertEqual(Self.steps(ramp).max(), 1, "the fixture is a smooth ramp")

        let ten = try export("ramp10.mov", ["--creative-lut", lut("Unit.cube")])
        XCTAssertEqual(ten["depth"] as? Int, 10, "auto: a 10-bit preset keeps the source's depth")
        let kept = try lumaRow(work.appendingPathComponent("ramp10.mov").path, pixelFormat: "yuv422p10le")
        XCTAssertLessThanOrEqual(Self.meanDifference(kept, ramp), 0.5, "within half a 10-bit code on average")
        XCTAssertLessThanOrEqual(Self.steps(kept).max() ?? 99, 2, "no step over 2 codes: no banding")

        // The same run at 8 bits: the look works on 8-bit RGB; the error triples and reaches several codes.
        let eight = try export("ramp8.mov", ["--creative-lut", lut("Unit.cube"), "--depth", "8"])
        XCTAssertEqual(eight["depth"] as? Int, 8)
        let rounded = try lumaRow(work.appendingPathComponent("ramp8.mov").path, pixelFormat: "yuv422p10le")
        XCTAssertGreaterThan(Self.meanDifference(rounded, ramp), 1)
        XCTAssertGreaterThanOrEqual(zip(rounded, ramp).map { abs($0 - $1) }.max() ?? 0, 3)

        // Without a look, --depth 8 passes the picture through 8-bit 4:4:4: 220 levels for the 877-code ramp,
        // a step of about 4 codes every 4 pixels.
        _ = try export("plain8.mov", ["--depth", "8"])
        let banded = try lumaRow(work.appendingPathComponent("plain8.mov").path, pixelFormat: "yuv422p10le")
        XCTAssertGreaterThan(Self.steps(banded).filter { $0 >= 3 }.count, 150, "the 4-code steps of 8 bits")
        XCTAssertEqual(Self.steps(kept).filter { $0 >= 3 }.count, 0)
    }

    func testRealLookAtTenBitsMatchesTheFloatReference() throws {
        let ramp = try source()
        _ = try export("look10.mov", ["--creative-lut", lut("Colour_Correct.cube")])
        let looked = try lumaRow(work.appendingPathComponent("look10.mov").path, pixelFormat: "yuv422p10le")
        // The reference: each grey input through Look.apply in Double, back to limited-range 10-bit luma with
        // BT.601 weights (what GStreamer tags a 1024×32 picture with no colorimetry of its own).
        let look = try Look(
            inputLUT: nil, creativeLUT: try CubeLUT.load(path: lut("Colour_Correct.cube")),
            intensity: 1, interpolation: .tetrahedral)
        let expected = ramp.map { code -> Int in
            let grey = min(max(Double(code - 64) / 876, 0), 1)
            let rgb = look.apply(SIMD3(grey, grey, grey))
            let luma = 0.299 * rgb.x + 0.587 * rgb.y + 0.114 * rgb.z
            return Int((64 + 876 * min(max(luma, 0), 1)).rounded())
        }
        XCTAssertGreaterThan(Self.meanDifference(expected, ramp), 5, "the look really changes the picture")
        XCTAssertLessThanOrEqual(Self.meanDifference(looked, expected), 1.5)
        XCTAssertLessThanOrEqual(zip(looked, expected).map { abs($0 - $1) }.max() ?? 99, 4)
    }

    func testHEVCTenPresetWritesMainTenAndDepthTenNeedsATenBitPreset() throws {
        let sidecar = try export("ramp.mp4", ["--preset", "hevc10-mp4"])
        XCTAssertEqual(sidecar["depth"] as? Int, 10)
        let probe = try Run.tool(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "v:0", "-show_entries",
                "stream=profile,pix_fmt", "-of", "csv=p=0",
                work.appendingPathComponent("ramp.mp4").path,
            ])
        XCTAssertEqual(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "Main 10,yuv420p10le")

        let refused = try Run.ftgst([
            "export", try TestEnvironment.fixture("ramp10.mkv"), "-o",
            work.appendingPathComponent("r.mp4").path, "--preset", "h264-mp4",
            "--depth", "10", "--workspace", work.appendingPathComponent("ws").path,
        ])
        assertFailure(refused, code: "INVALID_ARGUMENT", status: 64)
    }

    func testDepthResolution() throws {
        let presets = try ExportPresets.all()
        let prores = try XCTUnwrap(presets.first { $0.name == "prores-mov" })
        let h264 = try XCTUnwrap(presets.first { $0.name == "h264-mp4" })
        XCTAssertEqual(try ExportPlan.resolveDepth(.auto, sourceDepth: 10, preset: prores), 10)
        XCTAssertEqual(try ExportPlan.resolveDepth(.auto, sourceDepth: 8, preset: prores), 8)
        XCTAssertEqual(try ExportPlan.resolveDepth(.auto, sourceDepth: nil, preset: prores), 10)
        XCTAssertEqual(try ExportPlan.resolveDepth(.auto, sourceDepth: 10, preset: h264), 8)
        XCTAssertEqual(try ExportPlan.resolveDepth(.eight, sourceDepth: 10, preset: prores), 8)
        XCTAssertThrowsError(try ExportPlan.resolveDepth(.ten, sourceDepth: 10, preset: h264))
        XCTAssertEqual(
            ExportPlan.workingFormat(look: true, depth: 10, sourceDepth: 10),
            ["video/x-raw,format=RGBA64_LE", "!"])
        XCTAssertEqual(
            ExportPlan.workingFormat(look: true, depth: 8, sourceDepth: 10),
            ["video/x-raw,format=BGRx", "!"])
        XCTAssertEqual(
            ExportPlan.workingFormat(look: true, depth: 8, sourceDepth: 8, encoderFormat: "I420"),
            ["video/x-raw,format=I420", "!"], "no conversion pass in front of a 4:2:0 encoder")
        XCTAssertEqual(
            ExportPlan.workingFormat(look: true, depth: 10, sourceDepth: 10, encoderFormat: "I420_10LE"),
            ["video/x-raw,format=RGBA64_LE", "!"])
        XCTAssertEqual(ExportPlan.encoderFormat(h264), "I420")
        XCTAssertEqual(ExportPlan.encoderFormat(prores), "I422_10LE")
        XCTAssertEqual(ExportPlan.workingFormat(look: false, depth: 8, sourceDepth: 8), [])
        XCTAssertEqual(ExportPlan.workingFormat(look: false, depth: 8, sourceDepth: 10), ["video/x-raw,format=Y444"])
    }
}
