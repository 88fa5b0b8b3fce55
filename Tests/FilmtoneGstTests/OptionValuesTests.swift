import XCTest

@testable import FilmtoneCore
@testable import FilmtoneGst

/// The typed option values of the Swift API (issue 28, item 5), parsed from text at every edge — the CLI, request
/// files, batch lines, `serve` params — with the one error each bad spelling gets everywhere.
final class OptionValuesTests: XCTestCase {
    private func failure(_ body: () throws -> Any) -> (FilmtoneError.Code, String)? {
        do {
            _ = try body()
            return nil
        } catch let error as FilmtoneError {
            return (error.code, error.message)
        } catch {
            return (.internalError, "\(error)")
        }
    }

    func testEachValueParsesItsSpellingsAndRefusesOthers() {
        XCTAssertEqual(try ToneMapping.parse("on"), .on)
        XCTAssertEqual(try ToneMapping.parse("off"), .off)
        for setting in ["", "auto", "On", "true"] {
            let refused = failure { try ToneMapping.parse(setting) }
            XCTAssertEqual(refused?.0, .invalidArgument, setting)
            XCTAssertEqual(refused?.1, "--tone-map must be on or off, got '\(setting)'")
        }
        XCTAssertEqual(try MezzanineUse.parse("auto"), .auto)
        XCTAssertEqual(failure { try MezzanineUse.parse("on") }?.0, .invalidArgument)
        XCTAssertEqual(try Interpolation.parse("trilinear"), .trilinear)
        let cubic = failure { try Interpolation.parse("cubic") }
        XCTAssertEqual(cubic?.0, .invalidArgument)
        XCTAssertEqual(cubic?.1, "--interpolation must be tetrahedral, trilinear or nearest")
        XCTAssertEqual(try ImageFormat.parse("JPG"), .jpeg)
        XCTAssertEqual(failure { try ImageFormat.parse("webp") }?.0, .unsupportedFormat)
    }

    /// A request file (and so a `serve` params object, a batch `preview` line) with a bad spelling fails as it is
    /// read, with the same code and message as the CLI's option.
    func testRequestFilesParseTheSameValues() {
        func read(_ field: String, _ value: String) -> (FilmtoneError.Code, String)? {
            failure { try PreviewOptions.fromJSON(Data(#"{"source":"a.mp4","\#(field)":"\#(value)"}"#.utf8)) }
        }
        XCTAssertEqual(read("toneMap", "yes")?.1, "--tone-map must be on or off, got 'yes'")
        XCTAssertEqual(read("interpolation", "cubic")?.0, .invalidArgument)
        XCTAssertEqual(read("mezzanine", "always")?.1, "--mezzanine must be auto or off")
        XCTAssertEqual(read("format", "gif")?.0, .unsupportedFormat)
        XCTAssertNil(read("toneMap", "off"))
    }
}
