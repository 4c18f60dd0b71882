import Dispatch

/// An ``EventLoop`` that runs jobs and timers, one at a time and in order, on a serial dispatch queue:
/// the executor of actors that need one when no I/O loop can be had, and the loop of in-memory transports
/// (``InMemoryTransport``). A descriptor-based transport given it runs on a loop of its own.
///
/// Timed by the system's clock, or by a ``ManualClock`` (`init(name:clock:)`): then its timers, and so
/// every deadline, heartbeat and retransmission of a link on it, fall due only as a test advances the
/// clock, and have run when `advance` returns (SwiftNIO's `EmbeddedEventLoop` in spirit; jobs and
/// deliveries still run on the queue, at once). Do not advance the clock from a job that blocks the queue.
public final class SerialQueueEventLoop: EventLoop, @unchecked Sendable {
    private let queue: DispatchQueue
    private let clock: ManualClock?
    private static let key = DispatchSpecificKey<ObjectIdentifier>()

    /// A loop over a new serial queue labelled `name`, timed by the system's clock.
    public init(name: String) {
        queue = DispatchQueue(label: "cameracontrol.\(name)")
        clock = nil
        queue.setSpecific(key: Self.key, value: ObjectIdentifier(self))
    }

    /// A loop over a new serial queue labelled `name`, timed by `clock`: nothing it schedules later than
    /// now runs until the clock is advanced that far.
    public init(name: String, clock: ManualClock) {
        queue = DispatchQueue(label: "cameracontrol.\(name)")
        self.clock = clock
        queue.setSpecific(key: Self.key, value: ObjectIdentifier(self))
    }

    /// The loop's time: its manual clock's, or the system's monotonic time (see ``EventLoop/now``).
    public var now: Duration {
        clock?.now.offset ?? LoopTime.now
    }

    /// Runs `job` on the queue after the jobs before it.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { [self] in
            job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
        }
    }

    /// The loop as an actor's executor.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// The loop as a task's preferred executor.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Stops the process unless the caller runs on the queue.
    public func checkIsolated() {
        precondition(isCurrent, "not on \(queue.label)")
    }

    /// True on the queue.
    public var isCurrent: Bool {
        DispatchQueue.getSpecific(key: Self.key) == ObjectIdentifier(self)
    }

    /// Nothing to end: the queue goes with the loop.
    public func shutdown() {}

    /// Runs `body` on the queue after `delay`, unless cancelled (see ``EventLoop/schedule(after:_:)``).
    @discardableResult
    public func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> LoopTimer {
        let timer = LoopTimer()
        if delay <= .zero {
            queue.async {
                if !timer.isCancelled { body() }
            }
            return timer
        }
        if let clock {
            // Run before `advance` returns (after the jobs already queued): a test that moves the clock
            // sees what fell due done, as with SwiftNIO's `EmbeddedEventLoop.advanceTime(by:)`.
            clock.whenAdvanced(by: delay, unless: timer) { [self] in
                let run = { if !timer.isCancelled { body() } }
                if isCurrent { run() } else { queue.sync(execute: run) }
            }
            return timer
        }
        let (seconds, attoseconds) = max(delay, .zero).components
        let nanos = Int(min(seconds, 86_400 * 365)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        queue.asyncAfter(deadline: .now() + .nanoseconds(nanos)) {
            if !timer.isCancelled { body() }
        }
        return timer
    }
}
