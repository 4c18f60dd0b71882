/// Something that makes controls silently do nothing on Apple's stack, reported here instead.
public enum ControlsDiagnostic: Hashable, Sendable, CustomStringConvertible {
    /// The device has no Camera Control hardware (`supportsControls` false): the overlay never shows.
    case controlsNotSupported
    /// A light press came but no capture event interaction is attached: the overlay does not show
    /// (Apple's most common "delegate not called" cause).
    case noEventInteraction
    /// A light press came while the capture session was not running: the overlay does not show.
    case sessionNotRunning
    /// A light press came but no controls delegate is set (or it was released): the overlay does not show.
    case noDelegate
    /// A light press came but the session has no controls.
    case noControls
    /// The device bound to the session takes fewer controls than the session holds: the overlay offers the
    /// first `limit` of the `count` (``CaptureControlsSession/bind(to:)``).
    case tooManyControls(count: Int, limit: Int)
    /// A value format was rejected (it must contain exactly one `%@`); the default display is used.
    case invalidValueFormat(control: ControlID, format: String)
    /// A system slider's camera refused a value the overlay chose.
    case deviceRefused(control: ControlID, message: String)

    /// One readable line.
    public var description: String {
        switch self {
        case .controlsNotSupported: "controls-not-supported: this device has no Camera Control; the overlay never shows"
        case .noEventInteraction:
            "no-event-interaction: attach a capture event interaction, or the overlay never shows"
        case .sessionNotRunning: "session-not-running: start the capture session, or the overlay never shows"
        case .noDelegate: "no-delegate: set a controls delegate, or the overlay never shows"
        case .noControls: "no-controls: add a control, or the overlay has nothing to show"
        case .tooManyControls(let count, let limit):
            "too-many-controls: the device shows at most \(limit) controls; the overlay offers the first \(limit) of \(count)"
        case .invalidValueFormat(let control, let format):
            "invalid-value-format \(control): \"\(format)\" must contain exactly one %@; default display used"
        case .deviceRefused(let control, let message): "device-refused \(control): \(message)"
        }
    }
}

/// A bounded diagnostics list: repeats of the last entry are dropped, the oldest go first.
struct DiagnosticLog: Sendable {
    private(set) var entries: [ControlsDiagnostic] = []

    mutating func record(_ diagnostic: ControlsDiagnostic) {
        guard entries.last != diagnostic else { return }
        if entries.count >= ControlLimits.maximumDiagnostics { entries.removeFirst() }
        entries.append(diagnostic)
    }
}

/// How often a control's action may run while values keep changing.
public enum ActionCoalescing: Hashable, Sendable {
    /// Once per distinct value (a swipe can give dozens of calls).
    case everyValue
    /// At most once per `intervalMicros` of device time; values in between are held and the latest wins.
    /// A held value is delivered when the interval has passed (on the next gesture or
    /// ``CaptureControlsSession/advance(toMicros:beforeDelivery:)``) and always when the overlay hides.
    case latest(intervalMicros: UInt64)
}

/// The action side of a control: dedupe and coalescing, pure (deliveries are returned, not made).
struct ActionState<Value: Hashable & Sendable>: Sendable {
    var executor: (any ActionExecutor)?
    var action: (@Sendable (Value) -> Void)?
    var coalescing: ActionCoalescing = .everyValue
    private var lastDelivered: Value?
    private var lastDeliveredMicros: UInt64?
    private var pending: Value?

    struct Delivery: Sendable {
        let executor: any ActionExecutor
        let action: @Sendable (Value) -> Void
        let value: Value
        func run() {
            let action = action
            let value = value
            executor.execute { action(value) }
        }
    }

    var hasAction: Bool { action != nil }

    /// The value now showing (`initial`): later offers equal to it are not distinct.
    mutating func reset(to initial: Value) {
        lastDelivered = initial
        pending = nil
    }

    mutating func offer(_ value: Value, atMicros now: UInt64) -> Delivery? {
        guard value != (pending ?? lastDelivered) else { return nil }
        switch coalescing {
        case .everyValue:
            return deliver(value, at: now)
        case .latest(let interval):
            if let last = lastDeliveredMicros, now < last &+ interval {
                pending = value == lastDelivered ? nil : value
                return nil
            }
            return deliver(value, at: now)
        }
    }

    mutating func flush(nowMicros now: UInt64, force: Bool) -> Delivery? {
        guard let value = pending else { return nil }
        if !force, let due = nextFlushMicros, now < due { return nil }
        return deliver(value, at: now)
    }

    var nextFlushMicros: UInt64? {
        guard pending != nil, case .latest(let interval) = coalescing, let last = lastDeliveredMicros else { return nil }
        return last &+ interval
    }

    private mutating func deliver(_ value: Value, at now: UInt64) -> Delivery? {
        pending = nil
        lastDelivered = value
        lastDeliveredMicros = now
        guard let executor, let action else { return nil }
        return Delivery(executor: executor, action: action, value: value)
    }
}

/// Value observers of a control.
struct ObserverList<Value: Hashable & Sendable>: Sendable {
    struct Entry: Sendable {
        let executor: any ActionExecutor
        let observer: @Sendable (ValueChange<Value>) -> Void
    }

    private var entries: [(UInt64, Entry)] = []
    private var next: UInt64 = 1

    mutating func add(_ entry: Entry) -> ObserverToken {
        let id = next
        next += 1
        entries.append((id, entry))
        return ObserverToken(rawValue: id)
    }

    mutating func remove(_ token: ObserverToken) {
        entries.removeAll { $0.0 == token.rawValue }
    }

    var all: [Entry] { entries.map(\.1) }

    static func notify(_ entries: [Entry], _ change: ValueChange<Value>) {
        for entry in entries {
            let observer = entry.observer
            entry.executor.execute { observer(change) }
        }
    }
}
