import CameraAppExample
import CameraControlCapture
import CameraControlControls
import CameraControlDevice
import CameraControlHost
import CameraControlRPC
import CameraControlTools
import CameraControlWire
import Foundation

/// `camctl demo`: starts `camctl-sim`, connects to it over its pseudo-terminal exactly as to real
/// hardware, sets up the seed talk's camera app (zoom, exposure bias, a "Reactions" picker, a capture
/// interaction on every button) and plays a scenario through the simulator that exercises every gesture
/// and input source, printing what each layer sees.
enum Demo {
    static let command = Command(
        name: "demo", summary: "start the simulator and play a tour of every gesture, input source and control",
        usage: "[--port PORT] [--scenario FILE] [--seed N] [--sim PATH] [--verbose] [--quiet] [--json]",
        details: """
            Starts camctl-sim, connects over its pty exactly as to hardware, sets up the example camera app and plays
            a scenario through the simulator, printing what each layer sees, then a summary.
              --port PORT      play on a device already running there instead (one with SimulatorService, e.g. the
                               emulated micro:bit of scripts/qemu-microbit); a scenario longer than its frames is
                               sent in pieces, each when the previous one has ended
              --scenario FILE  play FILE instead of the tour (checked offline first: errors name FILE:LINE:COLUMN)
              --seed N         the simulator's seed (default 42)
              --sim PATH       the camctl-sim to run (default: the one next to camctl)
              --verbose        print every slide sample and action too
              --quiet          print only the summary
              --json           events as one JSON object per line (README, "JSON"), then {"type": "summary", …}
            """,
        examples: [
            "demo", "demo --verbose", "demo --scenario Firmware-sim/scenarios/buttons.scenario", "demo --port /dev/pts/7",
            "demo --json | jq -c 'select(.type==\"capture\")'",
        ],
        run: run)

    static func run(_ argv: [String]) async throws {
        let args = try Arguments(
            argv, valued: ["port", "scenario", "seed", "sim"], switches: ["quiet", "verbose", "json"], positionals: [])
        let scenarioFile = args.value("scenario") ?? "the demo tour"
        let scenario = try args.value("scenario").map { try ScenarioFiles.load($0) } ?? ScenarioFiles.steps(of: CameraApp.demoScenario)
        let json = args.flag("json")
        // --quiet: only the summary (and the link line), not the simulator's pty, the device or the events.
        let quiet = args.flag("quiet")
        let seed = try args.integer("seed", default: 42, in: 0...Int.max)
        // --port: a device already running (its own seed); otherwise a camctl-sim of our own.
        var simulator: SimulatorProcess?
        defer { simulator?.terminate() }
        let port: String
        if let given = args.value("port") {
            port = try await Ports.resolve(given)
        } else {
            let simulatorPath = args.value("sim") ?? siblingExecutable("camctl-sim")
            guard FileManager.default.isExecutableFile(atPath: simulatorPath) else {
                throw Arguments.Failure(
                    description: "camctl-sim not found at \(simulatorPath) (run `swift build`, or pass --sim PATH)")
            }
            let started = try SimulatorProcess(path: simulatorPath, seed: seed)
            simulator = started
            port = started.ptyPath
            if !json, !quiet { print("camctl-sim running on \(port)") }
        }

        let (host, _) = try await Ports.connectHost(
            port, hostName: "camctl demo", configuration: .init(reconnects: false))
        guard let session = await host.session, let info = await host.deviceInfo else {
            throw DeviceError(.closed, "the simulator went away before the demo started")
        }
        if json {
            print(Monitor.connectedJSON(info))
        } else if !quiet {
            print(info.summary)
            print("")
        }

        let printer = EventPrinter(quiet: quiet, verbose: args.flag("verbose"), json: json)
        printer.offsetSource = { host.clockOffsetMicros }
        let tally = CaptureTally()
        // The example app, exactly as a user would write it (Examples/CameraApp); its callbacks run inline
        // so the printed lines keep the order things happened in.
        let app = try CameraApp(executor: InlineExecutor(), soundPlayer: host) { event in
            printer.app(event)
            tally.record(event)
        }
        await host.observe { printer.effect($0) }
        await app.attach(to: host, printer: printer)
        app.install(in: try await host.makeControlsSession())

        // The link line counts what the device did during the demo (a device given by --port has counted since it
        // started).
        let before = try? await session.counters()
        // Comments stay in the source; the device only needs the steps (a frame holds ~1 KB; on a device with
        // smaller frames they go in pieces, ScenarioPieces.swift). Errors name the file's own lines (ScenarioFiles).
        let played = try await ScenarioFiles.play(inPiecesOf: scenario, file: scenarioFile, on: session)
        printer.note(
            String(format: "scenario: %u steps, %.1f s", played.steps, Double(played.durationMicros) / 1e6)
                + (played.pieces > 1 ? " (in \(played.pieces) pieces)" : ""))
        // The rest of the scenario and the overlay's last moments, unless the device goes first.
        let end = ContinuousClock.now + .microseconds(Int64(played.remainingMicros)) + .milliseconds(900)
        while ContinuousClock.now < end, await host.lastDisconnect == nil {
            try? await Task.sleep(for: .milliseconds(20))
        }
        let lost = await host.lastDisconnect
        if let lost { printer.note("device lost: \(lost)") }
        let counters = try? await session.counters()
        await host.stop()

        if json {
            print(tally.summaryJSON(app: app, counters: counters).compactText)
            if let lost { throw DeviceError(.closed, "the simulator was lost during the demo: \(lost)") }
            return
        }
        if !quiet { print("") }
        print(tally.summary(app: app))
        if let counters {
            let start = before ?? Counters()
            print(
                "link        device sent \(counters.framesSent &- start.framesSent) frames, "
                    + "\(counters.retransmissions &- start.retransmissions) retransmissions, "
                    + "\(counters.checkErrors &- start.checkErrors) check errors, \(counters.sequenceGaps &- start.sequenceGaps) lost")
        }
        if let lost { throw DeviceError(.closed, "the simulator was lost during the demo: \(lost)") }
    }

