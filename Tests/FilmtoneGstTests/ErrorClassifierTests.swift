import CGst
import FilmtoneTestSupport
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneElements
@testable import FilmtoneGst
@testable import GstKit

final class ErrorClassifierTests: XCTestCase {
    private func cause(_ domain: String, _ code: Int, factory: String? = nil) -> FilmtoneError.GStreamerCause {
        FilmtoneError.GStreamerCause(domain: domain, code: code, message: "m", factory: factory)
    }

    func testHTTPSourceErrorsAreRemoteWhateverTheirCode() {
        for code in [GstErrorCode.resourceNotFound, GstErrorCode.resourceNotAuthorized, GstErrorCode.resourceOpenRead] {
            XCTAssertEqual(
                ErrorClassifier.code(for: cause("resource", code, factory: "souphttpsrc"), remote: true),
                .remoteFetchFailed)
        }
        // Network failures arrive as a generic STREAM/FAILED from the HTTP source.
        XCTAssertEqual(
            ErrorClassifier.code(
                for: cause("stream", GstErrorCode.streamFailed, factory: "souphttpsrc"),
                remote: true), .remoteFetchFailed)
    }

    func testMissingPluginIsUnsupportedFormat() {
        XCTAssertEqual(
            ErrorClassifier.code(for: cause("core", GstErrorCode.coreMissingPlugin), remote: false),
            .unsupportedFormat)
        XCTAssertEqual(
            ErrorClassifier.code(for: cause("stream", GstErrorCode.streamCodecNotFound), remote: true),
            .unsupportedFormat)
    }

    func testResourceErrorsDependOnWhereTheSourceIs() {
        XCTAssertEqual(
            ErrorClassifier.code(
                for: cause("resource", GstErrorCode.resourceNotFound, factory: "filesrc"),
                remote: false), .fileNotFound)
        XCTAssertEqual(
            ErrorClassifier.code(
                for: cause("resource", GstErrorCode.resourceSeek, factory: "qtdemux"),
                remote: true), .remoteFetchFailed)
        XCTAssertEqual(
            ErrorClassifier.code(
                for: cause("resource", GstErrorCode.resourceRead, factory: "filesrc"),
                remote: false), .decodeFailed)
        XCTAssertEqual(
            ErrorClassifier.code(for: cause("resource", GstErrorCode.resourceNoSpaceLeft), remote: false),
            .writeFailed)
    }

    /// ftlut's errors are classified by ftlut alone: a missing file, a file that does not parse (SETTINGS, or
    /// anything else it posts from a resource), a table it cannot allocate (CORE/FAILED).
    func testLUTElementErrorsAreAboutTheLook() {
        let ftlut = LUTFilterElement.factoryName
        XCTAssertEqual(
            ErrorClassifier.code(
                for: cause("resource", GstErrorCode.resourceNotFound, factory: ftlut),
                remote: false), .fileNotFound)
        XCTAssertEqual(
            ErrorClassifier.code(
                for: cause(
                    "resource", Int(GST_RESOURCE_ERROR_SETTINGS.rawValue),
                    factory: ftlut), remote: true), .lutInvalid)
        XCTAssertEqual(
            ErrorClassifier.code(
                for: cause("core", Int(GST_CORE_ERROR_FAILED.rawValue), factory: ftlut),
                remote: false), .internalError)
    }

    func testStreamErrorsAreDecodeFailures() {
        for code in [
            GstErrorCode.streamDecode, GstErrorCode.streamDemux, GstErrorCode.streamTypeNotFound,
            GstErrorCode.streamFormat, GstErrorCode.streamWrongType,
        ] {
            XCTAssertEqual(
                ErrorClassifier.code(for: cause("stream", code, factory: "qtdemux"), remote: false),
                .decodeFailed)
            XCTAssertEqual(
                ErrorClassifier.code(for: cause("stream", code, factory: "qtdemux"), remote: true),
                .decodeFailed, "corrupt media served over HTTP is still corrupt media")
        }
    }

    func testMessageKeepsHTTPStatusAndElement() {
        var c = cause("resource", GstErrorCode.resourceNotFound, factory: "souphttpsrc")
        c.httpStatus = 404
        c.element = "source"
        let error = ErrorClassifier.classify(c, remote: true)
        XCTAssertEqual(error.description, "[REMOTE_FETCH_FAILED] m (HTTP 404) [source]")
        XCTAssertEqual(error.cause?.httpStatus, 404)
    }

