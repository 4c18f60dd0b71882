import CameraControlEmbedded
import CameraControlWire
import Testing

/// The firmware's input pipeline as a host sees it: real firmware, simulated finger, virtual time.
@Suite("Input pipeline through the embedded device")
struct InputPipelineTests {
    static let seeds: [UInt64] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 42, 1234]

    @Test("a light press never becomes a full press", arguments: seeds)
    func lightPressStaysLight(seed: UInt64) throws {
        var host = HostHarness(seed: seed)
        try host.connect()
        try host.play("light-press force=1500mN hold=600ms")
        #expect(host.events(.lightPressDown).count == 1)
        #expect(host.events(.lightPressUp).count == 1)
        #expect(host.events(.fullPressDown).isEmpty)
        #expect(host.events(.fullPressUp).isEmpty)
        let up = try #require(host.events(.lightPressUp).first)
        #expect((1350...1650).contains(up.peakForceMillinewtons))
        #expect(host.device.feedbackLog.isEmpty)
    }

    @Test("a full click: ordered events, peak force, the firmware's own click haptic", arguments: seeds)
    func fullClick(seed: UInt64) throws {
        var host = HostHarness(seed: seed)
        try host.connect()
        try host.play("full-click force=3500mN hold=80ms")
        let kinds = host.events.map(\.kind).filter { $0 != .slide }
        #expect(kinds == [.touchDown, .lightPressDown, .fullPressDown, .fullPressUp, .lightPressUp, .touchUp])
        let down = try #require(host.events(.fullPressDown).first)
        let up = try #require(host.events(.fullPressUp).first)
        #expect(down.source == .cameraControl)
        #expect(down.forceMillinewtons >= 2500)
        #expect((3300...3800).contains(up.peakForceMillinewtons))
        #expect(up.timestampMicros > down.timestampMicros)
        let numbers = host.events.map(\.eventNumber)
        #expect(numbers == numbers.sorted())
        let clicks = host.device.feedbackLog.filter {
            $0.kind == .haptic(pattern: FeedbackRecord.HapticPattern.click, intensityPercent: 100)
        }
        #expect(clicks.count == 1)
        #expect(clicks.first?.timestampMicros == down.timestampMicros)
    }

    @Test("click and hold stays pressed for the hold")
    func clickAndHold() throws {
        var host = HostHarness(seed: 3)
        try host.connect()
        try host.play("click-and-hold 800ms")
        let down = try #require(host.events(.fullPressDown).first)
        let up = try #require(host.events(.fullPressUp).first)
        #expect(host.events(.fullPressDown).count == 1)
        #expect(up.timestampMicros - down.timestampMicros >= 800_000)
        #expect(up.timestampMicros - down.timestampMicros < 900_000)
    }

    @Test("hysteresis: between off and on nothing changes")
    func hysteresis() throws {
        var host = HostHarness(seed: 5)
        try host.connect()
        try host.play(
            """
            noise off
            force 700mN over=50ms   # above light off, below light on
            hold 100ms
            force 1000mN over=50ms  # light on
            hold 100ms
            force 600mN over=50ms   # still above light off (500)
            hold 100ms
            force 1000mN over=50ms
            hold 100ms
            force 2400mN over=50ms  # below full on
            hold 100ms
            force 2700mN over=50ms  # full on
            force 1900mN over=50ms  # above full off (1800)
            hold 100ms
            force 2700mN over=50ms
            hold 100ms
            release
            """)
        #expect(host.events(.lightPressDown).count == 1)
        #expect(host.events(.lightPressUp).count == 1)
        #expect(host.events(.fullPressDown).count == 1)
        #expect(host.events(.fullPressUp).count == 1)
        let lightUp = try #require(host.events(.lightPressUp).first)
        #expect((2650...2750).contains(lightUp.peakForceMillinewtons))
    }

    @Test("a press below the light threshold produces no press", arguments: [1, 2, 3] as [UInt64])
    func belowThreshold(seed: UInt64) throws {
        var host = HostHarness(seed: seed)
        try host.connect()
        try host.play("light-press force=650mN hold=500ms")
        #expect(host.events(.lightPressDown).isEmpty)
        #expect(host.events(.touchDown).count == 1)
        #expect(host.events(.touchUp).count == 1)
    }

    @Test("double light press gives two light presses and no full press")
    func doubleLightPress() throws {
        var host = HostHarness(seed: 11)
        try host.connect()
        try host.play("double-light-press gap=150ms")
        #expect(host.events(.lightPressDown).count == 2)
        #expect(host.events(.lightPressUp).count == 2)
        #expect(host.events(.fullPressDown).isEmpty)
        #expect(host.events(.touchDown).count == 1)
    }

    @Test("buttons are debounced against contact bounce", arguments: seeds)
    func buttonDebounce(seed: UInt64) throws {
        var host = HostHarness(seed: seed)
        try host.connect()
        try host.play(
            """
            button volume-up hold=100ms
            button volume-down hold=60ms
            button action hold=200ms
            """)
        let downs = host.events(.buttonDown).map(\.source)
        let ups = host.events(.buttonUp).map(\.source)
        #expect(downs == [.volumeUp, .volumeDown, .actionButton])
        #expect(ups == [.volumeUp, .volumeDown, .actionButton])
    }

    @Test("a contact glitch shorter than the debounce time is no press")
    func glitchIgnored() throws {
        var host = HostHarness(seed: 1)
        try host.connect()
        host.device.setBounce(false)
        host.device.setFinger(touched: false, forceMillinewtons: 0, buttons: .volumeDown)
        try host.run(millis: 3)
        host.device.setFinger(touched: false, forceMillinewtons: 0)
        try host.run(millis: 50)
        #expect(host.events(.buttonDown).isEmpty)
        host.device.setFinger(touched: false, forceMillinewtons: 0, buttons: .volumeDown)
        try host.run(millis: 30)
        host.device.setFinger(touched: false, forceMillinewtons: 0)
        try host.run(millis: 30)
        #expect(host.events(.buttonDown).map(\.source) == [.volumeDown])
        #expect(host.events(.buttonUp).map(\.source) == [.volumeDown])
    }

    @Test("slide events are coalesced: at most one per interval, latest position")
    func slideCoalescing() throws {
        var host = HostHarness(seed: 9)
        try host.connect()
        try host.play("slide from=0.1 to=0.9 over=500ms")
        let slides = host.events(.slide)
        #expect(slides.count >= 20)
        #expect(slides.count <= 500 / 16 + 2)
        for (earlier, later) in zip(slides, slides.dropFirst()) {
            #expect(later.timestampMicros - earlier.timestampMicros >= 16_000)
            #expect(later.position > earlier.position)
        }
        let last = try #require(slides.last)
        #expect((900...930).contains(last.position))  // 0.9 of 1024 counts ≈ 921
        #expect(host.events(.lightPressDown).isEmpty)
    }

    @Test("a resting finger sends no slide events despite sensor jitter", arguments: [1, 2, 3, 4] as [UInt64])
    func restingFinger(seed: UInt64) throws {
        var host = HostHarness(seed: seed)
        try host.connect()
        try host.play("touch at=0.5 hold=1s\nrelease")
        #expect(host.events(.slide).isEmpty)
        #expect(host.events(.touchDown).count == 1)
        #expect(host.events(.touchUp).count == 1)
    }

    @Test("a slide that starts with a light press")
    func lightPressSlide() throws {
        var host = HostHarness(seed: 4)
        try host.connect()
        try host.play("slide from=0.8 to=0.2 over=400ms force=1200mN")
        let lightDown = try #require(host.events(.lightPressDown).first)
        let firstSlide = try #require(host.events(.slide).first)
        #expect(lightDown.eventNumber < firstSlide.eventNumber || lightDown.timestampMicros <= firstSlide.timestampMicros)
        #expect(host.events(.fullPressDown).isEmpty)
        let slides = host.events(.slide)
        for (earlier, later) in zip(slides, slides.dropFirst()) {
            #expect(later.position < earlier.position)
        }
    }

    @Test("remote clicks")
    func remoteClicks() throws {
        var host = HostHarness(seed: 2)
        try host.connect()
        try host.play("remote-click count=2\npause 50ms\nremote-click")
        let clicks = host.events(.remoteClick)
        #expect(clicks.count == 3)
        #expect(clicks.allSatisfy { $0.source == .remote })
        host.device.remoteClick()
        try host.run(millis: 20)
        #expect(host.events(.remoteClick).count == 4)
    }

    @Test("the sensor's start-up offset is tared away", arguments: [1, 2, 3] as [UInt64])
    func tare(seed: UInt64) throws {
        var host = HostHarness(seed: seed)
        try host.connect()
        try host.run(millis: 100)  // the firmware tares on untouched samples after boot
        host.device.setNoise(false)
        host.device.setFinger(touched: true, forceMillinewtons: 1000)
        try host.run(millis: 100)
        let down = try #require(host.events(.lightPressDown).first)
        #expect(down.forceMillinewtons >= 800)
        host.device.setFinger(touched: false, forceMillinewtons: 0)
        try host.run(millis: 100)
        // the simulated sensor reads 150–550 mN unloaded: without the tare the peak would be that much higher
        let up = try #require(host.events(.lightPressUp).first)
        #expect((990...1010).contains(up.peakForceMillinewtons))
    }
}