    /// The scenario's steps without comments and blank lines (what fits a RunScenario request).
    static func steps(of text: String) -> String { ScenarioFiles.steps(of: text).text }

    /// The path of an executable next to this one (`swift build` puts camctl and camctl-sim together).
    static func siblingExecutable(_ name: String) -> String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent(name).path
    }
}

/// Counts what the app did, for the demo's summary.
final class CaptureTally: @unchecked Sendable {
    private let lock = NSLock()
    private var ended = 0
    private var cancelled = 0
    private var sources: [String: Int] = [:]

    func record(_ event: CameraApp.Event) {
        guard case .capture(let capture, _) = event else { return }
        lock.lock()
        defer { lock.unlock() }
        switch capture.phase {
        case .ended:
            ended += 1
            sources[capture.source.description, default: 0] += 1
        case .cancelled:
            cancelled += 1
        default:
            break
        }
    }

    /// The summary as `{"type": "summary", "captures", "cancelled", "bySource", "photos", "videos", "zoom",
    /// "exposureBias", "reaction", "counters"}`.
    func summaryJSON(app: CameraApp, counters: Counters?) -> JSONValue {
        lock.lock()
        defer { lock.unlock() }
        var members = [
            JSONMember("type", .string("summary")), JSONMember("captures", .integer(ended)), JSONMember("cancelled", .integer(cancelled)),
            JSONMember("bySource", .object(sources.sorted { $0.key < $1.key }.map { JSONMember($0.key, .integer($0.value)) })),
            JSONMember("photos", .integer(app.camera.photos.count { !$0.isVideo })),
            JSONMember("videos", .integer(app.camera.photos.count { $0.isVideo })),
            JSONMember("zoom", .number(String(format: "%.3f", app.camera.zoomFactor))),
            JSONMember("exposureBias", .number(String(format: "%.3f", app.camera.exposureBias))),
            JSONMember("reaction", .string("\(app.selectedReaction)")),
        ]
        if let counters { members.append(JSONMember("counters", counters.jsonValue(includingDefaults: true))) }
        return .object(members)
    }

    /// `1 video` (a click and hold), `2 videos`.
    static func videos(_ count: Int) -> String { count == 1 ? "1 video" : "\(count) videos" }

    func summary(app: CameraApp) -> String {
        lock.lock()
        defer { lock.unlock() }
        let bySource = sources.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return """
            captures    \(ended) ended (\(bySource)), \(cancelled) cancelled
            photos      \(app.camera.photos.count { !$0.isVideo }) taken, \(Self.videos(app.camera.photos.count { $0.isVideo }))
            zoom        \(String(format: "%.2f", app.camera.zoomFactor))×
            exposure    \(String(format: "%+.2f", app.camera.exposureBias)) EV
            reaction    \(app.selectedReaction)
            """
    }
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

    init(path: String, seed: Int, extraArguments: [String] = []) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["--seed", "\(seed)", "--quiet", "--exit-with-parent"] + extraArguments
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.standardError
        try process.runWithDefaultSignals()
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
            // Its output ended without a path: it is ending (a refused argument: its message is on stderr
            // above). Give it 2 s to be seen ended.
            if firstLine.value != nil, Self.hasEnded(process) {
                process.waitUntilExit()
                throw SimulatorFailure(
                    description: "camctl-sim ended (exit status \(process.terminationStatus)) before printing its pty path")
            }
            process.terminate()
            kill(process.processIdentifier, SIGKILL)
            throw SimulatorFailure(description: "camctl-sim did not print its pty path within 10 s")
        }
        ptyPath = text
    }

    /// True once `process` has ended, looking every 10 ms for up to 2 s.
    static func hasEnded(_ process: Process) -> Bool {
        for _ in 0..<200 where process.isRunning {
            usleep(10_000)
        }
        return !process.isRunning
    }

    /// SIGTERM, then SIGKILL if the simulator is still there after 2 s: camctl never waits forever.
    func terminate() {
        guard process.isRunning else { return }
        process.terminate()
        if !Self.hasEnded(process) {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
