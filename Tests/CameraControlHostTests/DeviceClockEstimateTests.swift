import CameraControlHost
import CameraControlTestSupport
import Testing

/// The clock estimate's error bound: whatever the delays and drift (within the assumed bound), the
/// estimate is never further from the device's true clock than the uncertainty it reports.
@Suite("DeviceClockEstimate")
struct DeviceClockEstimateTests {
    /// A device clock: `offset` behind the host at host time 0, running `ppm` fast.
    struct DeviceClock {
        var offset: Int64
        var ppm: Double
        func micros(atHost host: UInt64) -> UInt64 {
            UInt64(Int64(Double(host) * (1 + ppm / 1e6)) - offset)
        }
    }

    @Test("nothing is estimated before a sample")
    func empty() {
        var clock = DeviceClockEstimate()
        #expect(!clock.isSynchronised)
        #expect(clock.deviceMicros(atHostMicros: 1_000) == nil)
        #expect(clock.uncertaintyMicros(atHostMicros: 1_000) == nil)
        #expect(clock.hostMicros(atDeviceMicros: 1_000) == nil)
    }

    @Test("a symmetric round trip gives the offset exactly; the bound is half the round trip")
    func symmetric() {
        var clock = DeviceClockEstimate(maximumDriftPPM: 0)
        // Sent at 10 ms, answered at device 3 ms (read at 10.5 ms host), received at 11 ms.
        clock.addRoundTrip(sentAtHostMicros: 10_000, receivedAtHostMicros: 11_000, deviceMicros: 3_500)
        #expect(clock.offsetMicros(atHostMicros: 10_500) == 7_000)
        #expect(clock.deviceMicros(atHostMicros: 20_000) == 13_000)
        #expect(clock.hostMicros(atDeviceMicros: 13_000) == 20_000)
        #expect(clock.uncertaintyMicros(atHostMicros: 10_500) == 500)
    }

    @Test("a sample whose receive time is before its send time is ignored")
    func backwardsSample() {
        var clock = DeviceClockEstimate()
        clock.addRoundTrip(sentAtHostMicros: 10, receivedAtHostMicros: 5, deviceMicros: 1)
        #expect(!clock.isSynchronised)
    }

    @Test("the estimate is within its stated uncertainty, for random delays, offsets and drift", arguments: 0..<40)
    func errorBound(seed: UInt64) {
        var random = SeededGenerator(seed: seed &* 7919 &+ 1)
        let drift = Double(Int64.random(in: -150...150, using: &random))
        let device = DeviceClock(offset: Int64.random(in: -5_000_000...5_000_000, using: &random) + 10_000_000, ppm: drift)
        var clock = DeviceClockEstimate(maximumDriftPPM: 200, capacity: 8)
        var host: UInt64 = 20_000_000
        for _ in 0..<30 {
            // A round trip with asymmetric, random delays each way (the device reads its clock in between).
            let out = UInt64.random(in: 20...5_000, using: &random)
            let back = UInt64.random(in: 20...5_000, using: &random)
            let readAt = host + out
            clock.addRoundTrip(
                sentAtHostMicros: host, receivedAtHostMicros: readAt + back, deviceMicros: device.micros(atHost: readAt))
            host += UInt64.random(in: 100_000...3_000_000, using: &random)
            for probe in [host, host + 500_000, host + 4_000_000] {
                guard let estimate = clock.estimateDeviceMicros(atHostMicros: probe),
                    let bound = clock.uncertaintyMicros(atHostMicros: probe)
                else {
                    Issue.record("no estimate after a sample")
                    return
                }
                let truth = device.micros(atHost: probe)
                let error = estimate > truth ? estimate - truth : truth - estimate
                #expect(error <= bound, "error \(error) µs over the bound \(bound) µs (drift \(drift) ppm)")
            }
        }
    }

    @Test("device times given out never go backwards, even when a better sample moves the estimate back")
    func neverBackwards() {
        var clock = DeviceClockEstimate(maximumDriftPPM: 0)
        // A slow round trip whose midpoint guess is 2 ms late, then a tight one.
        clock.addRoundTrip(sentAtHostMicros: 0, receivedAtHostMicros: 8_000, deviceMicros: 2_000)
        let first = clock.deviceMicros(atHostMicros: 10_000)
        #expect(first == 8_000)
        clock.addRoundTrip(sentAtHostMicros: 10_000, receivedAtHostMicros: 10_010, deviceMicros: 7_005)
        #expect(clock.estimateDeviceMicros(atHostMicros: 10_100) == 7_100)  // the better estimate is earlier
        #expect(clock.deviceMicros(atHostMicros: 10_100) == 8_000)  // but what was given stays given
        #expect(clock.deviceMicros(atHostMicros: 12_000) == 9_000)
    }

    @Test("reset forgets the samples (a new device has a new clock)")
    func reset() {
        var clock = DeviceClockEstimate()
        clock.addRoundTrip(sentAtHostMicros: 0, receivedAtHostMicros: 10, deviceMicros: 5)
        clock.reset()
        #expect(!clock.isSynchronised)
        #expect(clock.samples.isEmpty)
    }
}
