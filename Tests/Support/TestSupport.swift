import Foundation
import Synchronization
import XCTest

/// Where `make test` put the generated fixtures and the built CLI. Running `swift test` alone works too once
/// `make fixtures` and `swift build` have run: the defaults point into `.build`.
package enum TestEnvironment {
    package static let packageRoot: URL = {
        // Tests/Support/TestSupport.swift → package root.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }()

    package static let fixtures: URL = {
        if let path = ProcessInfo.processInfo.environment["FTGST_FIXTURES"] { return URL(fileURLWithPath: path) }
        return packageRoot.appendingPathComponent(".build/fixtures")
    }()

    package static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["FTGST_BIN"] { return URL(fileURLWithPath: path) }
        return packageRoot.appendingPathComponent(".build/debug/ftgst")
    }()

    /// A fixture's path; fails the test (never skips) when it was not generated.
    package static func fixture(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let path = fixtures.appendingPathComponent(name).path
        guard FileManager.default.fileExists(atPath: path) else {
            XCTFail(
                "fixture \(name) missing: run `make fixtures` (scripts/fixtures \(fixtures.path))",
                file: file, line: line)
            throw CocoaError(.fileNoSuchFile)
        }
        return path
    }

    /// A fresh empty folder, removed when the test ends.
    package static func temporaryDirectory(_ testCase: XCTestCase) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ftgst-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        testCase.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }
}

/// The outcome of a finished process.
package struct ProcessResult {
    package var status: Int32
    package var stdout: String
    package var stderr: String

    package init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }

    /// The stdout parsed as one JSON object.
    package func json(file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let data = Data(stdout.utf8)
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            XCTFail("stdout is not a JSON object: \(stdout)", file: file, line: line)
            throw CocoaError(.coderReadCorrupt)
        }
        return object
    }
}

package enum Run {
    /// Runs `executable` with `arguments` (in `directory` when given), killing it if it outlives `timeout` seconds
    /// (every wait has a deadline).
    /// `onlyEnvironment` replaces the whole environment (a clean one) instead of adding `environment` to this
    /// process's.
    package static func process(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:],
        timeout: TimeInterval = 60, directory: URL? = nil, onlyEnvironment: Bool = false
    ) throws -> ProcessResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var env = onlyEnvironment ? [:] : ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        let name = "\(executable.lastPathComponent) \(arguments)"
        // Drain both pipes while it runs, so a chatty child never blocks on a full pipe.
        let outData = PipeReader(out)
        let errData = PipeReader(err)
        var timedOut = false
        if exited.wait(timeout: .now() + timeout) == .timedOut {
            timedOut = true
            process.terminate()
            kill(process.processIdentifier, SIGKILL)
            if exited.wait(timeout: .now() + 5) == .timedOut { XCTFail("\(name) outlived SIGKILL by 5 s") }
        }
        // The pipes end when their last writer closes them: normally the process itself, but a child it left
        // behind (a killed shell's command, say) may keep them open. Give up then rather than hang the suite.
        let drainDeadline = DispatchTime.now() + 10
        if !outData.waitForEnd(until: drainDeadline) || !errData.waitForEnd(until: drainDeadline) {
            XCTFail("\(name): its output was still open 10 s after it ended (a child process kept it?)")
        } else {
            // Both read ends are at their end: closed here, because Foundation's Pipe does not close them when it
            // goes (2 file descriptors a run; the whole suite in one process reached 1,400 and Foundation's
            // Process.run then crashed copying its descriptor list).
            try? out.fileHandleForReading.close()
            try? err.fileHandleForReading.close()
        }
        let stdout = String(decoding: outData.data, as: UTF8.self)
        let stderr = String(decoding: errData.data, as: UTF8.self)
        if timedOut {
            XCTFail("\(name) did not finish within \(timeout) s")
            return ProcessResult(status: -1, stdout: stdout, stderr: stderr)
        }
        // `terminationStatus` traps while `isRunning` is still true, so read it only once that is false.
        guard process.waitForExit(timeout: 5) else {
            XCTFail("\(name) still counts as running after its termination handler ran")
            return ProcessResult(status: -1, stdout: stdout, stderr: stderr)
        }
        return ProcessResult(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }

    /// Runs the built `ftgst` binary.
    /// Runs the built `ftgst`. Unless the test names `XDG_CACHE_HOME` or `HOME`, its caches and export workspace
    /// are in a folder of this test process (`privateCache`), not the user's `~/.cache`: two suites running at once
    /// on one machine (or a user's own exports) must not meet in one workspace (`EXPORT_BUSY`).
    package static func ftgst(_ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 60)
        throws
        -> ProcessResult
    {
        var environment = environment
        if environment["XDG_CACHE_HOME"] == nil, environment["HOME"] == nil {
            environment["XDG_CACHE_HOME"] = privateCache.path
        }
        return try process(TestEnvironment.binary, arguments, environment: environment, timeout: timeout)
    }

    /// The cache folder `ftgst` gets in this test process.
    package static let privateCache = FileManager.default.temporaryDirectory.appendingPathComponent(
        "ftgst-test-cache-\(ProcessInfo.processInfo.processIdentifier)")

    /// Runs a tool from PATH (ffmpeg, ffprobe, gst-launch-1.0).
    package static func tool(_ name: String, _ arguments: [String], timeout: TimeInterval = 60) throws -> ProcessResult
    {
        try process(URL(fileURLWithPath: "/usr/bin/env"), [name] + arguments, timeout: timeout)
    }
}

