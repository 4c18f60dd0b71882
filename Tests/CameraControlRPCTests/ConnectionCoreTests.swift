import CameraControlRPC
import CameraControlWire
import Testing

@Suite("ConnectionCore")
struct ConnectionCoreTests {
    /// A core with an established session at t = 0 (heartbeat 50 ms).
    func establishedCore() -> ConnectionCore {
        var core = ConnectionCore()
        core.markSessionEstablished(now: .zero)
        _ = core.takeEvents()
        return core
    }

    @Test("a unary call sends its REQUEST and completes with the RESPONSE payload")
    func unaryResponse() throws {
        var core = ConnectionCore()
        var device = DeviceFrames()
        let call = try core.startCall(method: .devicePing, request: [1, 2, 3], now: .zero)
        #expect(call.rawValue != 0)
        let sent = hostPackets(core.takeOutbound())
        #expect(sent.count == 1)
        #expect(sent.first?.type == .request)
        #expect(sent.first?.callID == call.rawValue)
        #expect(sent.first?.address == MethodID.devicePing)
        #expect(sent.first?.payload == [1, 2, 3])

        core.receive(device.response(call, [9, 9]), now: .ms(1))
        #expect(core.takeEvents() == [.response(call, [9, 9])])
        #expect(core.callsInFlight.isEmpty)
        #expect(core.counters.callsSucceeded == 1)
    }

    @Test("a server stream delivers its messages in order, then ends once")
    func streamMessagesAndEnd() throws {
        var core = ConnectionCore()
        var device = DeviceFrames()
        let call = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        _ = core.takeOutbound()
        var bytes = device.message(call, [1]) + device.message(call, [2])
        bytes += device.streamEnd(call)
        bytes += device.message(call, [3])  // after the end: unknown call, dropped
        core.receive(bytes, now: .ms(1))
        #expect(core.takeEvents() == [.streamMessage(call, [1]), .streamMessage(call, [2]), .streamEnded(call)])
        #expect(core.counters.unknownCallPackets == 1)
    }

    @Test(
        "a stream message is copied into the previous one's storage once its consumer let go of it; a payload still held keeps its bytes"
    )
    func streamPayloadStorageReused() throws {
        var core = ConnectionCore()
        var device = DeviceFrames()
        let call = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        _ = core.takeOutbound()
        func nextPayload(_ bytes: [UInt8], at millis: Int) -> [UInt8] {
            core.receive(device.message(call, bytes), now: .ms(millis))
            guard case .streamMessage(_, let payload)? = core.takeEvents().first else { return [] }
            return payload
        }
        // A 200-byte message, dropped at once (as a handler on the loop does), then a 3-byte one: it is
        // copied into the first one's storage (a new array would have room for about 3 bytes).
        #expect(nextPayload(Array(repeating: 1, count: 200), at: 1).count == 200)
        let second = nextPayload([4, 5, 6], at: 2)
        #expect(second == [4, 5, 6])
        #expect(second.capacity >= 200)
        // `second` is still held: the next message gets storage of its own, and `second` keeps its bytes.
        let third = nextPayload([7, 8], at: 3)
        #expect(third == [7, 8])
        #expect(second == [4, 5, 6])
        #expect(third.withUnsafeBytes { $0.baseAddress } != second.withUnsafeBytes { $0.baseAddress })
    }

    @Test(
        "device error statuses become RPCError codes and messages",
        arguments: [
            (PacketType.error, StatusCode.unimplemented, "no such method"),
            (PacketType.error, StatusCode.invalidArgument, "bad request"),
            (PacketType.error, StatusCode.failedPrecondition, "handshake first"),
            (PacketType.error, StatusCode.resourceExhausted, ""),
            (PacketType.streamEnd, StatusCode.aborted, "stream aborted"),
            (PacketType.streamEnd, StatusCode(rawValue: 42), "future code"),
        ])
    func errorStatuses(type: PacketType, status: StatusCode, message: String) throws {
        var core = ConnectionCore()
        var device = DeviceFrames()
        let method: MethodID = type == .streamEnd ? .inputStreamRawSamples : .configGetConfig
        let call = try core.startCall(method: method, request: [], now: .zero)
        let frame =
            type == .error ? device.error(call, status, message) : device.streamEnd(call, status, message)
        core.receive(frame, now: .ms(1))
        let events = core.takeEvents()
        #expect(events == [.failed(call, RPCError(code: status, message: message, method: method))])
        #expect(core.counters.callsFailedByDevice == 1)
    }

