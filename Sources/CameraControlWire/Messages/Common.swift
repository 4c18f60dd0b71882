import CameraControlProtoC

/// Haptic waveforms a device may play (`cameracontrol.v1.HapticPattern`).
///
/// Values this version does not know decode as ``unspecified``.
public enum HapticPattern: UInt32, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Not set.
    case unspecified = 0
    /// A short tick: a discrete step or prominent value was crossed.
    case detent = 1
    /// The full-press click (the firmware plays it itself at full press).
    case click = 2
    /// The release click after a full press.
    case release = 3
    /// A soft bump: the end of a control's range was reached.
    case limit = 4

    /// A readable name (`detent`, …).
    public var description: String {
        switch self {
        case .unspecified: "unspecified"
        case .detent: "detent"
        case .click: "click"
        case .release: "release"
        case .limit: "limit"
        }
    }

    init(c value: Cameracontrol__V1__HapticPattern) {
        self = HapticPattern(rawValue: UInt32(truncatingIfNeeded: value.rawValue)) ?? .unspecified
    }

    var c: Cameracontrol__V1__HapticPattern { Cameracontrol__V1__HapticPattern(rawValue: numericCast(rawValue)) }
}

/// Built-in sounds, as AVCaptureEventSound (`cameracontrol.v1.Sound`).
///
/// Values this version does not know decode as ``unspecified``.
public enum Sound: UInt32, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Not set.
    case unspecified = 0
    /// The camera shutter.
    case shutter = 1
    /// Video recording begins.
    case beginVideoRecording = 2
    /// Video recording ends.
    case endVideoRecording = 3

    /// A readable name (`shutter`, …).
    public var description: String {
        switch self {
        case .unspecified: "unspecified"
        case .shutter: "shutter"
        case .beginVideoRecording: "begin-video-recording"
        case .endVideoRecording: "end-video-recording"
        }
    }

    init(c value: Cameracontrol__V1__Sound) {
        self = Sound(rawValue: UInt32(truncatingIfNeeded: value.rawValue)) ?? .unspecified
    }

    var c: Cameracontrol__V1__Sound { Cameracontrol__V1__Sound(rawValue: numericCast(rawValue)) }
}

extension InputSource {
    /// Decodes a C value; values this version does not know become ``unspecified``.
    init(c value: Cameracontrol__V1__InputSource) {
        self = InputSource(rawValue: UInt32(truncatingIfNeeded: value.rawValue)) ?? .unspecified
    }

    var c: Cameracontrol__V1__InputSource { Cameracontrol__V1__InputSource(rawValue: numericCast(rawValue)) }
}

extension InputEventKind {
    /// Decodes a C value; values this version does not know become ``unspecified``.
    init(c value: Cameracontrol__V1__InputEventKind) {
        self = InputEventKind(rawValue: UInt32(truncatingIfNeeded: value.rawValue)) ?? .unspecified
    }

    var c: Cameracontrol__V1__InputEventKind { Cameracontrol__V1__InputEventKind(rawValue: numericCast(rawValue)) }
}

/// A protocol version (`cameracontrol.v1.ProtocolVersion`): peers with the same major interoperate and
/// the session runs at the lower minor (docs/PROTOCOL.md §9).
public struct ProtocolVersion: WireMessage, CBackedMessage, Comparable, CustomStringConvertible {
    /// The major version; a different major does not interoperate.
    public var major: UInt32
    /// The minor version; minors only add.
    public var minor: UInt32

    /// Version 0.0.
    public init() { self.init(major: 0, minor: 0) }
    /// A version `major.minor`.
    public init(major: UInt32, minor: UInt32) {
        self.major = major
        self.minor = minor
    }

    /// The version this implementation speaks: 1.0.
    public static let v1_0 = ProtocolVersion(major: 1, minor: 0)

    /// `major.minor`.
    public var description: String { "\(major).\(minor)" }

    /// Orders by major, then minor.
    public static func < (lhs: ProtocolVersion, rhs: ProtocolVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }

