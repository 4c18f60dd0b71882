import CameraControlGestures
import CameraControlTools
import CameraControlWire
import Testing

@Suite("LaunchOnClick: the system's Camera Control with no camera app in front")
struct LaunchOnClickTests {
    func click(at ms: UInt64, long: Bool = false, source: InputSource = .cameraControl) -> Gesture {
        Gesture(
            kind: .pressEnded(PressSummary(durationMicros: long ? 700_000 : 90_000, isLongPress: long, peakForceMillinewtons: 2500)),
            source: source, timestampMicros: ms * 1000)
    }

    /// What each gesture launches, fed in order to `rules`.
    func launches(_ rules: LaunchOnClick, _ gestures: [Gesture]) -> [LaunchOnClick.Launch?] {
        var rules = rules
        return gestures.map { rules.take($0) }
    }

    @Test("single click: every Camera Control click launches the camera; other buttons and other gestures nothing")
    func singleClick() {
        let gestures = [
            click(at: 100), click(at: 300), click(at: 500, source: .volumeUp), click(at: 600, source: .remote),
            Gesture(kind: .pressBegan, source: .cameraControl, timestampMicros: 700_000),
            Gesture(kind: .lightPressEnded, source: .cameraControl, timestampMicros: 800_000),
            Gesture(kind: .doubleLightPress, source: .cameraControl, timestampMicros: 900_000),
        ]
        #expect(launches(LaunchOnClick(), gestures) == [.camera, .camera, nil, nil, nil, nil, nil])
    }

    @Test("double click: the second click within the window launches; one after it starts a new pair")
    func doubleClick() {
        let rules = LaunchOnClick(trigger: .doubleClick, doubleClickWindowMicros: 400_000)
        // 1400: 400 ms after the first, inside the window; 2401: 401 ms, too late, so the first of a new
        // pair; 2800: the pair of 2700 was used up.
        let gestures = [click(at: 1000), click(at: 1400), click(at: 2000), click(at: 2401), click(at: 2700), click(at: 2800)]
        #expect(launches(rules, gestures) == [nil, .camera, nil, nil, .camera, nil])
    }

    func held(at ms: UInt64) -> Gesture {
        Gesture(kind: .longPressBegan(heldMicros: 400_000), source: .cameraControl, timestampMicros: ms * 1000)
    }

    @Test("a hold runs its action when recognised (still held), breaking a pair; its release nothing; no hold action: a click")
    func hold() {
        let withHold = LaunchOnClick(trigger: .doubleClick, holdHasAction: true)
        #expect(
            launches(withHold, [click(at: 100), held(at: 250), click(at: 300, long: true), click(at: 400)])
                == [nil, .hold, nil, nil])
        #expect(launches(LaunchOnClick(), [held(at: 50), click(at: 100, long: true)]) == [nil, .camera])
        #expect(launches(LaunchOnClick(holdHasAction: true), [held(at: 50), click(at: 100, long: true)]) == [.hold, nil])
    }

    @Test("reset forgets a half-made double click")
    func resetForgets() {
        var rules = LaunchOnClick(trigger: .doubleClick)
        _ = rules.take(click(at: 100))
        rules.reset()
        #expect(launches(rules, [click(at: 200)]) == [nil])
    }
}
