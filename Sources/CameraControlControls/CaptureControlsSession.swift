import CameraControlCapture
import CameraControlGestures
import CameraControlWire
import Dispatch

/// What the device offers for capture controls; the device session maps the handshake's
/// `Capabilities.supports_controls` and `max_controls` onto it.
public struct ControlsCapabilities: Hashable, Sendable {
    /// True when the hardware can drive controls (force + touch + slide).
    public var supportsControls: Bool
    /// Most controls the overlay shows (negative values count as 0).
    public var maxControls: Int

    /// Capabilities from the two handshake fields.
    public init(supportsControls: Bool, maxControls: Int) {
        self.supportsControls = supportsControls
        self.maxControls = max(0, maxControls)
    }

    /// The controls half of a device's handshake capabilities (`supports_controls`, `max_controls`).
    public init(_ capabilities: Capabilities) {
        self.init(supportsControls: capabilities.supportsControls, maxControls: Int(capabilities.maxControls))
    }
}

/// Told when the controls overlay appears and goes (`AVCaptureSessionControlsDelegate`).
///
/// Order is always: active → (enter fullscreen → exit fullscreen)? → inactive; exit comes before
/// inactive. Called on the executor given to ``CaptureControlsSession/setControlsDelegate(_:executor:)``.
public protocol CaptureControlsDelegate: AnyObject, Sendable {
    /// The overlay appeared (a light press).
    func sessionControlsDidBecomeActive(_ session: CaptureControlsSession)
    /// The overlay takes the fullscreen appearance (adjusting, picking): hide UI that duplicates it.
    func sessionControlsWillEnterFullscreenAppearance(_ session: CaptureControlsSession)
    /// The fullscreen appearance ends: restore that UI.
    func sessionControlsWillExitFullscreenAppearance(_ session: CaptureControlsSession)
    /// The overlay went away.
    func sessionControlsDidBecomeInactive(_ session: CaptureControlsSession)
}

/// The controls half of a capture session (`AVCaptureSession`'s controls API) around the pure
/// ``OverlayStateMachine``: holds the controls, applies the values the overlay chooses (running actions),
/// calls the delegate and returns every ``OverlayEffect`` (the caller plays `.haptic` effects through
/// the device's Feedback service).
///
/// Drive it from one serial context: ``handle(_:beforeDelivery:)`` for each gesture, ``advance(toMicros:beforeDelivery:)`` at
/// ``nextDeadlineMicros``. It is thread-safe (one `Mutex`; no lock is held while actions, observers,
/// the camera device or the delegate are called), but two threads feeding gestures would interleave.
///
/// The overlay shows only when all of these hold, as on Apple's stack; where Apple then silently does
/// nothing, a ``ControlsDiagnostic`` is recorded in ``diagnostics``: `supportsControls`, an attached and
/// enabled ``CaptureEventInteraction`` whose capture session is running, at least one control, a delegate.
///
/// A session may be made before its device is known (`capabilities` nil, as a host's is when the app sets up
/// its controls before the device connects, the way an app sets up `AVCaptureSession` controls before it
/// runs): it takes controls then, and ``bind(to:)`` applies the device's capabilities when it connects.
public final class CaptureControlsSession: Sendable {
    private struct State: Sendable {
        var capabilities: ControlsCapabilities?
        var controls: [any SessionDrivenControl] = []
        var overlay: OverlayStateMachine
        weak var delegate: (any CaptureControlsDelegate)?
        var delegateExecutor: any ActionExecutor = DispatchQueue.main
        weak var eventInteraction: CaptureEventInteraction?
        var eventInteractionOverride: Bool?
        var diagnostics = DiagnosticLog()

        /// False only when the bound device cannot drive controls.
        var supportsControls: Bool { capabilities?.supportsControls ?? true }
        /// The bound device's limit (0 when it cannot drive controls), or ``ControlLimits/maximumControls``
        /// while no device is bound.
        var maxControlsCount: Int {
            guard let capabilities else { return ControlLimits.maximumControls }
            return capabilities.supportsControls ? capabilities.maxControls : 0
        }
        /// The controls the overlay offers: the first ``maxControlsCount``.
        var shownSnapshots: [ControlSnapshot] { controls.prefix(maxControlsCount).map(\.snapshot) }
    }

