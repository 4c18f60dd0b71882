import CameraControlControls
import CameraControlGestures
import CameraControlWire
import Testing

/// The real gesture recogniser in front of the controls session: input events in, effects out.
@Suite("Recogniser → controls session")
struct RecognizerToOverlayTests {
    func event(_ kind: InputEventKind, _ micros: UInt64, position: UInt32 = 0, force: UInt32 = 0) -> InputEvent {
        InputEvent(timestampMicros: micros, kind: kind, source: .cameraControl, forceMillinewtons: force, position: position)
    }

    @Test("light press, slow slide over the strip, lift: overlay, 1/3 EV steps with detents at event times")
    func lightPressThenSlide() throws {
        let camera = try SyntheticCamera()
        let exposure = try SystemExposureBiasSlider(device: camera, executor: InlineExecutor()) { _ in }
        let delegate = RecordingDelegate()
        let session = try readySession(delegate: delegate)
        try session.addControl(exposure)
        var recognizer = GestureRecognizer(configuration: .init(slideResolution: 1200, slideLengthMicrometres: 20_000))

        var events = [
            event(.touchDown, 1_000_000, position: 600),
            event(.lightPressDown, 1_010_000, position: 600, force: 1500),
            event(.lightPressUp, 1_100_000, position: 600),
        ]
        // 100 positions (1/12 strip, one 1/3 EV step) every 20 ms after the slop is passed.
        for k in 0...4 { events.append(event(.slide, 1_200_000 + UInt64(k) * 20_000, position: 700 + UInt32(k) * 100)) }
        events.append(event(.touchUp, 1_700_000, position: 1100))

        var effects: [OverlayEffect] = []
        for input in events {
            for gesture in recognizer.handle(input) { effects += session.handle(gesture) }
        }
        effects += session.advance(toMicros: 10_000_000)
        let log = effects.map(\.description)
        #expect(log.prefix(2) == ["overlay-shown exposure-bias", "entered-fullscreen"])
        #expect(log.suffix(2) == ["exited-fullscreen", "overlay-hidden"])
        // Each 1/12-strip sample after the first (slide-began carries no travel) is one step with a
        // detent at that sample's time; momentum may add more after the lift.
        for k in 1...4 {
            let at = 1_200_000 + UInt64(k) * 20_000
            #expect(log.contains("haptic detent @\(at)"), "sample \(k)")
        }
        #expect(exposure.value >= 4.0 / 3.0 - 1e-9)
        #expect(camera.exposureBias == exposure.value)
        #expect(delegate.calls.values == ["active", "enter", "exit", "inactive"])
    }

    @Test("a full click from the recogniser leaves every value alone")
    func fullClick() throws {
        let camera = try SyntheticCamera()
        let zoom = try SystemZoomSlider(device: camera, executor: InlineExecutor()) { _ in }
        let delegate = RecordingDelegate()
        let session = try readySession(delegate: delegate)
        try session.addControl(zoom)
        var recognizer = GestureRecognizer(configuration: .init(slideResolution: 1200, slideLengthMicrometres: 20_000))
        let events = [
            event(.touchDown, 1_000_000, position: 600),
            event(.lightPressDown, 1_010_000, position: 600, force: 1500),
            event(.fullPressDown, 1_040_000, position: 600, force: 4000),
            event(.slide, 1_060_000, position: 680, force: 4000),
            event(.slide, 1_080_000, position: 760, force: 4000),
            event(.fullPressUp, 1_120_000, position: 760, force: 1000),
            event(.lightPressUp, 1_140_000, position: 760),
            event(.touchUp, 1_150_000, position: 760),
        ]
        var gestures: [Gesture] = []
        for input in events { gestures += recognizer.handle(input) }
        #expect(gestures.contains { if case .pressEnded = $0.kind { true } else { false } })
        let effects = gestures.flatMap { session.handle($0) }
        #expect(!effects.contains { if case .valueChanged = $0 { true } else { false } })
        #expect(camera.zoomFactor == 1)
    }

    @Test("double light press, slide, light press from the recogniser: the picker flow")
    func pickerFlow() throws {
        let camera = try SyntheticCamera()
        let zoom = try SystemZoomSlider(device: camera, executor: InlineExecutor()) { _ in }
        let exposure = try SystemExposureBiasSlider(device: camera, executor: InlineExecutor()) { _ in }
        let delegate = RecordingDelegate()
        let session = try readySession(delegate: delegate)
        try session.addControl(zoom)
        try session.addControl(exposure)
        var recognizer = GestureRecognizer(configuration: .init(slideResolution: 1200, slideLengthMicrometres: 20_000))
        var events = [
            event(.touchDown, 1_000_000, position: 600),
            event(.lightPressDown, 1_010_000, position: 600, force: 1500),
            event(.lightPressUp, 1_090_000, position: 600),
            event(.lightPressDown, 1_200_000, position: 600, force: 1500),
            event(.lightPressUp, 1_280_000, position: 600),
        ]
        // Past the slop, then 0.15 strip (180 positions) in small, slow-enough steps.
        for k in 0...6 { events.append(event(.slide, 1_300_000 + UInt64(k) * 20_000, position: 700 + UInt32(k) * 30)) }
        events += [
            event(.lightPressDown, 1_600_000, position: 880, force: 1500),
            event(.lightPressUp, 1_680_000, position: 880),
        ]
        var effects: [OverlayEffect] = []
        for input in events {
            for gesture in recognizer.handle(input) { effects += session.handle(gesture) }
        }
        let log = effects.map(\.description)
        #expect(log.first == "overlay-shown zoom")
        #expect(log.contains("picker-opened 0"))
        #expect(log.contains("picker-moved 1"))
        #expect(log.last == "control-selected exposure-bias")
        #expect(session.activeControlID == "exposure-bias")
        #expect(camera.zoomFactor == 1)
    }
}
