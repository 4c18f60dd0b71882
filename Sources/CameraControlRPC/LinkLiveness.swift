/// Where a host's link stands (docs/PROTOCOL.md §8, §9): ``ConnectionCore/linkState``.
///
/// ```
///   noSession ──handshake answered──▶ established ──4 intervals silent──▶ dead
///       │                                ▲   │                            │
///       │                                └───┼──── handshake answered ────┘
///       └────────────── closeLink ───────────┴──────────▶ closed ◀── closeLink
/// ```
public enum LinkState: Sendable, Equatable {
    /// No session yet: calls may start (the handshake first), no heartbeats, no liveness timeout.
    case noSession
    /// A session is established: heartbeats run and the device must be heard within
    /// ``ConnectionConfiguration/deadTimeout``.
    case established
    /// The session's device fell silent for the dead timeout: its calls failed with `UNAVAILABLE`.
    /// Calls may start again (a new handshake); no heartbeats until a session is established.
    case dead
    /// The transport closed (or the client shut down): nothing more is sent and no call can start.
    case closed
}

/// The liveness part of a link (§8): when the host last sent and heard, when the device's last
/// heartbeat came and when the host itself last ran; from that, when the host's next `HEARTBEAT` is due,
/// whether a device heartbeat is answered at once, and when the link is dead. A value type with no I/O
/// and no clock (times are `Duration`s on the driver's timeline), tested on its own; ``ConnectionCore``
/// keeps one and consults it only while its ``LinkState`` is ``LinkState/established``.
public struct LinkLiveness: Sendable {
    /// What ``poll(now:)`` asks the link to do.
    public enum Action: Sendable, Equatable {
        /// Nothing is due.
        case none
        /// The host was quiet for its heartbeat delay: send a `HEARTBEAT`.
        case sendHeartbeat
        /// Nothing valid was heard for the dead timeout: the link is dead, after this much silence.
        case dead(silence: Duration)
    }

    /// The durations of a configuration, computed once (`Duration`'s generic arithmetic is not free on
    /// the per-packet path).
    private struct Timing: Sendable {
        var heartbeatInterval: Duration
        /// Half an interval: a device heartbeat is answered when the host was silent this long.
        var halfInterval: Duration
        /// 1.25 intervals: the host's next heartbeat after an answer.
        var answeredHeartbeatDelay: Duration
        /// Two intervals: a longer gap between calls into the link means the host itself did not run.
        var starvedGap: Duration
        var deadTimeout: Duration
        var answersHeartbeats: Bool

        init(_ configuration: ConnectionConfiguration) {
            heartbeatInterval = configuration.heartbeatInterval
            halfInterval = configuration.heartbeatInterval / 2
            answeredHeartbeatDelay = configuration.heartbeatInterval + configuration.heartbeatInterval / 4
            starvedGap = configuration.heartbeatInterval * 2
            deadTimeout = configuration.deadTimeout
            answersHeartbeats = configuration.answersHeartbeats
        }
    }

    private var timing: Timing

    /// When the host last sent a packet (any).
    public private(set) var lastSent: Duration?
    /// The last packet sent was a `HEARTBEAT` answering the device's: the device's heartbeats are
    /// coming, so the next one of ours may wait a quarter interval more for the next of theirs.
    private var lastSentAnsweredHeartbeat = false
    /// When the device's last `HEARTBEAT` arrived.
    private var lastHeartbeatReceived: Duration?
    /// When the host last heard a valid packet from the device.
    public private(set) var lastReceived: Duration?
    /// When the host last ran the link (a poll or bytes received): a host that did not run could not
    /// hear the device.
    private var lastAwake: Duration?
    /// When the last byte of a frame still arriving came (nil when no frame is arriving).
    private var lastFrameByte: Duration?

    /// Liveness with `configuration`'s heartbeat interval, dead timeout and heartbeat answering; nothing
    /// sent or heard yet.
    public init(_ configuration: ConnectionConfiguration) {
        timing = Timing(configuration)
    }

    /// Takes `configuration`'s durations (the session's announced interval), keeping what was sent and heard.
    public mutating func configure(_ configuration: ConnectionConfiguration) {
        timing = Timing(configuration)
    }

    // MARK: What happened

    /// A session starts at `now`: the device has just been heard, and the host's heartbeat timer runs
    /// from its last packet (or from now, when it sent none).
    public mutating func sessionStarted(at now: Duration) {
        lastReceived = now
        if lastSent == nil { lastSent = now }
    }

