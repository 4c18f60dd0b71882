import CameraControlPosixTransport
import CameraControlSerialTransport
import CameraControlTestSupport
import CameraControlTransport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The local socket `camctl serve` listens on and apps attach to (docs/CAPTURE.md, "Apps attached to camctl serve").
@Suite("LocalSocketTransport and LocalSocketListener")
struct LocalSocketTransportTests {
    @Test("an app's connection and the service's accepted one carry bytes both ways; the service knows the app's process")
    func bytesBothWays() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/serve.sock"
        let listener = try LocalSocketListener(path: path)
        defer { listener.close() }
        // Transports.open takes a socket for a port, as every tool and app does with a path.
        let app = try Transports.open(path: path)
        defer { app.close() }
        #expect(app is LocalSocketTransport)
        var accepted = listener.connections.makeAsyncIterator()
        let service = try #require(await accepted.next())
        defer { service.close() }
        #expect(service.peerProcessID == getpid())

        try await app.send([1, 2, 3, 0])
        var heard: [UInt8] = []
        while heard.count < 4 { heard += try await service.receive() }
        #expect(heard == [1, 2, 3, 0])
        try await service.send([9, 0])
        #expect(try await app.receive() == [9, 0])

        // The service ends the connection: the app's receive ends with `closed`, and a send cannot raise SIGPIPE.
        service.close()
        await #expect(throws: TransportError.self) {
            while true { _ = try await app.receive() }
        }
        let late = await #expect(throws: TransportError.self) {
            for _ in 0..<4 { try await app.send([UInt8](repeating: 7, count: 65_536)) }
        }
        #expect(late?.code == .closed || late?.code == .io)
    }

    @Test("isPeerClosed: false while the app's end is open (bytes waiting unread), true once the app closed it or the service did")
    func peerClosed() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/serve.sock"
        let listener = try LocalSocketListener(path: path)
        defer { listener.close() }
        var accepted = listener.connections.makeAsyncIterator()
        for closedBy in ["app", "service"] {
            let app = try LocalSocketTransport(connectingTo: path)
            let service = try #require(await accepted.next())
            try await app.send([1, 2, 3, 0])  // never read: a parked connection's handshake
            #expect(!service.isPeerClosed, "\(closedBy)")
            if closedBy == "app" { app.close() } else { service.close() }
            // A bound against a hang, not a timing: a closed socket's end shows at once.
            #expect(await eventually(within: .seconds(60)) { service.isPeerClosed }, "closed by the \(closedBy)")
            app.close()
            service.close()
        }
    }

    @Test("a second listener at a live socket is refused (in use); a socket file nobody listens at is replaced")
    func liveAndStaleSockets() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/serve.sock"
        let first = try LocalSocketListener(path: path)
        let refused = #expect(throws: TransportError.self) { try LocalSocketListener(path: path) }
        #expect(refused?.code == .inUse, "\(String(describing: refused))")
        first.close()
        #expect(!FileManager.default.fileExists(atPath: path), "close removes the socket file")

        // A socket file left behind by a service that was killed: bound, never listened at, closed.
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes.prefix(raw.count - 1))
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        close(stale)
        let connectToStale = #expect(throws: TransportError.self) { try LocalSocketTransport(connectingTo: path) }
        #expect(connectToStale?.message.contains("is camctl serve running?") == true, "\(String(describing: connectToStale))")
        let second = try LocalSocketListener(path: path)
        second.close()
    }

    @Test("connecting where nothing is: notFound, with the path")
    func nothingThere() {
        let error = #expect(throws: TransportError.self) { try LocalSocketTransport(connectingTo: "/nonexistent/serve.sock") }
        #expect(error?.code == .notFound)
        #expect(error?.message.contains("/nonexistent/serve.sock") == true)
    }
}
