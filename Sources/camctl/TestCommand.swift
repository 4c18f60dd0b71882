import CameraAppExample
import CameraControlControls
import CameraControlDevice
import CameraControlEmbedded
import CameraControlHost
import CameraControlRPC
import CameraControlSimulation
import CameraControlTools
import CameraControlWire
import Foundation
import Synchronization

/// `camctl test`: plays scenario files and checks their `expect` lines against what the host pipeline
/// produced, in virtual time (the rig) or over a port (a simulator's). The grammar, the checker and the
/// report are CameraControlSimulation's (``ScenarioScript``, ``ScenarioTestReport``); this is the shell.
enum TestCommand {
    static let command = Command(
        name: "test", summary: "play scenarios and check their `expect` lines (PASS/FAIL, JUnit, exit 1 on failure)",
        usage:
            "SCENARIO… [--virtual | --port PORT] [--seed N] [--settle-ms N] [--junit FILE] [--quiet] [--events] | --replay FILE.pcapng [--seed N] [--events] [--junit FILE]",
        details: """
            Plays each scenario with the example camera app on the host pipeline and checks its `expect` lines
            (docs/SIMULATOR.md, "Expectations"): one PASS or FAIL line each, the events around a failure.
              --virtual        the firmware, its finger model and the host in one virtual time line (the default)
              --port PORT      a device with SimulatorService (camctl-sim's pty, the emulated micro:bit): each
                               scenario in one RunScenario, one after another; firmware-… events are not seen
              --seed N         the virtual device's seed (default 1)
              --settle-ms N    time run after each scenario ends (default 2600: the overlay dismisses itself)
              --junit FILE     also write the results as JUnit XML
              --quiet          print only failures and the totals
              --events         print every event of each run first (what expectations can name)
              --replay FILE    replay a recording's raw samples, button levels and remote clicks into the firmware
                               in virtual time, in place of the finger model, and check that the same gestures and
                               captures come out as the recording shows (docs/SIMULATOR.md, "Replay"); a .csv
                               trace (time_us,force_mn,position,touch[,buttons[,remote_clicks]]) prints its events;
                               at most an hour of device time
            """,
        examples: [
            "test Firmware-sim/scenarios/*.scenario", "test full-click.scenario --port /dev/pts/4 --junit out.xml",
        ],
        run: run)

