/// The device's clock as the host estimates it, from round trips (Cristian's algorithm, as NTP uses it).
///
/// A round trip is sent at host time `s`, answered with the device's clock `d`, and received at host time
/// `r`. The device read its clock somewhere in `[s, r]`, so `d` corresponds to host time `(s + r) / 2`
/// within `(r - s) / 2`. The estimate keeps the last few samples and uses the one with the smallest
/// bound at the time asked, where a sample's bound grows with its age by ``maximumDriftPPM`` (crystals
/// differ by tens of ppm):
///
/// ```
///   bound(sample, at t) = (r - s) / 2  +  |t - (s + r) / 2| × maximumDriftPPM / 10⁶
/// ```
///
/// **Guarantee** (tested): when the device read its clock inside the round trip and the two clocks differ
/// in rate by at most ``maximumDriftPPM``, ``deviceMicros(atHostMicros:)`` is within
/// ``uncertaintyMicros(atHostMicros:)`` of the device's true clock. Device times given out never go
/// backwards, even when a better sample moves the estimate back.
///
/// Pure: times in, estimates out; no clock of its own.
public struct DeviceClockEstimate: Sendable, Hashable {
    /// One round trip, host and device microseconds.
    public struct Sample: Sendable, Hashable {
        /// Host time the request was sent.
        public var sentAtHostMicros: UInt64
        /// Host time the answer arrived (not before ``sentAtHostMicros``).
        public var receivedAtHostMicros: UInt64
        /// The device's clock in the answer.
        public var deviceMicros: UInt64

        /// Host time the device most probably read its clock: the middle of the round trip.
        public var midpointHostMicros: UInt64 {
            sentAtHostMicros &+ (receivedAtHostMicros &- sentAtHostMicros) / 2
        }

        /// Half the round trip: how far the device's reading can be from the midpoint.
        public var halfRoundTripMicros: UInt64 { (receivedAtHostMicros &- sentAtHostMicros + 1) / 2 }
    }

    /// The largest rate difference assumed between the clocks, parts per million.
    public var maximumDriftPPM: UInt64
    /// How many recent samples are kept.
    public let capacity: Int
    /// The samples kept, oldest first.
    public private(set) var samples: [Sample] = []
    private var lastGivenDeviceMicros: UInt64 = 0

    /// An estimate with no samples yet, assuming clocks within `maximumDriftPPM` of each other and keeping
    /// the last `capacity` samples.
    public init(maximumDriftPPM: UInt64 = 200, capacity: Int = 8) {
        self.maximumDriftPPM = maximumDriftPPM
        self.capacity = max(1, capacity)
    }

    /// True once a sample was added.
    public var isSynchronised: Bool { !samples.isEmpty }

    /// Adds a round trip; a sample whose receive time is before its send time is ignored.
    public mutating func addRoundTrip(sentAtHostMicros sent: UInt64, receivedAtHostMicros received: UInt64, deviceMicros: UInt64) {
        guard received >= sent else { return }
        samples.append(Sample(sentAtHostMicros: sent, receivedAtHostMicros: received, deviceMicros: deviceMicros))
        if samples.count > capacity { samples.removeFirst(samples.count - capacity) }
    }

    /// Forgets every sample (a new device, or the device restarted its clock).
    public mutating func reset() {
        samples = []
        lastGivenDeviceMicros = 0
    }

    private func bound(_ sample: Sample, at host: UInt64) -> UInt64 {
        let mid = sample.midpointHostMicros
        let age = host >= mid ? host - mid : mid - host
        return sample.halfRoundTripMicros &+ age / 1_000_000 * maximumDriftPPM
            &+ (age % 1_000_000) * maximumDriftPPM / 1_000_000 + (maximumDriftPPM > 0 ? 1 : 0)
    }

    private func best(at host: UInt64) -> Sample? {
        samples.min { bound($0, at: host) < bound($1, at: host) }
    }

    /// Host minus device time, microseconds, from the best sample for host time `host` (nil before any).
    public func offsetMicros(atHostMicros host: UInt64) -> Int64? {
        guard let sample = best(at: host) else { return nil }
        return Int64(bitPattern: sample.midpointHostMicros &- sample.deviceMicros)
    }

    /// How far ``deviceMicros(atHostMicros:)`` can be from the truth at host time `host` (nil before any
    /// sample).
    public func uncertaintyMicros(atHostMicros host: UInt64) -> UInt64? {
        best(at: host).map { bound($0, at: host) }
    }

    /// The device's clock at host time `host`, without the never-backwards rule (nil before any sample).
    public func estimateDeviceMicros(atHostMicros host: UInt64) -> UInt64? {
        guard let offset = offsetMicros(atHostMicros: host) else { return nil }
        let device = Int64(bitPattern: host) &- offset
        return device > 0 ? UInt64(device) : 0
    }

    /// The device's clock at host time `host`, never earlier than a time this method gave before
    /// (nil before any sample).
    public mutating func deviceMicros(atHostMicros host: UInt64) -> UInt64? {
        guard let estimate = estimateDeviceMicros(atHostMicros: host) else { return nil }
        lastGivenDeviceMicros = max(lastGivenDeviceMicros, estimate)
        return lastGivenDeviceMicros
    }

    /// The host time at which the device's clock reads `device` (nil before any sample).
    public func hostMicros(atDeviceMicros device: UInt64) -> UInt64? {
        guard let sample = samples.last, let offset = offsetMicros(atHostMicros: sample.midpointHostMicros) else {
            return nil
        }
        let host = Int64(bitPattern: device) &+ offset
        return host > 0 ? UInt64(host) : 0
    }
}
