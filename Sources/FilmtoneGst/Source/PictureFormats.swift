import FilmtoneCore
import Foundation
import GstKit
import Synchronization

/// Pictures GStreamer 1.22 recognises but cannot decode, told apart from broken files so that the user reads
/// `UNSUPPORTED_FORMAT` and why, not `DECODE_FAILED` and an element's "Internal data stream error". Pure, so every
/// rule has a unit test.
///
/// - A **CMYK or YCCK JPEG** (Adobe's print JPEGs): `jpegparse` announces `colorspace=CMYK`/`YCCK`, and `jpegdec`
///   refuses it.
/// - An **animated WebP**: `webpdec` decodes still WebP only; an animated one fails on its first frame. Its
///   `VP8X` header has the animation flag.
/// - A **HEIF image** (HEIC, AVIF): the type finder says `video/quicktime, variant=heif`; `qtdemux` reads no
///   image items ("This file contains no playable streams").
/// - A **16-bit RGB PNG without alpha**: `pngdec` 1.22 decodes it without an error but labels its rows `ARGB64`
///   while they hold something else, so red comes out yellow. It is refused rather than shown wrong; 16-bit
///   RGBA, grey and grey+alpha PNGs decode right. Its `IHDR` says bit depth 16, colour type 2.
enum PictureFormats {
    /// Why the source cannot be decoded, from what the pipeline saw of it; nil when nothing says so.
    static func unsupportedReason(
        container: CapsStructure?, jpegColorspace: String?, animatedWebP: Bool, deepRGBPNG: Bool = false
    ) -> String? {
        if deepRGBPNG {
            return "16-bit RGB PNG images without alpha are not supported (GStreamer 1.22's pngdec decodes them "
                + "with wrong colours): convert it to 8-bit, or add an alpha channel, first"
        }
        if let colorspace = jpegColorspace, ["CMYK", "YCCK"].contains(colorspace.uppercased()) {
            return "\(colorspace.uppercased()) JPEG images are not supported (GStreamer's jpegdec decodes YCbCr "
                + "and greyscale JPEGs only): convert it to RGB first"
        }
        if animatedWebP {
            return "animated WebP images are not supported (GStreamer 1.22's webpdec decodes still WebP only)"
        }
        if let container, container.name == "video/quicktime", container.string("variant") == "heif" {
            return "HEIF images (HEIC, AVIF) are not supported: GStreamer 1.22 cannot read pictures stored in a "
                + "HEIF file; convert it to JPEG or PNG first"
        }
        return nil
    }

    /// Whether `bytes`, the start of a WebP file, is an animated WebP: `RIFF size WEBP`, then a `VP8X` chunk
    /// whose flags byte (offset 20) has the animation bit (0x02).
    static func isAnimatedWebP(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 21 else { return false }
        func tag(_ offset: Int) -> String { String(decoding: bytes[offset..<offset + 4], as: UTF8.self) }
        return tag(0) == "RIFF" && tag(8) == "WEBP" && tag(12) == "VP8X" && bytes[20] & 0x02 != 0
    }

    /// Whether `bytes`, the start of a PNG file, is a 16-bit RGB PNG without alpha: the signature, then the `IHDR`
    /// chunk (length, `IHDR`, width, height), whose bit depth (offset 24) is 16 and colour type (offset 25) is 2.
    static func isDeepRGBPNG(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard bytes.count >= 26, Array(bytes[0..<8]) == signature else { return false }
        return String(decoding: bytes[12..<16], as: UTF8.self) == "IHDR" && bytes[24] == 16 && bytes[25] == 2
    }
}

/// Watches a decoding pipeline for the pictures `PictureFormats` knows it cannot decode: the type finder's caps,
/// `jpegparse`'s output caps and the first buffer `webpdec` or `pngdec` is given. A PNG that `pngdec` would decode
/// with wrong colours is not given to it at all (its buffers are dropped), so the job ends without a frame and
/// fails, and never shows the wrong picture. A driver runs its job inside `refining`, which
/// turns a `DECODE_FAILED` into `UNSUPPORTED_FORMAT` with the reason when the watch saw one.
///
/// It also scans what a remote source gives `qtdemux` or `matroskademux` (pushed buffers: a local file is read by
/// `DolbyVisionReader` before any pipeline) for a Dolby Vision configuration record (`DolbyVisionScanner`). One
/// that cannot be shown (profile 5) is refused at once, `refusesDolbyVision`: the demuxer gets nothing more, a
/// CODEC_NOT_FOUND error is posted from it, and `refining` throws the record's own refusal, whatever the job threw.
final class PictureFormatWatch: Sendable {
    /// Whether an unshowable Dolby Vision stream stops the job (false for `probe`, which describes it).
    let refusesDolbyVision: Bool

    init(refusesDolbyVision: Bool = true) { self.refusesDolbyVision = refusesDolbyVision }

