import CameraControlGestures
import CameraControlWire

/// What the router decided, in the order it must be acted on.
public enum CaptureRouterOutput: Hashable, Sendable {
    /// Deliver a capture event to the handler with this role.
    case event(CaptureEvent, CaptureHandlerRole)
    /// A press the app does not take: the host performs the default action.
    case defaultAction(DefaultActionEvent)
    /// A remote click was delivered while the default capture sound is on: play this sound
    /// (the system's tone for remote clicks; AVCaptureEventInteraction plays it itself).
    case defaultSound(Sound, for: CaptureEventID)
}

/// The capture-event state machine (AVCaptureEventInteraction's rules), pure: gestures, session state
/// and host time in, capture events out.
///
/// Routing (decided once, when a press begins, and kept for its whole life, so the same press never
/// reaches two handlers):
///
/// | gesture source | running and enabled | otherwise |
/// |---|---|---|
/// | volume down, action button, Camera Control full click, remote click | primary | default action |
/// | volume up | secondary (primary when there is no secondary handler) | default action (`volumeUp`) |
///
/// - Only `pressBegan`, `longPressBegan`, `pressEnded`, `pressCancelled` and `remoteClick` gestures
///   matter; light presses, slides and touches never capture (they drive the controls overlay).
/// - `began` at press down, `ended` at release (capture here), `cancelled` when the press cannot end
///   normally: the session stops, the interaction is disabled, or the device is lost (the recogniser's
///   `pressCancelled`, or ``cancelAll(atHostMicros:)``). Every `began` gets exactly one `ended` or
///   `cancelled`; nothing ends without a `began`.
/// - A press that began while the session was not running, or while disabled, is never delivered, not
///   even its end: it goes to its ``DefaultAction`` (with phases of its own) instead.
/// - A remote click is a `began` and an `ended` at once.
/// - **One press per handler role at a time.** A press that would go to a handler while another press
///   holds that handler (Camera Control held, then volume down) is ignored for its whole life: no
///   `began`, no `ended`, no default action; it is counted in ``ignoredPressCount`` and listed in
///   ``diagnostics``. Apple's events carry no source or id, so an app can only pair a `began` with the
///   next `ended`; two overlapping presses to one handler would read as one long press and take two
///   photos. Primary and secondary presses stay independent (Apple: handlers that "respond
///   independently"). Presses on their default action are not limited.
public struct CaptureEventRouter: Sendable {
    /// How many diagnostics ``diagnostics`` keeps (the oldest go first).
    public static let maximumDiagnostics = 64

    /// How the app set the interaction up.
    public struct Configuration: Hashable, Sendable {
        /// True when a secondary handler exists (else volume up goes to the primary one).
        public var hasSecondaryHandler: Bool
        /// False when the app cannot respond: presses get their default action.
        public var isEnabled: Bool
        /// True when the app plays capture sounds itself (``CaptureEvent/shouldPlaySound``).
        public var defaultCaptureSoundDisabled: Bool

        /// A configuration; by default one handler, enabled, default sound on.
        public init(hasSecondaryHandler: Bool = false, isEnabled: Bool = true, defaultCaptureSoundDisabled: Bool = false) {
            self.hasSecondaryHandler = hasSecondaryHandler
            self.isEnabled = isEnabled
            self.defaultCaptureSoundDisabled = defaultCaptureSoundDisabled
        }
    }

    private enum Route: Hashable, Sendable {
        case handler(CaptureHandlerRole)
        case defaultAction(DefaultAction)
    }

    private struct InFlight: Sendable {
        var id: CaptureEventID
        var route: Route
        var isLongPress = false
    }

    /// The current configuration (change it with the setters, which cancel what they must).
    public private(set) var configuration: Configuration
    /// True while the capture session runs (events are delivered only then).
    public private(set) var isSessionRunning: Bool
    /// Presses ignored because their handler was busy with another press (see the type's rules).
    public private(set) var ignoredPressCount: UInt64 = 0
    /// What the router refused to deliver and why, newest last (bounded by ``maximumDiagnostics``).
    public private(set) var diagnostics: [CaptureDiagnostic] = []
    private var inFlight: [InputSource: InFlight] = [:]
    private var nextID: UInt64 = 1
    private var latestDeviceMicros: UInt64 = 0

