import CameraControlTransport
import CameraControlWire

/// The async RPC client: a ``ConnectionCore`` driven by a ``ByteTransport`` and a `Clock`.
///
/// Two internal tasks run from ``init(transport:configuration:clock:)`` until ``close()``: one reads the
/// transport into the core, one writes the core's output to the transport in order. A timer calls
/// ``ConnectionCore/poll(now:)`` (deadlines, heartbeats, liveness) only at the core's
/// ``ConnectionCore/nextPollTime``: it sleeps until then, and is re-armed earlier when new input or a new
/// call brings that time forward. An idle session therefore wakes once per heartbeat interval, and a
/// client with nothing scheduled not at all. With a ``ManualClock`` nothing time-driven happens until the
/// test advances the clock.
///
/// Several calls may be in flight at once from any number of tasks; responses are matched by call id.
///
/// Errors, for every call: ``StatusCode/unavailable`` when the link died (no packet for 4 heartbeat
/// intervals after the handshake), the transport closed, or the client was closed;
/// ``StatusCode/deadlineExceeded`` when the deadline passed; ``StatusCode/cancelled`` when the calling task
/// was cancelled; ``StatusCode/internal`` when the response does not decode; otherwise the device's
/// status (`UNIMPLEMENTED`, `INVALID_ARGUMENT`, `FAILED_PRECONDITION`, …). See ``RPCError``.
public actor RPCClient {
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
    public nonisolated let linkEvents: AsyncStream<LinkEvent>

    private var core: ConnectionCore
    private let transport: any ByteTransport
    private let timeline: Timeline
    private let configuration: Configuration
    private var unaryWaiters: [CallID: CheckedContinuation<Result<[UInt8], RPCError>, Never>] = [:]
    private var streams: [CallID: StreamChannel] = [:]
    private let outbound: AsyncStream<[UInt8]>.Continuation
    private let linkContinuation: AsyncStream<LinkEvent>.Continuation
    private var tasks: [Task<Void, Never>] = []
    private var closed = false
    /// The task sleeping until ``ConnectionCore/nextPollTime``, and the time it wakes (timeline).
    private var timer: (task: Task<Void, Never>, wake: Duration)?

    /// A client over `transport`, timed by `clock`; starts reading, writing and polling at once.
    public init<C: Clock>(
        transport: any ByteTransport, configuration: Configuration = Configuration(), clock: C
    ) where C.Duration == Duration {
        self.transport = transport
        self.configuration = configuration
        self.timeline = Timeline(clock: clock)
        self.core = ConnectionCore(configuration: configuration.connection)
        let (outboundStream, outbound) = AsyncStream<[UInt8]>.makeStream()
        self.outbound = outbound
        let (linkEvents, linkContinuation) = AsyncStream<LinkEvent>.makeStream(bufferingPolicy: .bufferingNewest(64))
        self.linkEvents = linkEvents
        self.linkContinuation = linkContinuation
        let reader = Task { [weak self] in
            guard let self else { return }
            await self.readLoop()
        }
        let writer = Task { [weak self, transport] in
            for await chunk in outboundStream {
                do {
                    try await transport.send(chunk)
                } catch {
                    await self?.transportEnded(error)
                    return
                }
            }
        }
        Task { [weak self] in await self?.adopt([reader, writer]) }
    }

    /// A client over `transport` timed by the system's `ContinuousClock`.
    public init(transport: any ByteTransport, configuration: Configuration = Configuration()) {
        self.init(transport: transport, configuration: configuration, clock: ContinuousClock())
    }

    // MARK: Calls

    /// Calls a unary method and decodes its response.
    ///
    /// - Parameters:
    ///   - method: a unary method, e.g. ``MethodID/devicePing``.
    ///   - request: the request message.
    ///   - responseType: the response message type (usually inferred).
    ///   - deadline: how long the call may take; nil uses ``ConnectionConfiguration/defaultUnaryDeadline``.
    /// - Throws: ``RPCError``: the device's status; ``StatusCode/deadlineExceeded``;
    ///   ``StatusCode/cancelled`` when the task is cancelled (a `CANCEL` is sent); ``StatusCode/unavailable``
    ///   when the link is lost; ``StatusCode/internal`` when the response does not decode;
    ///   ``StatusCode/invalidArgument`` for a streaming method; ``StatusCode/resourceExhausted`` when the
    ///   request does not fit a frame.
    public func unary<Request: WireMessage, Response: WireMessage>(
        _ method: MethodID, _ request: Request, as responseType: Response.Type = Response.self,
        deadline: Duration? = nil
    ) async throws(RPCError) -> Response {
        let payload = try await unaryBytes(method, request.serializedBytes(), deadline: deadline)
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
    /// - Throws: as ``unary(_:_:as:deadline:)``, except ``StatusCode/internal`` for decoding.
    public func unaryBytes(_ method: MethodID, _ request: [UInt8], deadline: Duration? = nil) async throws(RPCError) -> [UInt8] {
        guard !method.isServerStreaming else {
            throw RPCError(code: .invalidArgument, message: "a server-streaming method called as unary", method: method)
        }
        guard !Task.isCancelled else {
            throw RPCError(code: .cancelled, message: "the calling task was cancelled", method: method)
        }
        let now = timeline.now()
        let call = try core.startCall(method: method, request: request, deadline: deadline.map { now + $0 }, now: now)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<[UInt8], RPCError>, Never>) in
                unaryWaiters[call] = continuation
                flush()
            }
        } onCancel: {
            Task { await self.cancel(call) }
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
        guard method.isServerStreaming else {
            throw RPCError(code: .invalidArgument, message: "a unary method called as a stream", method: method)
        }
        let now = timeline.now()
        let call = try core.startCall(
            method: method, request: request.serializedBytes(), deadline: deadline.map { now + $0 }, now: now)
        let channel = StreamChannel(limit: configuration.streamBufferLimit)
        streams[call] = channel
        flush()
        return RPCStream(handle: RPCStreamHandle(callID: call, method: method, channel: channel, client: self))
    }

    /// Cancels a call in flight (sends `CANCEL`; the call fails with ``StatusCode/cancelled``). Does nothing
    /// for a call that already ended.
    public func cancel(_ call: CallID) {
        core.cancelCall(call, now: timeline.now())
        flush()
    }

    // MARK: Session and state

    /// Applies the device's announced `Capabilities` (heartbeat interval, max frame size) and starts the
    /// liveness machinery if the handshake did not already (see
    /// ``ConnectionCore/markSessionEstablished(heartbeatInterval:maxFrameBytes:now:)``).
    public func markSessionEstablished(heartbeatInterval: Duration? = nil, maxFrameBytes: Int? = nil) {
        core.markSessionEstablished(heartbeatInterval: heartbeatInterval, maxFrameBytes: maxFrameBytes, now: timeline.now())
        flush()
    }

    /// True while a session is established (after a handshake, until the link dies or closes).
    public var isSessionEstablished: Bool { core.isSessionEstablished }

    /// True after ``close()`` or the end of the transport.
    public var isClosed: Bool { closed }

    /// The connection's diagnostics.
    public var counters: ConnectionCounters { core.counters }

    /// The connection's settings in force.
    public var connectionConfiguration: ConnectionConfiguration { core.configuration }

    /// Fails every call in flight with ``StatusCode/unavailable``, stops the internal tasks and closes the
    /// transport. Idempotent.
    public func close() {
        shutDown(reason: "the client was closed")
    }

    // MARK: Private

    private func adopt(_ started: [Task<Void, Never>]) {
        if closed {
            for task in started { task.cancel() }
        } else {
            tasks += started
        }
    }

    private func readLoop() async {
        while true {
            let bytes: [UInt8]
            do {
                bytes = try await transport.receive()
            } catch {
                transportEnded(error)
                return
            }
            guard !closed else { return }
            core.receive(bytes, now: timeline.now())
            flush()
        }
    }

    /// The timer woke at `wake`: polls the core (which re-arms the timer through ``flush()``).
    private func timerFired(_ wake: Duration) {
        guard !closed, let armed = timer, armed.wake == wake else { return }  // a superseded timer
        timer = nil
        core.poll(now: timeline.now())
        flush()
    }

    /// Arms the timer for the core's next poll time, unless it is armed for that time or earlier (an early
    /// wake finds nothing to do and re-arms). Nothing scheduled: no timer.
    private func armTimer() {
        guard !closed, let next = core.nextPollTime else { return }
        if let armed = timer {
            guard next < armed.wake else { return }
            armed.task.cancel()
        }
        let task = Task { [weak self, timeline] in
            do {
                try await timeline.sleepUntil(next)
            } catch {
                return  // superseded or closed
            }
            await self?.timerFired(next)
        }
        timer = (task, next)
    }

    private func transportEnded(_ error: any Error) {
        guard !closed else { return }
        shutDown(reason: "the transport ended: \(error)")
    }

    private func shutDown(reason: String) {
        guard !closed else { return }
        core.closeLink(now: timeline.now(), reason: reason)
        flush()
        closed = true
        outbound.finish()
        for task in tasks { task.cancel() }
        tasks.removeAll()
        timer?.task.cancel()
        timer = nil
        transport.close()
        linkContinuation.finish()
    }

    /// Hands the core's output to the writer task and its events to the waiting calls.
    private func flush() {
        let bytes = core.takeOutbound()
        if !bytes.isEmpty && !closed {
            outbound.yield(bytes)
        }
        for event in core.takeEvents() {
            dispatch(event)
        }
        armTimer()
    }

    private func dispatch(_ event: ConnectionEvent) {
        switch event {
        case .response(let call, let payload):
            unaryWaiters.removeValue(forKey: call)?.resume(returning: .success(payload))
        case .streamMessage(let call, let payload):
            guard let channel = streams[call] else { return }
            if !channel.yield(payload) {
                let method = core.method(of: call)
                streams[call] = nil
                core.cancelCall(call, now: timeline.now())
                channel.finish(
                    RPCError(
                        code: .resourceExhausted,
                        message: "the consumer fell \(configuration.streamBufferLimit) messages behind; call cancelled",
                        method: method))
            }
        case .streamEnded(let call):
            streams.removeValue(forKey: call)?.finish(nil)
        case .failed(let call, let error):
            if let waiter = unaryWaiters.removeValue(forKey: call) {
                waiter.resume(returning: .failure(error))
            } else {
                streams.removeValue(forKey: call)?.finish(error)
            }
        case .sessionEstablished:
            linkContinuation.yield(.sessionEstablished)
        case .linkDead:
            linkContinuation.yield(.dead)
        case .linkClosed:
            linkContinuation.yield(.closed)
        case .linkError(let error):
            linkContinuation.yield(.deviceError(error))
        }
    }
}

/// A clock reduced to what the client needs: the time since the client started, and sleeping.
struct Timeline: Sendable {
    let now: @Sendable () -> Duration
    /// Sleeps until a time since the start (at once when it has passed).
    let sleepUntil: @Sendable (Duration) async throws -> Void

    init<C: Clock>(clock: C) where C.Duration == Duration {
        let origin = clock.now
        now = { origin.duration(to: clock.now) }
        sleepUntil = { time in try await clock.sleep(until: origin.advanced(by: time), tolerance: nil) }
    }
}
