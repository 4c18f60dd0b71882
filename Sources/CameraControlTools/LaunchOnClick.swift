import CameraControlGestures
import CameraControlWire

/// The system's part of the Camera Control when no camera app is in front (docs/CAPTURE.md, "Launch on
/// click"): a click — or a double click, as iPhone's Settings > Camera > Camera Control > Launch Camera
/// allows — launches the camera app, and a click-and-hold runs a second action (iPhone maps it to Visual
/// Intelligence). Sans-IO: gestures in, what to launch out; `camctl serve` runs the commands.
///
/// Only the Camera Control's full presses count (a light press, a slide or another button launches
/// nothing). A press held past the recogniser's long-press threshold runs the hold action at that moment,
/// while still held, when one is configured; otherwise it is judged when it ends, as a click. A click is
/// judged when it ends. With ``Trigger/doubleClick``
/// the second click must end within ``doubleClickWindowMicros`` of the first one's end (device time); a
/// click after the window starts a new pair, and a hold in between breaks the pair.
public struct LaunchOnClick: Sendable {
    /// Which clicks launch the camera app.
    public enum Trigger: String, Sendable, CaseIterable {
        /// Every click.
        case click
        /// Two clicks in quick succession.
        case doubleClick = "double-click"
    }

    /// What a press asks for.
    public enum Launch: Sendable, Equatable {
        /// The camera app.
        case camera
        /// The click-and-hold action.
        case hold
    }

    /// This project's default double-click window: the second click ends within 400 ms of the first.
    public static let defaultDoubleClickWindowMicros: UInt64 = 400_000

    /// Which clicks launch the camera app.
    public var trigger: Trigger
    /// With ``Trigger/doubleClick``: how long after the first click's end the second one may end.
    public var doubleClickWindowMicros: UInt64
    /// True when a click-and-hold has an action of its own; otherwise it counts as a click.
    public var holdHasAction: Bool
    /// When the unpaired first click of a double click ended (device time).
    private var pendingClickEndedMicros: UInt64?

    /// Launch rules: `trigger`, the double-click window, and whether a hold has an action of its own.
    public init(
        trigger: Trigger = .click, doubleClickWindowMicros: UInt64 = Self.defaultDoubleClickWindowMicros,
        holdHasAction: Bool = false
    ) {
        self.trigger = trigger
        self.doubleClickWindowMicros = doubleClickWindowMicros
        self.holdHasAction = holdHasAction
    }

    /// What `gesture` launches, if anything. A hold with an action of its own launches it when the hold is
    /// recognised (`longPressBegan`), while the finger is still down, as an iPhone opens Visual Intelligence;
    /// its release then launches nothing.
    public mutating func take(_ gesture: Gesture) -> Launch? {
        guard gesture.source == .cameraControl else { return nil }
        if case .longPressBegan = gesture.kind, holdHasAction {
            pendingClickEndedMicros = nil
            return .hold
        }
        guard case .pressEnded(let press) = gesture.kind else { return nil }
        if press.isLongPress && holdHasAction { return nil }  // its action ran when the hold was recognised
        switch trigger {
        case .click:
            return .camera
        case .doubleClick:
            if let first = pendingClickEndedMicros, gesture.timestampMicros >= first,
                gesture.timestampMicros - first <= doubleClickWindowMicros
            {
                pendingClickEndedMicros = nil
                return .camera
            }
            pendingClickEndedMicros = gesture.timestampMicros
            return nil
        }
    }

    /// Forgets a half-made double click (the device went away).
    public mutating func reset() {
        pendingClickEndedMicros = nil
    }
}
