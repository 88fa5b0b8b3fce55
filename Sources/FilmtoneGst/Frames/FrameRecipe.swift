import FilmtoneElements
import Foundation
import GstKit

/// The pure part of grabbing one frame: which elements, which caps, when to seek and how. No GStreamer calls,
/// so every decision has a unit test that needs no media.
enum FrameRecipe {
    /// Decode whatever the URI holds, turn it upright (`video-direction=auto` follows the stream's
    /// `image-orientation` tag: MP4 rotation, and JPEG EXIF once `jpegparse` is plugged), convert to RGB, scale,
    /// and — for a preview — apply the look. The first `videoconvert` is a pass-through unless the decoder's
    /// format is one `videoflip` cannot take (10-bit formats in 1.22). Thumbnails shrink a lot (1080p → 320
    /// wide is 6×): videoscale's default 2-tap bilinear aliases there (28.7 dB PSNR against ffmpeg's bicubic
    /// on the bench clip), and scaling 4:2:0 first leaves quarter-resolution chroma (26.7 dB); RGB first, then
    /// lanczos, gives 43.7 dB for one full-size conversion per output frame. The look runs after scaling: a
    /// preview shows the look at the size it is seen, and pays for those pixels only.
    /// `uri` and the look's settings are set as properties afterwards, never spliced into this text.
    static func launchDescription(withLook: Bool) -> String {
        """
        uridecodebin name=src ! videoconvert ! videoflip name=flip video-direction=auto \
        ! videoconvert ! video/x-raw,format=RGB ! videoscale method=lanczos \
        ! capsfilter name=size caps=video/x-raw,format=RGB,pixel-aspect-ratio=1/1 \
        \(withLook ? "! \(LUTFilterElement.factoryName) name=look " : "")\
        ! appsink name=sink sync=false max-buffers=1 enable-last-sample=false
        """
    }

    /// The output size for a frame of `width`×`height` coded pixels with `pixelAspect`: the display size
    /// (width × PAR) scaled by `min(maxWidth/w, maxHeight/h, 1)` — aspect kept, never upscaled, at least 1×1.
    static func outputSize(width: Int, height: Int, pixelAspect: Fraction, maxWidth: Int, maxHeight: Int)
        -> (width: Int, height: Int)
    {
        let par = pixelAspect.numerator > 0 && pixelAspect.denominator > 0 ? pixelAspect.value : 1
        let displayWidth = Double(width) * par
        let displayHeight = Double(height)
        guard displayWidth > 0, displayHeight > 0 else { return (1, 1) }
        let scale = min(Double(maxWidth) / displayWidth, Double(maxHeight) / displayHeight, 1)
        return (max(1, Int((displayWidth * scale).rounded())), max(1, Int((displayHeight * scale).rounded())))
    }

    /// The capsfilter's caps once the upright input size is known.
    static func outputCaps(width: Int, height: Int) -> String {
        "video/x-raw,format=RGB,width=\(width),height=\(height),pixel-aspect-ratio=1/1"
    }

    /// Whether a decoded frame at stream time `frame` (lasting `duration`) answers a request for `target` with
    /// `tolerance`: it is the frame on screen at `target`, or it lies within the tolerance of it.
    static func accepts(frame: ClockTime, duration: ClockTime?, target: ClockTime, tolerance: ClockTime) -> Bool {
        let end = frame.nanoseconds + max(duration?.nanoseconds ?? 1, 1)
        if frame <= target && target.nanoseconds < end { return true }
        let distance = frame > target ? frame.nanoseconds - target.nanoseconds : target.nanoseconds - frame.nanoseconds
        return distance <= tolerance.nanoseconds
    }

    /// The start of the frame a decoder handed over after an accurate seek. GstVideoDecoder clips the frame that
    /// straddles the segment start: its PTS becomes the segment start and its duration shrinks, so the frame on
    /// screen at 1010 ms (shown from 1000 ms) arrives stamped 1010 ms. Its end is not clipped, so with a
    /// constant frame rate the true start is `end - 1/fps`. Without a frame rate (variable rate) the stamped
    /// time is the best known.
    static func unclippedStart(time: ClockTime, duration: ClockTime?, frameRate: Fraction) -> ClockTime {
        guard let duration, frameRate.numerator > 0, frameRate.denominator > 0 else { return time }
        let nominal = UInt64(1_000_000_000) * UInt64(frameRate.denominator) / UInt64(frameRate.numerator)
        // Only a visibly shortened frame was clipped; allow a little rounding in muxed durations.
        guard duration.nanoseconds + nominal / 20 < nominal else { return time }
        let end = time.nanoseconds + duration.nanoseconds
        return ClockTime(nanoseconds: end >= nominal ? end - nominal : 0)
    }

    /// What to do with a frame met while reading forward (a remote source that cannot seek), frames arriving in
    /// order from the start.
    enum ForwardStep: Equatable {
        /// This frame answers the request.
        case take
        /// This frame starts after the target and the one before it was on screen at the target: take that one.
        case takePrevious
        /// The target is still ahead.
        case keepReading
    }

    /// The rule for reading forward: a frame `accepts` allows is taken; the first frame that starts after the
    /// target means the one before it is the frame on screen at the target (or, when there is none, the stream
    /// starts after the target and this first frame is the nearest); anything earlier is read past.
    static func forwardStep(
        frame: ClockTime, duration: ClockTime?, hasPrevious: Bool, target: ClockTime, tolerance: ClockTime
    ) -> ForwardStep {
        if accepts(frame: frame, duration: duration, target: target, tolerance: tolerance) { return .take }
        if frame > target { return hasPrevious ? .takePrevious : .take }
        return .keepReading
    }

    /// `GST_RESOURCE_ERROR_SEEK`: what `souphttpsrc` posts when a server answers a Range request with the whole
    /// body ("Server does not support seeking."). Until that answer the source reports itself seekable.
    static let resourceSeekErrorCode = 11

    /// Whether `cause` says the HTTP server cannot seek (it ignores `Range`): the grab is then done again reading
    /// forward.
    static func isRangeRefusal(_ cause: FilmtoneError.GStreamerCause?) -> Bool {
        guard let cause else { return false }
        return cause.domain == "resource" && cause.code == resourceSeekErrorCode && cause.factory == "souphttpsrc"
    }

    /// The seeks to try, in order, after the prerolled frame did not answer the request: the keyframe before
    /// the target first when a tolerance allows it (cheap: no decoding forward), then an accurate seek (decodes
    /// from the keyframe up to the exact frame).
    static func seekPlan(tolerance: ClockTime) -> [SeekFlags] {
        let accurate: SeekFlags = [.flush, .accurate]
        guard tolerance > .zero else { return [accurate] }
        return [[.flush, .keyUnit, .snapBefore], accurate]
    }
}
