/// One end of an in-memory byte pipe: what ``send(_:)`` writes on one end, ``receive()`` returns on the
/// other. A first-class transport for tests and for running the firmware in-process.
///
/// Buffering is bounded: ``send(_:)`` suspends while the peer has `capacity` or more bytes unread.
/// Closing an end makes its own pending ``receive()`` throw ``TransportError/Code/closed`` at once, and the
/// peer's after it has read what was already sent; sending on either end then throws
/// ``TransportError/Code/closed``.
public final class InMemoryTransport: ByteTransport {
    /// The default bound of unread bytes per direction.
    public static let defaultCapacity = 64 * 1024

    /// `in-memory` plus the end's label.
    public let name: String
    private let inbound: ChunkQueue
    private let outbound: ChunkQueue

    private init(name: String, inbound: ChunkQueue, outbound: ChunkQueue) {
        self.name = name
        self.inbound = inbound
        self.outbound = outbound
    }

    /// Two connected ends, `host` and `device` (the names are only labels: the ends are symmetric).
    public static func makePair(capacity: Int = defaultCapacity) -> (host: InMemoryTransport, device: InMemoryTransport) {
        let toDevice = ChunkQueue(capacity: capacity)
        let toHost = ChunkQueue(capacity: capacity)
        let host = InMemoryTransport(name: "in-memory (host end)", inbound: toHost, outbound: toDevice)
        let device = InMemoryTransport(name: "in-memory (device end)", inbound: toDevice, outbound: toHost)
        return (host, device)
    }

    deinit {
        close()
    }

    /// Hands `bytes` to the peer, waiting while its buffer is full.
    ///
    /// - Throws: ``TransportError/Code/closed`` when either end is closed, ``TransportError/Code/cancelled``
    ///   when the task is cancelled while waiting for room.
    public func send(_ bytes: [UInt8]) async throws(TransportError) {
        if inbound.isFinished {
            throw TransportError(code: .closed, message: "\(name) is closed")
        }
        try await outbound.push(bytes)
    }

    /// The next bytes the peer sent (see ``ByteTransport/receive()``).
    ///
    /// - Throws: ``TransportError/Code/closed``, ``TransportError/Code/cancelled``,
    ///   ``TransportError/Code/concurrentReceive``.
    public func receive() async throws(TransportError) -> [UInt8] {
        try await inbound.pop()
    }

    /// Closes this end (and so the pipe in both directions).
    public func close() {
        inbound.finish(TransportError(code: .closed, message: "\(name) was closed"), discardBuffered: true)
        outbound.finish(TransportError(code: .closed, message: "the peer of the in-memory pair closed"), discardBuffered: false)
    }
}
