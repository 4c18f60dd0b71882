import CameraControlTransport
import CameraControlWire
import Synchronization

/// What a stream hands the handler of ``RPCClient/serverStream(_:_:as:deadline:deliveringOn:to:)``: each
/// message, then its ending, once.
public enum StreamEvent<Message: Sendable>: Sendable {
    /// A decoded message.
    case message(Message)
    /// The stream ended: nil when the device ended it with `OK`, otherwise why (as ``RPCStream``'s
    /// iterator would throw it). Nothing follows.
    case ended(RPCError?)
}

/// A server-streaming call whose messages go to a handler (``RPCClient/serverStream(_:_:as:deadline:deliveringOn:to:)``).
/// The call runs until the device ends it, its deadline, the link's end or ``cancel()``; dropping the
/// subscription does not end it.
public final class StreamSubscription: Sendable {
    /// The call's id.
    public let callID: CallID
    /// The call's method.
    public let method: MethodID
    private weak let client: RPCClient?
    private let delivery: LoopStreamDelivery

    init(callID: CallID, method: MethodID, client: RPCClient, delivery: LoopStreamDelivery) {
        self.callID = callID
        self.method = method
        self.client = client
        self.delivery = delivery
    }

    /// Cancels the call (sends `CANCEL`): no message reaches the handler after this, not even one that had
    /// arrived already — called on the loop (from the handler, or an actor on it); from another thread, a
    /// message being handed over at that moment may still arrive —, and the handler then gets
    /// ``StreamEvent/ended(_:)`` with ``StatusCode/cancelled``, unless the stream had already ended.
    public func cancel() {
        delivery.dropMessages()
        client?.cancel(callID)
    }
}

/// A stream consumer that calls a handler on an ``EventLoop``: synchronously, on the thread that delivers,
/// when that is the loop's (the port's read, for a client driven by that loop: no task and no queue between
/// the read and the handler); otherwise scheduled on the loop, after what was already waiting. Either way
/// the handler runs on the loop, one call at a time, in the stream's order — also when a handler's own
/// call (a cancel) makes the client deliver more while it runs: that waits for it to return. A handler
/// that refuses a message (it does not decode) gets nothing more, and the call is cancelled.
@usableFromInline
final class LoopStreamDelivery: StreamConsumer {
    /// What the handler gets: a payload, or the ending.
    @usableFromInline
    enum Item: Sendable {
        case message([UInt8])
        case end(RPCError?)
    }

    private struct State {
        var pending: [Item] = []
        /// A call of the handler is running (the one delivering takes what others add meanwhile).
        var delivering = false
        /// A delivery is scheduled on the loop.
        var scheduled = false
        var ended = false
        /// The call was cancelled: messages are dropped, only the ending is still delivered.
        var droppingMessages = false
        /// The call, once started (``started(_:)``): cancelled when the handler refuses a message.
        var call: CallID?
    }

    private let loop: any EventLoop
    private let limit: Int
    private weak let client: RPCClient?
    private let handler: @Sendable (Item) -> Bool
    private let state = Mutex(State())

    /// Delivers to `handler` on `loop`, failing a message (``yield(_:)`` false) when `limit` wait
    /// undelivered. `handler` returns false for a message it cannot take: then it gets nothing more (not
    /// even the ending) and the call is cancelled on `client`.
    init(loop: any EventLoop, limit: Int, client: RPCClient, handler: @escaping @Sendable (Item) -> Bool) {
        self.loop = loop
        self.limit = max(1, limit)
        self.client = client
        self.handler = handler
    }

    /// The call started as `call` (before any of its messages can come).
    func started(_ call: CallID) {
        state.withLock { $0.call = call }
    }

    func yield(_ payload: [UInt8]) -> Bool {
        push(.message(payload))
    }

    func finish(_ error: RPCError?) {
        _ = push(.end(error))
    }

    /// Drops the messages not yet delivered and any that come later (the call is being cancelled); the
    /// ending is still delivered.
    func dropMessages() {
        state.withLock { state in
            state.droppingMessages = true
            state.pending.removeAll { if case .message = $0 { true } else { false } }
        }
    }

    private func push(_ item: Item) -> Bool {
        let onLoop = loop.isCurrent
        enum Next { case refused, deliverThis, deliverNow, schedule, nothing }
        let next = state.withLock { state -> Next in
            guard !state.ended else { return .refused }
            if case .message = item {
                if state.droppingMessages { return .nothing }
                if state.pending.count >= limit { return .refused }
            }
            if case .end = item { state.ended = true }
            if onLoop && !state.delivering && state.pending.isEmpty {
                // Nothing waits and nobody delivers: the item goes to the handler now, not through the queue.
                state.delivering = true
                return .deliverThis
            }
            state.pending.append(item)
            if state.delivering { return .nothing }
            if onLoop {
                state.delivering = true
                return .deliverNow
            }
            if state.scheduled { return .nothing }
            state.scheduled = true
            return .schedule
        }
        switch next {
        case .refused: return false
        case .deliverThis:
            hand(item)
            deliverPending()
        case .deliverNow: deliverPending()
        case .schedule: loop.schedule(after: .zero) { [self] in deliverScheduled() }
        case .nothing: break
        }
        return true
    }

    /// Calls the handler with `item`; when it refuses it, ends the delivery and cancels the call.
    private func hand(_ item: Item) {
        guard !handler(item) else { return }
        let call = state.withLock { state -> CallID? in
            state.ended = true
            state.droppingMessages = true
            state.pending.removeAll()
            return state.call
        }
        if let call { client?.cancel(call) }
    }

    private func deliverScheduled() {
        let start = state.withLock { state -> Bool in
            state.scheduled = false
            guard !state.delivering, !state.pending.isEmpty else { return false }
            state.delivering = true
            return true
        }
        if start { deliverPending() }
    }

    private func deliverPending() {
        while let item = state.withLock({ state -> Item? in
            guard !state.pending.isEmpty else {
                state.delivering = false
                return nil
            }
            return state.pending.removeFirst()
        }) {
            hand(item)
        }
    }
}
