import CameraControlProtoC

/// The indicator LED's mode (`cameracontrol.v1.IndicatorMode`).
///
/// Values this version does not know decode as ``off`` (the schema's zero value).
public enum IndicatorMode: UInt32, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Dark.
    case off = 0
    /// Lit.
    case on = 1
    /// Blinking.
    case blink = 2

    /// `off`, `on` or `blink`.
    public var description: String {
        switch self {
        case .off: "off"
        case .on: "on"
        case .blink: "blink"
        }
    }

    init(c value: Cameracontrol__V1__IndicatorMode) {
        self = IndicatorMode(rawValue: UInt32(truncatingIfNeeded: value.rawValue)) ?? .off
    }

    var c: Cameracontrol__V1__IndicatorMode { Cameracontrol__V1__IndicatorMode(rawValue: numericCast(rawValue)) }
}

/// Plays a haptic pattern (`cameracontrol.v1.PlayHapticRequest`).
public struct PlayHapticRequest: WireMessage, CBackedMessage {
    /// The waveform.
    public var pattern: HapticPattern
    /// 1…100; 0 means the device default.
    public var intensityPercent: UInt32

    /// Unspecified pattern, default intensity.
    public init() { self.init(pattern: .unspecified) }
    /// A request to play `pattern`.
    public init(pattern: HapticPattern, intensityPercent: UInt32 = 0) {
        self.pattern = pattern
        self.intensityPercent = intensityPercent
    }

    /// `cameracontrol.v1.PlayHapticRequest`.
    public static var protoMessageName: String { "cameracontrol.v1.PlayHapticRequest" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__PlayHapticRequest
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__play_haptic_request__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__play_haptic_request__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__play_haptic_request__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__play_haptic_request__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__play_haptic_request__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {
        m.pattern = pattern.c
        m.intensity_percent = intensityPercent
    }
    init(c m: CMessage) { self.init(pattern: HapticPattern(c: m.pattern), intensityPercent: m.intensity_percent) }
}

/// Plays a built-in sound (`cameracontrol.v1.PlaySoundRequest`).
public struct PlaySoundRequest: WireMessage, CBackedMessage {
    /// The sound.
    public var sound: Sound

    /// Unspecified sound.
    public init() { self.init(sound: .unspecified) }
    /// A request to play `sound`.
    public init(sound: Sound) { self.sound = sound }

    /// `cameracontrol.v1.PlaySoundRequest`.
    public static var protoMessageName: String { "cameracontrol.v1.PlaySoundRequest" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__PlaySoundRequest
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__play_sound_request__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__play_sound_request__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__play_sound_request__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__play_sound_request__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__play_sound_request__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) { m.sound = sound.c }
    init(c m: CMessage) { self.init(sound: Sound(c: m.sound)) }
}

/// Sets the indicator LED (`cameracontrol.v1.SetIndicatorRequest`).
public struct SetIndicatorRequest: WireMessage, CBackedMessage {
    /// Off, on or blinking.
    public var mode: IndicatorMode
    /// The colour, `0xRRGGBB`.
    public var rgb: UInt32

    /// LED off.
    public init() { self.init(mode: .off) }
    /// A request for `mode` in colour `rgb`.
    public init(mode: IndicatorMode, rgb: UInt32 = 0) {
        self.mode = mode
        self.rgb = rgb
    }

    /// `cameracontrol.v1.SetIndicatorRequest`.
    public static var protoMessageName: String { "cameracontrol.v1.SetIndicatorRequest" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__SetIndicatorRequest
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__set_indicator_request__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__set_indicator_request__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__set_indicator_request__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__set_indicator_request__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__set_indicator_request__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {
        m.mode = mode.c
        m.rgb = rgb
    }
    init(c m: CMessage) { self.init(mode: IndicatorMode(c: m.mode), rgb: m.rgb) }
}

/// The answer to every feedback request (`cameracontrol.v1.FeedbackResponse`).
public struct FeedbackResponse: WireMessage, CBackedMessage {
    /// Device time at which the feedback started, microseconds since boot.
    public var deviceTimeMicros: UInt64

    /// Time zero.
    public init() { self.init(deviceTimeMicros: 0) }
    /// A response.
    public init(deviceTimeMicros: UInt64) { self.deviceTimeMicros = deviceTimeMicros }

    /// `cameracontrol.v1.FeedbackResponse`.
    public static var protoMessageName: String { "cameracontrol.v1.FeedbackResponse" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__FeedbackResponse
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__feedback_response__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__feedback_response__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__feedback_response__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__feedback_response__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__feedback_response__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) { m.device_time_us = deviceTimeMicros }
    init(c m: CMessage) { self.init(deviceTimeMicros: m.device_time_us) }
}
