import CameraControlGestures
import CameraControlWire
import Foundation

/// The Camera Control overlay as a pure state machine: gestures and explicit device time (µs) in, a list
/// of ``OverlayEffect`` out. No clocks, no threads, no I/O; the same inputs give the same effects.
///
/// ```
///                 light press                      slide
///   ┌────────┐ ───────────────▶ ┌─────────┐ ─────────────────▶ ┌───────────┐
///   │ hidden │                  │ showing │                    │ adjusting │◀─┐ slide (value,
///   └────────┘ ◀─────────────── └─────────┘                    └───────────┘  │  detents, limit)
///       ▲        timeout            │ double light press            │  │ └────┘
///       │                           ▼                               │  │ double light press
///       │  timeout            ┌──────────┐  light press (confirm)   │  ▼
///       └─────────────────────│ picking  │─────────────────────────▶│ (adjusting the chosen control)
///          (exit fullscreen,  └──────────┘◀─────────────────────────┘
///           then hidden)        slide: move highlight (detents)
/// ```
///
/// A light press from hidden is confirmed before the overlay shows: after
/// ``OverlayConfiguration/lightPressConfirmMicros`` without a full click, at its release, or at a slide,
/// whichever comes first; a full click within that time never shows it (no flash before the shutter). The
/// overlay then shows with its fullscreen appearance at once: the light press gives the clean preview
/// (WWDC25 session 253; docs/APPLE-SEMANTICS.md).
///
/// In the picker, a light press confirms when it is released (`lightPressEnded`), if it began after the
/// picker opened (the double press's own release does not confirm) and did not become a full click.
///
/// Only gestures from ``InputSource/cameraControl`` drive it. A full click (`pressBegan`/`pressEnded`)
/// is the shutter: it collapses the overlay (as Apple's does), never changes a value, and slides are
/// ignored while the switch is down.
/// Call ``advance(toMicros:)`` at ``nextDeadlineMicros`` (momentum frames, dismissal); every
/// ``handle(_:)`` first advances to the gesture's timestamp itself.
public struct OverlayStateMachine: Sendable {
    private enum Mode: Hashable, Sendable {
        case hidden
        case showing
        case adjusting
        case picking(pressSeen: Bool)
    }

    private enum Edge: Hashable, Sendable {
        case lower
        case upper
    }

    private struct Glide: Hashable, Sendable {
        var startMicros: UInt64
        var startCursor: Double
        var velocity: Double
        var endMicros: UInt64
    }

    /// The tuning in use.
    public let configuration: OverlayConfiguration
    /// The controls, in picker order.
    public private(set) var controls: [ControlSnapshot] = []
    /// The control the overlay shows on the next light press: the last one used (or the first).
    public private(set) var activeControlID: ControlID?
    /// True while the overlay has the fullscreen appearance.
    public private(set) var isFullscreen = false
    /// The latest device time seen (time never goes backwards).
    public private(set) var nowMicros: UInt64 = 0
    /// The interface orientation: slides are mirrored where it turns the strip against the screen, and
    /// the overlay sits along ``InterfaceOrientation/overlayPlacement``. Changing it stops momentum.
    public var orientation: InterfaceOrientation = .portrait {
        didSet { if orientation != oldValue { glide = nil } }
    }
    /// Where the overlay is drawn for the current orientation.
    public var placement: OverlayPlacement { orientation.overlayPlacement }

    private var mode: Mode = .hidden
    private var cursor = 0.0
    private var cursorValue: ControlValue?
    private var pickerCursor = 0.0
    private var restingEdge: Edge?
    private var glide: Glide?
    private var isTouching = false
    private var shutterDown = false
    private var lightPressEscalated = false
    private var lastActivityMicros: UInt64 = 0
    /// When a light press from hidden began that is not confirmed yet.
    private var pendingLightPressMicros: UInt64?

    /// A hidden overlay; throws ``ControlError/Code/invalidConfiguration``.
    public init(
        configuration: OverlayConfiguration = OverlayConfiguration(), controls: [ControlSnapshot] = []
    )
        throws(ControlError)
    {
        try configuration.validate()
        self.configuration = configuration
        _ = setControls(controls)
    }

    /// Where the overlay is.
    public var phase: OverlayPhase {
        switch mode {
        case .hidden: return .hidden
        case .showing: return activeControlID.map(OverlayPhase.showing) ?? .hidden
        case .adjusting: return activeControlID.map(OverlayPhase.adjusting) ?? .hidden
        case .picking: return .picking(highlightedIndex: highlightedIndex)
        }
    }

