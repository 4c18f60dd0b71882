import CameraControlWire

/// What the overlay state machine asks the world to do, in order. Each has a one-line, stable
/// ``description`` for effect logs (`value-changed zoom 2.5 slider`, `haptic detent @1250000`).
public enum OverlayEffect: Hashable, Sendable, CustomStringConvertible {
    /// The overlay appeared showing this control (controls became active).
    case overlayShown(ControlID)
    /// The overlay went away (controls became inactive). Always after ``exitedFullscreen``.
    case overlayHidden
    /// The overlay took the fullscreen appearance (adjusting or picking): hide duplicate app UI.
    case enteredFullscreen
    /// The fullscreen appearance ends: restore app UI.
    case exitedFullscreen
    /// A control's value changed.
    case valueChanged(ControlID, ControlValue, ValueChangeOrigin)
    /// The control picker opened with this entry highlighted.
    case pickerOpened(highlightedIndex: Int)
    /// The picker's highlight moved to this entry.
    case pickerMoved(Int)
    /// The picker confirmed this control; it is now the active one.
    case controlSelected(ControlID)
    /// Play a haptic (`detent`, `limit`; never `unspecified`); `atMicros` is the device time of the gesture
    /// sample (or momentum frame) that caused it.
    case haptic(HapticPattern, atMicros: UInt64)

    /// One line: `overlay-shown zoom`, `overlay-hidden`, `entered-fullscreen`, `exited-fullscreen`,
    /// `value-changed <id> <value> <origin>`, `picker-opened <index>`, `picker-moved <index>`,
    /// `control-selected <id>`, `haptic <pattern> @<micros>`.
    public var description: String {
        switch self {
        case .overlayShown(let id): "overlay-shown \(id)"
        case .overlayHidden: "overlay-hidden"
        case .enteredFullscreen: "entered-fullscreen"
        case .exitedFullscreen: "exited-fullscreen"
        case .valueChanged(let id, let value, let origin): "value-changed \(id) \(value) \(origin)"
        case .pickerOpened(let index): "picker-opened \(index)"
        case .pickerMoved(let index): "picker-moved \(index)"
        case .controlSelected(let id): "control-selected \(id)"
        case .haptic(let pattern, let micros): "haptic \(pattern) @\(micros)"
        }
    }
}

/// Where the overlay is, as seen from outside.
public enum OverlayPhase: Hashable, Sendable, CustomStringConvertible {
    /// No overlay.
    case hidden
    /// The overlay shows the active control after a light press; not yet adjusting.
    case showing(ControlID)
    /// The active control is being adjusted (fullscreen appearance).
    case adjusting(ControlID)
    /// The control picker is open with this entry highlighted (fullscreen appearance).
    case picking(highlightedIndex: Int)

    /// `hidden`, `showing <id>`, `adjusting <id>`, `picking <index>`.
    public var description: String {
        switch self {
        case .hidden: "hidden"
        case .showing(let id): "showing \(id)"
        case .adjusting(let id): "adjusting \(id)"
        case .picking(let index): "picking \(index)"
        }
    }
}

/// Tuning of the overlay; every default is explained in `docs/CONTROLS.md`. Distances are strip
/// lengths (the strip is 1), velocities strip lengths per second, times microseconds of device time.
public struct OverlayConfiguration: Hashable, Sendable {
    /// No touch for this long dismisses the overlay. Default 2 s.
    public var dismissAfterMicros: UInt64
    /// Strip travel that sweeps a continuous slider's whole range. Default 1 (one full swipe).
    public var continuousStripsPerRange: Double
    /// Least strip travel per discrete step or picker index; long lists then need several swipes.
    /// Default 0.05 (lists up to 21 values fit one swipe).
    public var minimumStepTravel: Double
    /// Strip travel per entry in the control picker. Default 0.15.
    public var pickerStepTravel: Double
    /// Below this speed a slide is in fine mode. Default 0.25 strips/s.
    public var fineModeVelocity: Double
    /// Gain applied to slide travel in fine mode. Default 0.3.
    public var fineModeGain: Double
    /// A slide that ends at least this fast keeps gliding (momentum). Default 1.5 strips/s.
    public var momentumMinimumVelocity: Double
    /// Momentum stops when its speed falls below this. Default 0.2 strips/s.
    public var momentumStopVelocity: Double
    /// Momentum decays as exp(-t / τ) with this τ. Default 150 ms.
    public var momentumTimeConstantMicros: UInt64
    /// While gliding, the machine wants a tick this often. Default 16 667 µs (60 Hz).
    public var frameIntervalMicros: UInt64
    /// Half-width of the magnet zone around a prominent value, as a fraction of the slider's travel.
    /// Default 0.03.
    public var prominentMagnetWidth: Double
    /// A light press from a hidden overlay is confirmed (the overlay shows, with its fullscreen appearance)
    /// only once it has been held this long without becoming a full click, or when it is released, or
    /// when a slide begins, whichever comes first; 0 shows it at once. Default 100 ms: longer than the
    /// light-to-full crossing of any realistic click, so a full click from idle never flashes the overlay
    /// (docs/CONTROLS.md, "Light-press confirmation").
    public var lightPressConfirmMicros: UInt64