    @Test("(v1.2) a packet of an unknown type takes part in §6: acknowledged if reliable, its number recorded (no gap, a copy a duplicate)")
    func unknownTypeTakesPartInSequencing() throws {
        var core = establishedCore()
        var device = DeviceFrames()
        let first = device.heartbeat()  // numbered 0
        let future = device.frame(Packet(type: PacketType(rawValue: 12), isReliable: true, callID: 8, payload: [1, 2]))  // 1
        core.receive(first + future, now: .ms(1))
        let acks = hostPackets(core.takeOutbound()).filter { $0.type == .ack }
        #expect(acks.map(\.payload) == [[1, 0]], "the unknown reliable packet 1 is acknowledged")
        core.receive(future, now: .ms(2))  // its copy: acknowledged again, counted a duplicate
        #expect(hostPackets(core.takeOutbound()).filter { $0.type == .ack }.map(\.payload) == [[1, 0]])
        #expect(core.counters.duplicatesDropped == 1)
        core.receive(device.heartbeat(), now: .ms(3))  // numbered 2: no gap after 1
        #expect(core.counters.sequenceGaps == 0)
        #expect(core.takeEvents().isEmpty)
    }

    @Test("a stream the host cancelled whose messages keep coming (its CANCEL lost) gets its CANCEL again, once an interval, until it ends")
    func lostCancelSentAgain() throws {
        var core = establishedCore()  // heartbeat 50 ms
        var device = DeviceFrames()
        let call = try core.startCall(method: .inputStreamRawSamples, request: [], now: .zero)
        _ = core.takeOutbound()
        func cancels(_ bytes: [UInt8]) -> Int { hostPackets(bytes).filter { $0.type == .cancel && $0.callID == call.rawValue }.count }
        let cancelled = core.cancelCall(call, now: .ms(10))
        #expect(cancelled)
        let sent1 = cancels(core.takeOutbound())
        #expect(sent1 == 1)
        // The device did not get it: its messages go on.
        core.receive(device.message(call, [1]), now: .ms(20))
        let sent2 = cancels(core.takeOutbound())
        #expect(sent2 == 0, "within an interval of the CANCEL")
        core.receive(device.message(call, [2]), now: .ms(60))
        let sent3 = cancels(core.takeOutbound())
        #expect(sent3 == 1, "an interval after it: sent again")
        core.receive(device.message(call, [3]), now: .ms(70))
        let sent4 = cancels(core.takeOutbound())
        #expect(sent4 == 0)
        #expect(core.counters.cancelsResent == 1)
        // The device ends the call: nothing more for it, even if a late message comes.
        core.receive(device.streamEnd(call, .cancelled), now: .ms(200))
        core.receive(device.message(call, [4]), now: .ms(300))
        let sent5 = cancels(core.takeOutbound())
        #expect(sent5 == 0)
        let events = core.takeEvents()
        #expect(!events.contains { if case .streamMessage = $0 { true } else { false } })
    }

    @Test("packets for unknown call ids are dropped and counted")
    func unknownCallsDropped() throws {
        var core = ConnectionCore()
        var device = DeviceFrames()
        let call = try core.startCall(method: .devicePing, request: [], now: .zero)
        let stranger = CallID(rawValue: call.rawValue + 100)
        core.receive(
            device.response(stranger, [1]) + device.message(stranger, [2]) + device.error(stranger, .internal),
            now: .ms(1))
        #expect(core.takeEvents().isEmpty)
        #expect(core.counters.unknownCallPackets == 3)
        #expect(core.callsInFlight == [call])
    }

    @Test("a reliable packet is acknowledged with its sequence number")
    func ackForReliable() throws {
        var core = ConnectionCore()
        var device = DeviceFrames(sequence: 40)
        let call = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        _ = core.takeOutbound()
        core.receive(device.message(call, [7], reliable: true), now: .ms(1))
        let sent = hostPackets(core.takeOutbound())
        #expect(sent.map(\.type) == [.ack])
        #expect(sent.first?.ackedSequence == 40)
        #expect(sent.first?.callID == 0)
        // Best-effort packets are not acknowledged.
        core.receive(device.message(call, [8]), now: .ms(2))
        #expect(core.takeOutbound().isEmpty)
        #expect(core.counters.acksSent == 1)
    }

