import ImageCodecs
import XCTest

@testable import FilmtoneGst
@testable import GstKit

/// The pure rules of a storyboard: tile times, places across sheets, sheet sizes, cues, the WebVTT text.
final class StoryboardLayoutTests: XCTestCase {
    private func layout(duration: Int64, every: Int64 = 10_000, columns: Int = 10, rows: Int = 10)
        -> StoryboardLayout
    {
        StoryboardLayout(
            durationMilliseconds: duration, intervalMilliseconds: every, tileWidth: 320, tileHeight: 180,
            columns: columns, rows: rows)
    }

    func testOneTileForEachIntervalThatStartsBeforeTheEnd() {
        XCTAssertEqual(layout(duration: 120_000).tileCount, 12)
        XCTAssertEqual(layout(duration: 120_001).tileCount, 13)
        XCTAssertEqual(layout(duration: 119_999).tileCount, 12)
        XCTAssertEqual(layout(duration: 1).tileCount, 1)
        XCTAssertEqual(layout(duration: 120_000).time(ofTile: 11), 110_000)
    }

    func testPlacesRunRowByRowAndStartAgainOnTheNextSheet() {
        let plan = layout(duration: 100_000, every: 1000, columns: 4, rows: 3)  // 100 tiles, 12 a sheet
        XCTAssertEqual(plan.sheetCount, 9)
        XCTAssertTrue(plan.place(ofTile: 0) == (0, 0, 0))
        XCTAssertTrue(plan.place(ofTile: 5) == (0, 320, 180))
        XCTAssertTrue(plan.place(ofTile: 11) == (0, 960, 360))
        XCTAssertTrue(plan.place(ofTile: 12) == (1, 0, 0))
        XCTAssertTrue(plan.place(ofTile: 99) == (8, 960, 0))
    }

    func testFullSheetsAndAShorterLastOne() {
        let plan = layout(duration: 100_000, every: 1000, columns: 4, rows: 3)
        XCTAssertTrue(plan.size(ofSheet: 0) == (1280, 540))
        XCTAssertEqual(plan.tiles(onSheet: 8), 4)
        XCTAssertTrue(plan.size(ofSheet: 8) == (1280, 180))
        let two = layout(duration: 20_000, every: 10_000, columns: 4, rows: 3)
        XCTAssertTrue(two.size(ofSheet: 0) == (640, 180), "two tiles: two columns, one row")
        let twelve = layout(duration: 120_000)
        XCTAssertTrue(twelve.size(ofSheet: 0) == (3200, 360), "12 tiles on a 10×10 grid: two rows")
    }

    func testCuesAreContiguousAndTheLastEndsAtTheDuration() {
        let plan = layout(duration: 125_400)
        XCTAssertEqual(plan.tileCount, 13)
        for index in 0..<(plan.tileCount - 1) {
            XCTAssertEqual(plan.cue(ofTile: index).end, plan.cue(ofTile: index + 1).start)
        }
        XCTAssertEqual(plan.cue(ofTile: 0).start, 0)
        XCTAssertTrue(plan.cue(ofTile: 12) == (120_000, 125_400))
    }

    func testTimestamps() {
        XCTAssertEqual(StoryboardLayout.timestamp(0), "00:00:00.000")
        XCTAssertEqual(StoryboardLayout.timestamp(10_000), "00:00:10.000")
        XCTAssertEqual(StoryboardLayout.timestamp(3_723_045), "01:02:03.045")
        XCTAssertEqual(StoryboardLayout.timestamp(360_000_007), "100:00:00.007")
    }

    func testVTT() {
        let plan = StoryboardLayout(
            durationMilliseconds: 2500, intervalMilliseconds: 1000, tileWidth: 160, tileHeight: 90, columns: 2,
            rows: 1)
        XCTAssertEqual(
            plan.vtt,
            """
            WEBVTT

            00:00:00.000 --> 00:00:01.000
            sheet-001.jpg#xywh=0,0,160,90

            00:00:01.000 --> 00:00:02.000
            sheet-001.jpg#xywh=160,0,160,90

            00:00:02.000 --> 00:00:02.500
            sheet-002.jpg#xywh=0,0,160,90

            """)
        XCTAssertEqual(StoryboardLayout.sheetName(999), "sheet-1000.jpg")
    }

    /// The limits are the real sheets': a grid the tiles never fill is no error (1000×1000 tiles of a 4-s clip make
    /// one 320×180 sheet), a sheet the tiles do fill past JPEG's side or 100 megapixels is.
    func testLimits() {
        XCTAssertNoThrow(try layout(duration: 7_200_000).checkLimits())
        XCTAssertNoThrow(try layout(duration: 4_000, columns: 1000, rows: 1000).checkLimits())
        XCTAssertNoThrow(try layout(duration: 10_000, columns: 300, rows: 1).checkLimits())
        XCTAssertNoThrow(try layout(duration: 2_000_000, columns: 200, rows: 1).checkLimits(), "64000 px wide")
        XCTAssertThrowsError(try layout(duration: 3_000_000, columns: 300, rows: 1).checkLimits(), "96000 px wide")
        XCTAssertThrowsError(try layout(duration: 100_000_000, columns: 100, rows: 100).checkLimits(), "576 MP")
        XCTAssertThrowsError(try layout(duration: 1_000_001, every: 10).checkLimits())
    }

    func testEvenTileHeights() {
        func size(_ w: Int, _ h: Int, _ par: Fraction = Fraction(1, 1)) -> (width: Int, height: Int) {
            FrameRecipe.outputSize(
                width: w, height: h, pixelAspect: par, maxWidth: 320, maxHeight: 16384, evenHeight: true)
        }
        XCTAssertTrue(size(1920, 1080) == (320, 180))
        XCTAssertTrue(size(1920, 804) == (320, 134), "133.99 → 134")
        XCTAssertTrue(size(1920, 810) == (320, 136), "135 → the nearest even, 136")
        XCTAssertTrue(size(321, 241) == (320, 240))
        XCTAssertTrue(size(360, 240, Fraction(16, 9)) == (320, 120))
        XCTAssertTrue(size(160, 121) == (160, 122), "never upscaled; the height still even")
    }

    func testSheetPlacesTilesClipped() {
        var sheet = StoryboardSheet(width: 4, height: 2)
        let red = RGBImage(width: 2, height: 2, pixels: [UInt8](repeating: 200, count: 12))
        sheet.place(red, x: 2, y: 0, width: 2, height: 2)
        let big = RGBImage(width: 3, height: 3, pixels: [UInt8](repeating: 9, count: 27))
        sheet.place(big, x: 0, y: 0, width: 1, height: 1)  // clipped to the tile's 1×1
        let row0: [UInt8] = [9, 9, 9, 0, 0, 0, 200, 200, 200, 200, 200, 200]
        let row1: [UInt8] = [0, 0, 0, 0, 0, 0, 200, 200, 200, 200, 200, 200]
        XCTAssertEqual(sheet.image.pixels, row0 + row1)
    }
}
