/// What every slider on the Camera Control shows and does, read-only: the app's ``CaptureSlider`` and the
/// system sliders (``SystemZoomSlider``, ``SystemExposureBiasSlider``), which Apple keeps as separate
/// `AVCaptureControl` subclasses.
///
/// Only ``CaptureSlider`` adds the app-facing setters (value, format, prominent values, action); a system
/// slider reads and drives its camera instead. Public but not `open`: nothing outside the module can
/// subclass it. Every mutable field lives behind one `Mutex` (the shared `ControlCore`) and every
/// stored property is a `let`, so `@unchecked Sendable` (needed by a non-final class) is sound.
public class SliderControl: CaptureControl, @unchecked Sendable {
    /// The camera property a system slider reads and drives.
    struct Binding: Sendable {
        let device: any CameraDevice
        let property: CameraProperty
        /// The domain and prominent values for the device's current range (nil: the range is absent or
        /// unusable): a change from the device re-ranges the slider with it (a format change).
        var domainForDevice: (@Sendable (any CameraDevice) -> (SliderDomain, [Double])?)? = nil
    }

    /// What only sliders keep behind the control's lock.
    struct Extra: Sendable {
        var valueFormat: String?
        var prominentValues: [Double] = []
        var deviceObservation: ObserverToken?
        var domain: SliderDomain
        /// True while the slider is disabled because its camera has no usable range.
        var disabledForAbsentRange = false
    }

    /// The control's id.
    public let id: ControlID
    /// The title shown in the overlay.
    public let localizedTitle: String
    /// The icon name.
    public let symbolName: String
    /// The values the slider can take (a system slider's follows its camera's range).
    public var domain: SliderDomain { core.withLock { $0.extra.domain } }
    let binding: Binding?
    let core: ControlCore<Double, Extra>

    /// A slider whose value starts at `initialValue`; with a `binding`, it follows that camera property.
    init(
        title: String, symbolName: String, domain: SliderDomain, id: ControlID?, binding: Binding?,
        initialValue: Double
    ) {
        let id = id ?? ControlID.derived(fromTitle: title)
        self.id = id
        self.localizedTitle = title
        self.symbolName = symbolName
        self.binding = binding
        self.core = ControlCore(id: id, value: initialValue, extra: Extra(domain: domain))
        if let binding {
            let token = binding.device.addObserver { [weak self] change in self?.deviceChanged(change) }
            core.withLock { $0.extra.deviceObservation = token }
        }
    }

    deinit {
        if let binding, let token = core.withLock({ $0.extra.deviceObservation }) {
            binding.device.removeObserver(token)
        }
    }

    // MARK: Properties

    /// The current value (for system sliders, the camera's value as last seen).
    public var value: Double { core.value }

    /// False: the slider stays visible and selectable, but gestures do not change its value.
    public var isEnabled: Bool {
        get { core.isEnabled }
        set { core.isEnabled = newValue }
    }

    /// An identifier for UI automation.
    public var accessibilityIdentifier: String? {
        get { core.accessibilityIdentifier }
        set { core.accessibilityIdentifier = newValue }
    }

    /// The format for the value text (exactly one `%@`), or nil for the plain number.
    public var localizedValueFormat: String? { core.withLock { $0.extra.valueFormat } }

    /// Values the slider lands on more easily (a magnet zone around each), sorted.
    public var prominentValues: [Double] { core.withLock { $0.extra.prominentValues } }

    /// Problems found with this slider's settings or its camera (bounded, newest last).
    public var diagnostics: [ControlsDiagnostic] { core.diagnostics }

    /// True once an action is set (system sliders: always).
    public var hasAction: Bool { binding != nil || core.hasAction }

    /// The text the overlay shows for `value`: the number with up to two decimals, put into
    /// ``localizedValueFormat`` when one is set.
    public func displayText(for value: Double) -> String {
        let number = NumberText.format(value, decimals: 2)
        guard let format = localizedValueFormat else { return number }
        return Self.apply(format: format, to: number)
    }

    /// Calls `observer` on `executor` for every value change, with its origin (`.slider`, `.programmatic`,
    /// `.external`), so UI never goes stale.
    @discardableResult
    public func observeValueChanges(
        on executor: any ActionExecutor, _ observer: @escaping @Sendable (ValueChange<Double>) -> Void
    ) -> ObserverToken {
        core.addObserver(on: executor, observer)
    }

    /// Stops an observer; unknown tokens are ignored.
    public func removeObserver(_ token: ObserverToken) { core.removeObserver(token) }

    /// The overlay's view of the slider.
    public var snapshot: ControlSnapshot {
        core.withLock { state in
            ControlSnapshot(
                id: id, title: localizedTitle, isEnabled: state.isEnabled,
                adjustment: .slider(state.extra.domain, prominentValues: state.extra.prominentValues),
                value: .number(state.value))
        }
    }

