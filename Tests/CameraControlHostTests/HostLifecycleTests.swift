import CameraControlCapture
import CameraControlDevice
import CameraControlHost
import CameraControlRPC
import CameraControlTestSupport
import CameraControlTransport
import CameraControlWire
import Synchronization
import Testing

/// CameraControlHost's life: run() owns its work, stop() ends it at any moment, before the start, while a
/// handshake runs, between reconnects, mid-session.
@Suite("CameraControlHost lifecycle")
struct HostLifecycleTests {
    /// How many times a host tried to open its device.
    final class Attempts: Sendable {
        let count = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
    }

    /// A host whose device is never there: every attempt fails at once (counted), retried every 20 ms.
    static func unpluggedHost(counting attempts: Attempts) -> CameraControlHost {
        CameraControlHost(configuration: .init(retryDelay: .milliseconds(20))) { _ async throws(DeviceError) -> DeviceSession in
            attempts.count.wrappingAdd(1, ordering: .relaxed)
            throw DeviceError(.transport, "unplugged")
        }
    }

    @Test("stop before start: the opener is never called, run() and waitUntilConnected() return at once")
    func stopBeforeStart() async {
        let opened = Atomic<Int>(0)
        let host = CameraControlHost { _ async throws(DeviceError) -> DeviceSession in
            opened.wrappingAdd(1, ordering: .relaxed)
            throw DeviceError(.closed, "never")
        }
        await host.stop()
        await host.start()
        await host.run()
        await host.waitUntilConnected()
        #expect(opened.load(ordering: .relaxed) == 0)
        #expect(await host.session == nil)
    }

    @Test("waitUntilConnected(within:): false when no device comes in time, and when the host stopped; the host runs on")
    func timedWaitForAConnection() async {
        let attempts = Attempts()
        let host = Self.unpluggedHost(counting: attempts)
        await host.start()
        #expect(await host.waitUntilConnected(within: .milliseconds(50)) == false)
        // Two timed waits at once end each at its own time; the host keeps trying meanwhile.
        async let short = host.waitUntilConnected(within: .milliseconds(30))
        async let long = host.waitUntilConnected(within: .milliseconds(120))
        #expect(await (short, long) == (false, false))
        #expect(await eventually(within: .seconds(60)) { attempts.value >= 2 })
        await host.stop()
        #expect(await host.waitUntilConnected(within: .seconds(60)) == false, "stopped: at once, false")

        // A device that answers: true once connected (within a bound against a hang, not a timing). It answers
        // the host's heartbeats too: a device silent after its handshake would have the link declared dead after
        // four intervals, and on a loaded machine the session could be gone again when the test looks at it.
        let answered = CameraControlHost(configuration: .init(clockSamplesAtConnect: 2)) { _ async throws(DeviceError) -> DeviceSession in
            let (hostEnd, deviceEnd) = InMemoryTransport.makePair()
            let device = FakeDevice(transport: deviceEnd) { packet in
                packet.type == .heartbeat ? [Packet(type: .heartbeat, callID: 0)] : answeringDevice(packet)
            }
            await device.start()
            return try await DeviceSession.connect(transport: hostEnd, hostName: "lifecycle", attempts: 1)
        }
        await answered.start()
        #expect(await answered.waitUntilConnected(within: .seconds(60)))
        // A stall of the whole process longer than the dead time may still end that session: the host connects again.
        #expect(await eventually(within: .seconds(60)) { await answered.session != nil })
        await answered.stop()
    }

