import CameraControlCapture
import CameraControlDevice
import CameraControlHost
import CameraControlSerialTransport
import CameraControlTools
import CameraControlWire
import Dispatch
import Foundation
import Synchronization

/// `camctl record PORT -o FILE.pcapng [--seconds N] [--scenario FILE] [--no-raw] [--quiet]`: this process
/// is the session's host (handshake, input stream, raw samples when the device offers them, its
/// configuration, clock round trips), printing events as `camctl monitor` does and writing every frame
/// both ways, timestamped, to a pcapng file (`tools/wireshark/cameracontrol.lua` dissects it;
/// `camctl replay`, `decode` and `plot` read it). It stops after `--seconds`, at the end of the
/// `--scenario`, or on Ctrl-C; the file is complete after every frame, so it is complete either way.
enum Record {
    static func run(_ argv: [String]) async throws {
        let args = try Arguments(
            argv.map { $0 == "-o" ? "--output" : $0 }, valued: ["output", "seconds", "scenario"], switches: ["no-raw", "quiet", "json"])
        let port = try args.required(0, "PORT")
        guard args.positional.count == 1 else { throw Arguments.Failure(description: "record takes one PORT") }
        guard let output = args.value("output") else { throw Arguments.Failure(description: "missing -o FILE.pcapng") }
        var seconds = try args.integer("seconds", default: 0)
        let scenario = try args.value("scenario").map { try ScenarioFiles.load($0) }

        let writer = try PcapngWriter(path: output, interfaceName: port)
        defer { writer.close() }
        let transport = RecordingTransport(try Transports.open(path: port), writer: writer)
        let first = try await DeviceSession.connect(transport: transport, hostName: "camctl record")
        let handOff = Mutex<DeviceSession?>(first)
        let host = CameraControlHost(configuration: .init(reconnects: false)) { () async throws(DeviceError) -> DeviceSession in
            guard let session = handOff.withLock({ $0.take() }) else { throw DeviceError(.closed, "recording one session only") }
            return session
        }
        let json = args.flag("json")
        let printer = EventPrinter(quiet: args.flag("quiet"), json: json)
        printer.offsetSource = { host.clockOffsetMicros }
        let interaction = CaptureEventInteraction(
            soundPlayer: host,
            primary: { printer.capture($0, role: "primary") },
            secondary: { printer.capture($0, role: "secondary") })
        // Set before the recorder stops the host itself: a device lost otherwise ends the recording with
        // an error (the file is still complete).
        let stopping = StopFlag()
        @Sendable func stop() async {
            stopping.value.withLock { $0 = true }
            await host.stop()
        }
        await host.observe { effect in
            if case .deviceLost = effect, !stopping.value.withLock({ $0 }) { printer.note("device lost") }
            if case .connected = effect { printer.resetOrigin() }
            printer.effect(effect)
        }
        await host.attach(interaction)
        interaction.setSessionRunning(true)
        await host.start()
        await host.waitUntilConnected()
        guard let session = await host.session else { throw DeviceError(.closed, "the device went away at once") }
        print(json ? Monitor.connectedJSON(session.info) : session.info.summary + "\n")

        // Ctrl-C ends the recording cleanly (the file is whole after every frame anyway).
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT)
        interrupt.setEventHandler { Task { await stop() } }
        interrupt.resume()
        defer { interrupt.cancel() }

        // The configuration goes into the recording (plots draw its thresholds), and raw samples when offered.
        _ = try? await session.config()
        var rawTask: Task<Void, Never>?
        if !args.flag("no-raw"), let stream = try? await session.rawSamples() {
            rawTask = Task {
                do {
                    for try await _ in stream {}
                } catch {}
            }
        }
        defer { rawTask?.cancel() }

        if let scenario {
            let played = try await ScenarioFiles.play(scenario, file: args.value("scenario") ?? "", on: session)
            printer.note(String(format: "scenario: %u steps, %.1f s", played.steps, Double(played.durationMicros) / 1e6))
            if seconds == 0 { seconds = Int((played.durationMicros + 999_999) / 1_000_000) + 1 }
        }
        if seconds > 0 {
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                await stop()
            }
        }
        await host.run()
        rawTask?.cancel()
        writer.close()
        FileHandle.standardError.write(Data("camctl: recorded \(writer.count) frames to \(output)\n".utf8))
        if !stopping.value.withLock({ $0 }), let lost = await host.lastDisconnect {
            throw DeviceError(.closed, "the device went away: \(lost)")
        }
    }
}

/// Whether the recorder itself is stopping the host.
final class StopFlag: Sendable {
    /// True once the recorder stops the host.
    let value = Mutex(false)
}
