import CameraControlWire

/// Values used by the message and golden-vector tests; each field non-default where possible.
enum SampleMessages {
    static let thresholds = Thresholds(
        lightPressOnMillinewtons: 800, lightPressOffMillinewtons: 600, fullPressOnMillinewtons: 2400,
        fullPressOffMillinewtons: 2000, minStageGapMillinewtons: 1000)

    static let identity = DeviceIdentity(
        vendor: "CameraControl", model: "sim", serialNumber: "SIM-0001", firmwareVersion: "1.0.0",
        usbVendorID: 4617, usbProductID: 52225)

    static let capabilities: Capabilities = {
        var c = Capabilities()
        c.hasForceSensor = true
        c.hasTouchSensor = true
        c.hasSlideStrip = true
        c.buttons = [.volumeUp, .volumeDown, .actionButton]
        c.forceMaxMillinewtons = 10000
        c.slideResolution = 1024
        c.slideLengthMicrometres = 12000
        c.sampleRatesHertz = [500, 1000]
        c.maxFrameBytes = 512
        c.maxConcurrentCalls = 8
        c.maxControls = 6
        c.supportsControls = true
        c.hapticPatterns = [.detent, .click, .release, .limit]
        c.hasSpeaker = true
        c.hasIndicatorLED = true
        c.thresholds = thresholds
        c.heartbeatIntervalMillis = 50
        c.isSimulator = true
        return c
    }()

    static let handshakeRequest = HandshakeRequest(hostVersion: .v1_0, hostName: "camctl")
    static let handshakeResponse = HandshakeResponse(
        deviceVersion: .v1_0, negotiatedVersion: .v1_0, identity: identity, capabilities: capabilities,
        deviceTimeMicros: 123_456_789, sessionID: 0xDEAD_BEEF)
    static let config = Config(thresholds: thresholds, sampleRateHertz: 1000, slideIntervalMillis: 10, debounceMillis: 5)
    static let counters: Counters = {
        var c = Counters()
        c.uptimeMicros = 1
        c.framesReceived = 2
        c.framesSent = 3
        c.bytesReceived = 4
        c.bytesSent = 5
        c.checkErrors = 6
        c.framingErrors = 7
        c.oversizedFrames = 8
        c.unknownPacketTypes = 9
        c.unimplementedCalls = 10
        c.invalidArguments = 11
        c.cancelledCalls = 12
        c.retransmissions = 13
        c.duplicatesDropped = 14
        c.sequenceGaps = 15
        c.heartbeatTimeouts = 16
        c.callsRefused = 17
        c.txDropped = 18
        return c
    }()
    static let rawSamples = [
        RawSample(forceMillinewtons: 0, position: 0, isTouched: false),
        RawSample(forceMillinewtons: 120, position: 512, isTouched: true),
        RawSample(forceMillinewtons: 65535, position: 0x7FFF, isTouched: true),
    ]
    static let rawSampleBatch = RawSampleBatch(
        firstTimestampMicros: 2_000_000, sampleIntervalMicros: 1000, samples: rawSamples, droppedBefore: 3)

    /// One value of every message type of the schema.
    static let everyType: [any WireMessage] = [
        ProtocolVersion(major: 1, minor: 7),
        thresholds,
        identity,
        capabilities,
        handshakeRequest,
        handshakeResponse,
        PingRequest(payload: [0, 1, 2, 0, 255]),
        PingResponse(payload: [0, 1, 2, 0, 255], deviceTimeMicros: 5_000_000),
        InputEvent(
            timestampMicros: 1_234_567, kind: .fullPressDown, source: .cameraControl, forceMillinewtons: 2500,
            position: 300, peakForceMillinewtons: 3100, eventNumber: 42),
        StreamInputEventsRequest(),
        StreamRawSamplesRequest(samplesPerBatch: 16),
        rawSampleBatch,
        config,
        GetConfigRequest(),
        ConfigureRequest(config: config),
        PlayHapticRequest(pattern: .limit, intensityPercent: 60),
        PlaySoundRequest(sound: .endVideoRecording),
        SetIndicatorRequest(mode: .blink, rgb: 0xFF0000),
        FeedbackResponse(deviceTimeMicros: 7_000_123),
        counters,
        GetCountersRequest(),
        ResetCountersRequest(),
        RunScenarioRequest(scenario: "touch 0ms\npress 2500mN 100ms\nrelease\n"),
        RunScenarioResponse(steps: 3, durationMicros: 250_000),
        SimulatorStatus(isScenarioRunning: true, deviceTimeMicros: 9_000_000),
        GetSimulatorStatusRequest(),
    ]
}
