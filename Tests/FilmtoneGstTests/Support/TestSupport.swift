import Foundation
import XCTest

/// Where `make test` put the generated fixtures and the built CLI. Running `swift test` alone works too once
/// `make fixtures` and `swift build` have run: the defaults point into `.build`.
enum TestEnvironment {
    static let packageRoot: URL = {
        // Tests/FilmtoneGstTests/Support/TestSupport.swift → package root.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }()

    static let fixtures: URL = {
        if let path = ProcessInfo.processInfo.environment["FTGST_FIXTURES"] { return URL(fileURLWithPath: path) }
        return packageRoot.appendingPathComponent(".build/fixtures")
    }()

    static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["FTGST_BIN"] { return URL(fileURLWithPath: path) }
        return packageRoot.appendingPathComponent(".build/debug/ftgst")
    }()

    /// A fixture's path; fails the test (never skips) when it was not generated.
    static func fixture(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let path = fixtures.appendingPathComponent(name).path
        guard FileManager.default.fileExists(atPath: path) else {
            XCTFail("fixture \(name) missing: run `make fixtures` (scripts/fixtures \(fixtures.path))",
                    file: file, line: line)
            throw CocoaError(.fileNoSuchFile)
        }
        return path
    }

    /// A fresh empty folder, removed when the test ends.
    static func temporaryDirectory(_ testCase: XCTestCase) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ftgst-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        testCase.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }
}

/// The outcome of a finished process.
struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String

    /// The stdout parsed as one JSON object.
    func json(file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let data = Data(stdout.utf8)
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            XCTFail("stdout is not a JSON object: \(stdout)", file: file, line: line)
            throw CocoaError(.coderReadCorrupt)
        }
        return object
    }
}

enum Run {
    /// Runs `executable` with `arguments`, killing it if it outlives `timeout` seconds (every wait has a deadline).
    static func process(_ executable: URL, _ arguments: [String], environment: [String: String] = [:],
                        timeout: TimeInterval = 60) throws -> ProcessResult
    {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        // Drain both pipes while it runs, so a chatty child never blocks on a full pipe.
        var outData = Data()
        var errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { outData = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter()
        DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        try process.run()
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { process.waitUntilExit(); finished.signal() }
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            kill(process.processIdentifier, SIGKILL)
            _ = finished.wait(timeout: .now() + 5)
            group.wait()
            XCTFail("\(executable.lastPathComponent) \(arguments) did not finish within \(timeout) s")
            return ProcessResult(status: -1, stdout: String(decoding: outData, as: UTF8.self),
                                 stderr: String(decoding: errData, as: UTF8.self))
        }
        group.wait()
        return ProcessResult(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                             stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs the built `ftgst` binary.
    static func ftgst(_ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 60) throws
        -> ProcessResult
    {
        try process(TestEnvironment.binary, arguments, environment: environment, timeout: timeout)
    }

    /// Runs a tool from PATH (ffmpeg, ffprobe, gst-launch-1.0).
    static func tool(_ name: String, _ arguments: [String], timeout: TimeInterval = 60) throws -> ProcessResult {
        try process(URL(fileURLWithPath: "/usr/bin/env"), [name] + arguments, timeout: timeout)
    }
}

/// Pixels for comparisons, decoded by ffmpeg (an independent decoder) into packed RGB.
struct DecodedImage {
    var width: Int
    var height: Int
    var rgb: [UInt8]

    /// Decodes an image file (JPEG/PNG) with ffmpeg. The size is read with ffprobe first.
    static func read(_ path: String) throws -> DecodedImage {
        let probe = try Run.tool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                             "stream=width,height", "-of", "csv=p=0", path])
        let parts = probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]) else {
            throw CocoaError(.coderReadCorrupt)
        }
        // Stored pixels: ffmpeg would otherwise apply a JPEG's EXIF orientation while ffprobe reports the stored size.
        return try DecodedImage(width: width, height: height, rgb: rawFrame(["-noautorotate", "-i", path]))
    }

    /// Frame number `index` of `video` (counted from 0 by ffmpeg's `select`, so no seek semantics are involved),
    /// decoded to RGB at `width`×`height`, with ffmpeg's autorotation.
    static func frame(of video: String, index: Int, width: Int, height: Int, scaler: String = "bilinear") throws
        -> DecodedImage
    {
        let rgb = try rawFrame(["-i", video, "-vf",
                                "select=eq(n\\,\(index)),format=rgb24,scale=\(width):\(height):flags=\(scaler)",
                                "-vsync", "0"])
        return DecodedImage(width: width, height: height, rgb: rgb)
    }

    /// This image turned 90° clockwise.
    func rotatedClockwise() -> DecodedImage {
        var out = [UInt8](repeating: 0, count: rgb.count)
        for y in 0..<height {
            for x in 0..<width {
                let target = (x * height + (height - 1 - y)) * 3
                let source = (y * width + x) * 3
                out[target] = rgb[source]
                out[target + 1] = rgb[source + 1]
                out[target + 2] = rgb[source + 2]
            }
        }
        return DecodedImage(width: height, height: width, rgb: out)
    }

    private static func rawFrame(_ input: [String]) throws -> [UInt8] {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("ftgst-raw-\(UUID().uuidString).rgb")
        defer { try? FileManager.default.removeItem(at: output) }
        let result = try Run.tool("ffmpeg", ["-v", "error", "-y"] + input + ["-frames:v", "1", "-f", "rawvideo",
                                                                             "-pix_fmt", "rgb24", output.path])
        guard result.status == 0, let data = FileManager.default.contents(atPath: output.path) else {
            XCTFail("ffmpeg failed: \(result.stderr)")
            throw CocoaError(.coderReadCorrupt)
        }
        return [UInt8](data)
    }

    /// Mean absolute difference per channel value (0…255) between two images of the same size.
    func meanDifference(_ other: DecodedImage) -> Double {
        precondition(width == other.width && height == other.height && rgb.count == other.rgb.count)
        var total = 0
        for i in 0..<rgb.count { total += abs(Int(rgb[i]) - Int(other.rgb[i])) }
        return Double(total) / Double(rgb.count)
    }
}

/// Asserts a failed CLI run: nothing on stdout, exactly one `[CODE] …` line on stderr, and the code's status.
func assertFailure(_ result: ProcessResult, code: String, status: Int32, file: StaticString = #filePath,
                   line: UInt = #line)
{
    XCTAssertEqual(result.stdout, "", "stdout must be empty on failure", file: file, line: line)
    let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: true)
    XCTAssertEqual(lines.count, 1, "stderr must be one line: \(result.stderr)", file: file, line: line)
    XCTAssertTrue(result.stderr.hasPrefix("[\(code)] "), "expected [\(code)], got: \(result.stderr)",
                  file: file, line: line)
    XCTAssertEqual(result.status, status, "exit status for \(code); stderr: \(result.stderr)", file: file, line: line)
}
