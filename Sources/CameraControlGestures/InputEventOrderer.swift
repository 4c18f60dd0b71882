import CameraControlWire

/// Restores the order in which a device produced its input events, by `event_number`.
///
/// A reliable event that was lost and retransmitted arrives after events the device produced later
/// (docs/PROTOCOL.md §6 lets the device keep several reliable packets in flight and leaves ordering to
/// the host). Fed to the recogniser in arrival order, a button's second DOWN would come before the first
/// press's UP: the DOWN is ignored (already down) and the second press is lost. The orderer holds events
/// that come after a gap in the event numbers until the missing ones arrive, or for at most
/// ``maximumHoldMicros`` (the gap was a best-effort event that is never retransmitted, or the
/// device gave up); then it skips the gap. Events with number 0 (not numbered) and events older than
/// what was already released pass straight through (the recogniser drops duplicates and stale events).
///
/// Pure: events and host time in, events out, in order.
public struct InputEventOrderer: Sendable {
    /// The longest an event waits for an earlier one, host microseconds. The default, 150 ms, covers a
    /// reliable packet lost twice (the device retransmits after 20 ms, then 40 ms more, then 80 ms more).
    public var maximumHoldMicros: UInt64
    /// The most events held at once; one more skips the gap at once.
    public var capacity: Int
    private var nextNumber: UInt32?
    private var held: [UInt32: InputEvent] = [:]
    private var holdingSince: UInt64?

    /// A backward jump of the event number larger than this means the device restarted its numbering
    /// (a retransmission is never more than a few dozen events late).
    static let rebootJump: UInt32 = 1_000

    /// An orderer holding events at most `maximumHoldMicros` (and at most `capacity` of them).
    public init(maximumHoldMicros: UInt64 = 150_000, capacity: Int = 64) {
        self.maximumHoldMicros = maximumHoldMicros
        self.capacity = max(1, capacity)
    }

    /// True while events wait for an earlier one (the recogniser's clock should not move past the last
    /// released event meanwhile).
    public var isHolding: Bool { !held.isEmpty }

    /// The host time at which ``release(atMicros:)`` gives up waiting for the missing events, or nil when
    /// nothing is held.
    public var nextReleaseMicros: UInt64? { holdingSince.map { $0 &+ maximumHoldMicros } }

    /// Takes one event received at host time `now`; returns the events now due, in device order.
    public mutating func accept(_ event: InputEvent, atMicros now: UInt64) -> [InputEvent] {
        let number = event.eventNumber
        guard number != 0 else { return [event] }
        if let expected = nextNumber, expected > number, expected - number > Self.rebootJump {
            // Numbering jumped far back: the device restarted. What waited belongs to the old run and
            // goes first; the new run starts afresh.
            let flushed = reset()
            return flushed + accept(event, atMicros: now)
        }
        let next = nextNumber ?? number
        if number < next { return [event] }  // late (its gap was skipped) or a duplicate
        if number == next {
            nextNumber = number &+ 1
            return [event] + drain(atMicros: now)
        }
        nextNumber = next
        if held[number] == nil { held[number] = event }
        if holdingSince == nil { holdingSince = now }
        if held.count > capacity { return skipGap(atMicros: now) }
        return []
    }

    /// Releases what waited longer than ``maximumHoldMicros`` at host time `now` (call it regularly).
    public mutating func release(atMicros now: UInt64) -> [InputEvent] {
        guard let since = holdingSince, now >= since, now - since >= maximumHoldMicros else { return [] }
        return skipGap(atMicros: now)
    }

    /// Releases everything held, in order, and forgets the numbering (the stream ended; a new one may
    /// come from a rebooted device).
    public mutating func reset() -> [InputEvent] {
        let out = held.keys.sorted().compactMap { held[$0] }
        held = [:]
        holdingSince = nil
        nextNumber = nil
        return out
    }

    private mutating func skipGap(atMicros now: UInt64) -> [InputEvent] {
        guard let first = held.keys.min() else { return [] }
        nextNumber = first
        holdingSince = nil
        return drain(atMicros: now)
    }

    private mutating func drain(atMicros now: UInt64) -> [InputEvent] {
        var out: [InputEvent] = []
        while let next = nextNumber, let event = held.removeValue(forKey: next) {
            out.append(event)
            nextNumber = next &+ 1
        }
        holdingSince = held.isEmpty ? nil : (holdingSince ?? now)
        return out
    }
}
