import CameraControlTransport
import CameraControlWire
import Synchronization

/// The async RPC client: a ``ConnectionCore`` driven by an ``EventLoopTransport`` on an ``EventLoop``.
///
/// The core runs under a lock, in place, wherever its input comes from; there is no actor and no hop
/// between the bytes and the code that handles them. The transport's loop reads, runs the core on the
/// bytes at once and sleeps (in `poll()` for a port) until the next byte or the core's
/// ``ConnectionCore/nextPollTime``, set as the loop's timer. A call's `REQUEST` is written from the
/// calling task's thread; a stream message reaches an iterating task with one hop (the loop resumes it),
/// or a handler on the client's loop (``serverStream(_:_:as:deadline:deliveringOn:to:)``) with none: it is
/// called during the read. An idle session wakes only for its heartbeats, each way.
///
/// Time is the loop's (``EventLoopControl/now``): the system's monotonic clock on a port, a
/// ``ManualClock`` for an ``InMemoryTransport`` on a `SerialQueueEventLoop(name:clock:)` — nothing
/// time-driven happens there until the test advances the clock. Tests run the same driver as a port.
///
/// Several calls may be in flight at once from any number of tasks; responses are matched by call id.
///
/// Errors, for every call: ``StatusCode/unavailable`` when the link died (no packet for 4 heartbeat
/// intervals after the handshake), the transport closed or could not be started, or the client was
/// closed; ``StatusCode/deadlineExceeded`` when the deadline passed; ``StatusCode/cancelled`` when the
/// calling task was cancelled; ``StatusCode/internal`` when the response does not decode; otherwise the
/// device's status (`UNIMPLEMENTED`, `INVALID_ARGUMENT`, `FAILED_PRECONDITION`, …). See ``RPCError``.
public final class RPCClient: Sendable {
    /// Settings of a client.
    public struct Configuration: Sendable {
        /// The connection's settings (frame size, heartbeat, default deadline).
        public var connection: ConnectionConfiguration
        /// How many undelivered messages one stream may buffer before it fails with `RESOURCE_EXHAUSTED`.
        public var streamBufferLimit: Int

        /// Defaults: v1's connection settings, 4096 buffered stream messages.
        public init(
            connection: ConnectionConfiguration = ConnectionConfiguration(),
            streamBufferLimit: Int = 4096
        ) {
            self.connection = connection
            self.streamBufferLimit = streamBufferLimit
        }
    }

    /// A change of the link, for the device layer (reconnects, status display).
    public enum LinkEvent: Hashable, Sendable {
        /// A session was established (a handshake succeeded).
        case sessionEstablished
        /// Nothing was received for the dead timeout; every call failed with `UNAVAILABLE`.
        case dead
        /// The transport or the client closed; the client cannot be used any more.
        case closed
        /// The device sent an `ERROR` on call id 0.
        case deviceError(RPCError)
    }

    /// Link changes, as they happen (the newest 64 are kept when nobody listens). Finishes at close.
    public let linkEvents: AsyncStream<LinkEvent>

    /// Everything that changes, under one lock.
    private struct State: Sendable {
        var core: ConnectionCore
        /// The transport's loop, once it started (until then the core keeps its output).
        var control: (any EventLoopControl)?
        /// The loop's time when the client started: the origin of the core's timeline.
        var origin = Duration.zero

        /// The loop's clock is the system's (``EventLoopControl/readsSystemClock``): read here, with no call
        /// through the control.
        var readsSystemClock = false

