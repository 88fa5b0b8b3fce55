import CLibav
import FilmtoneCore
import Foundation
import Synchronization

/// One coded picture that decodes alone (a keyframe sample of an MP4/MOV track) turned into a small RGB image without
/// GStreamer: libavcodec decodes it (the same library and decoder `fth264dec`/`fth265dec` use), libswscale converts
/// and scales it (the scaler ffmpeg and ffmpegthumbnailer use). For the desktop thumbnailer's direct path
/// (`DirectKeyframe` in FilmtoneGst), which must not pay GStreamer's start-up for one picture.
///
/// Why libswscale and not ftgst's own code: it is the library made for exactly this (Y'CbCr 4:2:0 to RGB with a
/// stated matrix and range, and a large downscale with a proper filter), already on every machine that has
/// libavcodec (it needs only libavutil), opened with dlopen like libavcodec.
package enum LibavStill {
    /// A decoded picture's facts the caller decides on, and its pixels once converted.
    package struct Picture: Sendable {
        package var width: Int
        package var height: Int
        /// AVPixelFormat (only `AV_PIX_FMT_YUV420P` and `AV_PIX_FMT_YUVJ420P` are converted).
        package var format: Int32
        /// ISO/IEC 23091-4 code points as the stream states them (2: unspecified).
        package var primaries: Int32
        package var transfer: Int32
        package var matrix: Int32
        /// AVColorRange: 0 unspecified, 1 limited (MPEG), 2 full (JPEG).
        package var range: Int32
        package var interlaced: Bool
        package var keyFrame: Bool
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }

    package enum Codec: Sendable {
        case h264
        case hevc

        var id: AVCodecID { self == .h264 ? AV_CODEC_ID_H264 : AV_CODEC_ID_HEVC }
    }

    /// Decodes `sample` (length-prefixed NAL units, as MP4 stores them) with the track's configuration record
    /// (`avcC` or `hvcC`) as extradata, drains the decoder, and hands the one picture to `convert` while it is
    /// alive. Throws when the library is missing or the sample gives no picture.
    package static func decode<T>(
        _ codec: Codec, configuration: [UInt8], sample: [UInt8], _ convert: (Picture, Frame) throws -> T
    ) throws -> T {
        let libav = try Libav.shared.get()
        guard let decoder = libav.findDecoder(codec.id), let context = libav.allocContext(decoder) else {
            throw Failure("no \(codec) decoder in libavcodec")
        }
        var owned: UnsafeMutablePointer<AVCodecContext>? = context
        defer { libav.freeContext(&owned) }
        let padding = Int(ftgst_av_input_buffer_padding_size())
        guard let extradata = libav.mallocz(configuration.count + padding) else { throw Failure("out of memory") }
        configuration.withUnsafeBytes { extradata.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        context.pointee.extradata = extradata.assumingMemoryBound(to: UInt8.self)
        context.pointee.extradata_size = Int32(configuration.count)
        // One intra picture: frame threads cannot help it, and starting them costs more than the slices they
        // would share; slice threads (HEVC's wavefronts, x264's sliced streams) are taken when the stream has them.
        context.pointee.thread_count = Int32(min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 16))
        context.pointee.thread_type = ftgst_ff_thread_slice()
        guard libav.open(context, decoder, nil) >= 0 else { throw Failure("cannot open the \(codec) decoder") }

        var ownedPacket = libav.packetAlloc()
        defer { libav.packetFree(&ownedPacket) }
        guard let packet = ownedPacket else { throw Failure("out of memory") }
        guard libav.newPacket(packet, Int32(sample.count)) >= 0, let data = packet.pointee.data else {
            throw Failure("out of memory")
        }
        sample.withUnsafeBytes { data.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: $0.count) }
        packet.pointee.flags |= 1  // AV_PKT_FLAG_KEY
        guard libav.sendPacket(context, packet) >= 0 else { throw Failure("the decoder refused the sample") }
        _ = libav.sendPacket(context, nil)  // drain: the one picture comes out now, not after its successors

        var ownedFrame = libav.frameAlloc()
        defer { libav.frameFree(&ownedFrame) }
        guard let frame = ownedFrame else { throw Failure("out of memory") }
        guard libav.receiveFrame(context, frame) >= 0 else { throw Failure("the sample gave no picture") }
        let p = frame.pointee
        guard p.flags & ftgst_av_frame_flag_corrupt() == 0 else { throw Failure("the picture is corrupt") }
        let picture = Picture(
            width: Int(p.width), height: Int(p.height), format: p.format, primaries: Int32(p.color_primaries.rawValue),
            transfer: Int32(p.color_trc.rawValue), matrix: Int32(p.colorspace.rawValue),
            range: Int32(p.color_range.rawValue), interlaced: p.interlaced_frame != 0, keyFrame: p.key_frame != 0)
        return try convert(picture, Frame(frame: frame))
    }

    /// The decoded picture, valid only inside `decode`'s closure.
    package struct Frame {
        let frame: UnsafeMutablePointer<AVFrame>
    }

    /// The picture as packed RGB of `width`×`height`, through libswscale's Lanczos filter with full chroma
    /// interpolation and accurate rounding; `bt709`: the BT.709 matrix, else BT.601; `fullRange`: 0…255 Y'CbCr.
    package static func rgb(
        _ frame: Frame, width: Int, height: Int, bt709: Bool, fullRange: Bool
    ) throws -> (pixels: [UInt8], width: Int, height: Int) {
        let scale = try Swscale.shared.get()
        let p = frame.frame.pointee
        // YUVJ420P is YUV420P with a full range stated by the format; the range is given below instead.
        // SWS_LANCZOS | SWS_FULL_CHR_H_INT | SWS_FULL_CHR_H_INP | SWS_ACCURATE_RND
        let flags: Int32 = 0x200 | 0x2000 | 0x4000 | 0x40000
        guard
            let context = scale.getContext(
                p.width, p.height, AV_PIX_FMT_YUV420P.rawValue, Int32(width), Int32(height),
                AV_PIX_FMT_RGB24.rawValue, flags, nil, nil, nil)
        else { throw Failure("libswscale cannot convert \(p.width)×\(p.height) to \(width)×\(height)") }
        defer { scale.freeContext(context) }
        let coefficients = scale.getCoefficients(bt709 ? 1 : 5)  // SWS_CS_ITU709, SWS_CS_ITU601
        _ = scale.setColorspaceDetails(context, coefficients, fullRange ? 1 : 0, coefficients, 1, 0, 1 << 16, 1 << 16)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        let sources: [UnsafePointer<UInt8>?] = [
            UnsafePointer(p.data.0), UnsafePointer(p.data.1), UnsafePointer(p.data.2), nil,
        ]
        let strides: [Int32] = [p.linesize.0, p.linesize.1, p.linesize.2, 0]
        let rows = pixels.withUnsafeMutableBufferPointer { out in
            let targets: [UnsafeMutablePointer<UInt8>?] = [out.baseAddress, nil, nil, nil]
            let targetStrides: [Int32] = [Int32(width * 3), 0, 0, 0]
            return scale.scale(context, sources, strides, 0, p.height, targets, targetStrides)
        }
        guard rows == Int32(height) else { throw Failure("libswscale wrote \(rows) of \(height) rows") }
        return (pixels, width, height)
    }
}