    private let state: Locked<State>

    /// A session for a device with `capabilities` (nil: not known yet, ``bind(to:)`` gives them), its overlay
    /// tuned by `configuration` (throws ``ControlError/Code/invalidConfiguration``).
    public init(
        capabilities: ControlsCapabilities?, configuration: OverlayConfiguration = OverlayConfiguration()
    )
        throws(ControlError)
    {
        let overlay = try OverlayStateMachine(configuration: configuration)
        state = Locked(State(capabilities: capabilities, overlay: overlay))
    }

    // MARK: Capabilities and controls

    /// What the device offers: nil while the session is bound to no device yet (made before one connected).
    public var capabilities: ControlsCapabilities? { state.withLock { $0.capabilities } }

    /// The overlay's tuning, as given at init.
    public var overlayConfiguration: OverlayConfiguration { state.withLock { $0.overlay.configuration } }

    /// The device the session drives connected with `capabilities` (``HostCore`` calls it at every connect,
    /// and when a session is attached to a connected device): they replace the previous ones. The controls
    /// stay; when there are more than the device's ``maxControlsCount``, the overlay offers the first that
    /// many and ``ControlsDiagnostic/tooManyControls(count:limit:)`` is recorded; a device that cannot drive
    /// controls shows no overlay (``ControlsDiagnostic/controlsNotSupported`` at the next light press).
    /// An overlay showing meanwhile offers what the new device can drive: it hides when that is none.
    public func bind(to capabilities: ControlsCapabilities) {
        let (effects, delegation) = state.withLock { state -> ([OverlayEffect], Delegation) in
            state.capabilities = capabilities
            let limit = state.maxControlsCount
            if state.supportsControls, state.controls.count > limit {
                state.diagnostics.record(.tooManyControls(count: state.controls.count, limit: limit))
            }
            return (state.overlay.setControls(state.shownSnapshots), Delegation(state))
        }
        guard !effects.isEmpty else { return }
        deliver(effects, atMicros: state.withLock { $0.overlay.nowMicros }, delegation: delegation)
    }

    /// True when the device can drive controls (`AVCaptureSession.supportsControls`); true too while no
    /// device is bound (controls can be added then, checked against the device when it connects).
    public var supportsControls: Bool { state.withLock { $0.supportsControls } }

    /// Most controls the session accepts: the bound device's (0 when it cannot drive controls), or
    /// ``ControlLimits/maximumControls`` while no device is bound.
    public var maxControlsCount: Int { state.withLock { $0.maxControlsCount } }

    /// The controls, in the order the picker lists them.
    public var controls: [any CaptureControl] { state.withLock { $0.controls.map { $0 as any CaptureControl } } }

    /// True when ``addControl(_:)`` would accept `control`.
    public func canAddControl(_ control: any CaptureControl) -> Bool { refusal(toAdd: control) == nil }

    /// Why ``addControl(_:)`` would refuse `control`, or nil: ``ControlError/Code/controlsNotSupported``,
    /// ``ControlError/Code/unsupportedControl``, ``ControlError/Code/duplicateControl`` (the same
    /// instance or id), ``ControlError/Code/duplicateZoomSlider`` (a second system zoom slider for the
    /// same camera), ``ControlError/Code/controlLimitReached``, ``ControlError/Code/missingAction``; the
    /// first that applies, in this order.
    public func refusal(toAdd control: any CaptureControl) -> ControlError? {
        state.withLock { state in
            Self.refusal(toAdd: control, existing: state.controls, limit: state.maxControlsCount, supported: state.supportsControls)
        }
    }

