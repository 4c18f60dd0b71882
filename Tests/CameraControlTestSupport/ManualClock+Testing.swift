import CameraControlCapture
import CameraControlRPC
import CameraControlTransport
import Synchronization

/// The product's virtual clock seen the ways the tests need it: as host microseconds for
/// ``CameraControlCapture/CaptureClock``, moved in microseconds, and advanced until a task is done.
extension ManualClock {
    /// Microseconds since the clock's origin (what a ``CaptureClock`` reads).
    public var nowMicros: UInt64 {
        let (seconds, attoseconds) = now.offset.components
        return UInt64(max(0, seconds)) * 1_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000_000)
    }

    /// A capture clock that reads this clock: an interaction timed by it sees only the time the test moves.
    public var captureClock: CaptureClock { CaptureClock { [self] in self.nowMicros } }

    /// Moves time forward by `micros` microseconds.
    public func advance(byMicros micros: UInt64) {
        advance(by: .microseconds(Int64(micros)))
    }

    /// Moves time forward to `micros` microseconds after the origin (never backwards).
    public func advance(toMicros micros: UInt64) {
        advance(to: Instant(offset: .microseconds(Int64(micros))))
    }

    /// Advances the clock by `step`, yielding to other tasks after each step, until `task` finishes, and
    /// returns its result: the way to let a call that waits on deadlines or timers finish in virtual time.
    public func advance<T: Sendable>(by step: Duration, until task: Task<T, Never>) async -> T {
        let done = DoneFlag()
        let watcher = Task {
            let value = await task.value
            done.set()
            return value
        }
        while !done.isSet {
            advance(by: step)
            await Task.yield()
        }
        return await watcher.value
    }
}

/// A flag set once from any task.
public final class DoneFlag: Sendable {
    private let value = Atomic<Bool>(false)
    /// A flag not set yet.
    public init() {}
    /// Whether ``set()`` was called.
    public var isSet: Bool { value.load(ordering: .acquiring) }
    /// Sets the flag.
    public func set() { value.store(true, ordering: .releasing) }
}
