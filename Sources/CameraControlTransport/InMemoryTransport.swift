import Synchronization

/// One end of an in-memory byte pipe: what one end writes, the other reads. A first-class transport for
/// tests and for running the firmware in-process.
///
/// An end always runs on an event loop, like a port:
/// - **On a loop of the caller's** (``startEventLoop(delegate:on:)``, what ``EventLoopTransport`` clients
///   such as the RPC client do): it joins any ``EventLoop`` — a ``SerialQueueEventLoop`` timed by a
///   ``ManualClock`` runs a link in virtual time —, hands what the peer sent to the delegate there, in
///   order, and times the delegate's timer with the loop's ``EventLoop/schedule(after:_:)``.
/// - **Read by ``receive()``** (a fake device in a test, the conformance probe): the first call starts the
///   end on a loop of its own whose delegate buffers for it; once `capacity` bytes wait there, delivery
///   pauses until ``receive()`` takes them.
///
/// ``send(_:)`` and a loop's write hand bytes to the peer without waiting; what the peer has not taken yet
/// is bounded: past 1 MiB (``unreadLimit``; one larger write to an empty pipe is let through) the pair
/// ends with ``TransportError/Code/io``, and what each end was sent before still reaches it. An end read by
/// ``receive()`` holds at most `capacity` plus one take (up to the bound) in its buffer and the bound in
/// the pipe. Closing an end makes its own pending ``receive()`` throw ``TransportError/Code/closed`` at
/// once, and the peer's after it has read what was already sent; sending on either end then throws
/// ``TransportError/Code/closed``.
public final class InMemoryTransport: EventLoopTransport {
    /// The default bound of bytes buffered for ``receive()``.
    public static let defaultCapacity = 64 * 1024
    /// How many bytes written to an end and not yet taken by it may wait before the pair ends with
    /// ``TransportError/Code/io`` (a writer never waits; a write larger than this is let through only into an
    /// empty pipe).
    public static let unreadLimit = 1 << 20

    /// `in-memory` plus the end's label.
    public let name: String
    /// What the peer wrote to this end.
    private let inbox: InMemoryInbox
    /// The peer's inbox.
    private let outbox: InMemoryInbox
    private let capacity: Int
    private let mode = Mutex(Mode.unused)

    private enum Mode {
        case unused
        /// Read by ``receive()``.
        case receiving(ReceiveAdapter)
        case eventLoop
    }

    private init(name: String, inbox: InMemoryInbox, outbox: InMemoryInbox, capacity: Int) {
        self.name = name
        self.inbox = inbox
        self.outbox = outbox
        self.capacity = capacity
    }

    /// Two connected ends, `host` and `device` (the names are only labels: the ends are symmetric);
    /// `capacity` bounds what each end buffers for ``receive()``.
    public static func makePair(capacity: Int = defaultCapacity) -> (host: InMemoryTransport, device: InMemoryTransport) {
        let toDevice = InMemoryInbox()
        let toHost = InMemoryInbox()
        let host = InMemoryTransport(name: "in-memory (host end)", inbox: toHost, outbox: toDevice, capacity: capacity)
        let device = InMemoryTransport(name: "in-memory (device end)", inbox: toDevice, outbox: toHost, capacity: capacity)
        return (host, device)
    }

    deinit {
        close()
    }

    /// Hands `bytes` to the peer, without waiting.
    ///
    /// - Throws: ``TransportError/Code/closed`` when either end is closed; ``TransportError/Code/io`` when
    ///   the peer has more than ``unreadLimit`` bytes not taken (the pair ends).
    public func send(_ bytes: [UInt8]) async throws(TransportError) {
        if inbox.isFinished {
            throw TransportError(code: .closed, message: "\(name) is closed")
        }
        if let error = bytes.withUnsafeBytes({ InMemoryInbox.write($0, to: outbox, from: inbox, name: name) }) {
            throw error
        }
    }

