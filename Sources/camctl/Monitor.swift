import CameraAppExample
import CameraControlCapture
import CameraControlControls
import CameraControlDevice
import CameraControlHost
import CameraControlTools
import CameraControlWire
import Dispatch
import Foundation
import Synchronization

/// `camctl monitor PORT`: input events, gestures and capture events as they arrive. Rides through an
/// unplug: the press in flight is cancelled, and when the device is back (the same path: a serial port,
/// or `camctl-sim --link PATH` restarted) the monitor carries on with the new session. With
/// `--scenario FILE` it plays a scenario through its own session (a simulator, or any device with
/// `SimulatorService`), so nobody needs a second host on the port.
///
/// Every view runs the example camera app (its controls, so the overlay has something to show, its
/// camera for the AE/AF lock, its photos), as `demo` does. On a terminal it is a full-screen view
/// (``MonitorScreen``; `q` or Ctrl-C quits); when stdout is not a terminal, or with `--plain`, it prints
/// one line per event.
enum Monitor {
    static let command = Command(
        name: "monitor", summary: "print input events, gestures and capture events as they arrive",
        usage:
            "PORT [--seconds N] [--scenario FILE] [--no-reconnect] [--plain | --json | --http [HOST:]PORT [--camera SOURCE [-o DIR]]]",
        details: """
            After an unplug it waits for the device to come back at the same path and carries on; a device that
            cannot come back (a pseudo-terminal whose simulator ended) ends it with one line and exit status 1.
              --seconds N      stop after N seconds (default: run until Ctrl-C)
              --scenario FILE  play a scenario through this session first (a simulator); stops after it, unless --seconds
              --no-reconnect   exit (status 1) when the device goes away
              --plain          print lines even on a terminal (off a terminal, or with --json, it always does)
              --http ADDRESS   serve the live page instead (PORT, HOST:PORT; loopback, and a free port for 0); prints its URL
              --camera SOURCE  with --http: the example app on a camera (test, /dev/videoN or libcamera, as `shoot`),
                               its live picture on the page; its photos and videos go to -o DIR (default .)
              --json           one object per line: {"type": "input"|"gesture"|"capture"|"overlay"|"haptic"|"photo"|"lock"|"note"|…,
                               "tMs", "deviceTimeUs", …} (README, "JSON")
            """,
        examples: [
            "monitor /dev/ttyACM0", "monitor auto --json | jq .", "monitor /tmp/camctl0 --scenario Firmware-sim/scenarios/buttons.scenario",
            "monitor /tmp/camctl0 --http 8080 --camera test -o /tmp/shots",
        ],
        run: run)

