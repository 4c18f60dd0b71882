import CameraControlTransport
import CameraControlWire
import Synchronization

/// The async RPC client: a ``ConnectionCore`` driven by a ``ByteTransport`` and a `Clock`.
///
/// The core runs under a lock, in place, wherever its input comes from; there is no actor and no hop
/// between the bytes and the code that handles them. How the client is driven (``driver``):
///
/// - **``Driver/eventLoop``**, for an ``EventLoopTransport`` (a serial port, a pty) timed by a real clock
///   (`ContinuousClock` or `SuspendingClock`): the transport's one I/O thread reads, runs the core on the
///   bytes at once and sleeps in `poll()` until the next byte or the core's
///   ``ConnectionCore/nextPollTime``. A call's `REQUEST` is written from the calling task's thread; a
///   stream message reaches an iterating task with one hop (the I/O thread resumes it), or a handler on
///   the client's loop (``serverStream(_:_:as:deadline:deliveringOn:to:)``) with none: it is called
///   during the read. An idle session wakes only for its heartbeats, each way.
/// - **``Driver/tasks``**, for any other transport or clock (an in-memory pair, a ``ManualClock``): one
///   task reads the transport into the core, one writes the core's output in order, and a timer task
///   sleeps until ``ConnectionCore/nextPollTime`` (re-armed earlier when new input or a new call brings
///   that time forward). With a ``ManualClock`` nothing time-driven happens until the test advances it.
///
/// Several calls may be in flight at once from any number of tasks; responses are matched by call id.
///
/// Errors, for every call: ``StatusCode/unavailable`` when the link died (no packet for 4 heartbeat
/// intervals after the handshake), the transport closed, or the client was closed;
/// ``StatusCode/deadlineExceeded`` when the deadline passed; ``StatusCode/cancelled`` when the calling task
/// was cancelled; ``StatusCode/internal`` when the response does not decode; otherwise the device's
/// status (`UNIMPLEMENTED`, `INVALID_ARGUMENT`, `FAILED_PRECONDITION`, …). See ``RPCError``.
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

    /// How a client is driven (see ``RPCClient``).
    public enum Driver: Hashable, Sendable {
        /// The transport's own I/O thread runs the core in place and times it with `poll()`.
        case eventLoop
        /// Tasks read, write and sleep until the core's next poll time.
        case tasks
    }

    /// Link changes, as they happen (the newest 64 are kept when nobody listens). Finishes at close.
    public let linkEvents: AsyncStream<LinkEvent>

    /// Where the core's output goes.
    private enum Output: Sendable {
        /// Nowhere yet (the client is starting): the core keeps it.
        case none
        /// Written from the producing thread through the transport's event loop.
        case eventLoop(any EventLoopControl)
        /// Handed to the writer task.
        case tasks(AsyncStream<[UInt8]>.Continuation)
    }

    /// Everything that changes, under one lock.
    private struct State: Sendable {
        var core: ConnectionCore
        var output = Output.none
        var unaryWaiters: [CallID: CheckedContinuation<Result<[UInt8], RPCError>, Never>] = [:]
        var streams: [CallID: any StreamConsumer] = [:]
        var closed = false
        /// The core's events are swapped into this buffer to be dispatched (no allocation per flush).
        var events: [ConnectionEvent] = []
        /// Task-driven: the reader and writer tasks.
        var tasks: [Task<Void, Never>] = []
        /// Task-driven: the task sleeping until ``ConnectionCore/nextPollTime``, and when it wakes.
        var timer: (task: Task<Void, Never>, wake: Duration)?
        /// Event-loop-driven: the time the loop's timer is set for (nil: none).
        var armedWake: Duration?
        /// What the core's events ask of the waiting calls, streams and link listeners, in the core's order:
        /// carried out by ``drain()`` after the lock is released (nothing is resumed under it).
        var deferred: [Delivery] = []
        /// A thread is carrying out ``deferred`` (it takes what others add meanwhile).
        var draining = false
        /// The transport has ended: it no longer touches the device (see ``shutdown()``).
        var transportDone = false
        /// Tasks in ``shutdown()`` waiting for that.
        var doneWaiters: [CheckedContinuation<Void, Never>] = []
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
    private let transport: any ByteTransport
    private let timeline: Timeline
    private let configuration: Configuration
    private let linkContinuation: AsyncStream<LinkEvent>.Continuation

    /// A client over `transport`, timed by `clock`; starts reading, writing and polling at once.
    ///
    /// An ``EventLoopTransport`` with a real clock (`ContinuousClock`, `SuspendingClock`) is driven by an
    /// event loop: `eventLoop` (shared with other links, and with the actors that use it as their executor,
    /// so what a read resumes runs on the same thread), or one of the transport's own; anything else by
    /// tasks (see ``driver``).
    public init<C: Clock>(
        transport: any ByteTransport, configuration: Configuration = Configuration(), clock: C,
        eventLoop: (any EventLoop)? = nil
    ) where C.Duration == Duration {
        self.transport = transport
        self.configuration = configuration
        self.timeline = Timeline(clock: clock)
        self.state = Mutex(State(core: ConnectionCore(configuration: configuration.connection)))
        let (linkEvents, linkContinuation) = AsyncStream<LinkEvent>.makeStream(bufferingPolicy: .bufferingNewest(64))
        self.linkEvents = linkEvents
        self.linkContinuation = linkContinuation

        let realTime = clock is ContinuousClock || clock is SuspendingClock
        if realTime, let loopTransport = transport as? any EventLoopTransport {
            let delegate = LoopDelegate(client: self)
            let started = state.withLock { state in
                // Under the lock: the loop's first delivery waits until the output is in place.
                guard let control = loopTransport.startEventLoop(delegate: delegate, on: eventLoop) else { return false }
                state.output = .eventLoop(control)
                return true
            }
            if started { return }
        }
        let (outboundStream, outbound) = AsyncStream<[UInt8]>.makeStream()
        let reader = Task { [weak self, transport] in
            while true {
                let bytes: [UInt8]
                do {
                    bytes = try await transport.receive()
                } catch {
                    self?.transportEnded(error)
                    return
                }
                guard let self else { return }
                bytes.withUnsafeBytes { self.received($0) }
            }
        }
        let writer = Task { [weak self, transport] in
            for await chunk in outboundStream {
                do {
                    try await transport.send(chunk)
                } catch {
                    self?.transportEnded(error)
                    return
                }
            }
        }
        state.withLock { state in
            if state.closed {
                reader.cancel()
                writer.cancel()
                outbound.finish()
            } else {
                state.tasks = [reader, writer]
                state.output = .tasks(outbound)
                flush(&state)
            }
        }
        drain()
    }

    /// A client over `transport` timed by the system's `ContinuousClock` (on `eventLoop`, or a loop of the
    /// transport's own, when the transport is an ``EventLoopTransport``).
    public convenience init(
        transport: any ByteTransport, configuration: Configuration = Configuration(), eventLoop: (any EventLoop)? = nil
    ) {
        self.init(transport: transport, configuration: configuration, clock: ContinuousClock(), eventLoop: eventLoop)
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
    ///   when the link is lost; ``StatusCode/internal`` when the response does not decode;
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
                    let now = timeline.now()
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
    /// - Throws: ``RPCError`` with ``StatusCode/unavailable`` when the client or link is closed,
    ///   ``StatusCode/invalidArgument`` for a unary method, ``StatusCode/resourceExhausted`` when the request
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
    /// When the client is driven by `loop` (its transport runs there: ``driver`` is ``Driver/eventLoop``
    /// and the client was made with that loop), each message reaches the handler synchronously, during
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
    public func serverStream<Request: WireMessage, Message: WireMessage>(
        _ method: MethodID, _ request: Request, as messageType: Message.Type = Message.self,
        deadline: Duration? = nil, deliveringOn loop: any EventLoop,
        to handler: @escaping @Sendable (StreamEvent<Message>) -> Void
    ) throws(RPCError) -> StreamSubscription {
        let callSlot = Mutex<CallID?>(nil)
        let decoding = DecodingStreamHandler<Message>(
            method: method,
            cancel: { [weak self] in
                if let self, let call = callSlot.withLock({ $0 }) { cancel(call) }
            },
            handler: handler)
        let delivery = LoopStreamDelivery(loop: loop, limit: configuration.streamBufferLimit) { decoding.deliver($0) }
        let call = try startStream(method, request.serializedBytes(), deadline: deadline, consumer: delivery) {
            call in callSlot.withLock { $0 = call }
        }
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
            let now = timeline.now()
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
            state.core.cancelCall(call, now: timeline.now())
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
                now: timeline.now())
            flush(&state)
        }
        drain()
    }

    /// How this client is driven: by its transport's event loop, or by tasks.
    public var driver: Driver {
        state.withLock { state in
            if case .eventLoop = state.output { return .eventLoop }
            return .tasks
        }
    }

    /// The I/O thread of an event-loop-driven client, as a task executor (nil when tasks drive it).
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
            if case .eventLoop(let control) = state.output { return control.taskExecutor }
            return nil
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
    /// the port is released. A command that exits after this leaves the device nothing unacknowledged.
    public func shutdown() async {
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

    // MARK: Driving

    /// Bytes from the device (the event loop's thread, or the reader task).
    fileprivate func received(_ bytes: UnsafeRawBufferPointer) {
        state.withLock { state in
            guard !state.closed else { return }
            state.core.receive(bytes, now: timeline.now())
            flush(&state)
        }
        drain()
    }

    /// The timer set for `wake` fired (nil: the event loop's timer, of which there is one).
    fileprivate func timerFired(_ wake: Duration?) {
        state.withLock { state in
            guard !state.closed else { return }
            if let wake {
                guard let armed = state.timer, armed.wake == wake else { return }  // a superseded timer
                state.timer = nil
            } else {
                state.armedWake = nil
            }
            state.core.poll(now: timeline.now())
            flush(&state)
        }
        drain()
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
        let wasOpen = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.core.closeLink(now: timeline.now(), reason: reason)
            flush(&state)
            state.closed = true
            switch state.output {
            case .tasks(let outbound): outbound.finish()
            case .eventLoop(let control): control.setTimer(after: nil)
            case .none: break
            }
            for task in state.tasks { task.cancel() }
            state.tasks.removeAll()
            state.timer?.task.cancel()
            state.timer = nil
            state.deferred.append(.linkFinished)
            return true
        }
        drain()
        guard wasOpen else { return }
        transport.close()
        // Driven by tasks (or not yet at all), the transport is done once closed; an event loop reports
        // its end to the delegate, after the link's last bytes went out.
        if state.withLock({ if case .eventLoop = $0.output { return false } else { return true } }) { markTransportDone() }
    }

    /// Hands the core's events to the waiting calls and streams, then writes its output (a consumer is
    /// woken before the `ACK` of its message goes out, not after), again while that produced more, then
    /// sets the timer for the core's next poll time. Runs under the lock.
    private func flush(_ state: inout State) {
        repeat {
            if state.core.hasEvents {
                var events = state.events
                state.events = []
                state.core.takeEvents(into: &events)
                for event in events {
                    dispatch(event, &state)
                }
                events.removeAll(keepingCapacity: true)
                state.events = events
            }
            switch state.output {
            case .eventLoop(let control):
                state.core.drainOutbound { control.write($0) }
            case .tasks(let outbound):
                let bytes = state.core.takeOutbound()
                if !bytes.isEmpty { outbound.yield(bytes) }
            case .none:
                break
            }
        } while state.core.hasEvents
        arm(&state)
    }

    /// Sets the timer for the core's next poll time (nothing scheduled: no timer).
    private func arm(_ state: inout State) {
        guard !state.closed else { return }
        let next = state.core.nextPollTime
        switch state.output {
        case .eventLoop(let control):
            guard next != state.armedWake else { return }
            state.armedWake = next
            control.setTimer(after: next.map { $0 - timeline.now() })
        case .tasks:
            // Armed for that time or earlier: an early wake finds nothing to do and re-arms.
            guard let next else { return }
            if let armed = state.timer {
                guard next < armed.wake else { return }
                armed.task.cancel()
            }
            let task = Task { [weak self, timeline] in
                do {
                    try await timeline.sleepUntil(next)
                } catch {
                    return  // superseded or closed
                }
                self?.timerFired(next)
            }
            state.timer = (task, next)
        case .none:
            break
        }
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
        var batch = state.withLock { state -> [Delivery] in
            guard !state.draining, !state.deferred.isEmpty else { return [] }
            state.draining = true
            defer { state.deferred.removeAll() }
            return state.deferred
        }
        while !batch.isEmpty {
            for delivery in batch { deliver(delivery) }
            batch = state.withLock { state -> [Delivery] in
                guard !state.deferred.isEmpty else {
                    state.draining = false
                    return []
                }
                defer { state.deferred.removeAll() }
                return state.deferred
            }
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
                state.core.cancelCall(call, now: timeline.now())
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
        client?.timerFired(nil)
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

/// A clock reduced to what the client needs: the time since the client started, and sleeping.
struct Timeline: Sendable {
    let now: @Sendable () -> Duration
    /// Sleeps until a time since the start (at once when it has passed).
    let sleepUntil: @Sendable (Duration) async throws -> Void

    init<C: Clock>(clock: C) where C.Duration == Duration {
        if let continuous = clock as? ContinuousClock {
            // The usual clock, read without generic dispatch: `now()` runs on every packet.
            let origin = continuous.now
            now = { origin.duration(to: ContinuousClock.now) }
            sleepUntil = { time in try await continuous.sleep(until: origin.advanced(by: time), tolerance: nil) }
            return
        }
        let origin = clock.now
        now = { origin.duration(to: clock.now) }
        sleepUntil = { time in try await clock.sleep(until: origin.advanced(by: time), tolerance: nil) }
    }
}