    func testNetworkFailuresGetAMessageThatSaysWhatHappened() {
        var c = cause("stream", GstErrorCode.streamFailed, factory: "souphttpsrc")
        c.element = "source"
        let error = ErrorClassifier.classify(c, remote: true)
        XCTAssertEqual(error.code, .remoteFetchFailed)
        XCTAssertTrue(error.message.hasPrefix("could not connect to or read from the server"), error.message)
        XCTAssertEqual(error.cause?.message, "m", "GStreamer's own text stays in the cause")
    }

    /// The classifier compares against GStreamer's C enums; pin them to the documented numbers so a mapping
    /// mistake (or an import surprise) shows up here rather than as a wrong exit status.
    func testGStreamerErrorCodesArePinned() {
        XCTAssertEqual(GstErrorCode.coreMissingPlugin, 12)
        XCTAssertEqual(GstErrorCode.resourceNotFound, 3)
        XCTAssertEqual(GstErrorCode.resourceOpenRead, 5)
        XCTAssertEqual(GstErrorCode.resourceRead, 9)
        XCTAssertEqual(GstErrorCode.resourceWrite, 10)
        XCTAssertEqual(GstErrorCode.resourceSeek, 11)
        XCTAssertEqual(GstErrorCode.resourceNoSpaceLeft, 14)
        XCTAssertEqual(GstErrorCode.resourceNotAuthorized, 15)
        XCTAssertEqual(GstErrorCode.streamFailed, 1)
        XCTAssertEqual(GstErrorCode.streamTypeNotFound, 4)
        XCTAssertEqual(GstErrorCode.streamWrongType, 5)
        XCTAssertEqual(GstErrorCode.streamCodecNotFound, 6)
        XCTAssertEqual(GstErrorCode.streamDecode, 7)
        XCTAssertEqual(GstErrorCode.streamDemux, 9)
        XCTAssertEqual(GstErrorCode.streamFormat, 11)
        XCTAssertEqual(ftgst_clock_time_none(), GstClockTime(UInt64.max))
    }

    func testExitStatusesAreDistinctAndUsageIs64() {
        let statuses = FilmtoneError.Code.allCases.map(\.exitStatus)
        XCTAssertEqual(Set(statuses).count, statuses.count)
        XCTAssertEqual(FilmtoneError.Code.invalidArgument.exitStatus, 64)
        XCTAssertEqual(FilmtoneError.Code.cancelled.exitStatus, 130)
    }

    // MARK: - Pictures GStreamer cannot decode

    func testPicturesGStreamerCannotDecodeAreNamed() {
        func reason(_ container: CapsStructure? = nil, jpeg: String? = nil, animated: Bool = false) -> String? {
            PictureFormats.unsupportedReason(container: container, jpegColorspace: jpeg, animatedWebP: animated)
        }
        XCTAssertEqual(reason(jpeg: "CMYK")?.hasPrefix("CMYK JPEG"), true)
        XCTAssertEqual(reason(jpeg: "YCCK")?.hasPrefix("YCCK JPEG"), true)
        XCTAssertNil(reason(jpeg: "sYUV"))
        XCTAssertNil(reason(jpeg: "sRGB"))
        XCTAssertEqual(reason(CapsStructure(name: "image/webp"), animated: true)?.hasPrefix("animated WebP"), true)
        XCTAssertNil(reason(CapsStructure(name: "image/webp")), "a still WebP that fails is just broken")
        let heif = CapsStructure(name: "video/quicktime", fields: ["variant": .string("heif")])
        XCTAssertEqual(reason(heif)?.hasPrefix("HEIF images (HEIC, AVIF)"), true)
        XCTAssertNil(reason(CapsStructure(name: "video/quicktime", fields: ["variant": .string("iso")])))
        XCTAssertNil(reason())
    }

    func testAnimatedWebPIsToldFromItsHeader() {
        func header(_ chunk: String, flags: UInt8) -> [UInt8] {
            Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBP".utf8) + Array(chunk.utf8) + [10, 0, 0, 0, flags, 0, 0, 0]
        }
        XCTAssertTrue(header("VP8X", flags: 0x02).withUnsafeBytes(PictureFormats.isAnimatedWebP))
        XCTAssertTrue(header("VP8X", flags: 0x12).withUnsafeBytes(PictureFormats.isAnimatedWebP))
        XCTAssertFalse(header("VP8X", flags: 0x10).withUnsafeBytes(PictureFormats.isAnimatedWebP), "alpha only")
        XCTAssertFalse(header("VP8 ", flags: 0x02).withUnsafeBytes(PictureFormats.isAnimatedWebP), "simple format")
        XCTAssertFalse(Array(header("VP8X", flags: 0x02).prefix(20)).withUnsafeBytes(PictureFormats.isAnimatedWebP))
    }

