import CameraControlCapture
import CameraControlGestures
import CameraControlSimulation
import CameraControlTestSupport
import CameraControlWire
import Testing

// Property tests over random scenarios: the real firmware plays each one, the real host stack turns it
// into capture events, and the capture rules must hold whatever the scenario and whatever single frames
// the link loses.

/// A random scenario and how many captures it must produce.
struct RandomScenario: CustomStringConvertible {
    /// The scenario text, one step per line.
    var text: String
    /// Full clicks + click-and-holds + button presses + remote clicks.
    var clickingSteps: Int

    var description: String { text }

    /// 3…8 random steps from the scenario syntax (no `force` step: its level would decide a capture).
    static func make(using rng: inout some RandomNumberGenerator) -> RandomScenario {
        var lines = ["seed \(UInt32.random(in: 1...1_000_000, using: &rng))"]
        var clicks = 0
        var touching = false
        func ms(_ range: ClosedRange<Int>) -> String { "\(Int.random(in: range, using: &rng))ms" }
        func at() -> String { "\(Double(Int.random(in: 5...95, using: &rng)) / 100)" }
        for _ in 0..<Int.random(in: 3...8, using: &rng) {
            switch Int.random(in: 0..<12, using: &rng) {
            case 0:
                lines.append("light-press force=\(Int.random(in: 950...2100, using: &rng))mN hold=\(ms(30...450))")
            case 1:
                lines.append("full-click force=\(Int.random(in: 3000...5000, using: &rng))mN hold=\(ms(20...300))")
                clicks += 1
            case 2:
                lines.append("click-and-hold \(ms(350...1200))")
                clicks += 1
            case 3:
                lines.append("double-light-press gap=\(ms(40...400)) hold=\(ms(40...200))")
            case 4:
                let force = Bool.random(using: &rng) ? " force=\(Int.random(in: 950...2000, using: &rng))mN" : ""
                lines.append("slide to=\(at()) over=\(ms(80...600))\(force)")
            case 5:
                let button = ["volume-up", "volume-down", "action"].randomElement(using: &rng)!
                lines.append("button \(button) hold=\(ms(30...900))")
                clicks += 1
            case 6:
                let count = Int.random(in: 1...3, using: &rng)
                lines.append("remote-click count=\(count)")
                clicks += count
            case 7, 8:
                lines.append("pause \(ms(0...400))")
            case 9:
                lines.append(touching ? "release" : "touch at=\(at()) hold=\(ms(0...150))")
                touching.toggle()
            case 10:
                lines.append("noise \(Bool.random(using: &rng) ? "on" : "off")")
            default:
                // A light press that escalates: press lightly, then click from there.
                lines.append("touch hold=\(ms(0...50))")
                lines.append("force \(Int.random(in: 950...2000, using: &rng))mN over=\(ms(20...80))")
                lines.append("full-click hold=\(ms(20...200))")
                lines.append("force 150mN over=\(ms(20...80))")
                touching = true
                clicks += 1
            }
        }
        if touching { lines.append("release") }
        return RandomScenario(text: lines.joined(separator: "\n"), clickingSteps: clicks)
    }
}

/// What a run broke of the capture rules (empty: none). With `expectedCaptures` (a clean run: link and
/// session up throughout) also: exactly that many captures, none cancelled, no default actions.
func captureRuleViolations(_ rig: VirtualCaptureRig, expectedCaptures: Int?) -> [String] {
    var violations: [String] = []
    var opened: [CaptureEventID: CaptureHandlerRole] = [:]
    var closed: [CaptureEventID: CaptureEventPhase] = [:]
    for (event, role) in rig.captureEvents {
        switch event.phase {
        case .began:
            if opened[event.id] != nil { violations.append("\(event.id) began twice") }
            opened[event.id] = role
        case .ended, .cancelled:
            guard let start = opened[event.id] else {
                violations.append("\(event.id) \(event.phase.rawValue) without began")
                continue
            }
            if let earlier = closed[event.id] {
                violations.append("\(event.id) \(event.phase.rawValue) after \(earlier.rawValue)")
            }
            if start != role { violations.append("\(event.id) began to \(start) but closed to \(role)") }
            closed[event.id] = event.phase
        }
    }
    for id in opened.keys where closed[id] == nil { violations.append("\(id) never closed") }
    let ended = closed.values.filter { $0 == .ended }.count
    if let expected = expectedCaptures {
        if ended != expected { violations.append("\(ended) captures for \(expected) clicking steps") }
        let cancelled = closed.values.filter { $0 == .cancelled }.count
        if cancelled != 0 { violations.append("\(cancelled) cancelled although the link and session stayed up") }
        if rig.outputs.contains(where: { if case .defaultAction = $0 { true } else { false } }) {
            violations.append("a default action although the session ran")
        }
    }
    return violations
}

@Suite("Capture properties over random scenarios on the real firmware")
struct CaptureScenarioPropertyTests {
    /// Scenario batches (run in parallel); each batch plays `perBatch` scenarios from its own seed.
    static let batches: [UInt64] = [1, 2, 3, 4]
    static let perBatch = 40