    @Test("ACKs are encoded once the output is taken or another packet is sent, in the order owed, numbered in turn")
    func acksKeepTheirPlaceOnTheWire() throws {
        var core = ConnectionCore()
        var device = DeviceFrames(sequence: 20)
        let stream = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        let request = try #require(hostPackets(core.takeOutbound()).first)
        // Two reliable messages in one read, then a call started before the output is taken: its REQUEST
        // follows both ACKs on the wire, and the sequence numbers run on from the first REQUEST's.
        core.receive(device.message(stream, [1], reliable: true) + device.message(stream, [2], reliable: true), now: .ms(1))
        #expect(core.counters.acksSent == 2)
        _ = try core.startCall(method: .devicePing, request: [], now: .ms(1))
        let sent = hostPackets(core.takeOutbound())
        #expect(sent.map(\.type) == [.ack, .ack, .request])
        #expect(sent.map(\.ackedSequence) == [20, 21, nil])
        #expect(sent.map(\.sequence) == [request.sequence &+ 1, request.sequence &+ 2, request.sequence &+ 3])
        #expect(core.counters.packetsSent == 4)
        // Owed and not yet taken when the link closes: nothing more is sent.
        core.receive(device.message(stream, [3], reliable: true), now: .ms(2))
        core.closeLink(now: .ms(2))
        #expect(core.takeOutbound().isEmpty)
    }

    @Test("a retransmitted reliable packet is delivered once but acknowledged every time")
    func duplicateDropped() throws {
        var core = ConnectionCore()
        var device = DeviceFrames(sequence: 10)
        let call = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        _ = core.takeOutbound()
        let original = device.message(call, [5], reliable: true)  // sequence 10
        let later = device.message(call, [6])  // sequence 11, best effort
        core.receive(original, now: .ms(1))
        core.receive(later, now: .ms(2))
        core.receive(original, now: .ms(3))  // the retransmission, same sequence
        #expect(core.takeEvents() == [.streamMessage(call, [5]), .streamMessage(call, [6])])
        let acks = hostPackets(core.takeOutbound()).filter { $0.type == .ack }
        #expect(acks.map(\.ackedSequence) == [10, 10])
        #expect(core.counters.duplicatesDropped == 1)
    }

    @Test("a reliable packet older than the 4,096-entry window is dropped as a duplicate")
    func olderThanWindow() throws {
        var core = ConnectionCore()
        var device = DeviceFrames()
        let call = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        let old = device.message(call, [0], reliable: true)  // sequence 0, never delivered below
        device.sequence = 4_096
        core.receive(device.message(call, [64]), now: .ms(1))
        _ = core.takeEvents()
        core.receive(old, now: .ms(2))
        #expect(core.takeEvents().isEmpty)
        #expect(core.counters.duplicatesDropped == 1)
    }

    /// Issue 9: a device streaming small raw batches sends ~200 packets a second, so a reliable input
    /// event retransmitted 300 ms late was more than 64 numbers behind, and the 64-entry window dropped
    /// it as a duplicate (after acknowledging it): a click lost with no trace.
    @Test("a retransmission hundreds of packets late, never delivered before, is delivered once")
    func lateRetransmissionWithinTheBudget() throws {
        var core = ConnectionCore()
        var device = DeviceFrames()
        let call = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        let press = device.message(call, [1], reliable: true)  // sequence 0: lost the first times
        for number in 1...600 {
            device.sequence = UInt16(number)
            core.receive(device.message(call, [2]), now: .ms(1))
        }
        _ = core.takeEvents()
        core.receive(press, now: .ms(300))
        #expect(core.takeEvents() == [.streamMessage(call, [1])])
        core.receive(press, now: .ms(301))
        #expect(core.takeEvents().isEmpty, "delivered at most once")
        #expect(core.counters.duplicatesDropped == 1)
    }

    @Test("a jump in the device's sequence numbers counts the missing packets")
    func sequenceGap() throws {
        var core = ConnectionCore()
        var device = DeviceFrames(sequence: 65530)
        let call = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        core.receive(device.message(call, [1]), now: .ms(1))  // 65530
        device.sequence = 65533  // 65531, 65532 lost
        core.receive(device.message(call, [2]), now: .ms(2))
        device.sequence = 1  // wraps: 65534, 65535, 0 lost
        core.receive(device.message(call, [3]), now: .ms(3))
        #expect(core.counters.sequenceGaps == 5)
        #expect(core.takeEvents().count == 3)
    }

    @Test("a passed deadline fails the call with DEADLINE_EXCEEDED and sends CANCEL")
    func deadlineExceeded() throws {
        var core = ConnectionCore()
        var device = DeviceFrames()
        let call = try core.startCall(method: .devicePing, request: [], deadline: .ms(100), now: .zero)
        core.receive(device.acks(of: core.takeOutbound()), now: .zero)  // acknowledged: no retransmission
        #expect(core.nextPollTime == .ms(100))
        core.poll(now: .ms(99))
        #expect(core.takeEvents().isEmpty)
        core.poll(now: .ms(100))
        let events = core.takeEvents()
        #expect(events.count == 1)
        guard case .failed(let failed, let error) = events.first else {
            Issue.record("expected a failure, got \(events)")
            return
        }
        #expect(failed == call)
        #expect(error.code == .deadlineExceeded)
        #expect(error.method == .devicePing)
        let sent = hostPackets(core.takeOutbound())
        #expect(sent.map(\.type) == [.cancel])
        #expect(sent.first?.callID == call.rawValue)
        // A late response is dropped: the call ended once.
        core.receive(device.response(call, [1]), now: .ms(101))
        #expect(core.takeEvents().isEmpty)
        #expect(core.counters.deadlinesExceeded == 1)
    }

