import CameraControlEmbedded
import CameraControlWire
import Testing

/// Same seed, scenario and host bytes: the same device bytes, every run.
@Suite("Determinism")
struct DeterminismTests {
    static let scenario = """
        full-click
        slide from=0.2 to=0.8 over=300ms force=1000mN
        button volume-down hold=80ms
        double-light-press
        remote-click
        """

    static func record(seed: UInt64) throws -> [UInt8] {
        var host = HostHarness(seed: seed)
        try host.connect()
        let callID = host.nextCallID
        host.nextCallID += 1
        try host.send(
            Packet(
                type: .request, callID: callID,
                address: MethodID(
                    service: MethodID.inputStreamRawSamples.service,
                    method: MethodID.inputStreamRawSamples.method),
                payload: StreamRawSamplesRequest(samplesPerBatch: 0).serializedBytes()))
        try host.play(scenario)
        #expect(host.decodeErrors.isEmpty)
        return host.wire
    }

    @Test("the same seed gives identical bytes")
    func sameSeed() throws {
        let first = try Self.record(seed: 99)
        let second = try Self.record(seed: 99)
        #expect(first.count > 1000)
        #expect(first == second)
    }

    @Test("another seed gives other bytes (noise differs)")
    func otherSeed() throws {
        #expect(try Self.record(seed: 99) != Self.record(seed: 100))
    }
}
