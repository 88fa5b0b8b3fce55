import CLibav
import Foundation
import Synchronization

/// The libavcodec functions the own decoders (`fth264dec`, `fth265dec`) call, looked up once with `dlopen`/`dlsym` in
/// the library the CLibav headers describe (`libavcodec.so.59` on Debian 12; the same one gst-libav uses), after
/// checking that it is of their major version.
///
/// Why not linked: a linked libavcodec is loaded at every start of ftgst and of the plugin, with its ≈ 100 shared
/// libraries (≈ 14 ms and 8 MiB, measured with a program that only calls `avcodec_find_decoder`), by commands that
/// never decode video (`probe`, a JPEG photo's thumbnail). Opened here, it is loaded by the first decoder that needs
/// it, or ahead of it on a thread of its own (`preloadInBackground`).
package struct Libav: @unchecked Sendable {
    // @unchecked: C function pointers, immutable once loaded.
    typealias FindDecoder = @convention(c) (AVCodecID) -> UnsafePointer<AVCodec>?
    typealias FindDecoderByName = @convention(c) (UnsafePointer<CChar>?) -> UnsafePointer<AVCodec>?
    typealias AllocContext = @convention(c) (UnsafePointer<AVCodec>?) -> UnsafeMutablePointer<AVCodecContext>?
    typealias Open =
        @convention(c) (
            UnsafeMutablePointer<AVCodecContext>?, UnsafePointer<AVCodec>?, UnsafeMutablePointer<OpaquePointer?>?
        ) -> Int32
    typealias FreeContext = @convention(c) (UnsafeMutablePointer<UnsafeMutablePointer<AVCodecContext>?>?) -> Void
    typealias SendPacket = @convention(c) (UnsafeMutablePointer<AVCodecContext>?, UnsafePointer<AVPacket>?) -> Int32
    typealias ReceiveFrame =
        @convention(c) (UnsafeMutablePointer<AVCodecContext>?, UnsafeMutablePointer<AVFrame>?)
        -> Int32
    typealias ContextCall = @convention(c) (UnsafeMutablePointer<AVCodecContext>?) -> Void
    typealias PacketAlloc = @convention(c) () -> UnsafeMutablePointer<AVPacket>?
    typealias PacketFree = @convention(c) (UnsafeMutablePointer<UnsafeMutablePointer<AVPacket>?>?) -> Void
    typealias NewPacket = @convention(c) (UnsafeMutablePointer<AVPacket>?, Int32) -> Int32
    typealias PacketCall = @convention(c) (UnsafeMutablePointer<AVPacket>?) -> Void
    typealias FrameAlloc = @convention(c) () -> UnsafeMutablePointer<AVFrame>?
    typealias FrameFree = @convention(c) (UnsafeMutablePointer<UnsafeMutablePointer<AVFrame>?>?) -> Void
    typealias FrameCall = @convention(c) (UnsafeMutablePointer<AVFrame>?) -> Void
    typealias Mallocz = @convention(c) (Int) -> UnsafeMutableRawPointer?

    let findDecoder: FindDecoder
    let findDecoderByName: FindDecoderByName
    let allocContext: AllocContext
    let open: Open
    let freeContext: FreeContext
    let sendPacket: SendPacket
    let receiveFrame: ReceiveFrame
    let flushBuffers: ContextCall
    let packetAlloc: PacketAlloc
    let packetFree: PacketFree
    let newPacket: NewPacket
    let packetUnref: PacketCall
    let frameAlloc: FrameAlloc
    let frameFree: FrameFree
    let frameUnref: FrameCall
    /// `av_mallocz`: extradata must come from libavutil's allocator (the context frees it).
    let mallocz: Mallocz

    /// The library the own decoders open: `FTGST_LIBAVCODEC` (a soname or a path: another build of the same major
    /// version), else the soname of the major version the headers describe.
    package static var libraryName: String {
        let named = ProcessInfo.processInfo.environment["FTGST_LIBAVCODEC"] ?? ""
        return named.isEmpty ? String(cString: ftgst_libavcodec_soname()) : named
    }

    /// libavutil's soname for the headers' major version (opened beside libavcodec).
    package static var utilityLibraryName: String { String(cString: ftgst_libavutil_soname()) }

    /// The library (`libraryName`), opened once per name by whichever thread comes first (the others wait for
    /// it); the error says what was missing or wrong. A failure is what makes ftgst's frame pipelines decode H.264
    /// and HEVC with gst-libav instead (`FrameRecipe.autoplugDecision`).
    package static var shared: Result<Libav, LibavLoadError> { load(libraryName) }

    /// Whether `shared` loaded.
    package static var isAvailable: Bool {
        if case .success = shared { return true }
        return false
    }

    private static let loaded = Mutex<[String: Result<Libav, LibavLoadError>]>([:])

    private static func load(_ name: String) -> Result<Libav, LibavLoadError> {
        loaded.withLock { cache in
            if let known = cache[name] { return known }
            let result = open(name)
            cache[name] = result
            return result
        }
    }

    package struct LibavLoadError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Opens the library on a thread of its own, once per process, so that a decoder about to need it finds it
    /// loaded or being loaded (`dlopen` serialises concurrent loaders).
    package static func preloadInBackground() {
        guard
            preloadStarted.withLock({ started in
                defer { started = true }
                return !started
            })
        else { return }
        let name = libraryName
        Thread.detachNewThread { _ = load(name) }
    }

    private static let preloadStarted = Mutex(false)

    typealias Version = @convention(c) () -> UInt32

    private static func open(_ codecName: String) -> Result<Libav, LibavLoadError> {
        // RTLD_LOCAL: the symbols stay out of the global namespace (gst-libav, if also loaded, holds its own
        // reference to the same library).
        let utilName = utilityLibraryName
        guard let codec = dlopen(codecName, RTLD_NOW | RTLD_LOCAL) else {
            return .failure(LibavLoadError(description: "cannot open \(codecName): \(dlErrorText())"))
        }
        guard let util = dlopen(utilName, RTLD_NOW | RTLD_LOCAL) else {
            return .failure(LibavLoadError(description: "cannot open \(utilName): \(dlErrorText())"))
        }
        let table = SymbolTable()
        // The structures read here (AVCodecContext, AVFrame, AVPacket) are laid out as the headers' major versions
        // say: a library of another major (a copied binary, another FFmpeg) is refused before any is touched.
        let codecVersion: Version? = table.function(codec, "avcodec_version")
        let utilVersion: Version? = table.function(util, "avutil_version")
        if let codecVersion, let utilVersion {
            let (codecMajor, utilMajor) = (codecVersion() >> 16, utilVersion() >> 16)
            guard codecMajor == ftgst_libavcodec_major(), utilMajor == ftgst_libavutil_major() else {
                return .failure(
                    LibavLoadError(
                        description: "\(codecName) is libavcodec \(codecMajor) with libavutil \(utilMajor); "
                            + "ftgst was built for \(ftgst_libavcodec_major()) with \(ftgst_libavutil_major())"))
            }
        }
        // Every lookup is made before any is checked, so that the error names all that are missing.
        let api = Libav(
            findDecoder: table.function(codec, "avcodec_find_decoder"),
            findDecoderByName: table.function(codec, "avcodec_find_decoder_by_name"),
            allocContext: table.function(codec, "avcodec_alloc_context3"),
            open: table.function(codec, "avcodec_open2"),
            freeContext: table.function(codec, "avcodec_free_context"),
            sendPacket: table.function(codec, "avcodec_send_packet"),
            receiveFrame: table.function(codec, "avcodec_receive_frame"),
            flushBuffers: table.function(codec, "avcodec_flush_buffers"),
            packetAlloc: table.function(codec, "av_packet_alloc"),
            packetFree: table.function(codec, "av_packet_free"),
            newPacket: table.function(codec, "av_new_packet"),
            packetUnref: table.function(codec, "av_packet_unref"),
            frameAlloc: table.function(util, "av_frame_alloc"),
            frameFree: table.function(util, "av_frame_free"),
            frameUnref: table.function(util, "av_frame_unref"),
            mallocz: table.function(util, "av_mallocz"))
        guard table.missing.isEmpty, let api, codecVersion != nil, utilVersion != nil else {
            return .failure(
                LibavLoadError(description: "missing in \(codecName): \(table.missing.joined(separator: ", "))"))
        }
        // libavcodec prints its complaints about a damaged stream ("[hevc @ 0x…] Invalid NAL unit size") to stderr
        // unless told otherwise; gst-libav routes them into GStreamer's debug log, but it is not loaded here. They
        // reach ftgst's callers as the decoder's error instead (`decodeError`), and stderr keeps its one line.
        typealias SetLevel = @convention(c) (Int32) -> Void
        if let setLevel = dlsym(util, "av_log_set_level") {
            unsafeBitCast(setLevel, to: SetLevel.self)(ftgst_av_log_quiet())
        }
        return .success(api)
    }

    /// dlsym lookups that remember the names not found.
    final class SymbolTable {
        var missing: [String] = []

        func function<F>(_ handle: UnsafeMutableRawPointer, _ name: String) -> F? {
            guard let address = dlsym(handle, name) else {
                missing.append(name)
                return nil
            }
            return unsafeBitCast(address, to: F.self)
        }
    }

    /// All or nothing: nil when any function is missing.
    private init?(
        findDecoder: FindDecoder?, findDecoderByName: FindDecoderByName?, allocContext: AllocContext?, open: Open?,
        freeContext: FreeContext?,
        sendPacket: SendPacket?, receiveFrame: ReceiveFrame?, flushBuffers: ContextCall?, packetAlloc: PacketAlloc?,
        packetFree: PacketFree?, newPacket: NewPacket?, packetUnref: PacketCall?, frameAlloc: FrameAlloc?,
        frameFree: FrameFree?, frameUnref: FrameCall?, mallocz: Mallocz?
    ) {
        guard let findDecoder, let findDecoderByName, let allocContext, let open, let freeContext, let sendPacket,
            let receiveFrame,
            let flushBuffers, let packetAlloc, let packetFree, let newPacket, let packetUnref, let frameAlloc,
            let frameFree, let frameUnref, let mallocz
        else { return nil }
        self.findDecoder = findDecoder
        self.findDecoderByName = findDecoderByName
        self.allocContext = allocContext
        self.open = open
        self.freeContext = freeContext
        self.sendPacket = sendPacket
        self.receiveFrame = receiveFrame
        self.flushBuffers = flushBuffers
        self.packetAlloc = packetAlloc
        self.packetFree = packetFree
        self.newPacket = newPacket
        self.packetUnref = packetUnref
        self.frameAlloc = frameAlloc
        self.frameFree = frameFree
        self.frameUnref = frameUnref
        self.mallocz = mallocz
    }

    static func dlErrorText() -> String {
        dlerror().map { String(cString: $0) } ?? "unknown error"
    }
}
