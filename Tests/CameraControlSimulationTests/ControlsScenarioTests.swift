import CameraAppExample
import CameraControlControls
import CameraControlEmbedded
import CameraControlRPC
import CameraControlSimulation
import CameraControlWire
import Foundation
import Testing

/// The controls issue's "Done when", over the real C firmware and the real host stack in virtual time
/// (``VirtualControlsRig``): scenario files replayed and their inline `expect` lines checked
/// (`Tests/Scenarios/*.scenario`, docs/SIMULATOR.md "Expectations"), plus targeted checks (detent latency, the firmware's own click, disabled
/// controls, zoom changed from elsewhere, `canAddControl` refusals).
///
/// `camctl test --events FILE` prints every event a scenario produces (what an expectation can name).
@Suite("Controls scenarios over the real firmware")
struct ControlsScenarioTests {
    // MARK: Scenario files

    /// `Tests/Scenarios`, found from this file's path.
    static let scenariosDirectory: String = {
        let tests = String(#filePath).split(separator: "/").dropLast(2).joined(separator: "/")
        return "/" + tests + "/Scenarios"
    }()

    /// The scenario files, each with its expectations (`demo` is the demo's own tour,
    /// `Firmware-sim/scenarios/demo.scenario`).
    static let scenarioNames = ["seed-talk", "exposure-detents", "reactions-picker", "demo"]

    /// `Firmware-sim/scenarios`, found from this file's path.
    static let firmwareScenariosDirectory: String = {
        let root = String(#filePath).split(separator: "/").dropLast(3).joined(separator: "/")
        return "/" + root + "/Firmware-sim/scenarios"
    }()

    static func text(_ name: String, _ ext: String) throws -> String {
        if name == "demo" && ext == "scenario" {
            return try String(contentsOfFile: "\(firmwareScenariosDirectory)/demo.scenario", encoding: .utf8)
        }
        return try String(contentsOfFile: "\(scenariosDirectory)/\(name).\(ext)", encoding: .utf8)
    }

    /// Plays a scenario file on a fresh rig and returns the rig after the overlay has settled.
    static func replay(_ name: String, reactionsEnabled: Bool = true) throws -> VirtualControlsRig {
        let rig = try VirtualControlsRig(seed: 1, reactionsEnabled: reactionsEnabled)
        try rig.play(scenario: try text(name, "scenario"))
        rig.runUntilScenarioEnds()
        return rig
    }

    /// Lines of the log that match `prefix` after the time column.
    static func lines(_ rig: VirtualControlsRig, _ prefix: String) -> [String] {
        rig.log.map { String($0.dropFirst(10)) }.filter { $0.hasPrefix(prefix) }
    }

    @Test(
        "each scenario's inline expect lines hold (what its .expected log used to say)",
        arguments: scenarioNames)
    func scenarioExpectationsHold(name: String) throws {
        let script = try ScenarioScript(try Self.text(name, "scenario"))
        #expect(script.expectations.count >= 10, "the scenario says what must happen")
        let report = ScenarioTestReport(file: name, results: script.check(try script.runVirtual(seed: 1)))
        #expect(report.failures.isEmpty, "\(report.text)")
        // Two runs give the same events (the checks are meaningful).
        #expect(try script.runVirtual(seed: 1).events == (try script.runVirtual(seed: 1).events))
    }

    /// The fenced blocks of README.md and docs/*.md that hold `expect` lines: scenarios a reader copies.
    static func documentedScenarios() throws -> [(place: String, text: String)] {
        let root = URL(fileURLWithPath: firmwareScenariosDirectory).deletingLastPathComponent().deletingLastPathComponent()
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        var found: [(place: String, text: String)] = []
        for doc in ["README.md"] + docs {
            let lines = try String(contentsOf: root.appendingPathComponent(doc), encoding: .utf8).split(
                separator: "\n", omittingEmptySubsequences: false)
            var block: (start: Int, lines: [Substring])?
            for (number, line) in lines.enumerated() {
                guard line.hasPrefix("```") else {
                    block?.lines.append(line)
                    continue
                }
                if let open = block {
                    if open.lines.contains(where: { $0.hasPrefix("expect ") }) {
                        found.append(("\(doc):\(open.start)", open.lines.joined(separator: "\n") + "\n"))
                    }
                    block = nil
                } else {
                    block = (number + 1, [])
                }
            }
        }
        return found
    }

    @Test("every scenario with expectations in the README and docs/ passes as shown")
    func documentedScenariosPass() throws {
        let documented = try Self.documentedScenarios()
        #expect(documented.contains { $0.place.hasPrefix("docs/SIMULATOR.md:") }, "SIMULATOR.md §7's example was not found")
        for (place, text) in documented {
            let script = try ScenarioScript(text)
            let report = ScenarioTestReport(file: place, results: script.check(try script.runVirtual(seed: 1)))
            #expect(report.failures.isEmpty, "\(report.text)")
        }
    }

    @Test("a wrong inline expectation fails, naming its line, with the events around it")
    func wrongExpectationFails() throws {
        let text = try Self.text("seed-talk", "scenario")
            .replacingOccurrences(of: "expect photo 1 zoom 2.395±0.001 bias 0", with: "expect photo 1 zoom 3±0.001 bias 0")
        let script = try ScenarioScript(text)
        let report = ScenarioTestReport(file: "seed-talk", results: script.check(try script.runVirtual(seed: 1)))
        let failure = try #require(report.failures.first)
        #expect(report.failures.count == 1)
        #expect(failure.expectation.text == "photo 1 zoom 3±0.001 bias 0")
        #expect(failure.context.contains { $0.text == "photo 1 zoom 2.395 bias 0" })
        #expect(report.text.contains("FAIL seed-talk:\(failure.expectation.line) expect photo 1 zoom 3±0.001 bias 0"))
    }

    @Test(
        "every scenario: delegate order, haptics delivered, one photo per capture",
        arguments: scenarioNames)
    func scenarioInvariants(name: String) throws {
        let rig = try Self.replay(name)
        // Delegate: (active (enter exit)? inactive)*, exit before inactive, the overlay hidden at the end.
        let delegate = Self.lines(rig, "delegate ").map { String($0.dropFirst("delegate ".count)) }
        var expectedNext = ["did-become-active"]
        for call in delegate {
            #expect(expectedNext.contains(call), "delegate order: \(delegate)")
            switch call {
            case "did-become-active": expectedNext = ["will-enter-fullscreen", "did-become-inactive"]
            case "will-enter-fullscreen": expectedNext = ["will-exit-fullscreen"]
            case "will-exit-fullscreen": expectedNext = ["did-become-inactive"]
            default: expectedNext = ["did-become-active"]
            }
        }
        #expect(delegate.last == "did-become-inactive")
        #expect(rig.session.phase == .hidden)
        // Every haptic the host asked for was accepted by the firmware and played.
        #expect(!rig.hapticRequests.isEmpty)
        for request in rig.hapticRequests {
            #expect(request.outcome.map { $0 == nil } == true, "PlayHaptic \(request.haptic) at \(request.causeMicros)")
        }
        let played = rig.firmwareFeedback.filter {
            if case .haptic(let pattern, _) = $0.kind {
                return pattern == FeedbackRecord.HapticPattern.detent || pattern == FeedbackRecord.HapticPattern.limit
            }
            return false
        }
        #expect(played.count == rig.hapticRequests.count)
        // One photo per capture `ended` (a full click or a capture button), none otherwise; every capture
        // that began ended.
        let ended = Self.lines(rig, "capture ended ").count
        #expect(rig.camera.photos.count == ended)
        #expect(Self.lines(rig, "capture began ").count == ended)
    }

    // MARK: The seed talk's whole interaction

    @Test("seed talk: zoom by sliding, double light press to the picker, a reaction, a photo")
    func seedTalk() throws {
        let rig = try Self.replay("seed-talk")
        let log = rig.log.map { String($0.dropFirst(10)) }
        // Zoom went up, through the prominent 2× with a detent.
        let zoomValues = Self.lines(rig, "value zoom ").compactMap { Double($0.split(separator: " ")[2]) }
        #expect(zoomValues.count > 3)
        #expect(zoomValues == zoomValues.sorted(), "zoom increases while sliding up: \(zoomValues)")
        #expect(zoomValues.contains(2))
        #expect(rig.camera.zoomFactor > 2)
        #expect(Self.lines(rig, "action zoom ").count == zoomValues.count)
        // The picker switched to reactions, and a reaction was chosen (its action ran on each index).
        #expect(log.contains("overlay control-selected reactions"))
        #expect(rig.reactions.selectedIndex > 0)
        #expect(Self.lines(rig, "action reactions ").last?.hasPrefix("action reactions #\(rig.reactions.selectedIndex)") == true)
        // The photo on the full click, while the overlay showed reactions, with the zoom chosen.
        #expect(rig.camera.photos.count == 1)
        #expect(rig.camera.photos.first?.zoomFactor == rig.camera.zoomFactor)
        let photo = try #require(log.firstIndex { $0.hasPrefix("photo 1") })
        let ended = try #require(log.firstIndex { $0 == "capture ended primary camera-control" })
        #expect(ended == photo - 1)
        // Exposure was not touched.
        #expect(rig.camera.exposureBias == 0)
    }

    // MARK: Detents

    @Test("exposure detents: one per 1/3 EV step, each played by the firmware within 5 ms of its sample")
    func exposureDetentsReachFirmwareInTime() throws {
        let rig = try Self.replay("exposure-detents")
        // The samples that changed exposure, and the detents played while exposure was the active control.
        var exposureChanges: [UInt64] = []
        var detents: [UInt64] = []
        var adjustingExposure = false
        for (effect, at) in rig.effects {
            switch effect {
            case .controlSelected(let id): adjustingExposure = id == "exposure-bias"
            case .valueChanged("exposure-bias", _, .slider): exposureChanges.append(at)
            case .haptic(.detent, let cause) where adjustingExposure: detents.append(cause)
            default: break
            }
        }
        let values = Self.lines(rig, "value exposure-bias ").compactMap { Double($0.split(separator: " ")[2]) }
        #expect(values.count >= 4, "several steps: \(values)")
        for pair in zip(values, values.dropFirst()) {
            let steps = abs(pair.1 - pair.0) * 3
            #expect(abs(steps - steps.rounded()) < 0.01 && steps.rounded() >= 1, "1/3 EV steps: \(values)")
        }
        // A detent on exactly the samples that changed the value (one per sample), stamped with the sample.
        #expect(detents == exposureChanges)

        // Every detent the host decided reached the firmware within 5 ms of the crossing sample.
        let hostDetents = rig.hapticRequests.filter { $0.haptic == .detent }
        let firmwareDetents = rig.firmwareFeedback.filter {
            if case .haptic(FeedbackRecord.HapticPattern.detent, _) = $0.kind { return true }
            return false
        }
        #expect(hostDetents.count == firmwareDetents.count)
        #expect(hostDetents.count >= detents.count)
        for (request, played) in zip(hostDetents, firmwareDetents) {
            #expect(played.timestampMicros >= request.causeMicros)
            #expect(
                played.timestampMicros - request.causeMicros <= 5_000,
                "detent caused at \(request.causeMicros) µs played at \(played.timestampMicros) µs")
        }
    }

    @Test("the firmware plays its own click at the full press and its release, with no host call")
    func firmwareClickAtFullPress() throws {
        let rig = try VirtualControlsRig(seed: 2)
        try rig.play(scenario: "full-click force=3500mN hold=80ms\npause 200ms\n")
        rig.runUntilScenarioEnds(settleMicros: 300_000)
        let down = try #require(rig.captureRig.inputEvents.first { $0.kind == .fullPressDown })
        let up = try #require(rig.captureRig.inputEvents.first { $0.kind == .fullPressUp })
        let haptics = rig.firmwareFeedback.compactMap { record -> (UInt32, UInt64)? in
            if case .haptic(let pattern, _) = record.kind { return (pattern, record.timestampMicros) }
            return nil
        }
        #expect(haptics.map(\.0) == [FeedbackRecord.HapticPattern.click, FeedbackRecord.HapticPattern.release])
        #expect(haptics.first?.1 == down.timestampMicros)
        #expect(haptics.last?.1 == up.timestampMicros)
        #expect(rig.hapticRequests.isEmpty, "the host sent no haptic")
        #expect(rig.camera.photos.count == 1)
    }

    // MARK: Disabled control

    @Test("a disabled picker is listed and selectable, but slides leave its index alone; code still sets it")
    func disabledControl() throws {
        let rig = try Self.replay("reactions-picker", reactionsEnabled: false)
        let log = rig.log.map { String($0.dropFirst(10)) }
        #expect(log.contains("overlay picker-moved 2"), "listed in the picker")
        #expect(log.contains("overlay control-selected reactions"), "selectable")
        #expect(log.contains("overlay overlay-shown reactions"), "shown again on the next light press")
        #expect(rig.reactions.selectedIndex == 0)
        #expect(Self.lines(rig, "value reactions").isEmpty)
        #expect(Self.lines(rig, "action reactions").isEmpty)
        // The same scenario with the picker enabled does change it (the slides do reach it).
        let enabled = try Self.replay("reactions-picker")
        #expect(enabled.reactions.selectedIndex != 0)
        // Code can still set a disabled control; observers see it, the action does not run.
        try rig.reactions.setSelectedIndex(3)
        rig.executor.runAll()
        #expect(Self.lines(rig, "value reactions") == ["value reactions #3 programmatic"])
        #expect(Self.lines(rig, "action reactions").isEmpty)
    }

    // MARK: Zoom changed elsewhere

    @Test("a pinch mid-session: the slider follows (origin external), no action, the next slide starts there")
    func pinchMidSession() throws {
        let rig = try VirtualControlsRig(seed: 4)
        try rig.play(scenario: "touch at=0.3 hold=60ms\nlight-press hold=120ms\nslide to=0.5 over=300ms\nhold 100ms\n")
        rig.runUntilScenarioEnds(settleMicros: 50_000)
        let before = rig.zoom.value
        #expect(before > 1)
        #expect(rig.session.phase == .adjusting("zoom"))
        let actionsBefore = Self.lines(rig, "action zoom").count

        try rig.pinch(toZoomFactor: 4)
        #expect(rig.zoom.value == 4)
        #expect(Self.lines(rig, "value zoom").last == "value zoom 4 external")
        #expect(Self.lines(rig, "action zoom").count == actionsBefore, "the action ignores a pinch")

        try rig.play(scenario: "slide to=0.6 over=200ms\nhold 100ms\nrelease\n")
        rig.runUntilScenarioEnds()
        let log = rig.log.map { String($0.dropFirst(10)) }
        let pinch = try #require(log.firstIndex(of: "pinch 4"))
        let after = log[pinch...].filter { $0.hasPrefix("value zoom ") && $0.hasSuffix(" slider") }
            .compactMap { Double($0.split(separator: " ")[2]) }
        let first = try #require(after.first)
        #expect(first > 4 && first < 5, "the slide continues from 4×, got \(after)")
        #expect(after == after.sorted())
        #expect(rig.camera.zoomFactor == rig.zoom.value)
        #expect(Self.lines(rig, "action zoom").count == actionsBefore + after.count)
    }

    // MARK: canAddControl

    @Test("canAddControl through the rig's session: the device's limit, a second zoom slider, no action")
    func canAddControlRefusals() throws {
        let rig = try VirtualControlsRig(seed: 1)
        let session = rig.session
        #expect(rig.capabilities.supportsControls)
        #expect(session.maxControlsCount == Int(rig.capabilities.maxControls))
        #expect(session.controls.map(\.id) == ["zoom", "exposure-bias", "reactions"])

        let secondZoom = try SystemZoomSlider(device: rig.camera, id: "zoom-2")
        #expect(!session.canAddControl(secondZoom))
        #expect(session.refusal(toAdd: secondZoom)?.code == .duplicateZoomSlider)

        let noAction = try CaptureSlider("Warmth", symbolName: "thermometer", in: 0...1)
        #expect(session.refusal(toAdd: noAction)?.code == .missingAction)
        #expect(throws: ControlError.self) { try session.addControl(noAction) }

        var added = 0
        while session.controls.count < session.maxControlsCount {
            let extra = try CaptureSlider("Extra \(added)", symbolName: "slider.horizontal.3", in: 0...1)
            extra.setActionQueue(InlineExecutor()) { _ in }
            #expect(session.canAddControl(extra))
            try session.addControl(extra)
            added += 1
        }
        #expect(session.controls.count == Int(rig.capabilities.maxControls))
        let oneTooMany = try CaptureSlider("One too many", symbolName: "slider.horizontal.3", in: 0...1)
        oneTooMany.setActionQueue(InlineExecutor()) { _ in }
        #expect(session.refusal(toAdd: oneTooMany)?.code == .controlLimitReached)
        do {
            try session.addControl(oneTooMany)
            Issue.record("addControl accepted a control over the limit")
        } catch {
            #expect(error.code == .controlLimitReached)
        }
        #expect(session.controls.count == Int(rig.capabilities.maxControls))
    }

    // MARK: The demo

    @Test("the demo's scenario file is the tour camctl demo plays")
    func demoScenarioFileIsTheDemosTour() throws {
        #expect(try Self.text("demo", "scenario") == CameraApp.demoScenario + "\n")
    }

    @Test("camctl demo's tour, sent over RunScenario as camctl does, shows the seed talk's flow")
    func demoTour() throws {
        let rig = try VirtualControlsRig(seed: 42)
        // camctl demo strips whole-line comments and expect lines and sends the steps in one RunScenario request.
        let steps =
            CameraApp.demoScenario.split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") && !ScenarioScript.isExpectLine($0[...]) }.joined(separator: "\n") + "\n"
        let played = try rig.runScenarioOverLink(steps)
        #expect(played.steps > 20)
        rig.runUntilScenarioEnds()
        let log = rig.log.map { String($0.dropFirst(10)) }
        #expect(rig.camera.zoomFactor > 2, "zoomed in through 2×")
        #expect(log.contains("overlay control-selected reactions"))
        #expect(log.contains("overlay control-selected exposure-bias"))
        #expect(abs(rig.camera.exposureBias - 2.0 / 3.0) < 1e-9, "+2/3 EV")
        #expect(rig.reactions.selectedIndex > 0, "a reaction was chosen")
        // The full click, the AE/AF-locked half press and shot, the click-and-hold and each capture button
        // take a photo (volume up through the secondary handler, the others through the primary one).
        let ended = Self.lines(rig, "capture ended ").map { $0.split(separator: " ").last.map(String.init) ?? "" }
        #expect(Self.lines(rig, "capture ended secondary ") == ["capture ended secondary volume-up"])
        #expect(
            ended == ["camera-control", "camera-control", "camera-control", "volume-up", "volume-down", "action-button", "remote"])
        #expect(log.contains { $0.hasPrefix("photo ") && $0.hasSuffix(" AE/AF locked") })
        #expect(log.contains("gesture long-press-began camera-control"))
        #expect(rig.camera.photos.count == ended.count)
    }
}
