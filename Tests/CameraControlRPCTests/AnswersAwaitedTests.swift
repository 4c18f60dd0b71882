import CameraControlPosixTransport
import CameraControlRPC
import CameraControlTestSupport
import CameraControlTransport
import CameraControlWire
import Synchronization
import Testing

/// A host that closes keeps the link open while an answer may still be on its way, so that its `ACK` goes out
/// (§6): `camctl record --seconds 5` at 9600 baud stopped 60 ms after a clock Ping, closed the port, and the
/// device sent the reliable answer up to 8 times into nothing (`camctl-sim --strict`: never acknowledged).
@Suite("answers still on their way when the host closes")
struct AnswersAwaitedTests {
    /// A core whose session is established at 5 ms.
    static func established() throws -> (ConnectionCore, DeviceFrames) {
        var device = DeviceFrames()
        var core = ConnectionCore()
        let handshake = try core.startCall(method: .deviceHandshake, request: [], now: .zero)
        _ = core.takeOutbound()
        core.receive(device.response(handshake, HandshakeResponse().serializedBytes()), now: .ms(5))
        core.markSessionEstablished(streamsConfirmed: true, now: .ms(5))
        _ = core.takeEvents()
        _ = core.takeOutbound()
        return (core, device)
    }

    @Test("a unary call in flight or just cancelled is awaited until its answer comes or the wait passes")
    func core() throws {
        var (core, device) = try Self.established()
        #expect(core.answersAwaited(now: .ms(5)) == nil)
        let stream = try core.startCall(method: .inputStreamInputEvents, request: [], now: .ms(6))
        #expect(core.answersAwaited(now: .ms(6)) == nil)  // a stream's messages come at any time: not awaited
        let ping = try core.startCall(method: .devicePing, request: [], now: .ms(10))
        let inFlight = try #require(core.answersAwaited(now: .ms(10)))
        #expect(inFlight > .ms(10) && inFlight <= .ms(10) + .seconds(2))
        let cancelled = core.cancelCall(ping, now: .ms(12))
        #expect(cancelled)
        #expect(core.answersAwaited(now: .ms(12)) != nil)
        // Its answer, sent before the CANCEL reached the device: acknowledged, and awaited no more.
        _ = core.takeOutbound()
        let answer = device.frame(Packet(type: .response, isReliable: true, callID: ping.rawValue, payload: []))
        core.receive(answer, now: .ms(14))
        #expect(hostPackets(core.takeOutbound()).contains { $0.type == .ack })
        #expect(core.answersAwaited(now: .ms(14)) == nil)
        // One cancelled and never answered: awaited until its wait passes.
        let other = try core.startCall(method: .devicePing, request: [], now: .ms(20))
        let cancelledOther = core.cancelCall(other, now: .ms(20))
        #expect(cancelledOther)
        let until = try #require(core.answersAwaited(now: .ms(20)))
        #expect(core.nextPollTime.map { $0 <= until } == true)
        core.receive(device.heartbeat(), now: until - .ms(1))
        #expect(core.answersAwaited(now: until - .ms(1)) == until)
        core.poll(now: until)
        #expect(core.answersAwaited(now: until) == nil)
        let cancelledStream = core.cancelCall(stream, now: until)
        #expect(cancelledStream)
        #expect(core.answersAwaited(now: until) == nil)
        // Closing: no call starts any more (its own answer would come after the close).
        core.beginClosing(now: until)
        #expect(throws: RPCError.self) { _ = try core.startCall(method: .devicePing, request: [], now: until) }
    }

    @Test("closing with a stream open: its CANCEL, then a Ping as a barrier; messages before its answer are acknowledged")
    func barrierAtClose() throws {
        var (core, device) = try Self.established()
        let stream = try core.startCall(method: .inputStreamInputEvents, request: [], now: .ms(6))
        core.receive(device.frame(Packet(type: .response, isReliable: true, callID: stream.rawValue, payload: [])), now: .ms(7))
        _ = core.takeEvents()
        _ = core.takeOutbound()
        core.beginClosing(now: .ms(10))
        let sent = hostPackets(core.takeOutbound())
        #expect(sent.map(\.type) == [.cancel, .request], "\(sent)")
        #expect(sent.first?.callID == stream.rawValue)
        let barrier = try #require(sent.last)
        #expect(barrier.address == MethodID.devicePing && barrier.isReliable)
        let until = try #require(core.answersAwaited(now: .ms(10)), "the barrier's answer is awaited")
        #expect(until > .ms(10))
        // A message the device sent before it handled the CANCEL: delivered, acknowledged, still awaited.
        let message = device.frame(Packet(type: .streamMessage, isReliable: true, callID: stream.rawValue, payload: [8, 1]))
        core.receive(message, now: .ms(11))
        #expect(core.takeEvents().contains { if case .streamMessage(stream, _) = $0 { true } else { false } })
        #expect(hostPackets(core.takeOutbound()).contains { $0.type == .ack })
        #expect(core.answersAwaited(now: .ms(11)) != nil)
        // The Ping's answer: acknowledged, nothing awaited any more, and no caller hears of it.
        let answer = Packet(type: .response, isReliable: true, callID: barrier.callID, payload: PingResponse().serializedBytes())
        core.receive(device.frame(answer), now: .ms(12))
        #expect(hostPackets(core.takeOutbound()).contains { $0.type == .ack })
        #expect(core.answersAwaited(now: .ms(12)) == nil)

        // Nothing open and nothing cancelled lately: no barrier.
        var (quiet, _) = try Self.established()
        quiet.beginClosing(now: .ms(10))
        #expect(hostPackets(quiet.takeOutbound()).isEmpty)
        #expect(quiet.answersAwaited(now: .ms(10)) == nil)
    }

