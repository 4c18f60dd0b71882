/// A picker of named indexes on the Camera Control (`AVCaptureIndexPicker`): flash on/off, filters,
/// effects.
///
/// Titles are given as a non-empty list, or as a count (> 0) with a title transform that is called
/// lazily (a large count allocates nothing). ``selectedIndex`` starts at 0. Thread-safe (one `Mutex`).
public final class CaptureIndexPicker: CaptureControl {
    private enum Titles: Sendable {
        case list([String])
        case transform(count: Int, @Sendable (Int) -> String)
    }

    private struct State: Sendable {
        var accessibilityIdentifier: String?
        var isEnabled = true
        var selectedIndex = 0
        var action = ActionState<Int>()
        var observers = ObserverList<Int>()
    }

    /// The control's id.
    public let id: ControlID
    /// The title shown in the overlay.
    public let localizedTitle: String
    /// The icon name.
    public let symbolName: String
    /// Number of indexes (≥ 1).
    public let numberOfIndexes: Int
    private let titles: Titles
    private let state: Locked<State>

    /// A picker over `localizedIndexTitles` (non-empty; else ``ControlError/Code/emptyIndexTitles``).
    public init(
        _ localizedTitle: String, symbolName: String, localizedIndexTitles: [String], id: ControlID? = nil
    ) throws(ControlError) {
        guard !localizedIndexTitles.isEmpty else {
            throw ControlError(.emptyIndexTitles, "an index picker needs at least one title")
        }
        self.id = id ?? ControlID.derived(fromTitle: localizedTitle)
        self.localizedTitle = localizedTitle
        self.symbolName = symbolName
        self.numberOfIndexes = localizedIndexTitles.count
        self.titles = .list(localizedIndexTitles)
        self.state = Locked(State())
        state.withLock { $0.action.reset(to: 0) }
    }

    /// A picker over `numberOfIndexes` (> 0; else ``ControlError/Code/invalidIndexCount``) indexes,
    /// titled by `localizedTitleTransform` (default: the index as a number).
    public init(
        _ localizedTitle: String, symbolName: String, numberOfIndexes: Int,
        id: ControlID? = nil, localizedTitleTransform: @escaping @Sendable (Int) -> String = { "\($0)" }
    ) throws(ControlError) {
        guard numberOfIndexes > 0 else {
            throw ControlError(.invalidIndexCount, "numberOfIndexes must be > 0, got \(numberOfIndexes)")
        }
        self.id = id ?? ControlID.derived(fromTitle: localizedTitle)
        self.localizedTitle = localizedTitle
        self.symbolName = symbolName
        self.numberOfIndexes = numberOfIndexes
        self.titles = .transform(count: numberOfIndexes, localizedTitleTransform)
        self.state = Locked(State())
        state.withLock { $0.action.reset(to: 0) }
    }

    /// The title of `index`, or nil outside `0 ..< numberOfIndexes`.
    public func localizedTitle(forIndex index: Int) -> String? {
        guard index >= 0, index < numberOfIndexes else { return nil }
        switch titles {
        case .list(let list): return list[index]
        case .transform(_, let transform): return transform(index)
        }
    }

    /// The selected index.
    public var selectedIndex: Int { state.withLock { $0.selectedIndex } }

    /// Selects `index` from code (``ControlError/Code/indexOutOfRange`` outside `0 ..< numberOfIndexes`).
    /// Observers see origin `.programmatic`; the action does not run.
    public func setSelectedIndex(_ index: Int) throws(ControlError) {
        guard index >= 0, index < numberOfIndexes else {
            throw ControlError(.indexOutOfRange, "index \(index) is outside 0..<\(numberOfIndexes)")
        }
        let observers = state.withLock { state -> [ObserverList<Int>.Entry]? in
            state.action.reset(to: index)
            guard state.selectedIndex != index else { return nil }
            state.selectedIndex = index
            return state.observers.all
        }
        if let observers { ObserverList.notify(observers, ValueChange(controlID: id, value: index, origin: .programmatic)) }
    }

    /// False: the picker stays visible and selectable, but gestures do not change its index.
    public var isEnabled: Bool {
        get { state.withLock { $0.isEnabled } }
        set { state.withLock { $0.isEnabled = newValue } }
    }

    /// An identifier for UI automation.
    public var accessibilityIdentifier: String? {
        get { state.withLock { $0.accessibilityIdentifier } }
        set { state.withLock { $0.accessibilityIdentifier = newValue } }
    }

    /// True once an action is set.
    public var hasAction: Bool { state.withLock { $0.action.hasAction } }

    /// Sets the action and where it runs; it gets each distinct index gestures choose.
    public func setActionQueue(
        _ executor: any ActionExecutor, coalescing: ActionCoalescing = .everyValue,
        action: @escaping @Sendable (Int) -> Void
    ) {
        state.withLock { state in
            state.action.executor = executor
            state.action.action = action
            state.action.coalescing = coalescing
            state.action.reset(to: state.selectedIndex)
        }
    }

    /// Calls `observer` on `executor` for every index change, with its origin.
    @discardableResult
    public func observeValueChanges(
        on executor: any ActionExecutor, _ observer: @escaping @Sendable (ValueChange<Int>) -> Void
    ) -> ObserverToken {
        state.withLock { $0.observers.add(.init(executor: executor, observer: observer)) }
    }

    /// Stops an observer.
    public func removeObserver(_ token: ObserverToken) {
        state.withLock { $0.observers.remove(token) }
    }

    /// The overlay's view of the picker.
    public var snapshot: ControlSnapshot {
        state.withLock { state in
            ControlSnapshot(
                id: id, title: localizedTitle, isEnabled: state.isEnabled,
                adjustment: .indexPicker(count: numberOfIndexes), value: .index(state.selectedIndex))
        }
    }
}

extension CaptureIndexPicker: SessionDrivenControl {
    func applyOverlayValue(_ value: ControlValue, atMicros now: UInt64) {
        guard case .index(let index) = value, index >= 0, index < numberOfIndexes else { return }
        let result = state.withLock { state -> (ActionState<Int>.Delivery?, [ObserverList<Int>.Entry])? in
            guard state.selectedIndex != index else { return nil }
            state.selectedIndex = index
            return (state.action.offer(index, atMicros: now), state.observers.all)
        }
        guard let (delivery, observers) = result else { return }
        delivery?.run()
        ObserverList.notify(observers, ValueChange(controlID: id, value: index, origin: .slider))
    }

    func flushCoalescedAction(nowMicros: UInt64, force: Bool) {
        state.withLock { $0.action.flush(nowMicros: nowMicros, force: force) }?.run()
    }

    var nextActionFlushMicros: UInt64? { state.withLock { $0.action.nextFlushMicros } }

    var zoomDeviceID: String? { nil }
}