/// Behaviour of the player and the board around the pipeline.
@Suite("Simulated board")
struct SimulatedBoardTests {
    @Test("a shutter switch is OR-ed with the force: one full press, no button event")
    func shutterSwitch() throws {
        var host = HostHarness(seed: 1)
        try host.connect()
        try host.run(millis: 100)
        host.device.setFinger(touched: true, forceMillinewtons: 150, buttons: .shutterSwitch)
        try host.run(millis: 50)
        host.device.setFinger(touched: true, forceMillinewtons: 3000, buttons: .shutterSwitch)
        try host.run(millis: 50)
        host.device.setFinger(touched: true, forceMillinewtons: 150)
        try host.run(millis: 50)
        host.device.setFinger(touched: false, forceMillinewtons: 0)
        try host.run(millis: 50)
        #expect(host.events(.fullPressDown).count == 1)
        #expect(host.events(.fullPressUp).count == 1)
        #expect(host.events(.lightPressDown).count == 1)
        #expect(host.events(.buttonDown).isEmpty)
    }

    @Test("a new scenario replaces the one playing")
    func replace() throws {
        var host = HostHarness(seed: 2)
        try host.connect()
        try host.device.play(scenario: "pause 5s\nfull-click")
        try host.run(millis: 200)
        try host.play("light-press")
        #expect(host.events(.lightPressDown).count == 1)
        #expect(host.events(.fullPressDown).isEmpty)
        #expect(!host.device.isScenarioRunning)
    }

