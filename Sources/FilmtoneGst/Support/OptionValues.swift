import FilmtoneCore
import FilmtoneLooks

// The typed values of the options every command shares (issue 28, item 5): what the Swift API takes, parsed from
// the CLI's words, request files' strings and batch lines at the edge, each with the one error a bad spelling
// gets everywhere. `ImageFormat.parse` (ImageCodecs) is the fourth: `jpeg`/`jpg`/`png`, else `UNSUPPORTED_FORMAT`.

/// `--tone-map` (`toneMap` in request files and batch lines): whether PQ and HLG (HDR) sources are tone-mapped to
/// SDR BT.709.
public enum ToneMapping: String, CaseIterable, Sendable {
    /// Tone-mapped (the default).
    case on
    /// Their codes shown as they are.
    case off

    /// `on` or `off`; anything else is `INVALID_ARGUMENT`.
    public static func parse(_ text: String) throws -> ToneMapping {
        try parsed(text, "--tone-map must be on or off, got '\(text)'")
    }

    var isOn: Bool { self == .on }
}

/// `preview --mezzanine` (`mezzanine` in request files): whether a ready mezzanine of the source is read instead of
/// the source.
public enum MezzanineUse: String, CaseIterable, Sendable {
    /// Read the source's mezzanine when a ready one is in the mezzanine folder (never builds one).
    case auto
    /// Always decode the source.
    case off

    /// `auto` or `off`; anything else is `INVALID_ARGUMENT`.
    public static func parse(_ text: String) throws -> MezzanineUse {
        try parsed(text, "--mezzanine must be auto or off")
    }
}

extension Interpolation {
    /// `tetrahedral`, `trilinear` or `nearest`; anything else is `INVALID_ARGUMENT`.
    public static func parse(_ text: String) throws -> Interpolation {
        try parsed(text, "--interpolation must be tetrahedral, trilinear or nearest")
    }
}

/// The value `text` spells (its raw value), else `INVALID_ARGUMENT` with `message`.
private func parsed<Value: RawRepresentable>(_ text: String, _ message: @autoclosure () -> String) throws -> Value
where Value.RawValue == String {
    guard let value = Value(rawValue: text) else { throw FilmtoneError(.invalidArgument, message()) }
    return value
}
