import CameraControlCapture
import CameraControlGestures
import CameraControlHost
import CameraControlRPC
import CameraControlTools
import CameraControlWire
import Foundation
import Synchronization

/// `camctl diagnose PORT`: a guided check of every input the device announces in its handshake (each
/// button, the remote, the force sensor, touch and the slide strip). Each step asks for one action —
/// "press volume up", "light press", "slide to the top", "double light press", "click the remote" — and
/// waits for what the host pipeline (``CameraControlHost``: gestures, capture events) makes of it; the
/// event is attributed to the physical input that made it (its `source`), which must be the one asked
/// for. A pass/fail table comes at the end, and the exit status is 1 when a step failed.
///
/// On a device that announces the simulator capability (`camctl-sim`), each action is played by the device
/// itself through `SimulatorService/RunScenario`, one small scenario per step (docs/SIMULATOR.md), so the
/// check runs unattended; on real hardware a person is prompted and each step waits up to `--timeout`.
enum Diagnose {
    static let command = Command(
        name: "diagnose", summary: "a guided check of every input the device announces, each event attributed to its source",
        usage: "PORT [--timeout S] [--ask] [--json]",
        details: """
            One step per input the handshake announces: each button ("press volume up"), the remote ("click the
            remote"), the force sensor ("light press", "click", "double light press"), touch and the slide strip
            ("slide to the top"). A step passes when the host pipeline recognises the action and it came from the
            input asked for; it fails when it came from another input, or nothing came in time. A table ends the
            run; exit status 1 when a step failed, with a hint to fix the link first when it lost or damaged frames
            during the check (the host's counts over its one session: diagnose does not reconnect, and a device that
            goes away ends the check, exit 1). A simulator (it announces the capability) plays each action itself
            (SimulatorService/RunScenario); on real hardware a person is prompted.
              --timeout S   seconds to wait for each action (default 10; on a simulator, after its scenario)
              --ask         ask a person for each action even when the device announces the simulator capability
                            (a board whose firmware has SimulatorService besides its real inputs)
              --json        one object per line: {"type": "connected", "identity", "sessionId"}, then per step
                            {"type": "step", "step", "instruction", "expected", "expectedSource", "result":
                            "pass"|"fail", "seen"?: {"event", "source", "deviceTimeUs"}, "sources", "reason",
                            "simulated"}, then {"type": "summary", "passed", "failed"}; prompts go to stderr
            """,
        examples: [
            "diagnose /dev/ttyACM0", "diagnose auto --timeout 20", "diagnose /tmp/camctl0 --json | jq -c 'select(.type==\"step\")'",
        ],
        run: run)

    // MARK: Steps

    /// What a step waits for.
    enum Expectation: Sendable, Equatable {
        /// A gesture of this kind (``GestureKind/name``).
        case gesture(String)
        /// A slide gesture at or past this position (0…1).
        case slide(atLeast: Double)
        /// A capture event of this phase.
        case capture(CaptureEventPhase)

        /// As the table shows it.
        var text: String {
            switch self {
            case .gesture(let name): name
            case .slide(let position): String(format: "slide to ≥ %.2f", position)
            case .capture(let phase): "capture \(phase.rawValue)"
            }
        }

        /// True when `observation` is the kind of event this step waits for (whatever its source).
        func matches(_ observation: Observation) -> Bool {
            switch (self, observation) {
            case (.gesture(let name), .gesture(let gesture)):
                return gesture.kind.name == name
            case (.slide(let least), .gesture(let gesture)):
                switch gesture.kind {
                case .slideBegan(let m), .slideChanged(let m), .slideEnded(let m): return m.position >= least
                default: return false
                }
            case (.capture(let phase), .capture(let event)):
                return event.phase == phase
            default:
                return false
            }
        }
    }

