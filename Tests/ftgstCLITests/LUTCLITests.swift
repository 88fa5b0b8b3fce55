import FilmtoneTestSupport
import XCTest

/// `ftgst lut inspect` end to end through the built binary: one JSON line on stdout, or one `[CODE]` line on stderr
/// with the code's exit status.
final class LUTCLITests: XCTestCase {
    private func inspect(_ path: String) throws -> ProcessResult { try Run.ftgst(["lut", "inspect", path]) }

    private func success(_ result: ProcessResult, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.status, 0, "stderr: \(result.stderr)", file: file, line: line)
        XCTAssertEqual(result.stderr, "", file: file, line: line)
        XCTAssertEqual(result.stdout.filter { $0 == "\n" }.count, 1, "one line of JSON", file: file, line: line)
    }

    func testThreeDimensionalFileWithTitleAndDomain() throws {
        let result = try inspect(try SharedLUTs.path("ocio/iridas_3d.cube"))
        success(result)
        // Exact text: the keys in the documented order.
        XCTAssertEqual(
            result.stdout,
            """
            {"title":"A test 3D-LUT.","kind":"3d","size":2,"domainMin":[0.0,1.0,0.0],"domainMax":[2.0,2.0,1.0]}

            """)
        let json = try result.json()
        XCTAssertEqual(json["title"] as? String, "A test 3D-LUT.")
        XCTAssertEqual(json["kind"] as? String, "3d")
        XCTAssertEqual(json["size"] as? Int, 2)
        XCTAssertEqual(json["domainMin"] as? [Double], [0, 1, 0])
        XCTAssertEqual(json["domainMax"] as? [Double], [2, 2, 1])
    }

    func testOneDimensionalFile() throws {
        let result = try inspect(try SharedLUTs.path("colour-science/iridas_cube/Demo.cube"))
        success(result)
        let json = try result.json()
        XCTAssertEqual(json["title"] as? String, "Demo")
        XCTAssertEqual(json["kind"] as? String, "1d")
        XCTAssertEqual(json["size"] as? Int, 3)
        XCTAssertEqual(json["domainMax"] as? [Double], [1, 2, 3])
        XCTAssertNil(json["shaperSize"])
    }

    func testShaperAndCubeReportsTheCubeAndTheShaperSize() throws {
        let result = try inspect(try SharedLUTs.path("ocio/resolve_1d3d.cube"))
        success(result)
        XCTAssertEqual(
            result.stdout,
            """
            {"title":null,"kind":"1d+3d","size":3,"shaperSize":6,"domainMin":[0.0,0.0,0.0],"domainMax":[4.0,4.0,4.0]}

            """)
    }

    func testBrokenFileIsLUTInvalid() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let path = folder.appendingPathComponent("broken.cube").path
        XCTAssertTrue(
            FileManager.default.createFile(atPath: path, contents: Data("LUT_3D_SIZE 2\n0 0 0\n0 nan 0\n".utf8)))
        let result = try inspect(path)
        assertFailure(result, code: "LUT_INVALID", status: 76)
        XCTAssertEqual(result.stderr, "[LUT_INVALID] \(path):3: 'nan' is not a number\n")
    }

    func testBinaryJunkIsOneLineOfLUTInvalid() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let path = folder.appendingPathComponent("junk.cube").path
        var generator = SplitMix(seed: 42)
        let junk = (0..<4096).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(junk)))
        assertFailure(try inspect(path), code: "LUT_INVALID", status: 76)
    }

    func testMissingFileAndDirectory() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let missing = folder.appendingPathComponent("nope.cube").path
        let result = try inspect(missing)
        assertFailure(result, code: "FILE_NOT_FOUND", status: 66)
        XCTAssertEqual(result.stderr, "[FILE_NOT_FOUND] no such file: \(missing)\n")
        assertFailure(try inspect(folder.path), code: "FILE_NOT_FOUND", status: 66)
    }

    func testUsageErrors() throws {
        assertFailure(try Run.ftgst(["lut"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try Run.ftgst(["lut", "apply"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try Run.ftgst(["lut", "inspect"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try Run.ftgst(["lut", "inspect", "a.cube", "b.cube"]), code: "INVALID_ARGUMENT", status: 64)
        assertFailure(try Run.ftgst(["lut", "inspect", "--size", "2", "a.cube"]), code: "INVALID_ARGUMENT", status: 64)
    }

    func testHelp() throws {
        for arguments in [["lut", "--help"], ["lut", "inspect", "--help"]] {
            let result = try Run.ftgst(arguments)
            XCTAssertEqual(result.status, 0)
            XCTAssertTrue(result.stdout.contains("ftgst lut inspect FILE"), result.stdout)
        }
        XCTAssertTrue(try Run.ftgst(["--help"]).stdout.contains("lut inspect FILE"))
    }
}
