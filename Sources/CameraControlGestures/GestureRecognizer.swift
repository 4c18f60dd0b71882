import CameraControlWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns device input events into gestures: light press, double light press, slide, full click,
/// click-and-hold, button clicks and holds, remote clicks.
///
/// Pure and deterministic: events and time go in, gestures come out. It has no clock of its own: time
/// is the events' device timestamps (microseconds) plus whatever ``advance(toMicros:)`` is told, so a
/// hold is recognised as a long press even when no further event arrives.
///
/// ```
/// var recognizer = GestureRecognizer(configuration: .init(slideResolution: caps.slideResolution,
///                                                         slideLengthMicrometres: caps.slideLengthUm))
/// for event in events { deliver(recognizer.handle(event)) }   // as events arrive
/// deliver(recognizer.advance(toMicros: deviceNow))              // periodically, e.g. every 10 ms
/// deliver(recognizer.reset())                                   // the device went away
/// ```
///
/// Guarantees (each is tested, also over thousands of random event sequences):
/// - every `pressBegan` is followed by exactly one `pressEnded` or `pressCancelled` for that source, and
///   neither comes without a `pressBegan`; at most one press per source is in flight;
/// - `longPressBegan` comes only between a press's `pressBegan` and its end, at most once, and
///   `pressEnded`'s `isLongPress` is true exactly when it came;
/// - `lightPressBegan`/`lightPressEnded`, `slideBegan`/`slideEnded` and `touchBegan`/`touchEnded` pair
///   up the same way (``reset(cancellingAtMicros:)`` closes whatever is open);
/// - an UP without its DOWN, a DOWN while already down, an event of unknown kind, a duplicated event
///   (same non-zero event number) and a DOWN older than the last UP of the same input are ignored.
///
/// A light press that escalates to a full press stays a light press: `lightPressEnded` still comes when
/// the light press is released; the full click is a separate `pressBegan`/`pressEnded`. The full click
/// is what captures (see CameraControlCapture); a light press never does.
public struct GestureRecognizer: Sendable {
    /// The thresholds and windows in use. Changing it keeps the state (presses stay in flight).
    public var configuration: Configuration

    /// A recogniser with nothing in flight.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    // MARK: State

    private struct PressState: Sendable {
        var beganAt: UInt64
        var peakForce: UInt32
        var lastForce: UInt32
        var longPressReported = false
    }

    private struct LightPressState: Sendable {
        var beganAt: UInt64
        var escalated = false
        var slid = false
        var completedDouble = false
    }

    private struct SlideState: Sendable {
        /// Where the finger came to rest; a slide begins once it moves the slop away from here.
        var anchor: Double?
        var lastPosition: Double?
        var lastSampleAt: UInt64?
        var lastMoveAt: UInt64?
        var velocity: Double = 0
        var isActive = false
    }

    private enum Slot: Hashable, Sendable {
        case touch
        case lightPress
        case press(InputSource)
    }

    /// The latest device time seen (events or `advance`); nil before the first.
    private var latestMicros: UInt64?
    /// Device time up to which the device's best-effort events (slide moves, touches) have surely arrived,
    /// or nil: no limit, every event arrives at once (virtual time, a replay). An idle slide ends only once
    /// this horizon is ``Configuration/slideIdleEndMicros`` past its last move, so that moves still on their
    /// way do not begin a second slide. A host whose line brings events late sets it at every advance to
    /// its estimate of the device's clock minus the line's lateness (`HostCore.deliveryLagMicros`); a slide
    /// move or touch that arrives moves it up to its own time (best-effort events come in order). Reliable
    /// events (presses, buttons) overtake queued moves and do not move it. ``reset(cancellingAtMicros:)``
    /// clears it.
    public var bestEffortHorizonMicros: UInt64?
    private var touchBeganAt: UInt64?
    private var lightPress: LightPressState?
    /// When an eligible first light press ended (a double light press may follow).
    private var pendingDoubleSince: UInt64?
    private var presses: [InputSource: PressState] = [:]
    private var slide = SlideState()
    private var lastReleaseAt: [Slot: UInt64] = [:]
    /// The last ``Configuration/duplicateHistoryLength`` event numbers, as a ring: the oldest is replaced
    /// at ``oldestEventNumber`` once it is full (no array shifted for every event).
    private var recentEventNumbers: [UInt32] = []
    private var oldestEventNumber = 0

