import FilmtoneTestSupport
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

    func testUserFolders() {
        func folder(_ kind: LibraryKind, _ answer: String?) -> String {
            SaveRequest.userFolder(kind, xdgAnswer: answer, home: "/home/me")
        }
        XCTAssertEqual(folder(.pictures, "/home/me/Bilder\n"), "/home/me/Bilder")
        XCTAssertEqual(folder(.pictures, "/home/me\n"), "/home/me/Pictures")
        XCTAssertEqual(folder(.pictures, "/home/me/\n"), "/home/me/Pictures")
        XCTAssertEqual(folder(.pictures, ""), "/home/me/Pictures")
        XCTAssertEqual(folder(.pictures, "Pictures"), "/home/me/Pictures")
        XCTAssertEqual(folder(.pictures, nil), "/home/me/Pictures")
        XCTAssertEqual(folder(.videos, "/home/me/Filme\n"), "/home/me/Filme")
        XCTAssertEqual(folder(.videos, "/home/me\n"), "/home/me/Videos")
        XCTAssertEqual(folder(.videos, nil), "/home/me/Videos")
        XCTAssertEqual(folder(.music, nil), "/home/me/Music")
        XCTAssertEqual([LibraryKind.pictures, .videos, .music].map(\.xdgName), ["PICTURES", "VIDEOS", "MUSIC"])
    }

    func testTheKindOfAFileComesFromItsContent() throws {
        func kind(_ fixture: String, as name: String? = nil) throws -> LibraryKind {
            let path = try TestEnvironment.fixture(fixture)
            return LibraryKind.of(
                header: try SaveRequest.header(of: path), name: name ?? path,
                tracks: SaveRequest.trackHandlers(of: path))
        }
        for fixture in ["clip.mp4", "rotated.mp4", "ramp10.mkv", "hevc10.mp4"] {
            XCTAssertEqual(try kind(fixture), .videos, fixture)
        }
        for fixture in ["photo.jpg", "photo.png", "photo-exif.jpg", "photo.avif", "animated.webp", "cmyk.jpg"] {
            XCTAssertEqual(try kind(fixture), .pictures, fixture)
        }
        XCTAssertEqual(try kind("tone.m4a"), .music, "an MP4 with an audio track alone (moov at the end)")
        XCTAssertEqual(try kind("tone.m4a", as: "x.mp4"), .music)
        XCTAssertTrue(
            SaveRequest.trackHandlers(of: try TestEnvironment.fixture("clip.mp4")).isSuperset(of: ["vide", "soun"]))
        XCTAssertEqual(LibraryKind.handlerTypes(inMoov: Array("....hdlr\0\0\0\0\0\0\0\0vide".utf8)), ["vide"])
        XCTAssertEqual(try kind("clip.mp4", as: "x.png"), .videos, "the content wins over the name")
        XCTAssertEqual(try kind("photo.png", as: "x.mp4"), .pictures)
        // Unrecognised content: the extension, else pictures.
        XCTAssertEqual(LibraryKind.of(header: [1, 2, 3], name: "/a/x.MOV"), .videos)
        XCTAssertEqual(LibraryKind.of(header: [1, 2, 3], name: "/a/x.flac"), .music)
        XCTAssertEqual(LibraryKind.of(header: [1, 2, 3], name: "/a/x.bin"), .pictures)
        XCTAssertEqual(LibraryKind.of(header: [], name: "/a/empty"), .pictures)
        // Signatures without a fixture.
        let webm: [UInt8] = [0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81]
        XCTAssertEqual(LibraryKind.fromContent(webm), .videos)
        XCTAssertEqual(LibraryKind.fromContent(Array("RIFF\0\0\0\0AVI LIST".utf8)), .videos)
        XCTAssertEqual(LibraryKind.fromContent(Array("RIFF\0\0\0\0WAVEfmt ".utf8)), .music)
        XCTAssertEqual(LibraryKind.fromContent(Array("\0\0\0\u{14}ftypqt  \0\0\0\0qt  ".utf8)), .videos)
        XCTAssertEqual(LibraryKind.fromContent(Array("\0\0\0\u{18}ftypmif1\0\0\0\0mif1heic".utf8)), .pictures)
        XCTAssertEqual(LibraryKind.fromContent(Array("\0\0\0\u{08}wide\0\0\0\u{08}mdat".utf8)), .videos)
        var ts = [UInt8](repeating: 0, count: 400)
        for offset in [0, 188, 376] { ts[offset] = 0x47 }
        XCTAssertEqual(LibraryKind.fromContent(ts), .videos)
        XCTAssertEqual(LibraryKind.fromContent(Array("OggS\0\u{02}......\u{80}theora".utf8)), .videos)
        XCTAssertEqual(LibraryKind.fromContent(Array("OggS\0\u{02}......\u{01}vorbis".utf8)), .music)
        XCTAssertEqual(LibraryKind.fromContent(Array("ID3\u{04}".utf8)), .music)
        XCTAssertNil(LibraryKind.fromContent(Array("hello".utf8)))
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
