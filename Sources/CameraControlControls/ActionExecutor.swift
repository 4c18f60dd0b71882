import Dispatch

/// Where a control's action, a value observer or the controls delegate runs.
///
/// Jobs given to one executor must run in the order given (a serial queue). Conformances here:
/// `DispatchQueue` (pass a serial queue, e.g. the capture session queue, or `.main` for the main actor),
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
