import CameraControlGestures
import CameraControlWire

/// Which of focus and exposure a camera holds locked (`AVCaptureDevice`'s `focusMode = .locked` and
/// `exposureMode = .locked`).
public struct FocusExposureLock: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The bits.
    public let rawValue: UInt8
    /// A lock from its bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Focus held where it is (no autofocus).
    public static let focus = FocusExposureLock(rawValue: 1)
    /// Exposure held where it is (no auto-exposure).
    public static let exposure = FocusExposureLock(rawValue: 2)
    /// Both: the AE/AF lock of a half-pressed shutter.
    public static let both: FocusExposureLock = [.focus, .exposure]

    /// `AE/AF`, `AE`, `AF` or `none`.
    public var description: String {
        switch self {
        case .both: "AE/AF"
        case .exposure: "AE"
        case .focus: "AF"
        default: "none"
        }
    }
}

extension CameraDevice {
    /// What the camera can lock: none by default (a camera that can lock overrides this and
    /// ``setFocusExposureLock(_:)``).
    public var supportedFocusExposureLock: FocusExposureLock { [] }
    /// What the camera holds locked now: none by default.
    public var focusExposureLock: FocusExposureLock { [] }
    /// Locks what `lock` names and unlocks the rest. The default supports nothing: it accepts an empty
    /// lock and throws ``ControlError/Code/deviceRefused`` for any other.
    public func setFocusExposureLock(_ lock: FocusExposureLock) throws(ControlError) {
        guard lock.isEmpty else {
            throw ControlError(.deviceRefused, "this camera cannot lock focus or exposure (\(lock) asked)")
        }
    }
}

/// What the AE/AF lock did, for the host's effects and the app's log.
public enum FocusExposureLockEvent: Hashable, Sendable, CustomStringConvertible {
    /// The camera locked `lock` (what it supports of AE and AF) for a light press held past the lock time.
    case locked(FocusExposureLock, atMicros: UInt64)
    /// The lock ended: the light press was released, or the press was cancelled (device lost, capture
    /// stopped).
    case unlocked(atMicros: UInt64, cancelled: Bool)
    /// A light press was held past the lock time but the camera can lock neither focus nor exposure (or
    /// refused): nothing is locked.
    case unsupported(reason: String, atMicros: UInt64)

    /// When it happened, device microseconds.
    public var atMicros: UInt64 {
        switch self {
        case .locked(_, let at), .unlocked(let at, _), .unsupported(_, let at): at
        }
    }

    /// `locked AE/AF @<µs>`, `unlocked @<µs>` (`cancelled` added), `unsupported: <reason>`.
    public var description: String {
        switch self {
        case .locked(let lock, let at): "locked \(lock) @\(at)"
        case .unlocked(let at, let cancelled): "unlocked @\(at)\(cancelled ? " cancelled" : "")"
        case .unsupported(let reason, _): "unsupported: \(reason)"
        }
    }
}

/// The AE/AF lock of iOS 18.2's Camera Control (Settings › Camera › Camera Control › AE/AF Lock, off by
/// default): a light press held ``lockAfterMicros`` locks focus and exposure through a ``CameraDevice``,
/// a full press then captures with the lock, and releasing the light press unlocks — the two-stage
/// shutter of a traditional camera (docs/CAPTURE.md, "AE/AF lock").
///
/// Fed the recogniser's gestures and device time, like the overlay; it calls the camera itself and
/// returns what it did. A full press or a slide before the lock time means the press is not a framing
/// hold: nothing locks (a click from idle shoots unlocked). ``cancel(atMicros:)`` unlocks at once (device
/// lost, capture stopped). Drive it from one serial context.
///
/// A light press that begins while the overlay's control list is shown (``OverlayPhase/picking(highlightedIndex:)``,
/// passed to ``handle(_:overlay:)``) is a selection in the list — the overlay confirms the highlighted control at
/// its release — not a half-press of the shutter: it never locks, however long it is held. A light press in
/// the plain overlay (showing or adjusting a control) or with no overlay locks once held
/// ``lockAfterMicros``, as on an iPhone, where the press that confirms a choice in the control picker is a
/// selection (docs/CAPTURE.md, "AE/AF lock").
///
/// The lock outlasts the shot it was taken for: a touch's end that comes while the Camera Control's full press
/// is still down — a finger lifted straight off the click ends the capacitive touch before the filtered force
/// falls through the stages, and the device then sends the full press's end, then the light press's — does
/// not unlock; the light press's end does, after the photo taken at the full press's `ended`.
public struct FocusExposureLockController: Sendable {
    /// How long a light press is held before focus and exposure lock, µs. Default 400 ms: the long-press
    /// threshold (a light press held that long is a hold, never the first half of a double light press).
    public var lockAfterMicros: UInt64
    /// The camera locked and unlocked.
    public let camera: any CameraDevice