    /// The next bytes the peer sent (see ``ByteTransport/receive()``). The first call starts the end on a
    /// loop of its own.
    ///
    /// - Throws: ``TransportError/Code/closed``, ``TransportError/Code/cancelled``,
    ///   ``TransportError/Code/concurrentReceive`` (also when the end runs on a caller's event loop).
    public func receive() async throws(TransportError) -> [UInt8] {
        let adapter = try mode.withLock { mode throws(TransportError) -> ReceiveAdapter in
            switch mode {
            case .receiving(let adapter): return adapter
            case .eventLoop: throw TransportError(code: .concurrentReceive, message: "\(name) runs on an event loop")
            case .unused:
                let adapter = ReceiveAdapter(capacity: capacity)
                adapter.attach { [inbox] in inbox.setReading($0) }
                _ = start(delegate: adapter, on: SerialQueueEventLoop(name: "in-memory"))
                mode = .receiving(adapter)
                return adapter
            }
        }
        return try await adapter.receive()
    }

    /// Closes this end (and so the pipe in both directions).
    public func close() {
        let closed = TransportError(code: .closed, message: "\(name) was closed")
        inbox.finish(closed, discardBuffered: true)
        outbox.finish(TransportError(code: .closed, message: "the peer of the in-memory pair closed"), discardBuffered: false)
        if case .receiving(let adapter) = mode.withLock({ $0 }) {
            adapter.finish(closed, discardBuffered: true)
        }
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
        return start(delegate: delegate, on: loop ?? SerialQueueEventLoop(name: "in-memory"))
    }

    private func start(delegate: any EventLoopDelegate, on loop: any EventLoop) -> InMemoryLoopControl {
        let control = InMemoryLoopControl(name: name, inbox: inbox, outbox: outbox, loop: loop, delegate: delegate)
        // The inbox keeps the control (and its delegate) until the end is reported (`finish` lets go).
        inbox.deliver { control.loop.schedule(after: .zero) { control.drain() } }
        return control
    }
}

/// What one end of an in-memory pair was sent and has not taken yet: the peer writes into it from any
/// thread; the end's loop, woken once per burst, takes it all (``take()``). Bounded by
/// ``InMemoryTransport/unreadLimit``.
final class InMemoryInbox: Sendable {
    private struct State {
        var pending = PendingBytes()
        var ending: TransportError?
        /// Wakes the end's loop to take what came (set once the end runs on a loop).
        var wake: (@Sendable () -> Void)?
        /// A wake was sent and the loop has not found the inbox empty since.
        var wakeOutstanding = false
        /// False while the end's reader asked to stop taking bytes (its buffer is full).
        var reading = true
    }

    private let state = Mutex(State())

    /// What ``take()`` found.
    enum Take {
        case bytes([UInt8])
        /// Nothing to take now; the next bytes or the ending wake the loop.
        case empty
        case ended(TransportError)
    }

    /// True once the inbox ended (its end, or the pair, was closed).
    var isFinished: Bool { state.withLock { $0.ending != nil } }

    /// Writes `bytes` into `inbox` for the end whose own inbox is `own`. Returns why nothing was written:
    /// the inbox's ending when it ended; ``TransportError/Code/io`` when the bytes would pass
    /// ``InMemoryTransport/unreadLimit`` — then the pair ends (both inboxes).
    static func write(
        _ bytes: UnsafeRawBufferPointer, to inbox: InMemoryInbox, from own: InMemoryInbox, name: String
    ) -> TransportError? {
        guard !bytes.isEmpty, let error = inbox.add(bytes) else { return nil }
        if error.code == .io {
            own.finish(error, discardBuffered: false)  // what this end was sent still reaches it
            inbox.finish(TransportError(code: .closed, message: "\(name) was closed"), discardBuffered: false)
        }
        return error
    }

