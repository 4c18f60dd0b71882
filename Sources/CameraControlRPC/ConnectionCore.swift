import CameraControlWire

/// The host side of a CameraControl link as a synchronous state machine: bytes and time in, bytes and
/// events out. No I/O, no clock, no tasks (docs/PROTOCOL.md §4–§9, docs/DESIGN.md "sans-IO").
///
/// Time is whatever monotonic timeline the driver uses, passed as `now` (a `Duration` since an arbitrary
/// origin) to every call that may act on time. ``RPCClient`` drives it with a `Clock`; a test or a
/// virtual-time harness drives it directly:
///
/// ```swift
/// var core = ConnectionCore()
/// let call = try core.startCall(method: .deviceHandshake, request: bytes, now: t)
/// device.feed(core.takeOutbound())               // write these bytes to the device
/// core.receive(deviceBytes, now: t)              // bytes from the device
/// core.poll(now: t)                              // deadlines, heartbeats, liveness
/// for event in core.takeEvents() { … }           // .response(call, payload), …
/// ```
///
/// What it does:
/// - **Calls**: assigns call ids (non-zero, increasing, skipping ids in flight), encodes `REQUEST`s,
///   matches `RESPONSE` / `STREAM_MESSAGE` / `STREAM_END` / `ERROR` to calls; every call ends exactly once
///   (see ``ConnectionEvent``). Packets for unknown calls are dropped and counted.
/// - **Reliability** (§6, v1.1): sends every `REQUEST` `RELIABLE` and retransmits it (same sequence
///   number; first after ``ConnectionConfiguration/retransmissionTimeout``, or after the round trips
///   measured when they are longer (``roundTrip``, ``ConnectionConfiguration/adaptsRetransmissionTimeout``),
///   doubling, at most ``ConnectionConfiguration/maxTransmissions`` transmissions) until it is acknowledged
///   or its call ends; answers every `RELIABLE` packet with an `ACK` (duplicates too); delivers every packet at
///   most once, whatever its flags, using a 4,096-entry window of received sequence numbers (it covers
///   the device's whole retransmission budget, `ReceivedSequenceWindow`); counts
///   sequence gaps. A successful `DeviceService/Handshake` response resets the receive side, since the
///   device restarts its numbering there.
/// - **Stream confirmation** (§7, v1.1): in a session at minor 1 or later a server stream is confirmed
///   by an empty `RESPONSE` (or its first message); one not confirmed within
///   ``ConnectionConfiguration/streamOpenTimeout`` fails with `UNAVAILABLE` "stream not confirmed".
/// - **Envelope rules** (§4, v1.1): a packet on call id 0 of a type other than `ACK`/`HEARTBEAT`, or an
///   `ACK` without its 2-byte payload, is dropped and counted (``ConnectionCounters/envelopeErrors``).
/// - **Deadlines** (§7): ``poll(now:)`` fails calls whose deadline passed with `DEADLINE_EXCEEDED` and
///   sends `CANCEL`.
/// - **Liveness** (§8): once the session is established, ``poll(now:)`` sends a `HEARTBEAT` when the host
///   sent nothing for the heartbeat interval, and declares the link dead when nothing valid was received
///   for 4 intervals: every call fails with `UNAVAILABLE` and ``ConnectionEvent/linkDead`` is reported.
///   A device `HEARTBEAT` received when the host has sent nothing for half an interval is answered at
///   once; while the device's heartbeats are coming, the host's own next heartbeat waits up to 1.25
///   intervals for the device's next one to answer (``ConnectionConfiguration/answersHeartbeats``): an
///   idle link wakes each side once per interval, not twice.
///   Silence is counted only while the host runs: after a gap of more than two intervals between two
///   calls into the core (the host was starved or suspended), the device gets one interval to be heard.
///   A frame still arriving keeps the link alive (§8, v1.2: on a slow line one frame can take longer
///   than the dead timeout); one that then fails its check does not count.
///   Those rules are ``LinkLiveness``'s, a value of its own; where the link stands is ``linkState``
///   (no session, established, dead, closed).
///
/// The session becomes established by itself when a handshake call gets its `RESPONSE`, with the
/// configured heartbeat interval and frame size (the core does not decode the response); the device layer
/// then calls ``markSessionEstablished(heartbeatInterval:maxFrameBytes:streamsConfirmed:now:)`` with the
/// values of the device's `Capabilities` and the negotiated version's stream confirmation.
public struct ConnectionCore: Sendable {
    private struct Call: Sendable {
        var method: MethodID
        /// The method's ``MethodID/isServerStreaming``, looked up in the schema's table once, when the call
        /// starts, not for every message of a stream.
        var isServerStreaming: Bool
        var deadline: Duration?
        /// A stream awaiting its confirmation (R4): fails with `UNAVAILABLE` when this passes.
        var openDeadline: Duration?
        /// Once the device acknowledges the request, the deadline is at least this long after the `ACK`.
        var waitOnceAcknowledged: Duration?
        /// For a call with ``waitOnceAcknowledged``: how far its deadline may move while the device is still
        /// sending when it passes (its `ACK` or answer may be behind what is on the line).
        var sendingLimit: Duration?
    }

    /// A reliable packet of ours awaiting its `ACK` (§6).
    private struct Unacked: Sendable {
        var call: CallID
        var bytes: [UInt8]
        var transmissions: Int
        /// The interval after the next copy (twice the one running).
        var timeout: Duration
        var due: Duration
        /// When the first copy was sent: a packet acknowledged after one copy is a round-trip sample.
        var firstSent: Duration
        /// When that copy had left, on a slow line (``LineSpeedEstimate/departure(forPacketEndingAt:now:)``):
        /// the sample counts from then, the allowance already covering the wait (``firstSent`` on a fast line).
        var departed: Duration
    }