    // MARK: Settings (the app's through CaptureSlider, the system sliders' at init)

    /// Sets the value format, or records ``ControlsDiagnostic/invalidValueFormat(control:format:)`` and
    /// clears it when `format` is not valid.
    func setValueFormat(_ format: String?) {
        let accepted = format.map(Self.isValidValueFormat) ?? true
        core.withLock { state in
            state.extra.valueFormat = accepted ? format : nil
            if !accepted, let format { state.diagnostics.record(.invalidValueFormat(control: id, format: format)) }
        }
    }

    /// Sets the prominent values (finite, inside the range, snapped to members; sorted, deduplicated).
    func setProminent(_ values: [Double]) throws(ControlError) {
        var checked: [Double] = []
        for value in values {
            guard value.isFinite else { throw ControlError(.nonFiniteValue, "prominent value \(value) is not finite") }
            do {
                checked.append(try domain.validated(value))
            } catch {
                throw ControlError(
                    .prominentValueOutOfRange,
                    "prominent value \(value) is outside \(domain.lowerBound)...\(domain.upperBound)")
            }
        }
        checked.sort()
        var unique: [Double] = []
        for value in checked where unique.last != value { unique.append(value) }
        core.withLock { $0.extra.prominentValues = unique }
    }

    // MARK: Format

    /// True when `format` has exactly one `%@` and no other `%` specifier (`%%` allowed).
    public static func isValidValueFormat(_ format: String) -> Bool {
        var placeholders = 0
        var iterator = format.makeIterator()
        while let ch = iterator.next() {
            guard ch == "%" else { continue }
            switch iterator.next() {
            case "@": placeholders += 1
            case "%": continue
            default: return false
            }
        }
        return placeholders == 1
    }

    static func apply(format: String, to text: String) -> String {
        var out = ""
        var iterator = format.makeIterator()
        while let ch = iterator.next() {
            guard ch == "%" else {
                out.append(ch)
                continue
            }
            switch iterator.next() {
            case "@": out += text
            case "%": out.append("%")
            case let other?: out.append("%"); out.append(other)
            case nil: out.append("%")
            }
        }
        return out
    }

    // MARK: Device following

    private func deviceChanged(_ change: CameraPropertyChange) {
        guard let binding, change.property == binding.property else { return }
        if case .control(let source) = change.source, source == id { return }
        // A format without the range: the slider is disabled and keeps its value (the camera's, clamped into a
        // domain it no longer has, would be a value nobody set); it takes the camera's when a range comes back.
        guard reRange(binding) else { return }
        // Read the device under the slider's lock rather than trusting `change.value`: with writers on
        // several threads, notifications can arrive out of order, and the slider must end at the
        // device's value. (Lock order slider → device is safe: devices never call out under their lock.)
        let domain = domain
        core.adopt(origin: .external) { _ in
            let current = binding.device.value(of: binding.property)
            guard current.isFinite else { return nil }
            let clamped = min(max(current, domain.lowerBound), domain.upperBound)
            return (try? domain.validated(clamped)) ?? clamped
        }
    }
}

extension SliderControl {
    /// Takes the camera's current range (a format change): a new domain and prominent values, the value
    /// clamped by the caller; no usable range disables the slider until one comes back. Returns false when
    /// the camera has no usable range.
    fileprivate func reRange(_ binding: Binding) -> Bool {
        guard let domainForDevice = binding.domainForDevice else { return true }
        let fresh = domainForDevice(binding.device)
        core.withLock { state in
            if let (domain, prominent) = fresh {
                if domain != state.extra.domain {
                    state.extra.domain = domain
                    state.extra.prominentValues = prominent
                }
                if state.extra.disabledForAbsentRange {
                    state.extra.disabledForAbsentRange = false
                    state.isEnabled = true
                }
            } else if !state.extra.disabledForAbsentRange {
                state.extra.disabledForAbsentRange = true
                state.isEnabled = false
            }
        }
        return fresh != nil
    }
}

extension SliderControl: SessionDrivenControl {
    func applyOverlayValue(_ overlayValue: ControlValue, atMicros now: UInt64) {
        guard case .number(let raw) = overlayValue, let value = try? domain.validated(raw) else { return }
        if let binding {
            do {
                try binding.device.setValue(value, of: binding.property, source: .control(id))
            } catch {
                core.record(.deviceRefused(control: id, message: error.message))
                return
            }
        }
        core.applyGestureValue(value, atMicros: now)
    }

    func flushCoalescedAction(nowMicros: UInt64, force: Bool) { core.flushCoalescedAction(nowMicros: nowMicros, force: force) }

    var nextActionFlushMicros: UInt64? { core.nextActionFlushMicros }

    var zoomDeviceID: String? {
        guard let binding, binding.property == .zoomFactor else { return nil }
        return binding.device.uniqueID
    }
}