    private static func refusal(
        toAdd control: any CaptureControl, existing: [any SessionDrivenControl], limit: Int, supported: Bool
    ) -> ControlError? {
        guard supported else {
            return ControlError(.controlsNotSupported, "this device has no Camera Control hardware")
        }
        guard let driven = control as? any SessionDrivenControl else {
            return ControlError(.unsupportedControl, "\(type(of: control)) is not a control this module can drive")
        }
        if existing.contains(where: { $0 === driven }) {
            return ControlError(.duplicateControl, "control \(control.id) is already in the session")
        }
        if let device = driven.zoomDeviceID, existing.contains(where: { $0.zoomDeviceID == device }) {
            return ControlError(.duplicateZoomSlider, "camera \(device) already has a system zoom slider")
        }
        if existing.contains(where: { $0.id == control.id }) {
            return ControlError(.duplicateControl, "another control already has id \(control.id)")
        }
        guard existing.count < limit else {
            return ControlError(.controlLimitReached, "the session already holds maxControlsCount (\(limit)) controls")
        }
        guard control.hasAction else {
            return ControlError(.missingAction, "control \(control.id) has no action; call setActionQueue first")
        }
        return nil
    }

    /// Adds `control` at the end of the list (allowed while the overlay is showing); throws the reason
    /// ``refusal(toAdd:)`` gives.
    public func addControl(_ control: any CaptureControl) throws(ControlError) {
        let refusal = state.withLock { state -> ControlError? in
            let limit = state.maxControlsCount
            if let refusal = Self.refusal(toAdd: control, existing: state.controls, limit: limit, supported: state.supportsControls) {
                return refusal
            }
            // The refusal check proved the cast succeeds.
            if let driven = control as? any SessionDrivenControl { state.controls.append(driven) }
            return nil
        }
        if let refusal { throw refusal }
    }

    /// Removes `control` (by identity); returns false if it was not in the session. If it was the
    /// active control, the first control becomes active; if it was the last, a showing overlay hides
    /// (the delegate is told, as for ``handle(_:beforeDelivery:)``).
    @discardableResult
    public func removeControl(_ control: any CaptureControl) -> Bool {
        let result = state.withLock { state -> (Bool, [OverlayEffect], Delegation)? in
            let before = state.controls.count
            state.controls.removeAll { $0 === control }
            guard state.controls.count != before else { return nil }
            let effects = state.overlay.setControls(state.shownSnapshots)
            return (true, effects, Delegation(state))
        }
        guard let (_, effects, delegation) = result else { return false }
        deliver(effects, atMicros: state.withLock { $0.overlay.nowMicros }, delegation: delegation)
        return true
    }

    // MARK: Delegate and event interaction

    /// Sets the delegate (held weakly) and where it is called (a serial executor; default main queue).
    public func setControlsDelegate(_ delegate: (any CaptureControlsDelegate)?, executor: any ActionExecutor = DispatchQueue.main) {
        state.withLock { state in
            state.delegate = delegate
            state.delegateExecutor = executor
        }
    }

    /// Attaches the capture event interaction (held weakly). Without one that is alive and enabled,
    /// the overlay never shows and ``ControlsDiagnostic/noEventInteraction`` is recorded.
    public func attachEventInteraction(_ interaction: CaptureEventInteraction?) {
        state.withLock { $0.eventInteraction = interaction }
    }

    /// Overrides the event-interaction check (true: behave as if one is attached and enabled; nil: use
    /// ``attachEventInteraction(_:)``). For hosts that route capture events some other way, and tests.
    public func setEventInteractionAttached(_ attached: Bool?) {
        state.withLock { $0.eventInteractionOverride = attached }
    }

    /// True when an enabled event interaction is attached (or the override says so).
    public var isEventInteractionAttached: Bool {
        let (override, interaction) = state.withLock { ($0.eventInteractionOverride, $0.eventInteraction) }
        if let override { return override }
        return interaction?.isEnabled ?? false
    }

    /// True unless the attached event interaction says its capture session is not running (with the
    /// override set, the session counts as running). The overlay never shows while it is not.
    public var isCaptureSessionRunning: Bool {
        let (override, interaction) = state.withLock { ($0.eventInteractionOverride, $0.eventInteraction) }
        if override != nil { return true }
        return interaction?.isSessionRunning ?? false
    }

    /// True when the overlay may show and stay: an enabled event interaction is attached and its capture
    /// session runs (or the override says so). When this turns false while the overlay shows, the next
    /// gesture or ``advance(toMicros:beforeDelivery:)`` dismisses it, and no gesture moves a control meanwhile.
    public var isOverlayAllowed: Bool { isEventInteractionAttached && isCaptureSessionRunning }