    static func run(_ argv: [String]) async throws {
        let argv = argv.map { $0 == "-o" ? "--output" : $0 }
        let args = try Arguments(
            argv, valued: ["seconds", "scenario", "http", "camera", "output"], switches: ["no-reconnect", "json", "plain"],
            positionals: ["PORT"])
        if let address = args.value("http") {
            if args.flag("json") { throw Arguments.Failure(description: "--json and --http exclude each other") }
            return try await runPage(args, address: address)
        }
        if args.value("camera") != nil || args.value("output") != nil {
            throw Arguments.Failure(description: "--camera and -o go with --http (the page shows the camera)")
        }
        if !args.flag("plain"), !args.flag("json"), isatty(1) != 0 {
            return try await runScreen(args)
        }
        let seconds = try args.seconds()
        let scenario = try args.value("scenario").map { try ScenarioFiles.load($0) }
        let deadline = CommandDeadline(seconds: seconds, command: "monitor")  // --seconds counts from here
        let reconnects = !args.flag("no-reconnect")
        let printer = EventPrinter(json: args.flag("json"))
        let json = args.flag("json")
        // Set before the monitor stops the host itself (--seconds, the end of --scenario, Ctrl-C, `q`): that
        // ends the session too, and is no "device lost".
        let stopping = StopFlag()
        let portName = Mutex(try args.required(0, "PORT"))  // the resolved path, once known
        let madeApp = Mutex<Result<CameraApp, ControlError>?>(nil)
        // What prints, attached before the host starts on the first session: a press made as it starts is
        // shown, as a capture too.
        @Sendable func attachPrinter(to host: CameraControlHost) async {
            printer.offsetSource = { host.clockOffsetMicros }
            await host.onConnect { info in
                print(json ? Self.connectedJSON(info) : info.summary + "\n")
            }
            await host.observe { effect in
                switch effect {
                case .connected:
                    printer.resetOrigin()
                case .deviceLost:
                    if !stopping.value.withLock({ $0 }) {
                        let port = portName.withLock { $0 }
                        printer.note(reconnects ? "device lost; waiting for \(port) to come back…" : "device lost")
                    }
                default:
                    printer.effect(effect)
                }
            }
            // The example camera app, as on the full screen: its photos, the overlay, its haptics and the AE/AF
            // lock print too. `prepare` cannot throw: a failure to make the app is kept and thrown once the host
            // is up, where its controls join it.
            do throws(ControlError) {
                let app = try CameraApp(executor: InlineExecutor(), soundPlayer: host) { printer.app($0) }
                await app.attach(to: host, printer: printer)
                madeApp.withLock { $0 = .success(app) }
            } catch {
                madeApp.withLock { $0 = .failure(error) }
            }
        }

        @Sendable func stop(_ host: CameraControlHost) async {
            stopping.value.withLock { $0 = true }
            await host.stop()
        }
        // The first connect must work (a typo in PORT is an error, not an endless retry; a noisy port
        // gets the wrong-baud hint).
        let connected: (host: CameraControlHost, path: String)
        do {
            connected = try await Ports.connectHost(
                portName.withLock { $0 }, hostName: "camctl monitor", configuration: .init(reconnects: reconnects)
            ) { host in
                deadline.onExpiry { await stop(host) }
                // Ctrl-C (or SIGTERM) is how a monitor usually ends: the session closes cleanly, exit 0. (Before
                // this, while the port opens and the handshake runs, it ends the process: exit 130.)
                Interrupts.onInterrupt { Task { await stop(host) } }
                await attachPrinter(to: host)
            }
        } catch  where stopping.value.withLock({ $0 }) {
            return  // stopped (Ctrl-C, --seconds) while its clock was being estimated
        }
        let (host, port) = connected
        portName.withLock { $0 = port }
        do {
            guard let made = madeApp.withLock({ $0 }) else { preconditionFailure("the host starts after prepare") }
            try made.get().install(in: try await host.makeControlsSession())
        } catch {
            await stop(host)
            throw error
        }

        var scenarioEnd: ScenarioFiles.ScenarioEnd?
        do {
            if let scenario, let session = await host.session {
                let played = try await ScenarioFiles.play(scenario, file: args.value("scenario") ?? "", on: session)
                printer.note(String(format: "scenario: %u steps, %.1f s", played.steps, Double(played.durationMicros) / 1e6))
                if seconds == 0 { scenarioEnd = (session, UInt64(played.durationMicros)) }
            }
        } catch  where stopping.value.withLock({ $0 }) {
            return  // stopped (Ctrl-C, --seconds) while the scenario played: the session closed under it
        }
        // --seconds is the deadline's (counted from the start); otherwise the scenario's end.
        ScenarioFiles.stop(afterSeconds: deadline.isSet ? 0 : seconds, orAfter: scenarioEnd, by: { await stop(host) })
        await host.run()
        try await endedOnItsOwn(host, stopping: stopping)
    }

