/// A slider on the Camera Control (`AVCaptureSlider`): continuous over a closed range, or discrete by a
/// step or an explicit list of values. The app owns it: it sets the value, format, prominent values and
/// the action; the read-only side (value, domain, observers, display text) is ``SliderControl``'s,
/// shared with the system sliders, which have none of these setters.
///
/// Thread-safe: every mutable field lives behind one `Mutex`; `let` fields are immutable.
///
/// Rules (see `docs/CONTROLS.md`):
/// - ``SliderControl/value`` starts at the minimum; ``setValue(_:)`` throws outside the range and snaps to
///   the nearest member on discrete sliders. Programmatic sets notify observers (origin `.programmatic`),
///   never the action.
/// - The action runs on the executor given to ``setActionQueue(_:coalescing:action:)`` for values the
///   Camera Control gestures choose, once per distinct value (optionally coalesced, latest wins).
/// - A disabled slider keeps its value under gestures; code can still set it.
public final class CaptureSlider: SliderControl, @unchecked Sendable {
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

    /// Sets the value from code: throws ``ControlError/Code/nonFiniteValue`` or
    /// ``ControlError/Code/valueOutOfRange``; snaps to the nearest member on discrete sliders. Observers
    /// see origin `.programmatic`; the action does not run.
    public func setValue(_ newValue: Double) throws(ControlError) {
        let value = try domain.validated(newValue)
        core.adopt(origin: .programmatic) { _ in value }
    }

    /// A format for the value text with exactly one `%@` (e.g. `"%@ EV"`); `%%` is a literal percent.
    /// Anything else is rejected: the property stays `nil` (default display) and a
    /// ``ControlsDiagnostic/invalidValueFormat(control:format:)`` is added to
    /// ``SliderControl/diagnostics``.
    public override var localizedValueFormat: String? {
        get { super.localizedValueFormat }
        set { setValueFormat(newValue) }
    }

    /// Sets the prominent values: each must be finite and inside the range
    /// (``ControlError/Code/prominentValueOutOfRange``, ``ControlError/Code/nonFiniteValue``); on discrete
    /// sliders each snaps to the nearest member. Sorted, duplicates removed.
    public func setProminentValues(_ values: [Double]) throws(ControlError) {
        try setProminent(values)
    }

    /// Sets the action and where it runs (`AVCaptureSlider.setActionQueue(_:action:)`). The action gets
    /// each distinct value Camera Control gestures choose; with ``ActionCoalescing/latest(intervalMicros:)``
    /// at most one call per interval, latest value wins.
    public func setActionQueue(
        _ executor: any ActionExecutor, coalescing: ActionCoalescing = .everyValue,
        action: @escaping @Sendable (Double) -> Void
    ) {
        core.setAction(executor, coalescing: coalescing, action: action)
    }
}
