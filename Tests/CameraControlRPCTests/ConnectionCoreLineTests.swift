import CameraControlRPC
import CameraControlWire
import Testing

/// The RPC core on a slow line: what ``LineSpeedEstimate`` (tested on its own in the wire's tests) adds to a
/// reliable packet's retransmission timeout (§6).
@Suite("ConnectionCore on a slow line")
struct ConnectionCoreLineTests {
    /// 9600 baud, 8N1: a 16-byte FIFO's worth every 16.67 ms.
    static let chunk = 16
    static let chunkTime = Duration.microseconds(16_667)

    /// The core end to end: the handshake's long response arrives in pieces at 9600 baud's pace; then a
    /// request is not sent again when its retransmission timeout passes (its own bytes and the `ACK` take
    /// about 50 ms of that line), only within 90 ms after; with the adaptation off it is 20 ms, as before.
    @Test("after a long response in pieces, a request's first copy waits for the line", arguments: [true, false])
    func coreWaitsForTheLine(adapts: Bool) throws {
        var device = DeviceFrames()
        var core = ConnectionCore(configuration: ConnectionConfiguration(adaptsRetransmissionTimeout: adapts))
        let handshake = try core.startCall(method: .deviceHandshake, request: [], now: .zero)
        _ = core.takeOutbound()
        core.receive(device.ack(0), now: .milliseconds(40))
        let response = HandshakeResponse(
            negotiatedVersion: ProtocolVersion(major: 1, minor: 2),
            identity: DeviceIdentity(vendor: String(repeating: "v", count: 120), model: String(repeating: "m", count: 120)))
        let frame = device.response(handshake, response.serializedBytes())
        #expect(frame.count > 200)
        var now = Duration.milliseconds(60)
        var offset = 0
        while offset < frame.count {
            let piece = Array(frame[offset..<min(offset + Self.chunk, frame.count)])
            offset += piece.count
            core.receive(piece, now: now)
            _ = core.takeOutbound()
            if offset < frame.count { now += Self.chunkTime }
        }
        core.markSessionEstablished(streamsConfirmed: true, now: now)
        _ = core.takeEvents()
        #expect(adapts == false || core.line.bytesPerSecond != nil)
        _ = try core.startCall(method: .devicePing, request: [1], now: now)
        let request = try #require(hostPackets(core.takeOutbound()).first { $0.type == .request })
        let timeout = adapts ? core.roundTrip.timeout : .milliseconds(20)
        core.poll(now: now + timeout + .milliseconds(1))
        let early = hostPackets(core.takeOutbound()).filter { $0.type == .request }
        #expect(early.map(\.sequence) == (adapts ? [] : [request.sequence]))
        if adapts {
            core.poll(now: now + timeout + .milliseconds(90))
            #expect(hostPackets(core.takeOutbound()).filter { $0.type == .request }.map(\.sequence) == [request.sequence])
        }
    }
}