    /// The device time at which ``advance(toMicros:)`` has work (a momentum frame or the dismissal), if any.
    public var nextDeadlineMicros: UInt64? {
        if let glide { return min(nowMicros &+ configuration.frameIntervalMicros, glide.endMicros) }
        if let pending = pendingLightPressMicros { return pending &+ configuration.lightPressConfirmMicros }
        guard mode != .hidden, !isTouching else { return nil }
        return lastActivityMicros &+ configuration.dismissAfterMicros
    }

    // MARK: Inputs

    /// Replaces the controls (added, removed, enabled, values changed from elsewhere). Keeps the active
    /// control when it is still there, else picks the first (``OverlayEffect/controlSelected(_:)`` when the
    /// overlay shows it: an overlay drawn from the effects would go on showing the removed one); hides the
    /// overlay when none is left.
    /// A changed value of the active control moves the slide cursor there (the newest value wins).
    public mutating func setControls(_ snapshots: [ControlSnapshot]) -> [OverlayEffect] {
        // A re-ranged control (its camera's format changed) maps the cursor anew.
        if let old = activeControl, let new = snapshots.first(where: { $0.id == old.id }), new.adjustment != old.adjustment {
            cursorValue = nil
            glide = nil
        }
        controls = snapshots
        var effects: [OverlayEffect] = []
        if activeIndex == nil {
            let replaced = activeControlID != nil
            activeControlID = controls.first?.id
            cursorValue = nil
            glide = nil
            if replaced, let first = activeControlID, mode == .showing || mode == .adjusting {
                effects.append(.controlSelected(first))
            }
        } else if let active = activeControl, active.value != cursorValue, cursorValue != nil {
            cursorValue = nil
            glide = nil
        }
        if controls.isEmpty, mode != .hidden { return hide() }
        if case .picking = mode { pickerCursor = min(pickerCursor, Double(controls.count - 1)) }
        return effects
    }

    /// Feeds one gesture. Gestures from sources other than the Camera Control are ignored.
    public mutating func handle(_ gesture: Gesture) -> [OverlayEffect] {
        guard gesture.source == .cameraControl else { return [] }
        var effects = advance(toMicros: gesture.timestampMicros)
        let now = nowMicros
        switch gesture.kind {
        case .touchBegan:
            isTouching = true
            glide = nil
            lastActivityMicros = now
        case .touchEnded:
            isTouching = false
            lastActivityMicros = now
        case .lightPressBegan:
            lastActivityMicros = now
            lightPressEscalated = false
            switch mode {
            case .hidden:
                if configuration.lightPressConfirmMicros == 0 {
                    effects += show()
                } else {
                    pendingLightPressMicros = now
                }
            case .picking: mode = .picking(pressSeen: true)
            case .showing, .adjusting: break
            }
        case .lightPressEnded:
            lastActivityMicros = now
            // Released before the hold-off and never a full click: a light tap, confirmed now.
            if pendingLightPressMicros != nil { effects += show() }
            if case .picking(pressSeen: true) = mode, !lightPressEscalated { effects += confirmPicker() }
        case .doubleLightPress:
            lastActivityMicros = now
            if mode == .hidden { effects += show() }
            switch mode {
            case .showing, .adjusting: effects += openPicker()
            case .hidden, .picking: break
            }
        case .slideBegan(let raw), .slideChanged(let raw):
            let motion = oriented(raw)
            lastActivityMicros = now
            glide = nil
            // A slide under a light press confirms it: a full click does not slide.
            if pendingLightPressMicros != nil, !shutterDown { effects += show() }
            effects += slide(motion, at: now, ended: false)
        case .slideEnded(let raw):
            let motion = oriented(raw)
            lastActivityMicros = now
            glide = nil
            effects += slide(motion, at: now, ended: true)
        case .pressBegan:
            // The full click is the shutter: the overlay collapses at once (its delegate is told the
            // controls became inactive), before the capture layer delivers the click.
            shutterDown = true
            lightPressEscalated = true
            pendingLightPressMicros = nil
            glide = nil
            lastActivityMicros = now
            effects += hide()
        case .pressEnded, .pressCancelled:
            shutterDown = false
            lastActivityMicros = now
        case .longPressBegan:
            lastActivityMicros = now
        case .remoteClick:
            break
        }
        return effects
    }

