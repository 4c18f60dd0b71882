import CameraControlCapture
import CameraControlControls
import CameraControlDevice
import CameraControlRPC
import CameraControlWire
import Foundation

/// `camctl demo`: starts `camctl-sim`, connects to it over its pseudo-terminal exactly as to real
/// hardware, sets up the seed talk's camera app (zoom, exposure bias, a "Reactions" picker, a capture
/// interaction on every button) and plays a scenario through the simulator that exercises every gesture
/// and input source, printing what each layer sees.
enum Demo {
    /// The built-in tour (docs/SIMULATOR.md for the format).
    static let scenario = """
        # camctl demo: the seed talk's app, then every input source.
        seed 42
        # Zoom: a light press shows the overlay with the active control (zoom); a slide zooms in
        # (through the 2x detent) and holds still, so it stops where it is.
        touch at=0.25 hold=60ms
        light-press force=1200mN hold=150ms
        slide to=0.75 over=500ms
        hold 350ms
        release
        pause 400ms
        # Exposure: a double light press opens the control picker, a slide moves one entry on,
        # a light press confirms, a slide adjusts it in 1/3 EV detents.
        touch at=0.3 hold=60ms
        double-light-press force=1200mN gap=150ms
        slide to=0.55 over=300ms
        hold 100ms
        light-press force=1300mN hold=120ms
        slide to=0.75 over=400ms
        hold 350ms
        release
        pause 400ms
        # Reactions: the picker again, one entry on (and against the end of the list), confirm,
        # choose a reaction.
        touch at=0.3 hold=60ms
        double-light-press force=1200mN gap=150ms
        slide to=0.55 over=300ms
        hold 100ms
        light-press force=1300mN hold=120ms
        slide to=0.95 over=500ms
        hold 350ms
        release
        pause 300ms
        # A full click is the shutter, whatever the overlay shows.
        full-click
        pause 400ms
        # Click and hold: a long press (video in a camera app).
        click-and-hold 1s
        pause 400ms
        # The other inputs: volume up (secondary), volume down held, the action button, a remote click.
        button volume-up
        pause 250ms
        button volume-down hold=600ms
        pause 250ms
        button action
        pause 250ms
        remote-click
        pause 300ms
        """

    static func run(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: ["scenario", "seed", "sim"], switches: ["quiet", "verbose"])
        let scenarioText = try args.value("scenario").map { try String(contentsOfFile: $0, encoding: .utf8) } ?? scenario
        let seed = try args.integer("seed", default: 42)
        let simulatorPath = args.value("sim") ?? siblingExecutable("camctl-sim")
        guard FileManager.default.isExecutableFile(atPath: simulatorPath) else {
            throw Arguments.Failure(
                description: "camctl-sim not found at \(simulatorPath) (run `swift build`, or pass --sim PATH)")
        }

        let simulator = try SimulatorProcess(path: simulatorPath, seed: seed)
        defer { simulator.terminate() }
        print("camctl-sim running on \(simulator.ptyPath)")

        let session = try await DeviceSession.open(path: simulator.ptyPath, hostName: "camctl demo")
        print(session.info.summary)
        print("")

        let printer = EventPrinter(quiet: args.flag("quiet"), verbose: args.flag("verbose"))
        let app = try DemoApp(session: session, printer: printer)
        let pipeline = LivePipeline(session: session, interaction: app.interaction, controls: app.controls, printer: printer)

        // Comments stay in the source; the device only needs the steps (a frame holds ~1 KB).
        let steps = scenarioText.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }.joined(separator: "\n")
        await pipeline.synchroniseClocks()
        let played = try await session.runScenario(steps + "\n")
        printer.note(String(format: "scenario: %u steps, %.1f s", played.steps, Double(played.durationMicros) / 1e6))
        let clock = ContinuousClock()
        let end = clock.now + .microseconds(Int64(played.durationMicros)) + .milliseconds(900)
        do {
            try await pipeline.run(until: { clock.now >= end })
        } catch {
            await pipeline.deviceLost()
            printer.note("device lost: \(error)")
        }
        await pipeline.finish()
        let counters = try await session.counters()
        await session.close()

        print("")
        print(app.summary())
        print(
            "link        device sent \(counters.framesSent) frames, \(counters.retransmissions) retransmissions, \(counters.checkErrors) check errors, \(counters.sequenceGaps) lost"
        )
    }

    /// The path of an executable next to this one (`swift build` puts camctl and camctl-sim together).
    static func siblingExecutable(_ name: String) -> String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent(name).path
    }
}

/// The seed talk's camera app on a synthetic camera: a capture interaction, zoom, exposure bias and a
/// "Reactions" index picker.
final class DemoApp: @unchecked Sendable {
    let camera: SyntheticCamera
    let interaction: CaptureEventInteraction
    let controls: CaptureControlsSession
    let reactions: CaptureIndexPicker
    let zoom: SystemZoomSlider
    let exposure: SystemExposureBiasSlider
    private let printer: EventPrinter
    private let tally: CaptureTally
    private let delegate: PrintingControlsDelegate

    static let reactionTitles = ["none", "hearts", "balloons", "confetti", "fireworks", "lasers"]

