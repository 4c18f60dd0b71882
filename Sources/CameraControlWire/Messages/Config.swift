import CameraControlProtoC

/// The device's whole configuration (`cameracontrol.v1.Config`). Configure replaces it as one unit;
/// zero is never valid for these fields (the device answers `INVALID_ARGUMENT`).
public struct Config: WireMessage, CBackedMessage {
    /// Force-conditioning thresholds.
    public var thresholds: Thresholds?
    /// One of ``Capabilities/sampleRatesHertz``.
    public var sampleRateHertz: UInt32
    /// At most one SLIDE event per this interval (latest position wins), milliseconds.
    public var slideIntervalMillis: UInt32
    /// Button debounce time, milliseconds.
    public var debounceMillis: UInt32

    /// Everything absent or zero (not a valid configuration).
    public init() { self.init(thresholds: nil, sampleRateHertz: 0, slideIntervalMillis: 0, debounceMillis: 0) }
    /// A configuration with every field given.
    public init(thresholds: Thresholds?, sampleRateHertz: UInt32, slideIntervalMillis: UInt32, debounceMillis: UInt32) {
        self.thresholds = thresholds
        self.sampleRateHertz = sampleRateHertz
        self.slideIntervalMillis = slideIntervalMillis
        self.debounceMillis = debounceMillis
    }

    /// `cameracontrol.v1.Config`.
    public static var protoMessageName: String { "cameracontrol.v1.Config" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__Config
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__config__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__config__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int { cameracontrol__v1__config__pack(m, out) }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__config__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__config__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {
        m.thresholds = thresholds?.cMessage(in: arena)
        m.sample_rate_hz = sampleRateHertz
        m.slide_interval_ms = slideIntervalMillis
        m.debounce_ms = debounceMillis
    }
    init(c m: CMessage) {
        self.init(
            thresholds: m.thresholds.map { Thresholds(c: $0.pointee) }, sampleRateHertz: m.sample_rate_hz,
            slideIntervalMillis: m.slide_interval_ms, debounceMillis: m.debounce_ms)
    }
}

/// Reads the configuration (`cameracontrol.v1.GetConfigRequest`; no fields).
public struct GetConfigRequest: WireMessage, CBackedMessage {
    /// The request.
    public init() {}

    /// `cameracontrol.v1.GetConfigRequest`.
    public static var protoMessageName: String { "cameracontrol.v1.GetConfigRequest" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__GetConfigRequest
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__get_config_request__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__get_config_request__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__get_config_request__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__get_config_request__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__get_config_request__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {}
    init(c m: CMessage) {}
}

/// Replaces the configuration (`cameracontrol.v1.ConfigureRequest`).
public struct ConfigureRequest: WireMessage, CBackedMessage {
    /// The new configuration.
    public var config: Config?

    /// No configuration (the device rejects it).
    public init() { self.init(config: nil) }
    /// A request to apply `config`.
    public init(config: Config?) { self.config = config }

    /// `cameracontrol.v1.ConfigureRequest`.
    public static var protoMessageName: String { "cameracontrol.v1.ConfigureRequest" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__ConfigureRequest
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__configure_request__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__configure_request__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__configure_request__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__configure_request__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__configure_request__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) { m.config = config?.cMessage(in: arena) }
    init(c m: CMessage) { self.init(config: m.config.map { Config(c: $0.pointee) }) }
}
