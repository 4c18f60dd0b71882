import CameraControlCapture
import CameraControlDevice
import CameraControlHost
import CameraControlWire
import Foundation

/// `camctl monitor PORT`: input events, gestures and capture events as they arrive. Rides through an
/// unplug: the press in flight is cancelled, and when the device is back (the same path: a serial port,
/// or `camctl-sim --link PATH` restarted) the monitor carries on with the new session. With
/// `--scenario FILE` it plays a scenario through its own session (a simulator, or any device with
/// `SimulatorService`), so nobody needs a second host on the port.
enum Monitor {
    static let command = Command(
        name: "monitor", summary: "print input events, gestures and capture events as they arrive",
        usage: "PORT [--seconds N] [--scenario FILE] [--no-reconnect] [--json]",
        details: """
            After an unplug it waits for the device to come back at the same path and carries on.
              --seconds N      stop after N seconds (default: run until Ctrl-C)
              --scenario FILE  play a scenario through this session first (a simulator); stops after it, unless --seconds
              --no-reconnect   exit (status 1) when the device goes away
              --json           one object per line: {"type": "input"|"gesture"|"capture"|"overlay"|"haptic"|"note", "tMs",
                               "deviceTimeUs", …} (README, "JSON")
            """,
        examples: [
            "monitor /dev/ttyACM0", "monitor auto --json | jq .", "monitor /tmp/camctl0 --scenario Firmware-sim/scenarios/buttons.scenario",
        ],
        run: run)

    static func run(_ argv: [String]) async throws {
        let args = try Arguments(
            argv, valued: ["seconds", "scenario"], switches: ["no-reconnect", "json"], positionals: ["PORT"])
        let port = try await Ports.resolve(try args.required(0, "PORT"))
        var seconds = try args.integer("seconds", default: 0)
        let scenario = try args.value("scenario").map { try ScenarioFiles.load($0) }
        let reconnects = !args.flag("no-reconnect")
        // The first connect must work (a typo in PORT is an error, not an endless retry).
        let host = try await CameraControlHost.connect(
            to: port, hostName: "camctl monitor", configuration: .init(reconnects: reconnects))
        let printer = EventPrinter(json: args.flag("json"))
        let json = args.flag("json")
        printer.offsetSource = { host.clockOffsetMicros }
        let interaction = CaptureEventInteraction(
            soundPlayer: host,
            primary: { printer.capture($0, role: "primary") },
            secondary: { printer.capture($0, role: "secondary") })
        if let info = await host.deviceInfo {
            print(json ? Self.connectedJSON(info) : info.summary + "\n")
        }
        await host.onConnect { info in
            print(json ? Self.connectedJSON(info) : info.summary + "\n")
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

        if let scenario, let session = await host.session {
            let played = try await ScenarioFiles.play(scenario, file: args.value("scenario") ?? "", on: session)
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

    /// `{"type": "connected", "identity": …}`: the first line of each session in `--json`.
    static func connectedJSON(_ info: DeviceInfo) -> String {
        JSONValue.object([
            JSONMember("type", .string("connected")), JSONMember("identity", info.identity.jsonValue(includingDefaults: true)),
            JSONMember("sessionId", .integer(info.sessionID)),
        ]).compactText
    }
}
