import CameraControlEmbedded
import CameraControlWire
import Testing

/// Threshold validation and effect, through ConfigService.
@Suite("Input configuration")
struct ConfigurationTests {
    static func config(
        lightOn: UInt32 = 800, lightOff: UInt32 = 500, fullOn: UInt32 = 2500, fullOff: UInt32 = 1800,
        gap: UInt32 = 1000, rate: UInt32 = 1000, slide: UInt32 = 16, debounce: UInt32 = 5
    ) -> Config {
        Config(
            thresholds: Thresholds(
                lightPressOnMillinewtons: lightOn, lightPressOffMillinewtons: lightOff,
                fullPressOnMillinewtons: fullOn, fullPressOffMillinewtons: fullOff,
                minStageGapMillinewtons: gap),
            sampleRateHertz: rate, slideIntervalMillis: slide, debounceMillis: debounce)
    }

    @Test("the defaults are the documented ones")
    func defaults() {
        let device = EmbeddedDevice(seed: 1)
        let c = device.inputConfiguration
        #expect(c.lightPressOnMillinewtons == 800)
        #expect(c.lightPressOffMillinewtons == 500)
        #expect(c.fullPressOnMillinewtons == 2500)
        #expect(c.fullPressOffMillinewtons == 1800)
        #expect(c.minStageGapMillinewtons == 1000)
        #expect(c.sampleRateHz == 1000)
        #expect(c.slideIntervalMilliseconds == 16)
        #expect(c.debounceMilliseconds == 5)
    }

    static let invalid: [(String, Config)] = [
        ("light off not below light on", config(lightOn: 800, lightOff: 800)),
        ("full off below light on", config(fullOff: 700)),
        ("full off not below full on", config(fullOn: 2500, fullOff: 2500)),
        ("stage gap too small", config(lightOn: 1000, fullOn: 1900, fullOff: 1500)),
        ("sample rate not offered", config(rate: 300)),
        ("zero sample rate", config(rate: 0)),
        ("zero slide interval", config(slide: 0)),
        ("slide interval too long", config(slide: 1001)),
        ("zero debounce", config(debounce: 0)),
        ("debounce too long", config(debounce: 101)),
        ("zero gap", config(gap: 0)),
    ]

    @Test("invalid configurations are refused and change nothing", arguments: invalid)
    func invalidRefused(name: String, config: Config) throws {
        var host = HostHarness(seed: 1)
        try host.connect()
        let before = host.device.inputConfiguration
        let reply = try host.call(.configConfigure, ConfigureRequest(config: config))
        #expect(reply.type == .error, "\(name)")
        #expect(reply.status == .invalidArgument, "\(name)")
        #expect(host.device.inputConfiguration == before)
    }

    @Test("a valid configuration applies: a raised light threshold ignores a 1200 mN press")
    func validApplies() throws {
        var host = HostHarness(seed: 1)
        try host.connect()
        let reply = try host.call(
            .configConfigure,
            ConfigureRequest(
                config: Self.config(lightOn: 1500, lightOff: 1000, fullOn: 3000, fullOff: 2200)))
        #expect(reply.type == .response)
        #expect(host.device.inputConfiguration.lightPressOnMillinewtons == 1500)
        try host.play("light-press force=1200mN")
        #expect(host.events(.lightPressDown).isEmpty)
        try host.play("light-press force=1900mN")
        #expect(host.events(.lightPressDown).count == 1)
    }

    @Test("a slower sample rate still detects presses", arguments: [100, 250, 500] as [UInt32])
    func sampleRates(rate: UInt32) throws {
        var host = HostHarness(seed: 2)
        try host.connect()
        let reply = try host.call(.configConfigure, ConfigureRequest(config: Self.config(rate: rate)))
        #expect(reply.type == .response)
        try host.play("full-click\nbutton action")
        #expect(host.events(.fullPressDown).count == 1)
        #expect(host.events(.fullPressUp).count == 1)
        #expect(host.events(.buttonDown).count == 1)
    }
}
