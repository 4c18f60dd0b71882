import CameraControlTransport
import CameraControlWire
import Synchronization
import Testing

@testable import CameraControlConformance

/// The probe's handshake and the old session's packets (PROTOCOL.md §9, v1.2): a reliable packet the device sent
/// in its old session that reaches the probe while the handshake awaits its answer is neither acknowledged
/// (its `ACK`, reaching the device after the handshake, would free the new session's packet of that number)
/// nor counted as a packet of the new session.
@Suite("The probe's handshake and the old session's packets")
struct ProbeHandshakeTests {
    /// What the scripted device heard: each `ACK`'s number, and whether the new session's packet of the old
    /// packet's number had been sent when it arrived.
    final class Heard: Sendable {
        let acks = Mutex<[(number: UInt16, afterNewPacket: Bool)]>([])
    }

    /// The old session's packet in flight when the handshake arrives: a reliable stream message numbered 3.
    static let oldSequence: UInt16 = 3

    /// A device that, on the handshake, sends the old session's packet 3 first (sent before it read the
    /// handshake), then its `HandshakeResponse` (packet 0 of the new session), and answers each Ping with the
    /// next packet of the new session (1, 2, 3, …).
    private static func device(_ transport: InMemoryTransport, heard: Heard) -> Task<Void, Never> {
        Task {
            var decoder = FrameDecoder()
            var sequence: UInt16 = 0
            var newPacketSent = false
            func send(_ packet: Packet) async {
                var packet = packet
                packet.sequence = sequence
                sequence &+= 1
                if packet.sequence == oldSequence { newPacketSent = true }
                _ = try? await transport.send(try PacketEncoder.encode(packet))
            }
            while !Task.isCancelled {
                guard let bytes = try? await transport.receive() else { return }
                decoder.append(bytes)
                while let output = decoder.next() {
                    guard case .packet(let packet) = output else { continue }
                    if packet.type == .ack, packet.payload.count == 2 {
                        let number = UInt16(packet.payload[0]) | UInt16(packet.payload[1]) << 8
                        heard.acks.withLock { $0.append((number, newPacketSent)) }
                        continue
                    }
                    guard packet.type == .request, let method = packet.address else { continue }
                    switch method {
                    case .deviceHandshake:
                        var old = Packet(type: .streamMessage, isReliable: true, callID: 77, payload: [0x08, 0x01])
                        old.sequence = oldSequence
                        _ = try? await transport.send(try PacketEncoder.encode(old))
                        // The response (packet 0) and the new session's first stream message (packet 1), in one
                        // write: the message right behind the answer is the new session's.
                        let version = ProtocolVersion(major: 1, minor: 2)
                        let response = HandshakeResponse(
                            deviceVersion: version, negotiatedVersion: version,
                            capabilities: Capabilities(maxFrameBytes: 1024, heartbeatIntervalMillis: 50))
                        var answer = Packet(type: .response, isReliable: true, callID: packet.callID, payload: response.serializedBytes())
                        answer.sequence = 0
                        var first = Packet(type: .streamMessage, isReliable: true, callID: 78, payload: [0x08, 0x02])
                        first.sequence = 1
                        sequence = 2
                        _ = try? await transport.send(try PacketEncoder.encode(answer) + PacketEncoder.encode(first))
                    case .devicePing:
                        await send(
                            Packet(
                                type: .response, isReliable: true, callID: packet.callID,
                                payload: PingResponse().serializedBytes()))
                    default:
                        continue
                    }
                }
            }
        }
    }

    @Test("an old session's reliable packet that arrives during the handshake is not acknowledged, nor counted in the new session")
    func oldSessionPacketDuringTheHandshake() async throws {
        let (host, device) = InMemoryTransport.makePair()
        let heard = Heard()
        let probe = Probe(transport: host)
        await probe.start()
        let scripted = Self.device(device, heard: heard)
        defer {
            scripted.cancel()
            host.close()
            device.close()
        }
        let handshake = try await probe.handshake(minor: 2)
        #expect(await probe.reliableSeen == [0, 1])
        #expect(await Set(probe.ackSent.keys) == [0, 1])
        // The old packet stays in the inbox, marked: never an answer to what the probe sends in the new session.
        let inbox = await probe.inbox
        #expect(inbox.filter(\.ofEndedSession).map { $0.packet?.sequence } == [Self.oldSequence], "\(inbox)")
        // The new session's first message (call 78, right behind the answer; it may reach the inbox just after
        // the handshake returned) is not marked. Taken away, so that only the old packet waits.
        let first = await probe.next(within: .seconds(5)) { $0.packet?.callID == 78 }
        #expect(first != nil && first?.ofEndedSession == false, "\(String(describing: first))")
        let context = CaseContext(probe: probe, capabilities: Capabilities(), handshake: handshake, prompter: nil)
        let heartbeat = try await probe.send(Packet(type: .heartbeat, callID: 0))
        try await context.expectSilence(after: heartbeat, for: .milliseconds(20), "a heartbeat")
        // The new session's packets 2 (the barrier Ping's answer), 3 and 4: the new packet 3, acknowledged as such.
        for _ in 0..<2 { try await probe.ping() }
        #expect(await probe.reliableSeen == [0, 1, 2, 3, 4])
        try await Task.sleep(for: .milliseconds(50))
        await probe.stop()
        let acks = heard.acks.withLock { $0 }
        #expect(
            !acks.contains { $0.number == Self.oldSequence && !$0.afterNewPacket },
            "the probe acknowledged the old session's packet 3: \(acks)")
        #expect(acks.contains { $0.number == Self.oldSequence && $0.afterNewPacket }, "\(acks)")
        #expect(acks.contains { $0.number == 1 }, "the new session's packet 1, right behind the answer: \(acks)")
    }
}
