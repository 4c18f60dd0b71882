import Synchronization

/// One end of an in-memory byte pipe: what one end writes, the other reads. A first-class transport for
/// tests and for running the firmware in-process.
///
/// An end is driven like a port, one way or the other:
/// - **On an event loop** (``startEventLoop(delegate:on:)``, what ``EventLoopTransport`` clients such as
///   the RPC client do): it joins any ``EventLoop`` — a ``SerialQueueEventLoop`` timed by a
///   ``ManualClock`` runs a link in virtual time —, hands what the peer sent to the delegate there, in
///   order, and times the delegate's timer with the loop's ``EventLoop/schedule(after:_:)``.
/// - **By ``receive()`` and ``send(_:)``** (a fake device in a test, the conformance probe).
///
/// Buffering is bounded: ``send(_:)`` suspends while the peer has `capacity` or more bytes unread; a loop's
/// write, which cannot wait, ends the pair with ``TransportError/Code/io`` past 1 MiB unread. Closing an end
/// makes its own pending ``receive()`` throw ``TransportError/Code/closed`` at once, and the peer's after it
/// has read what was already sent; sending on either end then throws ``TransportError/Code/closed``.
public final class InMemoryTransport: EventLoopTransport {
    /// The default bound of unread bytes per direction.
    public static let defaultCapacity = 64 * 1024
    /// How many unread bytes a loop's writes may leave before the pair ends (they cannot wait for room).
    public static let loopWriteLimit = 1 << 20

    /// `in-memory` plus the end's label.
    public let name: String
    private let inbound: ChunkQueue
    private let outbound: ChunkQueue
    private let mode = Mutex(Mode.unused)

    private enum Mode {
        case unused
        case receiving
        case eventLoop
    }

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
    ///   ``TransportError/Code/concurrentReceive`` (also when the end runs on an event loop).
    public func receive() async throws(TransportError) -> [UInt8] {
        let onLoop = mode.withLock { mode -> Bool in
            if case .unused = mode { mode = .receiving }
            return mode == .eventLoop
        }
        if onLoop {
            throw TransportError(code: .concurrentReceive, message: "\(name) runs on an event loop")
        }
        return try await inbound.pop()
    }

    /// Closes this end (and so the pipe in both directions).
    public func close() {
        inbound.finish(TransportError(code: .closed, message: "\(name) was closed"), discardBuffered: true)
        outbound.finish(TransportError(code: .closed, message: "the peer of the in-memory pair closed"), discardBuffered: false)
    }

    /// Runs this end on `loop` (a ``SerialQueueEventLoop`` of its own when nil): see
    /// ``EventLoopTransport/startEventLoop(delegate:on:)``. Nil when ``receive()`` was called or a loop
    /// already started.
    public func startEventLoop(delegate: any EventLoopDelegate, on loop: (any EventLoop)?) -> (any EventLoopControl)? {
        let fresh = mode.withLock { mode -> Bool in
            guard case .unused = mode else { return false }
            mode = .eventLoop
            return true
        }
        guard fresh else { return nil }
        let control = InMemoryLoopControl(
            end: self, loop: loop ?? SerialQueueEventLoop(name: "in-memory"), delegate: delegate)
        // Weakly: the queue must not keep the control (and with it this end) alive.
        inbound.consumeByWakes { [weak control] in
            guard let control else { return }
            control.loop.schedule(after: .zero) { control.drain() }
        }
        return control
    }

    fileprivate func takeInbound() -> ChunkQueue.Take { inbound.takeNow() }

    fileprivate func write(_ bytes: [UInt8]) -> TransportError? {
        if inbound.isFinished { return TransportError(code: .closed, message: "\(name) is closed") }
        return outbound.pushWithoutWaiting(bytes, limit: Self.loopWriteLimit)
    }
}

/// An in-memory end on an event loop: delivers what the peer sent, times the delegate, writes to the peer.
private final class InMemoryLoopControl: EventLoopControl, Sendable {
    let loop: any EventLoop
    private let end: InMemoryTransport
    private let delegate: any EventLoopDelegate
    /// The timer set last, why a write ended the pair, and whether the delegate heard the end (nothing
    /// is called after that).
    private let state = Mutex<(timer: LoopTimer?, failure: TransportError?, ended: Bool)>((nil, nil, false))

    init(end: InMemoryTransport, loop: any EventLoop, delegate: any EventLoopDelegate) {
        self.end = end
        self.loop = loop
        self.delegate = delegate
    }

    var taskExecutor: any TaskExecutor { loop }

    var now: Duration { loop.now }

    /// On the loop: hands everything the peer sent to the delegate, then the end if it came.
    func drain() {
        while true {
            switch end.takeInbound() {
            case .bytes(let bytes):
                guard !state.withLock({ $0.ended }) else { return }
                bytes.withUnsafeBytes { delegate.eventLoopReceived($0) }
            case .empty:
                return
            case .ended(let error):
                finish(state.withLock { $0.failure } ?? error)
                return
            }
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty, !state.withLock({ $0.ended }) else { return }
        if let error = end.write(Array(bytes)), error.code == .io {
            // The peer stopped reading: the pair ends, and the delegate hears why from the loop.
            state.withLock { $0.failure = $0.failure ?? error }
            end.close()
        }
    }

    func setTimer(after delay: Duration?) {
        let timer = delay.map { delay in
            loop.schedule(after: delay) { [self] in
                guard !state.withLock({ $0.ended }) else { return }
                delegate.eventLoopTimerFired()
            }
        }
        let previous = state.withLock { state -> LoopTimer? in
            defer { state.timer = state.ended ? nil : timer }
            return state.ended ? timer : state.timer
        }
        previous?.cancel()
    }

    /// On the loop: the delegate hears the end, once.
    private func finish(_ error: TransportError) {
        let first = state.withLock { state -> Bool in
            defer { state.ended = true }
            state.timer?.cancel()
            state.timer = nil
            return !state.ended
        }
        if first { delegate.eventLoopEnded(error) }
    }
}
