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
        let now = try Self.handshakeInPieces(&core, &device)
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

    /// A 300-byte request takes 312 ms to leave at 9600 baud; its ACK 30 ms after that is a 30 ms round
    /// trip, not 342 ms: the allowance already waits for the departure, and a sample counting it again pinned
    /// the timeout at its ceiling after every large request.
    @Test("a round-trip sample counts from when the packet had left the slow line")
    func roundTripCountsFromTheDeparture() throws {
        var (core, device, now) = try Self.establishedOnASlowLine(adapts: true)
        let rate = try #require(core.line.bytesPerSecond)
        // A live link meanwhile: the device's heartbeats every 40 ms, the host's loop awake.
        func live(until end: Duration) {
            while now + .ms(40) < end {
                now += .ms(40)
                core.receive(device.heartbeat(), now: now)
                core.poll(now: now)
                _ = core.takeOutbound()
            }
            now = end
        }
        live(until: now + .seconds(1))  // the line is free again
        _ = try core.startCall(method: .devicePing, request: [UInt8](repeating: 0x55, count: 290), now: now)
        let written = core.takeOutbound()
        let request = try #require(hostPackets(written).first { $0.type == .request })
        let departure = Duration.microseconds(Int64(written.count) * 1_000_000 / Int64(rate))
        #expect(departure > .ms(250))
        let sent = now
        live(until: sent + departure + .ms(30))
        #expect(core.counters.retransmissions == 0)
        core.receive(device.ack(request.sequence), now: now)
        // The handshake's ACK made the first sample (40 ms); this one moves the smoothed round trip an eighth
        // of the way to 30 ms (38.75 ms). Counting the departure too, to 342 ms: 78 ms.
        let smoothed = try #require(core.roundTrip.smoothed)
        #expect(smoothed <= .ms(41), "a \(smoothed) round trip")
    }

    /// The default deadline (2 s) is for the device's work: on a slow line it also allows the request's time to
    /// leave and a largest answer's time to come back. A 990-byte Ping and its echo take 2.1 s at 9600 baud;
    /// before, `camctl call` failed such a Ping with `DEADLINE_EXCEEDED` as its echo arrived (and closed
    /// without acknowledging it). On a line of unknown speed the deadline is as before.
    @Test("a unary call's default deadline allows for a slow line's time", arguments: [true, false])
    func defaultDeadlineAllowsForTheLine(slow: Bool) throws {
        var device = DeviceFrames()
        var core = ConnectionCore(configuration: ConnectionConfiguration())
        var now = Duration.zero
        if slow {
            now = try Self.handshakeInPieces(&core, &device)
        } else {
            let handshake = try core.startCall(method: .deviceHandshake, request: [], now: now)
            _ = core.takeOutbound()
            core.receive(device.response(handshake, HandshakeResponse().serializedBytes()), now: now + .ms(5))
        }
        core.markSessionEstablished(maxFrameBytes: 1024, streamsConfirmed: true, now: now)
        _ = core.takeOutbound()
        _ = core.takeEvents()
        #expect((core.line.bytesPerSecond != nil) == slow)
        let call = try core.startCall(method: .devicePing, request: [UInt8](repeating: 0x55, count: 990), now: now)
        let request = try #require(hostPackets(core.takeOutbound()).first { $0.type == .request })
        let start = now
        var failedAt: Duration?
        while failedAt == nil, now < start + .seconds(6) {
            now += .ms(10)
            if (now - start) / .ms(40) > (now - start - .ms(10)) / .ms(40) { core.receive(device.heartbeat(), now: now) }
            if now - start == .seconds(1) { core.receive(device.ack(request.sequence), now: now) }
            core.poll(now: now)
            _ = core.takeOutbound()
            if Self.outcome(core.takeEvents(), call) == "\(StatusCode.deadlineExceeded)" { failedAt = now - start }
        }
        let failed = try #require(failedAt)
        if slow {
            // 2 s, and the request's and a 1,024-byte answer's time on the line (about 2.1 s at this rate)
            #expect(failed >= .seconds(4) && failed <= .milliseconds(4_300), "failed after \(failed)")
        } else {
            #expect(failed >= .seconds(2) && failed <= .milliseconds(2_020), "failed after \(failed)")
        }
    }

    /// A core whose session was established (1,024-byte frames) after ``handshakeInPieces(_:_:)`` taught it
    /// the line; with the device's frames and the time the handshake's last piece arrived.
    static func establishedOnASlowLine(adapts: Bool) throws -> (ConnectionCore, DeviceFrames, Duration) {
        var device = DeviceFrames()
        var core = ConnectionCore(configuration: ConnectionConfiguration(adaptsRetransmissionTimeout: adapts))
        let now = try handshakeInPieces(&core, &device)
        core.markSessionEstablished(maxFrameBytes: 1024, streamsConfirmed: true, now: now)
        _ = core.takeEvents()
        return (core, device, now)
    }

    /// A handshake whose long response (over 200 bytes) arrives in 16-byte pieces at 9600 baud's pace from
    /// 60 ms on, so that the core learns the line; returns when its last piece arrived.
    static func handshakeInPieces(_ core: inout ConnectionCore, _ device: inout DeviceFrames) throws -> Duration {
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
        return now
    }

    /// What a handshake attempt's events say about `call` (nil: nothing yet).
    static func outcome(_ events: [ConnectionEvent], _ call: CallID) -> String? {
        for event in events {
            switch event {
            case .response(let id, _) where id == call: return "response"
            case .failed(let id, let error) where id == call: return "\(error.code)"
            default: continue
            }
        }
        return nil
    }

    /// The trace that found it: `camctl info` run right after another at 9600 baud. The device still sends
    /// the session before's `HandshakeResponse` (170 ms) and heartbeats when the new attempt's 100 ms pass;
    /// its `ACK` comes after them. The attempt waits while the device is sending, then the `ACK` gives it its
    /// 2 s, and its response arrives; abandoned at 100 ms, it had taken five attempts and 2.3 s.
    @Test("a handshake attempt whose deadline passes while the device is sending waits for it")
    func attemptWaitsWhileTheDeviceSends() throws {
        var device = DeviceFrames()
        var core = ConnectionCore()
        let call = try core.startCall(
            method: .deviceHandshake, request: [], deadline: .ms(100), waitOnceAcknowledged: .seconds(2), now: .zero)
        let request = try #require(hostPackets(core.takeOutbound()).first { $0.isReliable })
        // The session before's response, 163 bytes in 16-byte pieces from 40 ms on, then a heartbeat.
        let old = device.frame(Packet(type: .response, callID: 9, payload: [UInt8](repeating: 0x33, count: 150)))
        var now = Duration.ms(40)
        var offset = 0
        while offset < old.count {
            let piece = Array(old[offset..<min(offset + Self.chunk, old.count)])
            offset += piece.count
            core.receive(piece, now: now)
            core.poll(now: now)
            #expect(Self.outcome(core.takeEvents(), call) == nil, "at \(now)")
            now += Self.chunkTime
        }
        #expect(now > .ms(150))
        now += .ms(8)
        core.receive(device.heartbeat(), now: now)
        core.poll(now: now + .ms(10))
        #expect(Self.outcome(core.takeEvents(), call) == nil)
        // Its ACK, 10 ms after that, moves the deadline 2 s on; the response comes 170 ms later.
        now += .ms(10)
        core.receive(device.ack(request.sequence), now: now)
        core.poll(now: now + .ms(150))
        #expect(Self.outcome(core.takeEvents(), call) == nil)
        core.receive(device.response(call, [1]), now: now + .ms(170))
        #expect(Self.outcome(core.takeEvents(), call) == "response")
    }

    @Test("with the device silent, the attempt's deadline is its deadline")
    func attemptExpiresWhenTheDeviceIsSilent() throws {
        var device = DeviceFrames()
        var core = ConnectionCore()
        let call = try core.startCall(
            method: .deviceHandshake, request: [], deadline: .ms(100), waitOnceAcknowledged: .seconds(2), now: .zero)
        _ = core.takeOutbound()
        // A heartbeat long before the deadline is no device still sending at it.
        core.receive(device.heartbeat(), now: .ms(50))
        core.poll(now: .ms(99))
        #expect(Self.outcome(core.takeEvents(), call) == nil)
        core.poll(now: .ms(100))
        #expect(Self.outcome(core.takeEvents(), call) == "DEADLINE_EXCEEDED")
    }

    @Test("a device that never stops sending holds an attempt by at most its wait once acknowledged")
    func endlessSendingIsBounded() throws {
        var device = DeviceFrames()
        var core = ConnectionCore()
        let call = try core.startCall(
            method: .deviceHandshake, request: [], deadline: .ms(100), waitOnceAcknowledged: .ms(500), now: .zero)
        _ = core.takeOutbound()
        var failedAt: Duration?
        var now = Duration.ms(5)
        while now < .seconds(3), failedAt == nil {
            core.receive(device.heartbeat(), now: now)
            core.poll(now: now)
            if Self.outcome(core.takeEvents(), call) == "DEADLINE_EXCEEDED" { failedAt = now }
            now += .ms(5)
        }
        // Held until its wait after the start (500 ms), not its deadline plus the wait: a caller that cut the
        // wait to what remained of its own deadline is never held past that.
        let failed = try #require(failedAt)
        #expect(failed >= .ms(500) && failed <= .ms(500) + ConnectionCore.deviceSendingGrace, "failed at \(failed)")
    }

    @Test("a stray byte with no delimiter after it holds an attempt no longer than the grace")
    func strayByteHoldsNothing() throws {
        var core = ConnectionCore()
        let call = try core.startCall(
            method: .deviceHandshake, request: [], deadline: .ms(100), waitOnceAcknowledged: .seconds(2), now: .zero)
        _ = core.takeOutbound()
        // Noise as the port opened: one byte, then nothing; the decoder holds it as a frame's start for good.
        core.receive([0x41], now: .ms(10))
        let end = Duration.ms(10) + ConnectionCore.partialFrameGrace
        var now = Duration.ms(100)
        while now <= end {
            core.poll(now: now)
            #expect(Self.outcome(core.takeEvents(), call) == nil, "at \(now)")
            now += .ms(10)
        }
        core.poll(now: end + .ms(21))
        #expect(Self.outcome(core.takeEvents(), call) == "DEADLINE_EXCEEDED")
    }

    @Test("a call without a wait once acknowledged keeps its deadline while the device sends")
    func ordinaryCallsKeepTheirDeadline() throws {
        var device = DeviceFrames()
        var core = ConnectionCore()
        let call = try core.startCall(method: .devicePing, request: [], deadline: .ms(100), now: .zero)
        _ = core.takeOutbound()
        core.receive(device.heartbeat(), now: .ms(95))
        core.poll(now: .ms(100))
        #expect(Self.outcome(core.takeEvents(), call) == "DEADLINE_EXCEEDED")
    }
}
