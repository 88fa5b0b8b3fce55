import FilmtoneCore
import FilmtoneElements
import Foundation
import GstKit
import ImageCodecs

/// The desktop thumbnailer's direct path (issue 30, item 3): for a plain MP4 or MOV whose one video track is H.264 or
/// HEVC, 8-bit 4:2:0 SDR, upright, the keyframes `--time auto` samples are found in the file's own sample tables
/// (`MP4VideoTrack`), each decoded alone by libavcodec and drained at once (not after the pictures that follow it),
/// and converted and scaled by libswscale (`LibavStill`): no GStreamer at all, whose start-up (registry, plugins,
/// pipeline, threads) was most of a thumbnail's time.
///
/// It is a shortcut, so it answers only when it is sure to give the GStreamer path's answer:
/// - the same samples, times and duration: the sample a keyframe seek lands on is found as `qtdemux` finds it (the
///   last sample decoded at or before the time, then the keyframe at or before that), on the same 0-based timeline
///   (`FrameRecipe.Timeline`: the first keyframe's shown time is 0) and the same duration (`mvhd`'s);
/// - the same verdicts: a sample's luma statistics within `margin` of a threshold of `FrameInterest` (where a
///   slightly different scaler could tip the verdict) send the whole file to the GStreamer path;
/// - the same colours: the matrix and range are the ones GStreamer's converters use, and anything else (HDR, wide
///   gamut, a 4K picture with unstated colours, statements that disagree) is GStreamer's.
/// Anything it cannot read or decode is declined, never an error: the GStreamer path then answers, or fails with
/// its own error code. Checked against that path on a matrix of fixtures (`ThumbnailerDirectCLITests`).
/// `FTGST_NO_DIRECT_KEYFRAME=1` turns it off; `FTGST_DIRECT_KEYFRAME=required` makes a declined file fail with the
/// reason (`UNSUPPORTED_FORMAT`), which the tests use to know the path was taken.
enum DirectKeyframe {
    struct Answer {
        var frame: GrabbedFrame
        var durationMilliseconds: Int64
        /// The file's first bytes (its MIME type is named from them).
        var fileStart: [UInt8]
    }

    /// How close to a `FrameInterest` threshold a statistic may come before the file is left to GStreamer.
    static let margin = (mean: 1.5, deviation: 1.0)

