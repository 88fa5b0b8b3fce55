import FilmtoneCore
import FilmtoneElements
import FilmtoneLooks
import Foundation
import GstKit
import ImageCodecs

/// An upright, scaled RGB frame and the time it was shown at.
struct GrabbedFrame {
    var image: RGBImage
    /// Time of the frame returned on the 0-based timeline (`FrameRecipe.Timeline`); zero for still images.
    var time: ClockTime
    var isStill: Bool
    /// Unreferenced pictures before an exact seek's target that were not decoded (see `ReferenceSkipper`).
    var skippedPictures: Int
}

/// What to grab: one frame of `source` near `time`, fitted into `maxWidth`×`maxHeight`.
struct FrameRequest {
    var source: MediaSource
    var headers: [HTTPHeader]
    var time: ClockTime
    var tolerance: ClockTime
    var maxWidth: Int
    var maxHeight: Int
    var timeoutMilliseconds: Int64
    /// A look applied by `ftlut` after scaling (previews); nil for plain thumbnails.
    var look: LookSettings? = nil
    /// How long a local file may take to produce its first caps before it counts as stalled (see
    /// `FrameGrabber.grab`); remote sources are never judged this way, their data may just be slow.
    var localStallMilliseconds: Int64 = 5000
    /// The output size when already decided (a preview read from a mezzanine gets the size it would have had from
    /// the source); nil: computed from the upright caps and `maxWidth`×`maxHeight`.
    var outputSize: (width: Int, height: Int)? = nil
}

/// The `ftlut` settings of a preview: LUT file paths (nil: empty slot), intensity, interpolation.
struct LookSettings: Equatable {
    var inputLUT: String?
    var creativeLUT: String?
    var intensity: Double
    var interpolation: Interpolation
}

/// The driver: builds `FrameRecipe`'s pipeline, prerolls, seeks as the recipe says, and pulls one frame.
/// Every wait shares one deadline; cancellation is checked while waiting.
struct FrameGrabber {
    let request: FrameRequest
    let isCancelled: () -> Bool

    /// A picture GStreamer cannot decode (a CMYK JPEG, an animated WebP, a HEIF image) is `UNSUPPORTED_FORMAT`.
    /// A remote server that ignores `Range` (`souphttpsrc` learns it only when a seek is answered with the whole
    /// body) makes the grab start again reading forward, within the same deadline.
    func grab() throws -> GrabbedFrame {
        let formats = PictureFormatWatch()
        let deadline = Deadline(after: request.timeoutMilliseconds)
        return try formats.refining {
            do {
                return try grab(watching: formats, deadline: deadline, readingForward: false)
            } catch let error as FilmtoneError where request.source.isRemote && FrameRecipe.isRangeRefusal(error.cause)
            {
                return try grab(watching: formats, deadline: deadline, readingForward: true)
            }
        }
    }