    /// A configuration; every argument has its documented default.
    public init(
        dismissAfterMicros: UInt64 = 2_000_000,
        continuousStripsPerRange: Double = 1,
        minimumStepTravel: Double = 0.05,
        pickerStepTravel: Double = 0.15,
        fineModeVelocity: Double = 0.25,
        fineModeGain: Double = 0.3,
        momentumMinimumVelocity: Double = 1.5,
        momentumStopVelocity: Double = 0.2,
        momentumTimeConstantMicros: UInt64 = 150_000,
        frameIntervalMicros: UInt64 = 16_667,
        prominentMagnetWidth: Double = 0.03,
        lightPressConfirmMicros: UInt64 = 100_000
    ) {
        self.dismissAfterMicros = dismissAfterMicros
        self.continuousStripsPerRange = continuousStripsPerRange
        self.minimumStepTravel = minimumStepTravel
        self.pickerStepTravel = pickerStepTravel
        self.fineModeVelocity = fineModeVelocity
        self.fineModeGain = fineModeGain
        self.momentumMinimumVelocity = momentumMinimumVelocity
        self.momentumStopVelocity = momentumStopVelocity
        self.momentumTimeConstantMicros = momentumTimeConstantMicros
        self.frameIntervalMicros = frameIntervalMicros
        self.prominentMagnetWidth = prominentMagnetWidth
        self.lightPressConfirmMicros = lightPressConfirmMicros
    }

    /// Throws ``ControlError/Code/invalidConfiguration`` naming the first bad field.
    public func validate() throws(ControlError) {
        let positive: [(String, Double)] = [
            ("continuousStripsPerRange", continuousStripsPerRange), ("minimumStepTravel", minimumStepTravel),
            ("pickerStepTravel", pickerStepTravel), ("fineModeGain", fineModeGain),
            ("momentumMinimumVelocity", momentumMinimumVelocity), ("momentumStopVelocity", momentumStopVelocity),
        ]
        for (name, value) in positive where !(value.isFinite && value > 0) {
            throw ControlError(.invalidConfiguration, "\(name) must be a finite number > 0, got \(value)")
        }
        let nonNegative: [(String, Double)] = [
            ("fineModeVelocity", fineModeVelocity), ("prominentMagnetWidth", prominentMagnetWidth),
        ]
        for (name, value) in nonNegative where !(value.isFinite && value >= 0) {
            throw ControlError(.invalidConfiguration, "\(name) must be a finite number ≥ 0, got \(value)")
        }
        guard prominentMagnetWidth < 0.5 else {
            throw ControlError(.invalidConfiguration, "prominentMagnetWidth must be < 0.5, got \(prominentMagnetWidth)")
        }
        guard momentumStopVelocity < momentumMinimumVelocity else {
            throw ControlError(.invalidConfiguration, "momentumStopVelocity must be below momentumMinimumVelocity")
        }
        for (name, value) in [
            ("dismissAfterMicros", dismissAfterMicros), ("momentumTimeConstantMicros", momentumTimeConstantMicros),
            ("frameIntervalMicros", frameIntervalMicros),
        ] where value == 0 || value > 3_600_000_000 {
            throw ControlError(.invalidConfiguration, "\(name) must be in 1 µs ... 1 h, got \(value)")
        }
        guard lightPressConfirmMicros <= 1_000_000 else {
            throw ControlError(.invalidConfiguration, "lightPressConfirmMicros must be 0 ... 1 s, got \(lightPressConfirmMicros)")
        }
    }
}
