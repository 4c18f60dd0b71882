import CameraControlCapture
import CameraControlGestures
import CameraControlRPC
import CameraControlSimulation
import CameraControlWire
import Testing

/// The real firmware core and the real host connection core, in virtual time: the basics.
@Suite struct VirtualStackTests {
    @Test func handshakeReportsIdentityAndCapabilities() throws {
        let link = VirtualLink(seed: 3)
        let response = try link.handshake()
        #expect(response.deviceVersion == ProtocolVersion(major: 1, minor: 1))
        #expect(response.negotiatedVersion == ProtocolVersion(major: 1, minor: 1))
        #expect(response.identity?.vendor.isEmpty == false)
        let caps = try #require(response.capabilities)
        #expect(caps.maxFrameBytes >= 128)
        #expect(caps.isSimulator)
        #expect(caps.heartbeatIntervalMillis == 50)
        #expect(link.connection.isSessionEstablished)
    }

    @Test func aHostOfAnotherMajorVersionIsRefusedWithTheDevicesVersion() {
        let link = VirtualLink(seed: 3)
        #expect {
            try link.handshake(version: ProtocolVersion(major: 2, minor: 0))
        } throws: { error in
            guard let error = error as? RPCError else { return false }
            return error.code == .failedPrecondition && error.message.contains("1.")
        }
    }

    @Test func pingEchoesEveryByteValue() throws {
        let link = VirtualLink(seed: 3)
        try link.handshake()
        let payload = (0...255).map { UInt8($0) }
        let reply: PingResponse = try link.call(.devicePing, PingRequest(payload: payload))
        #expect(reply.payload == payload)
        #expect(reply.deviceTimeMicros > 0)
    }

    @Test func callBeforeHandshakeIsFailedPrecondition() {
        let link = VirtualLink(seed: 3)
        #expect {
            let _: PingResponse = try link.call(.devicePing, PingRequest(payload: []))
        } throws: { ($0 as? RPCError)?.code == .failedPrecondition }
    }

    @Test func anIdleSessionStaysAliveOnHeartbeatsAndDiesWhenTheDeviceFallsSilent() throws {
        let link = VirtualLink(seed: 3)
        try link.handshake()
        link.run(forMicros: 2_000_000)  // 2 s with no calls: heartbeats both ways keep it up
        #expect(link.connection.isSessionEstablished)
        #expect(link.device.isSessionActive)
        #expect(!link.takeEvents().contains(.linkDead))
        link.isUnplugged = true
        link.run(forMicros: 250_000)  // "either side notices a dead link within 250 ms"
        #expect(link.takeEvents().contains(.linkDead))
        #expect(!link.device.isSessionActive)
    }

    @Test func fullClickBecomesOneCapture() throws {
        let rig = VirtualCaptureRig(seed: 11)
        try rig.connect()
        try rig.device.play(scenario: "full-click\n")
        rig.runUntilScenarioEnds()
        let phases = rig.captureEvents.map { "\($0.event.phase.rawValue) \($0.event.source) \($0.role.rawValue)" }
        #expect(phases == ["began camera-control primary", "ended camera-control primary"])
    }
}
