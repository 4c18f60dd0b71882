import CameraControlWire
import Testing

@testable import CameraControlTools

/// `camctl decode`'s descriptions and `camctl replay`'s reading of a recording, frame by frame.
@Suite struct DecodeTests {
    static func frame(_ packet: Packet, _ direction: FrameDirection, at micros: UInt64 = 0) throws -> RecordedFrame {
        RecordedFrame(timeMicros: micros, direction: direction, bytes: try PacketEncoder.encode(packet))
    }

    @Test("an answer is described with its request's method, found by call id; strays and bad frames say so")
    func answersMatchTheirRequests() throws {
        var describer = FrameDescriber()
        let request = Packet(
            type: .request, isReliable: true, sequence: 1, callID: 7, address: .devicePing,
            payload: PingRequest(payload: [1, 2]).serializedBytes())
        let asked = describer.describe(try Self.frame(request, .toDevice))
        #expect(asked.text.contains(MethodID.devicePing.name), "\(asked.text)")
        let answer = Packet(type: .response, sequence: 4, callID: 7, payload: PingResponse(payload: [1, 2]).serializedBytes())
        let answered = describer.describe(try Self.frame(answer, .fromDevice))
        #expect(answered.text.contains(MethodID.devicePing.name), "\(answered.text)")
        #expect(answered.text.contains(PingResponse.protoMessageName), "\(answered.text)")
        #expect(answered.members.contains(JSONMember("ok", .bool(true))))
        let stray = describer.describe(try Self.frame(Packet(type: .response, callID: 99, payload: [8, 1]), .fromDevice))
        #expect(stray.text.contains("of an unknown call"), "\(stray.text)")
        let broken = describer.describe(RecordedFrame(timeMicros: 0, direction: .fromDevice, bytes: [0x05, 0x01, 0x02, 0x00]))
        #expect(broken.text.hasPrefix("MALFORMED"), "\(broken.text)")
        #expect(broken.members.contains(JSONMember("ok", .bool(false))))
    }

    @Test("decode's lines: times relative to the first frame, the direction, and JSON with the documented fields")
    func printerLines() throws {
        let heartbeat = Packet(type: .heartbeat, callID: 0)
        var text = Decode.Printer(json: false)
        #expect(text.line(try Self.frame(heartbeat, .fromDevice, at: 5_000_000)).hasPrefix("     0.000 ms  device→host"))
        #expect(text.line(try Self.frame(heartbeat, .toDevice, at: 5_001_500)).hasPrefix("     1.500 ms  host→device"))
        var json = Decode.Printer(json: true)
        _ = json.line(try Self.frame(heartbeat, .fromDevice, at: 10))
        let line = try JSONValue(parsing: json.line(try Self.frame(heartbeat, .toDevice, at: 2_010)))
        #expect(line["tMs"] == .number("2.000"))
        #expect(line["direction"] == .string("toDevice"))
        #expect(line["type"] == .string(PacketType.heartbeat.description))
    }

    @Test("replay's reader: a retransmitted reliable event is read once, a handshake answer starts a session")
    func sessionReaderDeduplicates() throws {
        var reader = SessionReader()
        let open = Packet(type: .request, isReliable: true, sequence: 1, callID: 3, address: .inputStreamInputEvents)
        #expect(reader.read(try Self.frame(open, .toDevice)).isEmpty)
        let event = InputEvent(timestampMicros: 1_000, kind: .fullPressDown, eventNumber: 1)
        let message = Packet(type: .streamMessage, isReliable: true, sequence: 9, callID: 3, payload: event.serializedBytes())
        let first = reader.read(try Self.frame(message, .fromDevice))
        let again = reader.read(try Self.frame(message, .fromDevice))
        #expect(first.count == 1)
        #expect(again.isEmpty, "a retransmission is read once")
        guard case .input(let read) = first.first else {
            Issue.record("not an input item: \(first)")
            return
        }
        #expect(read == event)
    }
}
