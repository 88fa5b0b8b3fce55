import XCTest

@testable import FilmtoneGst

/// The warm previews' shortcut for a smaller box: scaling a cached frame down is taken only when the output size it
/// gives is the one a decode at that box would give.
final class WarmPreviewsTests: XCTestCase {
    func testAScaledFramesSizeIsTakenOnlyWhenCertain() {
        let certain = WarmPreviews.certainSize(width: 1280, height: 720, box: (192, 108))
        XCTAssertEqual(certain.map { [$0.width, $0.height] }, [192, 108])
        // 320x240 may be the rounding of a picture whose 108-line fit is 144 or 143 wide: it is decoded.
        XCTAssertNil(WarmPreviews.certainSize(width: 320, height: 240, box: (192, 108)))
        let widescreen = WarmPreviews.certainSize(width: 960, height: 540, box: (192, 108))
        XCTAssertEqual(widescreen.map { [$0.width, $0.height] }, [192, 108])
        // 300x151 may be the rounding of a picture whose 192-px-wide fit is 97 or 96 lines high.
        XCTAssertNil(WarmPreviews.certainSize(width: 300, height: 151, box: (192, 108)))
        XCTAssertNil(WarmPreviews.certainSize(width: 1, height: 720, box: (192, 108)))
    }
}
