import Foundation
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneGst

/// The pure parts of `save`: collision names, the default pictures folder, the ledger's text.
final class LibraryTests: XCTestCase {
    func testCandidateNames() {
        XCTAssertEqual(LibrarySave.candidateName("clip.mp4", attempt: 1), "clip.mp4")
        XCTAssertEqual(LibrarySave.candidateName("clip.mp4", attempt: 2), "clip-2.mp4")
        XCTAssertEqual(LibrarySave.candidateName("clip.mp4", attempt: 12), "clip-12.mp4")
        XCTAssertEqual(LibrarySave.candidateName("a.tar.gz", attempt: 2), "a.tar-2.gz")
        XCTAssertEqual(LibrarySave.candidateName("README", attempt: 3), "README-3")
        XCTAssertEqual(LibrarySave.candidateName(".profile", attempt: 2), ".profile-2")
        XCTAssertEqual(LibrarySave.candidateName(".look.cube", attempt: 2), ".look-2.cube")
    }

    func testPicturesFolder() {
        XCTAssertEqual(SaveRequest.picturesFolder(xdgAnswer: "/home/me/Bilder\n", home: "/home/me"), "/home/me/Bilder")
        XCTAssertEqual(SaveRequest.picturesFolder(xdgAnswer: "/home/me\n", home: "/home/me"), "/home/me/Pictures")
        XCTAssertEqual(SaveRequest.picturesFolder(xdgAnswer: "/home/me/\n", home: "/home/me"), "/home/me/Pictures")
        XCTAssertEqual(SaveRequest.picturesFolder(xdgAnswer: "", home: "/home/me"), "/home/me/Pictures")
        XCTAssertEqual(SaveRequest.picturesFolder(xdgAnswer: "Pictures", home: "/home/me"), "/home/me/Pictures")
        XCTAssertEqual(SaveRequest.picturesFolder(xdgAnswer: nil, home: "/home/me"), "/home/me/Pictures")
    }

    func testLedgerRoundTrip() throws {
        var ledger = LibraryLedger()
        XCTAssertEqual(String(decoding: ledger.serialized, as: UTF8.self), "{\"version\":1,\"entries\":[]}\n")
        ledger.entries = [
            .init(
                sha256: String(repeating: "a", count: 64), name: "clip \"1\".mp4", size: 12,
                savedAt: "2025-01-31T12:00:00Z"),
            .init(sha256: String(repeating: "b", count: 64), name: "b.png", size: 0, savedAt: "2025-01-31T12:00:01Z"),
        ]
        let parsed = try LibraryLedger.parse(Data(ledger.serialized), path: "ledger")
        XCTAssertEqual(parsed, ledger)
        XCTAssertEqual(parsed.entry(sha256: String(repeating: "b", count: 64))?.name, "b.png")
        XCTAssertNil(parsed.entry(sha256: String(repeating: "c", count: 64)))
    }

    func testDamagedLedgersAreRefused() {
        for text in [
            "", "[]", "{\"entries\":3}", "{\"entries\":[{\"sha256\":\"xyz\",\"name\":\"a\"}]}",
            "{\"entries\":[{\"sha256\":\"\(String(repeating: "a", count: 64))\"}]}",
        ] {
            XCTAssertThrowsError(try LibraryLedger.parse(Data(text.utf8), path: "ledger"), text) { error in
                XCTAssertEqual((error as? FilmtoneError)?.code, .writeFailed)
            }
        }
    }

    func testTimestampIsUTCToTheSecond() {
        XCTAssertEqual(LibraryLedger.timestamp(Date(timeIntervalSince1970: 1_738_324_800)), "2025-01-31T12:00:00Z")
    }
}
