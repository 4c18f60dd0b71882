import CameraControlTransport
import CameraControlWire
import Synchronization
import Testing

@testable import CameraControlConformance

/// The probe on a slow line: it learns the line's speed as the host does (``LineSpeedEstimate``), times what
/// it waits for and its heartbeats by it, and never takes a late answer to a case's call for a handshake's.
@Suite("Probe on a slow line")
struct ProbeLineTests {
    /// The device side of an in-memory pair: it reads and decodes every packet the probe sends, and notes
    /// when each arrived.
    final class DeviceSide: Sendable {
        let transport: InMemoryTransport
        private let received = Mutex<[(packet: Packet, at: ContinuousClock.Instant)]>([])
        private let reader = Mutex<Task<Void, Never>?>(nil)

        init(_ transport: InMemoryTransport) {
            self.transport = transport
        }

        /// Starts reading; it ends when the transport closes.
        func start() {
            let task = Task { [self] in
                var partial: [UInt8] = []
                while let bytes = try? await transport.receive() {
                    let now = ContinuousClock.now
                    for byte in bytes {
                        guard byte == 0 else {
                            partial.append(byte)
                            continue
                        }
                        defer { partial.removeAll() }
                        guard partial.count > 1, let body = try? COBS.decode(partial),
                            let packet = try? PacketDecoder.decode(unstuffed: body)
                        else { continue }
                        self.received.withLock { $0.append((packet, now)) }
                    }
                }
            }
            reader.withLock { $0 = task }
        }

        /// Every packet received so far, with its arrival.
        var packets: [(packet: Packet, at: ContinuousClock.Instant)] { received.withLock { $0 } }

        /// Waits up to `timeout` for a packet that `match` accepts; the first such, or nil.
        func first(within timeout: Duration, where match: (Packet) -> Bool) async -> (packet: Packet, at: ContinuousClock.Instant)? {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if let found = packets.first(where: { match($0.packet) }) { return found }
                try? await Task.sleep(for: .milliseconds(5))
            }
            return nil
        }

        func stop() { reader.withLock { $0?.cancel() } }
    }

    /// Sends one 328-byte frame from the device in pieces: 30 bytes, then 10 more pieces (the last of 28 bytes)
    /// 20 ms apart, so that its bytes after the first piece arrive at 1,490 bytes a second or slower.
    static func sendFrameInPieces(_ device: InMemoryTransport) async throws {
        let packet = Packet(type: .response, callID: 500, payload: [UInt8](repeating: 0x55, count: 318))
        let wire = try PacketEncoder.encode(packet)
        #expect(wire.count == 328)
        var offset = 0
        while offset < wire.count {
            let end = min(offset + 30, wire.count)
            try await device.send(Array(wire[offset..<end]))
            offset = end
            if offset < wire.count { try await Task.sleep(for: .milliseconds(20)) }
        }
    }

    @Test("a device frame that arrives in pieces teaches the probe its line; frames that arrive whole teach nothing")
    func learnsTheLine() async throws {
        let (host, device) = InMemoryTransport.makePair()
        let probe = Probe(transport: host)
        await probe.start()
        #expect(await probe.lineBytesPerSecond == nil)
        #expect(await probe.lineTime(bytes: 10_000) == .zero)
        // Whole frames, however long: no sample.
        try await device.send(try PacketEncoder.encode(Packet(type: .response, callID: 501, payload: [UInt8](repeating: 1, count: 600))))
        _ = await probe.next(within: .seconds(2))
        #expect(await probe.lineBytesPerSecond == nil)
        try await Self.sendFrameInPieces(device)
        #expect(await probe.next(within: .seconds(5)) { $0.packet?.callID == 500 } != nil)
        // 298 bytes after the first piece over 10 sleeps of at least 20 ms: 1,490 bytes a second or fewer,
        // timed from the probe's read of the first piece. A read of it late by up to one sleep (a busy machine)
        // times them over 9 sleeps: below 1,656. (A late sleep only makes it slower.)
        let rate = try #require(await probe.lineBytesPerSecond)
        #expect(rate > 0 && rate < 1_656, "\(rate) bytes a second")
        #expect(await probe.lineTime(bytes: rate) == .seconds(1))
        await probe.stop()
        host.close()
        device.close()
    }

    @Test("on a slow line a heartbeat waits until the probe's own bytes have left, not behind them")
    func heartbeatsWaitForTheLine() async throws {
        let (host, device) = InMemoryTransport.makePair(capacity: 1 << 20)
        let probe = Probe(transport: host)
        await probe.start()
        try await Self.sendFrameInPieces(device)
        _ = await probe.next(within: .seconds(5)) { $0.packet?.callID == 500 }
        let rate = try #require(await probe.lineBytesPerSecond)
        let side = DeviceSide(device)
        side.start()
        // 1.5 s of line (or more: the rate learnt is the line's or below it), then heartbeats on.
        let bytes = rate * 3 / 2
        try await probe.sendRaw([UInt8](repeating: 0x41, count: bytes) + [0])
        await probe.setHeartbeats(true)
        let sent = ContinuousClock.now
        // Heartbeats every 25 ms (half the default 50 ms interval) would have queued 60 behind the bytes; the
        // first comes two intervals before they have left (1.5 s after they were written, or later), and
        // others follow.
        let first = try #require(await side.first(within: .seconds(10)) { $0.type == .heartbeat })
        #expect(first.at - sent >= .milliseconds(1_300), "the first heartbeat after \(first.at - sent)")
        #expect(await side.first(within: .seconds(5)) { $0.type == .heartbeat && $0.sequence != first.packet.sequence } != nil)
        side.stop()
        await probe.stop()
        host.close()
        device.close()
    }

    @Test("a late answer to a case's one-byte call id is never taken for the next handshake's response")
    func lateAnswerIsNotTheHandshake() async throws {
        let (host, device) = InMemoryTransport.makePair()
        let probe = Probe(transport: host)
        await probe.start()
        // A case asks with a one-byte call id, as large-unary-max-frame does for frames of an exact size.
        let small = await probe.nextCallID() % 100 + 1
        let side = DeviceSide(device)
        side.start()
        let answering = Task {
            let handshake = try #require(await side.first(within: .seconds(5)) { $0.address == .deviceHandshake }).packet
            // The answer to the case's call, late on a slow line, reaches the probe first.
            try await device.send(
                try PacketEncoder.encode(Packet(type: .response, callID: small, payload: PingResponse(payload: [7, 7]).serializedBytes())))
            var response = HandshakeResponse()
            response.sessionID = 4_242
            try await device.send(
                try PacketEncoder.encode(
                    Packet(type: .response, isReliable: true, callID: handshake.callID, payload: response.serializedBytes())))
            return handshake.callID
        }
        let response = try await probe.handshake()
        let handshakeID = try await answering.value
        #expect(handshakeID != small)
        #expect(handshakeID >= Probe.firstCallID)
        #expect(response.sessionID == 4_242)
        side.stop()
        await probe.stop()
        host.close()
        device.close()
    }
}
