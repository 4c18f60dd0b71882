import CameraControlControls
import CameraControlGestures
import CameraControlTestSupport
import CameraControlWire
import Synchronization

/// A Camera Control gesture at `micros`.
func cc(_ kind: GestureKind, _ micros: UInt64) -> Gesture {
    Gesture(kind: kind, source: .cameraControl, timestampMicros: micros)
}

/// A slide motion with a delta and a velocity (position is irrelevant to the overlay).
func motion(_ delta: Double, velocity: Double = 1) -> SlideMotion {
    SlideMotion(position: 0.5, delta: delta, velocity: velocity)
}

/// Builds gesture scripts in virtual time: each call appends gestures and moves the clock on.
struct GestureScript {
    private(set) var gestures: [Gesture] = []
    var now: UInt64

    init(startMicros: UInt64 = 1_000_000) { now = startMicros }

    mutating func wait(_ micros: UInt64) { now += micros }

    mutating func add(_ kind: GestureKind, after micros: UInt64 = 0) {
        now += micros
        gestures.append(cc(kind, now))
    }

    /// Touch, light press down and up (a light press the recogniser reports).
    mutating func lightPress() {
        add(.touchBegan)
        add(.lightPressBegan, after: 10_000)
        add(.lightPressEnded, after: 80_000)
    }

    /// A second light press soon after the first, reported as a double light press.
    mutating func doubleLightPress() {
        add(.touchBegan)
        add(.lightPressBegan, after: 10_000)
        add(.lightPressEnded, after: 80_000)
        add(.lightPressBegan, after: 120_000)
        add(.doubleLightPress)
        add(.lightPressEnded, after: 80_000)
    }

    /// A slide of `samples` samples of `delta` each, `interval` apart, at `velocity`; ends with a
    /// slideEnded with `endVelocity` (default the same).
    mutating func slide(
        samples: Int, delta: Double, interval: UInt64 = 10_000, velocity: Double = 1, endVelocity: Double? = nil
    ) {
        add(.slideBegan(motion(0, velocity: 0)), after: interval)
        for _ in 0..<samples { add(.slideChanged(motion(delta, velocity: velocity)), after: interval) }
        add(.slideEnded(motion(0, velocity: endVelocity ?? velocity)), after: interval)
    }

    mutating func liftFinger() { add(.touchEnded, after: 10_000) }

    /// A full click: light press, switch down and up, light press released.
    mutating func fullClick() {
        add(.touchBegan)
        add(.lightPressBegan, after: 10_000)
        add(.pressBegan, after: 30_000)
        add(.pressEnded(PressSummary(durationMicros: 100_000, isLongPress: false, peakForceMillinewtons: 3000)), after: 100_000)
        add(.lightPressEnded, after: 20_000)
        add(.touchEnded, after: 10_000)
    }
}

/// A delegate that records its calls by name.
final class RecordingDelegate: CaptureControlsDelegate {
    let calls = Recorder<String>()
    func sessionControlsDidBecomeActive(_ session: CaptureControlsSession) { calls.append("active") }
    func sessionControlsWillEnterFullscreenAppearance(_ session: CaptureControlsSession) { calls.append("enter") }
    func sessionControlsWillExitFullscreenAppearance(_ session: CaptureControlsSession) { calls.append("exit") }
    func sessionControlsDidBecomeInactive(_ session: CaptureControlsSession) { calls.append("inactive") }
}

/// Delegates handed to ``readySession(maxControls:delegate:configuration:)``: the session holds its
/// delegate weakly (as Apple's does), so tests keep them alive here for the process's lifetime.
private let keptDelegates = Mutex<[RecordingDelegate]>([])

/// A session that can show the overlay: controls supported, interaction attached, delegate set (and
/// kept alive; the weak-delegate test builds its session by hand).
func readySession(
    maxControls: Int = 4, delegate: RecordingDelegate, configuration: OverlayConfiguration = OverlayConfiguration()
) throws -> CaptureControlsSession {
    let session = try CaptureControlsSession(
        capabilities: ControlsCapabilities(supportsControls: true, maxControls: maxControls), configuration: configuration)
    session.setEventInteractionAttached(true)
    session.setControlsDelegate(delegate, executor: InlineExecutor())
    keptDelegates.withLock { $0.append(delegate) }
    return session
}

/// Runs `gestures` through a machine and returns every effect's description.
func run(_ machine: inout OverlayStateMachine, _ gestures: [Gesture]) -> [String] {
    gestures.flatMap { machine.handle($0) }.map(\.description)
}

/// A continuous test slider snapshot.
func sliderSnapshot(
    _ id: ControlID, range: ClosedRange<Double> = 0...1, value: Double? = nil, prominent: [Double] = [],
    enabled: Bool = true
) -> ControlSnapshot {
    ControlSnapshot(
        id: id, title: id.rawValue, isEnabled: enabled,
        adjustment: .slider(.continuous(range, scale: .linear), prominentValues: prominent),
        value: .number(value ?? range.lowerBound))
}

/// A discrete test slider snapshot over `values`.
func discreteSnapshot(_ id: ControlID, values: [Double], value: Double, prominent: [Double] = []) throws -> ControlSnapshot {
    ControlSnapshot(
        id: id, title: id.rawValue, isEnabled: true,
        adjustment: .slider(.discrete(try DiscreteValues(values: values)), prominentValues: prominent),
        value: .number(value))
}
