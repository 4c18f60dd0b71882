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
            name: name, inbound: inbound, outbound: outbound, loop: loop ?? SerialQueueEventLoop(name: "in-memory"),
            delegate: delegate)
        // The queue keeps the control (and its delegate) until the end is reported (`finish` lets go).
        inbound.consumeByWakes { control.loop.schedule(after: .zero) { control.drain() } }
        return control
    }
}

/// An in-memory end on an event loop: delivers what the peer sent, times the delegate, writes to the peer.
private final class InMemoryLoopControl: EventLoopControl, Sendable {
    private struct State {
        /// The timer on the loop, and when it falls due (loop time).
        var timer: (handle: LoopTimer, at: Duration)?
        /// When the delegate wants its timer (loop time); a later setting keeps an earlier timer, which
        /// then sets itself again for the rest.
        var wanted: Duration?
        /// Why a write ended the pair.
        var failure: TransportError?
        /// The delegate heard the end: nothing is called after that.
        var ended = false
    }

    let loop: any EventLoop
    private let name: String
    private let inbound: ChunkQueue
    private let outbound: ChunkQueue
    private let delegate: any EventLoopDelegate
    private let state = Mutex(State())

    init(name: String, inbound: ChunkQueue, outbound: ChunkQueue, loop: any EventLoop, delegate: any EventLoopDelegate) {
        self.name = name
        self.inbound = inbound
        self.outbound = outbound
        self.loop = loop
        self.delegate = delegate
    }

    var taskExecutor: any TaskExecutor { loop }

    var now: Duration { loop.now }

    /// On the loop: hands everything the peer sent to the delegate, then the end if it came.
    func drain() {
        while true {
            switch inbound.takeNow() {
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
        if inbound.isFinished { return }  // this end is closed: the delegate hears it from the loop
        if let error = outbound.pushWithoutWaiting(Array(bytes), limit: InMemoryTransport.loopWriteLimit), error.code == .io {
            // The peer stopped reading: the pair ends, and the delegate hears why from the loop.
            state.withLock { $0.failure = $0.failure ?? error }
            let closed = TransportError(code: .closed, message: "\(name) was closed")
            inbound.finish(closed, discardBuffered: true)
            outbound.finish(closed, discardBuffered: false)
        }
    }

    func setTimer(after delay: Duration?) {
        let now = loop.now
        let superseded = state.withLock { state -> LoopTimer? in
            guard !state.ended else { return nil }
            state.wanted = delay.map { now + max($0, .zero) }
            guard let wanted = state.wanted else {
                defer { state.timer = nil }
                return state.timer?.handle
            }
            if let timer = state.timer, timer.at <= wanted { return nil }  // it fires first and sets itself again
            let previous = state.timer?.handle
            scheduleLocked(&state, at: wanted, now: now)
            return previous
        }
        superseded?.cancel()
    }

    /// Under the lock: the loop's timer for `at`.
    private func scheduleLocked(_ state: inout State, at: Duration, now: Duration) {
        let handle = loop.schedule(after: at - now) { [self] in timerFired() }
        state.timer = (handle, at)
    }

    /// On the loop: the delegate's timer when it is due, or the timer again for the rest.
    private func timerFired() {
        let now = loop.now
        let due = state.withLock { state -> Bool in
            state.timer = nil
            guard !state.ended, let wanted = state.wanted else { return false }
            if wanted <= now {
                state.wanted = nil
                return true
            }
            scheduleLocked(&state, at: wanted, now: now)
            return false
        }
        if due { delegate.eventLoopTimerFired() }
    }

    /// On the loop: the delegate hears the end, once; the queue lets the control go.
    private func finish(_ error: TransportError) {
        let (first, timer) = state.withLock { state -> (Bool, LoopTimer?) in
            defer {
                state.ended = true
                state.timer = nil
                state.wanted = nil
            }
            return (!state.ended, state.timer?.handle)
        }
        timer?.cancel()
        inbound.stopWakes()
        if first { delegate.eventLoopEnded(error) }
    }
}
