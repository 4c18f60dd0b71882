import CameraControlCapture
import CameraControlDevice
import CameraControlHost
import Foundation

/// `camctl monitor PORT`: input events, gestures and capture events as they arrive. Rides through an
/// unplug: the press in flight is cancelled, and when the device is back (the same path: a serial port,
/// or `camctl-sim --link PATH` restarted) the monitor carries on with the new session. With
/// `--scenario FILE` it plays a scenario through its own session (a simulator, or any device with
/// `SimulatorService`), so nobody needs a second host on the port.
enum Monitor {
    static func run(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: ["seconds", "scenario"], switches: ["no-reconnect"])
        let port = try args.required(0, "PORT")
        var seconds = try args.integer("seconds", default: 0)
        let scenarioText = try args.value("scenario").map { try String(contentsOfFile: $0, encoding: .utf8) }
        let reconnects = !args.flag("no-reconnect")
        // The first connect must work (a typo in PORT is an error, not an endless retry).
        let host = try await CameraControlHost.connect(
            to: port, hostName: "camctl monitor", configuration: .init(reconnects: reconnects))
        let printer = EventPrinter()
        printer.offsetSource = { host.clockOffsetMicros }
        let interaction = CaptureEventInteraction(
            soundPlayer: host,
            primary: { printer.capture($0, role: "primary") },
            secondary: { printer.capture($0, role: "secondary") })
        if let info = await host.deviceInfo {
            print(info.summary)
            print("")
        }
        await host.onConnect { info in
            print(info.summary)
            print("")
        }
        await host.observe { effect in
            switch effect {
            case .connected:
                printer.resetOrigin()
            case .deviceLost:
                printer.note(reconnects ? "device lost; waiting for \(port) to come back…" : "device lost")
            default:
                printer.effect(effect)
            }
        }
        await host.attach(interaction)
        interaction.setSessionRunning(true)

        if let scenarioText, let session = await host.session {
            let played = try await session.runScenario(Demo.steps(of: scenarioText))
            printer.note(String(format: "scenario: %u steps, %.1f s", played.steps, Double(played.durationMicros) / 1e6))
            if seconds == 0 { seconds = Int((played.durationMicros + 999_999) / 1_000_000) + 1 }
        }
        if seconds > 0 {
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                await host.stop()
            }
        }
        await host.run()
        if !reconnects, let lost = await host.lastDisconnect {
            throw DeviceError(.closed, "the device went away: \(lost)")
        }
    }
}