    /// One check: what to ask for, the scenario that does it on a simulator, and what must come of it.
    struct Step: Sendable, Equatable {
        /// A short stable name (`volume-up`, `light-press`, `slide-to-top`).
        var name: String
        /// What a person is asked to do.
        var instruction: String
        /// The scenario a simulator plays for it (docs/SIMULATOR.md).
        var scenario: String
        /// The input the event must come from.
        var source: InputSource
        /// The event that shows the action was recognised.
        var expectation: Expectation
    }

    /// The steps for what the device announces, in order: buttons and the remote, then the Camera Control's
    /// force sensor, touch and slide strip.
    static func steps(for capabilities: Capabilities) -> [Step] {
        var steps: [Step] = []
        for button in capabilities.buttons {
            switch button {
            case .volumeUp:
                steps.append(
                    Step(
                        name: "volume-up", instruction: "press volume up", scenario: "button volume-up", source: .volumeUp,
                        expectation: .gesture("press-began")))
            case .volumeDown:
                steps.append(
                    Step(
                        name: "volume-down", instruction: "press volume down", scenario: "button volume-down", source: .volumeDown,
                        expectation: .gesture("press-began")))
            case .actionButton:
                steps.append(
                    Step(
                        name: "action-button", instruction: "press the action button", scenario: "button action", source: .actionButton,
                        expectation: .gesture("press-began")))
            case .remote:
                steps.append(
                    Step(
                        name: "remote-click", instruction: "click the remote", scenario: "remote-click", source: .remote,
                        expectation: .gesture("remote-click")))
            default:
                continue
            }
        }
        if capabilities.hasForceSensor {
            steps.append(
                Step(
                    name: "light-press", instruction: "make a light press on the Camera Control (press lightly, do not click)",
                    scenario: "light-press", source: .cameraControl, expectation: .gesture("light-press-began")))
            steps.append(
                Step(
                    name: "click", instruction: "click the Camera Control (press it all the way down, then let go)",
                    scenario: "full-click", source: .cameraControl, expectation: .capture(.ended)))
            steps.append(
                Step(
                    name: "double-light-press", instruction: "make a double light press on the Camera Control (two quick light presses)",
                    scenario: "double-light-press", source: .cameraControl, expectation: .gesture("double-light-press")))
        }
        if capabilities.hasTouchSensor {
            steps.append(
                Step(
                    name: "touch", instruction: "touch the Camera Control, then lift your finger",
                    scenario: "touch at=0.5\nwait 150ms\nrelease",
                    source: .cameraControl, expectation: .gesture("touch-began")))
        }
        if capabilities.hasSlideStrip {
            steps.append(
                Step(
                    name: "slide-to-top", instruction: "slide your finger along the Camera Control to the top (its far end)",
                    scenario: "touch at=0.2\nslide to=0.95 over=300ms\nrelease", source: .cameraControl,
                    expectation: .slide(atLeast: 0.8)))
        }
        return steps
    }

    // MARK: Observing

    /// What the host pipeline delivered during a step.
    enum Observation: Sendable {
        /// A recognised gesture.
        case gesture(Gesture)
        /// A capture event (from the attached interaction).
        case capture(CaptureEvent)

        /// The physical input that made it.
        var source: InputSource {
            switch self {
            case .gesture(let gesture): gesture.source
            case .capture(let event): event.source
            }
        }

        /// `press-began`, `capture ended`, `slide-changed at 0.83`, …
        var label: String {
            switch self {
            case .gesture(let gesture):
                switch gesture.kind {
                case .slideBegan(let m), .slideChanged(let m), .slideEnded(let m):
                    String(format: "%@ at %.2f", gesture.kind.name, m.position)
                default: gesture.kind.name
                }
            case .capture(let event): "capture \(event.phase.rawValue)"
            }
        }

        /// Device time of the event, microseconds.
        var deviceMicros: UInt64 {
            switch self {
            case .gesture(let gesture): gesture.timestampMicros
            case .capture(let event): event.deviceTimestampMicros
            }
        }
    }