    /// Moves device time to `micros` (never backwards): runs momentum up to then and dismisses the
    /// overlay when nothing touched it for ``OverlayConfiguration/dismissAfterMicros``.
    public mutating func advance(toMicros micros: UInt64) -> [OverlayEffect] {
        nowMicros = max(nowMicros, micros)
        var effects: [OverlayEffect] = []
        if let pending = pendingLightPressMicros, nowMicros >= pending &+ configuration.lightPressConfirmMicros {
            effects += show()
        }
        if let current = glide {
            let t = min(nowMicros, current.endMicros)
            if mode == .adjusting, activeControl?.isEnabled == true {
                let tau = Double(configuration.momentumTimeConstantMicros) / 1e6
                let elapsed = Double(t - current.startMicros) / 1e6
                let target = current.startCursor + current.velocity * tau * (1 - exp(-elapsed / tau))
                effects += moveCursor(to: target, at: t)
                if t >= current.endMicros || cursor <= 0 || cursor >= 1 {
                    glide = nil
                    lastActivityMicros = max(lastActivityMicros, t)
                }
            } else {
                glide = nil
            }
        }
        if mode != .hidden, !isTouching, glide == nil,
            nowMicros >= lastActivityMicros &+ configuration.dismissAfterMicros
        {
            effects += hide()
        }
        return effects
    }

    /// Hides the overlay now (capture stopped, device gone): `exited-fullscreen` (if fullscreen), then
    /// `overlay-hidden`. The active control is kept.
    public mutating func dismiss(atMicros micros: UInt64) -> [OverlayEffect] {
        var effects = advance(toMicros: micros)
        effects += hide()
        isTouching = false
        shutterDown = false
        return effects
    }

    /// The device's clock starts again (a new session: a device that restarted counts from its boot): time
    /// goes back to 0 with it, a light press waiting for confirmation and momentum are dropped, so that the
    /// confirmation, momentum and dismissal fall due on the new clock, not once it passes the old one's time.
    public mutating func restartClock() {
        nowMicros = 0
        lastActivityMicros = 0
        pendingLightPressMicros = nil
        glide = nil
    }

    /// True while a light press from hidden waits for its confirmation.
    public var isLightPressPending: Bool { pendingLightPressMicros != nil }

    /// Drops a light press that waits for its confirmation (the overlay can no longer show); nothing else
    /// changes.
    public mutating func forgetPendingLightPress() {
        pendingLightPressMicros = nil
    }

    /// The slide as the person sees it: delta and velocity mirrored when the orientation turns the strip's
    /// positive direction down or left on screen.
    private func oriented(_ motion: SlideMotion) -> SlideMotion {
        let sign = orientation.slideSign
        guard sign < 0 else { return motion }
        return SlideMotion(position: 1 - motion.position, delta: -motion.delta, velocity: -motion.velocity)
    }

    // MARK: Transitions

    private var activeIndex: Int? {
        guard let activeControlID else { return nil }
        return controls.firstIndex { $0.id == activeControlID }
    }

    private var activeControl: ControlSnapshot? { activeIndex.map { controls[$0] } }

    private var highlightedIndex: Int {
        guard !controls.isEmpty else { return 0 }
        return Int(min(max(pickerCursor.rounded(), 0), Double(controls.count - 1)))
    }

    /// Shows the overlay with its fullscreen appearance: a confirmed light press is the clean preview.
    private mutating func show() -> [OverlayEffect] {
        pendingLightPressMicros = nil
        if activeIndex == nil { activeControlID = controls.first?.id }
        guard let id = activeControlID else { return [] }
        mode = .showing
        cursorValue = nil
        restingEdge = nil
        return [.overlayShown(id)] + enterFullscreen()
    }

    private mutating func enterFullscreen() -> [OverlayEffect] {
        guard !isFullscreen else { return [] }
        isFullscreen = true
        return [.enteredFullscreen]
    }

    private mutating func hide() -> [OverlayEffect] {
        pendingLightPressMicros = nil
        var effects: [OverlayEffect] = []
        if isFullscreen {
            isFullscreen = false
            effects.append(.exitedFullscreen)
        }
        if mode != .hidden {
            mode = .hidden
            effects.append(.overlayHidden)
        }
        glide = nil
        restingEdge = nil
        cursorValue = nil
        return effects
    }

