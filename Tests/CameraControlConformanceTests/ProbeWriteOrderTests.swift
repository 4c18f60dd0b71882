import CameraControlTransport
import CameraControlWire
import Synchronization
import Testing

@testable import CameraControlConformance

/// The probe's writes reach the line in the order they were made, whatever a transport's `send` suspends on.
/// A write awaited in the transport releases the probe's actor; before, a later write (the next handshake)
/// could reach the line before an earlier one (a heartbeat of the old session, numbered far ahead of the new
/// session's packets): the device's window then moved past the new numbers and it dropped every packet of the
/// new session as a duplicate, deaf with its session kept alive (the `long-garbage-then-request` failures
/// after `pipelined-burst`).
@Suite("The probe's writes keep their order")
struct ProbeWriteOrderTests {
    /// A transport whose first `send` waits until ``release()``; it records what reached it, in order. The wait
    /// stands for any suspension in a transport's `send`: calling a nonisolated async `send` from the probe's
    /// actor is one already (the hop off the actor), too short to order two writes reliably by hand.
    final class GatedTransport: ByteTransport, Sendable {
        let name = "gated"
        private let state = Mutex<(written: [[UInt8]], gate: CheckedContinuation<Void, Never>?, gated: Bool, held: Bool)>(
            ([], nil, true, false))

        var written: [[UInt8]] { state.withLock { $0.written } }
        var isHoldingFirst: Bool { state.withLock { $0.held } }

        func send(_ bytes: [UInt8]) async throws(TransportError) {
            let gated = state.withLock { state -> Bool in
                defer { state.gated = false }
                return state.gated
            }
            if gated {
                await withCheckedContinuation { continuation in
                    state.withLock {
                        $0.gate = continuation
                        $0.held = true
                    }
                }
            }
            state.withLock { $0.written.append(bytes) }
        }

        func release() {
            state.withLock { $0.gate }?.resume()
        }

        func receive() async throws(TransportError) -> [UInt8] {
            try? await Task.sleep(for: .seconds(3600))
            throw TransportError(code: .closed, message: "gated: closed")
        }

        func close() {}
    }

    @Test("a write made while an earlier one waits in the transport goes out after it")
    func laterWriteWaitsForTheEarlierOne() async throws {
        let transport = GatedTransport()
        let probe = Probe(transport: transport)
        let heartbeat = Task { try await probe.send(Packet(type: .heartbeat, callID: 0)) }
        while !transport.isHoldingFirst { await Task.yield() }
        let handshake = Task { try await probe.send(Packet(type: .request, callID: 9, address: .deviceHandshake)) }
        // Time for the second write to overtake the first, as it did.
        try await Task.sleep(for: .milliseconds(100))
        #expect(transport.written.isEmpty, "a write went out before the one waiting in the transport")
        transport.release()
        let first = try await heartbeat.value
        let second = try await handshake.value
        #expect(transport.written == [first, second])
    }
}
