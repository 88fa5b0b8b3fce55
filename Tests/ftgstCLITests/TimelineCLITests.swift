import FilmtoneTestSupport
import Foundation
import XCTest

/// Every command on probe's 0-based timeline (time 0 = the first video frame's start, as ffmpeg's `-ss` and
/// players count), on the containers that get it wrong in different ways: an MPEG-TS starting at 1.47 s, Matroska
/// and WebM with millisecond timestamps (neighbouring frames overlap), variable-rate MP4 and Matroska, an MP4 with
/// an empty edit. The expected frames come from ffprobe, not from numbers written here.
final class TimelineCLITests: XCTestCase {
    /// Frame start times (µs) of `video`'s first video stream on the 0-based timeline, in presentation order, as
    /// ffprobe decodes them.
    private func frameTimes(_ video: String) throws -> [Int64] {
        let result = try Run.tool(
            "ffprobe",
            ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time", "-of", "csv=p=0", video])
        XCTAssertEqual(result.status, 0, result.stderr)
        let seconds = result.stdout.split(whereSeparator: \.isNewline).compactMap {
            Double($0.split(separator: ",").first.map(String.init) ?? "")
        }.sorted()
        let first = try XCTUnwrap(seconds.first, "ffprobe found no frame in \(video)")
        return seconds.map { Int64((($0 - first) * 1e6).rounded()) }
    }

    /// The index of the frame on screen at `ms`: the last one starting at or before it.
    private func onScreen(_ times: [Int64], at ms: Int64) -> Int {
        times.lastIndex { $0 <= ms * 1000 } ?? 0
    }

    private func milliseconds(_ microseconds: Int64) -> Int { Int(microseconds / 1000) }

    private func success(_ result: ProcessResult, file: StaticString = #filePath, line: UInt = #line) throws
        -> [String: Any]
    {
        XCTAssertEqual(result.status, 0, "stderr: \(result.stderr)", file: file, line: line)
        return try result.json(file: file, line: line)
    }

    /// The image at `path` is frame `index` of `video` (as ffmpeg numbers its decoded frames), clearly closer
    /// to it than to its neighbours.
    private func assertShows(
        _ path: String, frame index: Int, of video: String, count: Int, _ what: String,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let ours = try DecodedImage.read(path)
        let distance = ours.meanDifference(
            try DecodedImage.frame(of: video, index: index, width: ours.width, height: ours.height), file: file,
            line: line)
        for neighbour in [index - 1, index + 1] where (0..<count).contains(neighbour) {
            let other = ours.meanDifference(
                try DecodedImage.frame(of: video, index: neighbour, width: ours.width, height: ours.height),
                file: file, line: line)
            XCTAssertLessThan(
                distance * 2, other, "\(what): frame \(index) expected, frame \(neighbour) is as close", file: file,
                line: line)
        }
    }

    // MARK: - thumb

    /// The frame on screen at each time, reported at its own start: the first frame is 0 in an MPEG-TS (not
    /// 766), the frame starting exactly at 33 or 1000 ms in Matroska/WebM is not skipped for the one before, a
    /// variable-rate frame at 1000 ms says 1000 (not an average-rate 988), and the last frame can be reached.
    func testThumbShowsTheFrameOnScreenAtItsFFprobeTime() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        for name in ["clip.ts", "clip.mkv", "clip.webm", "vfr.mp4", "vfr.mkv"] {
            let video = try TestEnvironment.fixture(name)
            let times = try frameTimes(video)
            let last = milliseconds(times[times.count - 1])
            // The last frame's own start: vfr.mp4 states 1 ms for it, so a millisecond later is past the end.
            for ms in [0, 33, 34, 1000, 1010, Int64(last)] {
                let what = "\(name) at \(ms) ms"
                let output = folder.appendingPathComponent("\(name)-\(ms).png").path
                let json = try success(
                    try Run.ftgst(["thumb", video, "--time-ms", "\(ms)", "--tolerance-ms", "0", "-o", output]))
                let index = onScreen(times, at: ms)
                XCTAssertEqual(json["timeMs"] as? Int, milliseconds(times[index]), what)
                try assertShows(output, frame: index, of: video, count: times.count, what)
            }
        }
    }

    /// Within the default tolerance the frame returned may be a keyframe, but its reported time is its own.
    func testThumbWithinToleranceReportsTheTimeOfTheFrameItShows() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let video = try TestEnvironment.fixture("clip.ts")
        let times = try frameTimes(video)
        for ms: Int64 in [0, 1500, 2990] {
            let output = folder.appendingPathComponent("\(ms).png").path
            let json = try success(try Run.ftgst(["thumb", video, "--time-ms", "\(ms)", "-o", output]))
            let time = try XCTUnwrap(json["timeMs"] as? Int)
            XCTAssertLessThanOrEqual(abs(Int64(time) - ms), 2000, "within the default tolerance")
            let index = try XCTUnwrap(times.firstIndex { milliseconds($0) == time }, "\(time) ms is no frame's start")
            try assertShows(output, frame: index, of: video, count: times.count, "clip.ts at \(ms) ms")
        }
    }

    // MARK: - preview

