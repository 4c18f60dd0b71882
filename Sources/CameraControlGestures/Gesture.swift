import CameraControlWire

/// How a slide is moving at a sample.
public struct SlideMotion: Hashable, Sendable {
    /// Position along the strip as a fraction, 0 (one end) … 1 (the other).
    public var position: Double
    /// Change of `position` since the previous slide gesture (0 on `began`).
    public var delta: Double
    /// Speed along the strip, strip lengths per second (signed; smoothed).
    public var velocity: Double

    /// A slide sample.
    public init(position: Double, delta: Double, velocity: Double) {
        self.position = position
        self.delta = delta
        self.velocity = velocity
    }
}

/// What a press lasted and how hard it was, when it ends.
public struct PressSummary: Hashable, Sendable {
    /// From press-down to release, microseconds of device time.
    public var durationMicros: UInt64
    /// True when the press was held past the long-press threshold (click-and-hold).
    public var isLongPress: Bool
    /// Largest force during the press, millinewtons (0 for buttons without a force sensor).
    public var peakForceMillinewtons: UInt32

    /// A press summary.
    public init(durationMicros: UInt64, isLongPress: Bool, peakForceMillinewtons: UInt32) {
        self.durationMicros = durationMicros
        self.isLongPress = isLongPress
        self.peakForceMillinewtons = peakForceMillinewtons
    }
}

/// What the recogniser saw.
public enum GestureKind: Hashable, Sendable {
    /// A finger touched the Camera Control.
    case touchBegan
    /// The finger left the Camera Control.
    case touchEnded
    /// Force crossed the light-press stage: shows the overlay.
    case lightPressBegan
    /// The light press was released. Always closes a `lightPressBegan`, also when the press became a
    /// full click or a slide meanwhile (those are reported as their own gestures: a full click is a
    /// separate `pressBegan`/`pressEnded` pair). See docs/GESTURES.md.
    case lightPressEnded
    /// Two light presses within the double-press window: opens the control picker.
    case doubleLightPress
    /// A slide started (the finger moved past the slop distance while touching).
    case slideBegan(SlideMotion)
    /// The slide moved.
    case slideChanged(SlideMotion)
    /// The finger lifted or stopped sliding.
    case slideEnded(SlideMotion)
    /// A clickable input went down: a Camera Control full press, or a button.
    case pressBegan
    /// The press has been held past the long-press threshold (still down).
    case longPressBegan(heldMicros: UInt64)
    /// The press was released: a click, or the end of a click-and-hold.
    case pressEnded(PressSummary)
    /// The press will never end normally (the device went away mid-press).
    case pressCancelled
    /// A remote click (it has no separate down and up).
    case remoteClick
}

/// One recognised gesture, with the input that made it.
public struct Gesture: Hashable, Sendable {
    /// What was recognised.
    public var kind: GestureKind
    /// Which physical input made it.
    public var source: InputSource
    /// Device time of the input event that completed the gesture, microseconds.
    public var timestampMicros: UInt64
    /// Conditioned force at that event, millinewtons.
    public var forceMillinewtons: UInt32

    /// A gesture.
    public init(kind: GestureKind, source: InputSource, timestampMicros: UInt64, forceMillinewtons: UInt32 = 0) {
        self.kind = kind
        self.source = source
        self.timestampMicros = timestampMicros
        self.forceMillinewtons = forceMillinewtons
    }
}

extension GestureKind: CustomStringConvertible {
    /// The gesture's name in kebab case, without its details: `light-press-began`, `slide-changed`,
    /// `press-ended`, `remote-click`, … (the `kind` of camctl's JSON events).
    public var name: String {
        switch self {
        case .touchBegan: "touch-began"
        case .touchEnded: "touch-ended"
        case .lightPressBegan: "light-press-began"
        case .lightPressEnded: "light-press-ended"
        case .doubleLightPress: "double-light-press"
        case .slideBegan: "slide-began"
        case .slideChanged: "slide-changed"
        case .slideEnded: "slide-ended"
        case .pressBegan: "press-began"
        case .longPressBegan: "long-press-began"
        case .pressEnded: "press-ended"
        case .pressCancelled: "press-cancelled"
        case .remoteClick: "remote-click"
        }
    }

    /// ``name`` and the details a person needs: `slide-changed at 0.42 Δ+0.010 v+0.80/s`,
    /// `long-press-began after 500 ms`, `press-ended click 80 ms peak 3500 mN`.
    public var description: String {
        func decimal(_ value: Double, _ places: Int, signed: Bool = false) -> String {
            var scale = 1.0
            for _ in 0..<places { scale *= 10 }
            let rounded = (abs(value) * scale).rounded()
            let whole = Int(rounded / scale)
            let fraction = Int(rounded) - whole * Int(scale)
            var digits = String(fraction)
            digits = String(repeating: "0", count: max(0, places - digits.count)) + digits
            let sign = value < 0 && rounded != 0 ? "-" : (signed ? "+" : "")
            return places > 0 ? "\(sign)\(whole).\(digits)" : "\(sign)\(whole)"
        }
        func millis(_ micros: UInt64) -> String { decimal(Double(micros) / 1000, 0) }
        switch self {
        case .slideBegan(let m), .slideEnded(let m):
            return "\(name) at \(decimal(m.position, 2))"
        case .slideChanged(let m):
            return "\(name) at \(decimal(m.position, 2)) Δ\(decimal(m.delta, 3, signed: true)) v\(decimal(m.velocity, 2, signed: true))/s"
        case .longPressBegan(let held):
            return "\(name) after \(millis(held)) ms"
        case .pressEnded(let s):
            return "\(name) \(s.isLongPress ? "hold" : "click") \(millis(s.durationMicros)) ms peak \(s.peakForceMillinewtons) mN"
        default:
            return name
        }
    }
}
