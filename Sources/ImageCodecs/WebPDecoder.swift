internal import CImageCodecs
import FilmtoneCore

/// Still WebP decoding through libwebp at a reduced size: with `use_scaling` libwebp rescales each row as it is
/// decoded, so a lossy WebP never exists at full size in memory (a lossless one is held once, as ARGB, by libwebp's
/// own decoder, which needs the whole picture for its back-references), and the output is written straight into
/// an RGB buffer of the requested size. Animated WebP is not decoded here. Errors come back by return value. No
/// GStreamer here.
public enum WebPDecoder {
    /// What the bitstream header says.
    public struct Header: Equatable, Sendable {
        public var width: Int
        public var height: Int
        /// An animation (VP8X with the animation flag): this decoder reads still pictures only.
        public var isAnimated: Bool
    }

    /// True when `bytes` start as a WebP file does (`RIFF`, a size, `WEBP`).
    public static func looksLikeWebP(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 12 && Array(bytes[0..<4]) == Array("RIFF".utf8) && Array(bytes[8..<12]) == Array("WEBP".utf8)
    }

    /// The header; nil when libwebp cannot read one.
    public static func header(_ bytes: UnsafeRawBufferPointer) -> Header? {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var features = WebPBitstreamFeatures()
        guard WebPGetFeatures(base, bytes.count, &features) == VP8_STATUS_OK, features.width > 0,
            features.height > 0
        else { return nil }
        return Header(
            width: Int(features.width), height: Int(features.height), isAnimated: features.has_animation != 0)
    }

    /// Decodes the still WebP `bytes` to RGB scaled to `width`×`height` (at most its own size), libwebp's
    /// rescaler (an area average) running inside the decode. An alpha channel is dropped, as `videoconvert` does
    /// going to RGB. nil on any error (an animation, a truncated or corrupt stream): the caller then decodes
    /// another way, which reports the failure with its own code.
    public static func decode(_ bytes: UnsafeRawBufferPointer, width: Int, height: Int) -> RGBImage? {
        guard let header = header(bytes), !header.isAnimated, width > 0, height > 0, width <= header.width,
            height <= header.height, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        else { return nil }
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else { return nil }
        // A lossy picture's loop filter runs on a second thread, beside the decode (≈ 10 % off a 24 MP photo's
        // wall time on two cores).
        config.options.use_threads = 1
        if width != header.width || height != header.height {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(width)
            config.options.scaled_height = Int32(height)
        }
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        let status = pixels.withUnsafeMutableBufferPointer { out -> VP8StatusCode in
            // External memory: libwebp writes into `pixels` and allocates no output of its own
            // (WebPFreeDecBuffer is then a no-op, called for form).
            config.output.colorspace = MODE_RGB
            config.output.is_external_memory = 1
            config.output.u.RGBA.rgba = out.baseAddress
            config.output.u.RGBA.stride = Int32(width * 3)
            config.output.u.RGBA.size = out.count
            defer { WebPFreeDecBuffer(&config.output) }
            return WebPDecode(base, bytes.count, &config)
        }
        guard status == VP8_STATUS_OK else { return nil }
        return RGBImage(width: width, height: height, pixels: pixels)
    }
}