    /// The thumbnail of `path` fitting `size`×`size`, or nil when the file is the GStreamer path's.
    static func thumbnail(path: String, size: Int, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> Answer?
    {
        guard environment["FTGST_NO_DIRECT_KEYFRAME"] != "1" else { return nil }
        do {
            return try answer(path: path, size: size)
        } catch let declined as MP4VideoTrack.Declined {
            if environment["FTGST_DIRECT_KEYFRAME"] == "required" {
                throw FilmtoneError(.unsupportedFormat, "the direct keyframe path declined \(path): \(declined)")
            }
            return nil
        }
    }

    private typealias Declined = MP4VideoTrack.Declined

    private static func answer(path: String, size: Int) throws -> Answer {
        guard let file = try? POSIXFile(path: path, flags: O_RDONLY), let fileSize = file.size else {
            throw Declined("cannot open")
        }
        let start = (try? file.read(at: 0, count: 64)) ?? []
        guard FrameRecipe.demuxer(forFileStart: start) == .isoMedia, FrameRecipe.isLibavVideo(fileStart: start),
            MimeTypes.mimeType(fileStart: start) != nil
        else {
            throw Declined("not an MP4/MOV the own decoders read")
        }
        // libavcodec's ≈ 20 ms of loading overlaps the reading of the sample tables.
        Libav.preloadInBackground()
        let track = try MP4VideoTrack.read(size: fileSize) { offset, count in try? file.read(at: offset, count: count) }
        let timing = try Timing(track)
        var frames: [(sample: Int, frame: GrabbedFrame, statistics: FrameInterest.Statistics)] = []
        for time in FrameInterest.sampleTimes(durationMilliseconds: timing.durationMilliseconds) {
            let leading = LeadingPictures(track: track, file: file)
            guard let sample = timing.shownSample(before: .milliseconds(time), isDropped: leading.isRASL) else {
                throw Declined("the seek for \(time) ms shows a picture before a keyframe")
            }
            if frames.last?.sample == sample { continue }
            guard let bytes = try? file.read(at: track.offsets[sample], count: track.sizes[sample]),
                bytes.count == track.sizes[sample]
            else { throw Declined("sample \(sample + 1) unreadable") }
            let image = try picture(track, bytes, size: size)
            let statistics = FrameInterest.statistics(of: image)
            try checkClear(statistics)
            let frame = GrabbedFrame(image: image, time: timing.time(of: sample), isStill: false, skippedPictures: 0)
            frames.append((sample, frame, statistics))
            if statistics.isWorthShowing { break }
        }
        let chosen = FrameInterest.pick(frames.map(\.statistics)) ?? 0
        if !frames[chosen].statistics.isWorthShowing {
            // The busiest of dull pictures: a near tie could go either way after another scaler.
            let deviations = frames.map(\.statistics.deviation)
            guard
                !deviations.indices.contains(where: {
                    $0 != chosen && abs(deviations[$0] - deviations[chosen]) < margin.deviation
                })
            else { throw Declined("two dull samples are nearly as busy") }
        }
        return Answer(frame: frames[chosen].frame, durationMilliseconds: timing.durationMilliseconds, fileStart: start)
    }

    /// A verdict another scaler's rounding could not change.
    static func checkClear(_ s: FrameInterest.Statistics) throws {
        let near =
            abs(s.mean - FrameInterest.darkMean) < margin.mean || abs(s.mean - FrameInterest.brightMean) < margin.mean
            || abs(s.deviation - FrameInterest.flatDeviation) < margin.deviation
        if near {
            throw Declined("a sample's statistics are at a threshold (mean \(s.mean), deviation \(s.deviation))")
        }
    }

    /// The sample decoded, in GStreamer's colours, scaled to fit `size`.
    private static func picture(_ track: MP4VideoTrack, _ sample: [UInt8], size: Int) throws -> RGBImage {
        do {
            return try LibavStill.decode(
                track.codec == .h264 ? .h264 : .hevc, configuration: track.configuration, sample: sample
            ) { picture, frame in
                let colours = try Colours(picture, box: track.colour)
                let fit = FrameRecipe.outputSize(
                    width: picture.width, height: picture.height, pixelAspect: Fraction(1, 1), maxWidth: size,
                    maxHeight: size)
                let rgb = try LibavStill.rgb(
                    frame, width: fit.width, height: fit.height, bt709: colours.bt709, fullRange: colours.fullRange)
                return RGBImage(width: rgb.width, height: rgb.height, pixels: rgb.pixels)
            }
        } catch let failure as LibavStill.Failure {
            throw Declined(failure.description)
        } catch let failure as Libav.LibavLoadError {
            throw Declined(failure.description)
        }
    }

    /// HEVC's leading pictures that a decoder starting at their CRA keyframe drops: every slice a RASL one.
    struct LeadingPictures {
        let track: MP4VideoTrack
        let file: POSIXFile

        func isRASL(_ sample: Int) -> Bool {
            guard track.codec == .hevc, track.configuration.count >= 23,
                let bytes = try? file.read(at: track.offsets[sample], count: track.sizes[sample])
            else { return false }
            let lengthSize = Int(track.configuration[21] & 0x03) + 1
            var sawSlice = false
            let all = bytes.withUnsafeBytes { buffer in
                LengthPrefixedNALUnits.forEach(in: buffer, lengthSize: lengthSize) { unit in
                    guard let first = unit.first else { return false }
                    let type = Int(first >> 1 & 0x3F)
                    guard type < 32 else { return true }  // not a slice
                    sawSlice = true
                    return type == 8 || type == 9  // RASL_N, RASL_R
                }
            }
            return all && sawSlice
        }
    }

    /// The matrix and range GStreamer converts with: what the `colr` box or the stream states (they must agree),
    /// else its default by size (BT.709 above 576 lines, BT.601 up to it). Declined: not 8-bit 4:2:0, interlaced,
    /// HDR transfers, wide-gamut or non-Y'CbCr matrices, and a picture of 2160 lines or more with no matrix stated
    /// (GStreamer's default there is BT.2020).
    struct Colours: Equatable {
        var bt709: Bool
        var fullRange: Bool

        init(bt709: Bool, fullRange: Bool) {
            self.bt709 = bt709
            self.fullRange = fullRange
        }

        static let sdrTransfers: Set<Int> = [1, 2, 4, 5, 6, 13]
        static let primaries: Set<Int> = [1, 2, 5, 6]

        init(_ p: LibavStill.Picture, box: (primaries: Int, transfer: Int, matrix: Int, fullRange: Bool)?) throws {
            guard p.format == 0 || p.format == 12 else { throw Declined("pixel format \(p.format), not 8-bit 4:2:0") }
            guard !p.interlaced else { throw Declined("an interlaced picture") }
            guard p.keyFrame else { throw Declined("the keyframe sample is not a key picture") }
            func stated(_ box: Int?, _ stream: Int32, _ what: String) throws -> Int? {
                let values = Set([box, Int(stream)].compactMap { $0 }.filter { $0 != 2 })  // 2: unspecified
                guard values.count <= 1 else { throw Declined("the container and the stream state different \(what)") }
                return values.first
            }
            if let transfer = try stated(box?.transfer, p.transfer, "transfer"), !Self.sdrTransfers.contains(transfer) {
                throw Declined("transfer \(transfer)")
            }
            if let primaries = try stated(box?.primaries, p.primaries, "primaries"), !Self.primaries.contains(primaries)
            {
                throw Declined("primaries \(primaries)")
            }
            switch try stated(box?.matrix, p.matrix, "matrix") {
            case 1: bt709 = true
            case 5, 6: bt709 = false
            case nil:
                guard p.height < 2160 else { throw Declined("a 4K picture without a stated matrix") }
                bt709 = p.height > 576
            case let other?: throw Declined("matrix \(other)")
            }
            let streamFull = p.format == 12 || p.range == 2
            if let box, p.range != 0 || p.format == 12, box.fullRange != streamFull {
                throw Declined("the container and the stream state different ranges")
            }
            fullRange = streamFull || box?.fullRange == true
        }
    }

    /// Sample times as the GStreamer path sees them.
    struct Timing {
        let track: MP4VideoTrack
        /// The first keyframe's shown time (ns, after the edit's start): the 0-based timeline's origin.
        let origin: Int64
        let durationMilliseconds: Int64

        init(_ track: MP4VideoTrack) throws {
            self.track = track
            // Every time below stays far from Int64's limits (the ns and tick conversions multiply them): at most
            // 2^53 ns (104 days), timescales below 2^31.
            let limit = Double(1 << 53)
            guard Double(track.durationNanoseconds) < limit else { throw Declined("a duration of over 100 days") }
            for times in [track.times] + track.sound {
                guard times.timescale > 0, times.timescale < 1 << 31,
                    let last = times.decodeTimes.last, let longest = times.compositionOffsets.max(),
                    (Double(last) + Double(longest) + Double(times.mediaStart)) * 1e9 / Double(times.timescale) < limit
                else { throw Declined("times beyond 100 days") }
                guard times.compositionOffsets.allSatisfy({ $0 >= 0 }) else { throw Declined("negative composition") }
                guard zip(times.decodeTimes, times.decodeTimes.dropFirst()).allSatisfy({ $0 < $1 }) else {
                    throw Declined("decoding times that do not rise")
                }
            }
            guard track.times.syncSamples.first == 0 else { throw Declined("the first sample is not a keyframe") }
            let first = track.times.decodeTimes[0] + track.times.compositionOffsets[0]
            origin = max(0, Self.nanoseconds(first - track.times.mediaStart, track.times.timescale))
            let duration = track.durationNanoseconds
            durationMilliseconds =
                origin == 0 ? duration / 1_000_000 : max(0, duration / 1_000_000 - origin / 1_000_000)
            guard durationMilliseconds > 0 else { throw Declined("no duration") }
        }

        /// `gst_util_uint64_scale` of ticks to ns (rounding down).
        static func nanoseconds(_ ticks: Int64, _ timescale: Int64) -> Int64 {
            guard ticks >= 0 else { return -nanoseconds(-ticks, timescale) }
            let (high, low) = ticks.multipliedFullWidth(by: 1_000_000_000)
            return timescale.dividingFullWidth((high, low)).quotient
        }

        /// The sample a KEY_UNIT|SNAP_BEFORE seek to `time` (0-based) shows, as qtdemux 1.22 makes it
        /// (`gst_qtdemux_perform_seek`) and the decoder answers it: each track's keyframe before the time
        /// (`keyframe(_:atStreamTime:)`) may move the seek earlier, to the earliest of them; the video then starts
        /// at its keyframe before that position, and the first picture shown is the one on screen there, or, when
        /// the keyframe comes later, the first picture decoded from it that is not dropped (`isDropped`: HEVC's
        /// RASL pictures after the CRA a decoder starts at). nil when that is not the keyframe itself (a sound
        /// sample began just before the keyframe: the picture before it is shown, decoded from the keyframe
        /// before; leading pictures that would be shown): the GStreamer path answers.
        func shownSample(before time: ClockTime, isDropped: (Int) -> Bool) -> Int? {
            let desired = Int64(time.nanoseconds) + origin
            var aligned = desired
            for times in [track.times] + track.sound {
                // A keyframe shown before the edit's start is outside the segment and moves nothing.
                let shown = Self.segmentTime(times, Self.keyframe(times, atStreamTime: desired))
                if shown >= 0 { aligned = min(aligned, shown) }
            }
            let keyframe = Self.keyframe(track.times, atStreamTime: aligned)
            let keyframeShown = Self.segmentTime(track.times, keyframe)
            for sample in (keyframe + 1)..<track.times.decodeTimes.count {
                let at = Self.segmentTime(track.times, sample)
                if keyframeShown <= aligned {
                    // A picture decoded after the keyframe and shown between it and the position is on screen there.
                    if at > keyframeShown && at <= aligned { return nil }
                } else if at < keyframeShown && !isDropped(sample) {
                    return nil  // a leading picture the decoder shows before the keyframe
                }
            }
            return keyframe
        }

        /// When `sample` is shown, in ns from the edit's start, as qtdemux counts a segment's time: its shown time
        /// and the edit's start each converted to ns, then subtracted.
        static func segmentTime(_ times: MP4VideoTrack.SampleTimes, _ sample: Int) -> Int64 {
            nanoseconds(times.decodeTimes[sample] + times.compositionOffsets[sample], times.timescale)
                - nanoseconds(times.mediaStart, times.timescale)
        }

        /// The keyframe qtdemux 1.22 finds for stream time `streamTime` (ns) in a track (`gst_qtdemux_adjust_seek`):
        /// the media time in ticks, rounded up; the last sample decoded at or before it; back in decoding order to
        /// one shown at or before it; then back to a keyframe (or the first sample).
        static func keyframe(_ times: MP4VideoTrack.SampleTimes, atStreamTime streamTime: Int64) -> Int {
            let media = streamTime + nanoseconds(times.mediaStart, times.timescale)
            let (high, low) = media.multipliedFullWidth(by: times.timescale)
            let (quotient, remainder) = Int64(1_000_000_000).dividingFullWidth((high, low))
            let ticks = quotient + (remainder > 0 ? 1 : 0)
            let shown = { (sample: Int) in times.decodeTimes[sample] + times.compositionOffsets[sample] }
            if ticks == shown(0) { return 0 }
            var lower = 0
            var upper = times.decodeTimes.count  // ends at the first sample decoded after `ticks`
            while lower < upper {
                let mid = (lower + upper) / 2
                if times.decodeTimes[mid] <= ticks { lower = mid + 1 } else { upper = mid }
            }
            var index = max(0, lower - 1)
            while index > 0 && shown(index) > ticks { index -= 1 }
            lower = 0
            upper = times.syncSamples.count  // ends at the first keyframe after `index`
            while lower < upper {
                let mid = (lower + upper) / 2
                if times.syncSamples[mid] <= index { lower = mid + 1 } else { upper = mid }
            }
            return lower == 0 ? 0 : times.syncSamples[lower - 1]
        }

        /// The 0-based time a sample is shown at.
        func time(of sample: Int) -> ClockTime {
            let shown = Self.nanoseconds(
                track.times.decodeTimes[sample] + track.times.compositionOffsets[sample] - track.times.mediaStart,
                track.times.timescale)
            return ClockTime(nanoseconds: UInt64(max(0, shown - origin)))
        }
    }
}