    // MARK: Observing

    /// Sources whose press (full press or button) is in flight, in source order.
    public var pressesInFlight: [InputSource] { presses.keys.sorted { $0.rawValue < $1.rawValue } }
    /// True while a touch on the Camera Control is open.
    public var isTouching: Bool { touchBeganAt != nil }
    /// True while a light press is open.
    public var isLightPressed: Bool { lightPress != nil }
    /// True while a slide is open.
    public var isSliding: Bool { slide.isActive }
    /// The latest device time the recogniser has seen, microseconds (nil before the first event).
    public var currentMicros: UInt64? { latestMicros }
    /// The earliest device time at which ``advance(toMicros:)`` has a gesture to report (a press reaching
    /// the long-press threshold, an idle slide ending), or nil when nothing is pending. A host sleeps
    /// until then instead of ticking.
    public var nextDeadlineMicros: UInt64? {
        [pressDeadlineMicros, slideIdleDeadlineMicros].compactMap { $0 }.min()
    }

    /// The earliest device time at which a press in flight reaches the long-press threshold, or nil.
    public var pressDeadlineMicros: UInt64? {
        presses.values.filter { !$0.longPressReported }.map { $0.beganAt &+ configuration.longPressThresholdMicros }.min()
    }

    /// The time on ``bestEffortHorizonMicros``'s clock at which the open slide ends idle, or nil (no slide, or
    /// no idle end). Without a horizon, a device time like the others.
    public var slideIdleDeadlineMicros: UInt64? {
        guard slide.isActive, let idle = configuration.slideIdleEndMicros, let moved = slide.lastMoveAt else { return nil }
        return moved &+ idle
    }

    // MARK: Feeding

    /// Handles one device event (first advancing time to its timestamp) and returns the gestures it
    /// completes, in order. Never traps; events that make no sense in the current state are ignored.
    public mutating func handle(_ event: InputEvent) -> [Gesture] {
        var out: [Gesture] = []
        handle(event, into: &out)
        return out
    }