    /// A router with nothing in flight. The session is not running until ``setSessionRunning(_:atHostMicros:)``.
    public init(configuration: Configuration = Configuration(), isSessionRunning: Bool = false) {
        self.configuration = configuration
        self.isSessionRunning = isSessionRunning
    }

    /// Presses in flight, by the order they began: their ids and whether a handler (true) or a default
    /// action (false) gets them.
    public var pressesInFlight: [(id: CaptureEventID, source: InputSource, toHandler: Bool)] {
        inFlight.map { source, press in
            if case .handler = press.route { return (press.id, source, true) }
            return (press.id, source, false)
        }.sorted { $0.id < $1.id }
    }

    // MARK: Session state

    /// Starts or stops delivery. Stopping cancels every press in flight to a handler (`cancelled`);
    /// presses on their default action go on. Starting does not adopt presses already in flight.
    public mutating func setSessionRunning(_ running: Bool, atHostMicros now: UInt64) -> [CaptureRouterOutput] {
        isSessionRunning = running
        return running ? [] : cancelHandlerPresses(atHostMicros: now)
    }

    /// Enables or disables the interaction. Disabling cancels every press in flight to a handler.
    public mutating func setEnabled(_ enabled: Bool, atHostMicros now: UInt64) -> [CaptureRouterOutput] {
        configuration.isEnabled = enabled
        return enabled ? [] : cancelHandlerPresses(atHostMicros: now)
    }

    /// Whether a secondary handler exists; affects presses that begin afterwards.
    public mutating func setHasSecondaryHandler(_ hasSecondary: Bool) {
        configuration.hasSecondaryHandler = hasSecondary
    }

    /// Whether the app plays capture sounds itself; affects presses that begin afterwards.
    public mutating func setDefaultCaptureSoundDisabled(_ disabled: Bool) {
        configuration.defaultCaptureSoundDisabled = disabled
    }

    /// The device is gone: cancels every press in flight, to handlers and default actions alike.
    public mutating func cancelAll(atHostMicros now: UInt64) -> [CaptureRouterOutput] {
        var out: [CaptureRouterOutput] = []
        for entry in pressesInFlight {
            guard let press = inFlight.removeValue(forKey: entry.source) else { continue }
            out.append(output(press, .cancelled, source: entry.source, gesture: nil, now: now))
        }
        return out
    }

    // MARK: Gestures

    /// Routes one gesture received at host time `now` (microseconds, the clock ``CaptureEvent/play(_:)``
    /// judges age by) and returns what to deliver, in order.
    public mutating func handle(_ gesture: Gesture, atHostMicros now: UInt64) -> [CaptureRouterOutput] {
        var out: [CaptureRouterOutput] = []
        handle(gesture, atHostMicros: now, into: &out)
        return out
    }

    /// ``handle(_:atHostMicros:)-(Gesture,_)`` appending to `out` (a buffer the caller keeps: no array per gesture).
    public mutating func handle(_ gesture: Gesture, atHostMicros now: UInt64, into out: inout [CaptureRouterOutput]) {
        latestDeviceMicros = max(latestDeviceMicros, gesture.timestampMicros)
        // A remote click is always the remote's, whatever source the device put on it.
        let source: InputSource = gesture.kind == .remoteClick ? .remote : gesture.source
        switch gesture.kind {
        case .pressBegan:
            guard inFlight[source] == nil, let press = begin(source, gesture: gesture) else { return }
            inFlight[source] = press
            out.append(output(press, .began, source: source, gesture: gesture, now: now))
        case .longPressBegan:
            inFlight[source]?.isLongPress = true
        case .pressEnded(let summary):
            guard var press = inFlight.removeValue(forKey: source) else { return }
            press.isLongPress = press.isLongPress || summary.isLongPress
            out.append(output(press, .ended, source: source, gesture: gesture, summary: summary, now: now))
        case .pressCancelled:
            guard let press = inFlight.removeValue(forKey: source) else { return }
            out.append(output(press, .cancelled, source: source, gesture: gesture, now: now))
        case .remoteClick:
            guard let press = begin(source, gesture: gesture) else { return }
            let summary = PressSummary(durationMicros: 0, isLongPress: false, peakForceMillinewtons: gesture.forceMillinewtons)
            out.append(output(press, .began, source: source, gesture: gesture, now: now))
            out.append(output(press, .ended, source: source, gesture: gesture, summary: summary, now: now))
            if case .handler = press.route, !configuration.defaultCaptureSoundDisabled {
                out.append(.defaultSound(.shutter, for: press.id))
            }
        case .touchBegan, .touchEnded, .lightPressBegan, .lightPressEnded, .doubleLightPress,
            .slideBegan, .slideChanged, .slideEnded:
            break
        }
    }

