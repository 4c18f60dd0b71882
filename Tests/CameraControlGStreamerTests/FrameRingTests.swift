import CameraControlGStreamer
import Testing

@Suite("Frame ring")
struct FrameRingTests {
    static func frame(at micros: UInt64) -> Frame { Frame(pixels: [], width: 0, height: 0, hostMicros: micros) }

    @Test("keeps the newest frames up to its capacity")
    func capacity() {
        var ring = FrameRing(capacity: 3)
        for time in [10, 20, 30, 40, 50] as [UInt64] { ring.append(Self.frame(at: time)) }
        #expect(ring.frames.map(\.hostMicros) == [30, 40, 50])
        #expect(ring.newest?.hostMicros == 50)
    }

    @Test(
        "the frame nearest the press, not the newest one",
        arguments: [
            (UInt64(1_000), UInt64(0)), (16_000, 0), (17_000, 33_333), (40_000, 33_333), (66_000, 66_666), (500_000, 99_999),
        ])
    func nearest(press: UInt64, expected: UInt64) {
        var ring = FrameRing(capacity: 8)
        for time in [0, 33_333, 66_666, 99_999] as [UInt64] { ring.append(Self.frame(at: time)) }
        #expect(ring.nearest(toHostMicros: press)?.hostMicros == expected)
    }

    @Test("a tie goes to the earlier frame")
    func tie() {
        var ring = FrameRing(capacity: 4)
        ring.append(Self.frame(at: 100))
        ring.append(Self.frame(at: 200))
        #expect(ring.nearest(toHostMicros: 150)?.hostMicros == 100)
    }

    @Test("a press newer than every frame waits for the next frame, then is decided")
    func selection() {
        var ring = FrameRing(capacity: 4)
        ring.append(Self.frame(at: 0))
        ring.append(Self.frame(at: 33_333))
        var selection = ShutterSelection(pressHostMicros: 60_000, ring: ring)
        #expect(!selection.isDecided)
        #expect(selection.chosen?.hostMicros == 33_333)
        selection.offer(Self.frame(at: 66_666))
        #expect(selection.isDecided)
        #expect(selection.chosen?.hostMicros == 66_666)
        selection.offer(Self.frame(at: 60_000))  // too late: the choice stands
        #expect(selection.chosen?.hostMicros == 66_666)
    }

    @Test("a press between kept frames is decided at once")
    func decidedAtOnce() {
        var ring = FrameRing(capacity: 4)
        for time in [0, 33_333, 66_666] as [UInt64] { ring.append(Self.frame(at: time)) }
        let selection = ShutterSelection(pressHostMicros: 30_000, ring: ring)
        #expect(selection.isDecided)
        #expect(selection.chosen?.hostMicros == 33_333)
    }
}
