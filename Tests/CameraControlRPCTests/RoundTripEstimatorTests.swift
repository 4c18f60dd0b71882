import CameraControlRPC
import Testing

/// The host's retransmission timeout from measured round trips (RFC 6298's estimator with Karn's rule,
/// between the configured 20 ms and 8 times it): what a fast link keeps, what a slow line gets.
@Suite("RoundTripEstimator")
struct RoundTripEstimatorTests {
    @Test("without a sample the timeout is the floor; samples below it leave it there")
    func fastLinkKeepsTheFloor() {
        var estimator = RoundTripEstimator(floor: .ms(20))
        #expect(estimator.timeout == .ms(20))
        for _ in 0..<10 { estimator.sampled(.microseconds(300)) }
        #expect(estimator.timeout == .ms(20))
    }

    @Test("a first sample of R gives R + 4 × R/2; the next ones smooth with gains 1/8 and 1/4")
    func samplesSmooth() {
        var estimator = RoundTripEstimator(floor: .ms(20))
        estimator.sampled(.ms(30))
        #expect(estimator.smoothed == .ms(30) && estimator.variation == .ms(15))
        #expect(estimator.timeout == .ms(90))
        estimator.sampled(.ms(30))
        // variation (3 × 15 + 0) / 4 = 11.25 ms; smoothed (7 × 30 + 30) / 8 = 30 ms
        #expect(estimator.variation == .microseconds(11_250))
        #expect(estimator.timeout == .ms(75))
        estimator.sampled(.ms(50))
        // variation (3 × 11.25 + 20) / 4 = 13.4375 ms; smoothed (7 × 30 + 50) / 8 = 32.5 ms
        #expect(estimator.smoothed == .microseconds(32_500))
        #expect(estimator.timeout == .microseconds(32_500) + .nanoseconds(13_437_500) * 4)
    }

    @Test("the timeout never exceeds 8 floors")
    func ceiling() {
        var estimator = RoundTripEstimator(floor: .ms(20))
        estimator.sampled(.seconds(10))
        #expect(estimator.timeout == .ms(160))
        estimator.acknowledgedAfterRetransmission(runningTimeout: .seconds(5))
        #expect(estimator.timeout == .ms(160))
    }

    @Test("an ACK of a packet sent twice is no sample: its running timeout is kept until a packet sent once gives one")
    func karnsRule() {
        var estimator = RoundTripEstimator(floor: .ms(20))
        estimator.acknowledgedAfterRetransmission(runningTimeout: .ms(40))
        #expect(estimator.smoothed == nil)
        #expect(estimator.timeout == .ms(40))
        estimator.acknowledgedAfterRetransmission(runningTimeout: .ms(80))
        #expect(estimator.timeout == .ms(80))
        // a sample ends the backed-off timeout
        estimator.sampled(.ms(30))
        #expect(estimator.backedOff == nil)
        #expect(estimator.timeout == .ms(90))
        // never below what the samples already ask for
        estimator.acknowledgedAfterRetransmission(runningTimeout: .ms(40))
        #expect(estimator.timeout == .ms(90))
        estimator.acknowledgedAfterRetransmission(runningTimeout: .ms(140))
        #expect(estimator.timeout == .ms(140))
        // a new session forgets it, keeping the samples
        estimator.sessionStarted()
        #expect(estimator.backedOff == nil)
        #expect(estimator.timeout == .ms(90))
    }
}
