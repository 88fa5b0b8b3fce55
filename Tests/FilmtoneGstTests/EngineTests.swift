import FilmtoneTestSupport
import Foundation
import XCTest

@testable import FilmtoneCore
@testable import FilmtoneGst

/// The engine's parts that need no media: its preview folder, its error mapping and request envelope.
final class EngineTests: XCTestCase {
    func testPreviewFolderKeepsTheNewestAndRemovesOnlyWhatItWrote() throws {
        let parent = try TestEnvironment.temporaryDirectory(self)
        let folder = PreviewFolder(parent: parent.path, keep: 2)
        var paths: [String] = []
        for _ in 0..<3 {
            let path = try folder.nextPath(extension: "png")
            try StagedFile.write(Array("x".utf8), to: URL(fileURLWithPath: path))
            folder.wrote(path)
            paths.append(path)
        }
        let made = URL(fileURLWithPath: paths[0]).deletingLastPathComponent()
        XCTAssertTrue(made.lastPathComponent.hasPrefix("ftgst-serve-"), made.path)
        XCTAssertEqual(
            paths.map { URL(fileURLWithPath: $0).lastPathComponent },
            ["preview-1.png", "preview-2.png", "preview-3.png"])
        XCTAssertEqual(
            paths.map { FileManager.default.fileExists(atPath: $0) }, [false, true, true], "the oldest beyond 2 went")

        // Someone else's file at one of its names (a new inode), and a file of its own in the folder: both kept, and
        // so the folder too.
        try FileManager.default.removeItem(atPath: paths[1])
        try StagedFile.write(Array("theirs".utf8), to: URL(fileURLWithPath: paths[1]))
        folder.removeAll()
        XCTAssertEqual(FileManager.default.contents(atPath: paths[1]), Data("theirs".utf8))
        XCTAssertFalse(FileManager.default.fileExists(atPath: paths[2]))
        XCTAssertTrue(FileManager.default.fileExists(atPath: made.path), "not empty: kept")

        // Nothing foreign: the folder goes with its previews.
        let clean = PreviewFolder(parent: parent.path, keep: 2)
        let path = try clean.nextPath(extension: "")
        try StagedFile.write(Array("x".utf8), to: URL(fileURLWithPath: path))
        clean.wrote(path)
        clean.removeAll()
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path))
    }

    func testErrorsMapToJSONRPCCodes() {
        func code(_ error: any Error) -> Int64 { RPCError(error).code }
        XCTAssertEqual(code(FilmtoneError(.invalidArgument, "x")), -32602)
        XCTAssertEqual(code(FilmtoneError(.fileNotFound, "x")), 66)
        XCTAssertEqual(code(FilmtoneError(.exportBusy, "x")), 75)
        XCTAssertEqual(code(FilmtoneError(.cancelled, "x")), 130)
        XCTAssertEqual(code(CocoaError(.fileNoSuchFile)), 70, "anything else is INTERNAL")
        XCTAssertEqual(
            RPCError(FilmtoneError(.saveFailed, "already saved as /a")).json.serialized,
            #"{"code":77,"message":"[SAVE_FAILED] already saved as /a","data":{"code":"SAVE_FAILED"}}"#)
    }

    func testRequestEnvelope() throws {
        func call(_ text: String) throws(RPCCallError) -> RPCCall {
            try RPCCall(try! JSONValue.parse(Array(text.utf8)))
        }
        let request = try call(#"{"jsonrpc":"2.0","id":"a","method":"m","params":{"x":1}}"#)
        XCTAssertEqual(request.method, "m")
        XCTAssertEqual(request.id, .string("a"))
        XCTAssertNil(try call(#"{"jsonrpc":"2.0","method":"m"}"#).id, "a notification")
        XCTAssertEqual(try call(#"{"jsonrpc":"2.0","id":null,"method":"m"}"#).id, .null)
        for (text, id) in [
            (#"{"jsonrpc":"1.0","id":1,"method":"m"}"#, JSONValue.int(1)),
            (#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#, .null),
            (#"{"jsonrpc":"2.0","id":[1],"method":"m"}"#, .null),
            (#"{"jsonrpc":"2.0","id":2,"method":"m","params":"x"}"#, .int(2)),
            (#"{"jsonrpc":"2.0","id":3,"method":"m","extra":1}"#, .int(3)),
        ] {
            do {
                _ = try call(text)
                XCTFail("accepted \(text)")
            } catch {
                XCTAssertEqual(error.error.code, -32600, text)
                XCTAssertEqual(error.id, id, text)
            }
        }
    }
}