    private mutating func openPicker() -> [OverlayEffect] {
        var effects = enterFullscreen()
        pickerCursor = Double(activeIndex ?? 0)
        restingEdge = nil
        glide = nil
        mode = .picking(pressSeen: false)
        effects.append(.pickerOpened(highlightedIndex: highlightedIndex))
        return effects
    }

    private mutating func confirmPicker() -> [OverlayEffect] {
        guard !controls.isEmpty else { return [] }
        let id = controls[highlightedIndex].id
        activeControlID = id
        cursorValue = nil
        restingEdge = nil
        mode = .adjusting
        return [.controlSelected(id)]
    }

    private mutating func slide(_ motion: SlideMotion, at now: UInt64, ended: Bool) -> [OverlayEffect] {
        guard !shutterDown, motion.delta.isFinite, motion.velocity.isFinite else { return [] }
        var effects: [OverlayEffect] = []
        switch mode {
        case .hidden:
            return []
        case .picking:
            return movePicker(by: motion.delta, at: now)
        case .showing:
            effects += enterFullscreen()
            mode = .adjusting
        case .adjusting:
            break
        }
        guard let active = activeControl, active.isEnabled else { return effects }
        syncCursor(with: active)
        let gain = abs(motion.velocity) < configuration.fineModeVelocity ? configuration.fineModeGain : 1
        let span = active.stripsPerRange(configuration)
        effects += moveCursor(to: cursor + motion.delta * gain / span, at: now)
        if ended, abs(motion.velocity) >= configuration.momentumMinimumVelocity {
            let velocity = motion.velocity / span
            let stop = configuration.momentumStopVelocity / span
            let tau = Double(configuration.momentumTimeConstantMicros) / 1e6
            let seconds = tau * log(abs(velocity) / stop)
            let atEnd = (velocity > 0 && cursor >= 1) || (velocity < 0 && cursor <= 0)
            if !atEnd, seconds > 0 {
                glide = Glide(
                    startMicros: now, startCursor: cursor, velocity: velocity,
                    endMicros: now &+ UInt64((seconds * 1e6).rounded()))
            }
        }
        return effects
    }

    private mutating func syncCursor(with active: ControlSnapshot) {
        guard cursorValue != active.value else { return }
        cursor = active.cursor(for: active.value)
        cursorValue = active.value
        restingEdge = nil
    }

    /// Moves the active control's cursor, emitting value, detent and limit effects for this sample.
    private mutating func moveCursor(to target: Double, at now: UInt64) -> [OverlayEffect] {
        guard let index = activeIndex else { return [] }
        let active = controls[index]
        syncCursor(with: active)
        var effects: [OverlayEffect] = []
        let clamped = min(max(target, 0), 1)
        let edge: Edge? = target < 0 ? .lower : (target > 1 ? .upper : nil)
        let old = cursor
        cursor = clamped
        let magnet = configuration.prominentMagnetWidth
        let newValue = active.value(atCursor: clamped, magnetWidth: magnet)
        if newValue != active.value {
            controls[index].value = newValue
            effects.append(.valueChanged(active.id, newValue, .slider))
        }
        cursorValue = newValue
        if active.crossesDetent(from: old, to: clamped, oldValue: active.value, newValue: newValue, magnetWidth: magnet) {
            effects.append(.haptic(.detent, atMicros: now))
        }
        if let edge {
            if restingEdge != edge { effects.append(.haptic(.limit, atMicros: now)) }
            restingEdge = edge
        } else if clamped > 0, clamped < 1 {
            restingEdge = nil
        }
        return effects
    }

    private mutating func movePicker(by delta: Double, at now: UInt64) -> [OverlayEffect] {
        guard !controls.isEmpty else { return [] }
        var effects: [OverlayEffect] = []
        let old = highlightedIndex
        let last = Double(controls.count - 1)
        let target = pickerCursor + delta / configuration.pickerStepTravel
        pickerCursor = min(max(target, 0), last)
        let new = highlightedIndex
        if new != old {
            effects.append(.pickerMoved(new))
            effects.append(.haptic(.detent, atMicros: now))
        }
        let edge: Edge? = target < 0 ? .lower : (target > last ? .upper : nil)
        if let edge {
            if restingEdge != edge { effects.append(.haptic(.limit, atMicros: now)) }
            restingEdge = edge
        } else if pickerCursor > 0, pickerCursor < last {
            restingEdge = nil
        }
        return effects
    }
}

