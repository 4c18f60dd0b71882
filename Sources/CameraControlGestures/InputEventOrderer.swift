import CameraControlWire

/// Restores the order in which a device produced its input events, by `event_number`.
///
/// A reliable event that was lost and retransmitted arrives after events the device produced later
/// (docs/PROTOCOL.md §6 lets the device keep several reliable packets in flight and leaves ordering to
/// the host). Fed to the recogniser in arrival order, a button's second DOWN would come before the first
/// press's UP: the DOWN is ignored (already down) and the second press is lost. The orderer holds events
/// that come after a gap in the event numbers until the missing ones arrive, then releases them in order.
///
/// How long a gap is waited for depends on what it can hide (v1.1: every event also carries
/// `reliable_event_number`, the count of reliable events so far):
///
/// - only best-effort events (`TOUCH_*`, `SLIDE`, never retransmitted): skipped at once;
/// - a reliable event (a press, a button, a click): held for ``maximumReliableHoldMicros``, the
///   device's whole retransmission budget, so a reliable event the device did not give up on is always
///   delivered in order;
/// - unknown (a 1.0 device sends no reliable count): held for ``maximumHoldMicros``.
///
/// Events with number 0 (not numbered) and events older than what was already released pass straight
/// through (the recogniser drops duplicates and stale events).
///
/// Pure: events and host time in, events out, in order.
public struct InputEventOrderer: Sendable {
    /// The longest an event waits for an earlier one when the device does not say whether the gap hides
    /// a reliable event (a 1.0 device), host microseconds. The default, 150 ms, covers a reliable packet
    /// lost twice (the device retransmits after 20 ms, then 40 ms more, then 80 ms more).
    public var maximumHoldMicros: UInt64
    /// The longest an event waits for an earlier reliable one, host microseconds. The default, 2.7 s,
    /// covers the device's retransmission budget (8 transmissions 20, 40, … 1280 ms apart: the last
    /// leaves 2.54 s after the first) and the line's latency.
    public var maximumReliableHoldMicros: UInt64
    /// The most events held at once; one more skips the gap at once.
    public var capacity: Int
    private var nextNumber: UInt32?
    /// `reliable_event_number` of the last event released (nil: not known, or a 1.0 device).
    private var releasedReliable: UInt32?
    private var held: [UInt32: InputEvent] = [:]
    private var holdingSince: UInt64?

    /// A backward jump of the event number larger than this means the device restarted its numbering
    /// (a retransmission is never more than a few dozen events late).
    static let rebootJump: UInt32 = 1_000

    /// The default ``maximumReliableHoldMicros``.
    public static let reliableRetransmissionBudgetMicros: UInt64 = 2_700_000

    /// An orderer holding events at most `maximumHoldMicros` for a gap of unknown kind,
    /// `maximumReliableHoldMicros` for a gap that hides a reliable event, and at most `capacity` of them.
    public init(
        maximumHoldMicros: UInt64 = 150_000,
        maximumReliableHoldMicros: UInt64 = InputEventOrderer.reliableRetransmissionBudgetMicros,
        capacity: Int = 256
    ) {
        self.maximumHoldMicros = maximumHoldMicros
        self.maximumReliableHoldMicros = maximumReliableHoldMicros
        self.capacity = max(1, capacity)
    }

    /// True while events wait for an earlier one (the recogniser's clock should not move past the last
    /// released event meanwhile).
    public var isHolding: Bool { !held.isEmpty }

    /// The host time at which ``release(atMicros:)`` gives up waiting for the missing events, or nil when
    /// nothing is held.
    public var nextReleaseMicros: UInt64? {
        holdingSince.map { $0 &+ (gapHidesReliable == true ? maximumReliableHoldMicros : maximumHoldMicros) }
    }

    /// Takes one event received at host time `now`; returns the events now due, in device order.
    public mutating func accept(_ event: InputEvent, atMicros now: UInt64) -> [InputEvent] {
        var out: [InputEvent] = []
        accept(event, atMicros: now, into: &out)
        return out
    }

    /// ``accept(_:atMicros:)`` appending the events now due to `out` (a buffer the caller keeps: an event
    /// in order, the usual case, costs no array).
    public mutating func accept(_ event: InputEvent, atMicros now: UInt64, into out: inout [InputEvent]) {
        let number = event.eventNumber
        guard number != 0 else { return out.append(event) }
        if let expected = nextNumber, expected > number, expected - number > Self.rebootJump {
            // Numbering jumped far back: the device restarted. What waited belongs to the old run and
            // goes first; the new run starts afresh.
            out += reset()
            return accept(event, atMicros: now, into: &out)
        }
        let next = nextNumber ?? number
        if number < next { return out.append(event) }  // late (its gap was skipped) or a duplicate
        if number == next {
            nextNumber = number &+ 1
            noteReleased(event)
            out.append(event)
            // In order with nothing held (every event, usually): nothing to look up.
            if held.isEmpty {
                holdingSince = nil
                return
            }
            return out += drain(atMicros: now)
        }
        nextNumber = next
        if held[number] == nil { held[number] = event }
        if holdingSince == nil { holdingSince = now }
        if held.count > capacity || gapHidesReliable == false { out += skipGap(atMicros: now) }
    }

    /// Releases what waited too long for an earlier event at host time `now` (call it regularly, at
    /// ``nextReleaseMicros``).
    public mutating func release(atMicros now: UInt64) -> [InputEvent] {
        guard let due = nextReleaseMicros, now >= due else { return [] }
        return skipGap(atMicros: now)
    }

    /// Releases everything held, in order, and forgets the numbering (the stream ended; a new one may
    /// come from a rebooted device).
    public mutating func reset() -> [InputEvent] {
        let out = held.keys.sorted().compactMap { held[$0] }
        held = [:]
        holdingSince = nil
        nextNumber = nil
        releasedReliable = nil
        return out
    }

    /// Whether the gap before the first held event hides a reliable event: nil when it cannot be told
    /// (nothing held, or no reliable counts), false when only best-effort events are missing.
    private var gapHidesReliable: Bool? {
        guard let released = releasedReliable, let first = held.keys.min(), let event = held[first],
            event.reliableEventNumber != 0
        else { return nil }
        let before = event.reliableEventNumber &- (event.kind.isReliable ? 1 : 0)
        // Counted since `released` (wrapping): more reliable events before this one than were released.
        let missing = before &- released
        return missing != 0 && missing < 1 << 31
    }

    private mutating func noteReleased(_ event: InputEvent) {
        releasedReliable = event.reliableEventNumber != 0 ? event.reliableEventNumber : nil
    }

    private mutating func skipGap(atMicros now: UInt64) -> [InputEvent] {
        guard let first = held.keys.min() else { return [] }
        nextNumber = first
        holdingSince = nil
        return drain(atMicros: now)
    }

    private mutating func drain(atMicros now: UInt64) -> [InputEvent] {
        var out: [InputEvent] = []
        while true {
            while let next = nextNumber, let event = held.removeValue(forKey: next) {
                out.append(event)
                noteReleased(event)
                nextNumber = next &+ 1
            }
            // The next gap hides only best-effort events: nothing will fill it.
            guard gapHidesReliable == false, let first = held.keys.min() else { break }
            nextNumber = first
        }
        holdingSince = held.isEmpty ? nil : (holdingSince ?? now)
        return out
    }
}
