import FilmtoneCore
import Foundation

/// What `probeSource` found out about a source: container, whether it is a still image, duration, the first
/// video and audio streams, and what a look's input slot should do with it. Printed by `ftgst probe`.
public struct ProbeReport: Equatable, Sendable {
    /// Short container name from the type finder (`mp4`, `mov`, `mkv`, `jpeg`, `png`…); nil when unknown.
    public var container: String?
    /// A still image (JPEG, PNG, … found by the type finder as `image/*`).
    public var isImage: Bool
    /// Duration in whole milliseconds (rounded down); nil for still images and when the source does not say.
    public var durationMilliseconds: Int64?
    public var video: VideoStreamReport?
    public var audio: AudioStreamReport?
    /// nil only when there is no video stream.
    public var inputTransform: InputTransform?
    /// Where the 0-based timeline starts in the source's own stream time: the first video frame's (else the
    /// first audio buffer's) stream time. 1.4 s for an ffmpeg MPEG-TS, the empty edit of an offset MP4, zero for
    /// most files. Every time ftgst reads or reports counts from it (`durationMs` is the span after it); an
    /// export adds it to its cut points. Not printed: the JSON speaks the 0-based timeline only.
    public var timelineStart: Duration = .zero

    public init(
        container: String?, isImage: Bool, durationMilliseconds: Int64?, video: VideoStreamReport?,
        audio: AudioStreamReport?, inputTransform: InputTransform?
    ) {
        self.container = container
        self.isImage = isImage
        self.durationMilliseconds = durationMilliseconds
        self.video = video
        self.audio = audio
        self.inputTransform = inputTransform
    }

    /// The CLI's object, keys in the documented order.
    public var json: JSONValue {
        .object([
            ("container", container.map(JSONValue.string) ?? .null), ("isImage", .bool(isImage)),
            ("durationMs", durationMilliseconds.map(JSONValue.int) ?? .null), ("video", video?.json ?? .null),
            ("audio", audio?.json ?? .null), ("inputTransform", inputTransform?.json ?? .null),
        ])
    }
}

/// The first video (or image) stream.
public struct VideoStreamReport: Equatable, Sendable {
    /// Short lowercase codec name: `h264`, `h265`, `vp9`, `av1`, `prores`, `mjpeg`, `jpeg`, `png`…
    public var codec: String
    /// The profile the parser reports (`high`, `main-10`, `high-4:4:4`); for JPEG the coding process
    /// (`baseline`, `extended`, `progressive`, `lossless`); nil when unknown.
    public var profile: String?
    /// Coded size.
    public var width: Int
    public var height: Int
    /// Size shown: width × pixel aspect ratio, then turned by `rotation`.
    public var displayWidth: Int
    public var displayHeight: Int
    /// Degrees clockwise to turn the picture to show it upright: 0, 90, 180 or 270.
    public var rotation: Int
    /// `"16/9"`; `"1/1"` when the stream does not say.
    public var pixelAspectRatio: String
    /// `"30/1"`, `"30000/1001"`; nil for still images and variable frame rates.
    public var frameRate: String?
    /// Number of frames, when known (see `ProbeRules.frameCount`); 1 for still images.
    public var frameCount: Int64?
    /// Bits per luma sample; nil when the stream does not say.
    public var bitDepth: Int?
    /// `4:2:0`, `4:2:2`, `4:4:4`, `4:0:0`…; nil when unknown.
    public var chromaFormat: String?
    /// nil when the stream signals no colorimetry.
    public var colorimetry: ColorimetryReport?
    public var hdr: HDRKind
    /// The Dolby Vision configuration of an MP4, QuickTime or Matroska source (`DolbyVisionReader` for a local file,
    /// `DolbyVisionScanner` for a remote one); nil for any other stream. `hdr` and `colorimetry` describe its base
    /// layer.
    public var dolbyVision: DolbyVisionConfiguration? = nil

