import XCTest

@testable import FilmtoneCore
@testable import FilmtoneGst

/// The time syntax of `ftgst thumb --time` and `--time-ms` lists (issue 13, item 2): pure, no media.
final class ThumbnailTimesTests: XCTestCase {
    func testEachSyntax() throws {
        XCTAssertEqual(try ThumbnailTime.parse("12.5s"), .milliseconds(12_500))
        XCTAssertEqual(try ThumbnailTime.parse("12.5"), .milliseconds(12_500))
        XCTAssertEqual(try ThumbnailTime.parse("0"), .milliseconds(0))
        XCTAssertEqual(try ThumbnailTime.parse("1:02.5"), .milliseconds(62_500))
        XCTAssertEqual(try ThumbnailTime.parse("1:00:02.5"), .milliseconds(3_602_500))
        XCTAssertEqual(try ThumbnailTime.parse("90:00"), .milliseconds(5_400_000))
        XCTAssertEqual(try ThumbnailTime.parse("0.0339s"), .milliseconds(33))  // sub-millisecond dropped
        XCTAssertEqual(try ThumbnailTime.parse("10%"), .fraction(0.1))
        XCTAssertEqual(try ThumbnailTime.parse("100%"), .fraction(1))
        XCTAssertEqual(try ThumbnailTime.parse(".5s"), .milliseconds(500))
    }

    func testMalformedTimesAreInvalidArgument() {
        for text in [
            "", "-1", "-1s", "1:xx", "1:2.5", "1:75", "1:60", "1::02", ":02", "1:02:", "1.5:02", "1e3", "+1",
            "1 s", "1:02s", "101%", "-5%", "%", "s", "1.2.3", "١٢", "1:00:00:00", ".",
        ] {
            XCTAssertThrowsError(try ThumbnailTime.parse(text), text) { error in
                XCTAssertEqual((error as? FilmtoneError)?.code, .invalidArgument, text)
            }
        }
    }

    func testLists() throws {
        XCTAssertEqual(
            try ThumbnailTime.parse(list: "9s,1:00,10%"), [.milliseconds(9000), .milliseconds(60_000), .fraction(0.1)])
        XCTAssertEqual(
            try ThumbnailTime.parseMilliseconds(list: "9000,1000,5000"),
            [.milliseconds(9000), .milliseconds(1000), .milliseconds(5000)])
        XCTAssertEqual(try ThumbnailTime.parseMilliseconds(list: "1500"), [.milliseconds(1500)])
        for text in ["1000,,2000", "1000,", ",1000", "1000,-5", "1.5", "1000,1s"] {
            XCTAssertThrowsError(try ThumbnailTime.parseMilliseconds(list: text), text)
        }
        XCTAssertThrowsError(try ThumbnailTime.parse(list: "1s,1:xx"))
    }

    /// `--count N`: the middles of N equal parts, so never the first frame nor the end.
    func testEvenlySpaced() throws {
        XCTAssertEqual(try ThumbnailTime.evenlySpaced(count: 1), [.fraction(0.5)])
        let four = try ThumbnailTime.evenlySpaced(count: 4)
        XCTAssertEqual(four.map { $0.resolved(durationMilliseconds: 3000) }, [375, 1125, 1875, 2625])
        XCTAssertThrowsError(try ThumbnailTime.evenlySpaced(count: 0))
        XCTAssertThrowsError(try ThumbnailTime.evenlySpaced(count: 1001))
        XCTAssertEqual(ThumbnailTime.fraction(0.1).resolved(durationMilliseconds: 2999), 299)
    }
}