    @Test("a stream cancelled within an answer's wait gets its CANCEL again and the barrier; one cancelled long before, neither")
    func barrierAfterARecentCancel() throws {
        var (recent, _) = try Self.established()
        let stream = try recent.startCall(method: .inputStreamInputEvents, request: [], now: .ms(6))
        let cancelled = recent.cancelCall(stream, now: .ms(8))
        #expect(cancelled)
        _ = recent.takeOutbound()
        _ = recent.takeEvents()
        recent.beginClosing(now: .ms(10))
        let sent = hostPackets(recent.takeOutbound())
        #expect(sent.map(\.type) == [.cancel, .request], "\(sent)")
        #expect(sent.first?.callID == stream.rawValue)

        var (old, _) = try Self.established()
        let longAgo = try old.startCall(method: .inputStreamInputEvents, request: [], now: .ms(6))
        let cancelledLongAgo = old.cancelCall(longAgo, now: .ms(6))
        #expect(cancelledLongAgo)
        _ = old.takeOutbound()
        old.beginClosing(now: .seconds(3))  // an answer's wait is at most 2 s
        #expect(hostPackets(old.takeOutbound()).isEmpty)
        #expect(old.answersAwaited(now: .seconds(3)) == nil)
    }

    @Test("a stream whose REQUEST is not yet acknowledged at the close: no copy of it follows its CANCEL")
    func noRequestCopyAfterTheCancel() throws {
        var (core, _) = try Self.established()
        let stream = try core.startCall(method: .inputStreamInputEvents, request: [], now: .ms(6))
        _ = core.takeOutbound()  // its REQUEST, never acknowledged
        core.beginClosing(now: .ms(7))
        #expect(hostPackets(core.takeOutbound()).map(\.type) == [.cancel, .request])
        var later: [Packet] = []
        for now in stride(from: 10, through: 120, by: 10) {  // past several retransmission timeouts
            core.poll(now: .ms(now))
            later += hostPackets(core.takeOutbound())
        }
        #expect(!later.contains { $0.type == .request && $0.callID == stream.rawValue }, "\(later)")
        #expect(later.contains { $0.type == .request && $0.address == MethodID.devicePing }, "the barrier itself is sent again")
    }

    @Test("a dead link awaits nothing")
    func deadLink() throws {
        var (core, _) = try Self.established()
        _ = try core.startCall(method: .devicePing, request: [], now: .ms(10))
        var now = Duration.ms(10)
        while core.isSessionEstablished, now < .seconds(2) {  // nothing heard: dead after the dead timeout
            now += .ms(10)
            core.poll(now: now)
        }
        let established = core.isSessionEstablished
        #expect(!established)
        #expect(core.answersAwaited(now: now) == nil)
    }

    @Test("shutdown waits for the answer of a call cancelled just before, acknowledges it, then closes")
    func clientLingers() async throws {
        let clock = ManualClock()
        let (host, deviceEnd) = InMemoryTransport.makePair()
        let device = FakeDevice(transport: deviceEnd, respond: { _ in [] })  // it answers when the test says
        await device.start()
        let client = RPCClient(transport: host, eventLoop: SerialQueueEventLoop(name: "test", clock: clock))
        let handshake = Task { try await client.unary(.deviceHandshake, Blob(), as: Blob.self) }
        await device.waitUntil { $0.contains { $0.type == .request } }
        let handshakeCall = try #require(await device.received.first { $0.type == .request }?.callID)
        await device.send([Packet(type: .response, isReliable: true, callID: handshakeCall, payload: [])])
        _ = try await handshake.value
        #expect(client.isSessionEstablished)

        let ping = Task { try await client.unary(.devicePing, Blob([1]), as: Blob.self) }
        await device.waitUntil { $0.filter { $0.type == .request }.count == 2 }
        ping.cancel()
        await device.waitUntil { $0.contains { $0.type == .cancel } }
        let pingCall = try #require(await device.received.last { $0.type == .request }?.callID)
        let returned = Returned()
        let closed = Task {
            await client.shutdown()
            await returned.set()
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(await !returned.value, "shutdown returned while an answer was awaited")
        // Meanwhile no call starts: failed at once, it would otherwise be failed at the close and its answer
        // never acknowledged.
        let late = Task { try await client.unary(.devicePing, Blob([2]), as: Blob.self) }
        // The answer the device sent before the CANCEL reached it (its sequence 1): acknowledged before the close.
        await device.send([Packet(type: .response, isReliable: true, callID: pingCall, payload: [1])])
        // A wait that never ends (the clock is not advanced) fails the checks below, not the run: close() ends it.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(5))
            client.close()
        }
        await closed.value
        watchdog.cancel()
        var lateError: RPCError?
        if case .failure(let error) = await late.result { lateError = error as? RPCError }
        #expect(lateError?.message == "the link is closing", "\(String(describing: lateError))")
        // Handed to the in-memory peer before shutdown returned; the fake device reads it in its own time.
        await device.waitUntil { $0.contains { $0.type == .ack && $0.payload == [1, 0] } }
        let acks = await device.received.filter { $0.type == .ack }.map(\.payload)
        #expect(acks.contains([1, 0]), "the host closed without acknowledging the answer: \(acks)")
    }
}