    /// The settings in force (frame size and heartbeat interval change when the session is established).
    public private(set) var configuration: ConnectionConfiguration {
        didSet {
            liveness.configure(configuration)
            if roundTrip.floor != configuration.retransmissionTimeout {
                roundTrip = RoundTripEstimator(floor: configuration.retransmissionTimeout)
            }
        }
    }
    /// The round trips measured on this link (a request to its `ACK`), which give a new request its first
    /// retransmission timeout when ``ConnectionConfiguration/adaptsRetransmissionTimeout`` is on.
    public private(set) var roundTrip: RoundTripEstimator
    /// Where the link stands: no session yet, established, dead, or closed.
    public private(set) var linkState: LinkState = .noSession
    /// Why ``closeLink(now:reason:)`` closed the link (a call started after it says so).
    private var closedReason = ""
    /// When the host last sent and heard, and what that makes due (§8); consulted while ``linkState`` is
    /// ``LinkState/established``. Its durations are derived from ``configuration`` once (`Duration`'s
    /// generic arithmetic is not free on the per-packet path).
    public private(set) var liveness: LinkLiveness
    /// True between an established session and the link's death or close.
    public var isSessionEstablished: Bool { linkState == .established }
    /// True after ``closeLink(now:reason:)``: no call can start any more.
    public var isClosed: Bool { linkState == .closed }
    /// True after ``beginClosing(now:)``: the host is closing, no call can start, and the link stays open only
    /// for answers still on their way (``answersAwaited(now:)``).
    public private(set) var isClosing = false

    private var decoder = FrameDecoder(maxFrameBytes: WireFormat.maxFrameBytes)
    /// The line's speed as the device's long frames show it, and when our bytes will have left on it: a
    /// reliable packet's timeout allows for both (§6) when ``ConnectionConfiguration/adaptsRetransmissionTimeout``.
    public private(set) var line = LineSpeedEstimate()
    /// When the last frame that decoded to a packet arrived (any packet, of any session), and the last byte.
    private var lastFrameAt: Duration?
    private var lastByteAt: Duration?
    /// The time of the last call that brought one (the output is taken right after such a call).
    private var lastNow = Duration.zero
    private var extraCounters = ConnectionCounters()
    private var calls: [CallID: Call] = [:]
    /// Unary calls the host ended before their answer (cancelled, or their deadline passed), with when to stop
    /// expecting it: the device may have answered before the `CANCEL` reached it, and a reliable answer is
    /// owed its `ACK` (§6). A host that closes waits for them (``answersAwaited(now:)``). At most
    /// ``ConnectionConfiguration/maxCallsInFlight`` (the soonest to expire goes first).
    private var answersOnTheWay: [CallID: Duration] = [:]
    /// Server streams the host cancelled, with when their `CANCEL` was last sent: a `CANCEL` is best-effort
    /// (§6), and a device that lost it streams on, holding one of its call slots, until the next session. A
    /// message of such a stream gets its `CANCEL` again, at most once a heartbeat interval, until the device
    /// ends the call. At most ``ConnectionConfiguration/maxCallsInFlight`` (the oldest goes first); cleared by
    /// a new session.
    private var cancelledStreams: [CallID: Duration] = [:]
    private var nextCallID: UInt32 = 1
    /// The handshake call last started, while it may still await its answer: until that answer comes (or
    /// the call ends), the host acknowledges no other packet (§9, v1.2).
    private var pendingHandshake: CallID?
    private var sendSequence: UInt16 = 0
    private var outbound: [UInt8] = []
    /// The unstuffed frame being encoded (reused: no allocation per packet sent).
    private var scratch: [UInt8] = []
    /// The `ACK` sent for each reliable packet, its payload rewritten each time (no allocation per ACK).
    private var ackPacket = Packet.ack(sequence: 0, acking: 0)
    /// The sequence numbers of reliable packets received whose `ACK` is owed but not yet encoded: it is
    /// encoded when the output is taken, or before the next packet sent (so the order on the wire is the
    /// order they were owed in). A driver delivers what a read brought before it takes the output, so the
    /// encoding is off the way from the read to the message's consumer.
    private var owedAcks: [UInt16] = []
    private var events: [ConnectionEvent] = []
    /// The last stream message's payload, kept: once its consumer has let go of it (a handler on the
    /// loop does so before the next read), the next message is copied into the same storage, with no
    /// allocation on the way from the read to the consumer. A consumer that keeps it (a buffering stream)
    /// makes the next copy allocate, as a new array would.
    private var lastStreamPayload: [UInt8] = []
    /// Our reliable packets awaiting an `ACK`, by sequence number.
    private var unacked: [UInt16: Unacked] = [:]
    /// The session runs at minor 1 or later: streams are confirmed (§7).
    private var streamsConfirmed = false
    /// The bytes being received came after the host was starved (``LinkLiveness/wasStarved(before:)``):
    /// an `ACK` among them is no round-trip sample.
    private var receivingAfterStarvation = false

    // Receive-side sequence state (§6).
    private var lastSequence: UInt16?
    /// The sequence numbers delivered lately.
    private var delivered = ReceivedSequenceWindow()

    /// A connection with `configuration`; no session yet.
    public init(configuration: ConnectionConfiguration = ConnectionConfiguration()) {
        self.configuration = configuration
        self.liveness = LinkLiveness(configuration)
        self.roundTrip = RoundTripEstimator(floor: configuration.retransmissionTimeout)
        self.nextCallID = configuration.firstCallID
    }

    // MARK: Inspection

    /// The diagnostics so far.
    public var counters: ConnectionCounters {
        var counters = extraCounters
        counters.wire = decoder.counters
        return counters
    }

    /// The calls in flight, by id.
    public var callsInFlight: [CallID] { calls.keys.sorted() }

