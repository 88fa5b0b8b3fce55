import XCTest

@testable import FilmtoneGst

/// The URI `ftgst share` hands to a desktop handler.
final class ShareTests: XCTestCase {
    func testFileURIEncoding() {
        XCTAssertEqual(Share.fileURI(path: "/a b/ü#?%.mp4"), "file:///a%20b/%C3%BC%23%3F%25.mp4")
        XCTAssertEqual(Share.fileURI(path: "/x/A-z_0.9~.png"), "file:///x/A-z_0.9~.png")
    }
}