    static func run(_ argv: [String]) async throws {
        let args = try Arguments(
            argv, valued: ["port", "seed", "settle-ms", "junit", "replay"], switches: ["virtual", "quiet", "events"],
            positionals: ["SCENARIO"],
            variadic: true)
        // The JUnit report written over a scenario or the recording replayed would replace it.
        try Arguments.refuseOverwriting(
            args.value("junit"), option: "--junit", inputs: args.positional + (args.value("replay").map { [$0] } ?? []),
            what: args.value("replay") == nil ? "the scenario" : "the recording")
        if let recording = args.value("replay") {
            guard args.positional.isEmpty else { throw Arguments.Failure(description: "--replay takes no SCENARIO") }
            for option in ["port", "settle-ms"] where args.value(option) != nil {
                throw Arguments.Failure(description: "--replay takes no --\(option)")
            }
            for flag in ["virtual", "quiet"] where args.flag(flag) {
                throw Arguments.Failure(description: "--replay takes no --\(flag)")
            }
            return try replay(
                recording, seed: UInt64(try args.integer("seed", default: 1, in: 0...Int.max)), events: args.flag("events"),
                junit: args.value("junit"))
        }
        guard !args.positional.isEmpty else { throw Arguments.Failure(description: "missing SCENARIO") }
        if args.flag("virtual") && args.value("port") != nil {
            throw Arguments.Failure(description: "--virtual and --port exclude each other")
        }
        let seed = try args.integer("seed", default: 1, in: 0...Int.max)
        // At most 10 minutes of virtual time after each scenario.
        let settle = UInt64(try args.integer("settle-ms", default: 2600, in: 0...600_000)) * 1000
        // A file among several that cannot be read or parsed is an error of its own (an ERROR line and a JUnit
        // error, in the files' order); the other files still run. One file alone that cannot is the command's
        // error.
        var scripts: [(file: String, script: ScenarioScript)] = []
        var unloaded: [(position: Int, report: ScenarioTestReport)] = []
        for (position, file) in args.positional.enumerated() {
            do {
                let text = try ScenarioFiles.read(file)
                do {
                    scripts.append((file, try ScenarioScript(text)))
                } catch {
                    throw ScenarioFiles.failure(error, file: file, text: text)
                }
            } catch {
                guard args.positional.count > 1 else { throw error }
                unloaded.append(
                    (position, ScenarioTestReport(file: file, loadError: Failures.classify(error, command: command).message)))
            }
        }
        var reports: [ScenarioTestReport] = []
        if scripts.isEmpty {
            // Nothing to run: the ERROR lines and the JUnit still say why.
        } else if let port = args.value("port") {
            reports = try await runOverPort(port, scripts, settleMicros: settle, printingEvents: args.flag("events"))
        } else {
            for (file, script) in scripts {
                let began = ContinuousClock.now
                let run = try script.runVirtual(seed: UInt64(seed), settleMicros: settle)
                if args.flag("events") { printEvents(run, file: file) }
                reports.append(
                    ScenarioTestReport(file: file, results: script.check(run), seconds: seconds(ContinuousClock.now - began)))
            }
        }
        // The ERROR reports in their files' places among the others (which ran in order).
        for (position, report) in unloaded { reports.insert(report, at: min(position, reports.count)) }
        for report in reports {
            print(report.text(onlyFailures: args.flag("quiet")), terminator: "")
        }
        if let junit = args.value("junit") {
            // Written in place, not by renaming a temporary file over it: `--junit /dev/stdout` stays a device.
            do {
                try BoundedFiles.write(Array(ScenarioTestReport.junit(reports).utf8), to: junit)
            } catch {
                throw CLIFailure(status: .failure, message: error.description)
            }
        }
        let failed = reports.reduce(0) { $0 + $1.failures.count }
        let total = reports.reduce(0) { $0 + $1.results.count }
        let notRun = unloaded.isEmpty ? "" : "; \(unloaded.count) of \(args.positional.count) files could not be read or parsed"
        guard failed == 0, unloaded.isEmpty else {
            throw CLIFailure(status: .failure, message: "\(failed) of \(total) expectations failed" + notRun)
        }
        // Skipped expectations (firmware feedback, not seen over a port) did not pass: counted apart.
        let skipped = reports.reduce(0) { $0 + $1.results.filter(\.skipped).count }
        let scenarios = "\(reports.count) scenario\(reports.count == 1 ? "" : "s")"
        if total == 0 {
            print("no expectations in \(scenarios): nothing was checked (`expect` lines say what must happen)")
        } else if skipped == 0 {
            print(total == 1 ? "the 1 expectation passed in \(scenarios)" : "all \(total) expectations passed in \(scenarios)")
        } else {
            let passed = total - skipped
            print("\(passed) expectation\(passed == 1 ? "" : "s") passed, \(skipped) skipped, in \(scenarios)")
        }
    }

    /// `--replay FILE`: the recording's input into the firmware in virtual time; the gestures and captures
    /// must be the recording's.
    /// The longest span of device time `--replay` plays: one hour.
    static let maxReplayMicros: UInt64 = 3_600_000_000

