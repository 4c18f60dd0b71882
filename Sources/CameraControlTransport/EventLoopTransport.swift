import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A transport whose own I/O thread can run a connection in place: bytes are handed to a delegate on that
/// thread as they are read, the delegate's output is written from the thread that produced it, and the
/// thread sleeps in one `poll()` until the next byte or the delegate's next deadline, whichever comes first.
///
/// This is the cheapest way to drive a link: no queue between the read and the code that handles it, no
/// timer task, no thread that wakes for nothing. An idle link costs what its heartbeats cost. The
/// ``ByteTransport`` interface (`receive()`/`send(_:)`) stays for everything else (the conformance probe,
/// tests, in-memory pairs); a transport is driven one way or the other, never both.
///
/// ```
///   device ──bytes──▶ poll() wakes ─▶ delegate.eventLoopReceived(bytes)  ─┐ on the loop's thread:
///                     poll() times out ▶ delegate.eventLoopTimerFired()   ─┤ one call at a time
///                     the transport ends ▶ delegate.eventLoopEnded(error) ─┘ (the last call)
///   any thread (serialised by the caller) ──control.write(bytes)──▶ the descriptor, or a queue the loop drains
/// ```
public protocol EventLoopTransport: ByteTransport {
    /// Starts handing received bytes and timer expiries to `delegate` on an I/O thread, until the transport
    /// ends (``ByteTransport/close()``, the peer going away, a failed read or write), which is reported once
    /// with ``EventLoopDelegate/eventLoopEnded(_:)``.
    ///
    /// - Parameters:
    ///   - delegate: what the loop calls; the loop keeps a strong reference to it until the transport ends.
    ///   - loop: the ``EventLoop`` whose thread runs the transport, shared with other transports and with
    ///     the actors and tasks that use it as their executor; nil: a loop of the transport's own, which
    ///     ends with it. A loop of a kind the transport cannot join counts as nil.
    /// - Returns: the loop's controls, or nil when the transport cannot be driven this way any more
    ///   (``ByteTransport/receive()`` was already called, a loop was already started, or it is closed):
    ///   use ``ByteTransport/receive()`` and ``ByteTransport/send(_:)`` then.
    func startEventLoop(delegate: any EventLoopDelegate, on loop: (any EventLoop)?) -> (any EventLoopControl)?
}

extension EventLoopTransport {
    /// Starts the transport on an event loop of its own (see ``startEventLoop(delegate:on:)``).
    public func startEventLoop(delegate: any EventLoopDelegate) -> (any EventLoopControl)? {
        startEventLoop(delegate: delegate, on: nil)
    }
}

/// A thread that runs transports' I/O (``EventLoopTransport``) and the jobs of the actors and tasks that
/// use it as their executor, so code resumed by a read runs on the same thread right after it: from a
/// device's bytes to the code that handles them, no thread hop. Jobs must not block.
///
/// As a `SerialExecutor` it can be an actor's executor (`nonisolated var unownedExecutor`); as a
/// `TaskExecutor`, a task's preference (`withTaskExecutorPreference`).
public protocol EventLoop: SerialExecutor, TaskExecutor, AnyObject {
    /// Lets the loop's thread end once no transport runs on it any more. Jobs enqueued later still run,
    /// in order, elsewhere.
    func shutdown()

    /// True when the caller runs on the loop (its thread, or wherever its jobs run once it ended): code
    /// that must run on the loop may run here and now.
    var isCurrent: Bool { get }

    /// Runs `body` on the loop (its thread, isolated to it as an executor), `delay` from now, unless the
    /// returned timer is cancelled first: a deadline of the code that runs on the loop, with no task
    /// sleeping for it (NIO's `scheduleTask`). Timers due at the same time run in the order they were set.
    @discardableResult
    func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> LoopTimer

    /// The loop's time, which its timers count in: the time since an origin of the loop's (the system's
    /// monotonic clock for a loop on a thread, a ``ManualClock`` for a loop a test drives). Only
    /// differences mean anything.
    var now: Duration { get }
}

