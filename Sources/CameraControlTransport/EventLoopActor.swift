/// An actor whose executor is an ``EventLoop``: its `unownedExecutor` is `eventLoop.asUnownedSerialExecutor()`.
/// Its jobs run on the loop's thread, and so does what the loop calls directly, outside any job: a read's
/// delegate call, a stream handler called during that read, a timer's body. ``assumeIsolatedOnLoop(_:)``
/// runs such code isolated to the actor.
///
/// ```
/// actor Counter: EventLoopActor {
///     nonisolated let eventLoop: any EventLoop
///     nonisolated var unownedExecutor: UnownedSerialExecutor { eventLoop.asUnownedSerialExecutor() }
///     var ticks = 0
///     init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }
///
///     func start() {
///         eventLoop.schedule(after: .milliseconds(10)) { [self] in
///             assumeIsolatedOnLoop { counter in counter.ticks += 1 }
///         }
///     }
/// }
/// ```
public protocol EventLoopActor: Actor {
    /// The loop that is the actor's executor.
    nonisolated var eventLoop: any EventLoop { get }
}

extension EventLoopActor {
    /// Runs `body` isolated to the actor, from code that runs on ``eventLoop`` (a delegate call, a stream
    /// handler, a timer's body), as `assumeIsolated(_:)` does; checked by the loop (``EventLoop/isCurrent``,
    /// what the loop's `checkIsolated()` checks too) instead of by the concurrency runtime, which, outside a
    /// job, finds the executor's answer through several calls of its own: about 4 µs on the cold path of an
    /// input event (docs/PERFORMANCE.md). Stops the process when the caller is not on the loop.
    public nonisolated func assumeIsolatedOnLoop<T: Sendable>(_ body: (isolated Self) throws -> T) rethrows -> T {
        precondition(eventLoop.isCurrent, "\(Self.self): not on its event loop")
        // The actor's executor is `eventLoop` (the protocol's contract) and the caller runs on it, so `body`
        // may run isolated to the actor: the unchecked call `assumeIsolated(_:)` makes once its check passed.
        return try withoutActuallyEscaping(body) { isolatedBody in
            try unsafeBitCast(isolatedBody, to: ((Self) throws -> T).self)(self)
        }
    }
}