    /// `cameracontrol.v1.ProtocolVersion`.
    public static var protoMessageName: String { "cameracontrol.v1.ProtocolVersion" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__ProtocolVersion
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__protocol_version__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__protocol_version__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__protocol_version__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__protocol_version__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__protocol_version__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {
        m.major = major
        m.minor = minor
    }
    init(c m: CMessage) { self.init(major: m.major, minor: m.minor) }
}

/// Force-conditioning thresholds in millinewtons after tare and filtering (`cameracontrol.v1.Thresholds`).
///
/// Each stage turns on at `*OnMillinewtons` and off at `*OffMillinewtons`. Valid when
/// `lightPressOff < lightPressOn <= fullPressOff < fullPressOn` and
/// `fullPressOn - lightPressOn >= minStageGap` (see ``isValid``).
public struct Thresholds: WireMessage, CBackedMessage {
    /// Light press turns on at this force.
    public var lightPressOnMillinewtons: UInt32
    /// Light press turns off below this force.
    public var lightPressOffMillinewtons: UInt32
    /// Full press (the click) turns on at this force.
    public var fullPressOnMillinewtons: UInt32
    /// Full press turns off below this force.
    public var fullPressOffMillinewtons: UInt32
    /// The smallest allowed gap between the light and full press "on" forces.
    public var minStageGapMillinewtons: UInt32

    /// All thresholds zero (not valid).
    public init() {
        self.init(
            lightPressOnMillinewtons: 0, lightPressOffMillinewtons: 0, fullPressOnMillinewtons: 0, fullPressOffMillinewtons: 0,
            minStageGapMillinewtons: 0)
    }

    /// Thresholds with every value given.
    public init(
        lightPressOnMillinewtons: UInt32, lightPressOffMillinewtons: UInt32, fullPressOnMillinewtons: UInt32,
        fullPressOffMillinewtons: UInt32, minStageGapMillinewtons: UInt32
    ) {
        self.lightPressOnMillinewtons = lightPressOnMillinewtons
        self.lightPressOffMillinewtons = lightPressOffMillinewtons
        self.fullPressOnMillinewtons = fullPressOnMillinewtons
        self.fullPressOffMillinewtons = fullPressOffMillinewtons
        self.minStageGapMillinewtons = minStageGapMillinewtons
    }

    /// True when the schema's ordering rule holds (see the type's documentation).
    public var isValid: Bool {
        lightPressOffMillinewtons < lightPressOnMillinewtons && lightPressOnMillinewtons <= fullPressOffMillinewtons
            && fullPressOffMillinewtons < fullPressOnMillinewtons
            && fullPressOnMillinewtons - lightPressOnMillinewtons >= minStageGapMillinewtons
    }

    /// `cameracontrol.v1.Thresholds`.
    public static var protoMessageName: String { "cameracontrol.v1.Thresholds" }
    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] { packed() }
    /// Decodes the protobuf encoding; throws ``WireError/Code/malformedMessage``.
    public init(serializedBytes bytes: [UInt8]) throws(WireError) { self = try Self.unpacked(bytes) }

    typealias CMessage = Cameracontrol__V1__Thresholds
    static func cInit(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__thresholds__init(m) }
    static func cPackedSize(_ m: UnsafePointer<CMessage>) -> Int { cameracontrol__v1__thresholds__get_packed_size(m) }
    static func cPack(_ m: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int {
        cameracontrol__v1__thresholds__pack(m, out)
    }
    static func cUnpack(_ n: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>? {
        cameracontrol__v1__thresholds__unpack(nil, n, data)
    }
    static func cFree(_ m: UnsafeMutablePointer<CMessage>) { cameracontrol__v1__thresholds__free_unpacked(m, nil) }
    func fill(_ m: inout CMessage, arena: CArena) {
        m.light_press_on_mn = lightPressOnMillinewtons
        m.light_press_off_mn = lightPressOffMillinewtons
        m.full_press_on_mn = fullPressOnMillinewtons
        m.full_press_off_mn = fullPressOffMillinewtons
        m.min_stage_gap_mn = minStageGapMillinewtons
    }
    init(c m: CMessage) {
        self.init(
            lightPressOnMillinewtons: m.light_press_on_mn, lightPressOffMillinewtons: m.light_press_off_mn,
            fullPressOnMillinewtons: m.full_press_on_mn, fullPressOffMillinewtons: m.full_press_off_mn,
            minStageGapMillinewtons: m.min_stage_gap_mn)
    }
}
