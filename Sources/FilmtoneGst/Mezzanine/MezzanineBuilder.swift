import FilmtoneCore
import FilmtoneElements
import Foundation
import GstKit
import Synchronization

/// What the builder made: the facts the manifest records.
struct BuiltMezzanine {
    var width: Int
    var height: Int
    var sourceDisplayWidth: Int
    var sourceDisplayHeight: Int
    var frames: Int
    var duration: ClockTime
}

/// The driver: runs `MezzanineRecipe`'s pipeline from the source to `temporary` (PLAYING until EOS), sharing one
/// deadline among all waits and polling cancellation. The caller renames the file into place; on failure it is
/// the caller who removes `temporary`.
struct MezzanineBuilder {
    var source: MediaSource
    var headers: [HTTPHeader]
    var settings: MezzanineSettings
    var temporary: URL
    var timeoutMilliseconds: Int64
    var localStallMilliseconds: Int64 = 5000
    let isCancelled: () -> Bool
    /// Called on the streaming thread with the number of frames encoded so far (an export's progress).
    var onFrame: (@Sendable (Int) -> Void)? = nil

    /// A picture GStreamer cannot decode (`PictureFormatWatch`) is `UNSUPPORTED_FORMAT`.
    func build() throws -> BuiltMezzanine {
        let formats = PictureFormatWatch()
        return try formats.refining { try build(watching: formats) }
    }

    private func build(watching formats: PictureFormatWatch) throws -> BuiltMezzanine {
        let deadline = Deadline(after: timeoutMilliseconds)
        try DolbyVisionReader.refuseUnshowable(source)
        try FilmtonePlugin.ensureRegistered()  // the tone map's ftlut, in this process
        let pipeline = try Pipeline(launch: MezzanineRecipe.launchDescription())
        formats.attach(to: pipeline)
        defer { pipeline.stop() }

        let sourceElement = try pipeline.element(named: "src")
        try sourceElement.setProperty("uri", .string(source.uri))
        if source.isRemote {
            RemoteSourceSetup.configure(sourceElement, headers: headers, timeoutMilliseconds: timeoutMilliseconds)
        }
        try pipeline.element(named: "out").setProperty("location", .string(temporary.path))

        let facts = BuildFacts()
        let box = settings
        try pipeline.pinColorimetry()
        try pipeline.fitScaledSize(toneMap: true) { info in
            let display = FrameRecipe.outputSize(
                width: info.width, height: info.height, pixelAspect: info.pixelAspect,
                maxWidth: Int.max / 2, maxHeight: Int.max / 2)
            let size = FrameRecipe.outputSize(
                width: info.width, height: info.height, pixelAspect: info.pixelAspect,
                maxWidth: box.maxWidth, maxHeight: box.maxHeight)
            facts.setSizes(display: display, output: size, still: info.isStill)
            return size
        }
        try pipeline.endWithoutFrames()
        // Every coded frame passes the encoder's src pad: count them and keep the end of the last one.
        let onFrame = self.onFrame
        try pipeline.element(named: "enc").staticPad("src")?.onData { item in
            if case .buffer(let buffer) = item {
                let count = facts.addFrame(
                    end: buffer.presentationTimestamp.map {
                        ClockTime(nanoseconds: $0.nanoseconds + (buffer.duration?.nanoseconds ?? 0))
                    })
                onFrame?(count)
            }
            return .pass
        }

        try pipeline.startPrerolling(remote: source.isRemote)
        pipeline.play()
        do {
            try pipeline.wait(
                for: .endOfStream, deadline: deadline, remote: source.isRemote,
                stall: .video(milliseconds: localStallMilliseconds, started: { facts.sawCaps }),
                timedOut: "timed out after \(timeoutMilliseconds) ms building the mezzanine", isCancelled: isCancelled)
        } catch let error as FilmtoneError where error.code != .cancelled && facts.isStill {
            throw stillImage()
        }
        let reported = pipeline.duration()  // the demuxer's duration; the frames' ends are the fallback
        pipeline.stop()  // filesink closes the file; qtmux wrote its index at EOS
        if facts.isStill { throw stillImage() }
        var result = facts.snapshot()
        if let reported, reported > .zero { result.duration = reported }
        guard result.frames > 0, result.width > 0 else {
            throw FilmtoneError(.decodeFailed, "no video frame could be decoded: the media is empty or has no video")
        }
        return result
    }

    private func stillImage() -> FilmtoneError {
        FilmtoneError(.unsupportedFormat, "the source is a still image: a mezzanine is for video")
    }
}

/// Facts collected on streaming threads, read after EOS.
private final class BuildFacts: Sendable {
    private struct State {
        var display = (width: 0, height: 0)
        var output = (width: 0, height: 0)
        var still = false
        var caps = false
        var frames = 0
        var end = ClockTime.zero
    }

    private let state = Mutex(State())

    var sawCaps: Bool { state.withLock { $0.caps } }
    var isStill: Bool { state.withLock { $0.still } }

    func setSizes(display: (width: Int, height: Int), output: (width: Int, height: Int), still: Bool) {
        state.withLock {
            $0.display = display
            $0.output = output
            $0.still = still
            $0.caps = true
        }
    }

    /// Returns the frames counted so far.
    @discardableResult
    func addFrame(end frameEnd: ClockTime?) -> Int {
        state.withLock {
            $0.frames += 1
            if let frameEnd, frameEnd > $0.end { $0.end = frameEnd }
            return $0.frames
        }
    }

    func snapshot() -> BuiltMezzanine {
        state.withLock {
            BuiltMezzanine(
                width: $0.output.width, height: $0.output.height, sourceDisplayWidth: $0.display.width,
                sourceDisplayHeight: $0.display.height, frames: $0.frames, duration: $0.end)
        }
    }
}