    /// ``handle(_:)-(InputEvent)`` appending the gestures to `out` (a buffer the caller keeps: no array
    /// per event).
    public mutating func handle(_ event: InputEvent, into out: inout [Gesture]) {
        guard event.kind != .unspecified else { return }
        if let latest = latestMicros, event.timestampMicros < latest,
            latest - event.timestampMicros > configuration.clockRestartToleranceMicros
        {
            out += reset(cancellingAtMicros: latest)
        }
        if event.eventNumber != 0 {
            if recentEventNumbers.contains(event.eventNumber) { return }
            remember(eventNumber: event.eventNumber)
        }

        if let horizon = bestEffortHorizonMicros, !event.kind.isReliable {
            bestEffortHorizonMicros = max(horizon, event.timestampMicros)
        }
        advance(toMicros: event.timestampMicros, into: &out)
        let now = max(event.timestampMicros, latestMicros ?? 0)
        let ts = event.timestampMicros

        switch event.kind {
        case .unspecified:
            break
        case .touchDown:
            guard !isStale(.touch, ts) else { break }
            if touchBeganAt == nil {
                touchBeganAt = now
                out.append(gesture(.touchBegan, .cameraControl, ts, event.forceMillinewtons))
            }
            if !slide.isActive { restSlide(at: fraction(event.position), time: ts) }
        case .touchUp:
            lastReleaseAt[.touch] = max(lastReleaseAt[.touch] ?? 0, ts)
            guard touchBeganAt != nil else { break }
            closeTouch(at: ts, force: event.forceMillinewtons, velocity: nil, into: &out)
        case .lightPressDown:
            guard !isStale(.lightPress, ts), lightPress == nil else { break }
            impliedTouch(event, into: &out)
            var isDouble = false
            if let firstEnded = pendingDoubleSince, now >= firstEnded {
                let gap = now - firstEnded
                isDouble =
                    gap >= configuration.doubleLightPressMinimumGapMicros
                    && gap <= configuration.doubleLightPressWindowMicros
            }
            pendingDoubleSince = nil
            lightPress = LightPressState(beganAt: now, completedDouble: isDouble)
            out.append(gesture(.lightPressBegan, .cameraControl, ts, event.forceMillinewtons))
            if isDouble { out.append(gesture(.doubleLightPress, .cameraControl, ts, event.forceMillinewtons)) }
        case .lightPressUp:
            lastReleaseAt[.lightPress] = max(lastReleaseAt[.lightPress] ?? 0, ts)
            guard let press = lightPress else { break }
            lightPress = nil
            out.append(gesture(.lightPressEnded, .cameraControl, ts, event.forceMillinewtons))
            let held = now - min(press.beganAt, now)
            let eligible =
                !press.escalated && !press.slid && !press.completedDouble
                && held < configuration.doubleLightPressMaximumHoldMicros
            pendingDoubleSince = eligible ? now : nil
        case .fullPressDown:
            guard !isStale(.press(.cameraControl), ts), presses[.cameraControl] == nil else { break }
            impliedTouch(event, into: &out)
            lightPress?.escalated = true
            pendingDoubleSince = nil
            beginPress(.cameraControl, event: event, into: &out)
        case .fullPressUp:
            endPress(.cameraControl, event: event, into: &out)
        case .buttonDown:
            guard Self.isButton(event.source), !isStale(.press(event.source), ts),
                presses[event.source] == nil
            else { break }
            beginPress(event.source, event: event, into: &out)
        case .buttonUp:
            guard Self.isButton(event.source) else { break }
            endPress(event.source, event: event, into: &out)
        case .remoteClick:
            let source: InputSource = event.source == .unspecified ? .remote : event.source
            out.append(gesture(.remoteClick, source, ts, event.forceMillinewtons))
        case .slide:
            handleSlide(event, into: &out)
        }
    }

    /// Handles several events in order and returns all gestures they complete.
    public mutating func handle(_ events: some Sequence<InputEvent>) -> [Gesture] {
        var out: [Gesture] = []
        for event in events { handle(event, into: &out) }
        return out
    }

    /// Moves device time forward to `now` (microseconds) and returns the time-based gestures that fell
    /// due: `longPressBegan` for presses held past the threshold, `slideEnded` for a slide idle past
    /// ``Configuration/slideIdleEndMicros``; an expired double-light-press window is forgotten silently.
    /// Time never goes backwards: an earlier `now` does nothing.
    public mutating func advance(toMicros now: UInt64) -> [Gesture] {
        var out: [Gesture] = []
        advance(toMicros: now, into: &out)
        return out
    }

    /// ``advance(toMicros:)`` appending the gestures to `out`.
    public mutating func advance(toMicros now: UInt64, into out: inout [Gesture]) {
        if let latest = latestMicros, now < latest { return }
        latestMicros = now

        // With no press in flight (a press's own DOWN, a touch, a slide) no sorted list is made.
        if !presses.isEmpty { reportLongPresses(at: now, into: &out) }
        let idleNow = min(now, bestEffortHorizonMicros ?? now)
        if slide.isActive, let idle = configuration.slideIdleEndMicros, let moved = slide.lastMoveAt,
            idleNow >= moved, idleNow - moved >= idle
        {
            let position = slide.lastPosition ?? 0
            out.append(gesture(.slideEnded(SlideMotion(position: position, delta: 0, velocity: 0)), .cameraControl, now, 0))
            slide.isActive = false
            slide.velocity = 0
            slide.anchor = position
        }
        if let since = pendingDoubleSince, now >= since, now - since > configuration.doubleLightPressWindowMicros {
            pendingDoubleSince = nil
        }
    }

