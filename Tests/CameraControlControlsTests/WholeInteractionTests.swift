import CameraControlControls
import CameraControlGestures
import CameraControlTestSupport
import Testing

/// A whole interaction replayed from a text gesture script, with the effect log checked line by line.
///
/// Script lines: `<device µs> <step> [arguments]`, `#` starts a comment. Steps: the gesture kinds
/// (`touch-began`, `touch-ended`, `light-press-began`, `light-press-ended`, `double-light-press`,
/// `slide-began`, `slide-changed <delta> <velocity>`, `slide-ended <delta> <velocity>`, `press-began`,
/// `press-ended`), and `advance` (time passes), `pinch <zoom>` (zoom changed elsewhere), `shutter` (the
/// capture layer takes a photo, as it does on a full click's release).
@Suite("Whole interaction")
struct WholeInteractionTests {
    static let script = """
        # light press (released within the hold-off, so shown at its release) shows zoom; slide zooms 1× → 1.41× → 2× (prominent: detent) → 2.83×
        1000000 touch-began
        1010000 light-press-began
        1090000 light-press-ended
        1100000 slide-began
        1110000 slide-changed 0.1666666666666667 1
        1120000 slide-changed 0.1666666666666667 1
        1130000 slide-changed 0.1666666666666667 1
        1140000 slide-ended 0 0.5
        1150000 touch-ended
        # a pinch elsewhere: the slider follows, no effect, no action
        1300000 pinch 4
        # double light press opens the picker; slide to exposure; light press confirms
        1500000 touch-began
        1510000 light-press-began
        1590000 light-press-ended
        1710000 light-press-began
        1710000 double-light-press
        1790000 light-press-ended
        1800000 slide-began
        1810000 slide-changed 0.15 1
        1820000 slide-ended 0 0.2
        1900000 light-press-began
        1980000 light-press-ended
        # two 1/3 EV steps, a detent at each
        2000000 slide-began
        2010000 slide-changed 0.0833333333333333 1
        2020000 slide-changed 0.0833333333333333 1
        2030000 slide-ended 0 0.2
        # full click: the shutter; nothing in the overlay changes
        2100000 light-press-began
        2130000 press-began
        2150000 slide-changed 0.3 1
        2230000 press-ended
        2230000 shutter
        2250000 light-press-ended
        2260000 touch-ended
        # 2 s without touch: dismissed
        4260000 advance
        # the next light press shows the last used control
        5000000 touch-began
        5010000 light-press-began
        # held past the 100 ms hold-off: confirmed
        5110000 advance
        """

    static let expectedEffects = """
        overlay-shown zoom
        entered-fullscreen
        value-changed zoom 1.4142 slider
        value-changed zoom 2 slider
        haptic detent @1120000
        value-changed zoom 2.8284 slider
        picker-opened 0
        picker-moved 1
        haptic detent @1810000
        control-selected exposure-bias
        value-changed exposure-bias 0.3333 slider
        haptic detent @2010000
        value-changed exposure-bias 0.6667 slider
        haptic detent @2020000
        exited-fullscreen
        overlay-hidden
        overlay-shown exposure-bias
        entered-fullscreen
        """

    enum ScriptError: Error { case bad(String) }

    @Test("zoom, pinch, picker, exposure, shutter, dismissal, remembered control")
    func replay() throws {
        let camera = try SyntheticCamera(zoomFactorRange: 1...8, prominentZoomFactors: [2])
        let zoomActions = Recorder<Double>()
        let zoomChanges = Recorder<String>()
        let zoom = try SystemZoomSlider(device: camera, executor: InlineExecutor()) { zoomActions.append($0) }
        zoom.observeValueChanges(on: InlineExecutor()) { zoomChanges.append("\(ControlValue.number($0.value)) \($0.origin)") }
        let exposure = try SystemExposureBiasSlider(device: camera, executor: InlineExecutor()) { _ in }
        let filter = try CaptureIndexPicker("Filter", symbolName: "camera.filters", localizedIndexTitles: ["None", "Mono"])
        filter.setActionQueue(InlineExecutor()) { _ in }
        let delegate = RecordingDelegate()
        let session = try readySession(maxControls: 3, delegate: delegate)
        for control in [zoom, exposure, filter] as [any CaptureControl] { try session.addControl(control) }

        var effects: [OverlayEffect] = []
        for (number, line) in Self.script.split(separator: "\n").enumerated() {
            let words = line.split(separator: " ").map(String.init)
            guard let first = words.first, !first.hasPrefix("#") else { continue }
            guard let micros = UInt64(first), words.count >= 2 else { throw ScriptError.bad("line \(number + 1): \(line)") }
            let numbers = words.dropFirst(2).compactMap(Double.init)
            let slide = SlideMotion(position: 0.5, delta: numbers.first ?? 0, velocity: numbers.dropFirst().first ?? 0)
            let kind: GestureKind
            switch words[1] {
            case "advance":
                effects += session.advance(toMicros: micros)
                continue
            case "pinch":
                try camera.pinch(toZoomFactor: numbers.first ?? 1)
                continue
            case "shutter":
                _ = try camera.capturePhoto()
                continue
            case "touch-began": kind = .touchBegan
            case "touch-ended": kind = .touchEnded
            case "light-press-began": kind = .lightPressBegan
            case "light-press-ended": kind = .lightPressEnded
            case "double-light-press": kind = .doubleLightPress
            case "slide-began": kind = .slideBegan(slide)
            case "slide-changed": kind = .slideChanged(slide)
            case "slide-ended": kind = .slideEnded(slide)
            case "press-began": kind = .pressBegan
            case "press-ended":
                kind = .pressEnded(PressSummary(durationMicros: 100_000, isLongPress: false, peakForceMillinewtons: 3000))
            default: throw ScriptError.bad("line \(number + 1): unknown step \(words[1])")
            }
            effects += session.handle(cc(kind, micros))
        }

        let actual = effects.map(\.description)
        let expected = Self.expectedEffects.split(separator: "\n").map(String.init)
        for (index, line) in expected.enumerated() {
            #expect(index < actual.count && actual[index] == line, "effect line \(index + 1)")
        }
        #expect(actual.count == expected.count, "\(actual.joined(separator: "\n"))")

        #expect(delegate.calls.values == ["active", "enter", "exit", "inactive", "active", "enter"])
        #expect(zoomActions.values.map { ControlValue.number($0).description } == ["1.4142", "2", "2.8284"])
        #expect(zoomChanges.values == ["1.4142 slider", "2 slider", "2.8284 slider", "4 external"])
        #expect(camera.photos.count == 1)
        #expect(camera.photos.first?.zoomFactor == 4)
        #expect(abs((camera.photos.first?.exposureBias ?? 0) - 2.0 / 3.0) < 1e-9)
        #expect(session.phase == .showing("exposure-bias"))
    }
}