    func testA16BitRGBPNGIsToldFromItsHeader() {
        func header(depth: UInt8, colourType: UInt8) -> [UInt8] {
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
                + [0, 0, 0, 64, 0, 0, 0, 48, depth, colourType, 0, 0, 0]
        }
        XCTAssertTrue(header(depth: 16, colourType: 2).withUnsafeBytes(PictureFormats.isDeepRGBPNG))
        XCTAssertFalse(header(depth: 8, colourType: 2).withUnsafeBytes(PictureFormats.isDeepRGBPNG), "8-bit RGB")
        XCTAssertFalse(header(depth: 16, colourType: 6).withUnsafeBytes(PictureFormats.isDeepRGBPNG), "RGBA")
        XCTAssertFalse(header(depth: 16, colourType: 0).withUnsafeBytes(PictureFormats.isDeepRGBPNG), "grey")
        XCTAssertFalse(Array(header(depth: 16, colourType: 2).prefix(25)).withUnsafeBytes(PictureFormats.isDeepRGBPNG))
        XCTAssertEqual(
            PictureFormats.unsupportedReason(
                container: nil, jpegColorspace: nil, animatedWebP: false, deepRGBPNG: true)?
                .hasPrefix("16-bit RGB PNG"), true)
    }

    /// Through the library: a preview and a thumbnail of each picture GStreamer cannot decode throw
    /// UNSUPPORTED_FORMAT with the reason (a 16-bit RGB PNG's thumbnail is libpng's, which decodes it right:
    /// ScaledPhotoTests).
    func testTheLibraryReportsUnsupportedPictures() async throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        for fixture in ["cmyk.jpg", "animated.webp", "photo.avif", "deep16.png"] {
            var preview = PreviewOptions(source: try TestEnvironment.fixture(fixture))
            preview.output = folder.appendingPathComponent("p.png").path
            var thumb = ThumbnailOptions(source: try TestEnvironment.fixture(fixture))
            thumb.cacheDirectory = folder.path
            let (previewOptions, thumbOptions) = (preview, thumb)
            var runs: [@Sendable () async throws -> Void] = [{ _ = try await Previews.render(previewOptions) }]
            if fixture != "deep16.png" { runs.append({ _ = try await Thumbnails.make(thumbOptions) }) }
            for run in runs {
                do {
                    try await run()
                    XCTFail("\(fixture): expected UNSUPPORTED_FORMAT")
                } catch let error as FilmtoneError {
                    XCTAssertEqual(error.code, .unsupportedFormat, "\(fixture): \(error)")
                    // qtdemux's error may be swallowed by decodebin (the local-stall rule then reports it, with no
                    // GStreamer cause): the code and the reason are what the user must get either way.
                    XCTAssertTrue(error.message.contains("not supported"), "\(fixture): \(error)")
                }
            }
        }
    }

    /// A demuxer's STREAM/FAILED whose flow was `not-linked` means no video stream; another flow, another element
    /// or another error does not.
    func testNotLinkedFromADemuxerIsNoVideoStream() {
        func failed(_ factory: String, debug: String) -> FilmtoneError.GStreamerCause {
            var cause = cause("stream", GstErrorCode.streamFailed, factory: factory)
            cause.debug = debug
            return cause
        }
        XCTAssertTrue(
            ErrorClassifier.isNoVideoStream(failed("qtdemux", debug: "streaming stopped, reason not-linked (-1)")))
        XCTAssertTrue(ErrorClassifier.isNoVideoStream(failed("matroskademux", debug: "reason not-linked (-1)")))
        XCTAssertFalse(
            ErrorClassifier.isNoVideoStream(failed("qtdemux", debug: "streaming stopped, reason error (-5)")))
        XCTAssertFalse(ErrorClassifier.isNoVideoStream(failed("multiqueue", debug: "reason not-linked (-1)")))
        XCTAssertFalse(ErrorClassifier.isNoVideoStream(cause("stream", GstErrorCode.streamDecode, factory: "qtdemux")))
    }
}