        /// The core's time: the loop's, since the client started.
        var now: Duration {
            if readsSystemClock { return LoopTime.now - origin }
            return control.map { $0.now - origin } ?? .zero
        }
        var unaryWaiters: [CallID: CheckedContinuation<Result<[UInt8], RPCError>, Never>] = [:]
        var streams: [CallID: any StreamConsumer] = [:]
        var closed = false
        /// The core's events are swapped into this buffer to be dispatched (no allocation per flush).
        var events: [ConnectionEvent] = []
        /// The time the loop's timer is set for (nil: none), on the client's timeline.
        var armedWake: Duration?
        /// What the core's events ask of the waiting calls, streams and link listeners, in the core's order:
        /// carried out by ``drain()`` after the lock is released (nothing is resumed under it).
        var deferred: [Delivery] = []
        /// The storage ``drain()`` hands back once it carried out a batch: the next batch is queued in it
        /// (no allocation per read).
        var spareDeliveries: [Delivery] = []
        /// A thread is carrying out ``deferred`` (it takes what others add meanwhile).
        var draining = false
        /// The transport has ended: it no longer touches the device (see ``shutdown()``).
        var transportDone = false
        /// Tasks in ``shutdown()`` waiting for that.
        var doneWaiters: [CheckedContinuation<Void, Never>] = []
        /// Tasks in ``shutdown()`` keeping the link open for answers still on their way, until
        /// ``lingerUntil`` at the latest (``ConnectionCore/answersAwaited(now:)``).
        var lingerWaiters: [CheckedContinuation<Void, Never>] = []
        var lingerUntil: Duration?
    }

    /// One thing an event of the core asks for, done outside the lock.
    private enum Delivery: Sendable {
        case resume(CheckedContinuation<Result<[UInt8], RPCError>, Never>, Result<[UInt8], RPCError>)
        case message(CallID, any StreamConsumer, [UInt8])
        case finish(any StreamConsumer, RPCError?)
        case link(LinkEvent)
        case linkFinished
    }

    private let state: Mutex<State>
    private let transport: any EventLoopTransport
    private let configuration: Configuration
    private let linkContinuation: AsyncStream<LinkEvent>.Continuation

    /// A client over `transport`, driven by `eventLoop` (shared with other links, and with the actors that
    /// use it as their executor, so what a read resumes runs on the same thread) or by a loop of the
    /// transport's own; starts reading, writing and polling at once.
    ///
    /// A transport that cannot start on a loop (it was read with `receive()` already, or closed) gives a
    /// closed client: every call fails with ``StatusCode/unavailable``.
    public init(
        transport: any EventLoopTransport, configuration: Configuration = Configuration(),
        eventLoop: (any EventLoop)? = nil
    ) {
        self.transport = transport
        self.configuration = configuration
        self.state = Mutex(State(core: ConnectionCore(configuration: configuration.connection)))
        let (linkEvents, linkContinuation) = AsyncStream<LinkEvent>.makeStream(bufferingPolicy: .bufferingNewest(64))
        self.linkEvents = linkEvents
        self.linkContinuation = linkContinuation

        let delegate = LoopDelegate(client: self)
        let started = state.withLock { state in
            // Under the lock: the loop's first delivery waits until the output is in place.
            guard let control = transport.startEventLoop(delegate: delegate, on: eventLoop) else { return false }
            state.origin = control.now
            state.control = control
            state.readsSystemClock = control.readsSystemClock
            return true
        }
        if !started {
            shutDown(reason: "\(transport.name) cannot be driven by an event loop (it was read already, or closed)")
            markTransportDone()
        }
    }

    deinit {
        shutDown(reason: "the client was released")
    }

    // MARK: Calls

    /// Calls a unary method and decodes its response.
    ///
    /// - Parameters:
    ///   - method: a unary method, e.g. ``MethodID/devicePing``.
    ///   - request: the request message.
    ///   - responseType: the response message type (usually inferred).
    ///   - deadline: how long the call may take; nil uses ``ConnectionConfiguration/defaultUnaryDeadline``.
    ///   - waitOnceAcknowledged: once the device acknowledges the request, the call waits at least this
    ///     long after that `ACK` for its response, whatever `deadline` said (the handshake on a slow line).
    /// - Throws: ``RPCError``: the device's status; ``StatusCode/deadlineExceeded``;
    ///   ``StatusCode/cancelled`` when the task is cancelled (a `CANCEL` is sent); ``StatusCode/unavailable``
    ///   when the link is lost, or when a handshake call awaits its answer (no call starts meanwhile, §9);
    ///   ``StatusCode/internal`` when the response does not decode;
    ///   ``StatusCode/invalidArgument`` for a streaming method; ``StatusCode/resourceExhausted`` when the
    ///   request does not fit a frame.
    public func unary<Request: WireMessage, Response: WireMessage>(
        _ method: MethodID, _ request: Request, as responseType: Response.Type = Response.self,
        deadline: Duration? = nil, waitOnceAcknowledged: Duration? = nil
    ) async throws(RPCError) -> Response {
        let payload = try await unaryBytes(
            method, request.serializedBytes(), deadline: deadline, waitOnceAcknowledged: waitOnceAcknowledged)
        do {
            return try Response(serializedBytes: payload)
        } catch {
            throw RPCError(
                code: .internal,
                message: "response does not decode as \(Response.protoMessageName): \(error.message)",
                method: method, cause: error)
        }
    }

