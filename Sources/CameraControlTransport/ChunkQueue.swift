import Foundation

/// The bounded buffer between a producer (a reader thread, or the other end of an in-memory pair) and the
/// single consumer calling ``ByteTransport/receive()``.
///
/// `capacity` bounds what is buffered: a producer may add a chunk only while fewer than `capacity` bytes are
/// buffered, so memory stays below `capacity` plus one chunk.
package final class ChunkQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private let capacity: Int
    private var chunks: [[UInt8]] = []
    private var bufferedBytes = 0
    private var ending: TransportError?
    private var receiver: (id: UInt64, continuation: CheckedContinuation<Result<[UInt8], TransportError>, Never>)?
    private var pushers: [(id: UInt64, continuation: CheckedContinuation<Result<Void, TransportError>, Never>)] = []
    private var nextWaiterID: UInt64 = 1

    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// True once ``finish(_:discardBuffered:)`` was called.
    package var isFinished: Bool {
        condition.lock()
        defer { condition.unlock() }
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
        condition.lock()
        if let bytes = takeAllLocked() {
            let wake = wakePushersLocked()
            condition.unlock()
            for continuation in wake { continuation.resume(returning: .success(())) }
            return .bytes(bytes)
        }
        if let ending {
            condition.unlock()
            return .failure(ending)
        }
        if receiver != nil {
            condition.unlock()
            return .failure(TransportError(code: .concurrentReceive, message: "another task is already receiving"))
        }
        let id = nextWaiterID
        nextWaiterID += 1
        condition.unlock()
        return .wait(id)
    }

    private func register(receiver continuation: CheckedContinuation<Result<[UInt8], TransportError>, Never>, id: UInt64) {
        condition.lock()
        if let bytes = takeAllLocked() {
            let wake = wakePushersLocked()
            condition.unlock()
            for pusher in wake { pusher.resume(returning: .success(())) }
            continuation.resume(returning: .success(bytes))
        } else if let ending {
            condition.unlock()
            continuation.resume(returning: .failure(ending))
        } else if Task.isCancelled {
            condition.unlock()
            continuation.resume(returning: .failure(Self.cancelledError))
        } else if receiver != nil {
            condition.unlock()
            continuation.resume(
                returning: .failure(TransportError(code: .concurrentReceive, message: "another task is already receiving")))
        } else {
            receiver = (id, continuation)
            condition.unlock()
        }
    }

    private func cancelReceiver(id: UInt64) {
        condition.lock()
        let waiting = receiver?.id == id ? receiver?.continuation : nil
        if waiting != nil { receiver = nil }
        condition.unlock()
        waiting?.resume(returning: .failure(Self.cancelledError))
    }

    // MARK: Producers

    /// Adds bytes from a thread, blocking while the buffer is full. Returns false when the queue ended.
    package func pushBlocking(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty else { return true }
        condition.lock()
        while ending == nil && bufferedBytes >= capacity {
            condition.wait()
        }
        if ending != nil {
            condition.unlock()
            return false
        }
        let handOff = appendLocked(bytes)
        condition.unlock()
        if let handOff { handOff.continuation.resume(returning: .success(handOff.bytes)) }
        return true
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
        condition.lock()
        if let ending {
            condition.unlock()
            return .failure(ending)
        }
        if bufferedBytes < capacity {
            let handOff = appendLocked(bytes)
            condition.unlock()
            if let handOff { handOff.continuation.resume(returning: .success(handOff.bytes)) }
            return .done
        }
        let id = nextWaiterID
        nextWaiterID += 1
        condition.unlock()
        return .wait(id)
    }

    private func register(pusher continuation: CheckedContinuation<Result<Void, TransportError>, Never>, id: UInt64) {
        condition.lock()
        if let ending {
            condition.unlock()
            continuation.resume(returning: .failure(ending))
        } else if bufferedBytes < capacity {
            condition.unlock()
            continuation.resume(returning: .success(()))
        } else if Task.isCancelled {
            condition.unlock()
            continuation.resume(returning: .failure(Self.cancelledError))
        } else {
            pushers.append((id, continuation))
            condition.unlock()
        }
    }

    private func cancelPusher(id: UInt64) {
        condition.lock()
        let index = pushers.firstIndex { $0.id == id }
        let waiting = index.map { pushers.remove(at: $0).continuation }
        condition.unlock()
        waiting?.resume(returning: .failure(Self.cancelledError))
    }

    /// Ends the queue. With `discardBuffered` the consumer gets `error` at once; otherwise after the
    /// buffered bytes. Only the first call has an effect.
    package func finish(_ error: TransportError, discardBuffered: Bool) {
        condition.lock()
        if discardBuffered {
            chunks.removeAll()
            bufferedBytes = 0
        }
        guard ending == nil else {
            condition.unlock()
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
        condition.broadcast()
        condition.unlock()
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
        condition.broadcast()
        return bytes
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
