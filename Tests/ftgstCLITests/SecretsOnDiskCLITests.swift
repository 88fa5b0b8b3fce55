import FilmtoneTestSupport
import XCTest

/// No secret from a URL is written to disk (issue 28): a remote source's password and query token must appear in
/// no file a command leaves behind, the mezzanine's manifest included, while two tokens are still two sources.
final class SecretsOnDiskCLITests: XCTestCase {
    private let secrets = ["s3cretpw", "t0kenvalue", "0therkey"]

    /// Every file under `folder` whose bytes hold one of the secrets.
    private func filesHoldingSecrets(_ folder: URL) throws -> [String] {
        let walker = try XCTUnwrap(FileManager.default.enumerator(atPath: folder.path))
        var found: [String] = []
        while let name = walker.nextObject() as? String {
            let path = folder.appendingPathComponent(name).path
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue else {
                continue
            }
            let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
            if secrets.contains(where: text.contains) { found.append(name) }
        }
        return found
    }

    func testAMezzaninesManifestKeepsNoPasswordOrToken() throws {
        let server = try HTTPTestServer.serving("clip-faststart.mp4", in: self).server
        defer { server.stop() }
        let dir = try TestEnvironment.temporaryDirectory(self)
        let port = try XCTUnwrap(URL(string: server.url("/"))?.port)
        var keys: [String] = []
        for query in ["token=t0kenvalue", "token=0therkey"] {
            let source = "http://alice:s3cretpw@127.0.0.1:\(port)/media/clip.mp4?\(query)"
            let result = try Run.ftgst(
                ["mezzanine", source, "--mezzanine-dir", dir.path, "--max-width", "160", "--max-height", "160"])
            XCTAssertEqual(result.status, 0, result.stderr)
            keys.append(try XCTUnwrap(try result.json()["key"] as? String))
            XCTAssertFalse(secrets.contains(where: result.stdout.contains), "stdout: \(result.stdout)")
        }
        XCTAssertNotEqual(keys[0], keys[1], "two tokens are two sources")
        XCTAssertEqual(try filesHoldingSecrets(dir), [], "a secret was written to disk")
        let manifests = try FileManager.default.subpathsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".json") }
        XCTAssertFalse(manifests.isEmpty, "the manifests were looked at")
    }
}
