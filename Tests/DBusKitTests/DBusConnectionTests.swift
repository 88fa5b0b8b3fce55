import DBusKit
import FilmtoneTestSupport
import Foundation
import Synchronization
import XCTest

/// The wrapper against a real `dbus-daemon` of the test's own: values survive the trip through GVariant and the
/// bus, signals reach a subscriber on the connection's thread, and every failure is a typed `DBusError` in time.
final class DBusConnectionTests: XCTestCase {
    func testASignalsValuesComeBackAsSent() throws {
        let bus = try PrivateSessionBus(self)
        let connection = try DBusConnection(address: bus.address, timeoutMilliseconds: 5000)
        defer { connection.close() }
        XCTAssertTrue(connection.uniqueName.hasPrefix(":"), connection.uniqueName)
        let received = Mutex<[DBusValue]>([])
        let arrived = DispatchSemaphore(value: 0)
        connection.subscribe(interface: "org.example.Test", member: "Sent", path: "/org/example/test") { value in
            received.withLock { $0.append(value) }
            arrived.signal()
        }
        let sent = DBusValue.tuple([
            .uint32(7), .string("holiday é"), .bool(true), .double(0.25), .int64(-5), .objectPath("/a/b_c"),
            .vardict([
                "uris": .array(elementType: "s", [.string("file:///x%20y")]), "folder": .byteString("/tmp/é"),
                "filters": .array(
                    elementType: "(sa(us))",
                    [
                        .tuple([
                            .string("Looks"), .array(elementType: "(us)", [.tuple([.uint32(0), .string("*.cube")])]),
                        ])
                    ]
                ),
                "empty": .array(elementType: "a{sv}", []),
            ]),
        ])
        try connection.emitSignal(path: "/org/example/test", interface: "org.example.Test", member: "Sent", sent)
        XCTAssertEqual(arrived.wait(timeout: .now() + 10), .success, "the signal came back")
        let value = try XCTUnwrap(received.withLock { $0.first })
        XCTAssertEqual(value.typeString, "(usbdxoa{sv})")
        XCTAssertEqual(value.elements.count, 7)
        XCTAssertEqual(Array(value.elements.prefix(6)), Array(sent.elements.prefix(6)))
        let options = value.elements[6].dictionary
        XCTAssertEqual(options["uris"]?.elements.first?.string, "file:///x%20y")
        XCTAssertEqual(options["folder"]?.byteStringText, "/tmp/é")
        XCTAssertEqual(options["filters"], sent.elements[6].dictionary["filters"])
        XCTAssertEqual(options["empty"]?.elements, [])
    }

    func testACallAnswersAndAMissingServiceIsNamed() throws {
        let bus = try PrivateSessionBus(self)
        let connection = try DBusConnection(address: bus.address, timeoutMilliseconds: 5000)
        defer { connection.close() }
        let owner = try connection.call(
            "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
            .tuple([.string(connection.uniqueName)]), timeoutMilliseconds: 5000)
        XCTAssertEqual(owner.elements.first?.string, connection.uniqueName)

        XCTAssertThrowsError(
            try connection.property(
                "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                "org.freedesktop.portal.FileChooser",
                "version", timeoutMilliseconds: 5000)
        ) { error in
            let failure = error as? DBusError
            XCTAssertEqual(failure?.kind, .remote)
            XCTAssertEqual(failure?.name, "org.freedesktop.DBus.Error.ServiceUnknown")
            XCTAssertEqual(failure?.isMissingService, true)
        }
        XCTAssertEqual(
            connection.portalRequestPath(token: "t1"),
            "/org/freedesktop/portal/desktop/request/"
                + connection.uniqueName.dropFirst().replacingOccurrences(of: ".", with: "_") + "/t1")
    }

    func testNoBusIsNoBus() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        XCTAssertThrowsError(
            try DBusConnection(address: "unix:path=\(folder.path)/none", timeoutMilliseconds: 5000)
        ) { error in
            XCTAssertEqual((error as? DBusError)?.kind, .noBus)
        }
        XCTAssertNil(DBusConnection.sessionAddress(["XDG_RUNTIME_DIR": folder.path]))
        XCTAssertEqual(DBusConnection.sessionAddress(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"]), "unix:path=/x")
        XCTAssertThrowsError(try DBusConnection.session(environment: [:], timeoutMilliseconds: 100)) { error in
            XCTAssertEqual((error as? DBusError)?.kind, .noBus)
        }
    }

    /// A socket that accepts but never authenticates (a listening socket nobody serves) cannot hang the connect.
    func testASilentSocketTimesOut() throws {
        let folder = try TestEnvironment.temporaryDirectory(self)
        let path = folder.appendingPathComponent("silent").path
        let server = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(server, 0)
        defer { close(server) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(server, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        XCTAssertEqual(bound, 0)
        XCTAssertEqual(listen(server, 4), 0)
        XCTAssertThrowsError(try DBusConnection(address: "unix:path=\(path)", timeoutMilliseconds: 300)) { error in
            XCTAssertEqual((error as? DBusError)?.kind, .timedOut, "\(error)")
        }
    }
}
