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
    /// A device that answers every handshake, Ping and GetCounters (its uptime `uptimeMicros`: by default an
    /// hour, no restart), and sends nothing else (no heartbeats). RestartNoteTests' device too.
    static func fakeDevice(uptimeMicros: UInt64 = 3_600_000_000) -> FakeDevice.Responder {
        { packet in
            guard packet.type == .request else { return [] }
            let version = ProtocolVersion(major: 1, minor: 2)
            switch packet.address {
            case MethodID.deviceHandshake:
                let payload = HandshakeResponse(
                    deviceVersion: version, negotiatedVersion: version, identity: DeviceIdentity(model: "fake"),
                    capabilities: Capabilities(maxFrameBytes: 1024, maxConcurrentCalls: 4, heartbeatIntervalMillis: 50)
                ).serializedBytes()
                return [Packet(type: .response, callID: packet.callID, payload: payload)]
            case MethodID.devicePing:
                return [Packet(type: .response, callID: packet.callID, payload: PingResponse(deviceTimeMicros: 1).serializedBytes())]
            case MethodID.diagnosticsGetCounters:  // asked after each failed run
                return [Packet(type: .response, callID: packet.callID, payload: Counters(uptimeMicros: uptimeMicros).serializedBytes())]
            default:
                return []
            }
        }
    }

    /// The wire bytes of the device's "handshake first": what a case that lost its session shows as seen.
    static let noSession = try! PacketEncoder.encode(
        Packet(type: .error, callID: 9, status: .failedPrecondition, payload: Array("handshake first".utf8)))

    /// Runs one case whose every run fails as a lost session. The runs numbered in `stalled` first leave the
    /// probe silent for 4 heartbeat intervals (200 ms), as a starved host would; those in `deviceStalled` hear
    /// nothing from the device as long while the probe keeps sending (a device that froze). Returns the
    /// result and how many times the body ran.
    static func run(stalled: Set<Int>, deviceStalled: Set<Int> = []) async -> (CaseResult, Int) {
        let (host, device) = InMemoryTransport.makePair()
        let fake = FakeDevice(transport: device, respond: fakeDevice())
        await fake.start()
        let count = Counter()
        let testCase = ConformanceCase("lost-session", "PROTOCOL.md §8", "every run loses its session") { c in
            let run = count.next()
            if stalled.contains(run) {
                await c.probe.setHeartbeatsHeld(true)
                try await Task.sleep(for: .milliseconds(200))
                await c.probe.setHeartbeatsHeld(false)
                try await c.probe.send(Packet(type: .heartbeat, callID: 0))  // the gap is measured when it ends
            }
            if deviceStalled.contains(run) {
                try await Task.sleep(for: .milliseconds(200))  // the probe's heartbeats go on; the device sends nothing
                try await c.probe.ping()  // its answer ends the device's silence, which is then measured
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

    @Test("a device that froze earns a second run, never a third: only the probe's own stall does")
    func aFrozenDeviceGetsNoThirdRun() async throws {
        let (frozen, frozenRuns) = await Self.run(stalled: [], deviceStalled: [1, 2, 3])
        #expect(frozen.runs == 2 && frozenRuns == 2)
        let (mixed, mixedRuns) = await Self.run(stalled: [1], deviceStalled: [2, 3])
        #expect(mixed.runs == 2 && mixedRuns == 2)
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
