import Synchronization

/// ``ByteTransport/receive()`` over the one I/O path, for code that reads a link itself (the conformance
/// probe, fake devices in tests): the ``EventLoopDelegate`` of a transport started on a loop for that
/// purpose. It buffers what the loop hands it and gives it to the one task waiting in ``receive()``.
///
/// Bounded: once `capacity` bytes wait to be taken it asks the transport to stop reading (the `setReading`
/// given to ``attach(setReading:)``), and to read again when ``receive()`` has taken them, as a slow reader
/// would want; memory stays below `capacity` plus one read.
package final class ReceiveAdapter: EventLoopDelegate, Sendable {
    private typealias Receiver = CheckedContinuation<Result<[UInt8], TransportError>, Never>

    private struct State {
        var pending = PendingBytes()
        /// Why the transport ended; ``receive()`` throws it once the buffer is drained.
        var ending: TransportError?
        /// The task waiting in ``receive()``, with an id its cancellation can name.
        var receiver: (id: UInt64, continuation: Receiver)?
        var nextReceiverID: UInt64 = 1
        /// Reading was stopped at the capacity.
        var paused = false
        /// How to stop and restart the transport's reading; dropped at the end.
        var setReading: (@Sendable (Bool) -> Void)?
    }

    private let capacity: Int
    private let state = Mutex(State())

    /// An adapter that stops its transport's reading while `capacity` or more bytes wait.
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// How the adapter stops (`false`) and restarts (`true`) its transport's reading. It is called with the
    /// adapter's lock held, so it must not call the adapter back.
    package func attach(setReading: @escaping @Sendable (Bool) -> Void) {
        state.withLock { $0.setReading = $0.ending == nil ? setReading : nil }
    }

    // MARK: EventLoopDelegate

    /// Buffers `bytes`, or hands them to the waiting task at once.
    package func eventLoopReceived(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        let copy = [UInt8](bytes)
        let waiting = state.withLock { state -> Receiver? in
            guard state.ending == nil else { return nil }
            if let receiver = state.receiver, state.pending.isEmpty {
                state.receiver = nil
                return receiver.continuation
            }
            state.pending.append(copy)
            if !state.paused, state.pending.count >= capacity, let setReading = state.setReading {
                state.paused = true
                setReading(false)
            }
            return nil
        }
        waiting?.resume(returning: .success(copy))
    }

    /// Nothing: the reader keeps its own time.
    package func eventLoopTimerFired() {}

    /// The transport ended: ``receive()`` throws `error` once what was buffered is taken.
    package func eventLoopEnded(_ error: TransportError) {
        finish(error, discardBuffered: false)
    }

    // MARK: The reader

    /// Everything buffered, or the next bytes read; throws the transport's ending once the buffer is
    /// drained.
    ///
    /// - Throws: the ending; ``TransportError/Code/concurrentReceive`` when another task is waiting here;
    ///   ``TransportError/Code/cancelled`` when the task is cancelled while waiting.
    package func receive() async throws(TransportError) -> [UInt8] {
        let id: UInt64
        switch takeOrQueue() {
        case .bytes(let bytes): return bytes
        case .failure(let error): throw error
        case .wait(let waiterID): id = waiterID
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Receiver) in
                register(continuation, id: id)
            }
        } onCancel: {
            cancelReceiver(id: id)
        }
        return try result.get()
    }

    /// Ends the adapter now (the transport was closed here): with `discardBuffered` a waiting or later
    /// ``receive()`` gets `error` at once, otherwise after what was buffered. Only the first ending counts.
    package func finish(_ error: TransportError, discardBuffered: Bool) {
        let waiting = state.withLock { state -> Receiver? in
            if discardBuffered {
                state.pending.removeAll()
            }
            guard state.ending == nil else { return nil }
            state.ending = error
            state.setReading = nil
            guard state.pending.isEmpty, let receiver = state.receiver else { return nil }
            state.receiver = nil
            return receiver.continuation
        }
        waiting?.resume(returning: .failure(error))
    }

    // MARK: Private

    private enum Outcome {
        case bytes([UInt8])
        case failure(TransportError)
        case wait(UInt64)
    }

    private static let concurrentReceive = TransportError(
        code: .concurrentReceive, message: "another task is already receiving")
    private static let cancelled = TransportError(code: .cancelled, message: "the receiving task was cancelled")

    private func takeOrQueue() -> Outcome {
        state.withLock { state in
            if let bytes = takeAllLocked(&state) { return .bytes(bytes) }
            if let ending = state.ending { return .failure(ending) }
            if state.receiver != nil { return .failure(Self.concurrentReceive) }
            defer { state.nextReceiverID += 1 }
            return .wait(state.nextReceiverID)
        }
    }

    private func register(_ continuation: Receiver, id: UInt64) {
        let immediate = state.withLock { state -> Result<[UInt8], TransportError>? in
            if let bytes = takeAllLocked(&state) { return .success(bytes) }
            if let ending = state.ending { return .failure(ending) }
            if Task.isCancelled { return .failure(Self.cancelled) }
            if state.receiver != nil { return .failure(Self.concurrentReceive) }
            state.receiver = (id, continuation)
            return nil
        }
        if let immediate { continuation.resume(returning: immediate) }
    }

    private func cancelReceiver(id: UInt64) {
        let waiting = state.withLock { state -> Receiver? in
            guard let receiver = state.receiver, receiver.id == id else { return nil }
            state.receiver = nil
            return receiver.continuation
        }
        waiting?.resume(returning: .failure(Self.cancelled))
    }

    /// Everything buffered (reading restarts if it was stopped), or nil when nothing is.
    private func takeAllLocked(_ state: inout State) -> [UInt8]? {
        guard let bytes = state.pending.takeAll() else { return nil }
        if state.paused {
            state.paused = false
            state.setReading?(true)
        }
        return bytes
    }
}
