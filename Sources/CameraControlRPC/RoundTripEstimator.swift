/// The first retransmission timeout of a new reliable packet, from the round trips the host measured
/// (§6 allows other values than its 20 ms default): RFC 6298's estimator with Karn's rule, above a floor.
///
/// A packet sent once and acknowledged is a sample: the time from its send to its `ACK`. The smoothed
/// round trip and its variation give the timeout, `smoothed + 4 × variation`, never below the floor (the
/// configured ``ConnectionConfiguration/retransmissionTimeout``, 20 ms) nor above 8 floors. A packet
/// acknowledged in a wake-up that followed a starved gap (the host did not run for two heartbeat
/// intervals: ``ConnectionCore`` tells) is no sample either: its round trip measured the host's machine,
/// not the link. An `ACK` of a
/// packet sent more than once is no sample (it may answer any of the copies: Karn's rule); the timeout
/// that was running when it came is kept for the next packets instead, until a packet sent once gives a
/// sample again (RFC 6298 §5.7's backed-off timeout). On a fast link the samples are far below the floor
/// and nothing changes; on a 9600-baud line a request and its `ACK` take 40–80 ms, more when the `ACK`
/// waits behind the device's frames, and a fixed 20 ms sent every request two to four times.
///
/// ```swift
/// var estimator = RoundTripEstimator(floor: .milliseconds(20))
/// estimator.sampled(.milliseconds(30))       // a request acknowledged 30 ms after its only send
/// let timeout = estimator.timeout              // 30 + 4 × 15 = 90 ms
/// estimator.acknowledgedAfterRetransmission(runningTimeout: .milliseconds(40))
/// ```
public struct RoundTripEstimator: Sendable, Equatable {
    /// The least timeout: the configured one (§6: 20 ms).
    public let floor: Duration
    /// The most: 8 floors (160 ms with the default), so that a request still goes out three times within
    /// a stream's 1 s confirmation time and four within a unary call's 2 s deadline (at 9600 baud a request
    /// and its `ACK` take 40–80 ms, more behind a long frame: most of the copies go).
    public var ceiling: Duration { floor * 8 }
    /// The smoothed round trip (nil before the first sample).
    public private(set) var smoothed: Duration?
    /// The smoothed variation of the round trip.
    public private(set) var variation: Duration = .zero
    /// The timeout kept after an `ACK` of a retransmitted packet, until the next sample.
    public private(set) var backedOff: Duration?

    /// An estimator with no sample yet: its timeout is `floor`.
    public init(floor: Duration) {
        self.floor = max(floor, .nanoseconds(1))
    }

    /// The first retransmission timeout of the next reliable packet.
    public var timeout: Duration {
        let estimate = backedOff ?? smoothed.map { $0 + variation * 4 } ?? floor
        return min(max(estimate, floor), ceiling)
    }

    /// A packet sent once was acknowledged `roundTrip` after its send (RFC 6298 §2: gains 1/8 and 1/4).
    public mutating func sampled(_ roundTrip: Duration) {
        let sample = max(roundTrip, .zero)
        if let smoothed {
            let error = smoothed > sample ? smoothed - sample : sample - smoothed
            variation = (variation * 3 + error) / 4
            self.smoothed = (smoothed * 7 + sample) / 8
        } else {
            smoothed = sample
            variation = sample / 2
        }
        backedOff = nil
    }

    /// A packet sent more than once was acknowledged while `runningTimeout` ran (the interval after its
    /// last copy): no sample, but the next packets start with that timeout (Karn's rule).
    public mutating func acknowledgedAfterRetransmission(runningTimeout: Duration) {
        backedOff = min(max(runningTimeout, timeout), ceiling)
    }

    /// A new session: the timeout kept after copies goes (the samples stay: the same line).
    public mutating func sessionStarted() {
        backedOff = nil
    }
}
