import FirmwareSim

/// One feedback the firmware started through its HAL: a haptic, a sound or an indicator change.
public struct FeedbackRecord: Hashable, Sendable {
    /// What was played or set.
    public enum Kind: Hashable, Sendable {
        /// A haptic waveform: `cameracontrol.v1.HapticPattern` value and intensity in percent.
        case haptic(pattern: UInt32, intensityPercent: UInt32)
        /// A sound: `cameracontrol.v1.Sound` value.
        case sound(UInt32)
        /// The indicator LED: `cameracontrol.v1.IndicatorMode` value and colour 0xRRGGBB.
        case indicator(mode: UInt32, rgb: UInt32)
    }

    /// Device time at which the firmware started it, microseconds since boot.
    public var timestampMicros: UInt64
    /// What it was.
    public var kind: Kind

    /// A record.
    public init(timestampMicros: UInt64, kind: Kind) {
        self.timestampMicros = timestampMicros
        self.kind = kind
    }

    init(_ record: ccsim_feedback_t) {
        let kind: Kind
        switch record.kind {
        case UInt32(CCSIM_FEEDBACK_HAPTIC.rawValue):
            kind = .haptic(pattern: record.a, intensityPercent: record.b)
        case UInt32(CCSIM_FEEDBACK_SOUND.rawValue):
            kind = .sound(record.a)
        default:
            kind = .indicator(mode: record.a, rgb: record.b)
        }
        self.init(timestampMicros: record.timestamp_us, kind: kind)
    }

    /// `cameracontrol.v1.HapticPattern` values, for comparing with ``Kind/haptic(pattern:intensityPercent:)``.
    public enum HapticPattern {
        /// A detent tick.
        public static let detent: UInt32 = 1
        /// The full-press click the firmware plays itself.
        public static let click: UInt32 = 2
        /// The release click after a full press.
        public static let release: UInt32 = 3
        /// End of a control's range.
        public static let limit: UInt32 = 4
    }
}
