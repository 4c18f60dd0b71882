import CameraControlTransport
import CameraControlWire

/// One frame the device sent, as the probe saw it.
public struct ReceivedFrame: Sendable {
    /// The wire bytes of the frame, delimiter included.
    public var wire: [UInt8]
    /// The decoded packet, or nil when the frame did not decode.
    public var packet: Packet?
    /// Why the frame did not decode, when it did not.
    public var error: WireError?
    /// When the probe received it.
    public var at: ContinuousClock.Instant
    /// True when an extra delimiter (a `0x00` of its own, an empty frame) came right before the frame's first
    /// byte (PROTOCOL.md §8: a heartbeat on an idle line SHOULD start with one).
    public var afterDelimiter = false
    /// True for a reliable packet whose sequence number and bytes the probe received before in this session: a
    /// retransmission (§6), never a new answer (a late ACK, on a loaded machine, rightly causes one).
    public var isRepeat = false
    /// True for a frame of the session a handshake ended: it arrived while the probe's handshake awaited its
    /// answer (the device sent it before that answer), or was still being handled when a handshake began. Never
    /// an answer to anything the probe sent in the new session (§9).
    public var ofEndedSession = false
}

/// A rule about the device's own frames that the probe checks on every frame it receives, whatever the case
/// (docs/CONFORMANCE.md, "Checked on every frame"). The case that the rule maps to (docs/PROTOCOL-RULES.tsv)
/// provokes such frames and fails on a violation seen during its run (``Probe/frameViolations``).
public enum FrameRule: String, Sendable, CaseIterable {
    /// §4 (v1.2): a sender puts call id 0 on `ACK` and `HEARTBEAT`.
    case linkPacketCallZero = "ACK and HEARTBEAT on call id 0 (PROTOCOL.md §4)"
    /// §4: encoders never produce non-minimal varints (the envelope's call id).
    case minimalCallID = "minimal call id varints (PROTOCOL.md §4)"
    /// §2 (v1.1): canonical COBS, no `0x01` after a final full 254-byte block.
    case canonicalCOBS = "canonical COBS (PROTOCOL.md §2)"
    /// §7 (v1.2): in a session at 1.0 no empty `RESPONSE` confirms a server stream.
    case noStreamConfirmationAt10 = "no stream confirmation in a 1.0 session (PROTOCOL.md §7)"
    /// §9 (v1.2): every input event's source other than the Camera Control is listed in `Capabilities.buttons`.
    case sourcesListed = "input sources listed in Capabilities.buttons (PROTOCOL.md §9)"
    /// §2 (v1.2): the `HandshakeResponse` fits the device's own `max_frame_bytes`.
    case handshakeWithinSize = "HandshakeResponse within max_frame_bytes (PROTOCOL.md §2)"
}

/// A device frame that broke a ``FrameRule``.
public struct FrameViolation: Sendable {
    /// The rule.
    public var rule: FrameRule
    /// What was wrong, in words.
    public var message: String
    /// The frame.
    public var frame: ReceivedFrame
}