/// Reads a pipe to its end on a thread of its own, keeping what arrived so far, for `Run.process`.
private final class PipeReader: Sendable {
    private let collected = Mutex(Data())
    private let ended = DispatchSemaphore(value: 0)

    package init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData  // blocks until data or the end; empty at the end
                if chunk.isEmpty { break }
                collected.withLock { $0.append(chunk) }
            }
            ended.signal()
        }
    }

    /// Waits for the end of the pipe until `deadline` (once); false if it had not ended by then.
    package func waitForEnd(until deadline: DispatchTime) -> Bool {
        ended.wait(timeout: deadline) == .success
    }

    /// The bytes read so far.
    package var data: Data { collected.withLock { $0 } }
}

extension Process {
    /// Waits at most `timeout` seconds for the process to end (`waitUntilExit()` has no deadline). Returns whether
    /// it ended.
    @discardableResult
    package func waitForExit(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning && Date() < deadline { usleep(5_000) }
        return !isRunning
    }
}

/// Polls `condition` every 50 ms until it holds; after `timeout` seconds fails the test with "no `what`" and
/// throws (every wait has a deadline).
package func waitUntil(
    _ what: String, timeout: TimeInterval = 30, file: StaticString = #filePath, line: UInt = #line,
    _ condition: () -> Bool
) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else {
            XCTFail("no \(what) within \(timeout) s", file: file, line: line)
            throw CocoaError(.executableLoad)
        }
        usleep(50_000)
    }
}

/// Pixels for comparisons, decoded by ffmpeg (an independent decoder) into packed RGB.
package struct DecodedImage {
    package var width: Int
    package var height: Int
    package var rgb: [UInt8]

    package init(width: Int, height: Int, rgb: [UInt8]) {
        self.width = width
        self.height = height
        self.rgb = rgb
    }

    /// Decodes an image file (JPEG/PNG) with ffmpeg. The size is read with ffprobe first.
    package static func read(_ path: String) throws -> DecodedImage {
        let probe = try Run.tool(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "v:0", "-show_entries",
                "stream=width,height", "-of", "csv=p=0", path,
            ])
        let parts = probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]) else {
            XCTFail("ffprobe gave no size for \(path): \(probe.stdout) \(probe.stderr)")
            throw CocoaError(.coderReadCorrupt)
        }
        // Stored pixels: ffmpeg would otherwise apply a JPEG's EXIF orientation while ffprobe reports the stored size.
        return try checked(width: width, height: height, rgb: rawFrame(["-noautorotate", "-i", path]), path)
    }

    /// Frame number `index` of `video` (counted from 0 by ffmpeg's `select`, so no seek semantics are involved),
    /// decoded to RGB at `width`×`height`, with ffmpeg's autorotation.
    package static func frame(of video: String, index: Int, width: Int, height: Int, scaler: String = "bilinear") throws
        -> DecodedImage
    {
        let rgb = try rawFrame([
            "-i", video, "-vf",
            "select=eq(n\\,\(index)),format=rgb24,scale=\(width):\(height):flags=\(scaler)",
            "-vsync", "0",
        ])
        return try checked(width: width, height: height, rgb: rgb, "\(video) frame \(index)")
    }

    /// Frame number `index` of `video` (as above) through an ffmpeg filter chain `filter` that ends in `format=rgb24`
    /// at `width`×`height` (the conversion itself under test, e.g. a scale with stated colours).
    package static func frame(of video: String, index: Int, width: Int, height: Int, filter: String) throws
        -> DecodedImage
    {
        let rgb = try rawFrame(["-i", video, "-vf", "select=eq(n\\,\(index)),\(filter)", "-vsync", "0"])
        return try checked(width: width, height: height, rgb: rgb, "\(video) frame \(index)")
    }

    /// The image, if ffmpeg gave exactly `width`×`height` RGB pixels (the pixel loops below index by the size).
    private static func checked(width: Int, height: Int, rgb: [UInt8], _ what: String) throws -> DecodedImage {
        guard rgb.count == width * height * 3 else {
            XCTFail("\(what): ffmpeg gave \(rgb.count) bytes for \(width)×\(height) RGB")
            throw CocoaError(.coderReadCorrupt)
        }
        return DecodedImage(width: width, height: height, rgb: rgb)
    }

    /// This image turned 90° clockwise.
    package func rotatedClockwise() -> DecodedImage {
        guard rgb.count == width * height * 3 else {
            XCTFail("\(rgb.count) bytes are not \(width)×\(height) RGB")
            return DecodedImage(width: height, height: width, rgb: [])
        }
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
        let result = try Run.tool(
            "ffmpeg",
            ["-v", "error", "-y"] + input + [
                "-frames:v", "1", "-f", "rawvideo",
                "-pix_fmt", "rgb24", output.path,
            ])
        guard result.status == 0, let data = FileManager.default.contents(atPath: output.path) else {
            XCTFail("ffmpeg failed: \(result.stderr)")
            throw CocoaError(.coderReadCorrupt)
        }
        return [UInt8](data)
    }

    /// Mean absolute difference per channel value (0…255) between two images of the same size. Images of
    /// different sizes fail the test and give NaN, which fails every comparison made with it.
    package func meanDifference(_ other: DecodedImage, file: StaticString = #filePath, line: UInt = #line) -> Double {
        guard width == other.width, height == other.height, rgb.count == other.rgb.count, !rgb.isEmpty else {
            XCTFail(
                "images differ in size: \(width)×\(height) (\(rgb.count) values) vs \(other.width)×\(other.height) "
                    + "(\(other.rgb.count) values)", file: file, line: line)
            return .nan
        }
        var total = 0
        for i in 0..<rgb.count { total += abs(Int(rgb[i]) - Int(other.rgb[i])) }
        return Double(total) / Double(rgb.count)
    }

    /// Peak signal-to-noise ratio in dB against `other` (99 for identical images; NaN, failing the test, for
    /// images of different sizes).
    package func psnr(_ other: DecodedImage, file: StaticString = #filePath, line: UInt = #line) -> Double {
        guard width == other.width, height == other.height, rgb.count == other.rgb.count, !rgb.isEmpty else {
            XCTFail(
                "images differ in size: \(width)×\(height) vs \(other.width)×\(other.height)", file: file, line: line)
            return .nan
        }
        var squares = 0
        for i in 0..<rgb.count {
            let d = Int(rgb[i]) - Int(other.rgb[i])
            squares += d * d
        }
        guard squares > 0 else { return 99 }
        return 10 * log10(255 * 255 / (Double(squares) / Double(rgb.count)))
    }
}

