import CameraControlTestSupport
import CameraControlTransport
import CameraControlWire
import Synchronization
import Testing

@testable import CameraControlConformance

/// A case that changes the device's configuration or settings and fails half-way leaves them changed; the
/// suite puts back what it read before the case (ConformanceSuite.putBack), so the next case, the next run and
/// the user meet the device as it was.
@Suite("The suite puts back what a failed case changed")
struct PutBackTests {
    /// A device that serves GetConfig, Configure, GetSettings and SetSettings from one state, which
    /// `frozen` makes it keep (a device that ignores Configure and SetSettings while answering them).
    final class Device: Sendable {
        let state = Mutex(ConformanceSuite.DeviceState(config: Config(sampleRateHertz: 1_000), settings: Settings(cameraControl: .on)))
        let frozen = Mutex(false)
        /// How many times GetConfig was asked.
        let configReads = Mutex(0)

        var responder: FakeDevice.Responder {
            { [self] packet in
                guard packet.type == .request else { return [] }
                let version = ProtocolVersion(major: 1, minor: 2)
                func answer(_ message: some WireMessage) -> [Packet] {
                    [Packet(type: .response, callID: packet.callID, payload: message.serializedBytes())]
                }
                let current = state.withLock { $0 }
                switch packet.address {
                case MethodID.deviceHandshake:
                    return answer(
                        HandshakeResponse(
                            deviceVersion: version, negotiatedVersion: version,
                            capabilities: Capabilities(maxFrameBytes: 1024, heartbeatIntervalMillis: 50, hasSettings: true)))
                case MethodID.configGetConfig:
                    configReads.withLock { $0 += 1 }
                    return answer(current.config)
                case MethodID.configConfigure:
                    let config = (try? ConfigureRequest(serializedBytes: packet.payload))?.config ?? Config()
                    if !frozen.withLock({ $0 }) { state.withLock { $0.config = config } }
                    return answer(config)
                case MethodID.configGetSettings:
                    return answer(SettingsResponse(settings: current.settings, origin: .volatile))
                case MethodID.configSetSettings:
                    let settings = (try? SetSettingsRequest(serializedBytes: packet.payload))?.settings ?? Settings()
                    if !frozen.withLock({ $0 }) { state.withLock { $0.settings = settings } }
                    return answer(SettingsResponse(settings: settings, origin: .volatile))
                case MethodID.diagnosticsGetCounters:
                    return answer(Counters(uptimeMicros: 3_600_000_000))
                default:
                    return []
                }
            }
        }
    }

    /// Runs one case that turns Camera Control off and changes the sample rate, then fails; `flagged` is its
    /// `changesDeviceState`. Returns the failure's message and the device's state after the run.
    static func run(flagged: Bool, frozenAfterCase: Bool = false) async throws -> (String, ConformanceSuite.DeviceState) {
        let (host, transport) = InMemoryTransport.makePair()
        let device = Device()
        let fake = FakeDevice(transport: transport, respond: device.responder)
        await fake.start()
        let testCase = ConformanceCase(
            "changes-then-fails", "PROTOCOL.md §7", "changes the state, then fails", changesDeviceState: flagged
        ) { c in
            _ = try await c.probe.call(
                .configSetSettings, SetSettingsRequest(settings: Settings(cameraControl: .off)).serializedBytes())
            _ = try await c.probe.call(.configConfigure, ConfigureRequest(config: Config(sampleRateHertz: 250)).serializedBytes())
            if frozenAfterCase { device.frozen.withLock { $0 = true } }
            throw ConformanceFailure("the case failed half-way", seen: [0x02, 0x11, 0x00])
        }
        let results = await ConformanceSuite.run([testCase], over: host)
        host.close()
        transport.close()
        guard case .fail(let failure) = results[0].outcome else {
            Issue.record("the case did not fail: \(results[0].outcome)")
            return ("", device.state.withLock { $0 })
        }
        return (failure.message, device.state.withLock { $0 })
    }

    @Test("a failed case that changed the settings and configuration: both are put back, and its failure says so")
    func putBack() async throws {
        let original = ConformanceSuite.DeviceState(config: Config(sampleRateHertz: 1_000), settings: Settings(cameraControl: .on))
        let (message, state) = try await Self.run(flagged: true)
        #expect(state == original, "\(state)")
        #expect(message == "the case failed half-way; the suite put back the configuration and settings the case had changed")
        // Without the flag the suite does not look: the device stays as the case left it.
        let (unflagged, left) = try await Self.run(flagged: false)
        #expect(left.settings?.cameraControl == .off && left.config.sampleRateHertz == 250, "\(left)")
        #expect(unflagged == "the case failed half-way")
    }

