import CameraControlWire

/// The id of one call, chosen by the host: non-zero and unique among the calls in flight
/// (docs/PROTOCOL.md §4).
public struct CallID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The id as it travels in the envelope.
    public var rawValue: UInt32
    /// Wraps a wire id.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `call <n>`.
    public var description: String { "call \(rawValue)" }
    /// Orders by the wire value.
    public static func < (lhs: CallID, rhs: CallID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Settings of a ``ConnectionCore``.
public struct ConnectionConfiguration: Hashable, Sendable {
    /// The largest unstuffed frame the host sends, check included: the device's
    /// `Capabilities.max_frame_bytes`. Until the handshake tells otherwise it is 128, which every device
    /// accepts. (Received frames are always accepted up to 4093 bytes, as §2 requires of a host.)
    public var maxFrameBytes: Int
    /// How long the host may stay silent before it sends a `HEARTBEAT`; the device's
    /// `Capabilities.heartbeat_interval_ms` once known (§8).
    public var heartbeatInterval: Duration
    /// How many heartbeat intervals without a received packet declare the link dead (4 in v1).
    public var deadIntervals: Int
    /// The deadline of a call started without one: unary calls get this, streams get none. On a line whose
    /// speed the core has learnt (``ConnectionCore/line``) the call also gets its request's time to leave and
    /// a largest frame's time to come back (up to 2.1 s more at 9600 baud with 1,024-byte frames, at most 10 s).
    public var defaultUnaryDeadline: Duration
    /// The most calls the host keeps in flight; one more is refused with `RESOURCE_EXHAUSTED`.
    public var maxCallsInFlight: Int
    /// The first retransmission timeout of a reliable packet (a `REQUEST`); it doubles with every try
    /// (§6: 20 ms). With ``adaptsRetransmissionTimeout`` the least one.
    public var retransmissionTimeout: Duration
    /// Start a request's retransmissions after the round trips measured on the link when they call for
    /// more than ``retransmissionTimeout`` (``RoundTripEstimator``: a slow line, where 20 ms is less than
    /// a request and its `ACK` take on the wire). False: always after ``retransmissionTimeout``.
    public var adaptsRetransmissionTimeout: Bool
    /// Transmissions of a reliable packet in all, the first one included (§6: 8).
    public var maxTransmissions: Int
    /// How long a server stream may wait for its confirmation in a session at minor 1 or later before
    /// it fails with `UNAVAILABLE` (§7: 1 s); on a line whose speed the core has learnt, longer by the line's
    /// time as for ``defaultUnaryDeadline``.
    public var streamOpenTimeout: Duration
    /// Answer each device `HEARTBEAT` with the host's own once half an interval passed since the host last
    /// sent, and, while the device's heartbeats are coming, allow the host's own next heartbeat a quarter
    /// interval more (§8, v1.1): both sides wake once per interval instead of twice. False: heartbeats on
    /// the host's own timer only, one interval after the host last sent.
    public var answersHeartbeats: Bool
    /// The call id of the first call (the handshake's): a host that reconnects gives its new session's
    /// handshake a call id other than the last session's, so that a device whose session outlived the link's
    /// loss does not take it for that handshake's retransmission (§9). Ids after it count up from it.
    public var firstCallID: UInt32

    /// The link-dead timeout: ``deadIntervals`` × ``heartbeatInterval`` (200 ms by default).
    public var deadTimeout: Duration { heartbeatInterval * deadIntervals }

    /// Settings with v1's defaults: 128-byte frames, 50 ms heartbeats, dead after 4 intervals, unary
    /// deadline 2 s, 64 calls in flight, retransmissions after 20 ms or the round trips measured when
    /// longer (doubling, 8 transmissions at most), streams confirmed within 1 s, device heartbeats
    /// answered, the first call id 1.
    public init(
        maxFrameBytes: Int = WireFormat.minMaxFrameBytes,
        heartbeatInterval: Duration = .milliseconds(50),
        deadIntervals: Int = 4,
        defaultUnaryDeadline: Duration = .seconds(2),
        maxCallsInFlight: Int = 64,
        retransmissionTimeout: Duration = .milliseconds(20),
        adaptsRetransmissionTimeout: Bool = true,
        maxTransmissions: Int = 8,
        streamOpenTimeout: Duration = .seconds(1),
        answersHeartbeats: Bool = true,
        firstCallID: UInt32 = 1
    ) {
        self.maxFrameBytes = maxFrameBytes
        self.heartbeatInterval = heartbeatInterval
        self.deadIntervals = deadIntervals
        self.defaultUnaryDeadline = defaultUnaryDeadline
        self.maxCallsInFlight = maxCallsInFlight
        self.retransmissionTimeout = retransmissionTimeout
        self.adaptsRetransmissionTimeout = adaptsRetransmissionTimeout
        self.maxTransmissions = max(1, maxTransmissions)
        self.streamOpenTimeout = streamOpenTimeout
        self.answersHeartbeats = answersHeartbeats
        self.firstCallID = max(1, firstCallID)
    }
}

/// Something a ``ConnectionCore`` reports; drained with ``ConnectionCore/takeEvents()``.
///
/// Every call ends with exactly one of ``response(_:_:)``, ``streamEnded(_:)`` or ``failed(_:_:)``;
/// nothing is reported for a call after that.
public enum ConnectionEvent: Hashable, Sendable {
    /// A unary call succeeded with this response payload (not yet decoded).
    case response(CallID, [UInt8])
    /// One message of a server stream (payload not yet decoded).
    case streamMessage(CallID, [UInt8])
    /// A server stream ended with status `OK`.
    case streamEnded(CallID)
    /// A call ended with an error: an `ERROR` or non-OK `STREAM_END` from the device, a deadline, a
    /// cancellation or the loss of the link.
    case failed(CallID, RPCError)
    /// The session is established (a handshake succeeded or ``ConnectionCore/markSessionEstablished(heartbeatInterval:maxFrameBytes:streamsConfirmed:now:)``
    /// was called): heartbeats and the liveness timer run from now on.
    case sessionEstablished
    /// Nothing was received for the dead timeout; every call failed with `UNAVAILABLE`. A new handshake
    /// may start a new session on the same link.
    case linkDead
    /// The link was closed (``ConnectionCore/closeLink(now:reason:)``); every call failed with `UNAVAILABLE`.
    case linkClosed
    /// The device sent an `ERROR` on call id 0 (about the link, not a call). Not reported since v1.1,
    /// where such a packet is an envelope error (``ConnectionCounters/envelopeErrors``).
    case linkError(RPCError)
}

/// Host-side diagnostics of a connection. Wire-level counts come from the frame decoder.
public struct ConnectionCounters: Hashable, Sendable {
    /// What the frame decoder counted: frames, check errors, framing errors, oversized frames, unknown
    /// packet types, bytes received.
    public var wire = WireCounters()
    /// Packets sent (requests, cancels, acks, heartbeats).
    public var packetsSent: UInt64 = 0
    /// Wire bytes produced for sending.
    public var bytesSent: UInt64 = 0
    /// Packets the device's sequence numbers say were lost (§6 `sequence_gaps`).
    public var sequenceGaps: UInt64 = 0
    /// Packets dropped because they had already been delivered, whatever their flags (§6
    /// `duplicates_dropped`; v1.0 dropped only reliable ones).
    public var duplicatesDropped: UInt64 = 0
    /// `REQUEST`s sent again for want of an `ACK` (§6 `retransmissions`).
    public var retransmissions: UInt64 = 0
    /// `REQUEST`s given up unacknowledged (§6 `reliable_given_up`): after their last transmission, or once the
    /// host had numbered 64 packets after them (``reliableBeyondWindow``).
    public var reliableGivenUp: UInt64 = 0
    /// Of ``reliableGivenUp``: `REQUEST`s given up before their last transmission because the host had
    /// numbered 64 packets after them, the most a device's duplicate window is sure to tell (§6, v1.2): a
    /// copy sent then may be acknowledged and never executed.
    public var reliableBeyondWindow: UInt64 = 0
    /// `ACK`s not sent while a handshake awaited its answer (§9, v1.2): of packets of the old session or of
    /// an earlier attempt, which the device forgets when it accepts the handshake.
    public var acksWithheld: UInt64 = 0
    /// Packets with a bad envelope: a call's type on call id 0, an `ACK` without its payload (§4
    /// `envelope_errors`).
    public var envelopeErrors: UInt64 = 0
    /// Server streams failed because the device did not confirm them in time (§7, v1.1).
    public var streamsUnconfirmed: UInt64 = 0
    /// `ACK`s sent for reliable packets (duplicates included).
    public var acksSent: UInt64 = 0
    /// `ACK`s received (of the host's reliable `REQUEST`s).
    public var acksReceived: UInt64 = 0
    /// `HEARTBEAT`s sent.
    public var heartbeatsSent: UInt64 = 0
    /// `HEARTBEAT`s received.
    public var heartbeatsReceived: UInt64 = 0
    /// Packets for a call id the host does not know, dropped (§7).
    public var unknownCallPackets: UInt64 = 0
    /// Packets that do not fit their call (a `RESPONSE` on a stream, a `STREAM_MESSAGE` on a unary
    /// call, a host-to-device type), dropped.
    public var unexpectedPackets: UInt64 = 0
    /// Calls started.
    public var callsStarted: UInt64 = 0
    /// Calls that ended successfully (a response, or a stream ended with `OK`).
    public var callsSucceeded: UInt64 = 0
    /// Calls that ended with an error the device reported.
    public var callsFailedByDevice: UInt64 = 0
    /// Calls failed with `DEADLINE_EXCEEDED`.
    public var deadlinesExceeded: UInt64 = 0
    /// Calls cancelled by the host.
    public var callsCancelled: UInt64 = 0
    /// `CANCEL`s sent again for a stream the host had cancelled whose messages kept coming (its `CANCEL`,
    /// best-effort, was lost).
    public var cancelsResent: UInt64 = 0
    /// Calls failed with `UNAVAILABLE` (link dead or closed).
    public var callsUnavailable: UInt64 = 0
    /// Times the link was declared dead (heartbeat timeout).
    public var linkDeaths: UInt64 = 0
    /// `ERROR` packets on call id 0 (v1.0 only; since v1.1 they are envelope errors: stays 0).
    public var linkErrors: UInt64 = 0

    /// All zero.
    public init() {}
}
