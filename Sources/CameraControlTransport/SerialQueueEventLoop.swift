import Dispatch

/// An ``EventLoop`` that runs jobs only, one at a time and in order, on a serial dispatch queue: the
/// executor of actors that need one when no I/O loop can be had. A transport given it runs on a loop of
/// its own (no transport can join it).
public final class SerialQueueEventLoop: EventLoop, @unchecked Sendable {
    private let queue: DispatchQueue
    private static let key = DispatchSpecificKey<ObjectIdentifier>()

    /// A loop over a new serial queue labelled `name`.
    public init(name: String) {
        queue = DispatchQueue(label: "cameracontrol.\(name)")
        queue.setSpecific(key: Self.key, value: ObjectIdentifier(self))
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
        let (seconds, attoseconds) = max(delay, .zero).components
        let nanos = Int(min(seconds, 86_400 * 365)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        queue.asyncAfter(deadline: .now() + .nanoseconds(nanos)) {
            if !timer.isCancelled { body() }
        }
        return timer
    }
}
