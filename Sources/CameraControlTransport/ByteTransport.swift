/// A bidirectional byte stream to a device: a serial port, a pseudo-terminal, an in-memory pipe.
///
/// Transports move bytes only; framing is the wire layer's job. Every implementation follows the same
/// contract:
///
/// - ``send(_:)`` hands all the bytes to the link, in order, or throws: a port writes what the device takes
///   at once and queues the rest for its event loop (bounded: a device that stops reading ends the link with
///   ``TransportError/Code/io``); an in-memory end hands them to its peer at once (bounded the same way).
///   Sends from several tasks go out one after another, never interleaved.
/// - ``receive()`` suspends until bytes arrive and returns them as one non-empty chunk (everything buffered
///   so far, in order). When the transport is closed it throws ``TransportError/Code/closed``: at once after
///   a local ``close()``, or once every byte received before the peer went away has been returned. Only one
///   task may wait in `receive()` at a time (a second one gets ``TransportError/Code/concurrentReceive``);
///   cancelling the waiting task makes it throw ``TransportError/Code/cancelled`` and leaves the transport
///   usable.
/// - ``close()`` is idempotent, never blocks for long, ends a waiting `receive()` promptly and releases the
///   descriptor or port. Sending after it throws ``TransportError/Code/closed``.
///
/// Received bytes are buffered up to a bound per transport; when the consumer does not keep up, reading
/// pauses rather than memory growing (a port's device then waits on the line; an in-memory peer's writes
/// collect up to their own bound, past which the pair ends with ``TransportError/Code/io``).
///
/// Clients that run a connection (the RPC client) drive an ``EventLoopTransport`` on its loop instead;
/// `receive()` and `send(_:)` are an adapter over that same loop, for code that reads a link itself (the
/// conformance probe, relays, tests' fake devices).
public protocol ByteTransport: AnyObject, Sendable {
    /// A name for logs: the path, the port name, or `in-memory`.
    var name: String { get }

    /// Hands all of `bytes` to the link (see the contract above).
    ///
    /// - Throws: ``TransportError/Code/closed`` when the transport or its peer is closed,
    ///   ``TransportError/Code/io`` when the write fails.
    func send(_ bytes: [UInt8]) async throws(TransportError)

    /// Waits for received bytes and returns them (never empty).
    ///
    /// - Throws: ``TransportError/Code/closed`` at the end of the stream, ``TransportError/Code/io`` when a
    ///   read failed, ``TransportError/Code/cancelled`` when the calling task was cancelled,
    ///   ``TransportError/Code/concurrentReceive`` when another task is already waiting.
    func receive() async throws(TransportError) -> [UInt8]

    /// Closes the transport; safe to call more than once and from any thread.
    func close()
}
