import CameraControlDevice
import CameraControlTestSupport
import CameraControlTransport
import CameraControlWire
import Synchronization
import Testing

@testable import camctl

/// `ScenarioFiles.waitForScenarioEnd`, what `monitor`, `record` and `shoot` wait for before they stop "after
/// the scenario": a device that cannot say when its scenario ended (no `GetSimulatorStatus`, or the session
/// gone) is given the scenario's remaining duration, then the listening after it. The bounds checked are
/// lower bounds (a busy machine only makes the waits longer).
@Suite("camctl: the wait for a scenario's end")
struct ScenarioEndTests {
    /// How many times the device was asked for its status.
    final class Asked: Sendable {
        let count = Mutex(0)
    }

    /// A v1.1 device answering the handshake (no heartbeat) and pings; `GetSimulatorStatus` is refused
    /// UNIMPLEMENTED and counted in `statusAsked`.
    static func device(on transport: any ByteTransport, statusAsked: Asked) -> FakeDevice {
        FakeDevice(transport: transport) { packet in
            guard packet.type == .request else { return [] }
            let version = ProtocolVersion(major: 1, minor: 1)
            let ack = Packet.ack(sequence: 0, acking: packet.sequence)
            switch packet.address {
            case MethodID.deviceHandshake:
                let payload = HandshakeResponse(
                    deviceVersion: version, negotiatedVersion: version, identity: DeviceIdentity(model: "no status"),
                    capabilities: Capabilities(maxFrameBytes: 1024, maxConcurrentCalls: 4, heartbeatIntervalMillis: 0)
                ).serializedBytes()
                return [ack, Packet(type: .response, isReliable: true, callID: packet.callID, payload: payload)]
            case MethodID.simulatorGetSimulatorStatus:
                statusAsked.count.withLock { $0 += 1 }
                return [ack, Packet(type: .error, isReliable: true, callID: packet.callID, status: .unimplemented)]
            default:
                return [ack, Packet(type: .response, isReliable: true, callID: packet.callID, payload: [])]
            }
        }
    }

    static let listen = Duration.microseconds(Int64(ScenarioFiles.listenAfterScenarioMicros))

    @Test("a device without GetSimulatorStatus: asked once the scenario is nearly over, refused, and given the rest of its duration")
    func noStatus() async throws {
        let (hostEnd, deviceEnd) = InMemoryTransport.makePair()
        let asked = Asked()
        let device = Self.device(on: deviceEnd, statusAsked: asked)
        await device.start()
        let session = try await DeviceSession.connect(transport: hostEnd, hostName: "scenario end", deadline: .seconds(60))
        defer { Task { await session.close() } }
        let remaining: UInt64 = 1_500_000
        let start = ContinuousClock.now
        await ScenarioFiles.waitForScenarioEnd(on: session, remainingMicros: remaining)
        let waited = ContinuousClock.now - start
        #expect(asked.count.withLock { $0 } == 1, "the device was asked")
        #expect(waited >= .microseconds(Int64(remaining)) + Self.listen, "\(waited)")
    }

    @Test("the session gone before the wait: the scenario's remaining duration, then the listening after it")
    func sessionGone() async throws {
        let (hostEnd, deviceEnd) = InMemoryTransport.makePair()
        let asked = Asked()
        let device = Self.device(on: deviceEnd, statusAsked: asked)
        await device.start()
        let session = try await DeviceSession.connect(transport: hostEnd, hostName: "scenario end", deadline: .seconds(60))
        await session.close()
        let remaining: UInt64 = 2_000_000
        let start = ContinuousClock.now
        await ScenarioFiles.waitForScenarioEnd(on: session, remainingMicros: remaining)
        let waited = ContinuousClock.now - start
        #expect(asked.count.withLock { $0 } == 0, "a closed session asks nothing")
        #expect(waited >= .microseconds(Int64(remaining)) + Self.listen, "\(waited)")
    }
}