// MARK: Mapping between values and the slide cursor (0 … 1)

extension ControlSnapshot {
    /// Strip lengths that sweep the whole control.
    func stripsPerRange(_ configuration: OverlayConfiguration) -> Double {
        switch adjustment {
        case .slider(.continuous, _):
            return configuration.continuousStripsPerRange
        case .slider(.discrete(let values), _):
            return max(configuration.continuousStripsPerRange, Double(values.count - 1) * configuration.minimumStepTravel)
        case .indexPicker(let count):
            return max(configuration.continuousStripsPerRange, Double(count - 1) * configuration.minimumStepTravel)
        }
    }

    /// The cursor position of `value`.
    func cursor(for value: ControlValue) -> Double {
        switch (adjustment, value) {
        case (.slider(let domain, _), .number(let number)):
            return Self.cursor(for: number, in: domain)
        case (.indexPicker(let count), .index(let index)):
            return count > 1 ? Double(min(max(index, 0), count - 1)) / Double(count - 1) : 0
        default:
            return 0
        }
    }

    static func cursor(for number: Double, in domain: SliderDomain) -> Double {
        switch domain {
        case .continuous(let range, let scale):
            let lower = range.lowerBound
            let upper = range.upperBound
            let raw: Double
            if scale == .logarithmic, lower > 0 {
                raw = log(max(number, lower) / lower) / log(upper / lower)
            } else {
                raw = (number - lower) / (upper - lower)
            }
            return raw.isFinite ? min(max(raw, 0), 1) : 0
        case .discrete(let values):
            guard values.count > 1 else { return 0 }
            return Double(values.nearestIndex(to: number)) / Double(values.count - 1)
        }
    }

    /// The value at `cursor`, with prominent values attracting within `magnetWidth`.
    func value(atCursor cursor: Double, magnetWidth: Double) -> ControlValue {
        switch adjustment {
        case .slider(let domain, let prominent):
            switch domain {
            case .continuous(let range, let scale):
                if let magnet = nearestProminent(prominent, domain: domain, cursor: cursor, width: magnetWidth) {
                    return .number(magnet)
                }
                let lower = range.lowerBound
                let upper = range.upperBound
                let raw: Double
                if scale == .logarithmic, lower > 0 {
                    raw = lower * pow(upper / lower, cursor)
                } else {
                    raw = lower + cursor * (upper - lower)
                }
                return .number(cursor >= 1 ? upper : min(max(raw, lower), upper))
            case .discrete(let values):
                let halfStep = values.count > 1 ? 0.5 / Double(values.count - 1) : 0.5
                if magnetWidth > halfStep,
                    let magnet = nearestProminent(prominent, domain: domain, cursor: cursor, width: magnetWidth)
                {
                    return .number(magnet)
                }
                let index = Int((cursor * Double(values.count - 1)).rounded())
                return .number(values.value(at: index))
            }
        case .indexPicker(let count):
            return .index(Int((cursor * Double(max(count - 1, 0))).rounded()))
        }
    }

    private func nearestProminent(_ prominent: [Double], domain: SliderDomain, cursor: Double, width: Double) -> Double? {
        var best: (Double, Double)?
        for value in prominent {
            let distance = abs(Self.cursor(for: value, in: domain) - cursor)
            if distance <= width, distance < (best?.1 ?? .infinity) { best = (value, distance) }
        }
        return best?.0
    }

    /// True when moving the cursor `from` → `to` crosses a detent: a change of discrete value or picker
    /// index, or (continuous) entering or jumping over a prominent value's magnet zone.
    func crossesDetent(
        from old: Double, to new: Double, oldValue: ControlValue, newValue: ControlValue, magnetWidth: Double
    )
        -> Bool
    {
        switch adjustment {
        case .slider(.continuous(let range, let scale), let prominent):
            let domain = SliderDomain.continuous(range, scale: scale)
            for value in prominent {
                let center = Self.cursor(for: value, in: domain)
                let wasIn = abs(old - center) <= magnetWidth
                let isIn = abs(new - center) <= magnetWidth
                if !wasIn, isIn || ((old < center) != (new < center)) { return true }
            }
            return false
        case .slider(.discrete, _), .indexPicker:
            return oldValue != newValue
        }
    }
}