    private struct Seen {
        var dolbyVision: DolbyVisionConfiguration?
        var container: CapsStructure?
        var jpegColorspace: String?
        var animatedWebP = false
        var webpChecked = false
        var deepRGBPNG = false
        var pngChecked = false
    }

    private let seen = Mutex(Seen())

    /// Connects to `pipeline`'s `deep-element-added` (on the streaming thread; the handlers only record).
    func attach(to pipeline: Pipeline) {
        pipeline.element.onDeepElementAdded { [self] element in
            switch element.factoryName {
            case "decodebin", "typefind":
                // decodebin's own type finder is made with it (so looked up by name); uridecodebin adds one in
                // front of a stream source.
                let typeFinder = element.factoryName == "typefind" ? element : element.child(named: "typefind")
                typeFinder?.onHaveType { [self] caps in
                    let structure = caps.firstStructure
                    seen.withLock { $0.container = structure }
                }
            case "jpegparse":
                element.staticPad("src")?.onCapsEvent { [self] caps in
                    let colorspace = caps.firstStructure?.string("colorspace")
                    seen.withLock { $0.jpegColorspace = colorspace }
                }
            case "webpdec":
                element.staticPad("sink")?.onData { [self] item in
                    guard case .buffer(let buffer) = item, !seen.withLock({ $0.webpChecked }) else { return .pass }
                    let animated = buffer.withBytes { PictureFormats.isAnimatedWebP($0) } ?? false
                    seen.withLock {
                        $0.webpChecked = true
                        $0.animatedWebP = animated
                    }
                    return .pass
                }
            case "pngdec":
                element.staticPad("sink")?.onData { [self] item in
                    guard case .buffer(let buffer) = item else { return .pass }
                    let refused = seen.withLock { seen in
                        if !seen.pngChecked {
                            seen.pngChecked = true
                            seen.deepRGBPNG = buffer.withBytes { PictureFormats.isDeepRGBPNG($0) } ?? false
                        }
                        return seen.deepRGBPNG
                    }
                    return refused ? .drop : .pass
                }
            case "qtdemux", "matroskademux":
                guard let pad = element.staticPad("sink") else { return }
                let scanner = Mutex(DolbyVisionScanner())
                let isPulling = pad.pullingCheck
                let postRefusal = element.codecNotFoundPoster
                pad.onData { [self] item in
                    guard case .buffer(let buffer) = item else { return .pass }
                    let (found, fresh) = scanner.withLock { scanner -> (DolbyVisionConfiguration?, Bool) in
                        if scanner.isDone { return (scanner.found, false) }
                        // A demuxer pulling reads a local file, whose record `DolbyVisionReader` read before.
                        if isPulling() {
                            scanner.stop()
                            return (nil, false)
                        }
                        let found = buffer.withBytes { scanner.scan($0) } ?? nil
                        return (found, found != nil)
                    }
                    guard let found else { return .pass }
                    if fresh { seen.withLock { $0.dolbyVision = found } }
                    guard refusesDolbyVision, let refusal = found.refusal else { return .pass }
                    if fresh { postRefusal(refusal.message) }
                    return .drop
                }
            default:
                break
            }
        }
    }

    /// The Dolby Vision configuration found in a remote source's headers, if any.
    var dolbyVision: DolbyVisionConfiguration? { seen.withLock { $0.dolbyVision } }

    /// The job's error when it found a Dolby Vision stream it must not show.
    private var dolbyVisionRefusal: FilmtoneError? { refusesDolbyVision ? dolbyVision?.refusal : nil }

    /// The type finder's caps, when it ran (a local MP4 or Matroska file is opened without it).
    var container: CapsStructure? { seen.withLock { $0.container } }

    /// The reason the source cannot be decoded, if what was seen says so.
    var unsupportedReason: String? {
        seen.withLock {
            PictureFormats.unsupportedReason(
                container: $0.container, jpegColorspace: $0.jpegColorspace, animatedWebP: $0.animatedWebP,
                deepRGBPNG: $0.deepRGBPNG)
        }
    }

    /// Runs `body`; a `DECODE_FAILED` it throws becomes `UNSUPPORTED_FORMAT` (keeping GStreamer's cause) when the
    /// source is a picture GStreamer cannot decode.
    /// A job that ended without an error after the watch refused the picture (an export of no frames) is also
    /// `UNSUPPORTED_FORMAT`: the picture was never decoded, so nothing it made may be kept.
    func refining<R>(_ body: () throws -> R) throws -> R {
        do {
            let result = try body()
            if let refusal = dolbyVisionRefusal { throw refusal }
            if seen.withLock({ $0.deepRGBPNG }), let reason = unsupportedReason {
                throw FilmtoneError(.unsupportedFormat, reason)
            }
            return result
        } catch let error as FilmtoneError {
            if let refusal = dolbyVisionRefusal { throw refusal }
            guard error.code == .decodeFailed else { throw error }
            guard let reason = unsupportedReason else { throw error }
            throw FilmtoneError(.unsupportedFormat, reason, cause: error.cause)
        }
    }
}
