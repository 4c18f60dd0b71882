import CameraControlWire

/// The messages of one server-streaming call, as an `AsyncSequence` whose iterator throws ``RPCError``.
///
/// The call is already running when ``RPCClient/serverStream(_:_:as:deadline:)`` returns; messages that
/// arrive before iteration are buffered (up to ``RPCClient/Configuration/streamBufferLimit``; a consumer
/// that falls further behind gets ``StatusCode/resourceExhausted`` and the call is cancelled).
///
/// Iteration ends normally (`nil`) when the device ends the stream with `OK`. It throws:
/// - the device's status for an `ERROR` or a non-OK `STREAM_END`;
/// - ``StatusCode/deadlineExceeded`` when the stream's deadline passed;
/// - ``StatusCode/unavailable`` when the link died or the transport closed;
/// - ``StatusCode/internal`` when a message does not decode as `Element` (the call is cancelled);
/// - ``StatusCode/cancelled`` when the iterating task is cancelled (a `CANCEL` is sent).
///
/// Ending iteration early (breaking out of `for try await`) and dropping the stream sends `CANCEL`.
/// Iterate a stream once, from one task.
public struct RPCStream<Element: WireMessage>: AsyncSequence, Sendable {
    /// The error type of the iterator.
    public typealias Failure = RPCError

    let handle: RPCStreamHandle

    /// The call's id.
    public var callID: CallID { handle.callID }
    /// The call's method.
    public var method: MethodID { handle.method }

    /// Cancels the call now (sends `CANCEL`); iteration then throws ``StatusCode/cancelled``.
    public func cancel() {
        handle.cancel()
    }

    /// The iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(handle: handle)
    }

    /// Yields each decoded message; see ``RPCStream`` for the errors.
    public struct Iterator: AsyncIteratorProtocol {
        /// The error type.
        public typealias Failure = RPCError

        let handle: RPCStreamHandle
        private var finished = false

        init(handle: RPCStreamHandle) {
            self.handle = handle
        }

        /// The next message, nil at the end of the stream.
        ///
        /// - Throws: ``RPCError`` (see ``RPCStream``).
        public mutating func next() async throws(RPCError) -> Element? {
            try await next(isolation: nil)
        }

        /// The next message, nil at the end of the stream; the caller resumes on `actor` (what `for try
        /// await` passes: the loop's own actor), straight from the thread that received the message.
        ///
        /// - Throws: ``RPCError`` (see ``RPCStream``).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(RPCError) -> Element? {
            guard !finished else { return nil }
            switch await handle.channel.next(isolation: actor) {
            case .message(let payload):
                do {
                    return try Element(serializedBytes: payload)
                } catch {
                    finished = true
                    handle.cancel()
                    throw RPCError(
                        code: .internal,
                        message: "stream message does not decode as \(Element.protoMessageName): \(error.message)",
                        method: handle.method, cause: error)
                }
            case .end(let error):
                finished = true
                if let error { throw error }
                return nil
            case .taskCancelled:
                finished = true
                handle.cancel()
                throw RPCError(code: .cancelled, message: "the consuming task was cancelled", method: handle.method)
            }
        }
    }
}

/// Keeps a stream's call alive while someone holds the stream or an iterator; cancels it when dropped.
final class RPCStreamHandle: Sendable {
    let callID: CallID
    let method: MethodID
    let channel: StreamChannel
    private let client: RPCClient

    init(callID: CallID, method: MethodID, channel: StreamChannel, client: RPCClient) {
        self.callID = callID
        self.method = method
        self.channel = channel
        self.client = client
    }

    func cancel() {
        client.cancel(callID)
    }

    deinit {
        client.cancel(callID)
    }
}
