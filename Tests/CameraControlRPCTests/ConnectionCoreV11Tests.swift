import CameraControlRPC
import CameraControlWire
import Testing

/// The host's side of protocol v1.1 (docs/PROTOCOL.md §6, §7; issue 9), sans-IO with a manual timeline.
@Suite("ConnectionCore v1.1 reliability")
struct ConnectionCoreV11Tests {
    /// A core with `configuration` whose handshake was answered by a device at 1.`minor`: session
    /// established, streams confirmed when `minor` ≥ 1.
    func handshaken(
        minor: UInt32, configuration: ConnectionConfiguration = ConnectionConfiguration(), device: inout DeviceFrames
    ) throws -> ConnectionCore {
        var core = ConnectionCore(configuration: configuration)
        let call = try core.startCall(method: .deviceHandshake, request: [], now: .zero)
        _ = core.takeOutbound()
        let response = HandshakeResponse(negotiatedVersion: ProtocolVersion(major: 1, minor: minor))
        core.receive(device.response(call, response.serializedBytes()), now: .zero)
        // What the device layer does with the response: the core does not decode it.
        core.markSessionEstablished(streamsConfirmed: minor >= 1, now: .zero)
        _ = core.takeEvents()
        _ = core.takeOutbound()
        return core
    }

    /// Issue 9 item 4 (R2): a duplicated best-effort packet (same sequence number, no RELIABLE flag) is
    /// delivered once. v1.0's `isDuplicate` dropped only reliable duplicates, so a duplicated
    /// `TOUCH_DOWN` or raw batch reached the consumer twice.
    @Test("a duplicated best-effort stream message is delivered once")
    func duplicateBestEffortDeliveredOnce() throws {
        var device = DeviceFrames()
        var core = try handshaken(minor: 0, device: &device)
        let call = try core.startCall(method: .inputStreamRawSamples, request: [], now: .zero)
        _ = core.takeOutbound()
        let frame = device.message(call, [7])
        core.receive(frame + frame, now: .ms(1))
        #expect(core.takeEvents() == [.streamMessage(call, [7])])
        #expect(core.counters.duplicatesDropped == 1)
        #expect(hostPackets(core.takeOutbound()).isEmpty)  // best-effort: no ACK either
    }

    /// Issue 9 item 5 (R1): a unary `REQUEST` is sent RELIABLE and retransmitted with the same sequence
    /// number (20 ms, then 40 ms, …) until the device acknowledges it. v1.0 sent it once, so a lost
    /// request was a lost call.
    @Test("an unacknowledged request is retransmitted until its ACK")
    func requestRetransmittedUntilAcked() throws {
        var device = DeviceFrames()
        var core = try handshaken(minor: 1, device: &device)
        let call = try core.startCall(method: .devicePing, request: [1], now: .zero)
        let first = hostPackets(core.takeOutbound())
        #expect(first.count == 1 && first[0].isReliable)
        core.receive(device.heartbeat(), now: .ms(19))
        core.poll(now: .ms(19))
        #expect(hostPackets(core.takeOutbound()).filter { $0.type == .request }.isEmpty)
        core.poll(now: .ms(20))
        let again = hostPackets(core.takeOutbound()).filter { $0.type == .request }
        #expect(again.map(\.sequence) == [first[0].sequence])
        #expect(again.first?.callID == call.rawValue)
        core.poll(now: .ms(59))
        #expect(hostPackets(core.takeOutbound()).filter { $0.type == .request }.isEmpty)  // doubled: 40 ms
        core.receive(device.ack(first[0].sequence), now: .ms(59))
        core.poll(now: .ms(200))
        #expect(hostPackets(core.takeOutbound()).filter { $0.type == .request }.isEmpty)
        #expect(core.counters.retransmissions == 1)
        core.receive(device.response(call, [1]), now: .ms(200))
        #expect(core.takeEvents() == [.response(call, [1])])
    }