    private func grab(watching formats: PictureFormatWatch, deadline: Deadline, readingForward: Bool) throws
        -> GrabbedFrame
    {
        try FilmtonePlugin.ensureRegistered()  // ftlut and fttrim, in this process
        let pipeline = try Pipeline(launch: FrameRecipe.launchDescription(withLook: request.look != nil))
        formats.attach(to: pipeline)
        if let look = request.look {
            let filter = try pipeline.element(named: "look")
            try filter.setProperty("input-lut", .string(look.inputLUT ?? ""))
            try filter.setProperty("creative-lut", .string(look.creativeLUT ?? ""))
            try filter.setProperty("intensity", .double(look.intensity))
            try filter.setProperty("interpolation", .nick(look.interpolation.rawValue))
        }
        defer { pipeline.stop() }

        // Attached first, so its probe on the decoder's input sees the pictures the skipper then drops too: one
        // dropped for a stated duration too short is found again (`FrameRecipe.droppedStart`).
        let inputs = DecoderInputs()
        inputs.attach(to: pipeline)
        let skipper = ReferenceSkipper()
        skipper.attach(to: pipeline)

        let source = try pipeline.element(named: "src")
        try source.setProperty("uri", .string(request.source.uri))
        if request.source.isRemote {
            RemoteSourceSetup.configure(
                source, headers: request.headers,
                timeoutMilliseconds: request.timeoutMilliseconds)
        }

        let sawCaps = AtomicFlag()
        let maxWidth = request.maxWidth
        let maxHeight = request.maxHeight
        let fixedSize = request.outputSize
        try pipeline.fitScaledSize { info in
            sawCaps.set()
            return fixedSize
                ?? FrameRecipe.outputSize(
                    width: info.width, height: info.height, pixelAspect: info.pixelAspect,
                    maxWidth: maxWidth, maxHeight: maxHeight)
        }
        let sink = AppSink(element: try pipeline.element(named: "sink"))
        // An MP4's empty edit (video that starts later) sends a GAP first: it would preroll the sink with no frame
        // to pull. Dropped, the sink prerolls on the first real frame.
        sink.element.staticPad("sink")?.dropGapEvents()

        try pipeline.startPrerolling(remote: request.source.isRemote)
        var sample = try waitAndPull(
            pipeline, sink, deadline, what: "first frame",
            stall: .video(milliseconds: request.localStallMilliseconds, started: { sawCaps.isSet() }))

        if sample.caps?.video?.isStill == true {
            return try frame(from: sample, time: .zero, still: true, skipper: skipper)
        }
        // The first frame fixes the timeline (`FrameRecipe.Timeline`): requests and reported times are 0-based.
        guard let first = sample.streamTime else { throw FilmtoneError(.decodeFailed, "frame has no timestamp") }
        let timeline = FrameRecipe.Timeline(origin: first)
        // The prerolled frame answers only when it starts at the target or within the tolerance: its duration
        // does not prove it is still on screen at the target (`FrameRecipe.needsNextFrame`).
        if FrameRecipe.accepts(frame: .zero, duration: nil, target: request.time, tolerance: request.tolerance) {
            return try frame(from: sample, time: .zero, still: false, skipper: skipper)
        }

        // Demuxers disagree about what their duration counts from (tsdemux's is a length, qtdemux's a stream
        // time): the early refusal is kept for streams whose timeline starts at 0, where both agree. Elsewhere a
        // seek past the end ends in EOS without a frame, which `waitAndPull` refuses just as well.
        if timeline.origin == .zero, let duration = pipeline.duration(), request.time >= duration {
            throw FilmtoneError(
                .decodeFailed,
                "time \(request.time.milliseconds) ms is past the end (\(duration.milliseconds) ms)")
        }
        if readingForward || !pipeline.isSeekable() {
            guard request.source.isRemote else {
                throw FilmtoneError(.decodeFailed, "the source cannot seek to \(request.time.milliseconds) ms")
            }
            return try readForward(pipeline, sink, deadline, timeline: timeline, skipper: skipper)
        }
        let target = timeline.streamTime(of: request.time)
        for flags in FrameRecipe.seekPlan(tolerance: request.tolerance) {
            guard pipeline.seek(to: target, flags: flags) else {
                throw sourceFailure("seek to \(request.time.milliseconds) ms was refused")
            }
            sample = try waitAndPull(pipeline, sink, deadline, what: "frame at \(request.time.milliseconds) ms")
            var time = try realStart(of: sample, inputs: inputs)
            if flags.contains(.accurate) {
                if let earlier = FrameRecipe.droppedStart(
                    after: time, target: target, inputs: inputs.snapshot.compactMap { sample.streamTime(of: $0.pts) })
                {
                    // The decoder dropped the picture on screen at the target as ending before it (its container
                    // duration was too short): seek to that picture's own start, where it cannot be dropped.
                    guard pipeline.seek(to: earlier, flags: flags) else {
                        throw sourceFailure("seek to \(request.time.milliseconds) ms was refused")
                    }
                    sample = try waitAndPull(pipeline, sink, deadline, what: "frame at \(request.time.milliseconds) ms")
                    time = try realStart(of: sample, inputs: inputs)
                }
                if FrameRecipe.needsNextFrame(start: time, target: target, tolerance: request.tolerance) {
                    (sample, time) = try frameOnScreen(
                        after: sample, start: time, target: target, pipeline, sink, deadline, inputs: inputs)
                }
                return try frame(from: sample, time: timeline.time(ofStreamTime: time), still: false, skipper: skipper)
            }
            if FrameRecipe.accepts(frame: time, duration: nil, target: target, tolerance: request.tolerance) {
                return try frame(from: sample, time: timeline.time(ofStreamTime: time), still: false, skipper: skipper)
            }
        }
        throw FilmtoneError(.internalError, "seek plan ended without a frame")
    }