    /// §9 (v1.2): on a slow line the handshake's response takes longer than the attempt's backoff wait; once
    /// the device acknowledged the request, the call waits `waitOnceAcknowledged` after that ACK instead.
    @Test("an acknowledged request started with waitOnceAcknowledged waits that long after the ACK; unacknowledged, its deadline holds")
    func waitOnceAcknowledged() throws {
        var core = ConnectionCore()
        var device = DeviceFrames()
        // The Ping first: no call starts while a handshake awaits its answer.
        let silent = try core.startCall(
            method: .devicePing, request: [], deadline: .ms(100), waitOnceAcknowledged: .ms(500), now: .zero)
        let acknowledged = try core.startCall(
            method: .deviceHandshake, request: [], deadline: .ms(100), waitOnceAcknowledged: .ms(500), now: .zero)
        let requests = hostPackets(core.takeOutbound())
        #expect(requests.map(\.callID) == [silent.rawValue, acknowledged.rawValue])
        core.receive(device.ack(requests[1].sequence), now: .ms(60))  // only the handshake is acknowledged
        core.poll(now: .ms(100))
        #expect(core.takeEvents().map(\.failedCode) == [.deadlineExceeded])
        #expect(core.callsInFlight.contains(acknowledged))
        #expect(!core.callsInFlight.contains(silent))
        core.poll(now: .ms(559))
        #expect(core.callsInFlight.contains(acknowledged))
        core.receive(device.response(acknowledged, [7]), now: .ms(559))
        #expect(core.takeEvents().first == .response(acknowledged, [7]))
    }

    @Test("a unary call without a deadline gets the default one; a stream gets none")
    func defaultDeadlines() throws {
        var core = ConnectionCore(configuration: ConnectionConfiguration(defaultUnaryDeadline: .seconds(1)))
        var device = DeviceFrames()
        _ = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        core.receive(device.acks(of: core.takeOutbound()), now: .zero)
        #expect(core.nextPollTime == nil)
        let unary = try core.startCall(method: .devicePing, request: [], now: .ms(10))
        core.receive(device.acks(of: core.takeOutbound()), now: .ms(10))
        #expect(core.nextPollTime == .ms(1010))
        core.poll(now: .ms(1010))
        #expect(core.takeEvents().map(\.failedCode) == [.deadlineExceeded])
        #expect(!core.callsInFlight.contains(unary))
    }

    @Test("heartbeats are sent when the host was idle for the interval, only once a session is established")
    func heartbeatWhenIdle() throws {
        var core = ConnectionCore()
        core.poll(now: .seconds(1))
        #expect(core.takeOutbound().isEmpty)  // no session: no heartbeat

        core.markSessionEstablished(heartbeatInterval: .ms(20), now: .seconds(1))
        #expect(core.takeEvents() == [.sessionEstablished])
        #expect(core.configuration.heartbeatInterval == .ms(20))
        #expect(core.configuration.deadTimeout == .ms(80))
        core.poll(now: .seconds(1) + .ms(19))
        #expect(core.takeOutbound().isEmpty)
        core.poll(now: .seconds(1) + .ms(20))
        #expect(hostPackets(core.takeOutbound()).map(\.type) == [.heartbeat])
        // Sending something else resets the idle timer.
        _ = try core.startCall(method: .devicePing, request: [], now: .seconds(1) + .ms(30))
        _ = core.takeOutbound()
        core.poll(now: .seconds(1) + .ms(45))
        #expect(core.takeOutbound().isEmpty)
        #expect(core.counters.heartbeatsSent == 1)
    }

    @Test("a successful handshake response establishes the session by itself")
    func handshakeEstablishes() throws {
        var core = ConnectionCore()
        var device = DeviceFrames()
        let call = try core.startCall(method: .deviceHandshake, request: [], now: .zero)
        #expect(!core.isSessionEstablished)
        core.receive(device.response(call, [1]), now: .ms(5))
        #expect(core.takeEvents() == [.response(call, [1]), .sessionEstablished])
        #expect(core.isSessionEstablished)
    }