    @Test("connect's prepare: an interaction attached there gets the press the device sends as the input stream opens")
    func prepareBeforeTheFirstSessionStarts() async throws {
        let began = Mutex<[InputSource]>([])
        let sessions = Atomic<Int>(0)
        let host = try await CameraControlHost.connect(configuration: .init(clockSamplesAtConnect: 2)) { host in
            let interaction = CaptureEventInteraction { event in
                if event.phase == .began { began.withLock { $0.append(event.source) } }
            }
            await host.attach(interaction)
            interaction.setSessionRunning(true)
        } opener: { _ async throws(DeviceError) -> DeviceSession in
            let (hostEnd, deviceEnd) = InMemoryTransport.makePair()
            // Only the first session presses. Its pings are answered only once its stream is open, after
            // its press: connect() cannot have returned before the press was handled. The device answers
            // the host's heartbeats, as §8 asks: a device that sent nothing while its pings were held
            // lost its first session to the 200 ms dead timeout when the stream opened late on a busy
            // machine, and with it the only press.
            let first = sessions.wrappingAdd(1, ordering: .relaxed).newValue == 1
            let heldPings = Mutex<[Packet]?>(first ? [] : nil)
            let device = FakeDevice(transport: deviceEnd) { packet in
                if packet.type == .heartbeat { return [Packet.heartbeat(sequence: 0)] }
                guard packet.type == .request else { return [] }
                if packet.address == MethodID.devicePing {
                    let held = heldPings.withLock { held -> Bool in
                        guard held != nil else { return false }
                        held?.append(packet)
                        return true
                    }
                    return held ? [Packet.ack(sequence: 0, acking: packet.sequence)] : answeringDevice(packet)
                }
                guard first, packet.address == MethodID.inputStreamInputEvents else { return answeringDevice(packet) }
                // The stream's confirmation and, with it, a press made as the stream opened.
                let press = InputEvent(
                    timestampMicros: 2_000, kind: .buttonDown, source: .volumeDown, eventNumber: 1, reliableEventNumber: 2)
                let pings = heldPings.withLock { held in
                    defer { held = nil }
                    return held ?? []
                }
                return [
                    Packet.ack(sequence: 0, acking: packet.sequence),
                    Packet(type: .response, isReliable: true, callID: packet.callID, payload: []),
                    Packet(type: .streamMessage, isReliable: true, callID: packet.callID, payload: press.serializedBytes()),
                ] + pings.flatMap { answeringDevice($0).dropFirst() }
            }
            await device.start()
            // A bound against a hang, not a timing (the whole suite runs at once on two cores).
            return try await DeviceSession.connect(transport: hostEnd, hostName: "lifecycle", deadline: .seconds(60))
        }
        // Attached after connect() returned, the interaction would have missed the first session's press,
        // and no later session presses: this fails after the bound.
        #expect(await eventually(within: .seconds(60)) { began.withLock { $0 } == [.volumeDown] })
        await host.stop()
    }

    /// Two apps starting together under `camctl serve`: serve closed the first one's connection during its
    /// handshake (the second sent it to the background), and connect() gave up at once ("no device answered").
    @Test("connect: a first open whose link ends during the handshake is opened again, as a reconnect")
    func firstOpenLostInItsHandshake() async throws {
        let attempts = Attempts()
        let host = try await CameraControlHost.connect(configuration: .init(retryDelay: .milliseconds(20), clockSamplesAtConnect: 2)) {
            _ async throws(DeviceError) -> DeviceSession in
            let (hostEnd, deviceEnd) = InMemoryTransport.makePair()
            let first = attempts.count.wrappingAdd(1, ordering: .relaxed).newValue == 1
            let device = FakeDevice(transport: deviceEnd) { packet in
                guard first else { return answeringDevice(packet) }
                deviceEnd.close()  // the handshake's request arrived: the link ends
                return []
            }
            await device.start()
            // A bound against a hang, not a timing.
            return try await DeviceSession.connect(transport: hostEnd, hostName: "lifecycle", deadline: .seconds(60))
        }
        #expect(attempts.value == 2)
        #expect(await host.connectionCount == 1)
        await host.stop()

        // Opened again, the device (camctl serve: one process, one app) refuses the handshake: connect fails
        // with that refusal at once, not after reconnectWithin with "did not come back".
        let refusing = Attempts()
        let refusal = DeviceError(
            .handshakeFailed, "ALREADY_EXISTS: pid 1 is attached already",
            rpcError: RPCError(code: .alreadyExists, message: "pid 1 is attached already"))
        await #expect(throws: refusal) {
            try await CameraControlHost.connect(configuration: .init(retryDelay: .milliseconds(20))) {
                _ async throws(DeviceError) -> DeviceSession in
                if refusing.count.wrappingAdd(1, ordering: .relaxed).newValue == 1 {
                    throw DeviceError(.handshakeFailed, "link ended", rpcError: RPCError(code: .unavailable, message: "link ended"))
                }
                throw refusal
            }
        }
        #expect(refusing.value >= 2)  // a retry may start before the host has stopped