/// Asserts a failed CLI run: nothing on stdout, exactly one `[CODE] …` line on stderr, and the code's status.
package func assertFailure(
    _ result: ProcessResult, code: String, status: Int32, file: StaticString = #filePath,
    line: UInt = #line
) {
    XCTAssertEqual(result.stdout, "", "stdout must be empty on failure", file: file, line: line)
    let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: true)
    XCTAssertEqual(lines.count, 1, "stderr must be one line: \(result.stderr)", file: file, line: line)
    XCTAssertTrue(
        result.stderr.hasPrefix("[\(code)] "), "expected [\(code)], got: \(result.stderr)",
        file: file, line: line)
    XCTAssertEqual(result.status, status, "exit status for \(code); stderr: \(result.stderr)", file: file, line: line)
}

/// SplitMix64: a tiny deterministic generator, so the junk is the same on every run.
package struct SplitMix: RandomNumberGenerator {
    private var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Deterministic junk bytes (xorshift*), the same on every run.
package enum TestBytes {
    package static func pseudoRandom(count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &+ 0x9e37_79b9_7f4a_7c15
        var out = [UInt8](repeating: 0, count: count)
        for i in 0..<count {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            out[i] = UInt8(truncatingIfNeeded: (state &* 0x2545_f491_4f6c_dd1d) >> 56)
        }
        return out
    }
}

/// `numbered.mp4` (90 frames, 160×120, 30 fps), whose frame n is a flat grey that encodes n: which frame a picture
/// of it shows, read back from its pixels. Reference frames are decoded by ffmpeg once each and kept.
package final class NumberedClip {
    package let path: String
    private var frames: [Int: DecodedImage] = [:]

    package init() throws { path = try TestEnvironment.fixture("numbered.mp4") }

    /// The frame number a picture shows: the nearest, by mean grey, of the frames around `expected` (neighbours
    /// differ by 8 luma codes).
    package func frameNumber(_ picture: String, near expected: Int) throws -> Int {
        let image = try DecodedImage.read(picture)
        let distances = try (max(0, expected - 2)...min(89, expected + 2)).map { index in
            (index, image.meanDifference(try frame(index)))
        }
        return distances.min { $0.1 < $1.1 }!.0
    }

    private func frame(_ index: Int) throws -> DecodedImage {
        if let known = frames[index] { return known }
        let decoded = try DecodedImage.frame(of: path, index: index, width: 160, height: 120)
        frames[index] = decoded
        return decoded
    }
}
