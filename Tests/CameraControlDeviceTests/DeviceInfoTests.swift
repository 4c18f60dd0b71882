import CameraControlDevice
import CameraControlWire
import Testing

@Suite("DeviceInfo: checking a handshake response")
struct DeviceInfoTests {
    static let host = ProtocolVersion(major: 1, minor: 0)

    static func capabilities(maxFrameBytes: UInt32 = 256) -> Capabilities {
        var caps = Capabilities()
        caps.hasForceSensor = true
        caps.hasTouchSensor = true
        caps.hasSlideStrip = true
        caps.forceMaxMillinewtons = 10_000
        caps.slideResolution = 1024
        caps.maxFrameBytes = maxFrameBytes
        caps.maxControls = 8
        caps.supportsControls = true
        caps.heartbeatIntervalMillis = 50
        caps.buttons = [.volumeUp, .volumeDown]
        return caps
    }

    static func response(
        device: ProtocolVersion? = ProtocolVersion(major: 1, minor: 3),
        negotiated: ProtocolVersion? = ProtocolVersion(major: 1, minor: 0),
        identity: DeviceIdentity? = DeviceIdentity(vendor: "Acme", model: "CC-1", serialNumber: "42", firmwareVersion: "2.0"),
        capabilities: Capabilities? = DeviceInfoTests.capabilities()
    ) -> HandshakeResponse {
        HandshakeResponse(
            deviceVersion: device, negotiatedVersion: negotiated, identity: identity, capabilities: capabilities,
            deviceTimeMicros: 5, sessionID: 9)
    }

    @Test func aNewerMinorIsAcceptedAndTheSessionRunsAtTheLowerOne() throws {
        let info = try DeviceInfo(handshake: Self.response(), hostVersion: Self.host)
        #expect(info.deviceVersion == ProtocolVersion(major: 1, minor: 3))
        #expect(info.negotiatedVersion == ProtocolVersion(major: 1, minor: 0))
        #expect(info.sessionID == 9)
        let summary = info.summary
        for text in ["Acme CC-1", "serial      42", "firmware    2.0", "device 1.3, session 1.0", "up to 8", "volume-up"] {
            #expect(summary.contains(text), "summary lacks \(text):\n\(summary)")
        }
    }

    @Test func aMissingNegotiatedVersionIsDerivedByTheRule() throws {
        let info = try DeviceInfo(handshake: Self.response(negotiated: nil), hostVersion: Self.host)
        #expect(info.negotiatedVersion == ProtocolVersion(major: 1, minor: 0))
    }

    @Test(arguments: [
        (response(device: ProtocolVersion(major: 2, minor: 0)), DeviceError.Code.versionMismatch),
        (response(device: nil), .badHandshake),
        (response(negotiated: ProtocolVersion(major: 1, minor: 3)), .badHandshake),
        (response(identity: nil), .badHandshake),
        (response(capabilities: nil), .badHandshake),
        (response(capabilities: capabilities(maxFrameBytes: 64)), .badHandshake),
    ])
    func aBadHandshakeIsATypedError(response: HandshakeResponse, code: DeviceError.Code) {
        #expect {
            _ = try DeviceInfo(handshake: response, hostVersion: Self.host)
        } throws: { ($0 as? DeviceError)?.code == code }
    }
}