    /// Plays `scenario` on a fresh rig with `dropper` (if any) and returns the rig after a final session stop.
    private static func play(
        _ scenario: RandomScenario, seed: UInt64, hasSecondary: Bool, dropper: FrameDropper?
    ) throws
        -> VirtualCaptureRig
    {
        let rig = VirtualCaptureRig(seed: seed, router: .init(hasSecondaryHandler: hasSecondary))
        try rig.connect()
        dropper?.install(on: rig.link)
        try rig.device.play(scenario: scenario.text)
        rig.runUntilScenarioEnds(settleMicros: 500_000)
        rig.setSessionRunning(false)
        return rig
    }

    @Test("clean link: captures = clicking steps, each began closed once, nothing ended twice", arguments: batches)
    func cleanLink(batch: UInt64) async throws {
        // Seconds of computing in virtual time: off the cooperative pool, so the real-time tests keep running.
        let findings = try await onOwnThread("capture properties, clean link \(batch)") {
            try Self.cleanLinkFindings(batch: batch)
        }
        #expect(findings.problems.isEmpty, "\(findings.report)")
    }

    static func cleanLinkFindings(batch: UInt64) throws -> Findings {
        var findings = Findings()
        var rng = SeededGenerator(seed: 0xCA97_0000 + batch)
        var captures = 0
        for index in 0..<Self.perBatch {
            let scenario = RandomScenario.make(using: &rng)
            let rig = try Self.play(scenario, seed: batch * 1000 + UInt64(index), hasSecondary: Bool.random(using: &rng), dropper: nil)
            let violations = captureRuleViolations(rig, expectedCaptures: scenario.clickingSteps)
            findings.expect(violations.isEmpty, "scenario \(batch).\(index):\n\(scenario.text)\n\(violations)")
            if scenario.clickingSteps == 0 {
                findings.expect(rig.captureEvents.isEmpty, "no capture without a click, button or remote click:\n\(scenario.text)")
            }
            findings.expect(rig.linkLosses == 0, "scenario \(batch).\(index): the link died")
            captures += scenario.clickingSteps
        }
        findings.expect(captures > Self.perBatch, "the generator makes clicking steps")
        return findings
    }

    @Test("random single-frame drops both ways: no phantom or lost captures", arguments: batches)
    func lossyLink(batch: UInt64) async throws {
        // Seconds of computing in virtual time: off the cooperative pool, so the real-time tests keep running.
        let findings = try await onOwnThread("capture properties, lossy link \(batch)") {
            try Self.lossyLinkFindings(batch: batch)
        }
        #expect(findings.problems.isEmpty, "\(findings.report)")
    }

    static func lossyLinkFindings(batch: UInt64) throws -> Findings {
        var findings = Findings()
        var rng = SeededGenerator(seed: 0xD209_0000 + batch)
        var dropsTotal = 0
        var reliableDrops = 0
        for index in 0..<Self.perBatch {
            let scenario = RandomScenario.make(using: &rng)
            // Single-frame losses: never two frames in a row in the same direction. Reliable input events
            // and ACKs (what the capture depends on) are lost one time in five, everything else one in 30.
            var dropRNG = SeededGenerator(seed: rng.next())
            var lastDropped: [VirtualLink.Direction: Bool] = [:]
            let dropper = FrameDropper { frame in
                let precious = frame.packet.isReliable || frame.packet.type == .ack
                let odds = precious ? 5 : 30
                let drop = lastDropped[frame.direction] != true && Int.random(in: 0..<odds, using: &dropRNG) == 0
                lastDropped[frame.direction] = drop
                return drop
            }
            let rig = try Self.play(scenario, seed: batch * 1000 + UInt64(index), hasSecondary: Bool.random(using: &rng), dropper: dropper)
            let violations = captureRuleViolations(rig, expectedCaptures: scenario.clickingSteps)
            findings.expect(
                violations.isEmpty, "scenario \(batch).\(index) with \(dropper.dropped.count) drops:\n\(scenario.text)\n\(violations)")
            findings.expect(rig.linkLosses == 0, "scenario \(batch).\(index): the link died")
            dropsTotal += dropper.dropped.count
            reliableDrops += dropper.dropped.filter { $0.packet.isReliable }.count
        }
        findings.expect(dropsTotal > Self.perBatch, "frames were dropped")
        findings.expect(reliableDrops > 0, "reliable frames were among them")
        return findings
    }

    @Test(
        "unplugged at a random moment, re-plugged and reconnected: every began closed once, nothing phantom",
        arguments: batches)
    func randomUnplug(batch: UInt64) async throws {
        // Seconds of computing in virtual time: off the cooperative pool, so the real-time tests keep running.
        let findings = try await onOwnThread("capture properties, unplug \(batch)") {
            try Self.randomUnplugFindings(batch: batch)
        }
        #expect(findings.problems.isEmpty, "\(findings.report)")
    }

