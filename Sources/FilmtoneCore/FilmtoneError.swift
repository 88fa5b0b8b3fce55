import Foundation

/// The one error every ftgst call throws: a stable code (what the CLI prints as `[CODE]`), a message for people,
/// and — when GStreamer reported the failure — the GStreamer error it was mapped from.
///
/// Modelled on swift-nio's `FileSystemError`: stable code + message + underlying cause.
public struct FilmtoneError: Error, Equatable, CustomStringConvertible, Sendable {
    /// Stable codes. Their raw values are part of the CLI's contract and never change.
    public enum Code: String, CaseIterable, Sendable {
        case invalidArgument = "INVALID_ARGUMENT"
        case invalidURL = "INVALID_URL"
        case fileNotFound = "FILE_NOT_FOUND"
        case remoteFetchFailed = "REMOTE_FETCH_FAILED"
        case decodeFailed = "DECODE_FAILED"
        case unsupportedFormat = "UNSUPPORTED_FORMAT"
        case writeFailed = "WRITE_FAILED"
        case cancelled = "CANCELLED"
        case internalError = "INTERNAL"
        /// A `.cube` file that does not parse; the message is `file:line: reason`.
        case lutInvalid = "LUT_INVALID"
        /// `save`: the same content (by SHA-256) is already in the library; the message names the saved file.
        case saveFailed = "SAVE_FAILED"
        /// `share`: no desktop handler could take the file (none present, it failed, or it did not return in time).
        case shareUnavailable = "SHARE_UNAVAILABLE"
        /// `export`: another export holds the workspace; nothing was queued.
        case exportBusy = "EXPORT_BUSY"
        /// `pick`, `pickSource`, `pickLutFile`: no file chooser here (no desktop portal that answers, no zenity or
        /// kdialog with a display); the message says what was tried and what to do instead.
        case notSupported = "NOT_SUPPORTED"

        /// The process exit status the CLI uses for this code (documented in docs/CLI.md). 64 is bad usage.
        public var exitStatus: Int32 {
            switch self {
            case .invalidArgument: return 64
            case .invalidURL: return 65
            case .fileNotFound: return 66
            case .unsupportedFormat: return 67
            case .decodeFailed: return 68
            case .remoteFetchFailed: return 69
            case .internalError: return 70
            case .writeFailed: return 73
            case .lutInvalid: return 76
            case .saveFailed: return 77
            case .shareUnavailable: return 78
            case .exportBusy: return 75
            case .notSupported: return 79
            case .cancelled: return 130
            }
        }
    }

    /// What GStreamer said, kept as the underlying cause (gstreamer-rs keeps the same four things).
    public struct GStreamerCause: Equatable, Sendable {
        /// `core`, `library`, `resource`, `stream`, or the raw quark string of another domain.
        public var domain: String
        /// The code within the domain (e.g. `GST_RESOURCE_ERROR_NOT_FOUND` = 3).
        public var code: Int
        /// GStreamer's own message.
        public var message: String
        /// The debug string (source file, function, details), if any.
        public var debug: String?
        /// The name of the element that posted the error (e.g. `source`, `qtdemux0`).
        public var element: String?
        /// That element's factory (e.g. `souphttpsrc`), which decides how the error is classified.
        public var factory: String?
        /// `http-status-code` from the error details, when an HTTP source posted it.
        public var httpStatus: Int?

        public init(
            domain: String, code: Int, message: String, debug: String? = nil, element: String? = nil,
            factory: String? = nil, httpStatus: Int? = nil
        ) {
            self.domain = domain
            self.code = code
            self.message = message
            self.debug = debug
            self.element = element
            self.factory = factory
            self.httpStatus = httpStatus
        }
    }

    public var code: Code
    public var message: String
    public var cause: GStreamerCause?

    public init(_ code: Code, _ message: String, cause: GStreamerCause? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// `[CODE] message`: the single line the CLI writes to stderr.
    public var description: String { "[\(code.rawValue)] \(message)" }
}
