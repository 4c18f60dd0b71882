import Foundation

/// The bounded buffer between a producer (a link's loop, or the other end of an in-memory pair) and the
/// single consumer calling ``ByteTransport/receive()``, or woken to take what came
/// (``consumeByWakes(_:)``, an in-memory end on an event loop).
///
/// `capacity` bounds what is buffered: a producer may add a chunk only while fewer than `capacity` bytes are
/// buffered, so memory stays below `capacity` plus one chunk.
package final class ChunkQueue: @unchecked Sendable {
    private let lock = NSLock()
    private let capacity: Int
    private var chunks: [[UInt8]] = []
    private var bufferedBytes = 0
    private var ending: TransportError?
    private var receiver: (id: UInt64, continuation: CheckedContinuation<Result<[UInt8], TransportError>, Never>)?
    private var pushers: [(id: UInt64, continuation: CheckedContinuation<Result<Void, TransportError>, Never>)] = []
    private var nextWaiterID: UInt64 = 1
    /// Set by ``consumeByWakes(_:)``: called when bytes or the ending arrive.
    private var wakeConsumer: (@Sendable () -> Void)?
    /// A wake was sent and the consumer has not yet found the queue empty since.
    private var wakeOutstanding = false
    /// Called after the consumer took buffered bytes (``whenTaken(_:)``).
    private var takenHook: (@Sendable () -> Void)?

    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// How many bytes are buffered now.
    package var bufferedByteCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return bufferedBytes
    }

    /// Calls `hook` (from the consumer's thread, outside the lock) each time the consumer has taken what
    /// was buffered: a producer that stopped at the capacity may go on.
    package func whenTaken(_ hook: @escaping @Sendable () -> Void) {
        lock.lock()
        takenHook = hook
        lock.unlock()
    }

    /// True once ``finish(_:discardBuffered:)`` was called.
    package var isFinished: Bool {
        lock.lock()
        defer { lock.unlock() }
        return ending != nil
    }

    // MARK: Consumer

    /// Everything buffered, or waits for bytes; throws the ending once the buffer is drained.
    package func pop() async throws(TransportError) -> [UInt8] {
        let id: UInt64
        switch popNow() {
        case .bytes(let bytes): return bytes
        case .failure(let error): throw error
        case .wait(let waiterID): id = waiterID
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<[UInt8], TransportError>, Never>) in
                register(receiver: continuation, id: id)
            }
        } onCancel: {
            cancelReceiver(id: id)
        }
        return try result.get()
    }

    private enum PopOutcome {
        case bytes([UInt8])
        case failure(TransportError)
        case wait(UInt64)
    }

    private func popNow() -> PopOutcome {
        lock.lock()
        if let bytes = takeAllUnlocking() { return .bytes(bytes) }
        if let ending {
            lock.unlock()
            return .failure(ending)
        }
        if receiver != nil {
            lock.unlock()
            return .failure(TransportError(code: .concurrentReceive, message: "another task is already receiving"))
        }
        let id = nextWaiterID
        nextWaiterID += 1
        lock.unlock()
        return .wait(id)
    }

    private func register(receiver continuation: CheckedContinuation<Result<[UInt8], TransportError>, Never>, id: UInt64) {
        lock.lock()
        if let bytes = takeAllUnlocking() {
            continuation.resume(returning: .success(bytes))
        } else if let ending {
            lock.unlock()
            continuation.resume(returning: .failure(ending))
        } else if Task.isCancelled {
            lock.unlock()
            continuation.resume(returning: .failure(Self.cancelledError))
        } else if receiver != nil {
            lock.unlock()
            continuation.resume(
                returning: .failure(TransportError(code: .concurrentReceive, message: "another task is already receiving")))
        } else {
            receiver = (id, continuation)
            lock.unlock()
        }
    }

    private func cancelReceiver(id: UInt64) {
        lock.lock()
        let waiting = receiver?.id == id ? receiver?.continuation : nil
        if waiting != nil { receiver = nil }
        lock.unlock()
        waiting?.resume(returning: .failure(Self.cancelledError))
    }

    /// What ``takeNow()`` found.
    package enum Take {
        /// Everything that was buffered.
        case bytes([UInt8])
        /// Nothing buffered; the next bytes or the ending will wake the consumer.
        case empty
        /// Nothing buffered and the queue ended.
        case ended(TransportError)
    }

    /// Makes the consumer one that is woken: `wake` is called (from the producer's thread, outside the
    /// lock) when bytes or the ending arrive and no earlier wake is outstanding; the consumer then calls
    /// ``takeNow()`` until it finds the queue empty or ended. Called once, instead of ``pop()``.
    package func consumeByWakes(_ wake: @escaping @Sendable () -> Void) {
        lock.lock()
        wakeConsumer = wake
        let wakeNow = !chunks.isEmpty || ending != nil
        wakeOutstanding = wakeNow
        lock.unlock()
        if wakeNow { wake() }
    }

    /// Forgets the wake given to ``consumeByWakes(_:)`` (the consumer has ended).
    package func stopWakes() {
        lock.lock()
        wakeConsumer = nil
        lock.unlock()
    }

    /// Everything buffered, without waiting (see ``consumeByWakes(_:)``).
    package func takeNow() -> Take {
        lock.lock()
        if let bytes = takeAllUnlocking() { return .bytes(bytes) }
        wakeOutstanding = false
        let ending = ending
        lock.unlock()
        return ending.map(Take.ended) ?? .empty
    }

    // MARK: Producers

    /// Adds bytes without waiting, past the capacity up to `limit` buffered bytes (a writer that cannot
    /// wait: an event loop's). Returns the queue's ending when it ended, and an ``TransportError/Code/io``
    /// error, adding nothing, when the bytes would pass `limit`.
    package func pushWithoutWaiting(_ bytes: [UInt8], limit: Int) -> TransportError? {
        guard !bytes.isEmpty else { return nil }
        lock.lock()
        if let ending {
            lock.unlock()
            return ending
        }
        guard bufferedBytes + bytes.count <= limit else {
            let buffered = bufferedBytes
            lock.unlock()
            return TransportError(code: .io, message: "the reader does not read: \(buffered) bytes wait to be read")
        }
        let handOff = appendLocked(bytes)
        let wake = consumerWakeLocked()
        lock.unlock()
        if let handOff { handOff.continuation.resume(returning: .success(handOff.bytes)) }
        wake?()
        return nil
    }

    /// Adds bytes from a task, suspending while the buffer is full.
    ///
    /// - Throws: the queue's ending when it ended, ``TransportError/Code/cancelled`` when the task was
    ///   cancelled while waiting for room.
    package func push(_ bytes: [UInt8]) async throws(TransportError) {
        guard !bytes.isEmpty else { return }
        while true {
            let id: UInt64
            switch pushNow(bytes) {
            case .done: return
            case .failure(let error): throw error
            case .wait(let waiterID): id = waiterID
            }
            let result = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, TransportError>, Never>) in
                    register(pusher: continuation, id: id)
                }
            } onCancel: {
                cancelPusher(id: id)
            }
            try result.get()
        }
    }

    private enum PushOutcome {
        case done
        case failure(TransportError)
        case wait(UInt64)
    }

    private func pushNow(_ bytes: [UInt8]) -> PushOutcome {
        lock.lock()
        if let ending {
            lock.unlock()
            return .failure(ending)
        }
        if bufferedBytes < capacity {
            let handOff = appendLocked(bytes)
            let wake = consumerWakeLocked()
            lock.unlock()
            if let handOff { handOff.continuation.resume(returning: .success(handOff.bytes)) }
            wake?()
            return .done
        }
        let id = nextWaiterID
        nextWaiterID += 1
        lock.unlock()
        return .wait(id)
    }

    private func register(pusher continuation: CheckedContinuation<Result<Void, TransportError>, Never>, id: UInt64) {
        lock.lock()
        if let ending {
            lock.unlock()
            continuation.resume(returning: .failure(ending))
        } else if bufferedBytes < capacity {
            lock.unlock()
            continuation.resume(returning: .success(()))
        } else if Task.isCancelled {
            lock.unlock()
            continuation.resume(returning: .failure(Self.cancelledError))
        } else {
            pushers.append((id, continuation))
            lock.unlock()
        }
    }

    private func cancelPusher(id: UInt64) {
        lock.lock()
        let index = pushers.firstIndex { $0.id == id }
        let waiting = index.map { pushers.remove(at: $0).continuation }
        lock.unlock()
        waiting?.resume(returning: .failure(Self.cancelledError))
    }

    /// Ends the queue. With `discardBuffered` the consumer gets `error` at once; otherwise after the
    /// buffered bytes. Only the first call has an effect.
    package func finish(_ error: TransportError, discardBuffered: Bool) {
        lock.lock()
        if discardBuffered {
            chunks.removeAll()
            bufferedBytes = 0
        }
        guard ending == nil else {
            lock.unlock()
            return
        }
        ending = error
        var waitingReceiver: CheckedContinuation<Result<[UInt8], TransportError>, Never>?
        if chunks.isEmpty, let receiver {
            waitingReceiver = receiver.continuation
            self.receiver = nil
        }
        let waitingPushers = pushers.map(\.continuation)
        pushers.removeAll()
        let wake = consumerWakeLocked()
        lock.unlock()
        wake?()
        waitingReceiver?.resume(returning: .failure(error))
        for pusher in waitingPushers { pusher.resume(returning: .failure(error)) }
    }

    // MARK: Private (lock held)

    private static let cancelledError = TransportError(code: .cancelled, message: "the receiving task was cancelled")

    private func takeAllLocked() -> [UInt8]? {
        guard !chunks.isEmpty else { return nil }
        let bytes = chunks.count == 1 ? chunks[0] : Array(chunks.joined())
        chunks.removeAll(keepingCapacity: true)
        bufferedBytes = 0
        return bytes
    }

    /// With the lock held: everything buffered, the lock released and the waiting producers woken; nil,
    /// the lock still held, when nothing is buffered.
    private func takeAllUnlocking() -> [UInt8]? {
        guard let bytes = takeAllLocked() else { return nil }
        let wake = wakePushersLocked()
        let hook = takenHook
        lock.unlock()
        for continuation in wake { continuation.resume(returning: .success(())) }
        hook?()
        return bytes
    }

    /// The consumer's wake, when one is due (bytes or the ending arrived and none is outstanding).
    private func consumerWakeLocked() -> (@Sendable () -> Void)? {
        guard let wakeConsumer, !wakeOutstanding else { return nil }
        wakeOutstanding = true
        return wakeConsumer
    }

    private func wakePushersLocked() -> [CheckedContinuation<Result<Void, TransportError>, Never>] {
        let waiting = pushers.map(\.continuation)
        pushers.removeAll()
        return waiting
    }

    private func appendLocked(
        _ bytes: [UInt8]
    ) -> (continuation: CheckedContinuation<Result<[UInt8], TransportError>, Never>, bytes: [UInt8])? {
        if let receiver, chunks.isEmpty {
            self.receiver = nil
            return (receiver.continuation, bytes)
        }
        chunks.append(bytes)
        bufferedBytes += bytes.count
        return nil
    }
}