extension EventLoop {
    /// The system's monotonic time (see ``EventLoop/now``): the time of every loop that runs on a thread.
    public var now: Duration { LoopTime.now }
}

/// The system's monotonic time as loops count it: `CLOCK_MONOTONIC`, since the system started.
package enum LoopTime {
    /// The time since the origin: one vDSO read, no runtime call (every received packet reads it).
    /// Inlinable: a caller reads it without a call into another module.
    @inlinable
    package static var now: Duration {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Duration(secondsComponent: Int64(time.tv_sec), attosecondsComponent: Int64(time.tv_nsec) * 1_000_000_000)
    }
}

extension EventLoopControl {
    /// False: ``now`` is read through the control (see ``EventLoopControl/readsSystemClock``).
    public var readsSystemClock: Bool { false }
}

/// A body scheduled on an ``EventLoop`` (``EventLoop/schedule(after:_:)``); cancel it to keep it from
/// running.
public final class LoopTimer: Sendable {
    private let state = Mutex(false)

    /// A timer not cancelled yet.
    public init() {}

    /// Keeps the body from running, if it has not started yet. Safe from any thread, more than once.
    public func cancel() {
        state.withLock { $0 = true }
    }

    /// True once ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0 } }
}

/// What an ``EventLoopTransport``'s I/O thread calls. Calls come from that one thread, one at a time, in
/// order; they must return promptly (the loop reads nothing while a call runs) and must not block on the
/// loop itself.
public protocol EventLoopDelegate: AnyObject, Sendable {
    /// Bytes were read from the device. The buffer is valid only during the call.
    func eventLoopReceived(_ bytes: UnsafeRawBufferPointer)

    /// The time set with ``EventLoopControl/setTimer(after:)`` has come (once per setting).
    func eventLoopTimerFired()

    /// The transport ended: ``TransportError/Code/closed`` after a local close or the peer going away,
    /// ``TransportError/Code/io`` after a failed read or write. Nothing is called after this.
    func eventLoopEnded(_ error: TransportError)
}

/// The controls of a running event loop (see ``EventLoopTransport``). Safe to use from any thread.
public protocol EventLoopControl: Sendable {
    /// Writes `bytes` after everything written before, without blocking: what the descriptor does not
    /// take at once is queued and written by the loop as the device reads. Calls from several threads must
    /// be serialised by the caller (their order is the order on the wire).
    ///
    /// Nothing is written after the transport ended. A device that stops reading lets the queue grow to
    /// a bound (1 MiB); past it the transport ends with ``TransportError/Code/io``.
    func write(_ bytes: UnsafeRawBufferPointer)

    /// Sets the loop's one timer: ``EventLoopDelegate/eventLoopTimerFired()`` is called once, `delay` from
    /// now (at once for a delay of zero or less). A new setting replaces the previous one; nil clears it.
    func setTimer(after delay: Duration?)

    /// The loop's time, which ``setTimer(after:)`` counts in (see ``EventLoop/now``): a ``ManualClock``'s
    /// for a transport on a loop a test drives, the system's monotonic time otherwise.
    var now: Duration { get }

    /// True when ``now`` is the system's monotonic time, the time of every loop that runs on a thread:
    /// then a caller may read that clock itself, without a call through the control (on a port's read
    /// path, that call is several microseconds of cold code). False (the default) for any other clock.
    var readsSystemClock: Bool { get }

    /// The loop's thread as a task executor: a task that prefers it
    /// (`withTaskExecutorPreference(control.taskExecutor) { … }`) runs on the I/O thread, between reads,
    /// so code resumed by a delegate call (a stream's consumer) runs right after that call returns, with
    /// no thread hop at all. Such code must not block: while it runs, the loop reads nothing. After the
    /// loop ends, jobs still enqueued run, in order, on another thread.
    var taskExecutor: any TaskExecutor { get }
}