    @Test("the handshake response resets duplicate detection, since the device restarts its numbering")
    func handshakeResetsSequence() throws {
        var core = ConnectionCore()
        var device = DeviceFrames(sequence: 500)
        let stream = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        core.receive(device.message(stream, [1], reliable: true), now: .ms(1))  // 500
        let handshake = try core.startCall(method: .deviceHandshake, request: [], now: .ms(2))
        device.sequence = 0
        core.receive(device.response(handshake), now: .ms(3))  // 0
        let next = try core.startCall(method: .inputStreamInputEvents, request: [], now: .ms(4))
        core.receive(device.message(next, [2], reliable: true), now: .ms(5))  // 1
        let delivered = core.takeEvents().filter {
            if case .streamMessage = $0 { return true }
            return false
        }
        #expect(delivered == [.streamMessage(stream, [1]), .streamMessage(next, [2])])
        #expect(core.counters.duplicatesDropped == 0)
        #expect(core.counters.sequenceGaps == 0)
    }

    @Test("a new handshake ends every other call in flight with CANCELLED, as the device does")
    func handshakeEndsOtherCalls() throws {
        var core = ConnectionCore()
        var device = DeviceFrames()
        let first = try core.startCall(method: .deviceHandshake, request: [], now: .zero)
        core.receive(device.response(first), now: .ms(1))
        let stream = try core.startCall(method: .inputStreamInputEvents, request: [], now: .ms(2))
        let ping = try core.startCall(method: .devicePing, request: [], now: .ms(2))
        _ = core.takeEvents()
        let again = try core.startCall(method: .deviceHandshake, request: [], now: .ms(3))
        device.sequence = 0
        core.receive(device.response(again), now: .ms(4))
        let events = core.takeEvents()
        let cancelled = events.compactMap { event -> CallID? in
            if case .failed(let call, let error) = event, error.code == .cancelled { return call }
            return nil
        }
        #expect(Set(cancelled) == [stream, ping])
        #expect(events.contains(.response(again, [])))
        #expect(core.callsInFlight.isEmpty)
        // A late message for the old stream is dropped, not delivered.
        core.receive(device.message(stream, [9]), now: .ms(5))
        #expect(!core.takeEvents().contains(.streamMessage(stream, [9])))
    }

    @Test(
        "(v1.2) while a handshake awaits its answer the host acknowledges nothing but that answer: no ACK numbered after the handshake, none of an earlier attempt's response"
    )
    func pendingHandshakeWithholdsAcks() throws {
        var core = ConnectionCore()
        var oldSession = DeviceFrames(sequence: 700)
        let stream = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        _ = core.takeOutbound()
        // The first attempt goes unanswered within its deadline; the second starts.
        let first = try core.startCall(method: .deviceHandshake, request: [], deadline: .ms(100), now: .ms(1))
        core.poll(now: .ms(101))
        let second = try core.startCall(method: .deviceHandshake, request: [], deadline: .ms(400), now: .ms(101))
        let sentBefore = hostPackets(core.takeOutbound())
        #expect(sentBefore.filter { $0.type == .request && $0.address == .deviceHandshake }.count == 2)
        // The old session's reliable event and the first attempt's response (packet 0 of the numbering the
        // device started then) arrive while the second attempt waits: neither is acknowledged.
        core.receive(oldSession.message(stream, [1], reliable: true), now: .ms(102))
        var firstSession = DeviceFrames()
        core.receive(firstSession.frame(Packet(type: .response, isReliable: true, callID: first.rawValue, payload: [7])), now: .ms(103))
        let whileWaiting = hostPackets(core.takeOutbound())
        #expect(whileWaiting.isEmpty, "nothing but the handshake's copies: \(whileWaiting.map(\.type))")
        #expect(core.counters.acksWithheld == 2)
        #expect(!core.isSessionEstablished, "an abandoned attempt's response does not start the session")
        // The second attempt's own response (packet 0 again) is acknowledged, and from then on every reliable
        // packet is.
        var secondSession = DeviceFrames()
        core.receive(secondSession.frame(Packet(type: .response, isReliable: true, callID: second.rawValue, payload: [8])), now: .ms(104))
        #expect(core.isSessionEstablished)
        let acks = hostPackets(core.takeOutbound()).filter { $0.type == .ack }
        #expect(acks.map(\.payload) == [[0, 0]])
        core.receive(secondSession.message(stream, [2], reliable: true), now: .ms(105))
        #expect(hostPackets(core.takeOutbound()).filter { $0.type == .ack }.map(\.payload) == [[1, 0]])
        #expect(core.counters.acksWithheld == 2)
    }

