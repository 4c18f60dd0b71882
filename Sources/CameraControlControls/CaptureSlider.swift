/// A slider on the Camera Control (`AVCaptureSlider`): continuous over a closed range, or discrete by a
/// step or an explicit list of values.
///
/// Thread-safe: every mutable field lives behind one `Mutex` (``Locked``); `let` fields are immutable.
/// The class is not `final` only so the module's ``SystemZoomSlider`` and ``SystemExposureBiasSlider`` can
/// share it; it cannot be subclassed outside the module, hence `@unchecked Sendable` is sound.
///
/// Rules (see `docs/CONTROLS.md`):
/// - ``value`` starts at the minimum; ``setValue(_:)`` throws outside the range and snaps to the nearest
///   member on discrete sliders. Programmatic sets notify observers (origin `.programmatic`), never the
///   action.
/// - The action runs on the executor given to ``setActionQueue(_:coalescing:action:)`` for values the
///   Camera Control gestures choose, once per distinct value (optionally coalesced, latest wins).
/// - A disabled slider keeps its value under gestures; code can still set it.
public class CaptureSlider: CaptureControl, @unchecked Sendable {
    struct Binding: Sendable {
        let device: any CameraDevice
        let property: CameraProperty
    }

    struct State: Sendable {
        var accessibilityIdentifier: String?
        var isEnabled = true
        var value: Double
        var valueFormat: String?
        var prominentValues: [Double] = []
        var action = ActionState<Double>()
        var observers = ObserverList<Double>()
        var diagnostics = DiagnosticLog()
        var deviceObservation: ObserverToken?
    }

    /// The control's id.
    public let id: ControlID
    /// The title shown in the overlay.
    public let localizedTitle: String
    /// The icon name.
    public let symbolName: String
    /// The values the slider can take.
    public let domain: SliderDomain
    let binding: Binding?
    let state: Locked<State>

    /// A continuous slider over `range` (min < max, both finite; else ``ControlError/Code/invalidRange``).
    public convenience init(
        _ localizedTitle: String, symbolName: String, in range: ClosedRange<Double>, id: ControlID? = nil
    ) throws(ControlError) {
        try DiscreteValues.checkRange(range)
        self.init(
            title: localizedTitle, symbolName: symbolName, domain: .continuous(range, scale: .linear), id: id,
            binding: nil, initialValue: range.lowerBound)
    }

    /// A discrete slider: `range.lowerBound`, `+ step`, … not above `range.upperBound`.
    /// Throws ``ControlError/Code/invalidRange``, ``ControlError/Code/invalidStep`` (step ≤ 0, NaN),
    /// ``ControlError/Code/tooManyValues``.
    public convenience init(
        _ localizedTitle: String, symbolName: String, in range: ClosedRange<Double>, step: Double,
        id: ControlID? = nil
    ) throws(ControlError) {
        let values = try DiscreteValues(range: range, step: step)
        self.init(
            title: localizedTitle, symbolName: symbolName, domain: .discrete(values), id: id, binding: nil,
            initialValue: values.first)
    }

    /// A discrete slider over an explicit list (sorted, duplicates removed).
    /// Throws ``ControlError/Code/emptyValues``, ``ControlError/Code/nonFiniteValue``,
    /// ``ControlError/Code/tooManyValues``.
    public convenience init(
        _ localizedTitle: String, symbolName: String, values: [Double], id: ControlID? = nil
    ) throws(ControlError) {
        let set = try DiscreteValues(values: values)
        self.init(
            title: localizedTitle, symbolName: symbolName, domain: .discrete(set), id: id, binding: nil,
            initialValue: set.first)
    }

    init(
        title: String, symbolName: String, domain: SliderDomain, id: ControlID?, binding: Binding?,
        initialValue: Double
    ) {
        self.id = id ?? ControlID.derived(fromTitle: title)
        self.localizedTitle = title
        self.symbolName = symbolName
        self.domain = domain
        self.binding = binding
        var initial = State(value: initialValue)
        initial.action.reset(to: initialValue)
        self.state = Locked(initial)
        if let binding {
            let token = binding.device.addObserver { [weak self] change in self?.deviceChanged(change) }
            state.withLock { $0.deviceObservation = token }
        }
    }

    deinit {
        if let binding, let token = state.withLock({ $0.deviceObservation }) {
            binding.device.removeObserver(token)
        }
    }

    // MARK: Properties

    /// The current value (for system sliders, the device's value as last seen).
    public var value: Double { state.withLock { $0.value } }

    /// Sets the value from code: throws ``ControlError/Code/nonFiniteValue`` or
    /// ``ControlError/Code/valueOutOfRange`` (or the device's error for system sliders); snaps to the
    /// nearest member on discrete sliders. Observers see origin `.programmatic`; the action does not run.
    public func setValue(_ newValue: Double) throws(ControlError) {
        let value = try domain.validated(newValue)
        if let binding { try binding.device.setValue(value, of: binding.property, source: .control(id)) }
        let observers = state.withLock { state -> [ObserverList<Double>.Entry]? in
            state.action.reset(to: value)
            guard state.value != value else { return nil }
            state.value = value
            return state.observers.all
        }
        if let observers { ObserverList.notify(observers, ValueChange(controlID: id, value: value, origin: .programmatic)) }
    }

    /// False: the slider stays visible and selectable, but gestures do not change its value.
    public var isEnabled: Bool {
        get { state.withLock { $0.isEnabled } }
        set { state.withLock { $0.isEnabled = newValue } }
    }

    /// An identifier for UI automation.
    public var accessibilityIdentifier: String? {
        get { state.withLock { $0.accessibilityIdentifier } }
        set { state.withLock { $0.accessibilityIdentifier = newValue } }
    }

