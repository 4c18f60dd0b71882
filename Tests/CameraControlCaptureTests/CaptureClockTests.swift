import CameraControlCapture
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("CaptureClock")
struct CaptureClockTests {
    /// `CLOCK_MONOTONIC` read here, microseconds.
    static func monotonicHere() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }

    @Test("the continuous clock is CLOCK_MONOTONIC in microseconds, the clock device timestamps are placed on")
    func continuousIsTheMonotonicClock() {
        for _ in 0..<100 {
            let before = Self.monotonicHere()
            let read = CaptureClock.continuous.nowMicros()
            let direct = CaptureClock.monotonicMicros()
            let after = Self.monotonicHere()
            #expect(before <= read && read <= direct && direct <= after)
        }
    }
}