    @Test(
        "(v1.2) no call starts while a handshake awaits its answer, a second handshake included; after the answer, or the call's end, one does"
    )
    func noCallWhileAHandshakeAwaits() throws {
        var core = ConnectionCore()
        var device = DeviceFrames()
        let handshake = try core.startCall(method: .deviceHandshake, request: [], deadline: .ms(100), now: .zero)
        _ = core.takeOutbound()
        for method in [MethodID.devicePing, .deviceHandshake] {
            do {
                _ = try core.startCall(method: method, request: [], now: .ms(1))
                Issue.record("\(method) started while the handshake awaits its answer")
            } catch {
                #expect(error.code == .unavailable && error.message.contains("awaits its answer"), "\(error)")
            }
        }
        #expect(hostPackets(core.takeOutbound()).isEmpty, "nothing numbered after the handshake")
        #expect(core.callsInFlight == [handshake])
        // Cancelled (or past its deadline), the attempt no longer holds the next one back.
        let cancelled = core.cancelCall(handshake, now: .ms(2))
        #expect(cancelled)
        let second = try core.startCall(method: .deviceHandshake, request: [], deadline: .ms(100), now: .ms(3))
        core.receive(device.response(second, []), now: .ms(4))
        let ping = try core.startCall(method: .devicePing, request: [], now: .ms(5))
        #expect(Set(core.callsInFlight) == [ping])
    }