    func testPreviewShowsTheFrameOnScreenOnTheSameTimeline() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        for (name, ms, tolerance) in [("clip.mkv", 1000, 0), ("vfr.mp4", 1010, 0), ("clip.ts", 0, 1000)]
            as [(String, Int64, Int)]
        {
            let video = try TestEnvironment.fixture(name)
            let times = try frameTimes(video)
            let output = folder.appendingPathComponent("\(name).png").path
            let json = try success(
                try Run.ftgst([
                    "preview", video, "--mezzanine", "off", "--time-ms", "\(ms)", "--tolerance-ms", "\(tolerance)",
                    "-o", output,
                ]))
            let index = onScreen(times, at: ms)
            XCTAssertEqual(json["timeMs"] as? Int, milliseconds(times[index]), "\(name) at \(ms) ms")
            try assertShows(output, frame: index, of: video, count: times.count, "\(name) at \(ms) ms")
        }
    }

    /// A mezzanine (MJPEG: `jpegdec` is an image decoder) keeps the frame times of a variable-rate clip and of
    /// an MPEG-TS on the same 0-based timeline.
    func testPreviewFromAMezzanineUsesTheSameTimeline() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let mezzanines = folder.appendingPathComponent("mezzanines").path
        for name in ["vfr.mp4", "clip.ts"] {
            let video = try TestEnvironment.fixture(name)
            let times = try frameTimes(video)
            _ = try success(try Run.ftgst(["mezzanine", video, "--mezzanine-dir", mezzanines]))
            for ms: Int64 in [10, 1010] {
                let output = folder.appendingPathComponent("\(name)-\(ms).png").path
                let json = try success(
                    try Run.ftgst([
                        "preview", video, "--mezzanine-dir", mezzanines, "--time-ms", "\(ms)", "-o", output,
                    ]))
                XCTAssertEqual(json["mezzanine"] as? Bool, true)
                let index = onScreen(times, at: ms)
                XCTAssertEqual(json["timeMs"] as? Int, milliseconds(times[index]), "\(name) at \(ms) ms")
                try assertShows(output, frame: index, of: video, count: times.count, "\(name) at \(ms) ms")
            }
        }
    }

    // MARK: - export

    /// A cut starts with the frame on screen at `--start-ms` and keeps every frame that starts before `--end-ms`,
    /// up to the very last one.
    func testExportCutsStartAtTheRequestedFrameAndReachTheEnd() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let cases: [(String, Int64, Int64?)] = [
            ("clip.ts", 1000, 2000), ("clip.ts", 2500, nil), ("clip.mkv", 1000, nil), ("vfr.mp4", 10, nil),
            ("vfr.mp4", 10, 1000),
        ]
        for (name, start, end) in cases {
            let what = "\(name) from \(start) to \(end.map { "\($0)" } ?? "the end")"
            let video = try TestEnvironment.fixture(name)
            let times = try frameTimes(video)
            let output = folder.appendingPathComponent("\(name)-\(start)-\(end ?? 0).mp4").path
            var arguments = [
                "export", video, "-o", output, "--workspace", folder.appendingPathComponent("ws").path,
                "--start-ms", "\(start)",
            ]
            if let end { arguments += ["--end-ms", "\(end)"] }
            _ = try success(try Run.ftgst(arguments))
            let first = onScreen(times, at: start)
            let kept = times.indices.filter { index in index >= first && (end.map { times[index] < $0 * 1000 } ?? true)
            }
            let written = try frameTimes(output)
            XCTAssertEqual(written.count, kept.count, "\(what): frames")
            let image = folder.appendingPathComponent("first.png").path
            let extract = try Run.tool("ffmpeg", ["-v", "error", "-y", "-i", output, "-frames:v", "1", image])
            XCTAssertEqual(extract.status, 0, extract.stderr)
            try assertShows(image, frame: first, of: video, count: times.count, "\(what): first frame")
        }
    }

    // MARK: - probe

    /// An MP4 with a 10 s empty edit holds 3 s and 90 frames: ffprobe's stream duration and frame count.
    func testProbeOfAnOffsetFileCountsFromItsFirstFrame() throws {
        let video = try TestEnvironment.fixture("clip-offset10.mp4")
        let expected = try Run.tool(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=duration,nb_frames", "-of", "csv=p=0",
                video,
            ])
        let fields = expected.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
        let duration = try XCTUnwrap(Double(String(fields[0])))
        let frames = try XCTUnwrap(Int(String(fields[1])))
        let json = try success(try Run.ftgst(["probe", video]))
        XCTAssertEqual(json["durationMs"] as? Int, Int((duration * 1000).rounded(.down)))
        let stream = try XCTUnwrap(json["video"] as? [String: Any])
        XCTAssertEqual(stream["frameCount"] as? Int, frames)
    }

    /// `frameRate` of a variable-rate clip is its average rate (ffprobe's `avg_frame_rate`), not the time base
    /// ffprobe prints as `r_frame_rate` (1000/1 here). A record of the documented choice: qtdemux and
    /// matroskademux state the average.
    func testProbeFrameRateOfAVariableRateClipIsItsAverage() throws {
        for name in ["vfr.mp4", "vfr.mkv"] {
            let video = try TestEnvironment.fixture(name)
            let times = try frameTimes(video)
            // Frames over the span they are shown in (the last one lasting as long as the one before it).
            let span = Double(2 * times[times.count - 1] - times[times.count - 2]) / 1e6
            let average = Double(times.count) / span
            let json = try success(try Run.ftgst(["probe", video]))
            let stream = try XCTUnwrap(json["video"] as? [String: Any])
            let rate = try XCTUnwrap(stream["frameRate"] as? String).split(separator: "/").compactMap { Double($0) }
            XCTAssertEqual(rate.count, 2)
            XCTAssertEqual(rate[0] / rate[1], average, accuracy: average * 0.03, "\(name): \(stream)")
        }
    }
}
