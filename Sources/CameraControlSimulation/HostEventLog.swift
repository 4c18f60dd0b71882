import CameraAppExample
import CameraControlControls
import CameraControlGestures
import CameraControlHost
import Synchronization

/// What a host pipeline on a real port produced, as ``ObservedEvent``s in the words of
/// ``VirtualControlsRig/log`` (so one scenario's expectations hold over a port and in virtual time).
///
/// Gestures carry their device time, and so do overlay effects and the AE/AF lock (a deadline's: the
/// overlay shows 100 ms after the light press); everything else they cause (capture events, photos,
/// values, delegate calls) is stamped with the latest of those times. Firmware feedback is not visible
/// over a port, so `firmware-…` expectations hold only in virtual time.
///
/// ```swift
/// let log = HostEventLog()
/// await host.observe { log.record($0) }          // CameraControlHost's effects
/// let app = try CameraApp(executor: InlineExecutor()) { log.record($0) }
/// log.observeValues(of: app, on: InlineExecutor())
/// ```
public final class HostEventLog: Sendable {
    private struct State {
        var events: [ObservedEvent] = []
        var lastDeviceMicros: UInt64 = 0
    }

    private let state = Mutex(State())

    /// An empty log.
    public init() {}

    /// Everything recorded since the last ``reset()``.
    public var events: [ObservedEvent] { state.withLock { $0.events } }

    /// Forgets what was recorded (a new scenario starts).
    public func reset() {
        state.withLock { $0.events.removeAll() }
    }

    /// A host effect: gestures, overlay effects (value changes come from ``observeValues(of:on:)``),
    /// haptics the host sends (`haptic <pattern> sent`).
    public func record(_ effect: HostEffect) {
        switch effect {
        case .gesture(let gesture):
            state.withLock { state in
                state.lastDeviceMicros = gesture.timestampMicros
                state.events.append(
                    ObservedEvent(micros: gesture.timestampMicros, text: "gesture \(VirtualControlsRig.describe(gesture))"))
            }
        case .overlay(.valueChanged, _): break
        case .overlay(.haptic(let haptic, _), let at): add("haptic \(haptic) sent", at: at)
        case .overlay(let effect, let at): add("overlay \(effect)", at: at)
        case .focusExposureLock(let event): add("lock \(event)", at: event.atMicros)
        case .connected, .input, .deviceLost: break
        }
    }

    /// A scenario's `host` step taken (`host format tele`), at `deviceMicros` (the scenario's start on the
    /// device's clock plus the step's time): what follows it is stamped no earlier.
    public func record(_ step: ScenarioHostStep, atDeviceMicros deviceMicros: UInt64) {
        state.withLock { state in
            state.lastDeviceMicros = max(state.lastDeviceMicros, deviceMicros)
            state.events.append(ObservedEvent(micros: state.lastDeviceMicros, text: step.description))
        }
    }

    /// An event of the example app (captures, photos, actions, delegate calls).
    public func record(_ event: CameraApp.Event) {
        add(VirtualControlsRig.describe(event))
    }

    /// Observes the app's controls: `overlay value <control> <value> <origin>`.
    public func observeValues(of app: CameraApp, on executor: any ActionExecutor) {
        _ = app.zoom.observeValueChanges(on: executor) { [self] change in
            add("overlay value \(change.controlID) \(VirtualControlsRig.number(change.value)) \(change.origin)")
        }
        _ = app.exposure.observeValueChanges(on: executor) { [self] change in
            add("overlay value \(change.controlID) \(VirtualControlsRig.number(change.value)) \(change.origin)")
        }
        _ = app.reactions.observeValueChanges(on: executor) { [self] change in
            add("overlay value \(change.controlID) #\(change.value) \(change.origin)")
        }
    }

    private func add(_ text: String) {
        state.withLock { $0.events.append(ObservedEvent(micros: $0.lastDeviceMicros, text: text)) }
    }

    /// An effect with its own device time (the overlay shows 100 ms after the light press, the lock 400 ms
    /// after): what follows it (the delegate calls and actions it causes) is stamped no earlier.
    private func add(_ text: String, at micros: UInt64) {
        state.withLock { state in
            state.lastDeviceMicros = max(state.lastDeviceMicros, micros)
            state.events.append(ObservedEvent(micros: state.lastDeviceMicros, text: text))
        }
    }
}
