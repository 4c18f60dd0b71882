import CameraControlPosixTransport
import CameraControlRPC
import CameraControlTransport
import CameraControlWire
import Synchronization

/// A device that stays connected: it opens a session, streams its input events, and when the link is
/// lost (unplugged, restarted, heartbeat timeout) reports it and opens a new session, again and again.
///
/// Its one output is the handler given to ``run(_:)``: every ``Activity``, in order, the moment it happens.
/// The capture layer cancels any press in flight on ``Activity/disconnected(_:)`` — a press whose release
/// was never seen must never turn into a capture.
///
/// The connection runs on an ``EventLoop`` (``eventLoop``: its executor), which it gives its ``Opener``.
/// Sessions opened on that loop (`DeviceSession.connect(transport:hostName:attempts:deadline:eventLoop:)`
/// with it; the path convenience of the `CameraControlPorts` module does so) deliver each input event
/// from the port's read to the handler on one thread, with no queue, no task and no hop.
public actor DeviceConnection: EventLoopActor {
    /// What happens to the connection, in order.
    public enum Activity: Sendable {
        /// A session is up (first connect or reconnect).
        case connected(DeviceInfo)
        /// An input event from the current session.
        case input(InputEvent)
        /// The session ended; a reconnect is attempted after the delay unless stopped.
        case disconnected(RPCError)
        /// An attempt to connect failed; another follows after the delay unless attempts ran out.
        case connectFailed(DeviceError)
    }

    /// Opens a new session on the connection's event loop (its argument); called for the first connect
    /// and every reconnect.
    public typealias Opener = @Sendable (_ eventLoop: any EventLoop) async throws(DeviceError) -> DeviceSession

    /// Takes each activity as it happens, on the connection's executor (with the session for
    /// ``Activity/connected(_:)``); see ``run(_:)``.
    public typealias ActivityHandler = @Sendable (Activity, DeviceSession?) -> Void

    /// The loop this connection runs on (its actor executor); share it with the sessions it opens.
    public nonisolated let eventLoop: any EventLoop
    private let ownsEventLoop: Bool
    private let opener: Opener
    private let retryDelay: Duration
    private let maxConsecutiveFailures: Int?
    private var current: DeviceSession?
    /// ``run(_:)``'s handler, while it runs.
    private var handler: ActivityHandler?
    /// ``run(_:)`` has begun: a connection runs once.
    private var running = false
    /// ``stop()`` was called: no new session starts.
    private var stopped = false
    /// Why ``run(_:)`` stopped reconnecting on its own, when it did: an open that failed with
    /// `TransportError.Code.gone` (the device cannot come back under its path); nil otherwise.
    public private(set) var gaveUp: DeviceError?

    /// A connection that opens sessions with `opener`, waiting `retryDelay` between attempts (longer after
    /// refused handshakes in a row: ``retryDelay(_:afterRefusals:)``) and giving up after
    /// `maxConsecutiveFailures` failed connects in a row (nil: never). It runs on `eventLoop` (which its
    /// owner shuts down), or on a loop of its own that ends with it.
    public init(
        retryDelay: Duration = .milliseconds(250), maxConsecutiveFailures: Int? = nil, eventLoop: (any EventLoop)? = nil,
        opener: @escaping Opener
    ) {
        self.init(
            retryDelay: retryDelay, maxConsecutiveFailures: maxConsecutiveFailures,
            eventLoop: eventLoop ?? EventLoops.make(name: "cc-device"), ownsEventLoop: eventLoop == nil,
            opener: opener)
    }

    private init(
        retryDelay: Duration, maxConsecutiveFailures: Int?, eventLoop: any EventLoop, ownsEventLoop: Bool,
        opener: @escaping Opener
    ) {
        self.opener = opener
        self.retryDelay = retryDelay
        self.maxConsecutiveFailures = maxConsecutiveFailures
        self.eventLoop = eventLoop
        self.ownsEventLoop = ownsEventLoop
    }

    deinit {
        if ownsEventLoop { eventLoop.shutdown() }
    }

    /// The connection runs on ``eventLoop``.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { eventLoop.asUnownedSerialExecutor() }

    /// The session in use, nil while disconnected.
    public var session: DeviceSession? { current }

    /// Connects, streams, reconnects, in the calling task, handing every activity to `handler` —
    /// synchronously, in order, on the connection's executor, the moment it happens: an input event straight
    /// from the session's stream, with no queue and no task in between — until ``stop()``, the task's
    /// cancellation (a handshake in progress included), attempts running out or an open that says the device
    /// is gone for good (``gaveUp``); then it returns, and the
    /// connection is done. A parent that owns the connection's work (a task group) runs it here. It runs
    /// once: a second call, or one after ``stop()``, returns at once. Whatever `handler` does must be short:
    /// the connection (and, on a shared ``EventLoop``, its ports) waits for it.
    public func run(_ handler: @escaping ActivityHandler) async {
        guard !running, !stopped else { return }
        running = true
        self.handler = handler
        await runLoop()
        self.handler = nil
    }

    /// Stops: no new session starts and the session in use closes, so ``run(_:)`` returns (after the retry
    /// delay or the handshake in progress, unless its task is cancelled); a loop of the connection's own
    /// ends.
    public func stop() async {
        stopped = true
        if let current { await current.close() }
        current = nil
        if ownsEventLoop { eventLoop.shutdown() }
    }

    /// The longest wait before opening again after refused handshakes in a row (unless the retry delay is
    /// longer).
    public static let refusedRetryDelayLimit: Duration = .seconds(2)

    /// The wait before the next open after `refusals` handshakes in a row the device refused
    /// (``DeviceError/isRefusedHandshake``: another version, or `camctl serve`'s `ALREADY_EXISTS` for a
    /// second host in one process, answered again at once): `retryDelay` for none and for the first, then
    /// twice as long each time, up to ``refusedRetryDelayLimit`` (or `retryDelay` when that is longer). A
    /// refused host keeps trying (the other host may stop, the device may be replaced) without opening a
    /// connection every retry delay; any other outcome starts over at `retryDelay`.
    public static func retryDelay(_ retryDelay: Duration, afterRefusals refusals: Int) -> Duration {
        guard refusals > 1 else { return retryDelay }
        let limit = max(retryDelay, refusedRetryDelayLimit)
        var delay = retryDelay
        for _ in 1..<refusals {
            delay *= 2
            if delay >= limit { return limit }
        }
        return delay
    }

    /// Hands an activity to ``run(_:)``'s handler.
    private func report(_ activity: Activity) {
        handler?(activity, current)
    }

    private func runLoop() async {
        var failures = 0
        var refusals = 0
        while !Task.isCancelled && !stopped {
            let session: DeviceSession
            do {
                session = try await opener(eventLoop)
            } catch {
                report(.connectFailed(error))
                // A device that cannot come back (a pseudo-terminal that closed): no attempt can reach it.
                if error.transportError?.code == .gone {
                    gaveUp = error
                    break
                }
                failures += 1
                if let maxConsecutiveFailures, failures >= maxConsecutiveFailures { break }
                refusals = error.isRefusedHandshake ? refusals + 1 : 0
                if (try? await Task.sleep(for: Self.retryDelay(retryDelay, afterRefusals: refusals))) == nil { break }
                continue
            }
            failures = 0
            refusals = 0
            if stopped {
                await session.close()  // stopped during the handshake
                break
            }
            current = session
            report(.connected(session.info))
            let ending = await streamInputEvents(of: session)
            current = nil
            // Reported before the close, which may keep the link open a moment for an answer still on its
            // way (RPCClient.shutdown): the session is over for the handler now.
            if !Task.isCancelled && !stopped { report(.disconnected(ending)) }
            await session.close()
            if Task.isCancelled || stopped { break }
            if (try? await Task.sleep(for: retryDelay)) == nil { break }
        }
    }

    /// Reports `session`'s input events until its stream ends, and returns why it ended. Each event is
    /// handed over synchronously on the connection's loop, during the read that brought it when the
    /// session's port runs on that loop: no task is resumed between the port and ``report(_:)``.
    private func streamInputEvents(of session: DeviceSession) async -> RPCError {
        let ending = StreamEnding()
        let subscription: StreamSubscription
        // run(_:)'s handler, set before the first session and kept until run(_:) returns, after this stream ended.
        let handler = self.handler
        do {
            subscription = try session.inputEvents(deliveringOn: eventLoop) { event in
                switch event {
                case .message(let input):
                    // On `eventLoop`, this actor's executor (the stream's loop): straight to the handler
                    // with this session, the current one while its stream runs, as report(_:) would.
                    handler?(.input(input), session)
                case .ended(let error):
                    ending.resolve(error ?? RPCError(code: .unavailable, message: "the device ended the event stream"))
                }
            }
        } catch {
            return error
        }
        return await withTaskCancellationHandler {
            await ending.value()
        } onCancel: {
            subscription.cancel()
        }
    }
}

/// The one ending of a handler-delivered stream, awaited by the connection's loop.
private final class StreamEnding: Sendable {
    private let state = Mutex<(ending: RPCError?, waiter: CheckedContinuation<RPCError, Never>?)>((nil, nil))

    /// Records the ending and resumes the waiter (only the first ending counts).
    func resolve(_ error: RPCError) {
        let waiter = state.withLock { state -> CheckedContinuation<RPCError, Never>? in
            guard state.ending == nil else { return nil }
            state.ending = error
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: error)
    }

    /// Waits for the ending.
    func value() async -> RPCError {
        await withCheckedContinuation { (continuation: CheckedContinuation<RPCError, Never>) in
            let ending = state.withLock { state -> RPCError? in
                if let ending = state.ending { return ending }
                state.waiter = continuation
                return nil
            }
            if let ending { continuation.resume(returning: ending) }
        }
    }
}
