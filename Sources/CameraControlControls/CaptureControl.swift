/// A control the Camera Control overlay can show and adjust (`AVCaptureControl`).
///
/// Conforming types in this module: ``CaptureSlider``, ``CaptureIndexPicker``, ``SystemZoomSlider``,
/// ``SystemExposureBiasSlider``. A ``CaptureControlsSession`` refuses conformances from outside the module
/// (``ControlError/Code/unsupportedControl``): it needs to drive the control's value itself.
public protocol CaptureControl: AnyObject, Sendable {
    /// The control's id in effects and descriptions.
    var id: ControlID { get }
    /// The title shown in the overlay and the control picker.
    var localizedTitle: String { get }
    /// The SF-Symbols-style name of the control's icon.
    var symbolName: String { get }
    /// An identifier for UI automation.
    var accessibilityIdentifier: String? { get set }
    /// False: the control stays visible and selectable, but gestures do not change its value.
    var isEnabled: Bool { get set }
    /// True when the control has an action (system sliders always count as having one).
    var hasAction: Bool { get }
    /// What the overlay needs to show and adjust the control, as a value.
    var snapshot: ControlSnapshot { get }
}

/// The module-internal side of a control: what the session calls to apply gesture changes.
protocol SessionDrivenControl: CaptureControl {
    /// Applies a value chosen by the overlay at device time `atMicros` (origin `.slider`).
    func applyOverlayValue(_ value: ControlValue, atMicros: UInt64)
    /// Delivers a coalesced action value that is due at `nowMicros` (or any pending one if `force`).
    func flushCoalescedAction(nowMicros: UInt64, force: Bool)
    /// When a coalesced action value falls due, if one is pending.
    var nextActionFlushMicros: UInt64? { get }
    /// The camera device's id for a system zoom slider, else nil.
    var zoomDeviceID: String? { get }
}

/// What the overlay state machine knows about one control: a plain value, so the machine stays pure.
public struct ControlSnapshot: Hashable, Sendable {
    /// How the control is adjusted.
    public enum Adjustment: Hashable, Sendable {
        /// A slider over a domain, with the values it lands on more easily (sorted).
        case slider(SliderDomain, prominentValues: [Double])
        /// A picker over `count` indexes.
        case indexPicker(count: Int)
    }

    /// The control's id.
    public var id: ControlID
    /// Its title.
    public var title: String
    /// False: gestures do not change the value.
    public var isEnabled: Bool
    /// How it is adjusted.
    public var adjustment: Adjustment
    /// Its current value (`.number` for sliders, `.index` for pickers).
    public var value: ControlValue

    /// A snapshot with every field given.
    public init(id: ControlID, title: String, isEnabled: Bool, adjustment: Adjustment, value: ControlValue) {
        self.id = id
        self.title = title
        self.isEnabled = isEnabled
        self.adjustment = adjustment
        self.value = value
    }
}
