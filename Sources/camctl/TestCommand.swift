import CameraAppExample
import CameraControlControls
import CameraControlDevice
import CameraControlEmbedded
import CameraControlHost
import CameraControlRPC
import CameraControlSimulation
import CameraControlWire
import Foundation

/// `camctl test`: plays scenario files and checks their `expect` lines against what the host pipeline
/// produced, in virtual time (the rig) or over a port (a simulator's). The grammar, the checker and the
/// report are CameraControlSimulation's (``ScenarioScript``, ``ScenarioTestReport``); this is the shell.
enum TestCommand {
    static let command = Command(
        name: "test", summary: "play scenarios and check their `expect` lines (PASS/FAIL, JUnit, exit 1 on failure)",
        usage: "SCENARIO… [--virtual | --port PORT] [--seed N] [--settle-ms N] [--junit FILE] [--quiet] [--events]",
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
            """,
        examples: [
            "test Firmware-sim/scenarios/*.scenario", "test full-click.scenario --port /dev/pts/4 --junit out.xml",
        ],
        run: run)

    static func run(_ argv: [String]) async throws {
        let args = try Arguments(
            argv, valued: ["port", "seed", "settle-ms", "junit"], switches: ["virtual", "quiet", "events"], positionals: ["SCENARIO"],
            variadic: true)
        guard !args.positional.isEmpty else { throw Arguments.Failure(description: "missing SCENARIO") }
        if args.flag("virtual") && args.value("port") != nil {
            throw Arguments.Failure(description: "--virtual and --port exclude each other")
        }
        let seed = try args.integer("seed", default: 1)
        let settle = UInt64(max(0, try args.integer("settle-ms", default: 2600))) * 1000
        var scripts: [(file: String, script: ScenarioScript)] = []
        for file in args.positional {
            let text = try ScenarioFiles.read(file)
            do {
                scripts.append((file, try ScenarioScript(text)))
            } catch {
                throw ScenarioFiles.failure(error, file: file, text: text)
            }
        }
        var reports: [ScenarioTestReport] = []
        if let port = args.value("port") {
            reports = try await runOverPort(port, scripts, settleMicros: settle, printingEvents: args.flag("events"))
        } else {
            for (file, script) in scripts {
                let began = ContinuousClock.now
                let run = try script.runVirtual(seed: UInt64(max(0, seed)), settleMicros: settle)
                if args.flag("events") { printEvents(run, file: file) }
                reports.append(
                    ScenarioTestReport(file: file, results: script.check(run), seconds: seconds(ContinuousClock.now - began)))
            }
        }
        for report in reports {
            print(report.text(onlyFailures: args.flag("quiet")), terminator: "")
        }
        if let junit = args.value("junit") {
            do {
                try ScenarioTestReport.junit(reports).write(toFile: junit, atomically: true, encoding: .utf8)
            } catch {
                throw CLIFailure(status: .failure, message: "cannot write \(junit): \(error.localizedDescription)")
            }
        }
        let failed = reports.reduce(0) { $0 + $1.failures.count }
        let total = reports.reduce(0) { $0 + $1.results.count }
        guard failed == 0 else {
            throw CLIFailure(status: .failure, message: "\(failed) of \(total) expectations failed")
        }
        print("all \(total) expectations passed in \(reports.count) scenario\(reports.count == 1 ? "" : "s")")
    }

    /// `--events`: the run's events, times from the scenario's start.
    static func printEvents(_ run: ScenarioRun, file: String) {
        print("\(file): events (ms from the scenario's start at \(run.scenarioStartMicros / 1000) ms device time)")
        for event in run.events {
            let relative = Int64(event.micros) - Int64(run.scenarioStartMicros)
            print(String(format: "  %9.1f  ", Double(relative) / 1000) + event.text)
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Connects once, sets up the example app, and plays each scenario in one `RunScenario`.
    static func runOverPort(
        _ port: String, _ scripts: [(file: String, script: ScenarioScript)], settleMicros: UInt64, printingEvents: Bool
    ) async throws -> [ScenarioTestReport] {
        let (host, _) = try await Ports.connectHost(port, hostName: "camctl test", configuration: .init(reconnects: false))
        guard let session = await host.session else {
            throw DeviceError(.closed, "the device went away before the test started")
        }
        let log = HostEventLog()
        await host.observe { log.record($0) }
        var app: CameraApp?
        let budget = ScenarioFiles.textBudget(maxFrameBytes: Int(session.info.capabilities.maxFrameBytes))

        var reports: [ScenarioTestReport] = []
        for (file, script) in scripts {
            let steps = ScenarioFiles.steps(of: script.text)
            guard steps.text.utf8.count <= budget else {
                throw CLIFailure(
                    status: .failure,
                    message: "\(file): \(steps.text.utf8.count) bytes of steps do not fit one request frame here "
                        + "(\(budget)); expectations need the scenario in one piece (or use --virtual)")
            }
            let began = ContinuousClock.now
            // Each scenario on a fresh app (its own last-used control, its own photo count).
            if let previous = app { await host.detach(previous.interaction) }
            let fresh = try CameraApp(executor: InlineExecutor(), soundPlayer: host) { log.record($0) }
            log.observeValues(of: fresh, on: InlineExecutor())
            await host.attach(fresh.interaction)
            fresh.install(in: try await host.makeControlsSession())
            fresh.interaction.setSessionRunning(true)
            app = fresh
            log.reset()
            // The scenario starts when the device handles RunScenario: after a status call answered before
            // it, before one sent after its answer (the device handles requests in order). The window's
            // start is the earliest, its end allows the latest.
            let before: UInt64
            let after: UInt64
            do {
                before = try await session.simulatorStatus().deviceTimeMicros
                _ = try await ScenarioFiles.play(steps, file: file, on: session)
                after = try await session.simulatorStatus().deviceTimeMicros
            } catch let error as RPCError where error.code == .unavailable {
                throw CLIFailure(
                    status: .failure, message: "\(file): the device was lost: \(error)",
                    hint: "a host starved of CPU misses the device's 200 ms heartbeat deadline, as with real hardware")
            }
            let start = max(EmbeddedDevice.bootSettleMicros, before)
            let uncertainty = max(EmbeddedDevice.bootSettleMicros, after) - start
            try await Task.sleep(for: .microseconds(Int64(script.durationMicros + settleMicros)))
            let counters = try? await session.counters()
            let end = (try? await session.simulatorStatus().deviceTimeMicros) ?? start + script.durationMicros + settleMicros
            let run = ScenarioRun(
                events: log.events, counters: counters, scenarioStartMicros: start, endMicros: end,
                startUncertaintyMicros: uncertainty, seesFirmwareFeedback: false)
            if printingEvents { printEvents(run, file: file) }
            reports.append(
                ScenarioTestReport(file: file, results: script.check(run), seconds: seconds(ContinuousClock.now - began)))
        }
        await host.stop()
        return reports
    }
}
