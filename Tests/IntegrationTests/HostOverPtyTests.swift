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
        // The scenario is sent once the host is connected (RunScenario on its session), not started by the
        // first handshake with a pause: early in the test run, with CPU-bound tests beside, connecting took
        // longer than a 2 s pause once and the click came before the host listened (no event at all).
        let clickAndHold = try String(contentsOf: scenarios.appendingPathComponent("click-and-hold.scenario"), encoding: .utf8)
        let first = try SimulatorProcess(seed: 71, linkPath: link)
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
        // Connected means the input stream is open: a short pause is the scenario's own start.
        let session = try #require(await host.session)
        _ = try await session.runScenario("pause 200ms\n" + clickAndHold)

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
