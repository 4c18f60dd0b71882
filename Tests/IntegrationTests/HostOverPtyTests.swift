import CameraControlCapture
import CameraControlHost
import CameraControlPorts
import CameraControlTestSupport
import Foundation
import Synchronization
import Testing

/// The public host pipeline over a real pty against camctl-sim, as an app uses it: connect, receive capture
/// events from a scenario, ride through an unplug (the press in flight cancelled, a new session), stop.
@Suite("CameraControlHost over a real pseudo-terminal", .serialized)
struct HostOverPtyTests {
    final class Events: Sendable {
        private let list = Mutex<[String]>([])
        func add(_ line: String) { list.withLock { $0.append(line) } }
        var all: [String] { list.withLock { $0 } }
    }

    @Test func captureEventsReconnectAndStop() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let link = folder + "/camera-control"
        let scenarios = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Firmware-sim/scenarios")
        // The scenario starts at the first handshake; the pause leaves the app time to attach its interaction
        // and start its session (under load, connect's clock round trips can take a while).
        let scenario = folder + "/late-click-and-hold.scenario"
        let clickAndHold = try String(contentsOf: scenarios.appendingPathComponent("click-and-hold.scenario"), encoding: .utf8)
        try ("pause 2s\n" + clickAndHold).write(toFile: scenario, atomically: true, encoding: .utf8)
        let first = try SimulatorProcess(seed: 71, linkPath: link, extraArguments: ["--scenario", scenario])
        defer { first.kill() }

        // The app attaches before the host starts, so no event can come before the interaction is there
        // (`connect(to:)` then `attach` leaves a window: on a loaded machine the connect's clock round trips
        // can outlast the scenario's pause). The first handshake has 3 s of real time; while the suite starts,
        // CPU-bound tests in virtual time can hold every thread of the cooperative pool for longer (2 on 2
        // cores): the host then simply tries again after its retry delay.
        let host = CameraControlHost(port: link, configuration: .init(retryDelay: .milliseconds(100)))
        let events = Events()
        let interaction = CaptureEventInteraction { event in events.add("\(event.phase.rawValue) \(event.source)") }
        await host.attach(interaction)
        interaction.setSessionRunning(true)
        let effects = await host.effects()
        await host.start()
        await host.waitUntilConnected()
        let gestures = Task {
            var count = 0
            for await effect in effects { if case .gesture = effect { count += 1 } }
            return count
        }
        #expect(await host.deviceInfo?.capabilities.isSimulator == true)
        #expect(host.clockOffsetMicros != nil, "the clock is estimated before connect returns")

        let captured = await eventually(within: .seconds(20)) { events.all.contains("ended camera-control") }
        #expect(captured, "no capture: \(events.all)")
        #expect(events.all.filter { $0 == "began camera-control" }.count == 1)

        // Unplug and plug back: a new session on the same path.
        first.stop()
        let second = try SimulatorProcess(seed: 72, linkPath: link)
        defer { second.kill() }
        let reconnected = await eventually(within: .seconds(20)) { await host.connectionCount >= 2 }
        #expect(reconnected, "the host did not reconnect")
        #expect(await host.lastDisconnect != nil)

        await host.stop()
        #expect(await host.session == nil)
        #expect(await gestures.value > 0, "the effects stream saw the gestures and finished at stop")
        // Every began closed exactly once.
        let began = events.all.filter { $0.hasPrefix("began") }.count
        let closed = events.all.filter { $0.hasPrefix("ended") || $0.hasPrefix("cancelled") }.count
        #expect(began == closed, "\(events.all)")
    }
}
