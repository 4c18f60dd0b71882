import Dispatch

/// Where a control's action, a value observer or the controls delegate runs.
///
/// Jobs given to one executor must run in the order given (a serial queue). Conformances here:
/// `DispatchQueue` (pass a serial queue, e.g. the capture session queue, or `.main` for the main actor),
/// ``ActorExecutor`` (isolated to an actor),
/// ``InlineExecutor`` (runs the job before `execute` returns) and ``ManualExecutor`` (holds jobs until
/// drained; for tests and single-threaded demos).
public protocol ActionExecutor: Sendable {
    /// Runs `job` later (or now), after every job given before it.
    func execute(_ job: @escaping @Sendable () -> Void)
}

extension DispatchQueue: ActionExecutor {
    /// Runs `job` asynchronously on this queue.
    public func execute(_ job: @escaping @Sendable () -> Void) {
        async(execute: job)
    }
}

/// Runs each job at once, on the caller's thread. Deterministic; the job must not call back into the
/// control or session that is delivering to it.
public struct InlineExecutor: ActionExecutor {
    /// An inline executor.
    public init() {}
    /// Runs `job` now.
    public func execute(_ job: @escaping @Sendable () -> Void) { job() }
}

/// Holds jobs until ``runAll()``: lets a test or a single-threaded loop decide when callbacks happen.
public final class ManualExecutor: ActionExecutor {
    private let jobs = Locked<[@Sendable () -> Void]>([])

    /// An empty executor.
    public init() {}

    /// Queues `job`.
    public func execute(_ job: @escaping @Sendable () -> Void) {
        jobs.withLock { $0.append(job) }
    }

    /// Number of queued jobs.
    public var pendingCount: Int { jobs.withLock { $0.count } }

    /// Runs queued jobs in order, including jobs they queue, until none is left. Returns how many ran.
    @discardableResult
    public func runAll() -> Int {
        var ran = 0
        while true {
            let batch = jobs.withLock { current -> [@Sendable () -> Void] in
                let taken = current
                current.removeAll()
                return taken
            }
            if batch.isEmpty { return ran }
            for job in batch { job() }
            ran += batch.count
        }
    }
}

/// Runs jobs isolated to an actor, one at a time, in the order given.
///
/// Jobs go through an `AsyncStream` drained by one task that awaits the actor for each job, so order
/// holds. Inside a job, reach the actor's state synchronously with `actor.assumeIsolated { … }`.
/// (On platforms where `DispatchSerialQueue` can back an actor, passing that queue works too.)
public final class ActorExecutor: ActionExecutor {
    private let continuation: AsyncStream<@Sendable () -> Void>.Continuation

    /// An executor for `actor`; its draining task ends when the executor is released.
    public init(isolatedTo actor: any Actor) {
        let (stream, continuation) = AsyncStream.makeStream(of: (@Sendable () -> Void).self)
        self.continuation = continuation
        Task {
            for await job in stream { await actor.runIsolated(job) }
        }
    }

    deinit { continuation.finish() }

    /// Queues `job` to run on the actor after every job given before it.
    public func execute(_ job: @escaping @Sendable () -> Void) {
        continuation.yield(job)
    }
}

extension Actor {
    fileprivate func runIsolated(_ job: @Sendable () -> Void) { job() }
}
