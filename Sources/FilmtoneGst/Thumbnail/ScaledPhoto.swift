import FilmtoneCore
import Foundation
import GstKit
import ImageCodecs

/// A local JPEG's thumbnail decoded at the size it is shown (issue 13, item 1): TurboJPEG's IDCT scaling to the
/// largest of 1/8, 1/4, 1/2 that still covers the output (`JPEGDecoder.reduction`), then the exact Lanczos resize
/// (`ImageResampler`) in stored orientation, then the EXIF orientation on the small picture
/// (`ExifOrientation.upright`). A 24-megapixel photo to 512 px decodes a 750×500 picture and never holds the full
/// frame; GStreamer is not started at all (its plugin loading alone costs more than this whole decode).
///
/// Anything this path does not answer cleanly goes to `FrameGrabber`, unchanged: remote sources, files that are not
/// JPEG, CMYK/YCCK JPEGs, any TurboJPEG error or warning (truncated or corrupt data). Those keep GStreamer's
/// behaviour and error codes (`UNSUPPORTED_FORMAT`, `DECODE_FAILED`).
enum ScaledPhoto {
    /// Files larger than this are left to GStreamer, which streams them rather than reading them whole.
    static let maxFileBytes = 256 << 20

    /// The thumbnail frame of `request`, or nil when this path does not apply or fails (see above).
    static func grab(_ request: FrameRequest) -> GrabbedFrame? {
        guard case .local(let path) = request.source, request.look == nil, request.outputSize == nil,
            let facts = MezzanineStore.fileFacts(path), facts.size <= maxFileBytes, isJPEG(path),
            let data = FileManager.default.contents(atPath: path)
        else { return nil }
        return data.withUnsafeBytes { bytes -> GrabbedFrame? in
            guard JPEGDecoder.looksLikeJPEG(bytes), let header = JPEGDecoder.header(bytes), header.isRGBConvertible
            else { return nil }
            let orientation = ExifOrientation.value(inJPEG: bytes)
            let swaps = ExifOrientation.swapsAxes(orientation)
            let size = FrameRecipe.outputSize(
                width: swaps ? header.height : header.width, height: swaps ? header.width : header.height,
                pixelAspect: Fraction(1, 1), maxWidth: request.maxWidth, maxHeight: request.maxHeight)
            let stored = swaps ? (width: size.height, height: size.width) : size
            let reduction = JPEGDecoder.reduction(
                width: header.width, height: header.height, minWidth: stored.width, minHeight: stored.height)
            guard let decoded = JPEGDecoder.decode(bytes, reduction: reduction) else { return nil }
            let sized = ImageResampler.resized(decoded, width: stored.width, height: stored.height)
            return GrabbedFrame(
                image: ExifOrientation.upright(sized, value: orientation), time: .zero, isStill: true,
                skippedPictures: 0)
        }
    }

    /// The file starts as a JPEG does (read before the whole file is, so a video is never read into memory).
    private static func isJPEG(_ path: String) -> Bool {
        guard let file = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? file.close() }
        guard let start = try? file.read(upToCount: 3) else { return false }
        return start.withUnsafeBytes { JPEGDecoder.looksLikeJPEG($0) }
    }
}
