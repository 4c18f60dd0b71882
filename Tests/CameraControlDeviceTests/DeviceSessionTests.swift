import CameraControlDevice
import CameraControlEmbedded
import CameraControlRPC
import CameraControlTestSupport
import CameraControlTransport
import CameraControlWire
import Foundation
import Testing

/// An in-process firmware device behind an in-memory transport, in lockstep with a manual clock, so the
/// async device session runs against the real C core in virtual time (no pty, no sleeps, no wall clock).
///
/// A pump task repeats one step: it lets the host's tasks run (yielding until every task the last step
/// woke on the clock sleeps again), advances the clock and the device by the same `step`, and hands the
/// device's output to the host. The host's bytes go to the device as they arrive. The bridge knows
/// nothing of the protocol: it only moves bytes and time, so deadlines, retries and heartbeats happen in
/// virtual time whatever the host's rules are.
final class EmbeddedDeviceBridge: Sendable {
    let device: EmbeddedDevice
    /// The virtual time of the host and the device: give it to ``DeviceSession/connect(transport:clock:hostName:attempts:)``.
    let clock: ManualClock
    /// The host's end of the link.
    let host: InMemoryTransport
    private let pump: Task<Void, Never>

    init(seed: UInt64 = 5, clock: ManualClock = ManualClock(), step: Duration = .milliseconds(1)) {
        let (host, deviceEnd) = InMemoryTransport.makePair()
        let device = EmbeddedDevice(seed: seed)
        self.device = device
        self.clock = clock
        self.host = host
        let stepMicros = UInt64(step.components.seconds) * 1_000_000 + UInt64(step.components.attoseconds / 1_000_000_000_000)
        pump = Task.detached {
            let reader = Task {
                while !Task.isCancelled {
                    guard let bytes = try? await deviceEnd.receive() else { return }
                    device.write(bytes)
                }
            }
            defer { reader.cancel() }
            while !Task.isCancelled {
                let sleeping = clock.sleeperCount
                clock.advance(by: step)
                device.advance(byMicros: stepMicros)
                let out = device.read()
                if !out.isEmpty {
                    do { try await deviceEnd.send(out) } catch { return }
                }
                // Let the host catch up: a few turns always, more while the tasks the step woke are awake.
                var turns = 0
                while turns < 4 || (clock.sleeperCount < sleeping && turns < 256) {
                    await Task.yield()
                    turns += 1
                }
            }
        }
    }

    /// Stops the pump and closes the link (the host sees its transport end).
    func stop() {
        pump.cancel()
        host.close()
    }
}

@Suite("DeviceSession against the real firmware core")
struct DeviceSessionTests {
    @Test func connectsAndServesEveryKindOfCall() async throws {
        let bridge = EmbeddedDeviceBridge()
        defer { bridge.stop() }
        let session = try await DeviceSession.connect(transport: bridge.host, clock: bridge.clock, hostName: "device-tests")
        #expect(session.info.identity.model.isEmpty == false)
        #expect(session.info.capabilities.isSimulator)
        #expect(try await session.ping([0, 1, 2, 0xFF]).payload == [0, 1, 2, 0xFF])

        var config = try await session.config()
        config.sampleRateHertz = 123  // not one of the announced rates
        let refused = await #expect(throws: RPCError.self) { try await session.configure(config) }
        #expect(refused?.code == .invalidArgument)
        #expect(try await session.config().sampleRateHertz == 1000)

        try await session.playHaptic(.detent)
        let playedDetent = bridge.device.feedbackLog.contains { record in
            if case .haptic(let pattern, _) = record.kind { return pattern == HapticPattern.detent.rawValue }
            return false
        }
        #expect(playedDetent)
        let counters = try await session.counters()
        #expect(counters.framesReceived >= 5)
        await session.close()
        let closed = await #expect(throws: RPCError.self) { try await session.ping() }
        #expect(closed?.code == .unavailable)
    }

    @Test func aSilentPeerIsAHandshakeFailureNotAHang() async throws {
        let (host, deviceEnd) = InMemoryTransport.makePair()
        let silentDevice = FakeDevice(transport: deviceEnd) { _ in [] }  // reads and records, never answers
        await silentDevice.start()
        let clock = ManualClock()
        let connecting = Task { () -> DeviceError? in
            do {
                _ = try await DeviceSession.connect(transport: host, clock: clock, attempts: 1)
                return nil
            } catch let error as DeviceError {
                return error
            } catch {
                return nil
            }
        }
        let error = await clock.advance(by: .milliseconds(10), until: connecting)
        #expect(error?.code == .handshakeFailed)
        #expect(error?.rpcError?.code == .deadlineExceeded)
        #expect(await silentDevice.received.contains { $0.type == .request && $0.address == MethodID.deviceHandshake })
    }
}

@Suite("DeviceConnection")
struct DeviceConnectionTests {
    @Test func connectFailuresAreReportedAndTheActivityEndsWhenAttemptsRunOut() async throws {
        let connection = DeviceConnection(retryDelay: .milliseconds(1), maxConsecutiveFailures: 3) {
            () async throws(DeviceError) -> DeviceSession in
            throw DeviceError(.transport, "no such port")
        }
        await connection.start()
        var failures = 0
        for await activity in connection.activity {
            if case .connectFailed(let error) = activity {
                #expect(error.code == .transport)
                failures += 1
            } else {
                Issue.record("unexpected \(activity)")
            }
        }
        #expect(failures == 3)
    }

    @Test func aLostSessionIsReportedThenANewOneOpens() async throws {
        let bridges = Locked([EmbeddedDeviceBridge]())
        let connection = DeviceConnection(retryDelay: .milliseconds(10), maxConsecutiveFailures: 5) {
            () async throws(DeviceError) -> DeviceSession in
            let bridge = EmbeddedDeviceBridge()
            bridges.mutate { $0.append(bridge) }
            return try await DeviceSession.connect(transport: bridge.host, clock: bridge.clock)
        }
        await connection.start()
        var log: [String] = []
        for await activity in connection.activity {
            switch activity {
            case .connected:
                log.append("connected")
                if log.filter({ $0 == "connected" }).count == 1 {
                    bridges.mutate { $0.first?.stop() }  // unplug the first device
                } else {
                    await connection.stop()
                }
            case .disconnected(let error):
                log.append("disconnected \(error.code)")
            case .connectFailed(let error):
                log.append("failed \(error.code)")
            case .input:
                break
            }
        }
        bridges.mutate { $0.forEach { $0.stop() } }
        #expect(log == ["connected", "disconnected UNAVAILABLE", "connected"])
    }
}

/// A value behind a lock.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&value) } }
}
