import CameraControlTestSupport
import CameraControlTransport
import CameraControlWire
import Synchronization
import Testing

@testable import CameraControlConformance

/// When the suite runs a case again (ConformanceSuite.maximumRuns): only after a run that lost its session
/// while a side was stalled, a third time only when the probe itself stalled again.
@Suite("A case that lost its session runs again only on a stall")
struct RerunPolicyTests {
    /// A device that answers every handshake and nothing else.
    @Sendable static func handshakes(_ packet: Packet) -> [Packet] {
        guard packet.type == .request, packet.address == MethodID.deviceHandshake else { return [] }
        let version = ProtocolVersion(major: 1, minor: 2)
        let payload = HandshakeResponse(
            deviceVersion: version, negotiatedVersion: version, identity: DeviceIdentity(model: "fake"),
            capabilities: Capabilities(maxFrameBytes: 1024, maxConcurrentCalls: 4, heartbeatIntervalMillis: 50)
        ).serializedBytes()
        return [Packet(type: .response, callID: packet.callID, payload: payload)]
    }

    /// The wire bytes of the device's "handshake first": what a case that lost its session shows as seen.
    static let noSession = try! PacketEncoder.encode(
        Packet(type: .error, callID: 9, status: .failedPrecondition, payload: Array("handshake first".utf8)))

    /// Runs one case whose every run fails as a lost session; the runs numbered in `stalled` first leave the
    /// probe silent for 4 heartbeat intervals (200 ms), as a starved host would. Returns the result and how
    /// many times the body ran.
    static func run(stalled: Set<Int>) async -> (CaseResult, Int) {
        let (host, device) = InMemoryTransport.makePair()
        let fake = FakeDevice(transport: device, respond: handshakes)
        await fake.start()
        let count = Counter()
        let testCase = ConformanceCase("lost-session", "PROTOCOL.md §8", "every run loses its session") { c in
            let run = count.next()
            if stalled.contains(run) {
                await c.probe.setHeartbeatsHeld(true)
                try? await Task.sleep(for: .milliseconds(200))
                await c.probe.setHeartbeatsHeld(false)
                try await c.probe.send(Packet(type: .heartbeat, callID: 0))  // the gap is measured when it ends
            }
            throw ConformanceFailure("the session was lost", seen: noSession)
        }
        let results = await ConformanceSuite.run([testCase], over: host)
        host.close()
        device.close()
        return (results[0], count.value)
    }

    @Test("no stall: one run; a stall in the first: two; in the first two: three, and never more")
    func runsAgainOnlyOnAStall() async throws {
        let (once, onceRuns) = await Self.run(stalled: [])
        #expect(once.runs == 1 && onceRuns == 1 && !once.retried)
        let (twice, twiceRuns) = await Self.run(stalled: [1])
        #expect(twice.runs == 2 && twiceRuns == 2 && twice.retried)
        let (thrice, thriceRuns) = await Self.run(stalled: [1, 2, 3])
        #expect(thrice.runs == ConformanceSuite.maximumRuns && thriceRuns == 3)
        if case .fail = thrice.outcome {} else { Issue.record("a case failing every run passed: \(thrice.outcome)") }
        #expect(ConformanceReport.human(thrice).contains("(run 3 times:"), "\(ConformanceReport.human(thrice))")
        #expect(ConformanceReport.json(thrice).contains("\"runs\":3"), "\(ConformanceReport.json(thrice))")
    }
}

/// A count shared with a case body.
private final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    /// The next number, from 1.
    func next() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }
}