    @Test("a case run again after a stall starts from the device as it was, and leaves it so")
    func rerunStartsFromTheSavedState() async throws {
        let (host, transport) = InMemoryTransport.makePair()
        let device = Device()
        let fake = FakeDevice(transport: transport, respond: device.responder)
        await fake.start()
        let runs = Mutex(0)
        let seenBySecondRun = Mutex<SettingSwitch?>(nil)
        let testCase = ConformanceCase(
            "changes-then-stalls", "PROTOCOL.md §8", "changes the state, then loses its session once", changesDeviceState: true
        ) { c in
            let run = runs.withLock { count in
                count += 1
                return count
            }
            if run == 2 {
                let (_, reply) = try await c.probe.call(.configGetSettings, GetSettingsRequest().serializedBytes())
                let settings = try SettingsResponse(serializedBytes: reply?.packet?.payload ?? []).settings
                seenBySecondRun.withLock { $0 = settings?.cameraControl }
            }
            _ = try await c.probe.call(
                .configSetSettings, SetSettingsRequest(settings: Settings(cameraControl: .off)).serializedBytes())
            guard run == 1 else {
                // The case puts back what it changed when it passes.
                _ = try await c.probe.call(
                    .configSetSettings, SetSettingsRequest(settings: Settings(cameraControl: .on)).serializedBytes())
                return
            }
            // A starved host: the probe silent for four heartbeat intervals, then the session is gone.
            await c.probe.setHeartbeatsHeld(true)
            try await Task.sleep(for: .milliseconds(200))
            await c.probe.setHeartbeatsHeld(false)
            try await c.probe.send(Packet(type: .heartbeat, callID: 0))
            throw ConformanceFailure("the session was lost", seen: RerunPolicyTests.noSession)
        }
        let results = await ConformanceSuite.run([testCase], over: host)
        host.close()
        transport.close()
        #expect(results[0].runs == 2 && results[0].outcome.label == "PASS", "\(results[0])")
        #expect(seenBySecondRun.withLock { $0 } == .on, "the second run began with Camera Control as the first left it")
        #expect(device.state.withLock { $0.settings?.cameraControl } == .on)
    }

    @Test(
        "a case that changes the state but is skipped (its decision not enabled) costs no state read once a session told the capabilities"
    )
    func skippedCaseReadsNothing() async throws {
        let (host, transport) = InMemoryTransport.makePair()
        let device = Device()
        let fake = FakeDevice(transport: transport, respond: device.responder)
        await fake.start()
        let first = ConformanceCase("passes", "PROTOCOL.md §9", "a session, nothing else") { _ in }
        let flagged = ConformanceCase(
            "changes-if-run", "PROTOCOL.md §7", "would change the state", decision: "R99", changesDeviceState: true
        ) { c in
            _ = try await c.probe.call(.configConfigure, ConfigureRequest(config: Config(sampleRateHertz: 250)).serializedBytes())
        }
        let results = await ConformanceSuite.run([first, flagged], over: host, decisions: [])
        host.close()
        transport.close()
        #expect(results.map(\.outcome.label) == ["PASS", "SKIP"], "\(results)")
        #expect(device.configReads.withLock { $0 } == 0, "the skipped case's state was read before it")
        // Enabled, the same case is read around as before.
        let (host2, transport2) = InMemoryTransport.makePair()
        let fake2 = FakeDevice(transport: transport2, respond: device.responder)
        await fake2.start()
        let enabled = await ConformanceSuite.run([first, flagged], over: host2, decisions: ["R99"])
        host2.close()
        transport2.close()
        #expect(enabled.map(\.outcome.label) == ["PASS", "PASS"], "\(enabled)")
        #expect(device.configReads.withLock { $0 } == 1)
    }

    @Test("a device that will not take its state back: the failure says it is left changed")
    func notPutBack() async throws {
        let (message, state) = try await Self.run(flagged: true, frozenAfterCase: true)
        #expect(state.settings?.cameraControl == .off)
        #expect(message.hasSuffix("the case left the device's configuration or settings changed, and the suite could not put them back"))
    }
}
