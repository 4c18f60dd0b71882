import CameraControlWire

/// What a device said about itself in the handshake, checked and summarised.
public struct DeviceInfo: Hashable, Sendable {
    /// The device's protocol version.
    public var deviceVersion: ProtocolVersion
    /// The version the session runs at (same major, the lower minor).
    public var negotiatedVersion: ProtocolVersion
    /// Vendor, model, serial number, firmware version.
    public var identity: DeviceIdentity
    /// Sensors, buttons, ranges, limits and haptics.
    public var capabilities: Capabilities
    /// Changes at every handshake: a different value after a reconnect means the device restarted its session.
    public var sessionID: UInt32
    /// The device clock when it answered, microseconds since boot.
    public var deviceTimeMicros: UInt64

    /// Checks a handshake response: it must carry a version, an identity and capabilities, and the
    /// versions must follow docs/PROTOCOL.md §9.
    ///
    /// - Throws: ``DeviceError`` with ``DeviceError/Code/badHandshake`` or ``DeviceError/Code/versionMismatch``.
    public init(handshake response: HandshakeResponse, hostVersion: ProtocolVersion) throws(DeviceError) {
        guard let deviceVersion = response.deviceVersion else {
            throw DeviceError(.badHandshake, "the handshake response has no device version")
        }
        guard deviceVersion.major == hostVersion.major else {
            throw DeviceError(.versionMismatch, "device speaks protocol \(deviceVersion), host \(hostVersion)")
        }
        let expected = ProtocolVersion(major: hostVersion.major, minor: min(hostVersion.minor, deviceVersion.minor))
        let negotiated = response.negotiatedVersion ?? expected
        guard negotiated == expected else {
            throw DeviceError(.badHandshake, "device negotiated \(negotiated); the rule gives \(expected)")
        }
        guard let identity = response.identity, let capabilities = response.capabilities else {
            throw DeviceError(.badHandshake, "the handshake response lacks identity or capabilities")
        }
        guard capabilities.maxFrameBytes >= UInt32(WireFormat.minMaxFrameBytes) else {
            throw DeviceError(
                .badHandshake,
                "device announces max_frame_bytes \(capabilities.maxFrameBytes); v1 requires at least \(WireFormat.minMaxFrameBytes)")
        }
        self.deviceVersion = deviceVersion
        self.negotiatedVersion = negotiated
        self.identity = identity
        self.capabilities = capabilities
        self.sessionID = response.sessionID
        self.deviceTimeMicros = response.deviceTimeMicros
    }

    /// A multi-line human-readable summary, as `camctl info` prints it.
    public var summary: String {
        let c = capabilities
        var lines: [String] = []
        lines.append("device      \(identity.vendor) \(identity.model)")
        lines.append("serial      \(identity.serialNumber)")
        lines.append("firmware    \(identity.firmwareVersion)")
        if identity.usbVendorID != 0 || identity.usbProductID != 0 {
            lines.append("usb         \(hex4(identity.usbVendorID)):\(hex4(identity.usbProductID))")
        }
        lines.append("protocol    device \(deviceVersion), session \(negotiatedVersion)")
        lines.append("session     \(sessionID)")
        var sensors: [String] = []
        if c.hasForceSensor { sensors.append("force 0–\(c.forceMaxMillinewtons) mN") }
        if c.hasTouchSensor { sensors.append("touch") }
        if c.hasSlideStrip { sensors.append("slide \(c.slideResolution) positions over \(Double(c.slideLengthMicrometres) / 1000) mm") }
        lines.append("sensors     \(sensors.isEmpty ? "none" : sensors.joined(separator: ", "))")
        lines.append("buttons     \(c.buttons.isEmpty ? "none" : c.buttons.map(\.description).joined(separator: ", "))")
        lines.append("rates       \(c.sampleRatesHertz.map { "\($0) Hz" }.joined(separator: ", "))")
        if let t = c.thresholds {
            lines.append(
                "thresholds  light \(t.lightPressOnMillinewtons)/\(t.lightPressOffMillinewtons) mN, full \(t.fullPressOnMillinewtons)/\(t.fullPressOffMillinewtons) mN, gap ≥ \(t.minStageGapMillinewtons) mN"
            )
        }
        lines.append("controls    \(c.supportsControls ? "supported, up to \(c.maxControls)" : "not supported")")
        lines.append("haptics     \(c.hapticPatterns.isEmpty ? "none" : c.hapticPatterns.map(\.description).joined(separator: ", "))")
        var other: [String] = []
        if c.hasSpeaker { other.append("speaker") }
        if c.hasIndicatorLED { other.append("indicator LED") }
        if c.isSimulator { other.append("simulator") }
        if !other.isEmpty { lines.append("has         \(other.joined(separator: ", "))") }
        lines.append(
            "link        frames ≤ \(c.maxFrameBytes) bytes, \(c.maxConcurrentCalls) calls in flight, heartbeat \(c.heartbeatIntervalMillis) ms"
        )
        return lines.joined(separator: "\n")
    }

    private func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
