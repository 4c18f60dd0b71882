import CameraControlTools
import CameraControlWire
import Testing

@Suite("SessionTap: what a relayed session streams, read as it passes by")
struct SessionTapTests {
    static func wire(_ packet: Packet) throws -> [UInt8] { try PacketEncoder.encode(packet) }

    static func request(_ method: MethodID, call: UInt32, sequence: UInt16) throws -> [UInt8] {
        try wire(Packet(type: .request, isReliable: true, sequence: sequence, callID: call, address: method))
    }

    static func message(_ payload: [UInt8], call: UInt32, sequence: UInt16, reliable: Bool = true) throws -> [UInt8] {
        try wire(Packet(type: .streamMessage, isReliable: reliable, sequence: sequence, callID: call, payload: payload))
    }

    @Test("input events and raw batches of the streams the host opened, each once, in pieces of any size")
    func streamsOnce() throws {
        var tap = SessionTap()
        tap.hostSent(try Self.request(.deviceHandshake, call: 1, sequence: 0))
        tap.hostSent(try Self.request(.inputStreamInputEvents, call: 2, sequence: 1) + Self.request(.devicePing, call: 3, sequence: 2))
        tap.hostSent(try Self.request(.inputStreamRawSamples, call: 4, sequence: 3))
        let press = InputEvent(timestampMicros: 1_000, kind: .fullPressDown, eventNumber: 1)
        var batch = RawSampleBatch()
        batch.firstTimestampMicros = 500
        var bytes = try Self.message(press.serializedBytes(), call: 2, sequence: 5)
        bytes += try Self.message(press.serializedBytes(), call: 2, sequence: 5)  // the retransmission
        bytes += try Self.message(batch.serializedBytes(), call: 4, sequence: 6, reliable: false)
        bytes += try Self.message([0x08, 0x01], call: 9, sequence: 7)  // a call the tap was not told of
        var items: [SessionTap.Item] = []
        for piece in stride(from: 0, to: bytes.count, by: 3) {
            items += tap.deviceSent(Array(bytes[piece..<min(piece + 3, bytes.count)]))
        }
        #expect(items == [.input(press), .samples(batch)])
    }

    @Test("a stream ended, and a new handshake, forget the streams and the sequence numbers seen")
    func endsAndNewSessions() throws {
        var tap = SessionTap()
        tap.hostSent(try Self.request(.inputStreamInputEvents, call: 2, sequence: 1))
        let event = InputEvent(timestampMicros: 7, kind: .touchDown, eventNumber: 1)
        #expect(tap.deviceSent(try Self.message(event.serializedBytes(), call: 2, sequence: 0)) == [.input(event)])
        _ = tap.deviceSent(try Self.wire(Packet(type: .streamEnd, isReliable: true, sequence: 1, callID: 2, status: .cancelled)))
        #expect(tap.deviceSent(try Self.message(event.serializedBytes(), call: 2, sequence: 2)).isEmpty, "the stream ended")
        // A new session numbers from 0 again: sequence 0 is news there.
        tap.hostSent(try Self.request(.deviceHandshake, call: 9, sequence: 0))
        tap.hostSent(try Self.request(.inputStreamInputEvents, call: 10, sequence: 1))
        #expect(tap.deviceSent(try Self.message(event.serializedBytes(), call: 10, sequence: 0)) == [.input(event)])
    }

    @Test("garbage and frames that do not decode are skipped; what follows is read")
    func garbage() throws {
        var tap = SessionTap()
        tap.hostSent([0xFF, 0x13, 0x00] + (try Self.request(.inputStreamInputEvents, call: 2, sequence: 1)))
        let event = InputEvent(timestampMicros: 7, kind: .touchDown, eventNumber: 1)
        let items = tap.deviceSent([0x01, 0x02, 0x00, 0x05, 0x00] + (try Self.message(event.serializedBytes(), call: 2, sequence: 0)))
        #expect(items == [.input(event)])
    }

    @Test("the counts of what passed by: packets each way, retransmissions included, frames that did not decode, each streamed item once")
    func counts() throws {
        var tap = SessionTap()
        tap.hostSent([0xFF, 0x13, 0x00] + (try Self.request(.inputStreamInputEvents, call: 2, sequence: 1)))
        tap.hostSent(try Self.request(.inputStreamRawSamples, call: 3, sequence: 2))
        let event = InputEvent(timestampMicros: 7, kind: .touchDown, eventNumber: 1)
        var bytes = try Self.message(event.serializedBytes(), call: 2, sequence: 0)
        bytes += try Self.message(event.serializedBytes(), call: 2, sequence: 0)  // the retransmission
        bytes += try Self.message(RawSampleBatch().serializedBytes(), call: 3, sequence: 1, reliable: false)
        _ = tap.deviceSent([0x01, 0x02, 0x00] + bytes)
        var expected = SessionTap.Counts()
        expected.packetsFromHost = 2
        expected.packetsFromDevice = 3
        expected.badFramesFromHost = 1
        expected.badFramesFromDevice = 1
        expected.inputEvents = 1
        expected.sampleBatches = 1
        #expect(tap.counts == expected)
    }
}