    @Test("a scenario's noise step lasts until the scenario ends, is replaced or is stopped")
    func noiseStepEndsWithTheScenario() throws {
        let device = EmbeddedDevice(seed: 1)
        try device.play(scenario: "noise off\npause 20ms")
        device.advance(byMicros: 110_000)  // the boot's settle (100 ms), then 10 ms into the scenario
        #expect(device.isScenarioRunning && !device.isNoiseOn)
        device.advance(byMicros: 50_000)
        #expect(!device.isScenarioRunning && device.isNoiseOn)

        // The noise set from outside is what comes back, also after a scenario replaced by another.
        device.setNoise(false)
        try device.play(scenario: "noise on\npause 50ms")
        device.advance(byMicros: 10_000)
        #expect(device.isNoiseOn)
        try device.play(scenario: "pause 5ms")
        #expect(!device.isNoiseOn, "the replaced scenario's noise step ended with it")
        device.advance(byMicros: 20_000)
        #expect(!device.isScenarioRunning && !device.isNoiseOn)
        // Stopped, the same.
        try device.play(scenario: "noise on\npause 50ms")
        device.advance(byMicros: 10_000)
        #expect(device.isNoiseOn)
        device.stopScenario()
        #expect(!device.isNoiseOn)
    }

    @Test("an empty scenario is valid and ends at once")
    func empty() throws {
        let device = EmbeddedDevice(seed: 1)
        try device.play(scenario: "")
        try device.play(scenario: "# only a comment\n\n")
        device.advance(byMicros: 200_000)
        #expect(!device.isScenarioRunning)
        #expect(device.scenarioDurationMicros == 0)
    }

    @Test("feedback requested over the link is logged with its device time")
    func feedbackLog() throws {
        var host = HostHarness(seed: 1)
        try host.connect()
        let reply = try host.call(.feedbackPlayHaptic, PlayHapticRequest(pattern: .detent, intensityPercent: 40))
        #expect(reply.type == .response)
        let record = try #require(host.device.feedbackLog.last)
        #expect(record.kind == .haptic(pattern: FeedbackRecord.HapticPattern.detent, intensityPercent: 40))
        #expect(record.timestampMicros <= host.device.nowMicros)
        host.device.clearFeedbackLog()
        #expect(host.device.feedbackLog.isEmpty)
    }
}
