import XCTest

@testable import FilmtoneGst

final class FrameInterestTests: XCTestCase {
    private func flat(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> RGBImage {
        RGBImage(width: 4, height: 4, pixels: Array((0..<16).map { _ in [r, g, b] }.joined()))
    }

    func testSampleTimesAreTheMiddlesOfFivePartsOfTheFirstThird() {
        XCTAssertEqual(
            FrameInterest.sampleTimes(durationMilliseconds: 12_000),
            [400, 1200, 2000, 2800, 3600, 4800, 6400, 8000, 9600, 11200])
        XCTAssertEqual(
            FrameInterest.sampleTimes(durationMilliseconds: 3000),
            [100, 300, 500, 700, 900, 1200, 1600, 2000, 2400, 2800])
        XCTAssertEqual(FrameInterest.sampleTimes(durationMilliseconds: nil), [0])
        XCTAssertEqual(FrameInterest.sampleTimes(durationMilliseconds: 0), [0])
    }

    func testBlackWhiteAndFlatAreNotWorthShowingAndARampIs() {
        XCTAssertFalse(FrameInterest.statistics(of: flat(0, 0, 0)).isWorthShowing)
        XCTAssertFalse(FrameInterest.statistics(of: flat(255, 255, 255)).isWorthShowing)
        let grey = FrameInterest.statistics(of: flat(128, 128, 128))
        XCTAssertEqual(grey.mean, 128, accuracy: 0.001)
        XCTAssertEqual(grey.deviation, 0, accuracy: 0.001)
        XCTAssertFalse(grey.isWorthShowing)
        var pixels: [UInt8] = []
        for step in 0..<16 { pixels += [UInt8](repeating: UInt8(step * 16), count: 3) }
        let ramp = RGBImage(width: 16, height: 1, pixels: pixels)
        let stats = FrameInterest.statistics(of: ramp)
        XCTAssertEqual(stats.mean, 120, accuracy: 0.01)
        XCTAssertEqual(stats.deviation, 73.76, accuracy: 0.01)  // 16 × sqrt((16² − 1) / 12)
        XCTAssertTrue(stats.isWorthShowing)
    }

    func testPickTakesTheFirstWorthShowingElseTheBusiest() {
        typealias S = FrameInterest.Statistics
        XCTAssertEqual(
            FrameInterest.pick([S(mean: 5, deviation: 40), S(mean: 100, deviation: 20), S(mean: 90, deviation: 60)]), 1)
        XCTAssertEqual(
            FrameInterest.pick([S(mean: 5, deviation: 4), S(mean: 250, deviation: 9), S(mean: 90, deviation: 2)]), 1)
        XCTAssertEqual(FrameInterest.pick([S(mean: 5, deviation: 0), S(mean: 7, deviation: 0)]), 0)
        XCTAssertNil(FrameInterest.pick([]))
    }

    func testAutoParsesAloneAndNotInAList() throws {
        XCTAssertEqual(try ThumbnailTime.parse(list: "auto"), [.auto])
        XCTAssertThrowsError(try ThumbnailTime.parse(list: "auto,1s"))
        XCTAssertThrowsError(try ThumbnailTime.parse(list: "1s,auto"))
    }
}