/// The libswscale functions `LibavStill` calls, looked up once with dlopen/dlsym in the major version beside the
/// libavutil the CLibav headers describe (libswscale 6 with libavutil 57: FFmpeg 5.x). No headers: the five
/// signatures are FFmpeg's stable API.
struct Swscale: @unchecked Sendable {
    typealias GetContext =
        @convention(c) (
            Int32, Int32, Int32, Int32, Int32, Int32, Int32, OpaquePointer?, OpaquePointer?, UnsafePointer<Double>?
        ) -> OpaquePointer?
    typealias Scale =
        @convention(c) (
            OpaquePointer?, UnsafePointer<UnsafePointer<UInt8>?>?, UnsafePointer<Int32>?, Int32, Int32,
            UnsafePointer<UnsafeMutablePointer<UInt8>?>?, UnsafePointer<Int32>?
        ) -> Int32
    typealias FreeContext = @convention(c) (OpaquePointer?) -> Void
    typealias SetColorspaceDetails =
        @convention(c) (OpaquePointer?, UnsafePointer<Int32>?, Int32, UnsafePointer<Int32>?, Int32, Int32, Int32, Int32)
        -> Int32
    typealias GetCoefficients = @convention(c) (Int32) -> UnsafePointer<Int32>?
    typealias Version = @convention(c) () -> UInt32

    let getContext: GetContext
    let scale: Scale
    let freeContext: FreeContext
    let setColorspaceDetails: SetColorspaceDetails
    let getCoefficients: GetCoefficients

    /// libswscale's major version for the libavutil major the headers describe (FFmpeg 5: 57 → 6, FFmpeg 6: 58 → 7).
    static var soname: String { "libswscale.so.\(Int(ftgst_libavutil_major()) - 51)" }

    static let shared: Result<Swscale, LibavStill.Failure> = open()

    private static func open() -> Result<Swscale, LibavStill.Failure> {
        let name = soname
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
            return .failure(LibavStill.Failure("cannot open \(name): \(Libav.dlErrorText())"))
        }
        let table = Libav.SymbolTable()
        let version: Version? = table.function(handle, "swscale_version")
        let getContext: GetContext? = table.function(handle, "sws_getContext")
        let scale: Scale? = table.function(handle, "sws_scale")
        let freeContext: FreeContext? = table.function(handle, "sws_freeContext")
        let details: SetColorspaceDetails? = table.function(handle, "sws_setColorspaceDetails")
        let coefficients: GetCoefficients? = table.function(handle, "sws_getCoefficients")
        guard let version, let getContext, let scale, let freeContext, let details, let coefficients else {
            return .failure(LibavStill.Failure("missing in \(name): \(table.missing.joined(separator: ", "))"))
        }
        guard "libswscale.so.\(version() >> 16)" == name else {
            return .failure(LibavStill.Failure("\(name) reports major version \(version() >> 16)"))
        }
        return .success(
            Swscale(
                getContext: getContext, scale: scale, freeContext: freeContext, setColorspaceDetails: details,
                getCoefficients: coefficients))
    }
}