    /// The method of a call in flight, or nil when the call is not (or no longer) in flight.
    public func method(of call: CallID) -> MethodID? { calls[call]?.method }

    /// The earliest time at which ``poll(now:)`` has something to do (a deadline, a heartbeat, the
    /// liveness timeout), or nil when nothing is scheduled. A driver may sleep until then, but must
    /// re-read it after every other call into the core.
    public var nextPollTime: Duration? {
        var earliest: Duration?
        func consider(_ time: Duration?) {
            guard let time else { return }
            if earliest == nil || time < earliest! { earliest = time }
        }
        for call in calls.values {
            consider(call.deadline)
            consider(call.openDeadline)
        }
        for entry in unacked.values where calls[entry.call] != nil { consider(entry.due) }
        if isSessionEstablished && awaitedHandshake == nil { consider(liveness.nextTime) }
        for until in answersOnTheWay.values { consider(until) }
        return earliest
    }

    // MARK: Output

    /// The bytes to write to the transport since the last call (complete frames, in order).
    public mutating func takeOutbound() -> [UInt8] {
        encodeOwedAcks()
        guard !outbound.isEmpty else { return [] }  // no allocation when there is nothing to hand out
        line.wrote(outbound.count, at: lastNow)
        defer { outbound.removeAll(keepingCapacity: true) }
        return outbound
    }

    /// Hands the bytes to write since the last call to `body` (complete frames, in order), without a copy,
    /// and forgets them. `body` is not called when there is nothing to write.
    public mutating func drainOutbound(_ body: (UnsafeRawBufferPointer) -> Void) {
        encodeOwedAcks()
        guard !outbound.isEmpty else { return }
        line.wrote(outbound.count, at: lastNow)
        outbound.withUnsafeBytes(body)
        outbound.removeAll(keepingCapacity: true)
    }