    @Test(
        "(v1.2) a handshake on an established session: no HEARTBEAT, heartbeat answer or CANCEL goes out until its answer, and no timer spins meanwhile"
    )
    func rehandshakeSendsNothingNewerMeanwhile() throws {
        var core = establishedCore()  // heartbeat 50 ms
        var device = DeviceFrames()
        let stream = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        _ = core.takeOutbound()
        let handshake = try core.startCall(method: .deviceHandshake, request: [], deadline: .seconds(1), now: .ms(1))
        _ = core.takeOutbound()
        func sentTypes(polling millis: Int) -> [PacketType] {
            core.poll(now: .ms(millis))
            if let next = core.nextPollTime { #expect(next > .ms(millis), "a timer due already would spin the loop") }
            return hostPackets(core.takeOutbound()).map(\.type)
        }
        // The two requests' copies go out at 20–21 and 60–61 ms (the timeout doubling from 20 ms), then at
        // 140–141: at 125 the host has been silent for more than an interval.
        let copies = sentTypes(polling: 61)
        #expect(copies == [.request, .request], "the stream's and the handshake's copies")
        let first = sentTypes(polling: 125)
        #expect(first.allSatisfy { $0 == .request }, "only the handshake's copies")
        core.receive(device.heartbeat(), now: .ms(130))  // the old session's: not answered
        let cancelled = core.cancelCall(stream, now: .ms(135))  // ended here; its CANCEL waits for the session
        #expect(cancelled)
        let second = sentTypes(polling: 200)
        #expect(second.allSatisfy { $0 == .request })
        #expect(core.counters.heartbeatsSent == 0)
        var session = DeviceFrames()
        core.receive(session.frame(Packet(type: .response, isReliable: true, callID: handshake.rawValue, payload: [])), now: .ms(210))
        let after = hostPackets(core.takeOutbound()).map(\.type)
        #expect(after == [.ack], "its answer is acknowledged")
        core.markSessionEstablished(now: .ms(210))
        let later = sentTypes(polling: 300)
        #expect(later.contains(.heartbeat), "heartbeats again once the session runs")
    }

    @Test("(v1.2) the ACKs a host owes are numbered before a request's copy goes out: they count for the device's window")
    func owedAcksCountForTheWindow() throws {
        var core = establishedCore()
        var device = DeviceFrames()
        let ping = try core.startCall(method: .devicePing, request: [1], deadline: .seconds(10), now: .zero)
        _ = core.takeOutbound()
        // 64 reliable packets read, their ACKs not yet encoded when the copy falls due (a driver that polls
        // before it takes the output): on the wire they would come before the copy, 64 numbers after it.
        for _ in 0..<64 { core.receive(device.message(CallID(rawValue: 99), [0], reliable: true), now: .ms(1)) }
        core.poll(now: .ms(20))
        let sent = hostPackets(core.takeOutbound())
        #expect(sent.filter { $0.type == .ack }.count == 64)
        #expect(!sent.contains { $0.type == .request && $0.callID == ping.rawValue })
        #expect(core.counters.reliableBeyondWindow == 1)
    }

    @Test(
        "(v1.2) a request the host has numbered 64 packets past is given up, not sent again: the device's window could take the copy for a duplicate"
    )
    func requestBeyondTheDevicesWindowGivenUp() throws {
        var core = establishedCore()
        var device = DeviceFrames()
        let ping = try core.startCall(method: .devicePing, request: [1], deadline: .seconds(10), now: .zero)
        #expect(hostPackets(core.takeOutbound()).first { $0.type == .request }?.sequence == 0)
        func copies(until millis: Int) -> Int {
            core.poll(now: .ms(millis))
            return hostPackets(core.takeOutbound()).filter { $0.type == .request && $0.callID == ping.rawValue }.count
        }
        // 62 ACKs of device packets follow it (the request is packet n, the ACKs n+1 … n+62): its copy at
        // 20 ms is 62 numbers behind the newest, within the window.
        for _ in 0..<62 { core.receive(device.message(CallID(rawValue: 99), [0], reliable: true), now: .ms(1)) }
        _ = core.takeOutbound()
        #expect(copies(until: 20) == 1)
        // One more: the copy due at 60 ms would be 63 behind, still inside. Then a second: 64 behind.
        core.receive(device.message(CallID(rawValue: 99), [0], reliable: true), now: .ms(21))
        _ = core.takeOutbound()
        #expect(copies(until: 60) == 1)
        core.receive(device.message(CallID(rawValue: 99), [0], reliable: true), now: .ms(61))
        _ = core.takeOutbound()
        #expect(copies(until: 140) == 0)
        #expect(copies(until: 200) == 0)
        #expect(core.counters.reliableBeyondWindow == 1)
        #expect(core.counters.reliableGivenUp == 1)
        #expect(core.callsInFlight.contains(ping), "the call waits for its deadline (the device may have it)")
    }

    @Test("a host that did not run (starved) does not count its own absence as the device's silence")
    func starvedHostIsNotADeadLink() throws {
        var core = establishedCore()
        var device = DeviceFrames()
        core.poll(now: .ms(10))
        core.receive(device.heartbeat(), now: .ms(20))
        // The host runs again only 400 ms later: the device's heartbeats wait in the kernel.
        core.poll(now: .ms(420))
        #expect(!core.takeEvents().contains(.linkDead), "declared dead by a host that was not listening")
        core.receive(device.heartbeat(), now: .ms(421))
        core.poll(now: .ms(430))
        #expect(!core.takeEvents().contains(.linkDead))
        // Truly silent afterwards, with the host running: dead after 4 intervals.
        for tick in stride(from: 440, through: 660, by: 20) { core.poll(now: .ms(tick)) }
        #expect(core.takeEvents().contains(.linkDead))
    }

    @Test("after a starved host wakes, a silent device gets one interval, then the link is dead")
    func starvedHostThenSilence() throws {
        var core = establishedCore()
        var device = DeviceFrames()
        core.receive(device.heartbeat(), now: .ms(20))
        core.poll(now: .ms(1_000))
        #expect(!core.takeEvents().contains(.linkDead))
        core.poll(now: .ms(1_049))
        #expect(!core.takeEvents().contains(.linkDead))
        core.poll(now: .ms(1_050))
        #expect(core.takeEvents().contains(.linkDead))
    }

    @Test("silence for 4 intervals kills the link: every call fails UNAVAILABLE, once")
    func linkDead() throws {
        var core = establishedCore()
        var device = DeviceFrames()
        let ping = try core.startCall(method: .devicePing, request: [], deadline: .seconds(10), now: .zero)
        let stream = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        // Device heartbeats keep it alive past 200 ms.
        core.receive(device.heartbeat(), now: .ms(150))
        core.poll(now: .ms(300))
        #expect(core.takeEvents().isEmpty)
        #expect(core.counters.heartbeatsReceived == 1)
        core.poll(now: .ms(349))
        #expect(core.takeEvents().isEmpty)
        core.poll(now: .ms(350))
        let events = core.takeEvents()
        #expect(events.count == 3)
        #expect(events.last == .linkDead)
        let failed = Set(
            events.compactMap { event -> CallID? in
                if case .failed(let call, let error) = event, error.code == .unavailable { return call }
                return nil
            })
        #expect(failed == [ping, stream])
        #expect(!core.isSessionEstablished)
        #expect(core.counters.linkDeaths == 1)
        core.poll(now: .seconds(5))
        #expect(core.takeEvents().isEmpty)
    }

    @Test("several calls in flight get their interleaved answers")
    func interleavedCalls() throws {
        var core = ConnectionCore()
        var device = DeviceFrames()
        let a = try core.startCall(method: .devicePing, request: [0xA], now: .zero)
        let s = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        let b = try core.startCall(method: .configGetConfig, request: [0xB], now: .zero)
        let c = try core.startCall(method: .diagnosticsGetCounters, request: [0xC], now: .zero)
        #expect(Set([a, s, b, c]).count == 4)
        #expect([a, s, b, c] == [a, s, b, c].sorted())
        #expect(hostPackets(core.takeOutbound()).map(\.callID) == [a, s, b, c].map(\.rawValue))
        var bytes = device.message(s, [1]) + device.response(c, [0xC])
        bytes += device.message(s, [2]) + device.error(a, .unimplemented)
        bytes += device.response(b, [0xB]) + device.streamEnd(s)
        // Split the input at every byte boundary: results must not depend on chunking.
        for byte in bytes { core.receive([byte], now: .ms(1)) }
        #expect(
            core.takeEvents() == [
                .streamMessage(s, [1]), .response(c, [0xC]), .streamMessage(s, [2]),
                .failed(a, RPCError(code: .unimplemented, message: "", method: .devicePing)),
                .response(b, [0xB]), .streamEnded(s),
            ])
        #expect(core.callsInFlight.isEmpty)
    }