    /// Forgets everything (the device went away, or its clock restarted) and returns the gestures that
    /// close what was open, all stamped `now`: `slideEnded` (velocity 0), `lightPressEnded`,
    /// `pressCancelled` for each press in flight (in source order), `touchEnded`.
    /// Afterwards the recogniser is as new (time too), with the same configuration.
    public mutating func reset(cancellingAtMicros now: UInt64) -> [Gesture] {
        var out: [Gesture] = []
        if slide.isActive {
            let motion = SlideMotion(position: slide.lastPosition ?? 0, delta: 0, velocity: 0)
            out.append(gesture(.slideEnded(motion), .cameraControl, now, 0))
        }
        if lightPress != nil { out.append(gesture(.lightPressEnded, .cameraControl, now, 0)) }
        for source in pressesInFlight { out.append(gesture(.pressCancelled, source, now, 0)) }
        if touchBeganAt != nil { out.append(gesture(.touchEnded, .cameraControl, now, 0)) }
        self = GestureRecognizer(configuration: configuration)
        return out
    }

    /// ``reset(cancellingAtMicros:)`` stamped with the latest device time seen (0 before any).
    public mutating func reset() -> [Gesture] {
        reset(cancellingAtMicros: latestMicros ?? 0)
    }

    // MARK: Helpers

    /// Buttons that make press gestures through `buttonDown`/`buttonUp`.
    public static let buttonSources: Set<InputSource> = [.volumeUp, .volumeDown, .actionButton]

    /// True for ``buttonSources`` (a switch: no set hashed on every button event).
    private static func isButton(_ source: InputSource) -> Bool {
        switch source {
        case .volumeUp, .volumeDown, .actionButton: true
        default: false
        }
    }

    private func gesture(_ kind: GestureKind, _ source: InputSource, _ ts: UInt64, _ force: UInt32) -> Gesture {
        Gesture(kind: kind, source: source, timestampMicros: ts, forceMillinewtons: force)
    }

    /// A DOWN older than the last UP seen on the same input arrived out of order: ignore it.
    private func isStale(_ slot: Slot, _ ts: UInt64) -> Bool {
        guard let released = lastReleaseAt[slot] else { return false }
        return ts < released
    }

    private func fraction(_ position: UInt32) -> Double {
        let resolution = configuration.effectiveResolution
        guard resolution > 1 else { return 0 }
        return Double(min(position, resolution - 1)) / Double(resolution - 1)
    }

    private mutating func restSlide(at position: Double, time: UInt64) {
        slide = SlideState(anchor: position, lastPosition: position, lastSampleAt: time, lastMoveAt: time)
    }

    /// A Camera Control press or slide implies a touch, also when the (best-effort) touch-down was lost.
    private mutating func impliedTouch(_ event: InputEvent, into out: inout [Gesture]) {
        guard touchBeganAt == nil else { return }
        touchBeganAt = max(event.timestampMicros, latestMicros ?? 0)
        if !slide.isActive { restSlide(at: fraction(event.position), time: event.timestampMicros) }
        out.append(gesture(.touchBegan, .cameraControl, event.timestampMicros, event.forceMillinewtons))
    }

    private mutating func closeTouch(at ts: UInt64, force: UInt32, velocity: Double?, into out: inout [Gesture]) {
        if slide.isActive {
            let motion = SlideMotion(position: slide.lastPosition ?? 0, delta: 0, velocity: velocity ?? slide.velocity)
            out.append(gesture(.slideEnded(motion), .cameraControl, ts, force))
        }
        slide = SlideState()
        touchBeganAt = nil
        out.append(gesture(.touchEnded, .cameraControl, ts, force))
    }