    /// Calls a unary method with an encoded request and returns the encoded response.
    ///
    /// - Throws: as ``unary(_:_:as:deadline:waitOnceAcknowledged:)``, except ``StatusCode/internal`` for decoding.
    public func unaryBytes(
        _ method: MethodID, _ request: [UInt8], deadline: Duration? = nil, waitOnceAcknowledged: Duration? = nil
    ) async throws(RPCError) -> [UInt8] {
        guard !method.isServerStreaming else {
            throw RPCError(code: .invalidArgument, message: "a server-streaming method called as unary", method: method)
        }
        guard !Task.isCancelled else {
            throw RPCError(code: .cancelled, message: "the calling task was cancelled", method: method)
        }
        let ticket = CallTicket()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<[UInt8], RPCError>, Never>) in
                let started = state.withLock { state -> Result<CallID, RPCError> in
                    let now = state.now
                    do throws(RPCError) {
                        let call = try state.core.startCall(
                            method: method, request: request, deadline: deadline.map { now + $0 },
                            waitOnceAcknowledged: waitOnceAcknowledged, now: now)
                        state.unaryWaiters[call] = continuation
                        flush(&state)
                        return .success(call)
                    } catch {
                        return .failure(error)
                    }
                }
                drain()
                switch started {
                case .success(let call):
                    if ticket.started(call) { cancel(call) }
                case .failure(let error):
                    continuation.resume(returning: .failure(error))
                }
            }
        } onCancel: {
            if let call = ticket.cancelled() { cancel(call) }
        }
        return try result.get()
    }

    /// Starts a server-streaming call and returns its messages.
    ///
    /// - Parameters:
    ///   - method: a server-streaming method, e.g. ``MethodID/inputStreamInputEvents``.
    ///   - request: the request message.
    ///   - messageType: the stream's message type (usually inferred).
    ///   - deadline: how long the whole stream may run; nil for no deadline.
    /// - Throws: ``RPCError`` with ``StatusCode/unavailable`` when the client or link is closed or a handshake
    ///   call awaits its answer, ``StatusCode/invalidArgument`` for a unary method, ``StatusCode/resourceExhausted`` when the request
    ///   does not fit or too many calls are in flight. Errors during the stream come from its iterator.
    public func serverStream<Request: WireMessage, Message: WireMessage>(
        _ method: MethodID, _ request: Request, as messageType: Message.Type = Message.self,
        deadline: Duration? = nil
    ) throws(RPCError) -> RPCStream<Message> {
        let channel = StreamChannel(limit: configuration.streamBufferLimit)
        let call = try startStream(method, request.serializedBytes(), deadline: deadline, consumer: channel)
        return RPCStream(handle: RPCStreamHandle(callID: call, method: method, channel: channel, client: self))
    }

    /// Starts a server-streaming call whose messages go to `handler`, on `loop`, with no task in between.
    ///
    /// When the client is driven by `loop` (it was made with that loop, and its transport runs there),
    /// each message reaches the handler synchronously, during
    /// the read that brought it: the port's bytes, the core, the decode and the handler, on one thread,
    /// one call. Otherwise each delivery is scheduled on `loop`. Either way the handler runs on `loop`
    /// (an actor whose executor it is may `assumeIsolated`), one call at a time, in order, never under
    /// the client's lock; the last call is ``StreamEvent/ended(_:)``. The handler must return promptly:
    /// while it runs the loop reads nothing. A handler more than
    /// ``Configuration/streamBufferLimit`` messages behind ends the call with
    /// ``StatusCode/resourceExhausted``; a message that does not decode ends it with ``StatusCode/internal``.
    ///
    /// - Parameters:
    ///   - method: a server-streaming method, e.g. ``MethodID/inputStreamInputEvents``.
    ///   - request: the request message.
    ///   - messageType: the stream's message type (usually inferred).
    ///   - deadline: how long the whole stream may run; nil for no deadline.
    ///   - loop: where the handler runs.
    ///   - handler: takes each message, then the ending.
    /// - Returns: the call, to cancel it.
    /// - Throws: as ``serverStream(_:_:as:deadline:)``.
    @inlinable
    public func serverStream<Request: WireMessage, Message: WireMessage>(
        _ method: MethodID, _ request: Request, as messageType: Message.Type = Message.self,
        deadline: Duration? = nil, deliveringOn loop: any EventLoop,
        to handler: @escaping @Sendable (StreamEvent<Message>) -> Void
    ) throws(RPCError) -> StreamSubscription {
        // Inlinable, so the decode and the handler's call are compiled for `Message` where it is known: a
        // message's way from the read to its handler runs no generic code.
        try serverStreamPayloads(method, request.serializedBytes(), deadline: deadline, deliveringOn: loop) { item in
            switch item {
            case .message(let payload):
                let message: Message
                do throws(WireError) {
                    message = try Message(serializedBytes: payload)
                } catch {
                    handler(
                        .ended(
                            RPCError(
                                code: .internal,
                                message: "stream message does not decode as \(Message.protoMessageName): \(error.message)",
                                method: method, cause: error)))
                    return false
                }
                handler(.message(message))
            case .end(let error):
                handler(.ended(error))
            }
            return true
        }
    }

    /// ``serverStream(_:_:as:deadline:deliveringOn:to:)`` before the decode: `deliver` takes each payload
    /// and then the ending, on `loop`; it returns false for a payload that does not decode (it gets nothing
    /// more, and the call is cancelled).
    @usableFromInline
    func serverStreamPayloads(
        _ method: MethodID, _ request: [UInt8], deadline: Duration?, deliveringOn loop: any EventLoop,
        to deliver: @escaping @Sendable (LoopStreamDelivery.Item) -> Bool
    ) throws(RPCError) -> StreamSubscription {
        let delivery = LoopStreamDelivery(loop: loop, limit: configuration.streamBufferLimit, client: self, handler: deliver)
        let call = try startStream(method, request, deadline: deadline, consumer: delivery) { call in delivery.started(call) }
        return StreamSubscription(callID: call, method: method, client: self, delivery: delivery)
    }

    /// Starts a stream's call with `consumer` taking its messages; `started` learns the call's id before
    /// any message can be delivered.
    private func startStream(
        _ method: MethodID, _ request: [UInt8], deadline: Duration?, consumer: any StreamConsumer,
        started: (CallID) -> Void = { _ in }  // called under the client's lock: must not call back into it
    ) throws(RPCError) -> CallID {
        guard method.isServerStreaming else {
            throw RPCError(code: .invalidArgument, message: "a unary method called as a stream", method: method)
        }
        let call = try state.withLock { state throws(RPCError) -> CallID in
            let now = state.now
            let call = try state.core.startCall(method: method, request: request, deadline: deadline.map { now + $0 }, now: now)
            state.streams[call] = consumer
            started(call)  // before the request goes out: a reply can come at once, on the loop's thread
            flush(&state)
            return call
        }
        drain()
        return call
    }

    /// Cancels a call in flight (sends `CANCEL`; the call fails with ``StatusCode/cancelled``). Does nothing
    /// for a call that already ended.
    public func cancel(_ call: CallID) {
        state.withLock { state in
            guard !state.closed else { return }
            state.core.cancelCall(call, now: state.now)
            flush(&state)
        }
        drain()
    }

    // MARK: Session and state

    /// Applies the device's announced `Capabilities` (heartbeat interval, max frame size) and starts the
    /// liveness machinery if the handshake did not already (see
    /// ``ConnectionCore/markSessionEstablished(heartbeatInterval:maxFrameBytes:streamsConfirmed:now:)``).
    public func markSessionEstablished(
        heartbeatInterval: Duration? = nil, maxFrameBytes: Int? = nil, streamsConfirmed: Bool? = nil
    ) {
        state.withLock { state in
            guard !state.closed else { return }
            state.core.markSessionEstablished(
                heartbeatInterval: heartbeatInterval, maxFrameBytes: maxFrameBytes, streamsConfirmed: streamsConfirmed,
                now: state.now)
            flush(&state)
        }
        drain()
    }

    /// The client's time: the loop's (``EventLoopControl/now``) since the client started.
    public var now: Duration { state.withLock { $0.now } }

    /// The client's loop, as a task executor (nil when the transport could not start on one).
    ///
    /// A stream consumed in a task that prefers it runs on that thread, right after the read that
    /// delivered its message: no thread hop at all between the device's bytes and the loop's body.
    ///
    /// ```swift
    /// let events = try client.serverStream(.inputStreamInputEvents, StreamInputEventsRequest(), as: InputEvent.self)
    /// try await withTaskExecutorPreference(client.taskExecutor) {
    ///     for try await event in events { handle(event) }  // keep it short: the link reads nothing meanwhile
    /// }
    /// ```
    public var taskExecutor: (any TaskExecutor)? {
        state.withLock { state in
            state.control?.taskExecutor
        }
    }

    /// True while a session is established (after a handshake, until the link dies or closes).
    public var isSessionEstablished: Bool { state.withLock { $0.core.isSessionEstablished } }

    /// True after ``close()`` or the end of the transport.
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// The connection's diagnostics.
    public var counters: ConnectionCounters { state.withLock { $0.core.counters } }

    /// The connection's settings in force.
    public var connectionConfiguration: ConnectionConfiguration { state.withLock { $0.core.configuration } }

    /// Fails every call in flight with ``StatusCode/unavailable``, stops reading, writing and timing, and
    /// closes the transport. Idempotent.
    public func close() {
        shutDown(reason: "the client was closed")
    }

    /// Closes (as ``close()``) and returns once the transport has ended: what was written before, the
    /// `ACK` of the last reply included, has been handed to the device and had its time on the line, and
    /// the port is released. A command that exits after this leaves the device nothing unacknowledged: first
    /// no call starts any more, and the link stays open while an answer may still be on its way (a unary call
    /// in flight, or one just cancelled: ``ConnectionCore/answersAwaited(now:)``, two retransmission timeouts
    /// and a largest frame's line time, at most 2 s), so that its `ACK` goes out; with a stream open or just
    /// cancelled, until the answer of the barrier ``ConnectionCore/beginClosing(now:)`` sends (its streams'
    /// `CANCEL`s and a `Ping`), within the same wait: the messages sent before it are acknowledged. That wait runs on the loop's
    /// clock: on a ``ManualClock`` that nothing advances it ends only when the answers come (or ``close()``).
    public func shutdown() async {
        await waitForAnswersOnTheWay()
        close()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.transportDone { return true }
                state.doneWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Returns once no answer is awaited any more (``ConnectionCore/answersAwaited(now:)``) or the time it
    /// gave passed, the link reading and acknowledging meanwhile; at once when none is awaited.
    private func waitForAnswersOnTheWay() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting = state.withLock { state -> Bool in
                guard !state.closed else { return false }
                state.core.beginClosing(now: state.now)
                // The barrier the core may have queued (its streams' CANCELs, a Ping) goes out now.
                if let control = state.control { state.core.drainOutbound { control.write($0) } }
                guard let until = state.core.answersAwaited(now: state.now) else { return false }
                state.lingerUntil = max(state.lingerUntil ?? until, until)
                state.lingerWaiters.append(continuation)
                state.armedWake = nil  // arm again: the linger's end may come before the core's next time
                arm(&state)
                return true
            }
            if !waiting { continuation.resume() }
        }
    }

    /// The tasks waiting in ``waitForAnswersOnTheWay()`` whose wait is over (all of them once the link closed).
    private static func finishedLingerers(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        guard !state.lingerWaiters.isEmpty, let until = state.lingerUntil else { return [] }
        let now = state.now
        guard state.closed || now >= until || state.core.answersAwaited(now: now) == nil else { return [] }
        defer {
            state.lingerWaiters.removeAll()
            state.lingerUntil = nil
        }
        return state.lingerWaiters
    }

    // MARK: Driving

    /// Bytes from the device (on the loop).
    fileprivate func received(_ bytes: UnsafeRawBufferPointer) {
        // What the bytes brought is delivered first (a stream handler called, a call resumed), then the
        // core's output is handed to the transport: a message reaches its consumer before its `ACK` leaves,
        // on every transport (a port's loop defers its own thread's writes anyway; an in-memory peer does not).
        // The deliveries are taken in the same lock round as the bytes.
        var batch: [Delivery] = []
        let delivering = state.withLock { state -> Bool in
            if !state.closed {
                state.core.receive(bytes, now: state.now)
                dispatchEvents(&state)
            }
            return Self.startDraining(&state, into: &batch)
        }
        if delivering { carryOut(&batch) }
        let lingerers = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.closed else { return [] }
            flush(&state)
            return Self.finishedLingerers(&state)
        }
        drain()
        for lingerer in lingerers { lingerer.resume() }
    }

    /// The loop's timer fired.
    fileprivate func timerFired() {
        let lingerers = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.closed else { return [] }
            state.armedWake = nil
            state.core.poll(now: state.now)
            flush(&state)
            return Self.finishedLingerers(&state)
        }
        drain()
        for lingerer in lingerers { lingerer.resume() }
    }

    fileprivate func transportEnded(_ error: any Error) {
        shutDown(reason: "the transport ended: \(error)")
        markTransportDone()
    }

    /// The transport no longer touches the device: ``shutdown()`` returns.
    private func markTransportDone() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.transportDone = true
            defer { state.doneWaiters.removeAll() }
            return state.doneWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func shutDown(reason: String) {
        var lingerers: [CheckedContinuation<Void, Never>] = []
        defer { for lingerer in lingerers { lingerer.resume() } }
        let wasOpen = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            defer { lingerers = Self.finishedLingerers(&state) }
            // What is queued goes out first: the `ACK` of a message still being delivered (``received(_:)``).
            if let control = state.control { state.core.drainOutbound { control.write($0) } }
            state.core.closeLink(now: state.now, reason: reason)
            flush(&state)
            state.closed = true
            state.control?.setTimer(after: nil)
            state.deferred.append(.linkFinished)
            return true
        }
        drain()
        guard wasOpen else { return }
        // The loop reports the transport's end to the delegate, after the link's last bytes went out.
        transport.close()
    }

    /// Queues the core's events for the waiting calls and streams (``drain()`` delivers them), then writes
    /// its output, again while that produced more, then sets the timer for the core's next poll time.
    /// Runs under the lock.
    private func flush(_ state: inout State) {
        repeat {
            dispatchEvents(&state)
            if let control = state.control {
                state.core.drainOutbound { control.write($0) }
            }
        } while state.core.hasEvents
        arm(&state)
    }

    /// Queues the core's events for the waiting calls and streams, in order (``drain()`` delivers them).
    /// Runs under the lock.
    private func dispatchEvents(_ state: inout State) {
        guard state.core.hasEvents else { return }
        var events = state.events
        state.events = []
        state.core.takeEvents(into: &events)
        for event in events {
            dispatch(event, &state)
        }
        events.removeAll(keepingCapacity: true)
        state.events = events
    }

    /// Sets the timer for the core's next poll time (nothing scheduled: no timer).
    private func arm(_ state: inout State) {
        guard !state.closed else { return }
        var next = state.core.nextPollTime
        if let until = state.lingerUntil, !state.lingerWaiters.isEmpty { next = min(next ?? until, until) }
        guard let control = state.control, next != state.armedWake else { return }
        state.armedWake = next
        // The time read first: a closure that read `state` would copy the whole state (the core with it).
        guard let next else { return control.setTimer(after: nil) }
        control.setTimer(after: next - state.now)
    }

    /// Turns one event of the core into what it asks for, queued in order (run by ``drain()``).
    private func dispatch(_ event: ConnectionEvent, _ state: inout State) {
        switch event {
        case .response(let call, let payload):
            if let waiter = state.unaryWaiters.removeValue(forKey: call) {
                state.deferred.append(.resume(waiter, .success(payload)))
            }
        case .streamMessage(let call, let payload):
            guard let channel = state.streams[call] else { return }
            state.deferred.append(.message(call, channel, payload))
        case .streamEnded(let call):
            if let channel = state.streams.removeValue(forKey: call) { state.deferred.append(.finish(channel, nil)) }
        case .failed(let call, let error):
            if let waiter = state.unaryWaiters.removeValue(forKey: call) {
                state.deferred.append(.resume(waiter, .failure(error)))
            } else if let channel = state.streams.removeValue(forKey: call) {
                state.deferred.append(.finish(channel, error))
            }
        case .sessionEstablished:
            state.deferred.append(.link(.sessionEstablished))
        case .linkDead:
            state.deferred.append(.link(.dead))
        case .linkClosed:
            state.deferred.append(.link(.closed))
        case .linkError(let error):
            state.deferred.append(.link(.deviceError(error)))
        }
    }

    /// Carries out the queued deliveries, in order, outside the lock: resumes calls, hands stream
    /// messages to their channels, reports link events. One thread at a time does it and takes what the
    /// others queue meanwhile, so a close from another thread never overtakes a message being delivered;
    /// a thread that finds another at it returns at once (a cancellation handler never waits here).
    private func drain() {
        var batch: [Delivery] = []
        guard state.withLock({ Self.startDraining(&$0, into: &batch) }) else { return }
        carryOut(&batch)
    }

    /// Takes the queued deliveries into `batch` and marks this thread as the one carrying them out; false
    /// when there are none, or another thread is at it. Runs under the lock.
    private static func startDraining(_ state: inout State, into batch: inout [Delivery]) -> Bool {
        guard !state.draining, !state.deferred.isEmpty else { return false }
        state.draining = true
        swap(&batch, &state.spareDeliveries)
        swap(&batch, &state.deferred)
        return true
    }

    /// Carries out `batch` (taken by ``startDraining(_:into:)``), then what was queued meanwhile, until
    /// nothing is left; then this thread is no longer draining.
    private func carryOut(_ batch: inout [Delivery]) {
        while true {
            for delivery in batch { deliver(delivery) }
            batch.removeAll(keepingCapacity: true)
            let more = state.withLock { state -> Bool in
                guard !state.deferred.isEmpty else {
                    swap(&batch, &state.spareDeliveries)  // the batch's storage queues the next one
                    state.draining = false
                    return false
                }
                swap(&batch, &state.deferred)
                return true
            }
            guard more else { return }
        }
    }

    private func deliver(_ delivery: Delivery) {
        switch delivery {
        case .resume(let waiter, let result):
            waiter.resume(returning: result)
        case .message(let call, let channel, let payload):
            guard !channel.yield(payload) else { return }
            let method = state.withLock { state -> MethodID? in
                let method = state.core.method(of: call)
                if state.streams[call] === channel { state.streams[call] = nil }
                state.core.cancelCall(call, now: state.now)
                flush(&state)
                return method
            }
            channel.finish(
                RPCError(
                    code: .resourceExhausted,
                    message: "the consumer fell \(configuration.streamBufferLimit) messages behind; call cancelled",
                    method: method))
        case .finish(let channel, let error):
            channel.finish(error)
        case .link(let event):
            linkContinuation.yield(event)
        case .linkFinished:
            linkContinuation.finish()
        }
    }
}

/// Hands the event loop's calls to the client without keeping it alive (a client nobody holds closes).
private final class LoopDelegate: EventLoopDelegate {
    weak let client: RPCClient?

    init(client: RPCClient) {
        self.client = client
    }

    func eventLoopReceived(_ bytes: UnsafeRawBufferPointer) {
        client?.received(bytes)
    }

    func eventLoopTimerFired() {
        client?.timerFired()
    }

    func eventLoopEnded(_ error: TransportError) {
        client?.transportEnded(error)
    }
}

/// A unary call's id, met with its task's cancellation: whichever comes second cancels the call.
private final class CallTicket: Sendable {
    private let slot = Mutex<(call: CallID?, cancelled: Bool)>((nil, false))

    /// The call started; true when the task was cancelled already (cancel the call now).
    func started(_ call: CallID) -> Bool {
        slot.withLock { slot in
            slot.call = call
            return slot.cancelled
        }
    }

    /// The task was cancelled; the call to cancel, if it started.
    func cancelled() -> CallID? {
        slot.withLock { slot in
            slot.cancelled = true
            return slot.call
        }
    }
}
