import CameraControlRPC
import Testing

/// The host's retransmission timeout from measured round trips (RFC 6298's estimator with Karn's rule,
/// above the configured 20 ms): what a fast link keeps, what a slow line gets.
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
        estimator.sampled(.ms(60))
        #expect(estimator.smoothed == .ms(60) && estimator.variation == .ms(30))
        #expect(estimator.timeout == .ms(180))
        estimator.sampled(.ms(60))
        // variation (3 × 30 + 0) / 4 = 22.5 ms; smoothed (7 × 60 + 60) / 8 = 60 ms
        #expect(estimator.variation == .microseconds(22_500))
        #expect(estimator.timeout == .ms(150))
        estimator.sampled(.ms(100))
        // variation (3 × 22.5 + 40) / 4 = 26.875 ms; smoothed (7 × 60 + 100) / 8 = 65 ms
        #expect(estimator.smoothed == .ms(65))
        #expect(estimator.timeout == .ms(65) + .microseconds(26_875) * 4)
    }

    @Test("the timeout never exceeds 32 floors")
    func ceiling() {
        var estimator = RoundTripEstimator(floor: .ms(20))
        estimator.sampled(.seconds(10))
        #expect(estimator.timeout == .ms(640))
        estimator.acknowledgedAfterRetransmission(runningTimeout: .seconds(5))
        #expect(estimator.timeout == .ms(640))
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
        estimator.sampled(.ms(60))
        #expect(estimator.backedOff == nil)
        #expect(estimator.timeout == .ms(180))
        // never below what the samples already ask for
        estimator.acknowledgedAfterRetransmission(runningTimeout: .ms(40))
        #expect(estimator.timeout == .ms(180))
        estimator.acknowledgedAfterRetransmission(runningTimeout: .ms(400))
        #expect(estimator.timeout == .ms(400))
        // the next sample: the samples' timeout again (60 and 60: 60 + 4 × 22.5 ms)
        estimator.sampled(.ms(60))
        #expect(estimator.backedOff == nil)
        #expect(estimator.timeout == .ms(150))
    }
}