    public var json: JSONValue {
        .object([
            ("codec", .string(codec)), ("profile", profile.map(JSONValue.string) ?? .null),
            ("width", .int(Int64(width))), ("height", .int(Int64(height))),
            ("displayWidth", .int(Int64(displayWidth))), ("displayHeight", .int(Int64(displayHeight))),
            ("rotation", .int(Int64(rotation))), ("pixelAspectRatio", .string(pixelAspectRatio)),
            ("frameRate", frameRate.map(JSONValue.string) ?? .null),
            ("frameCount", frameCount.map(JSONValue.int) ?? .null),
            ("bitDepth", bitDepth.map { JSONValue.int(Int64($0)) } ?? .null),
            ("chromaFormat", chromaFormat.map(JSONValue.string) ?? .null),
            ("colorimetry", colorimetry?.json ?? .null), ("hdr", .string(hdr.rawValue)),
            ("dolbyVision", dolbyVision?.json ?? .null),
        ])
    }
}

/// Colour description, by name (see `ProbeRules.colorimetry(parsing:)` for the names).
public struct ColorimetryReport: Equatable, Sendable {
    public var primaries: String
    public var transfer: String
    public var matrix: String
    /// `limited` (16–235), `full` (0–255) or `unknown`.
    public var range: String

    public init(primaries: String, transfer: String, matrix: String, range: String) {
        self.primaries = primaries
        self.transfer = transfer
        self.matrix = matrix
        self.range = range
    }

    public var json: JSONValue {
        .object([
            ("primaries", .string(primaries)), ("transfer", .string(transfer)), ("matrix", .string(matrix)),
            ("range", .string(range)),
        ])
    }
}

/// The HDR transfer a stream signals.
public enum HDRKind: String, Sendable {
    case none
    /// SMPTE ST 2084 (`smpte2084`).
    case pq
    /// ARIB STD-B67 (`arib-std-b67`).
    case hlg

    /// The tone map that brings it to SDR BT.709 (`ToneMap`); nil for SDR.
    var toneMap: ToneMap.Transfer? {
        switch self {
        case .pq: return .pq
        case .hlg: return .hlg
        case .none: return nil
        }
    }
}

/// The first audio stream.
public struct AudioStreamReport: Equatable, Sendable {
    /// `aac`, `mp3`, `opus`, `flac`, `pcm`…
    public var codec: String
    public var channels: Int?
    public var sampleRate: Int?

    public var json: JSONValue {
        .object([
            ("codec", .string(codec)), ("channels", channels.map { JSONValue.int(Int64($0)) } ?? .null),
            ("sampleRate", sampleRate.map { JSONValue.int(Int64($0)) } ?? .null),
        ])
    }
}

/// What a look's input slot should do with this source before the creative look.
public struct InputTransform: Equatable, Sendable {
    public enum Policy: String, Sendable, CaseIterable {
        /// SDR with BT.709-like primaries: display-referred already; nothing to do.
        case passthrough
        /// PQ or HLG: tone-map to SDR (an input LUT for that transfer).
        case hdrToSDR = "hdr-to-sdr"
        /// A logarithmic transfer: an input LUT from log to display.
        case logToDisplay = "log-to-display"
        /// SDR with wide-gamut primaries (BT.2020, DCI-P3, Adobe RGB): map the gamut to BT.709.
        case gamutToBT709 = "gamut-to-bt709"
        /// A video that signals no usable colorimetry: treated as BT.709 SDR.
        case assumeBT709 = "assume-bt709"
        /// A still image that signals no colorimetry: treated as sRGB (display-referred).
        case assumeSRGB = "assume-srgb"
    }

    public var policy: Policy
    public var reason: String
    /// What `thumb`, `storyboard` and `preview` apply by default (`--tone-map on`): `ToneMap.summary` for a PQ or
    /// HLG source (`tone-map: pq→bt709 bt2390`), else `none`.
    public var applied: String = "none"

    public var json: JSONValue {
        .object([("policy", .string(policy.rawValue)), ("reason", .string(reason)), ("applied", .string(applied))])
    }
}