    // MARK: Overlay

    /// Where the overlay is.
    public var phase: OverlayPhase { state.withLock { $0.overlay.phase } }
    /// The app's interface orientation (portrait by default): which way slides move values and where the
    /// overlay sits (``overlayPlacement``). Set it whenever the interface rotates.
    public var interfaceOrientation: InterfaceOrientation {
        get { state.withLock { $0.overlay.orientation } }
        set { state.withLock { $0.overlay.orientation = newValue } }
    }
    /// The screen edge the overlay is drawn along for ``interfaceOrientation``.
    public var overlayPlacement: OverlayPlacement { interfaceOrientation.overlayPlacement }

    /// True while the overlay has the fullscreen appearance.
    public var isFullscreen: Bool { state.withLock { $0.overlay.isFullscreen } }
    /// The control the next light press shows (the last one used).
    public var activeControlID: ControlID? { state.withLock { $0.overlay.activeControlID } }

    /// Problems recorded so far (bounded; a repeat of the newest entry is not added again).
    public var diagnostics: [ControlsDiagnostic] { state.withLock { $0.diagnostics.entries } }

    /// What would keep the overlay from showing right now (empty when it can show).
    public var readinessProblems: [ControlsDiagnostic] {
        let attached = isEventInteractionAttached
        let running = isCaptureSessionRunning
        return state.withLock { Self.problems(state: $0, attached: attached, running: running) }
    }

    private static func problems(state: State, attached: Bool, running: Bool) -> [ControlsDiagnostic] {
        var problems: [ControlsDiagnostic] = []
        if !state.supportsControls { problems.append(.controlsNotSupported) }
        if !attached { problems.append(.noEventInteraction) } else if !running { problems.append(.sessionNotRunning) }
        if state.controls.isEmpty { problems.append(.noControls) }
        if state.delegate == nil { problems.append(.noDelegate) }
        return problems
    }

    /// The device time at which ``advance(toMicros:beforeDelivery:)`` has work (momentum, dismissal, a coalesced action).
    public var nextDeadlineMicros: UInt64? {
        state.withLock { state in
            let times = [state.overlay.nextDeadlineMicros] + state.controls.map(\.nextActionFlushMicros)
            return times.compactMap { $0 }.min()
        }
    }

    /// Feeds a gesture (from the recogniser; any source) and returns the overlay's effects, after
    /// applying value changes to the controls (running their actions) and queueing delegate calls.
    /// `beforeDelivery` hears the effects first (``HostCore`` reports them to its observer so: an effect is
    /// seen before the delegate calls and actions it causes).
    @discardableResult
    public func handle(_ gesture: Gesture, beforeDelivery: ([OverlayEffect]) -> Void = { _ in }) -> [OverlayEffect] {
        let attached = isEventInteractionAttached
        let running = isCaptureSessionRunning
        let (effects, delegation) = state.withLock { state -> ([OverlayEffect], Delegation) in
            var effects = state.overlay.setControls(state.shownSnapshots)
            let wouldShow: Bool
            switch gesture.kind {
            case .lightPressBegan, .doubleLightPress: wouldShow = gesture.source == .cameraControl
            default: wouldShow = false
            }
            if state.overlay.phase == .hidden {
                let problems = Self.problems(state: state, attached: attached, running: running)
                if let first = problems.first {
                    // A light press waiting for its confirmation is dropped: its release (a tap) or a slide
                    // under it would show the overlay the app can no longer have.
                    state.overlay.forgetPendingLightPress()
                    if wouldShow {
                        state.diagnostics.record(first)
                        effects += state.overlay.advance(toMicros: gesture.timestampMicros)
                        return (effects, Delegation(state))
                    }
                }
            } else if !(attached && running) {
                // The interaction was disabled (or its session stopped) while the overlay showed: it goes,
                // and this gesture moves nothing.
                effects += state.overlay.dismiss(atMicros: gesture.timestampMicros)
                return (effects, Delegation(state))
            }
            effects += state.overlay.handle(gesture)
            return (effects, Delegation(state))
        }
        beforeDelivery(effects)
        deliver(effects, atMicros: gesture.timestampMicros, delegation: delegation)
        return effects
    }