    /// After `host.run()` returned: throws the one-line failure (README, "Exit status": 1) when the host
    /// ended on its own, not stopped by the command (`stopping`): the device went away with
    /// `--no-reconnect`, or it is gone for good (a pseudo-terminal that closed never comes back, so the host
    /// stops reconnecting: `CameraControlHost.goneForGood`).
    static func endedOnItsOwn(_ host: CameraControlHost, stopping: StopFlag) async throws {
        guard !stopping.value.withLock({ $0 }) else { return }
        if let gone = await host.goneForGood {
            throw CLIFailure(status: .failure, message: "the device is gone for good: \(gone.message)")
        }
        if !host.configuration.reconnects, let lost = await host.lastDisconnect {
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

    /// The full-screen monitor.
    static func runScreen(_ args: Arguments) async throws {
        let seconds = try args.seconds()
        let scenario = try args.value("scenario").map { try ScenarioFiles.load($0) }
        let deadline = CommandDeadline(seconds: seconds, command: "monitor")  // --seconds counts from here
        let reconnects = !args.flag("no-reconnect")
        let (host, port) = try await Ports.connectHost(
            try args.required(0, "PORT"), hostName: "camctl monitor", configuration: .init(reconnects: reconnects))
        let stopping = StopFlag()
        @Sendable func stop() async {
            stopping.value.withLock { $0 = true }
            await host.stop()
        }
        deadline.onExpiry(stop)
        let screen = MonitorScreen()
        // Slide samples move the slide bar; the log keeps the events they add up to.
        let printer = EventPrinter(verbose: false)
        printer.offsetSource = { host.clockOffsetMicros }
        printer.sink = { screen.append($0) }
        let app = try CameraApp(executor: InlineExecutor(), soundPlayer: host) { printer.app($0) }
        let resolution = Mutex<UInt32>(1024)
        @Sendable func show(_ info: DeviceInfo) {
            let identity = info.identity
            screen.setHeader(
                "\(identity.vendor) \(identity.model)  serial \(identity.serialNumber)  firmware \(identity.firmwareVersion)  on \(port)"
            )
            resolution.withLock { $0 = max(1, info.capabilities.slideResolution) }
        }
        if let info = await host.deviceInfo { show(info) }
        await host.onConnect { show($0) }
        await host.observe { effect in
            screen.effect(effect, slideResolution: resolution.withLock { $0 })
            switch effect {
            case .connected: printer.resetOrigin()
            case .deviceLost:
                if !stopping.value.withLock({ $0 }) {
                    printer.note(reconnects ? "device lost; waiting for \(port) to come back…" : "device lost")
                }
            default: printer.effect(effect)
            }
        }
        await app.attach(to: host, printer: printer)
        app.install(in: try await host.makeControlsSession())

        screen.enter()
        defer { screen.restore() }
        Interrupts.onInterrupt { Task { await stop() } }
        // Keys: `q` quits (a thread of its own: reading a terminal blocks).
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while read(0, &byte, 1) == 1 {
                if byte == UInt8(ascii: "q") || byte == UInt8(ascii: "Q") {
                    Task { await stop() }
                    return
                }
            }
        }
        let tasks = [
            // Each session: its configuration, raw samples for the force bar (when offered).
            Task {
                var served: ObjectIdentifier?
                while !Task.isCancelled {
                    guard let session = await host.session, ObjectIdentifier(session) != served else {
                        try? await Task.sleep(for: .milliseconds(100))
                        continue
                    }
                    served = ObjectIdentifier(session)
                    screen.setDevice(session.info.capabilities, config: try? await session.config())
                    guard let stream = try? await session.rawSamples() else { continue }
                    do {
                        for try await batch in stream {
                            guard let last = batch.records.last else { continue }
                            let scale = Double(resolution.withLock { $0 })
                            screen.sample(force: last.force, position: Double(last.position) / scale, touch: last.touch)
                        }
                    } catch {}
                }
            },
            // Link health once a second.
            Task {
                while !Task.isCancelled {
                    if let session = await host.session {
                        let sent = ContinuousClock.now
                        let rtt = (try? await session.ping()).map { _ in
                            let elapsed = ContinuousClock.now - sent
                            return Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
                        }
                        let counters = session.client.counters
                        screen.link(
                            rttMillis: rtt, device: try? await session.counters(), hostCheckErrors: counters.wire.checkErrors,
                            hostSequenceGaps: counters.sequenceGaps)
                    }
                    try? await Task.sleep(for: .seconds(1))
                }
            },
            // The screen, redrawn when something changed, at most 20 times a second.
            Task {
                while !Task.isCancelled {
                    screen.redrawIfNeeded()
                    try? await Task.sleep(for: .milliseconds(50))
                }
            },
        ]
        defer { for task in tasks { task.cancel() } }

        var scenarioEnd: ScenarioFiles.ScenarioEnd?
        do {
            if let scenario, let session = await host.session {
                let played = try await ScenarioFiles.play(scenario, file: args.value("scenario") ?? "", on: session)
                printer.note(String(format: "scenario: %u steps, %.1f s", played.steps, Double(played.durationMicros) / 1e6))
                if seconds == 0 { scenarioEnd = (session, UInt64(played.durationMicros)) }
            }
        } catch  where stopping.value.withLock({ $0 }) {
            return  // stopped (Ctrl-C, q, --seconds) while the scenario played
        }
        // --seconds is the deadline's (counted from the start); otherwise the scenario's end.
        ScenarioFiles.stop(afterSeconds: deadline.isSet ? 0 : seconds, orAfter: scenarioEnd, by: stop)
        await host.run()
        for task in tasks { task.cancel() }
        screen.redrawIfNeeded()
        try await endedOnItsOwn(host, stopping: stopping)
    }
}

extension CameraApp {
    /// Attaches the app to `host` as `demo` and every `monitor` view run it: its capture interaction (what
    /// it ignores printed by `printer`), its camera for the AE/AF lock a held light press takes, its capture
    /// session running. Its controls are the caller's: `install(in: try await host.makeControlsSession())`.
    func attach(to host: CameraControlHost, printer: EventPrinter) async {
        printer.watch(interaction)
        await host.attach(interaction)
        await host.attachCamera(device, focusExposureLock: focusExposureLock)
        interaction.setSessionRunning(true)
    }
}
