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

    /// The control's id.
    public let id: ControlID
    /// The title shown in the overlay.
    public let localizedTitle: String
    /// The icon name.
    public let symbolName: String
    /// Number of indexes (≥ 1).
    public let numberOfIndexes: Int
    private let titles: Titles
    private let core: ControlCore<Int, Void>

    /// A picker over `localizedIndexTitles` (non-empty; else ``ControlError/Code/emptyIndexTitles``).
    public convenience init(
        _ localizedTitle: String, symbolName: String, localizedIndexTitles: [String], id: ControlID? = nil
    ) throws(ControlError) {
        guard !localizedIndexTitles.isEmpty else {
            throw ControlError(.emptyIndexTitles, "an index picker needs at least one title")
        }
        self.init(localizedTitle, symbolName: symbolName, id: id, titles: .list(localizedIndexTitles))
    }

    /// A picker over `numberOfIndexes` (> 0; else ``ControlError/Code/invalidIndexCount``) indexes,
    /// titled by `localizedTitleTransform` (default: the index as a number).
    public convenience init(
        _ localizedTitle: String, symbolName: String, numberOfIndexes: Int,
        id: ControlID? = nil, localizedTitleTransform: @escaping @Sendable (Int) -> String = { "\($0)" }
    ) throws(ControlError) {
        guard numberOfIndexes > 0 else {
            throw ControlError(.invalidIndexCount, "numberOfIndexes must be > 0, got \(numberOfIndexes)")
        }
        self.init(
            localizedTitle, symbolName: symbolName, id: id,
            titles: .transform(count: numberOfIndexes, localizedTitleTransform))
    }

    private init(_ localizedTitle: String, symbolName: String, id: ControlID?, titles: Titles) {
        let id = id ?? ControlID.derived(fromTitle: localizedTitle)
        self.id = id
        self.localizedTitle = localizedTitle
        self.symbolName = symbolName
        self.titles = titles
        switch titles {
        case .list(let list): numberOfIndexes = list.count
        case .transform(let count, _): numberOfIndexes = count
        }
        core = ControlCore(id: id, value: 0, extra: ())
    }

    /// The titles to present for each index, `numberOfIndexes` of them (`AVCaptureIndexPicker.localizedIndexTitles`):
    /// the titles given to ``init(_:symbolName:localizedIndexTitles:id:)``, or, for a picker made with
    /// ``init(_:symbolName:numberOfIndexes:id:localizedTitleTransform:)``, what its `localizedTitleTransform`
    /// makes of each index `0 ..< numberOfIndexes` (by default the index as a number, `"0"`, `"1"`, …; Apple
    /// does not say what its picker made with a count alone gives here).
    ///
    /// A counted picker builds the array on each read, calling the transform once per index (a billion
    /// indexes make a billion titles): for one title, ask ``localizedTitle(forIndex:)``.
    public var localizedIndexTitles: [String] {
        switch titles {
        case .list(let list): return list
        case .transform(let count, let transform): return (0..<count).map(transform)
        }
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
    public var selectedIndex: Int { core.value }

    /// Selects `index` from code (``ControlError/Code/indexOutOfRange`` outside `0 ..< numberOfIndexes`).
    /// Observers see origin `.programmatic`; the action does not run.
    public func setSelectedIndex(_ index: Int) throws(ControlError) {
        guard index >= 0, index < numberOfIndexes else {
            throw ControlError(.indexOutOfRange, "index \(index) is outside 0..<\(numberOfIndexes)")
        }
        core.adopt(origin: .programmatic) { _ in index }
    }

    /// False: the picker stays visible and selectable, but gestures do not change its index.
    public var isEnabled: Bool {
        get { core.isEnabled }
        set { core.isEnabled = newValue }
    }

    /// An identifier for UI automation.
    public var accessibilityIdentifier: String? {
        get { core.accessibilityIdentifier }
        set { core.accessibilityIdentifier = newValue }
    }

    /// The overlay's view of the picker.
    public var snapshot: ControlSnapshot {
        core.withLock { state in
            ControlSnapshot(
                id: id, title: localizedTitle, isEnabled: state.isEnabled,
                adjustment: .indexPicker(count: numberOfIndexes), value: .index(state.value))
        }
    }

    // MARK: Action and observers

    /// True once an action is set.
    public var hasAction: Bool { core.hasAction }

    /// Sets the action and where it runs (`AVCaptureIndexPicker.setActionQueue(_:action:)`); it gets each
    /// distinct index gestures choose, coalesced as ``ActionCoalescing`` says.
    public func setActionQueue(
        _ executor: any ActionExecutor, coalescing: ActionCoalescing = .everyValue,
        action: @escaping @Sendable (Int) -> Void
    ) {
        core.setAction(executor, coalescing: coalescing, action: action)
    }

    /// Calls `observer` on `executor` for every index change, with its origin.
    @discardableResult
    public func observeValueChanges(
        on executor: any ActionExecutor, _ observer: @escaping @Sendable (ValueChange<Int>) -> Void
    ) -> ObserverToken {
        core.addObserver(on: executor, observer)
    }

    /// Stops an observer.
    public func removeObserver(_ token: ObserverToken) { core.removeObserver(token) }
}

extension CaptureIndexPicker: SessionDrivenControl {
    func applyOverlayValue(_ value: ControlValue, atMicros now: UInt64) {
        guard case .index(let index) = value, index >= 0, index < numberOfIndexes else { return }
        core.applyGestureValue(index, atMicros: now)
    }

    func flushCoalescedAction(nowMicros: UInt64, force: Bool) { core.flushCoalescedAction(nowMicros: nowMicros, force: force) }

    var nextActionFlushMicros: UInt64? { core.nextActionFlushMicros }

    var zoomDeviceID: String? { nil }
}