    /// Sends a Ping at `start` and returns its sequence number.
    func ping(_ core: inout ConnectionCore, at start: Duration) throws -> UInt16 {
        _ = try core.startCall(method: .devicePing, request: [1], now: start)
        return try #require(hostPackets(core.takeOutbound()).first { $0.type == .request }).sequence
    }

    /// The sequence numbers of the requests `core` sends again at `now`.
    func copies(_ core: inout ConnectionCore, at now: Duration) -> [UInt16] {
        core.poll(now: now)
        return hostPackets(core.takeOutbound()).filter { $0.type == .request }.map(\.sequence)
    }

    /// On a slow line (9600 baud: a request and its `ACK` take 40–80 ms on the wire) a fixed 20 ms sent every
    /// request two to four times. A request acknowledged 30 ms after its only send makes the next one wait
    /// 90 ms (30 + 4 × 15) before its first copy; with the adaptation off it is 20 ms, as on a fast link.
    @Test(
        "after a request acknowledged 30 ms late, the next one's first retransmission waits 90 ms",
        arguments: [true, false])
    func retransmissionFollowsTheRoundTrip(adapts: Bool) throws {
        var device = DeviceFrames()
        var core = try handshaken(
            minor: 1, configuration: ConnectionConfiguration(adaptsRetransmissionTimeout: adapts), device: &device)
        let first = try ping(&core, at: .ms(100))
        core.receive(device.heartbeat(), now: .ms(120))
        core.receive(device.ack(first), now: .ms(130))
        #expect(core.roundTrip.smoothed == .ms(30))  // measured either way
        #expect(core.counters.retransmissions == 0)

        let second = try ping(&core, at: .ms(200))
        core.receive(device.heartbeat(), now: .ms(219))
        #expect(copies(&core, at: .ms(220)) == (adapts ? [] : [second]))
        core.receive(device.heartbeat(), now: .ms(260))
        _ = copies(&core, at: .ms(289))
        #expect(core.counters.retransmissions == (adapts ? 0 : 2))
        #expect(copies(&core, at: .ms(290)) == (adapts ? [second] : []))
    }

    /// Karn's rule in the core: a request acknowledged after its first copy gives no sample (the ACK may
    /// answer either); the next request starts with the timeout that was running, 40 ms.
    @Test("after a request acknowledged once it was sent again, the next one's first retransmission waits 40 ms")
    func retransmissionAfterAnAmbiguousAck() throws {
        var device = DeviceFrames()
        var core = try handshaken(minor: 1, device: &device)
        let first = try ping(&core, at: .ms(100))
        core.receive(device.heartbeat(), now: .ms(110))
        #expect(copies(&core, at: .ms(120)) == [first])
        core.receive(device.ack(first), now: .ms(125))
        #expect(core.roundTrip.smoothed == nil)

        let second = try ping(&core, at: .ms(150))
        core.receive(device.heartbeat(), now: .ms(170))
        #expect(copies(&core, at: .ms(189)).isEmpty)
        #expect(copies(&core, at: .ms(190)) == [second])
    }

    /// A round trip measured in a wake-up after the host was starved (it did not run for more than two
    /// heartbeat intervals: the ACK waited to be read) is the machine's, not the link's: no sample.
    @Test("an ACK read after the host was starved is no round-trip sample")
    func starvedHostTakesNoSample() throws {
        var device = DeviceFrames()
        var core = try handshaken(minor: 1, device: &device)
        let first = try ping(&core, at: .ms(100))
        core.receive(device.heartbeat(), now: .ms(110))
        core.receive(device.ack(first), now: .ms(400))  // 290 ms after the host last ran
        #expect(core.roundTrip.smoothed == nil)
        #expect(core.roundTrip.timeout == .ms(20))
    }