    /// A format for the value text with exactly one `%@` (e.g. `"%@ EV"`); `%%` is a literal percent.
    /// Anything else is rejected: the property stays `nil` (default display) and a
    /// ``ControlsDiagnostic/invalidValueFormat(control:format:)`` is added to ``diagnostics``.
    public var localizedValueFormat: String? {
        get { state.withLock { $0.valueFormat } }
        set {
            let accepted = newValue.map(Self.isValidValueFormat) ?? true
            state.withLock { state in
                state.valueFormat = accepted ? newValue : nil
                if !accepted, let newValue {
                    state.diagnostics.record(.invalidValueFormat(control: id, format: newValue))
                }
            }
        }
    }

    /// Values the slider lands on more easily (a magnet zone around each), sorted.
    public var prominentValues: [Double] { state.withLock { $0.prominentValues } }

    /// Sets the prominent values: each must be finite and inside the range
    /// (``ControlError/Code/prominentValueOutOfRange``, ``ControlError/Code/nonFiniteValue``); on discrete
    /// sliders each snaps to the nearest member. Sorted, duplicates removed.
    public func setProminentValues(_ values: [Double]) throws(ControlError) {
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
        state.withLock { $0.prominentValues = unique }
    }

    /// Problems found with this slider's settings (bounded, newest last).
    public var diagnostics: [ControlsDiagnostic] { state.withLock { $0.diagnostics.entries } }

    /// True once an action is set (system sliders: always).
    public var hasAction: Bool { binding != nil || state.withLock { $0.action.hasAction } }

    /// The text the overlay shows for `value`: the number with up to two decimals, put into
    /// ``localizedValueFormat`` when one is set.
    public func displayText(for value: Double) -> String {
        let number = NumberText.format(value, decimals: 2)
        guard let format = localizedValueFormat else { return number }
        return Self.apply(format: format, to: number)
    }

    // MARK: Action and observers

    /// Sets the action and where it runs (`AVCaptureSlider.setActionQueue(_:action:)`). The action gets
    /// each distinct value Camera Control gestures choose; with ``ActionCoalescing/latest(intervalMicros:)``
    /// at most one call per interval, latest value wins.
    public func setActionQueue(
        _ executor: any ActionExecutor, coalescing: ActionCoalescing = .everyValue,
        action: @escaping @Sendable (Double) -> Void
    ) {
        state.withLock { state in
            state.action.executor = executor
            state.action.action = action
            state.action.coalescing = coalescing
            state.action.reset(to: state.value)
        }
    }

    /// Calls `observer` on `executor` for every value change, with its origin (`.slider`, `.programmatic`,
    /// `.external`), so UI never goes stale.
    @discardableResult
    public func observeValueChanges(
        on executor: any ActionExecutor, _ observer: @escaping @Sendable (ValueChange<Double>) -> Void
    ) -> ObserverToken {
        state.withLock { $0.observers.add(.init(executor: executor, observer: observer)) }
    }

    /// Stops an observer; unknown tokens are ignored.
    public func removeObserver(_ token: ObserverToken) {
        state.withLock { $0.observers.remove(token) }
    }

    // MARK: Overlay

    /// The overlay's view of the slider.
    public var snapshot: ControlSnapshot {
        state.withLock { state in
            ControlSnapshot(
                id: id, title: localizedTitle, isEnabled: state.isEnabled,
                adjustment: .slider(domain, prominentValues: state.prominentValues), value: .number(state.value))
        }
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
        // Read the device under the slider's lock rather than trusting `change.value`: with writers on
        // several threads, notifications can arrive out of order, and the slider must end at the
        // device's value. (Lock order slider → device is safe: devices never call out under their lock.)
        let domain = domain
        let result = state.withLock { state -> (Double, [ObserverList<Double>.Entry])? in
            let current = binding.device.value(of: binding.property)
            guard current.isFinite else { return nil }
            let clamped = min(max(current, domain.lowerBound), domain.upperBound)
            let value = (try? domain.validated(clamped)) ?? clamped
            state.action.reset(to: value)
            guard state.value != value else { return nil }
            state.value = value
            return (value, state.observers.all)
        }
        guard let (value, observers) = result else { return }
        ObserverList.notify(observers, ValueChange(controlID: id, value: value, origin: .external))
    }
}

extension CaptureSlider: SessionDrivenControl {
    func applyOverlayValue(_ overlayValue: ControlValue, atMicros now: UInt64) {
        guard case .number(let raw) = overlayValue, let value = try? domain.validated(raw) else { return }
        if let binding {
            do {
                try binding.device.setValue(value, of: binding.property, source: .control(id))
            } catch {
                state.withLock { $0.diagnostics.record(.deviceRefused(control: id, message: error.message)) }
                return
            }
        }
        let result = state.withLock { state -> (ActionState<Double>.Delivery?, [ObserverList<Double>.Entry])? in
            guard state.value != value else { return nil }
            state.value = value
            return (state.action.offer(value, atMicros: now), state.observers.all)
        }
        guard let (delivery, observers) = result else { return }
        delivery?.run()
        ObserverList.notify(observers, ValueChange(controlID: id, value: value, origin: .slider))
    }

    func flushCoalescedAction(nowMicros: UInt64, force: Bool) {
        state.withLock { $0.action.flush(nowMicros: nowMicros, force: force) }?.run()
    }

    var nextActionFlushMicros: UInt64? { state.withLock { $0.action.nextFlushMicros } }

    var zoomDeviceID: String? {
        guard let binding, binding.property == .zoomFactor else { return nil }
        return binding.device.uniqueID
    }
}
