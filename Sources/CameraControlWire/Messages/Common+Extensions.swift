extension ProtocolVersion: Comparable, CustomStringConvertible {
    /// The version this implementation speaks: 1.0.
    public static let v1_0 = ProtocolVersion(major: 1, minor: 0)

    /// `major.minor`.
    public var description: String { "\(major).\(minor)" }

    /// Orders by major, then minor.
    public static func < (lhs: ProtocolVersion, rhs: ProtocolVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }
}

extension Thresholds {
    /// True when the schema's ordering rule holds: `lightPressOff < lightPressOn <= fullPressOff <
    /// fullPressOn` and `fullPressOn - lightPressOn >= minStageGap`.
    public var isValid: Bool {
        lightPressOffMillinewtons < lightPressOnMillinewtons && lightPressOnMillinewtons <= fullPressOffMillinewtons
            && fullPressOffMillinewtons < fullPressOnMillinewtons
            && fullPressOnMillinewtons - lightPressOnMillinewtons >= minStageGapMillinewtons
    }
}
