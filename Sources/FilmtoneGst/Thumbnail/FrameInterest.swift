import FilmtoneCore
import GstKit
import ImageCodecs

/// `ftgst thumb --time auto` (issue 13, item 6): a frame worth showing, picked as totem's and GNOME's thumbnailers
/// do — a few keyframes sampled from the first third of the video, the first that is neither near-black,
/// near-white nor flat, else the busiest of them. Pure: the times to sample and the verdict on a picture; the
/// sampling itself is `ThumbnailSet`'s.
public enum FrameInterest {
    /// How many times are sampled at most.
    public static let sampleCount = 5
    /// Mean luma (0…255, full range) at or below which a picture is near-black (a fade, a black leader).
    public static let darkMean = 24.0
    /// Mean luma at or above which a picture is near-white (a flash, a white card).
    public static let brightMean = 231.0
    /// Luma standard deviation below which a picture is flat (a colour card, a blank title).
    public static let flatDeviation = 12.0

    /// The first sample's time (`sampleTimes(…)[0]`) for a duration the demuxer gives: what a pipeline that seeks
    /// before its first preroll (`OpenedFrameSource`'s `firstKeyframe`) seeks to, for `--time auto` and the desktop
    /// thumbnailer.
    static let firstSample: @Sendable (ClockTime?) -> ClockTime = { duration in
        .milliseconds(sampleTimes(durationMilliseconds: duration?.milliseconds)[0])
    }

    /// The times to sample, ascending: the middles of `sampleCount` equal parts of the first third of the
    /// duration, so never the very first frame (often black) and, in a long film, nothing from the end credits;
    /// then, for a video whose whole first third is dull (a black start longer than that: 4 s of 10), the middles
    /// of `sampleCount` equal parts of the other two thirds, sampled only when none of the first is worth showing.
    /// `[0]` without a duration (the first frame is all there is to go by).
    public static func sampleTimes(durationMilliseconds: Int64?) -> [Int64] {
        guard let duration = durationMilliseconds, duration > 0 else { return [0] }
        let third = Double(duration) / 3
        let first = (0..<sampleCount).map { third * (Double($0) + 0.5) / Double(sampleCount) }
        let rest = (0..<sampleCount).map { third + 2 * third * (Double($0) + 0.5) / Double(sampleCount) }
        return (first + rest).map { Int64($0.rounded(.down)) }
    }

    /// A picture's luma statistics (BT.709 weights on the RGB the thumbnail is made of).
    public struct Statistics: Equatable, Sendable {
        public var mean: Double
        public var deviation: Double

        /// Neither near-black, near-white nor flat.
        public var isWorthShowing: Bool { mean > darkMean && mean < brightMean && deviation >= flatDeviation }
    }

    /// Mean and standard deviation of `image`'s luma.
    public static func statistics(of image: RGBImage) -> Statistics {
        var sum = 0.0
        var squares = 0.0
        let count = image.width * image.height
        image.pixels.withUnsafeBufferPointer { p in
            var i = 0
            while i + 2 < p.count {
                let y = 0.2126 * Double(p[i]) + 0.7152 * Double(p[i + 1]) + 0.0722 * Double(p[i + 2])
                sum += y
                squares += y * y
                i += 3
            }
        }
        let mean = sum / Double(count)
        return Statistics(mean: mean, deviation: max(0, squares / Double(count) - mean * mean).squareRoot())
    }

    /// Which of the sampled pictures to show: the first worth showing, else the one with the largest deviation
    /// (the first of equals). nil for none.
    public static func pick(_ samples: [Statistics]) -> Int? {
        if let first = samples.firstIndex(where: \.isWorthShowing) { return first }
        return samples.indices.max { samples[$0].deviation < samples[$1].deviation }
    }
}
