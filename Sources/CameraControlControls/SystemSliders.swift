import Dispatch

/// The system zoom slider (`AVCaptureSystemZoomSlider`): continuous over the device's zoom range on a
/// logarithmic scale, prominent at the device's ``CameraDevice/prominentZoomFactors``.
///
/// Like Apple's, it is made from a camera and has no app-facing value, range, format or action setters:
/// it sets the device's zoom itself (set the camera's zoom from code; the slider follows). Its action
/// (if any, given at init) runs only for changes it made (origin `.slider`); it follows zoom changes from
/// elsewhere (a pinch, code) so ``SliderControl/value`` never goes stale, and reports those to
/// ``SliderControl/observeValueChanges(on:_:)`` with origin `.external`. A session accepts one system
/// zoom slider per device ``CameraDevice/uniqueID``.
public final class SystemZoomSlider: SliderControl, @unchecked Sendable {
    /// The camera it drives.
    public let device: any CameraDevice

    /// A zoom slider for `device`, id `zoom` (pass another for a second camera), title `Zoom`, value format
    /// `%@×`, with no app action (the slider still counts as having one). Throws
    /// ``ControlError/Code/invalidRange`` if the device's range is empty or not finite.
    public convenience init(device: any CameraDevice, id: ControlID = "zoom") throws(ControlError) {
        try self.init(device: device, id: id, action: nil)
    }

    /// A zoom slider whose `action` runs on `executor` (default: the main queue, like Apple's main-actor
    /// action) with each zoom factor the slider sets.
    public convenience init(
        device: any CameraDevice, id: ControlID = "zoom", executor: any ActionExecutor = DispatchQueue.main,
        action: @escaping @Sendable (Double) -> Void
    ) throws(ControlError) {
        try self.init(device: device, id: id, action: SystemSliderAction(executor: executor, action: action))
    }

    private init(device: any CameraDevice, id: ControlID, action: SystemSliderAction?) throws(ControlError) {
        let range = device.zoomFactorRange
        try DiscreteValues.checkRange(range)
        self.device = device
        let current = min(max(device.zoomFactor, range.lowerBound), range.upperBound)
        super.init(
            title: "Zoom", symbolName: "plus.magnifyingglass", domain: .continuous(range, scale: .logarithmic),
            id: id, binding: Binding(device: device, property: .zoomFactor, domainForDevice: Self.domain(for:)),
            initialValue: current.isFinite ? current : range.lowerBound)
        configure(format: "%@×", prominent: device.prominentZoomFactors.filter { range.contains($0) }, action: action)
    }

    /// The domain for `device`'s current zoom range, or nil when it has none (a fixed-focal format).
    @Sendable static func domain(for device: any CameraDevice) -> (SliderDomain, [Double])? {
        let range = device.zoomFactorRange
        guard (try? DiscreteValues.checkRange(range)) != nil else { return nil }
        return (.continuous(range, scale: .logarithmic), device.prominentZoomFactors.filter { range.contains($0) })
    }
}

/// The system exposure-bias slider (`AVCaptureSystemExposureBiasSlider`): discrete, 1/3 EV steps over
/// ±2 EV (the multiples of 1/3 inside both ±2 and the device's range), prominent at 0 when available.
/// Sets the device's bias itself, has no app-facing setters; action and following as for
/// ``SystemZoomSlider``.
///
/// A deliberate departure from Apple's header, which calls its slider continuous over the active format's
/// `systemRecommendedExposureBiasRange` (not the device's whole `minExposureTargetBias` …
/// `maxExposureTargetBias`). The steps and the span are what the system's own exposure adjustment shows
/// the person: 1/3 EV stops up to ±2 EV, as a camera's exposure compensation dial. The camera's
/// ``CameraDevice/exposureBiasRange`` plays the recommended range's part (narrower ranges narrow the
/// slider; none disables it); ``defaultRange`` and ``step`` are the system UI's figures
/// (docs/APPLE-SEMANTICS.md, docs/CONTROLS.md, "System sliders").
public final class SystemExposureBiasSlider: SliderControl, @unchecked Sendable {
    /// The camera it drives.
    public let device: any CameraDevice

    /// The default span: ±2 EV.
    public static let defaultRange: ClosedRange<Double> = -2...2
    /// The default step: 1/3 EV.
    public static let step = 1.0 / 3.0

    /// An exposure slider for `device`, id `exposure-bias`, title `Exposure`, format `%@ EV`.
    /// Throws ``ControlError/Code/invalidRange`` when the device range does not overlap ±2 EV in at least
    /// two 1/3 EV steps.
    public convenience init(device: any CameraDevice, id: ControlID = "exposure-bias") throws(ControlError) {
        try self.init(device: device, id: id, action: nil)
    }

    /// An exposure slider whose `action` runs on `executor` (default: the main queue).
    public convenience init(
        device: any CameraDevice, id: ControlID = "exposure-bias", executor: any ActionExecutor = DispatchQueue.main,
        action: @escaping @Sendable (Double) -> Void
    ) throws(ControlError) {
        try self.init(device: device, id: id, action: SystemSliderAction(executor: executor, action: action))
    }

    private init(device: any CameraDevice, id: ControlID, action: SystemSliderAction?) throws(ControlError) {
        let values = try Self.values(for: device.exposureBiasRange)
        self.device = device
        let current = device.exposureBias
        let initial = current.isFinite ? values.value(at: values.nearestIndex(to: current)) : values.first
        super.init(
            title: "Exposure", symbolName: "plusminus.circle", domain: .discrete(values), id: id,
            binding: Binding(device: device, property: .exposureBias, domainForDevice: Self.domain(for:)),
            initialValue: initial)
        configure(format: "%@ EV", prominent: values.first <= 0 && values.last >= 0 ? [0] : [], action: action)
    }

    /// The domain for `device`'s current exposure range, or nil when it holds fewer than two steps.
    @Sendable static func domain(for device: any CameraDevice) -> (SliderDomain, [Double])? {
        guard let values = try? values(for: device.exposureBiasRange) else { return nil }
        return (.discrete(values), values.first <= 0 && values.last >= 0 ? [0] : [])
    }

    /// The multiples of 1/3 EV inside both ±2 EV and `deviceRange`.
    static func values(for deviceRange: ClosedRange<Double>) throws(ControlError) -> DiscreteValues {
        try DiscreteValues.checkRange(deviceRange)
        let lower = max(deviceRange.lowerBound, defaultRange.lowerBound)
        let upper = min(deviceRange.upperBound, defaultRange.upperBound)
        let first = (lower / step - 1e-9).rounded(.up)
        let last = (upper / step + 1e-9).rounded(.down)
        guard first < last else {
            throw ControlError(
                .invalidRange, "device exposure range \(deviceRange) holds fewer than two 1/3 EV steps inside ±2 EV")
        }
        let list = stride(from: first, through: last, by: 1).map { $0 / 3 }
        return try DiscreteValues(values: list)
    }
}

/// A system slider's action, given at init (Apple's `init(device:action:)`).
struct SystemSliderAction: Sendable {
    let executor: any ActionExecutor
    let action: @Sendable (Double) -> Void
}

extension SliderControl {
    /// A system slider's fixed settings: its format, prominent values (inside the domain) and action.
    func configure(format: String, prominent: [Double], action: SystemSliderAction?) {
        setValueFormat(format)
        try? setProminent(prominent)
        if let action { core.setAction(action.executor, coalescing: .everyValue, action: action.action) }
    }
}
