import CameraControlEmbedded
import CameraControlGestures
import CameraControlWire
import Testing

@testable import camctl

/// `camctl diagnose`'s steps and verdicts, in-process: which steps a device's capabilities give, and how a
/// step is judged from what the host pipeline delivered.
@Suite("camctl diagnose steps")
struct DiagnoseStepTests {
    @Test("the steps follow what the device announces, buttons first")
    func stepsFollowTheCapabilities() {
        let buttonsOnly = Capabilities(buttons: [.volumeDown, .remote])
        #expect(Diagnose.steps(for: buttonsOnly).map(\.name) == ["volume-down", "remote-click"])
        #expect(Diagnose.steps(for: buttonsOnly).map(\.source) == [.volumeDown, .remote])
        #expect(Diagnose.steps(for: Capabilities()).isEmpty)
        let everything = Capabilities(
            hasForceSensor: true, hasTouchSensor: true, hasSlideStrip: true, buttons: [.volumeUp, .volumeDown, .actionButton, .remote])
        #expect(
            Diagnose.steps(for: everything).map(\.name) == [
                "volume-up", "volume-down", "action-button", "remote-click", "light-press", "click", "double-light-press", "touch",
                "slide-to-top",
            ])
        // Every simulated step is a scenario the firmware's own parser accepts.
        for step in Diagnose.steps(for: everything) {
            #expect(throws: Never.self, "\(step.name)") { _ = try ScenarioParser.check("noise off\n\(step.scenario)\n") }
        }
    }

    static let volumeDown = Diagnose.Step(
        name: "volume-down", instruction: "press volume down", scenario: "button volume-down", source: .volumeDown,
        expectation: .gesture("press-began"))

    func record(_ step: Diagnose.Step, _ observations: [Diagnose.Observation], since: UInt64 = 0) -> Diagnose.StepLog.Record {
        let log = Diagnose.StepLog()
        log.reset(expecting: step.expectation, sinceDeviceMicros: since)
        for observation in observations { log.add(observation) }
        return log.current
    }

    func gesture(_ kind: GestureKind, _ source: InputSource, at micros: UInt64 = 1000) -> Diagnose.Observation {
        .gesture(Gesture(kind: kind, source: source, timestampMicros: micros))
    }

    @Test("the first event of the expected kind decides, by its source")
    func theFirstMatchDecides() {
        let right = Diagnose.judge(
            Self.volumeDown, record: record(Self.volumeDown, [gesture(.touchBegan, .cameraControl), gesture(.pressBegan, .volumeDown)]),
            simulated: true, timeoutSeconds: 10)
        #expect(right.passed)
        #expect(right.reason == "press-began from volume-down")
        #expect(right.sources == [.cameraControl, .volumeDown])

        let wrong = Diagnose.judge(
            Self.volumeDown, record: record(Self.volumeDown, [gesture(.pressBegan, .volumeUp), gesture(.pressBegan, .volumeDown)]),
            simulated: false, timeoutSeconds: 10)
        #expect(!wrong.passed)
        #expect(wrong.reason == "press-began came from volume-up, expected volume-down")
    }

    @Test("nothing of the expected kind in time fails, and says what came instead")
    func nothingInTimeFails() {
        let outcome = Diagnose.judge(
            Self.volumeDown, record: record(Self.volumeDown, [gesture(.lightPressBegan, .cameraControl)]), simulated: false,
            timeoutSeconds: 7)
        #expect(!outcome.passed)
        #expect(outcome.seen == nil)
        #expect(outcome.reason == "no press-began within 7 s; saw light-press-began from camera-control")
        let silent = Diagnose.judge(Self.volumeDown, record: record(Self.volumeDown, []), simulated: false, timeoutSeconds: 7)
        #expect(silent.reason == "no press-began within 7 s")
    }

    @Test("events from before the step (the previous step's tail) are not the step's")
    func earlierEventsAreIgnored() {
        let late = record(
            Self.volumeDown, [gesture(.pressBegan, .volumeUp, at: 900), gesture(.pressBegan, .volumeDown, at: 1200)], since: 1000)
        let outcome = Diagnose.judge(Self.volumeDown, record: late, simulated: true, timeoutSeconds: 10)
        #expect(outcome.passed)
        #expect(outcome.sources == [.volumeDown])
    }

    @Test("a slide step waits for the top of the strip; a click step for a capture that ended")
    func slidesAndCaptures() {
        let slide = Diagnose.Expectation.slide(atLeast: 0.8)
        #expect(!slide.matches(gesture(.slideChanged(SlideMotion(position: 0.5, delta: 0.1, velocity: 1)), .cameraControl)))
        #expect(slide.matches(gesture(.slideEnded(SlideMotion(position: 0.85, delta: 0, velocity: 0)), .cameraControl)))
        #expect(!slide.matches(gesture(.pressBegan, .cameraControl)))
        let click = Diagnose.Expectation.capture(.ended)
        #expect(
            !click.matches(
                gesture(.pressEnded(PressSummary(durationMicros: 1, isLongPress: false, peakForceMillinewtons: 0)), .cameraControl)))
    }

    @Test("the table has a row per step and the count")
    func theTable() {
        let outcomes = [
            Diagnose.judge(
                Self.volumeDown, record: record(Self.volumeDown, [gesture(.pressBegan, .volumeUp)]), simulated: true, timeoutSeconds: 10)
        ]
        let table = Diagnose.table(outcomes)
        #expect(table.contains("volume-down  press-began  volume-down  press-began from volume-up  FAIL"), "\(table)")
        #expect(table.hasSuffix("0 of 1 steps passed"))
        let json = Diagnose.json(outcomes[0])
        #expect(json["result"] == .string("fail") && json["seen"]?["source"] == .string("volume-up"))
    }

    @Test(
        "failed steps on a link that lost or damaged frames, or whose session the device ended: fix the link first, with the host's counts")
    func linkHintComesFirst() {
        let damaged = Diagnose.failureHint(checkErrors: 3, sequenceGaps: 1, sessionLost: false)
        #expect(
            damaged.hasPrefix("the link lost or damaged frames during the check (3 check errors, 1 sequence gaps, counted"), "\(damaged)")
        #expect(damaged.contains("over its one session") && damaged.contains("fix the link"), "\(damaged)")
        #expect(!damaged.contains("a session ended by the device"), "\(damaged)")
        let gapsOnly = Diagnose.failureHint(checkErrors: 0, sequenceGaps: 2, sessionLost: false)
        #expect(gapsOnly.contains("(0 check errors, 2 sequence gaps, counted"), "\(gapsOnly)")
        // No frame counted lost, but the device ended the session (it answered FAILED_PRECONDITION): the link too.
        let ended = Diagnose.failureHint(checkErrors: 0, sequenceGaps: 0, sessionLost: true)
        #expect(ended.contains("(0 check errors, 0 sequence gaps, a session ended by the device, counted"), "\(ended)")
        // A clean link: the wiring is to blame.
        let clean = Diagnose.failureHint(checkErrors: 0, sequenceGaps: 0, sessionLost: false)
        #expect(clean.hasPrefix("a wrong source means the firmware reports the input under another name"), "\(clean)")
        #expect(!clean.contains("the link"), "\(clean)")
        // Camera Control switched off in the device's settings: that, not the wiring.
        let off = Diagnose.failureHint(checkErrors: 0, sequenceGaps: 0, sessionLost: false, cameraControlOff: true)
        #expect(off.hasPrefix("the device's settings switch the Camera Control off"), "\(off)")
        #expect(off.contains("camctl settings PORT camera-control=on"), "\(off)")
    }
}
