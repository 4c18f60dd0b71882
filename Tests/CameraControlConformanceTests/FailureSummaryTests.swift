import CameraControlTransport
import CameraControlWire
import Testing

@testable import CameraControlConformance

/// What a failure's message says the device sent meanwhile (long-garbage-then-request's diagnostics).
@Suite("Failure summaries")
struct FailureSummaryTests {
    @Test("frames are counted by packet type, with the first and last arrival relative to the start")
    func countsAndTimes() throws {
        let start = ContinuousClock.now
        func frame(_ type: PacketType?, at millis: Int) -> ReceivedFrame {
            ReceivedFrame(
                wire: [1, 0], packet: type.map { Packet(type: $0, callID: 0) }, error: nil,
                at: start.advanced(by: .milliseconds(millis)))
        }
        let frames = [frame(.heartbeat, at: -30), frame(.ack, at: 95), frame(nil, at: 120), frame(.heartbeat, at: 1_990)]
        #expect(
            Probe.summary(frames, since: start)
                == "1 ACK, 2 HEARTBEAT, 1 undecodable (the first at -30 ms, the last at +1990 ms)")
        #expect(Probe.summary([], since: start) == "nothing")
        // Answers are listed with their calls and sequence numbers.
        var answer = frame(.response, at: 19)
        answer.packet?.callID = 12
        answer.packet?.sequence = 7
        #expect(
            Probe.summary([frame(.heartbeat, at: 5), answer], since: start)
                == "1 HEARTBEAT, 1 RESPONSE (the first at +5 ms, the last at +19 ms): RESPONSE call 12 seq 7 at +19 ms")
    }

    @Test("an answer of the wrong type is not shown as the expected frame with its payload; one of the right type is")
    func expectedFrameKeepsItsType() throws {
        let (host, _) = InMemoryTransport.makePair()
        let context = CaseContext(
            probe: Probe(transport: host), capabilities: Capabilities(), handshake: HandshakeResponse(), prompter: nil)
        func failure(_ reply: Packet) throws -> ConformanceFailure? {
            let wire = try PacketEncoder.encode(reply)
            let frame = ReceivedFrame(wire: wire, packet: reply, error: nil, at: .now)
            do {
                try context.expect(frame, .response, callID: 17, sent: [], "GetCounters")
                return nil
            } catch let failure as ConformanceFailure {
                return failure
            }
        }
        let error = try #require(
            try failure(Packet(type: .error, callID: 17, status: .failedPrecondition, payload: Array("handshake first".utf8))))
        #expect(error.expected == "RESPONSE on call 17", "\(error.expected)")
        let wrongCall = try #require(try failure(Packet(type: .response, callID: 18, payload: [1, 2])))
        #expect(wrongCall.expected.hasPrefix("RESPONSE on call 17: "), "\(wrongCall.expected)")
    }

    @Test("an unanswered request's failure says what the device sent meanwhile, and a silent device's that it sent nothing")
    func unansweredRequestSaysWhatCameMeanwhile() async throws {
        for talks in [true, false] {
            let (host, device) = InMemoryTransport.makePair()
            let probe = Probe(transport: host)
            await probe.start()
            // The device keeps its link alive (a HEARTBEAT every 20 ms) or says nothing, and answers no request.
            let heartbeats = Task {
                var sequence: UInt16 = 0
                while talks && !Task.isCancelled {
                    try await device.send(try PacketEncoder.encode(Packet(type: .heartbeat, sequence: sequence, callID: 0)))
                    sequence &+= 1
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            let reader = Task { while !Task.isCancelled { _ = try await device.receive() } }
            do {
                // On a loaded machine (the parallel test step) the device task may wait a while for a thread: a
                // talking device is given 4 s to be heard (a 1 s wait once saw nothing under load), a silent one 1 s.
                _ = try await probe.counters(within: talks ? .seconds(4) : .seconds(1))
                Issue.record("GetCounters was answered by a device that answers nothing")
            } catch let failure as ConformanceFailure {
                #expect(failure.message.hasPrefix("GetCounters was not answered; meanwhile (the request sent at +0 ms) the device sent "))
                #expect(failure.seen == nil)
                if talks {
                    #expect(failure.message.contains(" HEARTBEAT (the first at +"), "\(failure.message)")
                } else {
                    #expect(failure.message.hasSuffix("the device sent nothing"), "\(failure.message)")
                }
            }
            heartbeats.cancel()
            reader.cancel()
            await probe.stop()
            host.close()
            device.close()
        }
    }
}
