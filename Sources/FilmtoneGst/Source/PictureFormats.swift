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
enum PictureFormats {
    /// Why the source cannot be decoded, from what the pipeline saw of it; nil when nothing says so.
    static func unsupportedReason(container: CapsStructure?, jpegColorspace: String?, animatedWebP: Bool) -> String? {
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
}

/// Watches a decoding pipeline for the pictures `PictureFormats` knows it cannot decode: the type finder's caps,
/// `jpegparse`'s output caps and the first buffer `webpdec` is given. A driver runs its job inside `refining`, which
/// turns a `DECODE_FAILED` into `UNSUPPORTED_FORMAT` with the reason when the watch saw one.
final class PictureFormatWatch: Sendable {
    private struct Seen {
        var container: CapsStructure?
        var jpegColorspace: String?
        var animatedWebP = false
        var webpChecked = false
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
            default:
                break
            }
        }
    }

    /// The reason the source cannot be decoded, if what was seen says so.
    var unsupportedReason: String? {
        seen.withLock {
            PictureFormats.unsupportedReason(
                container: $0.container, jpegColorspace: $0.jpegColorspace, animatedWebP: $0.animatedWebP)
        }
    }

    /// Runs `body`; a `DECODE_FAILED` it throws becomes `UNSUPPORTED_FORMAT` (keeping GStreamer's cause) when the
    /// source is a picture GStreamer cannot decode.
    func refining<R>(_ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let error as FilmtoneError where error.code == .decodeFailed {
            guard let reason = unsupportedReason else { throw error }
            throw FilmtoneError(.unsupportedFormat, reason, cause: error.cause)
        }
    }
}