    init(session: DeviceSession, printer: EventPrinter) throws {
        self.printer = printer
        let camera = try SyntheticCamera()
        self.camera = camera
        // Handlers run synchronously as gestures are fed, so the tally is complete when the run ends.
        // Capture on `ended`, as Apple's API asks.
        let tally = CaptureTally(camera: camera)
        self.tally = tally
        interaction = CaptureEventInteraction(
            soundPlayer: session,
            primary: { [printer, tally] event in
                printer.capture(event, role: "primary")
                tally.record(event)
            },
            secondary: { [printer, tally] event in
                printer.capture(event, role: "secondary")
                tally.record(event)
            })
        zoom = try SystemZoomSlider(device: camera, executor: DispatchQueue.global()) { _ in }
        exposure = try SystemExposureBiasSlider(device: camera, executor: DispatchQueue.global()) { _ in }
        reactions = try CaptureIndexPicker("Reactions", symbolName: "face.smiling", localizedIndexTitles: Self.reactionTitles)
        let caps = session.info.capabilities
        controls = try CaptureControlsSession(
            capabilities: ControlsCapabilities(supportsControls: caps.supportsControls, maxControls: Int(caps.maxControls)))
        delegate = PrintingControlsDelegate(printer: printer)
        reactions.setActionQueue(DispatchQueue.global()) { _ in }
        for control in [zoom, exposure, reactions] as [any CaptureControl] {
            try controls.addControl(control)
        }
        controls.setControlsDelegate(delegate, executor: DispatchQueue.global())
        controls.attachEventInteraction(interaction)
        interaction.setSessionRunning(true)
    }

    func summary() -> String {
        let (ended, cancelled, sources) = tally.counts
        let bySource = sources.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return """
            captures    \(ended) ended (\(bySource)), \(cancelled) cancelled
            photos      \(camera.photos.count) taken
            zoom        \(String(format: "%.2f", camera.zoomFactor))×
            exposure    \(String(format: "%+.2f", camera.exposureBias)) EV
            reaction    \(Self.reactionTitles[reactions.selectedIndex])
            """
    }
}

/// Counts capture events and takes a photo on each `ended`.
final class CaptureTally: @unchecked Sendable {
    private let lock = NSLock()
    private let camera: SyntheticCamera
    private var ended = 0
    private var cancelled = 0
    private var sources: [String: Int] = [:]

    init(camera: SyntheticCamera) { self.camera = camera }

    func record(_ event: CaptureEvent) {
        lock.lock()
        defer { lock.unlock() }
        switch event.phase {
        case .ended:
            ended += 1
            sources[event.source.description, default: 0] += 1
            _ = try? camera.capturePhoto()
        case .cancelled:
            cancelled += 1
        default:
            break
        }
    }

    var counts: (ended: Int, cancelled: Int, sources: [String: Int]) {
        lock.lock()
        defer { lock.unlock() }
        return (ended, cancelled, sources)
    }
}

/// Prints the controls delegate's calls.
final class PrintingControlsDelegate: CaptureControlsDelegate, @unchecked Sendable {
    let printer: EventPrinter
    init(printer: EventPrinter) { self.printer = printer }
    func sessionControlsDidBecomeActive(_ session: CaptureControlsSession) { printer.note("delegate: controls did become active") }
    func sessionControlsWillEnterFullscreenAppearance(_ session: CaptureControlsSession) { printer.note("delegate: will enter fullscreen") }
    func sessionControlsWillExitFullscreenAppearance(_ session: CaptureControlsSession) { printer.note("delegate: will exit fullscreen") }
    func sessionControlsDidBecomeInactive(_ session: CaptureControlsSession) { printer.note("delegate: controls did become inactive") }
}

/// The simulator could not be started (exit status 1, unlike a usage error).
struct SimulatorFailure: Error, CustomStringConvertible {
    var description: String
}

/// One line, handed from a reader thread, waited for with a timeout.
final class FirstLine: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var line: [UInt8]?

    func set(_ line: [UInt8]) {
        lock.withLock { self.line = line }
        done.signal()
    }

    func wait(seconds: Int) -> Bool { done.wait(timeout: .now() + .seconds(seconds)) == .success }

    var value: [UInt8]? { lock.withLock { line } }
}

/// `camctl-sim` as a child process on a pseudo-terminal.
final class SimulatorProcess: @unchecked Sendable {
    let process = Process()
    let ptyPath: String

    init(path: String, seed: Int) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["--seed", "\(seed)", "--quiet", "--exit-with-parent"]
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.standardError
        try process.run()
        // The first line is the pty's path; give the simulator 10 s to print it.
        let handle = stdout.fileHandleForReading
        let firstLine = FirstLine()
        let reader = Thread {
            var line: [UInt8] = []
            while line.count <= 4096 {
                let byte = handle.readData(ofLength: 1)
                guard let first = byte.first, first != UInt8(ascii: "\n") else { break }
                line.append(first)
            }
            firstLine.set(line)
        }
        reader.start()
        guard firstLine.wait(seconds: 10), let line = firstLine.value, !line.isEmpty,
            let text = String(bytes: line, encoding: .utf8), text.hasPrefix("/")
        else {
            process.terminate()
            kill(process.processIdentifier, SIGKILL)
            throw SimulatorFailure(description: "camctl-sim did not print its pty path within 10 s")
        }
        ptyPath = text
    }

    /// SIGTERM, then SIGKILL if the simulator is still there after 2 s: camctl never waits forever.
    func terminate() {
        guard process.isRunning else { return }
        process.terminate()
        for _ in 0..<200 where process.isRunning {
            usleep(10_000)
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
