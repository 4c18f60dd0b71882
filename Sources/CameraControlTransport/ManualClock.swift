import Foundation

/// A clock that only moves when told to: virtual time for tests and simulations
/// (in the spirit of SwiftNIO's `EmbeddedEventLoop.advanceTime(by:)`).
///
/// `sleep(until:)` suspends until ``advance(by:)`` or ``advance(to:)`` moves ``now`` to or past the
/// deadline; a sleeping task that is cancelled throws `CancellationError` at once. A
/// ``SerialQueueEventLoop`` made with the clock (`SerialQueueEventLoop(name:clock:)`) sets its timers on
/// it: they fall due as the clock is advanced, and count here as sleepers (``sleeperCount``,
/// ``nextDeadline``, ``wakeCount``) like sleeping tasks.
public final class ManualClock: Clock, @unchecked Sendable {
    /// A point on the manual timeline: the time since the clock's origin.
    public struct Instant: InstantProtocol, Hashable, Sendable, CustomStringConvertible {
        /// Time since the clock's origin.
        public var offset: Duration
        /// An instant `offset` after the origin.
        public init(offset: Duration) { self.offset = offset }
        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The time from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Orders by offset.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        /// `t+<offset>`.
        public var description: String { "t+\(offset)" }
    }

    private struct Sleeper {
        var id: UInt64
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    /// A body to run when the clock reaches its deadline (a loop's timer), unless cancelled first.
    private struct Alarm {
        var id: UInt64
        var deadline: Instant
        var timer: LoopTimer
        var body: @Sendable () -> Void
    }

    private let lock = NSLock()
    private var current: Instant
    private var sleepers: [Sleeper] = []
    private var alarms: [Alarm] = []
    private var nextSleeperID: UInt64 = 0
    private var wakes = 0

    /// A clock at `start` (the origin by default).
    public init(start: Instant = Instant(offset: .zero)) {
        self.current = start
    }

    /// The current virtual time.
    public var now: Instant {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// The smallest step the clock resolves: one nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// How many tasks are sleeping on this clock right now, and loop timers set on it and not cancelled.
    public var sleeperCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return sleepers.count + alarms.count { !$0.timer.isCancelled }
    }

    /// How many sleeps have ended because the clock reached their deadline (cancelled ones not counted):
    /// how often code timed by this clock woke up.
    public var wakeCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return wakes
    }

    /// The earliest deadline of a sleeping task or a loop timer not cancelled, if any.
    public var nextDeadline: Instant? {
        lock.lock()
        defer { lock.unlock() }
        let alarm = alarms.lazy.filter { !$0.timer.isCancelled }.map(\.deadline).min()
        return [sleepers.map(\.deadline).min(), alarm].compactMap { $0 }.min()
    }

    /// Moves time forward by `duration` (negative durations are ignored) and wakes every sleeper whose
    /// deadline is reached.
    public func advance(by duration: Duration) {
        lock.lock()
        let target = current.advanced(by: max(duration, .zero))
        lock.unlock()
        advance(to: target)
    }

    /// Moves time forward to `instant` (never backwards) and wakes every sleeper whose deadline is reached.
    public func advance(to instant: Instant) {
        lock.lock()
        if instant > current { current = instant }
        let now = current
        let due = sleepers.filter { $0.deadline <= now }
        sleepers.removeAll { $0.deadline <= now }
        alarms.removeAll { $0.timer.isCancelled }
        let dueAlarms = alarms.filter { $0.deadline <= now }
        alarms.removeAll { $0.deadline <= now }
        wakes += due.count + dueAlarms.count
        lock.unlock()
        for sleeper in due.sorted(by: { $0.deadline < $1.deadline }) {
            sleeper.continuation.resume()
        }
        // Alarms due at the same time run in the order they were set (their ids grow).
        for alarm in dueAlarms.sorted(by: { ($0.deadline, $0.id) < ($1.deadline, $1.id) }) where !alarm.timer.isCancelled {
            alarm.body()
        }
    }

    /// Calls `body` (on the thread that advances the clock, from ``advance(to:)``) once the clock has moved
    /// `delay` (more than zero) past now, unless `timer` is cancelled first. Never calls it from here: the
    /// deadline is taken under the clock's lock, so a concurrent ``advance(to:)`` cannot make it due
    /// before it is recorded. What a loop timed by this clock builds its timers on.
    package func whenAdvanced(by delay: Duration, unless timer: LoopTimer, _ body: @escaping @Sendable () -> Void) {
        lock.lock()
        nextSleeperID += 1
        alarms.removeAll { $0.timer.isCancelled }
        alarms.append(Alarm(id: nextSleeperID, deadline: current.advanced(by: max(delay, .nanoseconds(1))), timer: timer, body: body))
        lock.unlock()
    }

    /// Suspends until the clock reaches `deadline`.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while sleeping.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = makeSleeperID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enqueue(Sleeper(id: id, deadline: deadline, continuation: continuation))
            }
        } onCancel: {
            cancelSleeper(id)
        }
    }

    private func makeSleeperID() -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        nextSleeperID += 1
        return nextSleeperID
    }

    private func enqueue(_ sleeper: Sleeper) {
        lock.lock()
        if sleeper.deadline <= current {
            wakes += 1
            lock.unlock()
            sleeper.continuation.resume()
        } else if Task.isCancelled {
            lock.unlock()
            sleeper.continuation.resume(throwing: CancellationError())
        } else {
            sleepers.append(sleeper)
            lock.unlock()
        }
    }

    private func cancelSleeper(_ id: UInt64) {
        lock.lock()
        let index = sleepers.firstIndex { $0.id == id }
        let sleeper = index.map { sleepers.remove(at: $0) }
        lock.unlock()
        sleeper?.continuation.resume(throwing: CancellationError())
    }
}