    /// Where the lock is.
    private enum Phase: Hashable, Sendable {
        /// Nothing held, nothing pending.
        case idle
        /// A light press began at this device time and may become a hold.
        case pending(since: UInt64)
        /// The camera is locked for the light press held now.
        case locked
    }

    private var phase = Phase.idle
    /// True while the Camera Control's full press (the shutter) is down.
    private var isShutterDown = false

    /// A controller for `camera`, nothing pending.
    public init(camera: any CameraDevice, lockAfterMicros: UInt64 = 400_000) {
        self.camera = camera
        self.lockAfterMicros = lockAfterMicros
    }

    /// True while this controller holds the camera locked.
    public var isLocked: Bool { phase == .locked }

    /// When ``advance(toMicros:)`` has work (the lock time of a light press held now), or nil.
    public var nextDeadlineMicros: UInt64? {
        guard case .pending(let since) = phase else { return nil }
        return since &+ lockAfterMicros
    }

    /// Feeds one gesture (Camera Control gestures only; others are ignored). `overlay` is the controls
    /// overlay's phase as the gesture comes, before the overlay handles it (``OverlayPhase/hidden`` when
    /// there is no overlay): a light press that begins while it is ``OverlayPhase/picking(highlightedIndex:)``
    /// is a selection in the control list and never locks.
    public mutating func handle(_ gesture: Gesture, overlay: OverlayPhase = .hidden) -> [FocusExposureLockEvent] {
        guard gesture.source == .cameraControl else { return [] }
        var events = advance(toMicros: gesture.timestampMicros)
        let now = gesture.timestampMicros
        switch gesture.kind {
        case .lightPressBegan:
            if case .picking = overlay {
                // Choosing a control: the press confirms the highlighted one at its release.
                if case .pending = phase { phase = .idle }
            } else if phase != .locked {
                phase = .pending(since: now)
            }
        case .slideBegan, .doubleLightPress:
            if case .pending = phase { phase = .idle }
        case .pressBegan:
            isShutterDown = true
            if case .pending = phase { phase = .idle }
        case .lightPressEnded:
            if case .pending = phase { phase = .idle }
            events += unlock(at: now, cancelled: false)
        case .touchEnded:
            if case .pending = phase { phase = .idle }
            // Lifted straight off the click: the photo comes at the full press's end, the unlock at the light
            // press's, both after this.
            if !isShutterDown { events += unlock(at: now, cancelled: false) }
        case .pressEnded:
            isShutterDown = false
        case .pressCancelled:
            isShutterDown = false
            if case .pending = phase { phase = .idle }
            events += unlock(at: now, cancelled: true)
        default:
            break
        }
        return events
    }

    /// Moves device time on: a light press held past the lock time locks the camera.
    public mutating func advance(toMicros now: UInt64) -> [FocusExposureLockEvent] {
        guard case .pending(let since) = phase, now >= since &+ lockAfterMicros else { return [] }
        phase = .idle
        // A camera that supports neither is still asked, so that its error says why (no such control).
        let supported = camera.supportedFocusExposureLock.intersection(.both)
        let lock = supported.isEmpty ? FocusExposureLock.both : supported
        do {
            try camera.setFocusExposureLock(lock)
        } catch {
            return [.unsupported(reason: error.message, atMicros: now)]
        }
        phase = .locked
        return [.locked(lock, atMicros: now)]
    }

    /// Unlocks now and forgets a pending press (device lost, capture stopped, the lock switched off).
    public mutating func cancel(atMicros now: UInt64) -> [FocusExposureLockEvent] {
        isShutterDown = false
        if case .pending = phase { phase = .idle }
        return unlock(at: now, cancelled: true)
    }

    private mutating func unlock(at now: UInt64, cancelled: Bool) -> [FocusExposureLockEvent] {
        guard isLocked else { return [] }
        phase = .idle
        try? camera.setFocusExposureLock([])
        return [.unlocked(atMicros: now, cancelled: cancelled)]
    }
}
