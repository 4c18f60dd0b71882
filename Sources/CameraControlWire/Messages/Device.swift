import CameraControlProtoC

/// Who the device is (`cameracontrol.v1.DeviceIdentity`).
public struct DeviceIdentity: WireMessage, CBackedMessage {
    /// The maker.
    public var vendor: String
    /// The product.
    public var model: String
    /// This unit's serial number.
    public var serialNumber: String
    /// The firmware's version string.
    public var firmwareVersion: String
    /// USB vendor id, 0 when not a USB device.
    public var usbVendorID: UInt32
    /// USB product id, 0 when not a USB device.
    public var usbProductID: UInt32

    /// Every field empty or zero.
    public init() { self.init(vendor: "", model: "") }

    /// An identity; unset fields are empty or zero.
    public init(
        vendor: String, model: String, serialNumber: String = "", firmwareVersion: String = "",
        usbVendorID: UInt32 = 0, usbProductID: UInt32 = 0
    ) {
        self.vendor = vendor
        self.model = model
        self.serialNumber = serialNumber
        self.firmwareVersion = firmwareVersion
        self.usbVendorID = usbVendorID
        self.usbProductID = usbProductID
    }

    /// `cameracontrol.v1.DeviceIdentity`.
    public static var protoMessageName: String { "cameracontrol.v1.DeviceIdentity" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__DeviceIdentity
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__device_identity__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__device_identity__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__device_identity__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__device_identity__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__device_identity__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {
        m.vendor = arena.string(vendor)
        m.model = arena.string(model)
        m.serial_number = arena.string(serialNumber)
        m.firmware_version = arena.string(firmwareVersion)
        m.usb_vendor_id = usbVendorID
        m.usb_product_id = usbProductID
    }
    init(c m: CMessage) {
        self.init(
            vendor: CValue.string(m.vendor), model: CValue.string(m.model),
            serialNumber: CValue.string(m.serial_number), firmwareVersion: CValue.string(m.firmware_version),
            usbVendorID: m.usb_vendor_id, usbProductID: m.usb_product_id)
    }
}

/// What the device has and can do (`cameracontrol.v1.Capabilities`); hosts assume nothing else.
public struct Capabilities: WireMessage, CBackedMessage {
    /// The device has a force sensor.
    public var hasForceSensor: Bool = false
    /// The device has a capacitive touch sensor.
    public var hasTouchSensor: Bool = false
    /// The device has a slide strip.
    public var hasSlideStrip: Bool = false
    /// Physical buttons present besides the Camera Control itself.
    public var buttons: [InputSource] = []
    /// Largest force the sensor reports, millinewtons.
    public var forceMaxMillinewtons: UInt32 = 0
    /// Slide positions run from 0 to `slideResolution - 1`.
    public var slideResolution: UInt32 = 0
    /// Length of the slide strip, micrometres.
    public var slideLengthMicrometres: UInt32 = 0
    /// Sample rates the device accepts in Configure, hertz.
    public var sampleRatesHertz: [UInt32] = []
    /// Largest unstuffed frame the device accepts and sends (at least 128).
    public var maxFrameBytes: UInt32 = 0
    /// Most calls the device keeps in flight at once.
    public var maxConcurrentCalls: UInt32 = 0
    /// Most capture controls the overlay can show.
    public var maxControls: UInt32 = 0
    /// True when the hardware can drive capture controls (force + touch + slide).
    public var supportsControls: Bool = false
    /// Haptic patterns the actuator plays; empty when there is no actuator.
    public var hapticPatterns: [HapticPattern] = []
    /// The device has a speaker.
    public var hasSpeaker: Bool = false
    /// The device has an indicator LED.
    public var hasIndicatorLED: Bool = false
    /// The thresholds in force when the handshake was answered.
    public var thresholds: Thresholds?
    /// The device sends a heartbeat when it has sent nothing for this long, milliseconds.
    public var heartbeatIntervalMillis: UInt32 = 0
    /// True when the device also serves SimulatorService.
    public var isSimulator: Bool = false

    /// No capabilities at all; set the fields you need.
    public init() {}