    /// What the step in progress saw (filled from the host's callbacks, read by the step loop): the first
    /// event of the kind it waits for, every input that made an event, and the kinds of event seen.
    /// Bounded: a person may slide for minutes.
    final class StepLog: Sendable {
        /// The step's record so far.
        struct Record: Sendable {
            var expectation: Expectation?
            var sinceDeviceMicros: UInt64 = 0
            var match: Observation?
            var sources: [InputSource] = []
            var labels: Set<String> = []
        }
        private let record = Mutex(Record())

        /// Starts a new step waiting for `expectation`: forgets what came before, and ignores events from
        /// before device time `since` (the tail of the previous step, however late it arrives).
        func reset(expecting expectation: Expectation, sinceDeviceMicros since: UInt64) {
            record.withLock { $0 = Record(expectation: expectation, sinceDeviceMicros: since) }
        }

        /// Adds one observation.
        func add(_ observation: Observation) {
            record.withLock { r in
                guard r.expectation != nil, observation.deviceMicros >= r.sinceDeviceMicros else { return }
                if r.match == nil, r.expectation?.matches(observation) == true { r.match = observation }
                if !r.sources.contains(observation.source) { r.sources.append(observation.source) }
                r.labels.insert(observation.label)
            }
        }

        /// What the step saw so far.
        var current: Record { record.withLock { $0 } }
    }

    /// How one step went.
    struct Outcome: Sendable {
        /// The step.
        var step: Step
        /// The event that matched the expectation, if one came.
        var seen: Observation?
        /// Every input that made an event during the step, in order of first appearance.
        var sources: [InputSource]
        /// True when the expected event came from the expected input.
        var passed: Bool
        /// Why it passed or failed, in words.
        var reason: String
        /// True when the device played the action itself.
        var simulated: Bool
    }

    /// Judges a step from what it saw: the first event of the expected kind decides; its source must be
    /// the step's.
    static func judge(_ step: Step, record: StepLog.Record, simulated: Bool, timeoutSeconds: Int) -> Outcome {
        let sources = record.sources
        guard let seen = record.match else {
            var reason = "no \(step.expectation.text) within \(timeoutSeconds) s"
            if !record.labels.isEmpty {
                reason +=
                    "; saw \(record.labels.sorted().joined(separator: ", ")) from \(sources.map(\.description).joined(separator: ", "))"
            }
            return Outcome(step: step, seen: nil, sources: sources, passed: false, reason: reason, simulated: simulated)
        }
        let passed = seen.source == step.source
        let reason = passed ? "\(seen.label) from \(seen.source)" : "\(seen.label) came from \(seen.source), expected \(step.source)"
        return Outcome(step: step, seen: seen, sources: sources, passed: passed, reason: reason, simulated: simulated)
    }

    // MARK: Running