    private func add(_ bytes: UnsafeRawBufferPointer) -> TransportError? {
        let (error, wake) = state.withLock { state -> (TransportError?, (@Sendable () -> Void)?) in
            if let ending = state.ending { return (ending, nil) }
            guard state.pending.isEmpty || state.pending.count + bytes.count <= InMemoryTransport.unreadLimit else {
                return (
                    TransportError(code: .io, message: "the reader does not read: \(state.pending.count) bytes wait to be read"),
                    nil
                )
            }
            state.pending.append([UInt8](bytes))
            return (nil, wakeLocked(&state))
        }
        wake?()
        return error
    }

    /// Makes the end's loop the taker: `wake` is called (outside the lock) when bytes or the ending come and
    /// no earlier wake is outstanding; the loop then calls ``take()`` until it finds nothing.
    func deliver(by wake: @escaping @Sendable () -> Void) {
        let wakeNow = state.withLock { state -> (@Sendable () -> Void)? in
            state.wake = wake
            return wakeLocked(&state)
        }
        wakeNow?()
    }

    /// Everything written, unless the reader stopped reading; the ending once nothing is left.
    func take() -> Take {
        state.withLock { state in
            if state.reading, let bytes = state.pending.takeAll() {
                return .bytes(bytes)
            }
            state.wakeOutstanding = false
            if state.pending.isEmpty, let ending = state.ending { return .ended(ending) }
            return .empty
        }
    }

    /// Stops (`false`) or restarts taking bytes (the ending still comes once nothing is left).
    func setReading(_ reading: Bool) {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            state.reading = reading
            return reading ? wakeLocked(&state) : nil
        }
        wake?()
    }

    /// Ends the inbox: with `discardBuffered` at once, otherwise after what was written. The first ending
    /// counts; a later discard still lets the loop hear it (a paused reader's bytes no longer hold it back).
    func finish(_ error: TransportError, discardBuffered: Bool) {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            if discardBuffered {
                state.pending.removeAll()
            }
            if state.ending == nil {
                state.ending = error
            } else if !discardBuffered {
                return nil
            }
            return wakeLocked(&state)
        }
        wake?()
    }

    /// Forgets the loop's wake (the end reported its ending).
    func stopDelivering() {
        state.withLock { $0.wake = nil }
    }

    /// The loop's wake, when one is due: something to take (or the ending), none outstanding.
    private func wakeLocked(_ state: inout State) -> (@Sendable () -> Void)? {
        guard let wake = state.wake, !state.wakeOutstanding,
            (state.reading && !state.pending.isEmpty) || (state.pending.isEmpty && state.ending != nil)
        else { return nil }
        state.wakeOutstanding = true
        return wake
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
        /// The delegate heard the end: nothing is called after that.
        var ended = false
    }

    let loop: any EventLoop
    private let name: String
    private let inbox: InMemoryInbox
    private let outbox: InMemoryInbox
    private let delegate: any EventLoopDelegate
    private let state = Mutex(State())

    init(name: String, inbox: InMemoryInbox, outbox: InMemoryInbox, loop: any EventLoop, delegate: any EventLoopDelegate) {
        self.name = name
        self.inbox = inbox
        self.outbox = outbox
        self.loop = loop
        self.delegate = delegate
    }

    var taskExecutor: any TaskExecutor { loop }

    var now: Duration { loop.now }

    /// On the loop: hands everything the peer sent to the delegate, then the end if it came.
    func drain() {
        while true {
            switch inbox.take() {
            case .bytes(let bytes):
                guard !state.withLock({ $0.ended }) else { return }
                bytes.withUnsafeBytes { delegate.eventLoopReceived($0) }
            case .empty:
                return
            case .ended(let error):
                finish(error)
                return
            }
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty, !state.withLock({ $0.ended }) else { return }
        if inbox.isFinished { return }  // this end is closed: the delegate hears it from the loop
        // The peer not reading ends the pair; the delegate hears why (.io) from the loop.
        _ = InMemoryInbox.write(bytes, to: outbox, from: inbox, name: name)
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
        inbox.stopDelivering()
        if first { delegate.eventLoopEnded(error) }
    }
}
