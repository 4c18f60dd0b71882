import CameraControlEmbedded
import CameraControlWire
import Testing

/// The simulator's replay input (`ccsim_device_replay`): recorded samples in place of the finger model,
/// each read from its own time, buttons as levels the firmware debounces, remote clicks once; the device's
/// own sensor offset added (the tare holds); the finger model back after the last sample.
@Suite("Replay into the firmware's input pipeline")
struct ReplayTests {
    /// A press to 1500 mN from 20 ms to 200 ms (touched 10…220 ms), volume up held 300…400 ms, two remote
    /// clicks at 500 ms, at 1 kHz.
    static let samples: [ReplaySample] = (0..<600).map { ms in
        ReplaySample(
            micros: UInt64(ms) * 1_000, forceMillinewtons: (20..<200).contains(ms) ? 1_500 : 0, position: 512,
            touched: (10..<220).contains(ms), buttons: (300..<400).contains(ms) ? .volumeUp : [],
            remoteClicks: ms == 500 ? 2 : 0)
    }

    @Test("touch, the light press and its end, the button's debounced edges and the clicks, at the samples' times")
    func replaysSampleForSample() throws {
        var host = HostHarness(seed: 4)
        try host.connect()
        let start = max(host.device.nowMicros, EmbeddedDevice.bootSettleMicros)
        host.device.replay(Self.samples)
        #expect(host.device.isReplaying)
        try host.run(millis: 700)
        #expect(!host.device.isReplaying, "ended one sample period after the last sample")
        let kinds = host.events.map(\.kind).filter { $0 != .slide }
        #expect(kinds == [.touchDown, .lightPressDown, .lightPressUp, .touchUp, .buttonDown, .buttonUp, .remoteClick, .remoteClick])
        func at(_ kind: InputEventKind) throws -> UInt64 { try #require(host.events(kind).first).timestampMicros - start }
        #expect(try at(.touchDown) == 10_000)
        #expect(try at(.touchUp) == 220_000)
        // The force filter's lag (about 8 ms) on top of the 1500 mN step at 20 ms; no full press.
        #expect((20_000...40_000).contains(try at(.lightPressDown)))
        #expect(host.events(.fullPressDown).isEmpty)
        let peak = try #require(host.events(.lightPressUp).first).peakForceMillinewtons
        #expect((1_450...1_550).contains(peak), "the device's sensor offset was added and tared away: \(peak)")
        // Levels, debounced by 5 ms.
        #expect(try at(.buttonDown) == 305_000)
        #expect(try at(.buttonUp) == 405_000)
        #expect(try at(.remoteClick) == 500_000)
    }

    @Test("an empty replay stops one; the finger model is read again")
    func emptyStops() throws {
        var host = HostHarness(seed: 5)
        try host.connect()
        host.device.replay(Self.samples)
        host.device.replay([])
        #expect(!host.device.isReplaying)
        try host.run(millis: 300)
        #expect(host.events.isEmpty)
        try host.play("light-press")
        #expect(host.events(.lightPressDown).count == 1)
    }
}
