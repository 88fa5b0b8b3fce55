import FilmtoneTestSupport
import Foundation
import XCTest

@testable import FilmtoneGst

/// `Mezzanines.prepare` and `Mezzanines.status` from Swift, on a copy of the long-GOP fixture.
final class MezzanineLibraryTests: XCTestCase {
    private var folder: URL!
    private var cache: String!
    private var clip: String!

    override func setUpWithError() throws {
        folder = try TestEnvironment.temporaryDirectory(self)
        cache = folder.appendingPathComponent("mezzanines").path
        clip = folder.appendingPathComponent("long.mp4").path
        try FileManager.default.copyItem(atPath: try TestEnvironment.fixture("longgop.mp4"), toPath: clip)
    }

    private func cacheFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: cache).sorted()
    }

    func testCancellingABuildStopsItAndLeavesNothing() async throws {
        let server = try HTTPTestServer.serving("clip.mp4", in: self).server
        defer { server.stop() }
        var options = MezzanineOptions(source: server.url("/stall/clip.mp4"))
        options.cacheDirectory = cache
        options.timeoutMilliseconds = 30_000
        let request = options
        await assertCancelledWhileStalled(on: server, path: "/stall/clip.mp4") { try await Mezzanines.prepare(request) }
        XCTAssertEqual((try? cacheFiles()) ?? [], [])
    }

    func testLibraryStatusAndPrepare() async throws {
        XCTAssertEqual(try Mezzanines.status(source: clip, cacheDirectory: cache), .missing)
        var options = MezzanineOptions(source: clip)
        options.cacheDirectory = cache
        let result = try await Mezzanines.prepare(options)
        XCTAssertTrue(result.built)
        XCTAssertEqual(result.frames, 120)
        XCTAssertEqual(try Mezzanines.status(source: clip, cacheDirectory: cache), .ready)
        XCTAssertEqual(
            try Mezzanines.status(source: clip, maxWidth: 100, cacheDirectory: cache), .missing,
            "other settings, other mezzanine")
        let again = try await Mezzanines.prepare(options)
        XCTAssertFalse(again.built)
        XCTAssertEqual(again.path, result.path)
    }
}