    static func replay(_ path: String, seed: UInt64, events: Bool, junit: String? = nil) throws {
        // A recording, or a CSV trace from another tool (nothing recorded to compare with: its events print).
        let isCSV = path.hasSuffix(".csv") || path.hasSuffix(".txt")
        if isCSV, junit != nil {
            throw Arguments.Failure(description: "--junit needs a recording to compare with; a CSV trace is only played")
        }
        var input = try RecordedInput(path: path)
        let origin = input.samples.first?.micros ?? 0
        // Virtual time runs every sample period of the span (about a second of CPU an hour): a bound, so a
        // trace with a gap of days is refused, not played for hours.
        let span = (input.samples.last?.micros ?? origin) - origin
        guard span <= maxReplayMicros else {
            throw CLIFailure(
                status: .failure,
                message: "\(path): the samples span \(span / 1_000_000) s of device time; a replay plays at most "
                    + "\(maxReplayMicros / 1_000_000) s (split the trace, or close its gaps)")
        }
        let samples = input.samples.map { sample in
            ReplaySample(
                micros: sample.micros - origin, forceMillinewtons: sample.forceMillinewtons,
                position: UInt16(clamping: sample.position), touched: sample.touched, buttons: Buttons(rawValue: sample.buttons),
                remoteClicks: UInt8(clamping: sample.remoteClicks))
        }
        // One copy of the samples from here (the firmware's replay makes its own): an hour at 1 kHz is 3.6 million.
        input.samples = []
        if let truncation = input.truncation {
            print("NOTE \(path): \(truncation); the frames before the cut are replayed")
        }
        if input.lostSamples > 0 {
            print(
                "NOTE \(path): the recording lost \(input.lostSamples) raw samples (the device dropped them for want of line: "
                    + "a slow or busy link); the replay holds the sample before each gap through it, so what happened there "
                    + "may come out otherwise")
        }
        let rig = try VirtualControlsRig.replaying(samples, seed: seed)
        if events || isCSV {
            for event in rig.observedEvents { print(event) }
        }
        if isCSV {
            print("\(samples.count) samples replayed")
            return
        }
        // Without slide-changed (RecordedInput.comparable): the live device coalesces best-effort moves that
        // the replay, in virtual time, sends every one of. A slide with many fewer moves than the recording's
        // is a replay that lost moves (RecordedInput.lostMoves).
        let replayedNames = rig.captureRig.gestures.map(RecordedInput.name)
        let gestures = RecordedInput.comparable(replayedNames)
        let shortRuns = zip(RecordedInput.slideMoves(input.gestures), RecordedInput.slideMoves(replayedNames)).enumerated()
            .filter { RecordedInput.lostMoves(recorded: $0.element.0, replayed: $0.element.1) }
        let captures = rig.captureRig.captureEvents.map { "\($0.event.phase.rawValue) \($0.event.source)" }
        let checks = [
            ("gestures", RecordedInput.comparable(input.gestures), gestures), ("captures", input.captures, captures),
        ]
        var failed = false
        var verdicts: [(name: String, failure: String?)] = []
        for (what, recorded, replayed) in checks {
            if recorded == replayed, what == "gestures", let short = shortRuns.first {
                failed = true
                let message =
                    "the replay lost slide moves: slide #\(short.offset + 1) has \(short.element.1) "
                    + "slide-changed, the recording \(short.element.0)"
                print("FAIL \(path): " + message)
                verdicts.append((what, message))
                continue
            }
            if recorded == replayed {
                let note = what == "gestures" ? " (slide-changed left out; each slide's moves counted)" : ""
                print("PASS \(path): the same \(recorded.count) \(what)\(note)")
                verdicts.append((what, nil))
                continue
            }
            failed = true
            let index =
                zip(recorded, replayed).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(recorded.count, replayed.count)
            let counted = what == "gestures" ? ", slide-changed left out" : ""
            let message = "\(what) differ at #\(index + 1) (recorded \(recorded.count), replayed \(replayed.count)\(counted))"
            print("FAIL \(path): " + message)
            verdicts.append((what, message))
            for offset in max(0, index - 3)..<min(max(recorded.count, replayed.count), index + 4) {
                let left = offset < recorded.count ? recorded[offset] : "—"
                let right = offset < replayed.count ? replayed[offset] : "—"
                print("     \(left == right ? " " : ">") \(offset + 1): recorded \(left), replayed \(right)")
            }
        }
        print("\(samples.count) samples (\(String(format: "%.1f", Double(samples.last?.micros ?? 0) / 1e6)) s) replayed")
        if let junit {
            // Written in place, not by renaming a temporary file over it: `--junit /dev/stdout` stays a device.
            do {
                try BoundedFiles.write(Array(ScenarioTestReport.junit(replayOf: path, checks: verdicts).utf8), to: junit)
            } catch {
                throw CLIFailure(status: .failure, message: error.description)
            }
        }
        if failed {
            let lost =
                input.lostSamples > 0
                ? " (it lost \(input.lostSamples) raw samples: record on a faster link; camctl-sim: a higher --baud)" : ""
            let cut = input.truncation.map { " (the recording is cut short: \($0))" } ?? ""
            throw CLIFailure(status: .failure, message: "the replay did not reproduce the recording" + lost + cut)
        }
        // What was before the cut was replayed and compared; the file is still not whole (README: exit 1).
        if let truncation = input.truncation { throw truncation }
    }

