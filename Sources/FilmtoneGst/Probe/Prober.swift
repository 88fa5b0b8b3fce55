import FilmtoneCore
import Foundation
import GstKit
import Synchronization

/// What `probeSource` is asked for. Defaults match `ftgst probe`'s.
public struct ProbeOptions: Sendable {
    /// A path, `file://` URI or `http(s)://` URL.
    public var source: String
    /// `Name: value` lines sent on every HTTP request.
    public var headers: [String] = []
    /// The deadline for the whole job.
    public var timeoutMilliseconds: Int64 = 30_000

    public init(source: String) {
        self.source = source
    }
}

/// A validated probe request.
struct ProbeRequest {
    var source: MediaSource
    var headers: [HTTPHeader]
    var timeoutMilliseconds: Int64
    /// As for frames: a local file that exposes no stream within this time counts as unreadable (decodebin can
    /// swallow a demuxer's error; see `FrameGrabber.grab`).
    var localStallMilliseconds: Int64 = 5000

    /// Throws `INVALID_ARGUMENT` or `INVALID_URL`; touches no file.
    init(_ options: ProbeOptions) throws {
        guard (1...FrameOptions.maxMilliseconds).contains(options.timeoutMilliseconds) else {
            throw FilmtoneError(.invalidArgument, "--timeout-ms must be 1…\(FrameOptions.maxMilliseconds)")
        }
        source = try MediaSource.parse(options.source)
        headers = try options.headers.map(HTTPHeader.parse)
        timeoutMilliseconds = options.timeoutMilliseconds
    }
}

/// Describes a video, photo or audio source without decoding it: container, codecs, sizes, rotation, frame rate
/// and count, bit depth, chroma format, colorimetry, HDR, and the input transform a look needs
/// (`ProbeReport`). Throws `FilmtoneError` with the same codes as `Thumbnails.make`.
public func probeSource(_ options: ProbeOptions) async throws -> ProbeReport {
    let request = try ProbeRequest(options)
    return try await runDetached { isCancelled in
        try request.source.checkExists()
        return try Prober(request: request, isCancelled: isCancelled).probe()
    }
}

/// Collects what the probe pipeline's streams show, from streaming threads.
private final class StreamCollector: Sendable {
    final class Stream: Sendable {
        let sinkPad: Pad
        let sink: Element
        /// Whether the caps are a still image's, and if so its first bytes; the latest segment's start and time,
        /// and the stream time where the data starts.
        private let state = Mutex<
            (isImage: Bool, bytes: [UInt8]?, segment: (start: ClockTime, time: ClockTime)?, first: ClockTime?)
        >((false, nil, nil, nil))

        init(sinkPad: Pad, sink: Element) {
            self.sinkPad = sinkPad
            self.sink = sink
        }

        /// The data probe: remembers whether the caps are a still image's and, if so, its first bytes.
        func observe(_ item: PadItem) {
            switch item {
            case .caps(let caps):
                let isImage = (caps.firstStructure?.name ?? "").hasPrefix("image/")
                state.withLock { $0.isImage = isImage }
            case .segment(let start, let time, _):
                state.withLock { $0.segment = (start, time) }
            case .gap(let start, let duration):
                // A leading gap (an MP4's empty edit) prerolls the sink without a buffer: the data starts at its
                // end.
                let end = ClockTime(nanoseconds: start.nanoseconds + (duration?.nanoseconds ?? 0))
                state.withLock { state in
                    if state.first == nil { state.first = ProbeRules.streamTime(pts: end, segment: state.segment) }
                }
            case .buffer(let buffer):
                let wantsBytes = state.withLock { state in
                    if state.first == nil, let pts = buffer.presentationTimestamp {
                        state.first = ProbeRules.streamTime(pts: pts, segment: state.segment)
                    }
                    return state.isImage && state.bytes == nil
                }
                guard wantsBytes else { return }
                let copy = buffer.withBytes { Array($0.prefix(ProbeRules.headerBytes)) } ?? []
                state.withLock { $0.bytes = copy }
            case .endOfStream, .otherEvent:
                break
            }
        }

        var header: [UInt8] { state.withLock { $0.bytes ?? [] } }

        /// The stream time where the stream's data starts: its first buffer (in decode order: a keyframe, the
        /// first frame shown) or the end of a leading gap.
        var firstTime: ClockTime? { state.withLock { $0.first } }
    }

    private let state = Mutex<(streams: [Stream], typeCaps: CapsStructure?)>(([], nil))

    func add(_ stream: Stream) {
        state.withLock { $0.streams.append(stream) }
    }

    func foundType(_ caps: CapsStructure?) {
        state.withLock { if $0.typeCaps == nil { $0.typeCaps = caps } }
    }