    /// Moves device time on: momentum frames, dismissal, due coalesced actions (`beforeDelivery` hears the
    /// effects first, as in ``handle(_:beforeDelivery:)``).
    @discardableResult
    public func advance(toMicros micros: UInt64, beforeDelivery: ([OverlayEffect]) -> Void = { _ in }) -> [OverlayEffect] {
        let attached = isEventInteractionAttached
        let running = isCaptureSessionRunning
        let (effects, delegation) = state.withLock { state -> ([OverlayEffect], Delegation) in
            var effects = state.overlay.setControls(state.shownSnapshots)
            // A light press waiting for its confirmation shows nothing once the overlay cannot show
            // (capture stopped meanwhile): it is dropped, as at the press itself.
            if state.overlay.phase == .hidden,
                !Self.problems(state: state, attached: attached, running: running).isEmpty
            {
                state.overlay.forgetPendingLightPress()
            } else if state.overlay.phase != .hidden, !(attached && running) {
                effects += state.overlay.dismiss(atMicros: micros)  // the interaction disabled, or capture stopped
            }
            effects += state.overlay.advance(toMicros: micros)
            return (effects, Delegation(state))
        }
        beforeDelivery(effects)
        deliver(effects, atMicros: micros, delegation: delegation)
        return effects
    }

    /// The device's clock starts again (``HostCore`` calls it for each new session): the overlay's time goes
    /// back with it (``OverlayStateMachine/restartClock()``). Without it, after a device that had run for an
    /// hour restarted, the overlay would not confirm or dismiss itself until the new clock passed the old one.
    public func restartClock() {
        state.withLock { $0.overlay.restartClock() }
    }

    /// Hides the overlay now (capture stopped, device disconnected); `beforeDelivery` hears the effects first.
    @discardableResult
    public func dismiss(atMicros micros: UInt64, beforeDelivery: ([OverlayEffect]) -> Void = { _ in }) -> [OverlayEffect] {
        let (effects, delegation) = state.withLock { state -> ([OverlayEffect], Delegation) in
            (state.overlay.dismiss(atMicros: micros), Delegation(state))
        }
        beforeDelivery(effects)
        deliver(effects, atMicros: micros, delegation: delegation)
        return effects
    }

    // MARK: Delivery

    /// What delivery needs, copied out of the lock.
    private struct Delegation: Sendable {
        let controls: [any SessionDrivenControl]
        let delegate: (any CaptureControlsDelegate)?
        let executor: any ActionExecutor

        init(_ state: State) {
            controls = state.controls
            delegate = state.delegate
            executor = state.delegateExecutor
        }
    }

    private func deliver(_ effects: [OverlayEffect], atMicros now: UInt64, delegation: Delegation) {
        var hid = false
        for effect in effects {
            switch effect {
            case .valueChanged(let id, let value, .slider):
                delegation.controls.first { $0.id == id }?.applyOverlayValue(value, atMicros: now)
            case .overlayShown:
                call(delegation) { $0.sessionControlsDidBecomeActive($1) }
            case .enteredFullscreen:
                call(delegation) { $0.sessionControlsWillEnterFullscreenAppearance($1) }
            case .exitedFullscreen:
                call(delegation) { $0.sessionControlsWillExitFullscreenAppearance($1) }
            case .overlayHidden:
                hid = true
                call(delegation) { $0.sessionControlsDidBecomeInactive($1) }
            case .valueChanged, .pickerOpened, .pickerMoved, .controlSelected, .haptic:
                break
            }
        }
        for control in delegation.controls { control.flushCoalescedAction(nowMicros: now, force: hid) }
    }

    private func call(
        _ delegation: Delegation,
        _ body: @escaping @Sendable (any CaptureControlsDelegate, CaptureControlsSession) -> Void
    ) {
        guard let delegate = delegation.delegate else { return }
        delegation.executor.execute { body(delegate, self) }
    }
}
