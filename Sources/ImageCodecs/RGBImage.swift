import FilmtoneCore
import Foundation

/// A tightly packed 8-bit RGB image (`width * 3` bytes a row, no padding).
public struct RGBImage: Equatable, Sendable {
    public var width: Int
    public var height: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0 && pixels.count == width * height * 3, "RGB image size mismatch")
        self.width = width
        self.height = height
        self.pixels = pixels
    }
}

/// An output image format.
public enum ImageFormat: String, CaseIterable, Sendable {
    case jpeg
    case png

    /// Parses `jpeg`/`jpg`/`png` (any case); throws `UNSUPPORTED_FORMAT` for anything else.
    public static func parse(_ text: String) throws -> ImageFormat {
        switch text.lowercased() {
        case "jpeg", "jpg": return .jpeg
        case "png": return .png
        default: throw FilmtoneError(.unsupportedFormat, "unsupported output format '\(text)' (use jpeg or png)")
        }
    }

    /// The file extension written.
    public var fileExtension: String { self == .jpeg ? "jpg" : "png" }
}