/// A raw protocol peer for conformance cases: it writes exactly the bytes a case asks for and records every
/// frame the device sends, with its wire bytes (docs/CONFORMANCE.md).
///
/// Unlike the host stack (`RPCClient`), the probe never hides anything: a case chooses sequence numbers,
/// call ids and flags, may send malformed frames, and sees every packet, duplicates and retransmissions
/// included. By default it acknowledges the device's reliable packets and, once ``heartbeats`` is on,
/// sends a `HEARTBEAT` whenever it has sent nothing for the device's heartbeat interval.
public actor Probe {
    /// The transport to the device.
    public nonisolated let transport: any ByteTransport
    /// Frames received and not yet taken by a case.
    private(set) var inbox: [ReceivedFrame] = []
    /// Bytes of the frame being received.
    private var partial: [UInt8] = []
    /// The next sequence number the probe sends.
    public var sequence: UInt16 = 0
    /// The next call id ``nextCallID()`` hands out. Ids below ``firstCallID`` are the cases' own (one-byte ids
    /// for frames of an exact size, fixed ids): a late answer to one of them, still on a slow line when the
    /// next case starts, can never be taken for that case's handshake.
    private var callID: UInt32 = Probe.firstCallID

    /// The first call id ``nextCallID()`` hands out.
    public static let firstCallID: UInt32 = 1_000
    /// When true (the default), reliable device packets are acknowledged as they arrive.
    public private(set) var acknowledges = true
    /// When true, the probe keeps the link alive with heartbeats.
    public private(set) var heartbeats = false {
        didSet {
            if heartbeats && !oldValue {
                quietSince = ContinuousClock.now
                deviceQuietSince = quietSince
            }
        }
    }
    /// The longest the probe sent nothing, by its own clock, while its heartbeats were on (since
    /// ``resetLongestSilence()``): how long the host itself left the link silent. A machine too busy to run
    /// the probe's ticker shows here, so a session the device ended for 4 intervals of silence can be laid at
    /// the host's door, or not (``ConformanceSuite``).
    public private(set) var longestSilence: Duration = .zero
    /// The longest the probe received nothing from the device, by its own clock, while its heartbeats were on
    /// (since ``resetLongestSilence()``). A device in a session sends at least a `HEARTBEAT` every interval
    /// (§8), so a gap of several intervals is a stall: of the device, or of the machine that runs it (a
    /// simulator starved by a loaded machine sees the host's bytes of the stall late, all at once).
    public private(set) var longestDeviceSilence: Duration = .zero
    private var deviceQuietSince = ContinuousClock.now
    /// True while a case holds the heartbeats back (``setHeartbeatsHeld(_:)``).
    private var heartbeatsHeld = false
    /// The largest lateness of the probe's own 5 ms ticker (since ``resetSchedulingDelay()``): how late this
    /// machine ran the probe. A frame's arrival time (``ReceivedFrame/at``) can be late by as much, so
    /// timing checks widen their margins by it.
    public private(set) var schedulingDelay: Duration = .zero
    private var quietSince = ContinuousClock.now
    /// The device's heartbeat interval (from its handshake; 50 ms until then).
    public private(set) var heartbeatInterval: Duration = .milliseconds(50)
    /// The last handshake response, when a handshake succeeded.
    public private(set) var session: HandshakeResponse?
    /// The sequence numbers of the reliable packets received in this session (since the last ``handshake``),
    /// so that a case can tell a retransmission (its ACK came late) from a new packet.
    public private(set) var reliableSeen: Set<UInt16> = []
    /// When the probe first sent an ACK for each reliable sequence number of this session (since the last
    /// ``handshake``): a copy the device sends long after it had the ACK is a retransmission it should not
    /// have made.
    public private(set) var ackSent: [UInt16: ContinuousClock.Instant] = [:]
    /// The bytes of each reliable sequence number's first copy in this session (``ReceivedFrame/isRepeat``).
    private var reliableFirstWire: [UInt16: [UInt8]] = [:]
    /// When each reliable sequence number of this session first arrived (since the last ``handshake``).
    public private(set) var reliableFirstSeen: [UInt16: ContinuousClock.Instant] = [:]
    /// Every ``call(_:_:within:)`` answered since the last ``handshake``: when its request went out and when its
    /// answer arrived. Barriers after the fact: the device reads its input in order and answers in order, so
    /// what arrives after an answer was sent after the device had read everything written before that
    /// request, however late a loaded machine made either side.
    public private(set) var answeredCalls: [(sent: ContinuousClock.Instant, answered: ContinuousClock.Instant)] = []
    /// When the probe last sent each byte string by ``sendRaw(_:)`` (since the last ``handshake``): the moment
    /// a case's frame went out, to tell answers to it from copies of packets received before.
    public private(set) var sentAt: [[UInt8]: ContinuousClock.Instant] = [:]
    /// The first violation of each ``FrameRule`` since ``resetFrameViolations()`` (the suite resets them
    /// before each case's handshake).
    public private(set) var frameViolations: [FrameRule: FrameViolation] = [:]
    /// The method of each call id the probe sent a `REQUEST` on with ``send(_:keepSequence:)``: what the device's
    /// packets on that call are (a stream's messages, a handshake's response).
    private var requestMethods: [UInt32: MethodID] = [:]
    /// The call id of the probe's handshake while it awaits its answer (``handshake(major:minor:hostName:)``):
    /// cleared by the answer's arrival.
    private var awaitedHandshake: UInt32?
    /// Counts the probe's handshakes: a frame whose handling spans one (an ACK's send awaited) is the ended session's.
    private var handshakesStarted = 0
    /// The negotiated minor version and the announced buttons of the session, from the last handshake
    /// `RESPONSE` received (whoever asked for it).
    private var sessionMinor: UInt32 = 0
    private var sessionButtons: Set<InputSource> = []
    /// True when the last byte received was a delimiter that ended an empty frame (an extra `0x00`).
    private var lastWasExtraDelimiter = false
    /// Every byte the probe has sent and received (for reports).
    public private(set) var bytesSent = 0
    /// Bytes received from the device so far, whatever they were (0: the device never said anything).
    public private(set) var bytesReceived = 0
    /// How many times the probe has sent (each send is one frame, or a run a case built by hand).
    public private(set) var framesSent = 0
    private var lastSend = ContinuousClock.now
    /// When the bytes of the last send will have left, on a line of known speed, less two heartbeat intervals
    /// (``lastSend`` when that is later, and on a line of unknown speed).
    private var lastSendLeaves = ContinuousClock.now
    /// The line's speed, learnt from the device's long frames that arrive in pieces (the host's rule,
    /// ``LineSpeedEstimate``), timed from ``epoch``.
    private var line = LineSpeedEstimate()
    private let epoch = ContinuousClock.now
    private var reader: Task<Void, Never>?
    /// The last write handed to the transport: each write waits for the one before (``sendRaw(_:)``).
    private var lastWrite: Task<TransportError?, Never>?
    private var ticker: Task<Void, Never>?
    private var closed = false

    /// A probe on `transport`; call ``start()`` before anything else.
    public init(transport: any ByteTransport) {
        self.transport = transport
    }

    /// Starts reading from the transport and the heartbeat ticker.
    public func start() {
        guard reader == nil else { return }
        let transport = self.transport
        reader = Task { [weak self] in
            while !Task.isCancelled {
                guard let bytes = try? await transport.receive() else { break }
                await self?.ingest(bytes)
            }
            await self?.markClosed()
        }
        ticker = Task { [weak self] in
            while !Task.isCancelled {
                let due = ContinuousClock.now + .milliseconds(5)
                try? await Task.sleep(until: due)
                await self?.tick(due: due)
            }
        }
    }

    /// Stops the reader and the ticker (the transport stays open; close it separately).
    public func stop() {
        reader?.cancel()
        ticker?.cancel()
        reader = nil
        ticker = nil
    }

    private func markClosed() { closed = true }

    /// True once the transport reported its end.
    public var isClosed: Bool { closed }

    private func tick(due: ContinuousClock.Instant) async {
        schedulingDelay = max(schedulingDelay, ContinuousClock.now - due)
        // Counted from when the last bytes leave: on a slow line a heartbeat queued behind a long frame would
        // only hold back what the case sends next (15 s of garbage at 9600 baud would gather 5 s of them).
        guard heartbeats, !heartbeatsHeld, ContinuousClock.now - lastSendLeaves >= heartbeatInterval / 2 else { return }
        _ = try? await send(Packet(type: .heartbeat, callID: 0))
    }

    private func ingest(_ bytes: [UInt8]) async {
        let now = ContinuousClock.now
        bytesReceived += bytes.count
        let continuing = !partial.isEmpty
        var completedFrames = 0
        defer {
            line.read(
                bytes.count, at: now - epoch, continuing: continuing, completedFrames: completedFrames,
                open: !partial.isEmpty)
        }
        for byte in bytes {
            partial.append(byte)
            guard byte == 0 else {
                if partial.count > 16_384 { partial.removeAll() }
                continue
            }
            let wire = partial
            partial.removeAll()
            completedFrames += 1
            guard wire.count > 1 else {  // an empty frame: an extra delimiter
                lastWasExtraDelimiter = true
                continue
            }
            var frame = ReceivedFrame(wire: wire, packet: nil, error: nil, at: now)
            frame.afterDelimiter = lastWasExtraDelimiter
            lastWasExtraDelimiter = false
            var unstuffed: [UInt8] = []
            do {
                unstuffed = try COBS.decode(wire.dropLast())
                frame.packet = try PacketDecoder.decode(unstuffed: unstuffed)
            } catch {
                frame.error = error
            }
            // A gap that ends in "no session" is the device's silence after it ended the session, not a stall.
            let noSession = frame.packet.map { $0.type == .error && $0.status == .failedPrecondition } ?? false
            if heartbeats && !noSession { longestDeviceSilence = max(longestDeviceSilence, now - deviceQuietSince) }
            deviceQuietSince = now
            // §9 (v1.2): while the handshake awaits its answer, a reliable packet other than that answer is the
            // old session's. The device forgets it when it accepts the handshake, and an ACK of its number,
            // reaching the device after the handshake, would free the new session's packet of that number;
            // nor is it a packet of the session the answer starts.
            let handshakes = handshakesStarted
            if let call = awaitedHandshake {
                let answers = frame.packet.map { $0.callID == call && ($0.type == .response || $0.type == .error) } ?? false
                if answers {
                    awaitedHandshake = nil  // what follows it is the new session's (or, refused, the old one's again)
                } else {
                    frame.ofEndedSession = true
                }
            }
            if let packet = frame.packet, packet.isReliable, !frame.ofEndedSession {
                reliableSeen.insert(packet.sequence)
                if reliableFirstSeen[packet.sequence] == nil { reliableFirstSeen[packet.sequence] = now }
                if let first = reliableFirstWire[packet.sequence] {
                    frame.isRepeat = first == wire
                } else {
                    reliableFirstWire[packet.sequence] = wire
                }
            }
            // The ACK goes out before a case can see the frame: a case that answers it at once (sends a
            // duplicate request, say) must not overtake the ACK on the wire.
            if acknowledges, let packet = frame.packet, packet.isReliable, !frame.ofEndedSession {
                let ack = Packet(
                    type: .ack, callID: 0, payload: [UInt8(packet.sequence & 0xFF), UInt8(packet.sequence >> 8)])
                if ackSent[packet.sequence] == nil { ackSent[packet.sequence] = ContinuousClock.now }
                _ = try? await send(ack)
                // A handshake that began while the ACK was sent cleared the session's tables and inbox: this
                // frame is the ended session's.
                if handshakesStarted != handshakes { frame.ofEndedSession = true }
            }
            // After the ACK, which it must not delay; before a case can see the frame.
            if frame.packet != nil { checkRules(frame, unstuffed: unstuffed) }
            inbox.append(frame)
        }
    }

    // MARK: Rules checked on every frame

    /// Starts collecting ``frameViolations`` afresh.
    public func resetFrameViolations() { frameViolations = [:] }

    private func violated(_ rule: FrameRule, _ message: String, _ frame: ReceivedFrame) {
        if frameViolations[rule] == nil { frameViolations[rule] = FrameViolation(rule: rule, message: message, frame: frame) }
    }

    /// Checks a decoded device frame against every ``FrameRule``, and follows the session's version and buttons.
    private func checkRules(_ frame: ReceivedFrame, unstuffed: [UInt8]) {
        guard let packet = frame.packet else { return }
        // The one encoding of these bytes: a frame that decodes to them but differs is not canonical (§2).
        if COBS.encode(unstuffed) + [0] != frame.wire {
            violated(.canonicalCOBS, "a frame's COBS is not the canonical encoding of its bytes", frame)
        }
        // The call id's varint starts after type and sequence (§4); its last byte has the high bit clear.
        var length = 1
        while 3 + length - 1 < unstuffed.count && unstuffed[3 + length - 1] & 0x80 != 0 { length += 1 }
        var minimal = 1
        while packet.callID >> (7 * UInt32(minimal)) != 0 && minimal < 5 { minimal += 1 }
        if length != minimal {
            violated(
                .minimalCallID, "call id \(packet.callID) is written in \(length) varint bytes, not \(minimal)", frame)
        }
        let method = requestMethods[packet.callID]
        switch packet.type {
        case .ack, .heartbeat:
            if packet.callID != 0 { violated(.linkPacketCallZero, "\(packet.type) on call id \(packet.callID)", frame) }
        case .response where method == .deviceHandshake:
            guard let response = try? HandshakeResponse(serializedBytes: packet.payload) else { break }
            sessionMinor = response.negotiatedVersion?.minor ?? 0
            let capabilities = response.capabilities ?? Capabilities()
            sessionButtons = Set(capabilities.buttons)
            if unstuffed.count > Int(capabilities.maxFrameBytes) {
                violated(
                    .handshakeWithinSize,
                    "the HandshakeResponse's frame is \(unstuffed.count) bytes unstuffed; it announces max_frame_bytes "
                        + "\(capabilities.maxFrameBytes)", frame)
            }
        case .response where method?.isServerStreaming == true && packet.payload.isEmpty && sessionMinor == 0:
            violated(
                .noStreamConfirmationAt10, "an empty RESPONSE on the server stream of call \(packet.callID) in a 1.0 session",
                frame)
        case .streamMessage where method == .inputStreamInputEvents:
            guard let event = try? InputEvent(serializedBytes: packet.payload) else { break }
            if event.source != .cameraControl && event.source != .unspecified && !sessionButtons.contains(event.source) {
                let listed = sessionButtons.map(\.description).sorted().joined(separator: ", ")
                violated(
                    .sourcesListed, "a \(event.kind) event from \(event.source), not in Capabilities.buttons [\(listed)]", frame)
            }
        default:
            break
        }
    }

    // MARK: The line

    /// The line's speed in bytes a second, once a long frame of the device arrived in pieces (nil on a line
    /// whose frames arrive whole: a fast one, or a USB CDC port).
    public var lineBytesPerSecond: Int? { line.bytesPerSecond }

    /// How long `bytes` take on the line at ``lineBytesPerSecond`` (zero while it is not known): what a case
    /// adds to a wait for a frame that must first cross a slow line, and how long a frame it sends keeps the
    /// line (§8 counts a host's silence to the end of its frames, not their start).
    public func lineTime(bytes: Int) -> Duration { line.lineTime(bytes: bytes) }

    // MARK: Settings

    /// Turns automatic acknowledgement of reliable device packets on or off.
    public func setAcknowledges(_ on: Bool) { acknowledges = on }

    /// Turns the probe's heartbeats on or off.
    public func setHeartbeats(_ on: Bool) { heartbeats = on }

    /// Holds the heartbeats back (or lets them go again) while keeping them on: a case that sends one frame
    /// in pieces must not have a `HEARTBEAT` land in its middle, and its gaps between pieces still count in
    /// ``longestSilence`` (so a probe the machine stalled between two pieces is seen as one).
    public func setHeartbeatsHeld(_ held: Bool) { heartbeatsHeld = held }

    /// Starts measuring ``schedulingDelay`` afresh.
    public func resetSchedulingDelay() { schedulingDelay = .zero }

    /// Starts measuring ``longestSilence`` and ``longestDeviceSilence`` afresh.
    public func resetLongestSilence() {
        longestSilence = .zero
        longestDeviceSilence = .zero
        quietSince = ContinuousClock.now
        deviceQuietSince = quietSince
    }

    /// Skips `count` sequence numbers (the device should count them as lost).
    public func skip(_ count: UInt16) { sequence &+= count }

    /// The probe's next sequence number, taken (read and advanced in one step, so no heartbeat or ACK of the
    /// probe's own sends it too).
    public func takeSequence() -> UInt16 {
        defer { sequence &+= 1 }
        return sequence
    }

    /// Sends the frame whose unstuffed body (without its check) `body` builds from a sequence number, on the
    /// probe's next number, taken and sent in one step; returns the wire bytes. Reading ``sequence`` and
    /// skipping it in two steps lets the heartbeat ticker send on that number in between, and the device then
    /// rightly drops the case's frame as a duplicate (§6): on a loaded machine a case that expects silence
    /// passed against a device that would have answered.
    @discardableResult
    public func sendFrame(_ body: (UInt16) -> [UInt8]) async throws -> [UInt8] {
        let wire = Self.frame(body: body(sequence))
        sequence &+= 1
        try await sendRaw(wire)
        return wire
    }

    /// A fresh call id (never 0).
    public func nextCallID() -> UInt32 {
        defer { callID = callID == UInt32.max ? Self.firstCallID : callID + 1 }
        return callID
    }

    // MARK: Sending

    /// Sends `packet` with the probe's next sequence number (unless `keepSequence`), and returns its wire bytes.
    @discardableResult
    public func send(_ packet: Packet, keepSequence: Bool = false) async throws -> [UInt8] {
        var packet = packet
        if !keepSequence {
            packet.sequence = sequence
            sequence &+= 1
        }
        if packet.type == .request, let method = packet.address { requestMethods[packet.callID] = method }
        let wire = try PacketEncoder.encode(packet)
        try await sendRaw(wire)
        return wire
    }

    /// Sends bytes exactly as given.
    public func sendRaw(_ bytes: [UInt8]) async throws {
        lastSend = ContinuousClock.now
        framesSent += 1
        if bytes.count > 2 && bytes.first != 0 { sentAt[bytes] = lastSend }
        line.wrote(bytes.count, at: lastSend - epoch)
        // Two intervals early: the rate learnt is the line's or below it (a late read only lowers it), so the
        // modelled end may come after the real one; heartbeats starting before it (at most four queue
        // behind the bytes) keep the device's dead timeout (4 intervals) from running out after them.
        lastSendLeaves = max(lastSend, epoch + line.lineFreeAt - heartbeatInterval * 2)
        if heartbeats {
            longestSilence = max(longestSilence, lastSend - quietSince)
            quietSince = lastSendLeaves
        }
        bytesSent += bytes.count
        // In the order of the calls, whatever the transport's `send` suspends on: a send awaited here releases
        // the actor, and a later one (a heartbeat, an ACK, the next request) must not reach the line first. A
        // heartbeat of the old session written after the next handshake moved the device's window past the new
        // session's numbers, which it then dropped as duplicates (a device deaf with its session alive).
        let previous = lastWrite
        let transport = self.transport
        let write = Task { () -> TransportError? in
            _ = await previous?.value
            do throws(TransportError) {
                try await transport.send(bytes)
                return nil
            } catch {
                return error
            }
        }
        lastWrite = write
        if let error = await write.value { throw error }
    }

    /// The wire bytes of an unstuffed frame with its CRC appended: `COBS(body ‖ CRC) 00`.
    public static func frame(body: [UInt8]) -> [UInt8] {
        let check = CRC16.checksum(body)
        return COBS.encode(body + [UInt8(check & 0xFF), UInt8(check >> 8)]) + [0]
    }

    // MARK: Receiving

    /// Waits up to `timeout` for a frame matching `match`, removing it from the inbox; nil when none came.
    public func next(
        within timeout: Duration = .seconds(2), where match: @Sendable (ReceivedFrame) -> Bool = { _ in true }
    ) async -> ReceivedFrame? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let index = inbox.firstIndex(where: match) {
                return inbox.remove(at: index)
            }
            if ContinuousClock.now >= deadline || closed { return nil }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Waits up to `timeout` for a packet on `callID` that is not an ACK or HEARTBEAT.
    public func reply(to callID: UInt32, within timeout: Duration = .seconds(2)) async -> ReceivedFrame? {
        await next(within: timeout) { $0.packet?.callID == callID && $0.packet?.type != .ack }
    }

    /// Everything received during the next `duration` (and before), removed from the inbox.
    public func collect(for duration: Duration) async -> [ReceivedFrame] {
        try? await Task.sleep(for: duration)
        return drain()
    }

    /// Everything received during the next `duration` (and before), removed from the inbox; when fewer than
    /// `count` frames matching `match` have come by then, it waits on for them, up to `patience` more. A
    /// window on the host's clock is no measure of a device's rate: a device that a loaded machine (or QEMU,
    /// starved of the CPU) runs late sends what the window expected later, not never. The device's rate is
    /// judged by its own timestamps.
    public func collect(
        for duration: Duration, atLeast count: Int, patience: Duration = .seconds(2),
        matching match: @Sendable (ReceivedFrame) -> Bool
    ) async -> [ReceivedFrame] {
        try? await Task.sleep(for: duration)
        let deadline = ContinuousClock.now + patience
        while inbox.count(where: match) < count, ContinuousClock.now < deadline, !closed {
            try? await Task.sleep(for: .milliseconds(5))
        }
        return drain()
    }

    /// Sends a Ping as a barrier and returns, removed from the inbox, everything received before its answer,
    /// and the answer. A device answers in order, so whatever it answers to what was sent before the Ping
    /// arrives before this, however late a loaded machine makes both, and whatever it sent after answering
    /// stays in the inbox. Nil frames when the Ping was not answered within `timeout` (what came meanwhile
    /// stays in the inbox), with the Ping's wire bytes. The Ping echoes `payload` (none by default).
    public func framesBeforeBarrier(
        echoing payload: [UInt8] = [], within timeout: Duration = Probe.answerWait
    ) async throws -> (frames: [ReceivedFrame]?, ping: [UInt8], answer: ReceivedFrame?) {
        let (id, wire) = try await request(.devicePing, PingRequest(payload: payload).serializedBytes())
        let deadline = ContinuousClock.now + timeout
        while true {
            if let index = inbox.firstIndex(where: { $0.packet?.callID == id && $0.packet?.type != .ack }) {
                let before = Array(inbox[..<index])
                let answer = inbox[index]
                inbox.removeSubrange(...index)
                return (before, wire, answer)
            }
            if ContinuousClock.now >= deadline || closed { return (nil, wire, nil) }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Removes and returns everything received so far.
    @discardableResult
    public func drain() -> [ReceivedFrame] {
        defer { inbox.removeAll() }
        return inbox
    }

    // MARK: Sessions and calls

    /// Sends a REQUEST on a new call id and returns that id and the request's wire bytes.
    public func request(
        _ method: MethodID, _ payload: [UInt8] = [], reliable: Bool = false, callID: UInt32? = nil
    ) async throws -> (callID: UInt32, wire: [UInt8]) {
        let id = callID ?? nextCallID()
        let wire = try await send(
            Packet(type: .request, isReliable: reliable, callID: id, address: method, payload: payload))
        return (id, wire)
    }

    /// How long a call waits for its answer by default: 5.1 s, the horizon of §6's reliable layer (8
    /// transmissions, the timeout doubling from 20 ms), within which a reliable `RESPONSE` may still come. The
    /// spec sets no answer time, and on a loaded machine a device (the simulator, or the probe itself) runs
    /// late: the suite judges what a device answers, not how fast, and "no answer" means none in that time.
    public static let answerWait: Duration = .milliseconds(5100)

    /// How long a handshake waits for its response: 3 s, a host's default handshake deadline (§9).
    public static let handshakeWait: Duration = .seconds(3)

    /// A unary call: the REQUEST (on `callID`, or a new call id), then the first packet on its call id (nil
    /// when none came in time).
    public func call(
        _ method: MethodID, _ payload: [UInt8] = [], callID: UInt32? = nil, within timeout: Duration = Probe.answerWait
    ) async throws -> (request: [UInt8], reply: ReceivedFrame?) {
        let (id, wire) = try await request(method, payload, callID: callID)
        // This request's own send time: `lastSend` may already be a later send's (an ACK the reader sent while
        // this one's write was under way), which would make the request look written after that ACK.
        let sent = sentAt[wire] ?? lastSend
        let answer = await reply(to: id, within: timeout)
        if let answer { answeredCalls.append((sent, answer.at)) }
        return (wire, answer)
    }

    /// Handshakes with `version` (1.0 by default); on success stores the session, turns heartbeats on and
    /// returns the response. Throws a ``ConformanceFailure`` when the device does not answer with a RESPONSE.
    /// While it waits, frames other than its answer are the old session's (§9, v1.2): its reliable packets are
    /// not acknowledged nor counted as this session's (``reliableSeen``, ``ackSent``), and every such frame is
    /// marked ``ReceivedFrame/ofEndedSession``.
    @discardableResult
    public func handshake(
        major: UInt32 = 1, minor: UInt32 = 0, hostName: String = "camctl conformance"
    ) async throws -> HandshakeResponse {
        drain()
        reliableSeen.removeAll()  // the device numbers the new session from 0
        ackSent.removeAll()
        reliableFirstSeen.removeAll()
        reliableFirstWire.removeAll()
        sentAt.removeAll()
        answeredCalls.removeAll()
        sequence = 0  // a (re)connecting host restarts its numbering
        handshakesStarted += 1
        let body = HandshakeRequest(hostVersion: ProtocolVersion(major: major, minor: minor), hostName: hostName)
        // Until the answer, the old session's reliable packets are neither acknowledged nor counted (``ingest``).
        let handshakeCall = nextCallID()
        awaitedHandshake = handshakeCall
        defer { awaitedHandshake = nil }
        let (wire, reply) = try await call(
            .deviceHandshake, body.serializedBytes(), callID: handshakeCall, within: Probe.handshakeWait)
        guard let reply, let packet = reply.packet, packet.type == .response else {
            throw ConformanceFailure(
                "the handshake was not answered with a RESPONSE", sent: wire, seen: reply?.wire,
                expected: "RESPONSE HandshakeResponse on call \(Self.callIDOf(wire))")
        }
        let response = try HandshakeResponse(serializedBytes: packet.payload)
        session = response
        let interval = Int(response.capabilities?.heartbeatIntervalMillis ?? 50)
        heartbeatInterval = .milliseconds(interval == 0 ? 50 : interval)
        heartbeats = true
        return response
    }

    /// The device's counters (`DiagnosticsService/GetCounters`), answered within `timeout`.
    public func counters(within timeout: Duration = Probe.answerWait) async throws -> Counters {
        let sent = ContinuousClock.now
        let (wire, reply) = try await call(.diagnosticsGetCounters, within: timeout)
        guard let packet = reply?.packet, packet.type == .response else {
            throw ConformanceFailure(
                "GetCounters was not answered" + unansweredContext(reply, since: sent), sent: wire, seen: reply?.wire,
                expected: "RESPONSE Counters")
        }
        return try Counters(serializedBytes: packet.payload)
    }

    /// Ping with `payload`; the RESPONSE, or a failure naming what came instead.
    @discardableResult
    public func ping(_ payload: [UInt8] = [], within timeout: Duration = Probe.answerWait) async throws -> PingResponse {
        let sent = ContinuousClock.now
        let (wire, reply) = try await call(.devicePing, PingRequest(payload: payload).serializedBytes(), within: timeout)
        guard let packet = reply?.packet, packet.type == .response else {
            throw ConformanceFailure(
                "Ping was not answered with a RESPONSE" + unansweredContext(reply, since: sent), sent: wire, seen: reply?.wire,
                expected: "RESPONSE PingResponse on call \(Self.callIDOf(wire))")
        }
        return try PingResponse(serializedBytes: packet.payload)
    }

    /// For a request that got no answer at all (`reply` nil): what the device sent meanwhile, which tells a
    /// silent (stalled, or gone) device from one that kept its link alive and dropped or lost the request.
    /// The frames stay in the inbox. Empty when a reply came (the failure shows it).
    private func unansweredContext(_ reply: ReceivedFrame?, since sent: ContinuousClock.Instant) -> String {
        guard reply == nil else { return "" }
        let meanwhile = inbox.filter { $0.at >= sent }
        return "; meanwhile (the request sent at +0 ms) the device sent " + Self.summary(meanwhile, since: sent)
    }

    /// `frames` in a few words for a failure's message: how many of each packet type, and when the first and
    /// last came after `start` ("nothing" when none did).
    public static func summary(_ frames: [ReceivedFrame], since start: ContinuousClock.Instant) -> String {
        guard let first = frames.first, let last = frames.last else { return "nothing" }
        var counts: [String: Int] = [:]
        for frame in frames { counts[frame.packet.map { "\($0.type)" } ?? "undecodable", default: 0] += 1 }
        let kinds = counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        func millis(_ instant: ContinuousClock.Instant) -> String {
            let elapsed = instant - start
            let value = elapsed.components.seconds * 1_000 + elapsed.components.attoseconds / 1_000_000_000_000_000
            return value < 0 ? "\(value) ms" : "+\(value) ms"
        }
        // The answers among them, with their calls: an answer to another call than the one awaited tells a
        // device that mixed calls up from one that answered late (a first STM32F4 run under QEMU, beside the
        // micro:bit's, left GetCounters unanswered while 7 RESPONSEs came, and said no more).
        // Stream messages are left out: an open event stream's would hide the answers behind the "…".
        let answers = frames.compactMap { frame -> String? in
            guard let packet = frame.packet, [.response, .error, .streamEnd].contains(packet.type) else { return nil }
            return "\(packet.type) call \(packet.callID) seq \(packet.sequence) at \(millis(frame.at))"
        }
        let listed = answers.prefix(8).joined(separator: ", ") + (answers.count > 8 ? ", …" : "")
        return "\(kinds) (the first at \(millis(first.at)), the last at \(millis(last.at)))"
            + (answers.isEmpty ? "" : ": \(listed)")
    }

    /// The call id of a REQUEST's wire bytes (for messages).
    static func callIDOf(_ wire: [UInt8]) -> UInt32 {
        guard let body = try? COBS.decode(wire.dropLast()), let packet = try? PacketDecoder.decode(unstuffed: body)
        else { return 0 }
        return packet.callID
    }
}