    /// R1 and §6 (S5): "at most 8 tries" is 8 transmissions in all; then the request is given up (the
    /// call's deadline still ends it).
    @Test("a request is transmitted 8 times at most")
    func requestGivenUpAfterEightTransmissions() throws {
        var core = ConnectionCore()
        _ = try core.startCall(method: .devicePing, request: [], deadline: .seconds(30), now: .zero)
        var transmissions = hostPackets(core.takeOutbound()).count
        var now = Duration.zero
        while now < .seconds(20) {
            now += .ms(5)
            core.poll(now: now)
            transmissions += hostPackets(core.takeOutbound()).filter { $0.type == .request }.count
        }
        #expect(transmissions == 8)
        #expect(core.counters.reliableGivenUp == 1)
    }

    /// Issue 9 item 3 (R4): in a v1.1 session a stream the device never confirms (its REQUEST was lost
    /// beyond the retransmissions, say) fails loudly with `UNAVAILABLE` after the open timeout. v1.0
    /// went on with heartbeats and no events, reporting nothing.
    @Test("an unconfirmed stream fails with UNAVAILABLE after the open timeout")
    func unconfirmedStreamFails() throws {
        var device = DeviceFrames()
        var core = try handshaken(minor: 1, device: &device)
        let call = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        let request = core.takeOutbound()
        core.receive(device.acks(of: request), now: .zero)  // acknowledged, yet never confirmed
        var now = Duration.zero
        while now + .ms(40) < .ms(1000) {
            now += .ms(40)
            core.receive(device.heartbeat(), now: now)
            core.poll(now: now)
        }
        #expect(core.takeEvents().isEmpty)
        core.receive(device.heartbeat(), now: .ms(1000))
        core.poll(now: .ms(1000))
        let events = core.takeEvents()
        #expect(events.map(\.failedCode) == [.unavailable])
        #expect(hostPackets(core.takeOutbound()).contains { $0.type == .cancel && $0.callID == call.rawValue })
        #expect(core.counters.streamsUnconfirmed == 1)
    }

    /// R4: the empty `RESPONSE` confirms the stream without ending it, and a v1.0 session needs none.
    @Test("an empty RESPONSE confirms a stream; a v1.0 session needs no confirmation")
    func confirmedStreamStaysOpen() throws {
        var device = DeviceFrames()
        var core = try handshaken(minor: 1, device: &device)
        let call = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        _ = core.takeOutbound()
        core.receive(device.response(call) + device.message(call, [5]), now: .ms(1))
        core.receive(device.heartbeat(), now: .ms(1400))
        core.poll(now: .ms(1500))
        #expect(core.takeEvents() == [.streamMessage(call, [5])])
        #expect(core.callsInFlight == [call])

        var oldDevice = DeviceFrames()
        var old = try handshaken(minor: 0, device: &oldDevice)
        let stream = try old.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        old.receive(oldDevice.acks(of: old.takeOutbound()), now: .zero)
        old.receive(oldDevice.heartbeat(), now: .ms(1400))
        old.poll(now: .ms(1500))
        #expect(old.takeEvents().isEmpty)
        #expect(old.callsInFlight == [stream])
    }

    /// S3: a call's packet type on call id 0 (here an `ERROR`) and an `ACK` without its payload are
    /// envelope errors: dropped, counted, not acknowledged.
    @Test("ERROR on call id 0 and an ACK without payload are envelope errors")
    func envelopeErrors() throws {
        var device = DeviceFrames()
        var core = try handshaken(minor: 1, device: &device)
        var bytes = device.frame(Packet(type: .error, isReliable: true, callID: 0, status: .internal))
        let shortAck: [UInt8] = [0x07, 0x40, 0x00, 0x00, 0x01]  // ACK, sequence 64, call 0, 1 payload byte
        let crc = CRC16.checksum(shortAck)
        bytes += COBS.encode(shortAck + [UInt8(crc & 0xFF), UInt8(crc >> 8)]) + [0]
        core.receive(bytes, now: .ms(1))
        #expect(core.counters.envelopeErrors == 2)
        #expect(core.takeEvents().isEmpty)
        #expect(hostPackets(core.takeOutbound()).isEmpty)
    }
}
