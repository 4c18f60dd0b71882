import CameraControlDevice
import CameraControlEmbedded
import CameraControlRPC
import CameraControlTransport
import CameraControlWire
import Foundation
import Testing

/// Runs an in-process firmware device behind an in-memory transport in (roughly) real time, so the
/// async device session can be tested against the real C core without a pty.
final class EmbeddedDeviceBridge: Sendable {
    let device = EmbeddedDevice(seed: 5)
    let host: InMemoryTransport
    private let pump: Task<Void, Never>

    init() {
        let (host, deviceEnd) = InMemoryTransport.makePair()
        self.host = host
        let device = self.device
        pump = Task.detached {
            let reader = Task {
                while !Task.isCancelled {
                    guard let bytes = try? await deviceEnd.receive() else { return }
                    device.write(bytes)
                }
            }
            defer { reader.cancel() }
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(1))
                device.advance(byMicros: 1_000)
                let out = device.read()
                if !out.isEmpty {
                    do { try await deviceEnd.send(out) } catch { return }
                }
            }
        }
    }

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
        let session = try await DeviceSession.connect(transport: bridge.host, hostName: "device-tests")
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
        let (host, silentDevice) = InMemoryTransport.makePair()  // the device end is open but never answers
        let error = await #expect(throws: DeviceError.self) {
            try await DeviceSession.connect(transport: host, attempts: 1, deadline: .milliseconds(300))
        }
        withExtendedLifetime(silentDevice) {}
        #expect(error?.code == .handshakeFailed)
        #expect(error?.rpcError?.code == .deadlineExceeded)
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
            return try await DeviceSession.connect(transport: bridge.host)
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
