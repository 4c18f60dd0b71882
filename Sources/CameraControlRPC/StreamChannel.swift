import Foundation

/// Where ``RPCClient`` hands one stream's payloads and then its ending (`nil` for `OK`, or an error): a
/// ``StreamChannel`` an ``RPCStream`` iterates, or a ``LoopStreamDelivery`` that calls a handler.
/// The client calls it outside its lock, one call at a time, in the core's order.
protocol StreamConsumer: AnyObject, Sendable {
    /// Takes a message; false when the consumer is `limit` messages behind or ended (the message is not
    /// taken: the client cancels the call).
    func yield(_ payload: [UInt8]) -> Bool
    /// Ends the stream after the messages taken (only the first ending counts).
    func finish(_ error: RPCError?)
}

/// The bounded, single-consumer buffer between ``RPCClient`` and one ``RPCStream``: payloads in, then an
/// ending (`nil` for `OK`, or an error).
final class StreamChannel: StreamConsumer, @unchecked Sendable {
    /// What the consumer gets next.
    enum Item {
        /// A message payload.
        case message([UInt8])
        /// The stream ended: nil for status OK, otherwise the error.
        case end(RPCError?)
        /// The consuming task was cancelled while waiting.
        case taskCancelled
    }

    private let lock = NSLock()
    private let limit: Int
    private var buffer: [[UInt8]] = []
    private var head = 0
    private var ending: RPCError??
    private var waiter: CheckedContinuation<Item, Never>?

    /// A channel holding at most `limit` undelivered messages.
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Adds a message; false when `limit` messages are already waiting (the message is not added) or the
    /// channel ended.
    func yield(_ payload: [UInt8]) -> Bool {
        lock.lock()
        guard ending == nil else {
            lock.unlock()
            return false
        }
        if let waiter {
            self.waiter = nil
            lock.unlock()
            waiter.resume(returning: .message(payload))
            return true
        }
        guard buffer.count - head < limit else {
            lock.unlock()
            return false
        }
        buffer.append(payload)
        lock.unlock()
        return true
    }

    /// Ends the channel after the buffered messages (only the first ending counts).
    func finish(_ error: RPCError?) {
        lock.lock()
        guard ending == nil else {
            lock.unlock()
            return
        }
        ending = .some(error)
        let waiting = waiter
        waiter = nil
        lock.unlock()
        waiting?.resume(returning: .end(error))
    }

    /// The next item; waits while nothing is buffered. The waiting task resumes on `isolation` (the caller's
    /// actor, if any) straight from the thread that delivers the message: one hop, not two.
    func next(isolation: isolated (any Actor)? = #isolation) async -> Item {
        if let item = takeNow() { return item }
        return await withTaskCancellationHandler(
            operation: {
                await withCheckedContinuation(isolation: isolation) { (continuation: CheckedContinuation<Item, Never>) in
                    park(continuation)
                }
            },
            onCancel: {
                lock.lock()
                let waiting = waiter
                waiter = nil
                lock.unlock()
                waiting?.resume(returning: .taskCancelled)
            }, isolation: isolation)
    }

    private func takeNow() -> Item? {
        lock.lock()
        defer { lock.unlock() }
        return takeLocked()
    }

    private func park(_ continuation: CheckedContinuation<Item, Never>) {
        lock.lock()
        if let item = takeLocked() {
            lock.unlock()
            continuation.resume(returning: item)
        } else if Task.isCancelled {
            lock.unlock()
            continuation.resume(returning: .taskCancelled)
        } else {
            waiter = continuation
            lock.unlock()
        }
    }

    private func takeLocked() -> Item? {
        if head < buffer.count {
            let payload = buffer[head]
            head += 1
            if head == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64 && head * 2 >= buffer.count {
                // A consumer that stays a message or two behind never empties the buffer: drop what it
                // has taken, so memory stays bounded by `limit` undelivered messages.
                buffer.removeFirst(head)
                head = 0
            }
            return .message(payload)
        }
        if let ending { return .end(ending) }
        return nil
    }
}