        // A device that does not answer in time, and one that refuses the handshake: no second attempt.
        for failure in [
            DeviceError(.handshakeFailed, "no answer", rpcError: RPCError(code: .deadlineExceeded, message: "no answer")),
            DeviceError(.versionMismatch, "2.0"),
        ] {
            let tries = Attempts()
            await #expect(throws: failure) {
                try await CameraControlHost.connect(configuration: .init(retryDelay: .milliseconds(20))) {
                    _ async throws(DeviceError) -> DeviceSession in
                    tries.count.wrappingAdd(1, ordering: .relaxed)
                    throw failure
                }
            }
            #expect(tries.value == 1, "\(failure)")
        }
    }

    @Test("a device held for another host (camctl serve, this app in the background) is waited for past reconnectWithin")
    func busyDeviceWaitedFor() async throws {
        let busy = DeviceError(
            .handshakeFailed, "handshake failed: UNAVAILABLE: pid 1 has the device",
            rpcError: RPCError(code: .unavailable, message: "pid 1 has the device", isReportedByDevice: true))
        #expect(busy.isDeviceBusy && !busy.isRefusedHandshake && !busy.isUnansweredHandshake)
        let attempts = Attempts()
        // Busy from its first answer for longer than connect's wait for a device that went away (counted from
        // that answer: a loaded machine may start the first open late); then the other app leaves.
        let busyFor = CameraControlHost.reconnectWithin + .milliseconds(500)
        let firstAnswer = Mutex<ContinuousClock.Instant?>(nil)
        let host = try await CameraControlHost.connect(configuration: .init(retryDelay: .milliseconds(50), clockSamplesAtConnect: 2)) {
            _ async throws(DeviceError) -> DeviceSession in
            attempts.count.wrappingAdd(1, ordering: .relaxed)
            let busySince = firstAnswer.withLock { first in
                if first == nil { first = .now }
                return first ?? .now
            }
            if ContinuousClock.now - busySince < busyFor { throw busy }
            let (hostEnd, deviceEnd) = InMemoryTransport.makePair()
            let device = FakeDevice(transport: deviceEnd, respond: answeringDevice)
            await device.start()
            // A bound against a hang, not a timing.
            return try await DeviceSession.connect(transport: hostEnd, hostName: "lifecycle", deadline: .seconds(60))
        }
        let busySince = try #require(firstAnswer.withLock { $0 })
        #expect(ContinuousClock.now - busySince >= busyFor)
        #expect(attempts.value >= 2)
        // (Not connectionCount == 1: on a loaded machine the fake device's link may die and come back before
        // this line; the host connected, which `connect` returning says.)
        await host.stop()

        // A device that answered busy and then went quiet is given reconnectWithin from its last answer.
        let quietFrom = ContinuousClock.now + .seconds(1)
        await #expect(throws: DeviceError.self) {
            try await CameraControlHost.connect(configuration: .init(retryDelay: .milliseconds(50))) {
                _ async throws(DeviceError) -> DeviceSession in
                if ContinuousClock.now < quietFrom { throw busy }
                throw DeviceError(.handshakeFailed, "no answer", rpcError: RPCError(code: .deadlineExceeded, message: "no answer"))
            }
        }

        // Without reconnects (a one-shot tool) the answer is the failure, at once: it says who has the device.
        await #expect(throws: busy) {
            try await CameraControlHost.connect(configuration: .init(reconnects: false)) { _ async throws(DeviceError) -> DeviceSession in
                throw busy
            }
        }
    }

    @Test("stop during connect: the handshake in progress is cancelled and run() returns")
    func stopDuringConnect() async {
        let entered = Atomic<Int>(0)
        let host = CameraControlHost { _ async throws(DeviceError) -> DeviceSession in
            entered.wrappingAdd(1, ordering: .relaxed)
            // A device that never answers: waits until the host cancels the attempt.
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }  // no busy loop on the pool
            throw DeviceError(.handshakeFailed, "cancelled")
        }
        let running = Task { await host.run() }
        // A bound against a hang, not a timing: the whole suite starts at once, and on two cores a task can
        // wait tens of seconds for its first turn.
        #expect(await eventually(within: .seconds(60)) { entered.load(ordering: .relaxed) == 1 })
        await host.stop()
        await running.value
        #expect(entered.load(ordering: .relaxed) == 1, "no new attempt after stop()")
    }

    @Test("stop during reconnect: between failed attempts, run() returns and no attempt follows")
    func stopDuringReconnect() async throws {
        let attempts = Attempts()
        let host = Self.unpluggedHost(counting: attempts)
        await host.start()
        #expect(await eventually(within: .seconds(60)) { attempts.value >= 3 })
        await host.stop()
        let after = attempts.value
        try await Task.sleep(for: .milliseconds(100))
        #expect(attempts.value == after)
    }

    @Test("stopped 1,000 times at random moments of its life (connecting, connected, timing, reconnecting)")
    func stopAtRandomMoments() async throws {
        var random = SeededGenerator(seed: 1000)
        for round in 0..<1000 {
            let host = CameraControlHost(configuration: .init(retryDelay: .milliseconds(1), clockSamplesAtConnect: 2)) {
                _ async throws(DeviceError) -> DeviceSession in
                let (hostEnd, deviceEnd) = InMemoryTransport.makePair()
                let device = FakeDevice(transport: deviceEnd, respond: answeringDevice)
                await device.start()
                return try await DeviceSession.connect(transport: hostEnd, hostName: "lifecycle", attempts: 1)
            }
            let running = Task { await host.run() }
            let wait = Int.random(in: 0..<4000, using: &random)
            if wait > 0 { try await Task.sleep(for: .microseconds(wait)) }
            await host.stop()
            await running.value
            #expect(await host.session == nil, "round \(round)")
        }
    }
}

/// A v1.1 device in a few lines: answers the handshake, confirms streams, echoes pings, answers the rest
/// with an empty response.
@Sendable func answeringDevice(_ packet: Packet) -> [Packet] {
    answeringDevice(packet, capabilities: Capabilities(maxFrameBytes: 1024, maxConcurrentCalls: 4, heartbeatIntervalMillis: 50))
}

/// ``answeringDevice(_:)`` announcing `capabilities` in its handshake.
@Sendable func answeringDevice(_ packet: Packet, capabilities: Capabilities) -> [Packet] {
    guard packet.type == .request else { return [] }
    let version = ProtocolVersion(major: 1, minor: 1)
    let payload: [UInt8]
    switch packet.address {
    case MethodID.deviceHandshake:
        payload = HandshakeResponse(
            deviceVersion: version, negotiatedVersion: version, identity: DeviceIdentity(model: "fake"),
            capabilities: capabilities
        ).serializedBytes()
    case MethodID.devicePing:
        payload = PingResponse(deviceTimeMicros: 1000).serializedBytes()
    default:
        payload = []
    }
    return [
        Packet.ack(sequence: 0, acking: packet.sequence),
        Packet(type: .response, isReliable: true, callID: packet.callID, payload: payload),
    ]
}
