import CameraControlTransport
import CameraControlWire
import Testing

@testable import CameraControlConformance

/// `long-garbage-then-request` against a scripted device that ends its session under the garbage (it outlasted
/// the dead timeout, §8) and loses the Ping with the bytes it drops (R6).
@Suite("long-garbage-then-request")
struct LongGarbageCaseTests {
    /// A device on the other end of `transport`: it answers handshakes, Ping and GetCounters, and takes an
    /// undecodable frame for the garbage: the session ends, 15,000 bytes are dropped, the Ping after them with
    /// them. `countsOverruns` false is a device that drops them without counting (R6 forbids it).
    private static func device(_ transport: InMemoryTransport, countsOverruns: Bool) -> Task<Void, Never> {
        Task {
            var decoder = FrameDecoder()
            var session = false
            var overruns: UInt32 = 0
            var dropNextRequest = false
            var garbageSeen = false
            var sequence: UInt16 = 0
            func send(_ packet: Packet) async throws {
                var packet = packet
                packet.sequence = sequence
                sequence &+= 1
                try await transport.send(try PacketEncoder.encode(packet))
            }
            while !Task.isCancelled {
                guard let bytes = try? await transport.receive() else { return }
                decoder.append(bytes)
                while let output = decoder.next() {
                    guard case .packet(let request) = output else {
                        // The garbage (the first undecodable frame; a later one is only that): the session ended
                        // while it arrived, and the Ping went with the bytes.
                        guard !garbageSeen else { continue }
                        garbageSeen = true
                        session = false
                        overruns += countsOverruns ? 15_000 : 0
                        dropNextRequest = true
                        continue
                    }
                    guard request.type == .request, let method = request.address else { continue }
                    if dropNextRequest, method == .devicePing {
                        dropNextRequest = false
                        continue
                    }
                    let payload: [UInt8]
                    switch method {
                    case .deviceHandshake:
                        session = true
                        sequence = 0
                        var response = HandshakeResponse()
                        response.negotiatedVersion = ProtocolVersion(major: 1, minor: 2)
                        payload = response.serializedBytes()
                    case _ where !session:
                        try? await send(
                            Packet(
                                type: .error, isReliable: true, callID: request.callID, status: .failedPrecondition,
                                payload: Array("handshake first".utf8)))
                        continue
                    case .diagnosticsGetCounters:
                        payload = Counters(rxOverruns: overruns).serializedBytes()
                    case .devicePing:
                        payload = PingResponse().serializedBytes()
                    default:
                        continue
                    }
                    try? await send(Packet(type: .response, isReliable: true, callID: request.callID, payload: payload))
                }
            }
        }
    }

    private static func run(countsOverruns: Bool) async throws -> ConformanceFailure? {
        let (host, device) = InMemoryTransport.makePair()
        let probe = Probe(transport: host)
        await probe.start()
        let scripted = Self.device(device, countsOverruns: countsOverruns)
        defer {
            scripted.cancel()
            host.close()
            device.close()
        }
        let handshake = try await probe.handshake()
        let context = CaseContext(probe: probe, capabilities: Capabilities(), handshake: handshake, prompter: nil)
        let testCase = try #require(ConformanceSuite.named("long-garbage-then-request"))
        do {
            try await testCase.body(context)
            await probe.stop()
            return nil
        } catch let failure as ConformanceFailure {
            await probe.stop()
            return failure
        }
    }

    @Test("a device that ended the session under the garbage and counted the dropped bytes passes; one that did not count them fails")
    func sessionEndedUnderTheGarbage() async throws {
        let counted = try await Self.run(countsOverruns: true)
        #expect(counted == nil, "\(counted?.message ?? "")")
        let uncounted = try #require(try await Self.run(countsOverruns: false))
        #expect(uncounted.message.contains("rx_overruns grew by 0"), "\(uncounted.message)")
    }
}
