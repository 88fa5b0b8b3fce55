import FilmtoneCore
import Foundation
import ImageCodecs

/// The checks every frame job shares (thumbnails, previews): source, headers, time, size, image format, deadline.
/// Throws `INVALID_ARGUMENT`, `INVALID_URL` or `UNSUPPORTED_FORMAT`; touches no file.
struct FrameOptions {
    /// The largest time, tolerance or timeout accepted (≈ 31 years): far beyond any media, and small enough that
    /// nanosecond arithmetic on it cannot overflow.
    static let maxMilliseconds: Int64 = 1_000_000_000_000

    /// The bounds of an output size, 1…16384 each (exports check theirs here too).
    static func checkBox(maxWidth: Int, maxHeight: Int) throws {
        guard (1...16384).contains(maxWidth) else {
            throw FilmtoneError(.invalidArgument, "--max-width must be 1…16384")
        }
        guard (1...16384).contains(maxHeight) else {
            throw FilmtoneError(.invalidArgument, "--max-height must be 1…16384")
        }
    }

    /// A job's deadline, 1 ms…`maxMilliseconds` (exports check theirs here too, when they have one).
    static func checkTimeout(_ milliseconds: Int64) throws {
        guard (1...maxMilliseconds).contains(milliseconds) else {
            throw FilmtoneError(.invalidArgument, "--timeout-ms must be 1…\(maxMilliseconds)")
        }
    }

    var frameRequest: FrameRequest
    var format: ImageFormat
    var quality: Double

    init(
        source: String, headers: [String], timeMilliseconds: Int64, toleranceMilliseconds: Int64, maxWidth: Int,
        maxHeight: Int, format: ImageFormat, quality: Double, timeoutMilliseconds: Int64,
        toneMap: ToneMapping = .on
    ) throws {
        func invalid(_ message: String) -> FilmtoneError { FilmtoneError(.invalidArgument, message) }
        let limit = FrameOptions.maxMilliseconds
        guard (0...limit).contains(timeMilliseconds) else { throw invalid("--time-ms must be 0…\(limit)") }
        guard (0...limit).contains(toleranceMilliseconds) else { throw invalid("--tolerance-ms must be 0…\(limit)") }
        try FrameOptions.checkBox(maxWidth: maxWidth, maxHeight: maxHeight)
        guard quality.isFinite, (0...1).contains(quality) else { throw invalid("--quality must be between 0 and 1") }
        try FrameOptions.checkTimeout(timeoutMilliseconds)
        self.format = format
        self.quality = quality
        frameRequest = FrameRequest(
            source: try MediaSource.parse(source), headers: try headers.map(HTTPHeader.parse),
            time: .milliseconds(timeMilliseconds), tolerance: .milliseconds(toleranceMilliseconds),
            maxWidth: maxWidth, maxHeight: maxHeight, timeoutMilliseconds: timeoutMilliseconds, toneMap: toneMap.isOn)
    }
}