    var snapshot: (streams: [Stream], type: CapsStructure?) { state.withLock { ($0.streams, $0.typeCaps) } }

    var hasStreams: Bool { !snapshot.streams.isEmpty }
}

/// The driver: `uridecodebin` stopped in front of the decoders (`ProbeRules.autoplugDecision`), a `fakesink`
/// per exposed stream, preroll to PAUSED within the deadline, then caps, tags and durations are read.
struct Prober {
    let request: ProbeRequest
    let isCancelled: () -> Bool

    /// A HEIF image (HEIC, AVIF), which GStreamer cannot read at all, is `UNSUPPORTED_FORMAT`.
    func probe() throws -> ProbeReport {
        let formats = PictureFormatWatch(refusesDolbyVision: false)
        return try formats.refining { try probe(watching: formats) }
    }

    private func probe(watching formats: PictureFormatWatch) throws -> ProbeReport {
        let deadline = Deadline(after: request.timeoutMilliseconds)
        let pipeline = try Pipeline(launch: ProbeRules.launchDescription)
        formats.attach(to: pipeline)
        defer { pipeline.stop() }
        let source = try pipeline.element(named: "src")
        try source.setProperty("uri", .string(request.source.uri))
        if request.source.isRemote {
            RemoteSourceSetup.configure(
                source, headers: request.headers,
                timeoutMilliseconds: request.timeoutMilliseconds)
        }

        let collector = StreamCollector()
        source.onAutoplugSelect { factory in
            ProbeRules.autoplugDecision(forKlass: factory.klass, factory: factory.name)
        }
        // The container's type: decodebin's type finder (added with decodebin, so looked up by name), or the
        // one uridecodebin itself adds in front of a stream source.
        pipeline.element.onDeepElementAdded { element in
            let typeFinder =
                element.factoryName == "decodebin"
                ? element.child(named: "typefind")
                : element.factoryName == "typefind" ? element : nil
            typeFinder?.onHaveType { caps in collector.foundType(caps.firstStructure) }
        }
        // The handler must not hold the pipeline strongly: uridecodebin (owned by the pipeline) owns the handler.
        source.onPadAdded { [weak pipeline] pad in
            guard let pipeline, let sink = try? Element.make("fakesink"), let sinkPad = sink.staticPad("sink")
            else { return }
            try? sink.setProperty("sync", .bool(false))
            let stream = StreamCollector.Stream(sinkPad: sinkPad, sink: sink)
            // The probe holds the stream state only, never the pad it sits on.
            sinkPad.onData { [weak stream] item in
                stream?.observe(item)
                return .pass
            }
            guard (try? pipeline.add(sink)) != nil, (try? pad.link(to: sinkPad)) != nil else { return }
            sink.syncStateWithParent()
            collector.add(stream)
        }

        try pipeline.startPrerolling(remote: request.source.isRemote)
        try pipeline.wait(
            for: .prerolled, deadline: deadline, remote: request.source.isRemote,
            stall: LocalStallWatch(
                milliseconds: request.localStallMilliseconds,
                failure: "no stream could be read from the file within \(request.localStallMilliseconds) ms: it is "
                    + "corrupt, truncated or not a media file",
                started: { collector.hasStreams }),
            timedOut: "timed out after \(request.timeoutMilliseconds) ms waiting for the streams",
            isCancelled: isCancelled)

        let (streams, typeCaps) = collector.snapshot
        let isGIF = typeCaps?.name == "image/gif"
        let observation = ProbeObservation(
            containerCaps: typeCaps,
            streams: streams.compactMap { stream in
                guard let caps = stream.sinkPad.currentCaps?.firstStructure else { return nil }
                return StreamObservation(
                    caps: caps, tags: stream.sinkPad.stickyTags, header: stream.header,
                    // gst-libav's GIF demuxer answers a frame-count query by dividing by a zero rate
                    // (GStreamer-CRITICAL on stderr): a GIF is not asked (it is reported as a photo, one frame).
                    frames: isGIF ? nil : stream.sinkPad.peerDuration(.units),
                    durationNanoseconds: stream.sinkPad.peerDuration(.time).map { UInt64($0) },
                    firstNanoseconds: stream.firstTime?.nanoseconds)
            },
            durationNanoseconds: pipeline.duration()?.nanoseconds)
        guard let report = ProbeRules.report(from: observation) else {
            throw FilmtoneError(
                .decodeFailed,
                "no video or audio stream could be read: the media is empty, "
                    + "truncated or not a media file")
        }
        guard report.video != nil else { return report }
        // A local file's record is read from the file; a remote one's was seen entering the demuxer.
        let dolbyVision =
            request.source.isRemote ? formats.dolbyVision : DolbyVisionReader.configuration(of: request.source)
        return ProbeRules.report(report, dolbyVision: dolbyVision)
    }
}