    /// The events since the last call, in the order they happened.
    public mutating func takeEvents() -> [ConnectionEvent] {
        guard !events.isEmpty else { return [] }
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    /// True when events wait to be taken.
    public var hasEvents: Bool { !events.isEmpty }

    /// Moves the events since the last call into `buffer`, which must be empty, without allocating: the
    /// core keeps `buffer`'s storage for its next events.
    public mutating func takeEvents(into buffer: inout [ConnectionEvent]) {
        precondition(buffer.isEmpty, "takeEvents(into:) needs an empty buffer")
        swap(&buffer, &events)
    }

    // MARK: Calls

    /// Starts a call: queues its `REQUEST` and returns its id.
    ///
    /// - Parameters:
    ///   - method: the method; its ``MethodID/isServerStreaming`` decides whether the call expects one
    ///     `RESPONSE` or a stream.
    ///   - request: the request message's protobuf bytes.
    ///   - deadline: when the call fails with `DEADLINE_EXCEEDED` (on the same timeline as `now`); nil means
    ///     ``ConnectionConfiguration/defaultUnaryDeadline`` after `now` for a unary call and no deadline
    ///     for a stream.
    ///   - waitOnceAcknowledged: when the device's `ACK` of the request arrives, the deadline moves to at
    ///     least this long after it: the device has the request and its answer is on the way (a handshake
    ///     on a slow line, §9). And while the device is still sending when the deadline passes (a frame
    ///     ended within ``deviceSendingGrace``, or a byte of one arriving came within
    ///     ``partialFrameGrace``), the deadline waits for it,
    ///     until at most this long after `now` (or the deadline, when later): on a slow line the `ACK` may
    ///     wait behind a long frame (at 9600 baud a `HandshakeResponse` of the session before takes 170 ms,
    ///     longer than a handshake's first attempt). Nil leaves the deadline alone.
    ///   - now: the current time.
    /// - Throws: ``RPCError`` with ``StatusCode/unavailable`` when the link is closed or a handshake call
    ///   awaits its answer (§9, v1.2: nothing numbered after it goes out; a new attempt starts once the last
    ///   one ended), ``StatusCode/resourceExhausted`` when ``ConnectionConfiguration/maxCallsInFlight`` calls are in
    ///   flight or the request does not fit ``ConnectionConfiguration/maxFrameBytes``.
    public mutating func startCall(
        method: MethodID, request: [UInt8], deadline: Duration? = nil, waitOnceAcknowledged: Duration? = nil,
        now: Duration
    ) throws(RPCError) -> CallID {
        guard !isClosed else {
            throw RPCError(code: .unavailable, message: "the link is closed: \(closedReason)", method: method)
        }
        guard !isClosing else {
            throw RPCError(code: .unavailable, message: "the link is closing", method: method)
        }
        // §9 (v1.2): nothing numbered after a handshake goes out while it awaits its answer, and a second
        // handshake is a new attempt only once the first has ended (its deadline, or cancelled).
        if let handshake = awaitedHandshake {
            throw RPCError(
                code: .unavailable,
                message: "handshake call \(handshake.rawValue) awaits its answer; no call starts before it comes",
                method: method)
        }
        guard calls.count < configuration.maxCallsInFlight else {
            throw RPCError(
                code: .resourceExhausted,
                message: "\(calls.count) calls in flight; the host allows \(configuration.maxCallsInFlight)",
                method: method)
        }
        var id = nextCallID
        while id == 0 || calls[CallID(rawValue: id)] != nil { id &+= 1 }
        let call = CallID(rawValue: id)
        let packet = Packet(type: .request, isReliable: true, callID: id, address: method, payload: request)
        do {
            let (sequence, wire) = try send(packet, now: now)
            let timeout = configuration.adaptsRetransmissionTimeout ? roundTrip.timeout : configuration.retransmissionTimeout
            lastNow = now
            unacked[sequence] = Unacked(
                call: call, bytes: Array(outbound[wire]), transmissions: 1, timeout: timeout * 2,
                due: now + timeout + lineAllowance(now: now), firstSent: now,
                departed: now + lineDeparture(now: now))
        } catch {
            throw RPCError(
                code: .resourceExhausted,
                message: "request does not fit the device's \(configuration.maxFrameBytes)-byte frame",
                method: method, cause: error)
        }
        nextCallID = id &+ 1
        if method == .deviceHandshake { pendingHandshake = call }
        let isServerStreaming = method.isServerStreaming
        // The default deadlines are for the device's work, not the line's: on a slow line they also allow the
        // request's time to leave (behind what was written before it) and an answer of the largest frame's
        // (at 9600 baud a 1,000-byte Ping and its echo take 2.1 s of line, more than the default 2 s), at most
        // ``maximumDeadlineLineTime`` (a rate learnt far too low adds no more). Zero on a line of unknown speed.
        let lineTime = min(
            line.lineTime(bytes: outbound.count + largestFrameWireBytes) + max(line.lineFreeAt - now, .zero),
            Self.maximumDeadlineLineTime)
        let resolvedDeadline = deadline ?? (isServerStreaming ? nil : now + configuration.defaultUnaryDeadline + lineTime)
        let openDeadline = isServerStreaming && streamsConfirmed ? now + configuration.streamOpenTimeout + lineTime : nil
        // Held no later than `wait` after the start, or the deadline when that is later: a caller that cut
        // `wait` to what remains of its own deadline is never held past it.
        let sendingLimit = waitOnceAcknowledged.flatMap { wait in resolvedDeadline.map { max($0, now + wait) } }
        calls[call] = Call(
            method: method, isServerStreaming: isServerStreaming, deadline: resolvedDeadline, openDeadline: openDeadline,
            waitOnceAcknowledged: waitOnceAcknowledged, sendingLimit: sendingLimit)
        extraCounters.callsStarted += 1
        return call
    }

    /// Cancels a call in flight: queues a `CANCEL` and ends the call with ``StatusCode/cancelled``.
    ///
    /// - Returns: false when the call was not in flight (nothing happens then).
    @discardableResult
    public mutating func cancelCall(_ call: CallID, now: Duration) -> Bool {
        guard let state = calls.removeValue(forKey: call) else { return false }
        lastNow = now
        sendCancel(call, now: now)
        if state.isServerStreaming { rememberCancelledStream(call, now: now) } else { expectAnswer(call, now: now) }
        extraCounters.callsCancelled += 1
        events.append(.failed(call, RPCError(code: .cancelled, message: "cancelled by the host", method: state.method)))
        return true
    }

    // MARK: Session

    /// Marks the session as established with the device's announced values: starts heartbeats and the
    /// liveness timer from `now`.
    ///
    /// - Parameters:
    ///   - heartbeatInterval: `Capabilities.heartbeat_interval_ms`; nil keeps the current one. Values
    ///     below 1 ms are raised to 1 ms.
    ///   - maxFrameBytes: `Capabilities.max_frame_bytes`; nil keeps the current one. Clamped to 128…4093.
    ///   - streamsConfirmed: the session runs at minor 1 or later (the handshake's `negotiated_version`), so
    ///     the device confirms each stream it opens (§7, R4) and a stream it never confirms fails after
    ///     ``ConnectionConfiguration/streamOpenTimeout``; nil keeps what is known (false after a handshake's
    ///     response: the core does not decode it, the device layer says).
    public mutating func markSessionEstablished(
        heartbeatInterval: Duration? = nil, maxFrameBytes: Int? = nil, streamsConfirmed: Bool? = nil, now: Duration
    ) {
        guard !isClosed else { return }
        lastNow = now
        if let streamsConfirmed { self.streamsConfirmed = streamsConfirmed }
        if let heartbeatInterval {
            configuration.heartbeatInterval = max(heartbeatInterval, .milliseconds(1))
        }
        if let maxFrameBytes {
            configuration.maxFrameBytes = min(max(maxFrameBytes, WireFormat.minMaxFrameBytes), WireFormat.maxFrameBytes)
        }
        let wasEstablished = isSessionEstablished
        linkState = .established
        liveness.sessionStarted(at: now)
        if !wasEstablished { events.append(.sessionEstablished) }
    }

    /// The transport closed (or the client is shutting down): every call fails with
    /// ``StatusCode/unavailable``, nothing more is sent, and no call can start.
    public mutating func closeLink(now: Duration, reason: String = "the transport closed") {
        guard !isClosed else { return }
        linkState = .closed
        closedReason = reason
        outbound.removeAll()
        owedAcks.removeAll()
        failAllCalls(message: reason)
        events.append(.linkClosed)
    }

    // MARK: Input

    /// Feeds bytes received from the device; decoded packets update calls, acks, sequence state and
    /// liveness. Bad frames are counted (``ConnectionCounters/wire``) and skipped.
    public mutating func receive(_ bytes: some Collection<UInt8>, now: Duration) {
        guard !isClosed else { return }
        lastNow = now
        receivingAfterStarvation = liveness.wasStarved(before: now)
        liveness.awake(at: now)
        if !bytes.isEmpty { lastByteAt = now }
        let continuing = decoder.isAssemblingFrame
        var completedFrames = 0
        decoder.append(bytes)
        while let output = decoder.nextView() {
            completedFrames += 1
            switch output {
            case .packet(let packet):
                lastFrameAt = now
                handle(packet, now: now)
            case .error(let error):
                // A checked frame of an unknown type still shows the device is alive (§4: count, drop), and
                // (v1.2) takes part in §6 like any other: acknowledged if reliable, its number recorded.
                if error.code == .unknownPacketType, let unknown = error.packet {
                    lastFrameAt = now
                    liveness.heard(at: now)
                    if unknown.isReliable, mayAcknowledge(callID: unknown.callID) { oweAck(unknown.sequence, now: now) }
                    if isDuplicate(unknown.sequence) { extraCounters.duplicatesDropped += 1 }
                }
            }
        }
        liveness.bytesArrived(
            at: now, frameArriving: decoder.isAssemblingFrame, frameBegan: completedFrames > 0 || !continuing)
        line.read(bytes.count, at: now, continuing: continuing, completedFrames: completedFrames, open: decoder.isAssemblingFrame)
    }

    /// Acts on time: deadlines, heartbeats and the liveness timeout.
    public mutating func poll(now: Duration) {
        guard !isClosed else { return }
        lastNow = now
        expireDeadlines(now: now)
        if answersOnTheWay.values.contains(where: { $0 <= now }) {
            answersOnTheWay = answersOnTheWay.filter { $0.value > now }
        }
        retransmit(now: now)
        // No heartbeat while a new handshake awaits its answer (§9, v1.2): nothing numbered after it goes out.
        guard isSessionEstablished, awaitedHandshake == nil else {
            liveness.awake(at: now)
            return
        }
        switch liveness.poll(now: now) {
        case .none:
            break
        case .sendHeartbeat:
            sendHeartbeat(now: now, answering: false)
        case .dead(let silence):
            declareLinkDead(silence: silence)
        }
    }

    /// Queues a `HEARTBEAT`. It follows an idle line, so it starts with a delimiter (§2 allows extra
    /// `0x00`s): a previous frame whose delimiter was corrupted costs only that frame, not this heartbeat
    /// too (§8: the device's liveness rests on these small frames).
    private mutating func sendHeartbeat(now: Duration, answering: Bool) {
        encodeOwedAcks()
        outbound.append(WireFormat.delimiter)
        sendLinkPacket(.heartbeat(sequence: sendSequence), now: now)
        extraCounters.heartbeatsSent += 1
        liveness.sent(at: now, answeringHeartbeat: answering)
    }

    // MARK: Private

    private mutating func handle(_ packet: PacketView, now: Duration) {
        let linkType = packet.type == .ack || packet.type == .heartbeat
        if (packet.callID == 0 && !linkType) || (packet.type == .ack && packet.payload.count < WireFormat.ackPayloadBytes) {
            // §4 (v1.1): call id 0 is the link's, an ACK carries what it acknowledges. Classified before
            // the sequence window (§2's order): not acknowledged, not counted as received.
            extraCounters.envelopeErrors += 1
            return
        }
        liveness.heard(at: now)
        if packet.type == .response, let call = calls[CallID(rawValue: packet.callID)],
            call.method == .deviceHandshake
        {
            // The device resets its numbering when it answers a handshake (§6), and ends every other
            // call silently (§9): end them here, or a stream would wait forever.
            lastSequence = nil
            delivered.reset()
            roundTrip.sessionStarted()
            streamsConfirmed = false  // until the device layer, which reads the response, says (markSessionEstablished)
            let handshake = CallID(rawValue: packet.callID)
            answersOnTheWay.removeAll()  // the device ends the old session's calls silently (§9)
            cancelledStreams.removeAll()
            for (other, state) in calls where other != handshake {
                calls[other] = nil
                extraCounters.callsCancelled += 1
                events.append(
                    .failed(other, RPCError(code: .cancelled, message: "a new handshake ended the call", method: state.method)))
            }
        }
        if packet.isReliable, mayAcknowledge(callID: packet.callID) { oweAck(packet.sequence, now: now) }
        if isDuplicate(packet.sequence) {
            extraCounters.duplicatesDropped += 1
            return
        }
        switch packet.type {
        case .ack:
            extraCounters.acksReceived += 1
            let acked = packet.payload.startIndex
            let sequence = UInt16(packet.payload[acked]) | UInt16(packet.payload[acked + 1]) << 8
            guard let entry = unacked.removeValue(forKey: sequence) else { break }
            if entry.transmissions == 1 {
                // From when it had left (if the model's departure is not later than the ACK itself).
                let departed = entry.departed <= now ? entry.departed : entry.firstSent
                if !receivingAfterStarvation { roundTrip.sampled(now - departed) }
            } else {
                roundTrip.acknowledgedAfterRetransmission(runningTimeout: entry.timeout / 2)
            }
            if let wait = calls[entry.call]?.waitOnceAcknowledged, let deadline = calls[entry.call]?.deadline,
                deadline < now + wait
            {
                calls[entry.call]?.deadline = now + wait
            }
        case .heartbeat:
            extraCounters.heartbeatsReceived += 1
            // §8 (v1.1): answer the device's heartbeat with ours, in the same wake-up, once half an
            // interval passed since we last sent; our own timer then waits a quarter interval more.
            if liveness.heardHeartbeat(at: now), isSessionEstablished, awaitedHandshake == nil {
                sendHeartbeat(now: now, answering: true)
            }
        case .response, .streamMessage, .streamEnd, .error:
            handleCallPacket(packet, now: now)
        default:
            // REQUEST and CANCEL travel host → device only.
            extraCounters.unexpectedPackets += 1
        }
    }

    /// Updates the sequence state; true when `packet` was already delivered (whatever its flags: §6, v1.1).
    /// Owes the device an `ACK` of `sequence` (unless the link is closed): encoded when the output is taken
    /// (``encodeOwedAcks()``); the send counts for liveness now.
    private mutating func oweAck(_ sequence: UInt16, now: Duration) {
        guard !isClosed else { return }
        owedAcks.append(sequence)
        liveness.sent(at: now)
        extraCounters.acksSent += 1
    }

    /// Whether a reliable packet of `callID` gets its `ACK` now. While a handshake awaits its answer only that
    /// answer is acknowledged (§9, v1.2; the device layer starts no other call before it): an `ACK`
    /// numbered after the handshake would make a late copy of it a second handshake at the device (its copy
    /// counts as §9's retransmission only when nothing newer came since), and an `ACK` of an earlier
    /// attempt's `HandshakeResponse`, packet 0 like the new one's, would free the new one. The old session's
    /// packets need none: the device forgets them when it accepts the handshake.
    private mutating func mayAcknowledge(callID: UInt32) -> Bool {
        guard let handshake = awaitedHandshake else { return true }
        if callID == handshake.rawValue { return true }
        extraCounters.acksWithheld += 1
        return false
    }

    /// The handshake call that awaits its answer, if any. While there is one the host sends nothing numbered
    /// after it but its copies (§9, v1.2): no `ACK` but of that answer, no `HEARTBEAT`, no `CANCEL`.
    /// (`pendingHandshake` outlives its call; call ids are not reused while it could matter.)
    private var awaitedHandshake: CallID? {
        guard let handshake = pendingHandshake, calls[handshake]?.method == .deviceHandshake else { return nil }
        return handshake
    }

    private mutating func isDuplicate(_ sequence: UInt16) -> Bool {
        guard let last = lastSequence else {
            lastSequence = sequence
            delivered.reset()
            return delivered.recordIsDuplicate(sequence)
        }
        let ahead = sequence &- last
        // d = ahead: d in [1, 2^15) is the next packet when d = 1, else d - 1 were lost; d = 0 or d ≥ 2^15
        // (behind) is a duplicate or a late packet (§6).
        if ahead >= 1 && ahead < 0x8000 {
            extraCounters.sequenceGaps += UInt64(ahead - 1)
            lastSequence = sequence
        }
        return delivered.recordIsDuplicate(sequence)
    }

    private mutating func handleCallPacket(_ packet: PacketView, now: Duration) {
        // Call id 0 never gets here (an envelope error since v1.1, see handle(_:now:)).
        let id = CallID(rawValue: packet.callID)
        guard let call = calls[id] else {
            extraCounters.unknownCallPackets += 1
            if packet.type == .response || packet.type == .error { answersOnTheWay[id] = nil }  // it came
            if let cancelledAt = cancelledStreams[id] {
                if packet.type == .streamMessage {
                    // The device streams on: its CANCEL was lost. Sent again, at most once an interval.
                    if now - cancelledAt >= configuration.heartbeatInterval, awaitedHandshake == nil {
                        sendCancel(id, now: now)
                        cancelledStreams[id] = now
                        extraCounters.cancelsResent += 1
                    }
                } else {
                    cancelledStreams[id] = nil  // the device ended the call
                }
            }
            return
        }
        let streaming = call.isServerStreaming
        if streaming && (packet.type == .response || packet.type == .streamMessage) && call.openDeadline != nil {
            // §7 (v1.1): the empty RESPONSE confirms the stream; so does a message (the RESPONSE may
            // be on its way again after a loss). (Written only when set: a dictionary's in-place update
            // allocates, and a stream's every message comes here.)
            calls[id]?.openDeadline = nil
        }
        switch packet.type {
        case .response where streaming && packet.payload.isEmpty:
            break
        case .response where !streaming:
            calls[id] = nil
            extraCounters.callsSucceeded += 1
            events.append(.response(id, Array(packet.payload)))
            if call.method == .deviceHandshake && !isSessionEstablished {
                markSessionEstablished(now: now)
            }
        case .streamMessage where streaming:
            lastStreamPayload.removeAll(keepingCapacity: true)
            lastStreamPayload.append(contentsOf: packet.payload)
            events.append(.streamMessage(id, lastStreamPayload))
        case .streamEnd where streaming:
            calls[id] = nil
            let status = packet.status ?? .unknown
            if status == .ok {
                extraCounters.callsSucceeded += 1
                events.append(.streamEnded(id))
            } else {
                extraCounters.callsFailedByDevice += 1
                events.append(
                    .failed(
                        id,
                        RPCError(
                            code: status, message: String(decoding: packet.payload, as: UTF8.self), method: call.method,
                            isReportedByDevice: true)))
            }
        case .error:
            calls[id] = nil
            extraCounters.callsFailedByDevice += 1
            var status = packet.status ?? .unknown
            var message = String(decoding: packet.payload, as: UTF8.self)
            if status == .ok {
                // §4: ERROR's status is never OK; a device that sends one is broken.
                status = .unknown
                message = "device sent ERROR with status OK" + (message.isEmpty ? "" : ": \(message)")
            }
            events.append(.failed(id, RPCError(code: status, message: message, method: call.method, isReportedByDevice: true)))
        default:
            extraCounters.unexpectedPackets += 1
        }
    }

    /// How recently a frame must have ended for a device to count as still sending (the gap between the
    /// frames of one burst on a slow line: its poll period and its UART's FIFO, about 10 ms at 9600 baud).
    public static let deviceSendingGrace = Duration.milliseconds(20)

    /// How recently a byte of a frame still arriving must have come for the device to count as sending it: a
    /// slow line's bytes come in pieces (a USB bridge's packets, a simulator's 64-byte writes, 67 ms apart at
    /// 9600 baud), and a stray byte with no delimiter after it is no frame arriving for longer than this.
    public static let partialFrameGrace = Duration.milliseconds(200)

    /// True while the device is visibly sending: a frame ended within ``deviceSendingGrace``, or a byte of one
    /// still arriving came within ``partialFrameGrace``.
    private func deviceIsSending(now: Duration) -> Bool {
        if let frame = lastFrameAt, now - frame <= Self.deviceSendingGrace { return true }
        guard decoder.isAssemblingFrame, let byte = lastByteAt else { return false }
        return now - byte <= Self.partialFrameGrace
    }

    private mutating func expireDeadlines(now: Duration) {
        // One pass that allocates nothing while no deadline has passed: this runs on every poll.
        var expired: [CallID] = []
        var unconfirmed: [CallID] = []
        var waiting: [(CallID, Duration)] = []
        for (id, call) in calls {
            if let deadline = call.deadline, deadline <= now {
                if let limit = call.sendingLimit, now < limit, deviceIsSending(now: now) {
                    waiting.append((id, min(now + Self.deviceSendingGrace, limit)))
                } else {
                    expired.append(id)
                }
            } else if let openDeadline = call.openDeadline, openDeadline <= now {
                unconfirmed.append(id)
            }
        }
        for (id, deadline) in waiting { calls[id]?.deadline = deadline }
        guard !expired.isEmpty || !unconfirmed.isEmpty else { return }
        for id in expired.sorted() {
            guard let call = calls.removeValue(forKey: id) else { continue }
            sendCancel(id, now: now)
            if call.isServerStreaming { rememberCancelledStream(id, now: now) } else { expectAnswer(id, now: now) }
            extraCounters.deadlinesExceeded += 1
            events.append(
                .failed(id, RPCError(code: .deadlineExceeded, message: "the call's deadline passed", method: call.method)))
        }
        for id in unconfirmed.sorted() {
            guard let call = calls.removeValue(forKey: id) else { continue }
            sendCancel(id, now: now)
            rememberCancelledStream(id, now: now)
            extraCounters.streamsUnconfirmed += 1
            extraCounters.callsUnavailable += 1
            events.append(
                .failed(
                    id,
                    RPCError(
                        code: .unavailable,
                        message: "stream not confirmed within \(configuration.streamOpenTimeout)", method: call.method)))
        }
    }

    /// Sends again the reliable packets whose retransmission timeout passed (§6); forgets those of calls
    /// that ended and those that had all their transmissions.
    private mutating func retransmit(now: Duration) {
        // Nothing due (the common case, on every poll): no sorted copy of the keys.
        guard unacked.values.contains(where: { $0.due <= now }) else { return }
        for sequence in unacked.keys.sorted() {
            guard var entry = unacked[sequence], entry.due <= now else { continue }
            guard calls[entry.call] != nil, !isClosed else {
                unacked[sequence] = nil
                continue
            }
            guard entry.transmissions < configuration.maxTransmissions else {
                unacked[sequence] = nil
                extraCounters.reliableGivenUp += 1
                continue
            }
            encodeOwedAcks()  // numbered ahead of the copy: they count for the window
            guard (sendSequence &- 1) &- sequence < WireFormat.deviceDuplicateWindow else {
                // §6 (v1.2): the host has numbered 64 packets since (heartbeats and ACKs too): the device's
                // window may no longer tell this copy from a duplicate, and would acknowledge it unexecuted.
                unacked[sequence] = nil
                extraCounters.reliableGivenUp += 1
                extraCounters.reliableBeyondWindow += 1
                continue
            }
            outbound.append(contentsOf: entry.bytes)
            extraCounters.retransmissions += 1
            extraCounters.bytesSent += UInt64(entry.bytes.count)
            liveness.sent(at: now)
            entry.transmissions += 1
            entry.due = now + entry.timeout + lineAllowance(now: now)
            entry.timeout = entry.timeout * 2
            unacked[sequence] = entry
        }
    }

    private mutating func declareLinkDead(silence: Duration) {
        linkState = .dead
        roundTrip = RoundTripEstimator(floor: configuration.retransmissionTimeout)  // the next link may differ
        extraCounters.linkDeaths += 1
        failAllCalls(message: "link dead: nothing received for \(silence)")
        lastSequence = nil
        delivered.reset()
        events.append(.linkDead)
    }

    /// The host begins to close: no call starts any more (a call started while the host waits for answers
    /// still on their way would be failed at the close, and its own answer then never acknowledged).
    ///
    /// A stream's messages come at any time, so in an established session (no handshake awaiting its
    /// answer) with a stream open, or one cancelled within an answer's wait, the core also sends a barrier:
    /// a `CANCEL` for each such stream (again for one cancelled lately: a `CANCEL` is best-effort), then a
    /// `Ping` of its own when a call slot is free. The device handles packets in order and sends in order:
    /// its answer to the `Ping` comes after every message it sent before, and once it has handled the
    /// `CANCEL`s it sends none for those streams. The `Ping` is a unary call in flight
    /// (``answersAwaited(now:)``): the link stays open, reading and acknowledging, until its answer or the
    /// answer's wait, so a reliable message that crossed the close is acknowledged, not left to the device's
    /// retransmissions (`camctl-sim --strict` counts those). What it cannot cover: a `CANCEL` the line lost
    /// (the device streams on after the answer) and a device that answers later than the wait. The `Ping`'s
    /// answer goes to no caller. An open stream stays open for its consumer until the link closes, no
    /// longer awaiting its confirmation, and a copy of its `REQUEST` not yet acknowledged is not sent again
    /// (it would follow its `CANCEL`), as for a cancelled call.
    public mutating func beginClosing(now: Duration) {
        guard !isClosing else { return }
        defer { isClosing = true }
        let lately = cancelledStreams.filter { now - $0.value < answerWait }.map(\.key)
        let open = Set(calls.filter { $0.value.isServerStreaming }.map(\.key))
        guard isSessionEstablished, awaitedHandshake == nil, !open.isEmpty || !lately.isEmpty else { return }
        for id in (open.union(lately)).sorted(by: { $0.rawValue < $1.rawValue }) {
            sendCancel(id, now: now)
            calls[id]?.openDeadline = nil
        }
        for id in lately { cancelledStreams[id] = now }
        unacked = unacked.filter { !open.contains($0.value.call) }
        _ = try? startCall(method: .devicePing, request: [], now: now)
    }

    /// How long a host that closes should keep the link open for answers still on their way (nil: none): a
    /// unary call in flight, or one ended before its answer within its wait (`answerWait`), in an established
    /// session.
    /// A reliable answer that arrived after the port closed was never acknowledged: the device sent it up to 8
    /// times into nothing, and `camctl-sim --strict` counted it (`camctl record --seconds 5` at 9600 baud, a
    /// clock Ping 60 ms before the end). The client waits until this passes or nothing is awaited any more.
    public func answersAwaited(now: Duration) -> Duration? {
        guard isSessionEstablished else { return nil }
        var latest: Duration?
        if calls.values.contains(where: { !$0.isServerStreaming }) { latest = now + answerWait }
        for until in answersOnTheWay.values where until > now { latest = max(latest ?? until, until) }
        return latest
    }

    /// How long an answer may still come after its call ended: two retransmission timeouts and a largest
    /// frame's time on the line, at most 2 s.
    private var answerWait: Duration {
        min(roundTrip.timeout * 2 + line.lineTime(bytes: largestFrameWireBytes), .seconds(2))
    }

    /// A frame of the device's largest size on the wire: stuffed, and its delimiter.
    private var largestFrameWireBytes: Int { COBS.maxEncodedCount(configuration.maxFrameBytes) + 1 }

    private mutating func expectAnswer(_ call: CallID, now: Duration) {
        if answersOnTheWay.count >= configuration.maxCallsInFlight,
            let soonest = answersOnTheWay.min(by: { $0.value < $1.value })?.key
        {
            answersOnTheWay[soonest] = nil
        }
        answersOnTheWay[call] = now + answerWait
    }

    private mutating func failAllCalls(message: String) {
        for id in calls.keys.sorted() {
            guard let call = calls.removeValue(forKey: id) else { continue }
            extraCounters.callsUnavailable += 1
            events.append(.failed(id, RPCError(code: .unavailable, message: message, method: call.method)))
        }
    }

    /// What a reliable packet just queued (the last bytes of ``outbound``) waits beyond its timeout on a
    /// slow line (``LineSpeedEstimate``); zero without ``ConnectionConfiguration/adaptsRetransmissionTimeout``.
    private func lineAllowance(now: Duration) -> Duration {
        guard configuration.adaptsRetransmissionTimeout else { return .zero }
        return line.allowance(forPacketEndingAt: outbound.count, now: now)
    }

    /// The most line time a default deadline allows for (``startCall(method:request:deadline:waitOnceAcknowledged:now:)``):
    /// a 1,024-byte request and answer at 2400 baud.
    public static let maximumDeadlineLineTime: Duration = .seconds(10)

    /// When a reliable packet just queued will have left, after `now` (zero as for ``lineAllowance(now:)``).
    private func lineDeparture(now: Duration) -> Duration {
        guard configuration.adaptsRetransmissionTimeout else { return .zero }
        return line.departure(forPacketEndingAt: outbound.count, now: now)
    }

    /// Notes that stream `call` was cancelled now (see ``cancelledStreams``).
    private mutating func rememberCancelledStream(_ call: CallID, now: Duration) {
        if cancelledStreams.count >= configuration.maxCallsInFlight, cancelledStreams[call] == nil,
            let oldest = cancelledStreams.min(by: { $0.value < $1.value })?.key
        {
            cancelledStreams[oldest] = nil
        }
        cancelledStreams[call] = now
    }

    private mutating func sendCancel(_ call: CallID, now: Duration) {
        // Not while a handshake awaits its answer (§9, v1.2): the new session ends the call at the device; a
        // stream's CANCEL is sent again if its messages keep coming after (a refused handshake).
        guard !isClosed, awaitedHandshake == nil else { return }
        // A CANCEL is an envelope and a check; it always fits.
        _ = try? send(Packet(type: .cancel, callID: call.rawValue), now: now)
    }

    private mutating func sendLinkPacket(_ packet: Packet, now: Duration) {
        guard !isClosed else { return }
        _ = try? send(packet, now: now)
    }

    /// Encodes `packet` with the next sequence number and queues it; the number is used only on success.
    /// Returns the number and where the packet's wire bytes are in ``outbound`` (no allocation: the frame
    /// is built in `scratch` and stuffed straight into ``outbound``).
    @discardableResult
    private mutating func send(_ packet: Packet, now: Duration) throws(WireError) -> (sequence: UInt16, wire: Range<Int>) {
        encodeOwedAcks()
        var numbered = packet
        numbered.sequence = sendSequence
        let start = outbound.count
        try PacketEncoder.encode(
            numbered, maxFrameBytes: configuration.maxFrameBytes, appendingTo: &outbound, scratch: &scratch)
        sendSequence &+= 1
        extraCounters.packetsSent += 1
        extraCounters.bytesSent += UInt64(outbound.count - start)
        liveness.sent(at: now)
        return (numbered.sequence, start..<outbound.count)
    }

    /// Encodes the `ACK`s owed so far into ``outbound``, in the order they were owed: each a link packet
    /// with the next sequence number, its 2-byte payload written into the packet the core keeps (no
    /// allocation per ACK).
    private mutating func encodeOwedAcks() {
        guard !owedAcks.isEmpty else { return }
        for acking in owedAcks {
            ackPacket.payload[0] = UInt8(truncatingIfNeeded: acking)
            ackPacket.payload[1] = UInt8(truncatingIfNeeded: acking >> 8)
            ackPacket.sequence = sendSequence
            let start = outbound.count
            do {
                try PacketEncoder.encode(
                    ackPacket, maxFrameBytes: configuration.maxFrameBytes, appendingTo: &outbound, scratch: &scratch)
            } catch {
                continue  // an ACK always fits
            }
            sendSequence &+= 1
            extraCounters.packetsSent += 1
            extraCounters.bytesSent += UInt64(outbound.count - start)
        }
        owedAcks.removeAll(keepingCapacity: true)
    }
}
