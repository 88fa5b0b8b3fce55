import FilmtoneCore
import Foundation
import GstKit
import ImageCodecs

/// A local photo's thumbnail decoded without GStreamer, never holding two full-size copies of it (issue 13,
/// item 1). GStreamer is not started at all (its plugin loading alone costs more than a whole photo's decode).
///
/// - **JPEG**: TurboJPEG's IDCT scaling to the largest of 1/8, 1/4, 1/2 that still covers the output
///   (`JPEGDecoder.reduction`), then the exact Lanczos resize (`ImageResampler`) in stored orientation, then the
///   EXIF orientation on the small picture (`ExifOrientation.upright`). A 24-megapixel photo to 512 px decodes a
///   750×500 picture and never holds the full frame.
/// - **PNG**: libpng's simplified API straight into 8-bit RGB (`PNGDecoder`: one full-size buffer; PNG has no
///   reduced decode), then the Lanczos resize. GStreamer's `pngdec ! videoconvert` held the decoded picture and a
///   converted copy. A 16-bit RGB PNG, which GStreamer 1.22's `pngdec` decodes with wrong colours
///   (`PictureFormats`), decodes right here.
/// - **Still WebP**: libwebp's rescaler inside the decode to at most twice the output (`WebPDecoder`), then the
///   Lanczos resize to it exactly, as the JPEG path does after its reduction.
///
/// Anything this path does not answer cleanly goes to `FrameGrabber`, unchanged: remote sources, other formats,
/// CMYK/YCCK JPEGs, animated WebP, any decoder error or TurboJPEG warning (truncated or corrupt data). Those keep
/// GStreamer's behaviour and error codes (`UNSUPPORTED_FORMAT`, `DECODE_FAILED`).
enum ScaledPhoto {
    /// Files larger than this are left to GStreamer, which streams them rather than reading them whole (JPEG and
    /// WebP are decoded from memory; libpng reads its file itself).
    static let maxFileBytes = 256 << 20

    /// The formats this path decodes, told by their first bytes.
    enum Kind: Equatable {
        case jpeg
        case png
        case webp

        /// The kind of the file at `path` from its first 12 bytes (read alone, so a video is never read into
        /// memory); nil for anything else.
        init?(path: String) {
            guard let file = FileHandle(forReadingAtPath: path) else { return nil }
            defer { try? file.close() }
            guard let start = try? file.read(upToCount: 12) else { return nil }
            let kind: Kind? = start.withUnsafeBytes { bytes in
                if JPEGDecoder.looksLikeJPEG(bytes) { return .jpeg }
                if PNGDecoder.looksLikePNG(bytes) { return .png }
                if WebPDecoder.looksLikeWebP(bytes) { return .webp }
                return nil
            }
            guard let kind else { return nil }
            self = kind
        }

        /// The MIME type the freedesktop shared MIME database names the format by.
        var mimeType: String {
            switch self {
            case .jpeg: return "image/jpeg"
            case .png: return "image/png"
            case .webp: return "image/webp"
            }
        }
    }

    /// The thumbnail frame of `request`, or nil when this path does not apply or fails (see above).
    static func grab(_ request: FrameRequest) -> GrabbedFrame? {
        guard case .local(let path) = request.source, request.look == nil, request.outputSize == nil,
            let facts = MezzanineStore.fileFacts(path), let kind = Kind(path: path)
        else { return nil }
        let image: RGBImage?
        switch kind {
        case .png: image = png(path, request)
        case .jpeg, .webp:
            guard facts.size <= maxFileBytes, let data = FileManager.default.contents(atPath: path) else { return nil }
            image = data.withUnsafeBytes { kind == .jpeg ? jpeg($0, request) : webp($0, request) }
        }
        guard let image else { return nil }
        return GrabbedFrame(image: image, time: .zero, isStill: true, skippedPictures: 0)
    }

    /// The output size of a `width`×`height` picture of square pixels in the request's box.
    private static func fitted(_ request: FrameRequest, width: Int, height: Int) -> (width: Int, height: Int) {
        FrameRecipe.outputSize(
            width: width, height: height, pixelAspect: Fraction(1, 1), maxWidth: request.maxWidth,
            maxHeight: request.maxHeight)
    }

    private static func jpeg(_ bytes: UnsafeRawBufferPointer, _ request: FrameRequest) -> RGBImage? {
        guard JPEGDecoder.looksLikeJPEG(bytes), let header = JPEGDecoder.header(bytes), header.isRGBConvertible
        else { return nil }
        let orientation = ExifOrientation.value(inJPEG: bytes)
        let swaps = ExifOrientation.swapsAxes(orientation)
        let size = fitted(
            request, width: swaps ? header.height : header.width, height: swaps ? header.width : header.height)
        let stored = swaps ? (width: size.height, height: size.width) : size
        let reduction = JPEGDecoder.reduction(
            width: header.width, height: header.height, minWidth: stored.width, minHeight: stored.height)
        guard let decoded = JPEGDecoder.decode(bytes, reduction: reduction) else { return nil }
        let sized = ImageResampler.resized(decoded, width: stored.width, height: stored.height)
        return ExifOrientation.upright(sized, value: orientation)
    }

    private static func png(_ path: String, _ request: FrameRequest) -> RGBImage? {
        guard let decoded = PNGDecoder.decode(path: path) else { return nil }
        let size = fitted(request, width: decoded.width, height: decoded.height)
        return ImageResampler.resized(decoded, width: size.width, height: size.height)
    }

    private static func webp(_ bytes: UnsafeRawBufferPointer, _ request: FrameRequest) -> RGBImage? {
        guard let header = WebPDecoder.header(bytes), !header.isAnimated else { return nil }
        let size = fitted(request, width: header.width, height: header.height)
        // libwebp's rescaler is an area average: it goes to twice the output at most, and the Lanczos resize
        // (GStreamer's path's filter) makes the last step.
        let decoded = WebPDecoder.decode(
            bytes, width: min(header.width, 2 * size.width), height: min(header.height, 2 * size.height))
        guard let decoded else { return nil }
        return ImageResampler.resized(decoded, width: size.width, height: size.height)
    }
}