    /// Adds `number` to the recent event numbers, in place of the oldest once the history is full.
    private mutating func remember(eventNumber number: UInt32) {
        let limit = max(configuration.duplicateHistoryLength, 1)
        if recentEventNumbers.count == limit {
            recentEventNumbers[oldestEventNumber] = number
            oldestEventNumber = (oldestEventNumber + 1) % limit
            return
        }
        // Not full yet, or the history's length changed: oldest first, the newest `limit - 1` kept.
        if oldestEventNumber != 0 {
            recentEventNumbers = Array(recentEventNumbers[oldestEventNumber...] + recentEventNumbers[..<oldestEventNumber])
            oldestEventNumber = 0
        }
        if recentEventNumbers.count >= limit { recentEventNumbers.removeFirst(recentEventNumbers.count - limit + 1) }
        recentEventNumbers.append(number)
    }

    /// `longPressBegan` for each press held past the threshold, in source order.
    private mutating func reportLongPresses(at now: UInt64, into out: inout [Gesture]) {
        for source in pressesInFlight {
            guard var press = presses[source], !press.longPressReported else { continue }
            let held = now - min(press.beganAt, now)
            if held >= configuration.longPressThresholdMicros {
                press.longPressReported = true
                presses[source] = press
                out.append(gesture(.longPressBegan(heldMicros: held), source, now, press.lastForce))
            }
        }
    }

    private mutating func beginPress(_ source: InputSource, event: InputEvent, into out: inout [Gesture]) {
        let force = event.forceMillinewtons
        // The press's own device time, also when the DOWN arrives late (a retransmission): its duration
        // and its long-press threshold are measured from when it happened, not from when it arrived.
        presses[source] = PressState(
            beganAt: event.timestampMicros, peakForce: max(force, event.peakForceMillinewtons), lastForce: force)
        out.append(gesture(.pressBegan, source, event.timestampMicros, force))
    }

    private mutating func endPress(_ source: InputSource, event: InputEvent, into out: inout [Gesture]) {
        lastReleaseAt[.press(source)] = max(lastReleaseAt[.press(source)] ?? 0, event.timestampMicros)
        guard let press = presses.removeValue(forKey: source) else { return }
        let summary = PressSummary(
            // Device timestamps of the DOWN and the UP: a retransmitted UP that arrives after the host's
            // clock moved on must not lengthen the press (a click would turn into a hold).
            durationMicros: event.timestampMicros - min(press.beganAt, event.timestampMicros),
            isLongPress: press.longPressReported,
            peakForceMillinewtons: max(press.peakForce, event.peakForceMillinewtons, event.forceMillinewtons)
        )
        out.append(gesture(.pressEnded(summary), source, event.timestampMicros, event.forceMillinewtons))
    }

    private mutating func handleSlide(_ event: InputEvent, into out: inout [Gesture]) {
        guard event.source == .cameraControl || event.source == .unspecified else { return }
        let ts = event.timestampMicros
        if let last = slide.lastSampleAt, ts < last { return }  // an older sample: latest wins
        impliedTouch(event, into: &out)
        let position = fraction(event.position)
        guard let anchor = slide.anchor, let last = slide.lastPosition, let lastAt = slide.lastSampleAt else {
            restSlide(at: position, time: ts)
            return
        }
        let delta = position - last
        let dt = ts - lastAt
        if dt > 0 {
            let raw = delta / (Double(dt) / 1_000_000)
            let tau = Double(configuration.velocitySmoothingMicros)
            let alpha = tau > 0 ? 1 - exp(-Double(dt) / tau) : 1
            slide.velocity += alpha * (raw - slide.velocity)
        }
        slide.lastSampleAt = ts
        guard delta != 0 else { return }
        slide.lastPosition = position
        slide.lastMoveAt = ts
        if !slide.isActive {
            guard abs(position - anchor) >= configuration.effectiveSlop else { return }
            slide.isActive = true
            lightPress?.slid = true
            pendingDoubleSince = nil
            let motion = SlideMotion(position: position, delta: 0, velocity: slide.velocity)
            out.append(gesture(.slideBegan(motion), .cameraControl, ts, event.forceMillinewtons))
        } else {
            let motion = SlideMotion(position: position, delta: delta, velocity: slide.velocity)
            out.append(gesture(.slideChanged(motion), .cameraControl, ts, event.forceMillinewtons))
        }
    }
}