    /// The host sent a packet at `now`; `answeringHeartbeat` when it was a `HEARTBEAT` answering the device's.
    public mutating func sent(at now: Duration, answeringHeartbeat: Bool = false) {
        lastSent = now
        lastSentAnsweredHeartbeat = answeringHeartbeat
    }

    /// A valid packet (or a checked frame of an unknown type, §4) arrived at `now`.
    public mutating func heard(at now: Duration) {
        lastReceived = now
    }

    /// The device's `HEARTBEAT` arrived at `now` (call ``heard(at:)`` too). Returns true when the host
    /// answers it at once with its own (§8, v1.1): heartbeats are answered and the host sent nothing
    /// for half an interval.
    public mutating func heardHeartbeat(at now: Duration) -> Bool {
        lastHeartbeatReceived = now
        guard timing.answersHeartbeats, let lastSent else { return false }
        return now - lastSent >= timing.halfInterval
    }

    /// True when the host had not run the link for more than two heartbeat intervals before `now` (it was
    /// starved: what it receives now may have waited, and a round trip measured now is the machine's).
    public func wasStarved(before now: Duration) -> Bool {
        guard let lastAwake else { return false }
        return now - lastAwake > timing.starvedGap
    }

    /// The host ran the link at `now` (it received bytes).
    public mutating func awake(at now: Duration) {
        lastAwake = now
    }

    /// Bytes arrived at `now`; `frameArriving` when, after them, a frame is partly assembled, and
    /// `frameBegan` when that frame began in these bytes (a frame ended in them, or none was open before).
    /// A frame still arriving keeps the link alive (§8, v1.2): on a slow line one frame can take longer
    /// than the dead timeout (a 1,024-byte frame takes 1.07 s at 9600 baud), and the device is sending it.
    /// It counts only if it began while the link was alive: it continues a frame that counted, or began
    /// within the dead timeout of the last valid packet. So garbage cut by delimiters, whose every frame
    /// fails, keeps nothing, however the reads fall. The link is dead once no byte of a counted frame came
    /// for the dead timeout; a frame that then fails its check was never valid, so the silence before it
    /// counts.
    public mutating func bytesArrived(at now: Duration, frameArriving: Bool, frameBegan: Bool) {
        guard frameArriving else {
            lastFrameByte = nil
            return
        }
        let counts =
            frameBegan ? lastReceived.map { now - $0 < timing.deadTimeout } ?? true : lastFrameByte != nil
        lastFrameByte = counts ? now : nil
    }

    // MARK: What is due

    /// How long after its last packet the host sends a `HEARTBEAT` (§8): one interval, or a quarter more
    /// while the device's heartbeats are coming (one arrived since the host last sent, or the host's last
    /// packet answered one): the host then waits for the device's next heartbeat to answer it, so each
    /// side wakes once per interval instead of twice, whatever phase the two timers started in.
    public var heartbeatDelay: Duration {
        guard timing.answersHeartbeats else { return timing.heartbeatInterval }
        let heardSince = lastHeartbeatReceived.map { heard in lastSent.map { heard >= $0 } ?? true } ?? false
        return lastSentAnsweredHeartbeat || heardSince ? timing.answeredHeartbeatDelay : timing.heartbeatInterval
    }

    /// The earliest of the next heartbeat and the dead timeout, or nil when neither can be computed yet.
    public var nextTime: Duration? {
        let heartbeat = lastSent.map { $0 + heartbeatDelay }
        var death = lastReceived.map { $0 + timing.deadTimeout }
        if let byte = lastFrameByte, let due = death { death = max(due, byte + timing.deadTimeout) }
        switch (heartbeat, death) {
        case (let a?, let b?): return min(a, b)
        case (let a?, nil): return a
        case (nil, let b?): return b
        case (nil, nil): return nil
        }
    }

    /// What is due at `now` in an established session; records that the host ran. Silence is counted
    /// only while the host runs: after a gap of more than two intervals since it last ran (starved,
    /// suspended), what the device sent meanwhile waits to be read, so the device gets one interval from
    /// `now` to be heard before the link is declared dead.
    public mutating func poll(now: Duration) -> Action {
        defer { lastAwake = now }
        if let awake = lastAwake, now - awake > timing.starvedGap, let heard = lastReceived {
            lastReceived = max(heard, now - timing.deadTimeout + timing.heartbeatInterval)
        }
        if let lastReceived, now - lastReceived >= timing.deadTimeout {
            guard let byte = lastFrameByte, now - byte < timing.deadTimeout else { return .dead(silence: now - lastReceived) }
        }
        if let lastSent, now - lastSent >= heartbeatDelay {
            return .sendHeartbeat
        }
        return .none
    }
}