extension AnswersAwaitedTests {
    @Test(
        "shutdown with a stream open: its CANCEL and a Ping go out; what the device sent before the Ping's answer is acknowledged, then the close"
    )
    func clientBarrier() async throws {
        let (host, deviceEnd) = InMemoryTransport.makePair()
        let device = FakeDevice(transport: deviceEnd, respond: { _ in [] })  // it answers when the test says
        await device.start()
        // A clock nothing advances: the close waits for the barrier's answer, never for time.
        let client = RPCClient(transport: host, eventLoop: SerialQueueEventLoop(name: "test", clock: ManualClock()))
        let handshake = Task { try await client.unary(.deviceHandshake, Blob(), as: Blob.self) }
        await device.waitUntil { $0.contains { $0.type == .request } }
        let handshakeCall = try #require(await device.received.first { $0.type == .request }?.callID)
        await device.send([Packet(type: .response, isReliable: true, callID: handshakeCall, payload: [])])  // its sequence 0
        _ = try await handshake.value
        let delivered = Delivered()
        _ = try client.serverStream(.inputStreamInputEvents, Blob(), as: Blob.self, deliveringOn: SerialQueueEventLoop(name: "h")) {
            if case .message(let blob) = $0 { delivered.add(blob.bytes) }
        }
        await device.waitUntil { $0.filter { $0.type == .request }.count == 2 }
        let streamCall = try #require(await device.received.last { $0.type == .request }?.callID)

        let returned = Returned()
        let closed = Task {
            await client.shutdown()
            await returned.set()
        }
        await device.waitUntil { $0.filter { $0.type == .request }.count == 3 }
        let sent = await device.received
        let cancel = try #require(sent.firstIndex { $0.type == .cancel && $0.callID == streamCall }, "no CANCEL of the stream")
        let ping = try #require(sent.lastIndex { $0.type == .request })
        #expect(cancel < ping, "the CANCEL goes before the barrier")
        #expect(sent[ping].address == MethodID.devicePing)
        #expect(await !returned.value, "shutdown returned before the barrier's answer")
        // A message the device sent before it handled the CANCEL (sequence 1), then the Ping's answer (2).
        await device.send([
            Packet(type: .streamMessage, isReliable: true, callID: streamCall, payload: [1]),
            Packet(type: .response, isReliable: true, callID: sent[ping].callID, payload: []),
        ])
        // A wait that never ends fails the check below, not the run: the watchdog closes the client.
        let fired = Returned()
        let watchdog = Task {
            try? await Task.sleep(for: .seconds(5))
            guard !Task.isCancelled else { return }
            await fired.set()
            client.close()
        }
        await closed.value
        watchdog.cancel()
        #expect(await !fired.value, "the watchdog closed the client: the barrier's answer did not end the wait")
        await device.waitUntil { packets in
            [[1, 0], [2, 0]].allSatisfy { ack in packets.contains { $0.type == .ack && $0.payload == ack } }
        }
        let acks = await device.received.filter { $0.type == .ack }.map(\.payload)
        #expect(acks.contains([1, 0]), "the message before the barrier's answer was never acknowledged: \(acks)")
        #expect(acks.contains([2, 0]), "the barrier's answer was never acknowledged: \(acks)")
        #expect(await eventually { delivered.all == [[1]] }, "the open stream's consumer still gets what came before the close")
    }
}

/// What a stream handler was given, in order.
private final class Delivered: Sendable {
    private let state = Mutex<[[UInt8]]>([])
    func add(_ bytes: [UInt8]) { state.withLock { $0.append(bytes) } }
    var all: [[UInt8]] { state.withLock { $0 } }
}

/// Whether a task got past a point.
private actor Returned {
    var value = false
    func set() { value = true }
}