    @Test("garbage and a bad CRC are counted, and the next frame still works")
    func garbageAndBadCheck() throws {
        var core = ConnectionCore()
        var device = DeviceFrames()
        let call = try core.startCall(method: .devicePing, request: [], now: .zero)
        var unstuffed = try PacketEncoder.encodeUnstuffed(
            Packet(type: .response, sequence: 0, callID: call.rawValue, payload: [1, 2, 3]))
        unstuffed[4] ^= 0x40  // a payload bit: the CRC no longer matches
        let badCheck = COBS.encode(unstuffed) + [0x00]
        core.receive([0x13, 0x37, 0x00] + badCheck, now: .ms(1))
        #expect(core.takeEvents().isEmpty)
        core.receive(device.response(call, [4]), now: .ms(2))
        #expect(core.takeEvents() == [.response(call, [4])])
        #expect(core.counters.wire.checkErrors == 1)
        #expect(core.counters.wire.framingErrors == 1)
    }

    @Test("cancelling a call sends CANCEL, ends it with CANCELLED, and drops its late packets")
    func cancelCall() throws {
        var core = ConnectionCore()
        var device = DeviceFrames()
        let call = try core.startCall(method: .inputStreamInputEvents, request: [], now: .zero)
        _ = core.takeOutbound()
        let first = core.cancelCall(call, now: .ms(1))
        let second = core.cancelCall(call, now: .ms(1))
        #expect(first)
        #expect(!second)
        #expect(hostPackets(core.takeOutbound()).map(\.type) == [.cancel])
        core.receive(device.message(call, [1]), now: .ms(2))
        #expect(core.takeEvents().map(\.failedCode) == [.cancelled])
        #expect(core.counters.callsCancelled == 1)
    }

    @Test("closing the link fails every call UNAVAILABLE and refuses new ones")
    func closeLink() throws {
        var core = ConnectionCore()
        let call = try core.startCall(method: .devicePing, request: [], now: .zero)
        core.closeLink(now: .ms(1))
        let events = core.takeEvents()
        #expect(events.first?.failedCode == .unavailable)
        #expect(events.last == .linkClosed)
        #expect(core.takeOutbound().isEmpty)
        var closed = core
        #expect(throws: RPCError.self) { try closed.startCall(method: .devicePing, request: [], now: .ms(2)) }
        _ = call
    }

    @Test("a request larger than the device's frame is refused with RESOURCE_EXHAUSTED, consuming no id")
    func requestTooLarge() throws {
        var core = ConnectionCore()  // 128-byte frames before the handshake
        do {
            _ = try core.startCall(method: .configConfigure, request: Array(repeating: 1, count: 200), now: .zero)
            Issue.record("oversized request accepted")
        } catch {
            #expect(error.code == .resourceExhausted)
        }
        #expect(core.takeOutbound().isEmpty)
        let call = try core.startCall(method: .devicePing, request: [], now: .zero)
        #expect(call.rawValue == 1)
        core.markSessionEstablished(maxFrameBytes: 1024, now: .zero)
        _ = try core.startCall(method: .configConfigure, request: Array(repeating: 1, count: 200), now: .zero)
    }

    @Test("the host refuses more calls than it allows in flight")
    func tooManyCalls() throws {
        var core = ConnectionCore(configuration: ConnectionConfiguration(maxCallsInFlight: 2))
        _ = try core.startCall(method: .devicePing, request: [], now: .zero)
        _ = try core.startCall(method: .devicePing, request: [], now: .zero)
        do {
            _ = try core.startCall(method: .devicePing, request: [], now: .zero)
            Issue.record("a third call was accepted")
        } catch {
            #expect(error.code == .resourceExhausted)
        }
    }
}

extension ConnectionEvent {
    /// The status of a `.failed` event, nil for others.
    var failedCode: StatusCode? {
        if case .failed(_, let error) = self { return error.code }
        return nil
    }
}
