import CameraControlWire
import Testing

/// The host's estimate of a slow line's speed from the device's long frames, and what it adds to a reliable
/// packet's retransmission timeout (§6): on a 9600-baud line a request and its `ACK` take longer than 20 ms.
@Suite("LineSpeedEstimate")
struct LineSpeedEstimateTests {
    /// 9600 baud, 8N1: 960 bytes a second, a 16-byte FIFO's worth every 16.67 ms.
    static let chunk = 16
    static let chunkTime = Duration.microseconds(16_667)

    /// Reads a `frameBytes`-byte frame in 16-byte pieces at 9600 baud's pace from `start`; returns the end.
    static func readFrame(_ estimate: inout LineSpeedEstimate, bytes frameBytes: Int, from start: Duration) -> Duration {
        var now = start
        var left = frameBytes
        var first = true
        while left > 0 {
            let count = min(chunk, left)
            left -= count
            estimate.read(count, at: now, continuing: !first, completedFrames: left == 0 ? 1 : 0, open: left > 0)
            first = false
            if left > 0 { now += chunkTime }
        }
        return now
    }

    @Test("a frame that arrives in pieces at 9600 baud's pace gives 960 bytes a second; a whole one gives nothing")
    func learnsTheRateOfAFrameInPieces() {
        var estimate = LineSpeedEstimate()
        estimate.read(330, at: .zero, continuing: false, completedFrames: 1, open: false)
        #expect(estimate.bytesPerSecond == nil)
        #expect(estimate.allowance(forPacketEndingAt: 30, now: .zero) == .zero)
        _ = Self.readFrame(&estimate, bytes: 336, from: .milliseconds(10))  // 21 pieces: 320 bytes after the first
        let rate = try! #require(estimate.bytesPerSecond)
        #expect(abs(rate - 960) <= 1, "\(rate) bytes a second")
    }

    @Test("a short frame, or a read that ends a frame and holds more, is no sample; the fastest sample wins")
    func samplesAreGuarded() {
        var estimate = LineSpeedEstimate()
        _ = Self.readFrame(&estimate, bytes: 40, from: .zero)  // 24 bytes after its first piece: too few
        #expect(estimate.bytesPerSecond == nil)
        // A frame's end read with the next frame's start, or with a whole frame more: not all its bytes.
        estimate.read(16, at: .milliseconds(100), continuing: false, completedFrames: 0, open: true)
        estimate.read(200, at: .milliseconds(150), continuing: true, completedFrames: 1, open: true)
        estimate.read(16, at: .milliseconds(300), continuing: false, completedFrames: 0, open: true)
        estimate.read(200, at: .milliseconds(350), continuing: true, completedFrames: 2, open: false)
        #expect(estimate.bytesPerSecond == nil)
        _ = Self.readFrame(&estimate, bytes: 336, from: .seconds(1))
        let rate = estimate.bytesPerSecond
        #expect(abs((rate ?? 0) - 960) <= 1)
        // Read late (the host busy 100 ms more before the last piece): a slower sample, which changes nothing.
        estimate.read(16, at: .seconds(2), continuing: false, completedFrames: 0, open: true)
        estimate.read(160, at: .seconds(2) + .milliseconds(267), continuing: true, completedFrames: 1, open: false)
        #expect(estimate.bytesPerSecond == rate)
        // A faster one wins: 300 bytes in 100 ms, the line is at least that fast.
        estimate.read(16, at: .seconds(3), continuing: false, completedFrames: 0, open: true)
        estimate.read(300, at: .seconds(3) + .milliseconds(100), continuing: true, completedFrames: 1, open: false)
        #expect(estimate.bytesPerSecond == 3_000)
    }

    @Test("the allowance: until the packet has left behind what was written before it, plus 32 bytes for the ACK")
    func allowanceModelsTheHostsOwnLine() {
        var estimate = LineSpeedEstimate()
        let end = Self.readFrame(&estimate, bytes: 330, from: .zero)
        let rate = try! #require(estimate.bytesPerSecond)
        func time(_ bytes: Int) -> Duration { .microseconds(Int64(bytes) * 1_000_000 / Int64(rate)) }
        // Nothing written before: a 30-byte packet leaves after its own 30 bytes.
        #expect(estimate.allowance(forPacketEndingAt: 30, now: end) == time(30) + time(32))
        // 60 bytes written at `end` are still on the line 10 ms later: a packet behind them waits for them too.
        estimate.wrote(60, at: end)
        let later = end + .milliseconds(10)
        #expect(estimate.allowance(forPacketEndingAt: 30, now: later) == (end + time(60) + time(30)) - later + time(32))
        // Once they have left, only its own bytes count again.
        #expect(estimate.allowance(forPacketEndingAt: 30, now: end + .seconds(1)) == time(30) + time(32))
        // A long packet waits until it has left, however long that is up to its bound: at 9600 baud a
        // 611-byte request takes 636 ms, and a copy sent before then only queues behind it.
        #expect(estimate.allowance(forPacketEndingAt: 611, now: end + .seconds(2)) == time(611) + time(32))
        #expect(estimate.departure(forPacketEndingAt: 611, now: end + .seconds(2)) == time(611))
        #expect(time(611) > LineSpeedEstimate.maximumAllowance)
        // A largest request (1,014 bytes, 1.06 s at 9600 baud) waits until it has left too: a 1 s bound sent it
        // again just before its first copy had left.
        #expect(estimate.departure(forPacketEndingAt: 1_014, now: end + .seconds(2)) == time(1_014))
        // Bounded, whatever is queued.
        #expect(
            estimate.allowance(forPacketEndingAt: 100_000, now: end) == LineSpeedEstimate.maximumDeparture + time(32))
    }

    @Test("on the slowest lines the reply's part of the allowance is bounded")
    func returnPartIsBounded() {
        var estimate = LineSpeedEstimate()
        // 100 bytes a second: 48 bytes after the first piece over 480 ms.
        estimate.read(16, at: .zero, continuing: false, completedFrames: 0, open: true)
        estimate.read(48, at: .milliseconds(480), continuing: true, completedFrames: 1, open: false)
        #expect(estimate.bytesPerSecond == 100)
        // 10 bytes leave in 100 ms; the reply's 32 bytes would take 320 ms, bounded at 250 ms.
        #expect(
            estimate.allowance(forPacketEndingAt: 10, now: .seconds(1))
                == .milliseconds(100) + LineSpeedEstimate.maximumAllowance)
    }
}