    /// `cameracontrol.v1.Capabilities`.
    public static var protoMessageName: String { "cameracontrol.v1.Capabilities" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__Capabilities
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__capabilities__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__capabilities__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__capabilities__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__capabilities__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__capabilities__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {
        m.has_force_sensor = CValue.cBool(hasForceSensor)
        m.has_touch_sensor = CValue.cBool(hasTouchSensor)
        m.has_slide_strip = CValue.cBool(hasSlideStrip)
        m.n_buttons = buttons.count
        m.buttons = arena.array(buttons.map(\.c))
        m.force_max_mn = forceMaxMillinewtons
        m.slide_resolution = slideResolution
        m.slide_length_um = slideLengthMicrometres
        m.n_sample_rates_hz = sampleRatesHertz.count
        m.sample_rates_hz = arena.array(sampleRatesHertz)
        m.max_frame_bytes = maxFrameBytes
        m.max_concurrent_calls = maxConcurrentCalls
        m.max_controls = maxControls
        m.supports_controls = CValue.cBool(supportsControls)
        m.n_haptic_patterns = hapticPatterns.count
        m.haptic_patterns = arena.array(hapticPatterns.map(\.c))
        m.has_speaker = CValue.cBool(hasSpeaker)
        m.has_indicator_led = CValue.cBool(hasIndicatorLED)
        m.thresholds = thresholds?.cMessage(in: arena)
        m.heartbeat_interval_ms = heartbeatIntervalMillis
        m.is_simulator = CValue.cBool(isSimulator)
    }
    init(c m: CMessage) {
        hasForceSensor = CValue.bool(m.has_force_sensor)
        hasTouchSensor = CValue.bool(m.has_touch_sensor)
        hasSlideStrip = CValue.bool(m.has_slide_strip)
        buttons = CValue.array(m.buttons, m.n_buttons, InputSource.init(c:))
        forceMaxMillinewtons = m.force_max_mn
        slideResolution = m.slide_resolution
        slideLengthMicrometres = m.slide_length_um
        sampleRatesHertz = CValue.array(m.sample_rates_hz, m.n_sample_rates_hz) { $0 }
        maxFrameBytes = m.max_frame_bytes
        maxConcurrentCalls = m.max_concurrent_calls
        maxControls = m.max_controls
        supportsControls = CValue.bool(m.supports_controls)
        hapticPatterns = CValue.array(m.haptic_patterns, m.n_haptic_patterns, HapticPattern.init(c:))
        hasSpeaker = CValue.bool(m.has_speaker)
        hasIndicatorLED = CValue.bool(m.has_indicator_led)
        thresholds = m.thresholds.map { Thresholds(c: $0.pointee) }
        heartbeatIntervalMillis = m.heartbeat_interval_ms
        isSimulator = CValue.bool(m.is_simulator)
    }
}

/// The first call of a session (`cameracontrol.v1.HandshakeRequest`).
public struct HandshakeRequest: WireMessage, CBackedMessage {
    /// The host's protocol version.
    public var hostVersion: ProtocolVersion?
    /// Free text naming the host software, for the device's logs.
    public var hostName: String

    /// No version, no name.
    public init() { self.init(hostVersion: nil, hostName: "") }
    /// A request announcing `hostVersion`.
    public init(hostVersion: ProtocolVersion?, hostName: String = "") {
        self.hostVersion = hostVersion
        self.hostName = hostName
    }

    /// `cameracontrol.v1.HandshakeRequest`.
    public static var protoMessageName: String { "cameracontrol.v1.HandshakeRequest" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__HandshakeRequest
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__handshake_request__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__handshake_request__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__handshake_request__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__handshake_request__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__handshake_request__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {
        m.host_version = hostVersion?.cMessage(in: arena)
        m.host_name = arena.string(hostName)
    }
    init(c m: CMessage) {
        self.init(hostVersion: m.host_version.map { ProtocolVersion(c: $0.pointee) }, hostName: CValue.string(m.host_name))
    }
}

/// The device's answer to a handshake (`cameracontrol.v1.HandshakeResponse`).
public struct HandshakeResponse: WireMessage, CBackedMessage {
    /// The device's own protocol version.
    public var deviceVersion: ProtocolVersion?
    /// The version the session runs at: same major, lower minor.
    public var negotiatedVersion: ProtocolVersion?
    /// Who the device is.
    public var identity: DeviceIdentity?
    /// What it can do.
    public var capabilities: Capabilities?
    /// The device clock (microseconds since boot) when it answered.
    public var deviceTimeMicros: UInt64
    /// Changes at every handshake: tells a reboot from a glitch.
    public var sessionID: UInt32

