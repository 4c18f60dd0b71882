/// The plumbing every control in this module shares, written once: one lock around the control's state
/// (value, enabled flag, accessibility id, action, observers, diagnostics, and `Extra` for what only some
/// controls keep), and the three ways a value changes:
///
/// - ``applyGestureValue(_:atMicros:)``: a Camera Control gesture chose it (origin `.slider`): the action
///   runs (once per distinct value, maybe coalesced) and observers are told;
/// - ``adopt(origin:_:)``: code (`.programmatic`) or the camera (`.external`) set it: it becomes the
///   action's baseline, the action does not run, observers are told if it differs.
///
/// No lock is held while the action, an observer or anything else is called.
final class ControlCore<Value: Hashable & Sendable, Extra: Sendable>: Sendable {
    struct State: Sendable {
        var accessibilityIdentifier: String?
        var isEnabled = true
        var value: Value
        var action = ActionState<Value>()
        var observers = ObserverList<Value>()
        var diagnostics = DiagnosticLog()
        var extra: Extra
    }

    /// The control's id, put on every ``ValueChange``.
    let id: ControlID
    private let state: Locked<State>

    init(id: ControlID, value: Value, extra: Extra) {
        self.id = id
        var initial = State(value: value, extra: extra)
        initial.action.reset(to: value)
        state = Locked(initial)
    }

    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R { try state.withLock(body) }

    var value: Value { state.withLock { $0.value } }

    var isEnabled: Bool {
        get { state.withLock { $0.isEnabled } }
        set { state.withLock { $0.isEnabled = newValue } }
    }

    var accessibilityIdentifier: String? {
        get { state.withLock { $0.accessibilityIdentifier } }
        set { state.withLock { $0.accessibilityIdentifier = newValue } }
    }

    var hasAction: Bool { state.withLock { $0.action.hasAction } }

    var diagnostics: [ControlsDiagnostic] { state.withLock { $0.diagnostics.entries } }

    func record(_ diagnostic: ControlsDiagnostic) { state.withLock { $0.diagnostics.record(diagnostic) } }

    // MARK: Action and observers

    func setAction(
        _ executor: any ActionExecutor, coalescing: ActionCoalescing, action: @escaping @Sendable (Value) -> Void
    ) {
        state.withLock { state in
            state.action.executor = executor
            state.action.action = action
            state.action.coalescing = coalescing
            state.action.reset(to: state.value)
        }
    }

    func addObserver(
        on executor: any ActionExecutor, _ observer: @escaping @Sendable (ValueChange<Value>) -> Void
    )
        -> ObserverToken
    {
        state.withLock { $0.observers.add(.init(executor: executor, observer: observer)) }
    }

    func removeObserver(_ token: ObserverToken) { state.withLock { $0.observers.remove(token) } }

    // MARK: Value changes

    /// A value from code or the camera: `compute` runs under the lock (nil: no change) and its result
    /// becomes the action's baseline; observers see it with `origin` when it differs from the current one.
    func adopt(origin: ValueChangeOrigin, _ compute: (inout State) -> Value?) {
        let result = state.withLock { state -> (Value, [ObserverList<Value>.Entry])? in
            guard let value = compute(&state) else { return nil }
            state.action.reset(to: value)
            guard state.value != value else { return nil }
            state.value = value
            return (value, state.observers.all)
        }
        guard let (value, observers) = result else { return }
        ObserverList.notify(observers, ValueChange(controlID: id, value: value, origin: origin))
    }

    /// A value a Camera Control gesture chose at device time `now`: the action runs (once per distinct
    /// value, coalesced as configured), then observers see it with origin `.slider`.
    func applyGestureValue(_ value: Value, atMicros now: UInt64) {
        let result = state.withLock { state -> (ActionState<Value>.Delivery?, [ObserverList<Value>.Entry])? in
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
}