    /// Routes several gestures received at `now`.
    public mutating func handle(_ gestures: some Sequence<Gesture>, atHostMicros now: UInt64) -> [CaptureRouterOutput] {
        var out: [CaptureRouterOutput] = []
        for gesture in gestures { handle(gesture, atHostMicros: now, into: &out) }
        return out
    }

    // MARK: Helpers

    /// A new press from `source`, routed; nil when the source starts nothing, or when its handler is busy
    /// with another press (then the press is ignored and recorded).
    private mutating func begin(_ source: InputSource, gesture: Gesture) -> InFlight? {
        guard let fallback = DefaultAction(source: source) else { return nil }
        let route: Route
        if isSessionRunning && configuration.isEnabled {
            let role: CaptureHandlerRole = source == .volumeUp && configuration.hasSecondaryHandler ? .secondary : .primary
            if let busy = oldestPress(routedTo: .handler(role)) {
                ignoredPressCount &+= 1
                if diagnostics.count >= Self.maximumDiagnostics { diagnostics.removeFirst() }
                diagnostics.append(
                    .overlappingPressIgnored(
                        source: source, role: role, activePress: busy.id, deviceTimestampMicros: gesture.timestampMicros))
                return nil
            }
            route = .handler(role)
        } else {
            route = .defaultAction(fallback)
        }
        let id = CaptureEventID(rawValue: nextID)
        nextID &+= 1
        return InFlight(id: id, route: route)
    }

    /// The earliest press in flight on `route` (one loop, no array: this runs on every press).
    private func oldestPress(routedTo route: Route) -> InFlight? {
        var oldest: InFlight?
        for press in inFlight.values where press.route == route {
            if let current = oldest, current.id < press.id { continue }
            oldest = press
        }
        return oldest
    }

    private mutating func cancelHandlerPresses(atHostMicros now: UInt64) -> [CaptureRouterOutput] {
        var out: [CaptureRouterOutput] = []
        for entry in pressesInFlight where entry.toHandler {
            guard let press = inFlight.removeValue(forKey: entry.source) else { continue }
            out.append(output(press, .cancelled, source: entry.source, gesture: nil, now: now))
        }
        return out
    }

    private func output(
        _ press: InFlight, _ phase: CaptureEventPhase, source: InputSource, gesture: Gesture?,
        summary: PressSummary? = nil, now: UInt64
    ) -> CaptureRouterOutput {
        let deviceTime = gesture?.timestampMicros ?? latestDeviceMicros
        switch press.route {
        case .defaultAction(let action):
            return .defaultAction(
                DefaultActionEvent(action: action, phase: phase, id: press.id, source: source, deviceTimestampMicros: deviceTime))
        case .handler(let role):
            let event = CaptureEvent(
                phase: phase,
                id: press.id,
                source: source,
                forceMillinewtons: gesture?.forceMillinewtons ?? 0,
                peakForceMillinewtons: summary?.peakForceMillinewtons ?? 0,
                deviceTimestampMicros: deviceTime,
                pressDurationMicros: summary?.durationMicros,
                isLongPress: press.isLongPress,
                shouldPlaySound: source == .remote && configuration.defaultCaptureSoundDisabled,
                receivedAtHostMicros: now
            )
            return .event(event, role)
        }
    }
}

/// Something the router did not deliver, and why (Apple's stack drops these silently).
public enum CaptureDiagnostic: Hashable, Sendable, CustomStringConvertible {
    /// A press on `source` began while `activePress` held the `role` handler: it was ignored for its
    /// whole life (no `began`, no `ended`, no default action).
    case overlappingPressIgnored(
        source: InputSource, role: CaptureHandlerRole, activePress: CaptureEventID, deviceTimestampMicros: UInt64)

    /// `overlapping-press-ignored volume-down: primary busy with press#1 @1250000`.
    public var description: String {
        switch self {
        case .overlappingPressIgnored(let source, let role, let active, let micros):
            "overlapping-press-ignored \(source): \(role.rawValue) busy with \(active) @\(micros)"
        }
    }
}