    /// `--events`: the run's events in device time (the report's time base), the scenario's start given.
    static func printEvents(_ run: ScenarioRun, file: String) {
        // Device time, as the PASS/FAIL lines and a failure's context give it: one time base for a run.
        print(
            "\(file): events (device time, ms; the scenario started at "
                + String(format: "%.1f", Double(run.scenarioStartMicros) / 1000) + " ms)")
        for event in run.events {
            print(String(format: "  %9.1f  ", Double(event.micros) / 1000) + event.text)
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Connects, and plays each scenario on a fresh example app in one `RunScenario`. The host reconnects
    /// when the link drops (a starved machine misses the 200 ms heartbeat deadline); a scenario during which
    /// it dropped is played once more, and fails if it drops again.
    static func runOverPort(
        _ port: String, _ scripts: [(file: String, script: ScenarioScript)], settleMicros: UInt64, printingEvents: Bool
    ) async throws -> [ScenarioTestReport] {
        let (host, _) = try await Ports.connectHost(
            port, hostName: "camctl test", configuration: .init(retryDelay: .milliseconds(200), reconnects: true))
        // Each scenario runs on Apple's default settings, set on a device that keeps settings too: the user's
        // own (stored on the device, surviving its resets) are read first and put back at the end, as
        // `camctl conformance` does. A run that left them at the defaults lost them for good.
        var userSettings: Settings?
        if let session = await host.session, session.info.capabilities.hasSettings {
            userSettings = try? await session.settings().settings
        }
        do {
            // Every file fits this device's frames, or none plays: not a run that stops at its sixth file.
            if let info = await host.deviceInfo {
                for (file, script) in scripts {
                    try checkFitsOneRequest(file, ScenarioFiles.steps(of: script.text), maxFrameBytes: info.capabilities.maxFrameBytes)
                }
            }
            let reports = try await runScenarios(
                scripts, on: host, settleMicros: settleMicros, printingEvents: printingEvents)
            await putBack(userSettings, on: host)
            await host.stop()
            return reports
        } catch {
            await putBack(userSettings, on: host)
            await host.stop()
            throw error
        }
    }

    /// Sets the user's settings read before the run back on the device (nothing when none were read); a
    /// device that does not take them is reported on stderr, with what to do.
    static func putBack(_ settings: Settings?, on host: CameraControlHost) async {
        guard let settings else { return }
        do {
            guard await host.waitUntilConnected(within: .seconds(10)), let session = await host.session else {
                throw DeviceError(.closed, "the device is not connected")
            }
            _ = try await session.setSettings(settings)
        } catch {
            StandardStreams.error(
                "camctl: the device's settings could not be put back after the run (\(error)); they are Apple's defaults "
                    + "now: set yours again with camctl settings PORT")
        }
    }

    static func runScenarios(
        _ scripts: [(file: String, script: ScenarioScript)], on host: CameraControlHost, settleMicros: UInt64,
        printingEvents: Bool
    ) async throws -> [ScenarioTestReport] {
        let log = HostEventLog()
        let losses = LossCounter()
        await host.observe { effect in
            if case .deviceLost = effect { losses.add() }
            log.record(effect)
        }
        var reports: [ScenarioTestReport] = []
        for (file, script) in scripts {
            var attempt = 0
            while true {
                attempt += 1
                let before = losses.count
                var report: ScenarioTestReport?
                do {
                    report = try await playOverPort(
                        file, script, host: host, log: log, settleMicros: settleMicros, printingEvents: printingEvents)
                } catch let error as RPCError where error.code == .unavailable {
                    losses.add()  // a call the lost link ended
                } catch let error as DeviceError where error.code == .closed {
                    losses.add()  // lost between the reconnect and the scenario's set-up (the host had no session)
                }
                if let report, losses.count == before {
                    reports.append(report)
                    break
                }
                guard attempt < 2 else {
                    throw CLIFailure(
                        status: .failure, message: "\(file): the device was lost during the scenario twice",
                        hint: "a host starved of CPU misses the device's 200 ms heartbeat deadline, as with real hardware")
                }
                let why = await host.lastDisconnect.map { ": \($0)" } ?? ""
                print("\(file): the device was lost during the scenario\(why); playing it again")
            }
        }
        return reports
    }

    /// Fails (one line: the size, the device's limit and how to split) when `steps` do not fit one
    /// `RunScenario` on a device of `maxFrameBytes`-byte frames. `--port` plays each file in one request: the
    /// expectations' windows count from its one start, and pieces, each sent once the previous one ended,
    /// would shift every step after the first cut by a gap no one can tell (docs/SIMULATOR.md, "Limits").
    static func checkFitsOneRequest(_ file: String, _ steps: ScenarioFiles.Steps, maxFrameBytes: UInt32) throws(CLIFailure) {
        let budget = ScenarioFiles.textBudget(maxFrameBytes: Int(maxFrameBytes))
        let size = steps.text.utf8.count
        guard size > budget else { return }
        throw CLIFailure(
            status: .failure,
            message: "\(file): its steps are \(size) bytes of text, more than the \(budget) one RunScenario takes on this "
                + "device (\(maxFrameBytes)-byte frames), and --port plays a file in one piece (its expectations time from "
                + "its one start): split it into files of at most \(budget) bytes of steps, each cut where the finger is up "
                + "and with its own expect lines, or check it in virtual time (--virtual, the default)")
    }

    /// One scenario over the port.
    static func playOverPort(
        _ file: String, _ script: ScenarioScript, host: CameraControlHost, log: HostEventLog, settleMicros: UInt64,
        printingEvents: Bool
    ) async throws -> ScenarioTestReport {
        // After a loss the host reconnects; a device that does not come back ends the run.
        guard await host.waitUntilConnected(within: .seconds(10)), let session = await host.session else {
            throw CLIFailure(status: .failure, message: "\(file): the device was lost and did not come back within 10 s")
        }
        let steps = ScenarioFiles.steps(of: script.text)
        try checkFitsOneRequest(file, steps, maxFrameBytes: session.info.capabilities.maxFrameBytes)
        let began = ContinuousClock.now
        // Apple's default settings, on the host and a device that keeps them: a scenario that changed them
        // and was interrupted (or another program) must not decide this one's result.
        let current = await host.settings
        if session.info.capabilities.hasSettings || current != CameraControlSettings() {
            try await host.setSettings(CameraControlSettings())
        }
        // A fresh app (its own last-used control, its own photo count), in place of the previous one.
        let app = try CameraApp(executor: InlineExecutor(), soundPlayer: host) { log.record($0) }
        log.observeValues(of: app, on: InlineExecutor())
        await host.attach(app.interaction)
        // Its camera for the AE/AF lock, as the virtual rig and the demo attach it (the app turns the lock on):
        // without it a light press held never locked over a port, and ae-af-lock.scenario could not say so.
        await host.attachCamera(app.device, focusExposureLock: app.focusExposureLock)
        do {
            let report = try await play(
                file, script, steps: steps, app: app, on: session, host: host, log: log, settleMicros: settleMicros,
                printingEvents: printingEvents)
            await host.attachCamera(nil)
            await host.detach(app.interaction)
            return ScenarioTestReport(file: file, results: report.results, seconds: seconds(ContinuousClock.now - began))
        } catch {
            await host.attachCamera(nil)
            await host.detach(app.interaction)
            throw error
        }
    }

    static func play(
        _ file: String, _ script: ScenarioScript, steps: ScenarioFiles.Steps, app: CameraApp, on session: DeviceSession,
        host: CameraControlHost, log: HostEventLog, settleMicros: UInt64, printingEvents: Bool
    ) async throws -> ScenarioTestReport {
        // A controls session of its own, in place of the previous scenario's: the host keeps the one it made
        // (makeControlsSession() returns it), with the previous app's controls and the control it selected.
        let controls = try CaptureControlsSession(capabilities: ControlsCapabilities(session.info.capabilities))
        await host.attach(controls)
        app.install(in: controls)
        app.interaction.setSessionRunning(true)
        log.reset()
        // The scenario starts when the device handles RunScenario: after a status call answered before it,
        // before one sent after its answer (the device handles requests in order). The windows open at the
        // earliest start and allow the latest.
        // The counters before: an expectation checks what this scenario added, not what the device counted
        // since it booted (earlier files, other tools, a damaged frame long ago).
        let countersAtStart = try await session.counters()
        let before = try await session.simulatorStatus().deviceTimeMicros
        _ = try await ScenarioFiles.play(steps, file: file, on: session)
        let playing = ContinuousClock.now
        let after = try await session.simulatorStatus().deviceTimeMicros
        let start = max(EmbeddedDevice.bootSettleMicros, before)
        let uncertainty = max(EmbeddedDevice.bootSettleMicros, after) - start
        // The host steps on the host's clock, from when RunScenario was answered (docs/SIMULATOR.md, "Host steps").
        for step in script.hostSteps {
            try await Task.sleep(until: playing + .microseconds(Int64(step.atMicros)))
            log.record(step, atDeviceMicros: start + step.atMicros)
            switch step.action {
            case .orientation(let orientation):
                await host.setInterfaceOrientation(orientation)
            case .format(let name):
                guard let index = app.camera.formats.firstIndex(where: { $0.name == name }) else {
                    throw CLIFailure(status: .failure, message: "\(file):\(step.line): the camera has no format \(name)")
                }
                try app.camera.setActiveFormat(index)
            }
        }
        try await Task.sleep(until: playing + .microseconds(Int64(script.durationMicros + settleMicros)))
        let counters = try? await session.counters()
        let end = (try? await session.simulatorStatus().deviceTimeMicros) ?? start + script.durationMicros + settleMicros
        let run = ScenarioRun(
            events: log.events, counters: counters, countersAtStart: countersAtStart, scenarioStartMicros: start, endMicros: end,
            startUncertaintyMicros: uncertainty, seesFirmwareFeedback: false)
        if printingEvents { printEvents(run, file: file) }
        return ScenarioTestReport(file: file, results: script.check(run))
    }
}

/// Link losses the host reported.
final class LossCounter: Sendable {
    private let value = Mutex(0)
    /// Losses so far.
    var count: Int { value.withLock { $0 } }
    /// One more.
    func add() { value.withLock { $0 += 1 } }
}