    /// Everything absent or zero.
    public init() { self.init(deviceVersion: nil) }
    /// A response; unset fields are absent or zero.
    public init(
        deviceVersion: ProtocolVersion?, negotiatedVersion: ProtocolVersion? = nil, identity: DeviceIdentity? = nil,
        capabilities: Capabilities? = nil, deviceTimeMicros: UInt64 = 0, sessionID: UInt32 = 0
    ) {
        self.deviceVersion = deviceVersion
        self.negotiatedVersion = negotiatedVersion
        self.identity = identity
        self.capabilities = capabilities
        self.deviceTimeMicros = deviceTimeMicros
        self.sessionID = sessionID
    }

    /// `cameracontrol.v1.HandshakeResponse`.
    public static var protoMessageName: String { "cameracontrol.v1.HandshakeResponse" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__HandshakeResponse
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__handshake_response__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__handshake_response__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__handshake_response__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__handshake_response__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__handshake_response__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {
        m.device_version = deviceVersion?.cMessage(in: arena)
        m.negotiated_version = negotiatedVersion?.cMessage(in: arena)
        m.identity = identity?.cMessage(in: arena)
        m.capabilities = capabilities?.cMessage(in: arena)
        m.device_time_us = deviceTimeMicros
        m.session_id = sessionID
    }
    init(c m: CMessage) {
        self.init(
            deviceVersion: m.device_version.map { ProtocolVersion(c: $0.pointee) },
            negotiatedVersion: m.negotiated_version.map { ProtocolVersion(c: $0.pointee) },
            identity: m.identity.map { DeviceIdentity(c: $0.pointee) },
            capabilities: m.capabilities.map { Capabilities(c: $0.pointee) },
            deviceTimeMicros: m.device_time_us, sessionID: m.session_id)
    }
}

/// A liveness probe with an echoed payload (`cameracontrol.v1.PingRequest`).
public struct PingRequest: WireMessage, CBackedMessage {
    /// Bytes the device echoes.
    public var payload: [UInt8]

    /// An empty ping.
    public init() { self.init(payload: []) }
    /// A ping carrying `payload`.
    public init(payload: [UInt8]) { self.payload = payload }

    /// `cameracontrol.v1.PingRequest`.
    public static var protoMessageName: String { "cameracontrol.v1.PingRequest" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__PingRequest
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__ping_request__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__ping_request__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__ping_request__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__ping_request__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__ping_request__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) { m.payload = arena.bytes(payload) }
    init(c m: CMessage) { self.init(payload: CValue.bytes(m.payload)) }
}

/// The answer to a ping (`cameracontrol.v1.PingResponse`).
public struct PingResponse: WireMessage, CBackedMessage {
    /// The request's payload, unchanged.
    public var payload: [UInt8]
    /// The device clock when it answered, microseconds since boot.
    public var deviceTimeMicros: UInt64

    /// Empty payload, time zero.
    public init() { self.init(payload: []) }
    /// A response.
    public init(payload: [UInt8], deviceTimeMicros: UInt64 = 0) {
        self.payload = payload
        self.deviceTimeMicros = deviceTimeMicros
    }

    /// `cameracontrol.v1.PingResponse`.
    public static var protoMessageName: String { "cameracontrol.v1.PingResponse" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__PingResponse
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__ping_response__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__ping_response__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__ping_response__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__ping_response__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__ping_response__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {
        m.payload = arena.bytes(payload)
        m.device_time_us = deviceTimeMicros
    }
    init(c m: CMessage) { self.init(payload: CValue.bytes(m.payload), deviceTimeMicros: m.device_time_us) }
}