    static func randomUnplugFindings(batch: UInt64) throws -> Findings {
        var findings = Findings()
        var rng = SeededGenerator(seed: 0x0F_F000 + batch)
        var cancelledTotal = 0
        for index in 0..<(Self.perBatch / 2) {
            let scenario = RandomScenario.make(using: &rng)
            let rig = VirtualCaptureRig(seed: batch * 1000 + UInt64(index))
            try rig.connect()
            try rig.device.play(scenario: scenario.text)
            let unplugAfter = UInt64.random(in: 0...rig.device.scenarioDurationMicros, using: &rng)
            rig.run(forMicros: unplugAfter)
            rig.link.isUnplugged = true
            rig.run(forMicros: UInt64.random(in: 250_000...600_000, using: &rng))
            rig.link.isUnplugged = false
            findings.expect(rig.linkLosses == 1, "the host saw the link die")
            try rig.connect()
            rig.runUntilScenarioEnds(settleMicros: 500_000)
            rig.setSessionRunning(false)

            let violations = captureRuleViolations(rig, expectedCaptures: nil)
            let ended = rig.captureEvents.filter { $0.event.phase == .ended }.count
            let cancelled = rig.captureEvents.filter { $0.event.phase == .cancelled }.count
            findings.expect(
                violations.isEmpty, "scenario \(batch).\(index) unplugged at +\(unplugAfter) µs:\n\(scenario.text)\n\(violations)")
            findings.expect(ended <= scenario.clickingSteps, "no phantom captures:\n\(scenario.text)")
            // Steps run one after another, so at most one press is in flight when the cable goes.
            findings.expect(cancelled <= 1, "\(cancelled) cancelled:\n\(scenario.text)")
            cancelledTotal += cancelled
        }
        findings.expect(cancelledTotal > 0, "some unplugs hit a press in flight")
        return findings
    }

    @Test(
        "session started and stopped at random moments: each press goes to a handler or its default action, once",
        arguments: batches)
    func randomSessionToggles(batch: UInt64) async throws {
        // Seconds of computing in virtual time: off the cooperative pool, so the real-time tests keep running.
        let findings = try await onOwnThread("capture properties, session toggles \(batch)") {
            try Self.randomSessionTogglesFindings(batch: batch)
        }
        #expect(findings.problems.isEmpty, "\(findings.report)")
    }

    static func randomSessionTogglesFindings(batch: UInt64) throws -> Findings {
        var findings = Findings()
        var rng = SeededGenerator(seed: 0x5E55_0000 + batch)
        var defaultPresses = 0
        var cancelledTotal = 0
        for index in 0..<(Self.perBatch / 2) {
            let scenario = RandomScenario.make(using: &rng)
            let rig = VirtualCaptureRig(seed: batch * 1000 + UInt64(index))
            try rig.connect(startSession: Bool.random(using: &rng))
            try rig.device.play(scenario: scenario.text)
            let duration = rig.device.scenarioDurationMicros
            var toggles = (0..<Int.random(in: 1...4, using: &rng)).map { _ in UInt64.random(in: 0...duration, using: &rng) }
            toggles.sort()
            var violations: [String] = []
            var elapsed: UInt64 = 0
            for toggle in toggles {
                rig.run(forMicros: toggle - elapsed)
                elapsed = toggle
                let running = !rig.interaction.isSessionRunning
                let before = rig.outputs.count
                rig.setSessionRunning(running)
                // Starting never adopts a press in flight; stopping only cancels.
                for output in rig.outputs[before...] {
                    if case .event(let event, _) = output, event.phase != .cancelled || running {
                        violations.append("\(event.id) \(event.phase.rawValue) at a session change")
                    }
                }
            }
            rig.runUntilScenarioEnds(settleMicros: 500_000)
            rig.setSessionRunning(false)

            violations += captureRuleViolations(rig, expectedCaptures: nil)
            // Default actions pair up like events, and a press is either delivered or defaulted.
            var defaultOpen: Set<CaptureEventID> = []
            var defaultClosed = 0
            var handlerIDs: Set<CaptureEventID> = []
            for output in rig.outputs {
                switch output {
                case .event(let event, _):
                    handlerIDs.insert(event.id)
                case .defaultAction(let action):
                    if action.phase == .began {
                        defaultOpen.insert(action.id)
                    } else if defaultOpen.remove(action.id) != nil {
                        defaultClosed += 1
                    } else {
                        violations.append("default \(action.id) \(action.phase.rawValue) without began")
                    }
                    if handlerIDs.contains(action.id) { violations.append("\(action.id) reached a handler and its default") }
                case .defaultSound:
                    break
                }
            }
            if !defaultOpen.isEmpty { violations.append("default actions never closed: \(defaultOpen)") }
            if handlerIDs.count + defaultClosed != scenario.clickingSteps {
                violations.append("\(handlerIDs.count) delivered + \(defaultClosed) defaulted for \(scenario.clickingSteps) clicking steps")
            }
            findings.expect(violations.isEmpty, "scenario \(batch).\(index), toggles at \(toggles):\n\(scenario.text)\n\(violations)")
            defaultPresses += defaultClosed
            cancelledTotal += rig.captureEvents.filter { $0.event.phase == .cancelled }.count
        }
        findings.expect(defaultPresses > 0 && cancelledTotal > 0, "both kinds of press were exercised")
        return findings
    }
}