    /// The stream time a sample really starts at: its stamp, or the start the decoder clipped away
    /// (`FrameRecipe.realStart`, from the pictures that entered the decoder).
    private func realStart(of sample: Sample, inputs: DecoderInputs) throws -> ClockTime {
        guard let pts = sample.presentationTimestamp, let stamped = sample.streamTime else {
            throw FilmtoneError(.decodeFailed, "frame has no timestamp")
        }
        let end = sample.duration.map { ClockTime(nanoseconds: pts.nanoseconds + $0.nanoseconds) }
        let start = FrameRecipe.realStart(pts: pts, end: end, inputs: inputs.snapshot)
        return sample.streamTime(of: start) ?? stamped
    }

    /// After an accurate seek handed over a clipped frame: plays on (no clock: `sync=false`) and takes the next
    /// frame for as long as it starts at or before the target (`FrameRecipe.nextReplaces`). The end of the
    /// stream leaves the last frame on screen. Same deadline and cancellation as every wait.
    private func frameOnScreen(
        after prerolled: Sample, start: ClockTime, target: ClockTime, _ pipeline: Pipeline, _ sink: AppSink,
        _ deadline: Deadline, inputs: DecoderInputs
    ) throws -> (Sample, ClockTime) {
        let what = "frame after \(request.time.milliseconds) ms"
        var current = (sample: prerolled, start: start)
        // Going to PLAYING renders the prerolled buffer again: the first sample pulled may be that one.
        var skipRepeat = true
        pipeline.play()
        while true {
            guard let next = try nextPlayingSample(pipeline, sink, deadline, what: what) else { return current }
            if skipRepeat {
                skipRepeat = false
                if next.presentationTimestamp == prerolled.presentationTimestamp && next.duration == prerolled.duration
                {
                    continue
                }
            }
            guard let stamped = next.streamTime, FrameRecipe.nextReplaces(next: stamped, target: target) else {
                return current
            }
            current = (next, try realStart(of: next, inputs: inputs))
        }
    }

    // MARK: - Steps

    /// For a server that cannot seek: plays the pipeline from the start (no clock: `sync=false`) and takes the frame
    /// `FrameRecipe.forwardStep` picks, so exact times are what a seek would give. Errors, EOS, the deadline and
    /// cancellation end it; the bus is checked between 50 ms pulls.
    private func readForward(
        _ pipeline: Pipeline, _ sink: AppSink, _ deadline: Deadline, timeline: FrameRecipe.Timeline,
        skipper: ReferenceSkipper
    ) throws -> GrabbedFrame {
        let what = "frame at \(request.time.milliseconds) ms (reading forward: the server does not support Range)"
        pipeline.play()
        var previous: (sample: Sample, time: ClockTime)?
        while true {
            guard let sample = try nextPlayingSample(pipeline, sink, deadline, what: what) else {
                // The target lies after the last frame's start but before the stated duration: it is on screen.
                if let previous {
                    return try frame(from: previous.sample, time: previous.time, still: false, skipper: skipper)
                }
                throw FilmtoneError(.decodeFailed, "no video frame could be decoded (\(what)): the stream ended first")
            }
            guard let streamTime = sample.streamTime else { continue }
            let time = timeline.time(ofStreamTime: streamTime)
            switch FrameRecipe.forwardStep(
                frame: time, hasPrevious: previous != nil, target: request.time, tolerance: request.tolerance)
            {
            case .take:
                return try frame(from: sample, time: time, still: false, skipper: skipper)
            case .takePrevious:
                if let previous {
                    return try frame(from: previous.sample, time: previous.time, still: false, skipper: skipper)
                }
                return try frame(from: sample, time: time, still: false, skipper: skipper)
            case .keepReading:
                previous = (sample, time)
            }
        }
    }