    static func run(_ argv: [String]) async throws {
        let args = try Arguments(argv, valued: ["timeout"], switches: ["json", "ask"], positionals: ["PORT"])
        let timeout = try args.integer("timeout", default: 10)
        guard timeout > 0 else { throw Arguments.Failure(description: "--timeout wants a number of seconds above 0, not \(timeout)") }
        let json = args.flag("json")
        let (host, path) = try await Ports.connectHost(
            try args.required(0, "PORT"), hostName: "camctl diagnose", configuration: .init(reconnects: false))
        guard let info = await host.deviceInfo else { throw CLIFailure(status: .failure, message: "the device went away at once") }
        let log = StepLog()
        await host.observe { effect in
            if case .gesture(let gesture) = effect { log.add(.gesture(gesture)) }
        }
        let interaction = CaptureEventInteraction(
            soundPlayer: host, primary: { log.add(.capture($0)) }, secondary: { log.add(.capture($0)) })
        await host.attach(interaction)
        interaction.setSessionRunning(true)

        let steps = steps(for: info.capabilities)
        let simulated = info.capabilities.isSimulator && !args.flag("ask")
        // A device whose own settings switch the Camera Control off sends none of its events: its steps fail
        // for that, not for the wiring (the hint says so).
        var cameraControlOff = false
        if info.capabilities.hasSettings, let session = await host.session {
            cameraControlOff = (try? await session.settings().settings?.cameraControl) == .off
        }
        if json {
            print(Monitor.connectedJSON(info))
        } else {
            let identity = info.identity
            print("diagnose \(identity.vendor) \(identity.model), serial \(identity.serialNumber), on \(path)")
            print(
                "\(steps.count) steps"
                    + (simulated ? "; the simulator plays each action itself" : "; do each action when asked (\(timeout) s each)"))
        }
        guard !steps.isEmpty else {
            await host.stop()
            throw CLIFailure(status: .failure, message: "the device announces no inputs to check (no buttons, remote or sensors)")
        }

        var outcomes: [Outcome] = []
        var sessionLost = false  // the device answered "no session" (FAILED_PRECONDITION) to a step
        func report(_ outcome: Outcome) {
            outcomes.append(outcome)
            if json {
                print(Self.json(outcome).compactText)
            } else {
                print("    \(outcome.passed ? "PASS" : "FAIL")  \(outcome.reason)")
            }
        }
        for (index, step) in steps.enumerated() {
            let progress = "step \(index + 1)/\(steps.count): \(step.instruction)"
            // The step starts now in device time: what happened before it is not its.
            var since: UInt64 = 0
            if let session = await host.session, let reply = try? await session.ping() { since = reply.deviceTimeMicros }
            log.reset(expecting: step.expectation, sinceDeviceMicros: since)
            var deadline = ContinuousClock.now + .seconds(timeout)
            var settleUntil = ContinuousClock.now
            if simulated {
                if !json { print("\(progress) (played by the simulator)") }
                guard let session = await host.session else {
                    report(Outcome(step: step, seen: nil, sources: [], passed: false, reason: "the device went away", simulated: true))
                    continue
                }
                do {
                    let played = try await session.runScenario("noise off\n\(step.scenario)\n")
                    let length = Duration.microseconds(Int64(played.durationMicros))
                    deadline = ContinuousClock.now + length + .seconds(timeout)
                    settleUntil = ContinuousClock.now + length + .milliseconds(300)
                } catch {
                    // "handshake first": the device ended the session (frames lost on the link, or it reset)
                    // while the host still held it; the wiring has nothing to do with it.
                    let noSession = error.code == .failedPrecondition
                    sessionLost = sessionLost || noSession
                    let reason =
                        noSession
                        ? "the device had ended the session (it answered \(error.message)): "
                            + "frames lost on the link, or the device reset"
                        : "the simulator did not play it: \(error)"
                    report(Outcome(step: step, seen: nil, sources: [], passed: false, reason: reason, simulated: true))
                    continue
                }
            } else {
                let prompt = ">>> \(progress) (\(timeout) s)\n"
                if json {
                    StandardStreams.write(prompt, to: 2)
                } else {
                    StandardStreams.output(prompt)
                }
            }
            // Wait for the event, then let the action finish (its release, the rest of its scenario), so its
            // tail is not taken for the next step's.
            while ContinuousClock.now < deadline, log.current.match == nil {
                if await host.session == nil { break }
                try? await Task.sleep(for: .milliseconds(20))
            }
            let settle = max(settleUntil, ContinuousClock.now + .milliseconds(simulated ? 150 : 600))
            try? await Task.sleep(until: settle)
            report(judge(step, record: log.current, simulated: simulated, timeoutSeconds: timeout))
        }
        let lost = await host.lastDisconnect
        let link = await host.session?.client.counters
        await host.stop()

        let failed = outcomes.filter { !$0.passed }
        if json {
            print(
                JSONValue.object([
                    JSONMember("type", .string("summary")), JSONMember("passed", .integer(outcomes.count - failed.count)),
                    JSONMember("failed", .integer(failed.count)),
                ]).compactText)
        } else {
            print("")
            print(table(outcomes))
        }
        if let lost { throw CLIFailure(status: .failure, message: "the device went away during the check: \(lost)") }
        if !failed.isEmpty {
            throw CLIFailure(
                status: .failure,
                message: "\(failed.count) of \(outcomes.count) steps failed: \(failed.map(\.step.name).joined(separator: ", "))",
                hint: failureHint(
                    checkErrors: link?.wire.checkErrors ?? 0, sequenceGaps: link?.sequenceGaps ?? 0, sessionLost: sessionLost,
                    cameraControlOff: cameraControlOff && failed.contains { $0.step.source == .cameraControl })
            )
        }
    }

