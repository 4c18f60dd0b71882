import CameraControlCapture
import CameraControlControls
import CameraControlDevice
import CameraControlRPC
import CameraControlTestSupport
import CameraControlTransport
import CameraControlWire
import Synchronization
import Testing

@testable import CameraControlHost

/// What an app does with a CameraControlHost around its run: the controls session, observers and effect
/// streams.
@Suite("CameraControlHost API")
struct HostAPITests {
    /// A device that answers the handshake with controls (`maxControls`) and pings; nothing else.
    static func controlsDevice(maxControls: UInt32) -> @Sendable (Packet) -> [Packet] {
        { packet in
            if packet.type == .heartbeat { return [Packet.heartbeat(sequence: 0)] }
            return answeringDevice(
                packet,
                capabilities: Capabilities(
                    maxFrameBytes: 1024, maxConcurrentCalls: 4, maxControls: maxControls, supportsControls: true,
                    heartbeatIntervalMillis: 50))
        }
    }

    /// Opens a session with a fake device that offers `maxControls` controls.
    static func opener(maxControls: UInt32) -> CameraControlHost.Opener {
        { _ async throws(DeviceError) -> DeviceSession in
            let (hostEnd, deviceEnd) = InMemoryTransport.makePair()
            let device = FakeDevice(transport: deviceEnd, respond: controlsDevice(maxControls: maxControls))
            await device.start()
            // A bound against a hang, not a timing (the suite runs at once on two cores).
            return try await DeviceSession.connect(transport: hostEnd, hostName: "api", deadline: .seconds(60))
        }
    }

    static func slider(_ title: String) throws(ControlError) -> CaptureSlider {
        let slider = try CaptureSlider(title, symbolName: "dial.low", in: 0...1)
        slider.setActionQueue(InlineExecutor()) { _ in }
        return slider
    }

    @Test("makeControlsSession in connect's prepare: the app's controls are set up before the host runs, bound to the device")
    func controlsSessionInPrepare() async throws {
        let made = Mutex<Result<CaptureControlsSession, ControlError>?>(nil)
        let host = try await CameraControlHost.connect(
            configuration: .init(clockSamplesAtConnect: 1),
            prepare: { host in
                let result: Result<CaptureControlsSession, ControlError>
                do throws(ControlError) {
                    let session = try await host.makeControlsSession()
                    try session.addControl(try Self.slider("Level"))
                    result = .success(session)
                } catch {
                    result = .failure(error)
                }
                made.withLock { $0 = result }
            }, opener: Self.opener(maxControls: 3))
        let session = try #require(try made.withLock { $0 }?.get())
        #expect(session.capabilities == ControlsCapabilities(supportsControls: true, maxControls: 3))
        #expect(session.controls.map(\.localizedTitle) == ["Level"])
        await host.stop()
    }

    @Test("makeControlsSession before run(): the session takes controls and is bound when the device connects")
    func controlsSessionBeforeTheDevice() async throws {
        let host = CameraControlHost(configuration: .init(clockSamplesAtConnect: 1), opener: Self.opener(maxControls: 2))
        let session = try await host.makeControlsSession()
        #expect(session.capabilities == nil)
        try session.addControl(try Self.slider("Level"))
        await host.start()
        #expect(await host.waitUntilConnected(within: .seconds(60)))
        #expect(session.capabilities == ControlsCapabilities(supportsControls: true, maxControls: 2))
        #expect(session.maxControlsCount == 2)
        await host.stop()
    }

    @Test("a second makeControlsSession returns the host's one session; another overlay configuration is refused")
    func oneControlsSession() async throws {
        let host = CameraControlHost(opener: Self.opener(maxControls: 2))
        let first = try await host.makeControlsSession()
        try first.addControl(try Self.slider("Level"))
        let second = try await host.makeControlsSession()
        #expect(second === first)
        #expect(second.controls.map(\.localizedTitle) == ["Level"])

        var other = OverlayConfiguration()
        other.dismissAfterMicros += 1
        do {
            _ = try await host.makeControlsSession(overlay: other)
            Issue.record("a second session with another overlay configuration was made")
        } catch {
            #expect(error.code == .controlsSessionExists)
        }
        #expect(try await host.makeControlsSession() === first, "the refused call replaced nothing")
        await host.stop()
    }

    /// Something an observer's closure holds: it is released once the host lets go of the closure.
    final class Captured: Sendable {
        let calls = Atomic<Int>(0)
    }

    @Test("a cancelled observer or connect handler is not called, and the host lets go of it")
    func cancelledObservations() async throws {
        let host = CameraControlHost(configuration: .init(clockSamplesAtConnect: 1), opener: Self.opener(maxControls: 2))
        let counter = Captured()
        var captured: Captured? = Captured()
        weak let released = captured
        let heard = Mutex<[String]>([])
        do {
            let held = try #require(captured)
            let observer = await host.observe { _ in
                withExtendedLifetime(held) { _ = counter.calls.wrappingAdd(1, ordering: .relaxed) }
            }
            let handler = await host.onConnect { _ in
                withExtendedLifetime(held) { _ = counter.calls.wrappingAdd(1, ordering: .relaxed) }
            }
            observer.cancel()
            handler.cancel()
            #expect(observer.isCancelled && handler.isCancelled)
        }
        captured = nil
        await host.observe { effect in
            if case .connected = effect { heard.withLock { $0.append("observe") } }
        }
        await host.onConnect { _ in heard.withLock { $0.append("connect") } }
        await host.start()
        #expect(await host.waitUntilConnected(within: .seconds(60)))
        #expect(heard.withLock { $0 } == ["connect", "observe"])
        #expect(counter.calls.load(ordering: .relaxed) == 0)
        // A bound against a hang, not a timing: the host lets go on its loop after cancel().
        #expect(await eventually(within: .seconds(60)) { released == nil })
        #expect(await host.registrationCount == 2)
        await host.stop()
    }

    @Test("an effects stream whose consumer stopped (task cancelled, stream dropped) leaves the host")
    func abandonedEffectStreams() async {
        let host = CameraControlHost(opener: Self.opener(maxControls: 2))
        let iterated = await host.effects()
        let consumer = Task {
            for await _ in iterated {}
        }
        _ = await host.effects()  // dropped at once
        let kept = await host.effects()
        consumer.cancel()
        await consumer.value
        // A bound against a hang, not a timing: each leaves on the host's loop when it terminates.
        #expect(await eventually(within: .seconds(60)) { await host.registrationCount == 1 })
        await host.stop()
        var rest = kept.makeAsyncIterator()
        #expect(await rest.next() == nil, "the kept one finishes when the host stops")
    }
}
