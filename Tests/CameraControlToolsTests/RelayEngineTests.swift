import CameraControlPosixTransport
import CameraControlTestSupport
import CameraControlTools
import CameraControlTransport
import CameraControlWire
import Testing

/// `camctl relay`'s engine: both sides on one event loop, or neither.
@Suite("Relay engine")
struct RelayEngineTests {
    /// A delegate that only notes the end of its link.
    final class Ending: EventLoopDelegate, Sendable {
        func eventLoopReceived(_ bytes: UnsafeRawBufferPointer) {}
        func eventLoopTimerFired() {}
        func eventLoopEnded(_ error: TransportError) {}
    }

    @Test("a side that cannot run on the relay's loop: start throws .openFailed and closes both sides")
    func sideRefused() async throws {
        let loop = try PollEventLoop(name: "relay-engine-test")
        defer { loop.shutdown() }
        let (host, hostPeer) = InMemoryTransport.makePair()
        let (device, devicePeer) = InMemoryTransport.makePair()
        // An end already driven by an event loop refuses a second one.
        #expect(device.startEventLoop(delegate: Ending(), on: nil) != nil)
        let engine = RelayEngine(faults: LinkFaults(), log: RelayLog(quiet: true), loop: loop, linkPath: nil, linkTarget: nil)
        let error = #expect(throws: TransportError.self) { try engine.start(host: host, device: device) }
        #expect(error?.code == .openFailed)
        // Neither side is left open: each peer hears its end (the host side had started on the loop first).
        for peer in [hostPeer, devicePeer] {
            let ended = await #expect(throws: TransportError.self) {
                try await withTimeout(.seconds(10), "the peer hears the end") { try await peer.receive() }
            }
            #expect(ended?.code == .closed)
        }
    }
}