    /// What to do about failed steps. The counts are the host's over the whole check: diagnose keeps its one
    /// session (it does not reconnect; a device that goes away ends the check), so they are that session's,
    /// from its handshake on. A link that lost or damaged frames (or a session the device ended) comes first: a
    /// lossy link loses best-effort events (touch, slide) and sessions, and the failures say nothing of the
    /// wiring until it is clean. Camera Control steps that failed on a device whose settings switch it off
    /// (`cameraControlOff`) failed for that, and the hint says so first.
    static func failureHint(checkErrors: UInt64, sequenceGaps: UInt64, sessionLost: Bool, cameraControlOff: Bool = false) -> String {
        if cameraControlOff {
            return "the device's settings switch the Camera Control off (camera-control off: it sends none of its "
                + "events); turn it on with `camctl settings PORT camera-control=on` and check again"
        }
        guard checkErrors + sequenceGaps > 0 || sessionLost else {
            return "a wrong source means the firmware reports the input under another name (check its wiring and "
                + "button table); nothing in time means the input is not seen at all"
        }
        return "the link lost or damaged frames during the check (\(checkErrors) check errors, \(sequenceGaps) sequence gaps"
            + "\(sessionLost ? ", a session ended by the device" : ""), counted by the host over its one session): "
            + "best-effort events such as touch are not resent; fix the link (cable, baud rate, `camctl counters`) "
            + "and check again before judging the wiring"
    }

    /// The pass/fail table: step, expected source, what was seen, result.
    static func table(_ outcomes: [Outcome]) -> String {
        let header = ["step", "expected", "from", "seen", "result"]
        var rows = [header]
        for outcome in outcomes {
            let seen = outcome.seen.map { "\($0.label) from \($0.source)" } ?? "nothing"
            rows.append([
                outcome.step.name, outcome.step.expectation.text, outcome.step.source.description, seen,
                outcome.passed ? "PASS" : "FAIL",
            ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        let lines = rows.map { row in
            row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
        let passed = outcomes.filter(\.passed).count
        return (lines + ["", "\(passed) of \(outcomes.count) steps passed"]).joined(separator: "\n")
    }

    /// One step's outcome as a `--json` line.
    static func json(_ outcome: Outcome) -> JSONValue {
        var members = [
            JSONMember("type", .string("step")), JSONMember("step", .string(outcome.step.name)),
            JSONMember("instruction", .string(outcome.step.instruction)), JSONMember("expected", .string(outcome.step.expectation.text)),
            JSONMember("expectedSource", .string(outcome.step.source.description)),
            JSONMember("result", .string(outcome.passed ? "pass" : "fail")),
        ]
        if let seen = outcome.seen {
            members.append(
                JSONMember(
                    "seen",
                    .object([
                        JSONMember("event", .string(seen.label)), JSONMember("source", .string(seen.source.description)),
                        JSONMember("deviceTimeUs", seen.deviceMicros.jsonValue),
                    ])))
        }
        members.append(JSONMember("sources", .array(outcome.sources.map { .string($0.description) })))
        members.append(JSONMember("reason", .string(outcome.reason)))
        members.append(JSONMember("simulated", .bool(outcome.simulated)))
        return .object(members)
    }
}