    /// The next sample of the PLAYING pipeline; nil at EOS. An error on the bus, the deadline and cancellation end
    /// the wait; the bus is checked between 50 ms pulls.
    private func nextPlayingSample(_ pipeline: Pipeline, _ sink: AppSink, _ deadline: Deadline, what: String) throws
        -> Sample?
    {
        while true {
            if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }
            if deadline.hasPassed { throw timedOut(what) }
            if case .error(let cause)? = pipeline.bus.pop(timeout: .zero, kinds: [.error]) {
                throw ErrorClassifier.classify(cause, remote: request.source.isRemote)
            }
            if let sample = sink.pullSample(timeout: deadline.remaining(cap: .milliseconds(50))) { return sample }
            if sink.isEndOfStream { return nil }
        }
    }

    /// Waits for ASYNC_DONE (preroll or seek done; the local-stall rule for the first preroll) and pulls the
    /// prerolled sample. EOS with no frame — a truncated file, an empty stream, a seek past the end — is a
    /// failure, never a success.
    private func waitAndPull(
        _ pipeline: Pipeline, _ sink: AppSink, _ deadline: Deadline, what: String,
        stall: LocalStallWatch? = nil
    ) throws -> Sample {
        try pipeline.wait(
            for: .prerolled, deadline: deadline, remote: request.source.isRemote, stall: stall,
            timedOut: timeoutMessage(what), isCancelled: isCancelled)
        guard let sample = sink.pullPreroll(timeout: deadline.remaining()) else {
            if deadline.hasPassed { throw timedOut(what) }
            // An error may have been posted just as preroll ended: prefer its precise classification.
            if case .error(let cause) = pipeline.waitForAsyncDone(deadline: Deadline(after: 0), isCancelled: { false })
            {
                throw ErrorClassifier.classify(cause, remote: request.source.isRemote)
            }
            throw FilmtoneError(
                .decodeFailed,
                "no video frame could be decoded (\(what)): the media is empty, "
                    + "truncated, has no video, or the time is past its end")
        }
        return sample
    }

    private func timeoutMessage(_ what: String) -> String {
        "timed out after \(request.timeoutMilliseconds) ms waiting for the \(what)"
    }

    private func timedOut(_ what: String) -> FilmtoneError { sourceFailure(timeoutMessage(what)) }

    /// A failure to get data where it is not known which part failed: the network for a remote source.
    private func sourceFailure(_ message: String) -> FilmtoneError {
        FilmtoneError(request.source.isRemote ? .remoteFetchFailed : .decodeFailed, message)
    }

    private func frame(from sample: Sample, time: ClockTime, still: Bool, skipper: ReferenceSkipper) throws
        -> GrabbedFrame
    {
        let image = try sample.withMappedFrame { view in
            // Copy rows by stride into a tightly packed image: the mapped rows may be padded.
            var pixels = [UInt8](repeating: 0, count: view.width * view.height * 3)
            pixels.withUnsafeMutableBufferPointer { out in
                for y in 0..<view.height {
                    (out.baseAddress! + y * view.width * 3).update(from: view.row(y), count: view.width * 3)
                }
            }
            return RGBImage(width: view.width, height: view.height, pixels: pixels)
        }
        return GrabbedFrame(image: image, time: time, isStill: still, skippedPictures: skipper.skippedCount)
    }
}
