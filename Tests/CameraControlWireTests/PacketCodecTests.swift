import CameraControlTestSupport
import Testing

@testable import CameraControlWire

@Suite struct PacketCodecTests {
    /// Every packet type survives encoder → decoder, through the whole wire path.
    @Test(arguments: samplePacketsOfEveryType)
    func roundTripEveryType(packet: Packet) throws {
        let wire = try PacketEncoder.encode(packet)
        #expect(wire.last == 0)
        #expect(!wire.dropLast().contains(0))
        let (outputs, counters) = decodeAll([wire])
        #expect(outputs == [.packet(packet)])
        #expect(counters.framesDecoded == 1)
        #expect(counters.bytesReceived == UInt64(wire.count))
        #expect(try PacketDecoder.decode(unstuffed: PacketEncoder.encodeUnstuffed(packet)) == packet)
    }

    /// The envelope layout of docs/PROTOCOL.md §4, byte by byte.
    @Test func envelopeLayout() throws {
        let request = Packet(
            type: .request, isReliable: true, sequence: 0x1234, callID: 300, address: MethodID(service: 2, method: 1), payload: [0xAB])
        let frame = try PacketEncoder.encodeUnstuffed(request)
        #expect(Array(frame.dropLast(2)) == [0x11, 0x34, 0x12, 0xAC, 0x02, 0x02, 0x01, 0xAB])
        let check = CRC16.checksum(frame.dropLast(2))
        #expect(frame.suffix(2) == [UInt8(check & 0xFF), UInt8(check >> 8)])

        let end = try PacketEncoder.encodeUnstuffed(Packet(type: .streamEnd, sequence: 1, callID: 5, status: .cancelled))
        #expect(Array(end.dropLast(2)) == [0x04, 0x01, 0x00, 0x05, 0x01])
    }

    /// PROTOCOL.md §4: a 10-byte stream message costs 8 bytes, a 10-byte request 10 (call id < 128).
    @Test func overheadNumbersOfTheSpec() throws {
        let payload = [UInt8](repeating: 0x42, count: 10)
        let stream = Packet(type: .streamMessage, sequence: 77, callID: 5, payload: payload)
        #expect(try PacketEncoder.encode(stream).count - payload.count == 8)
        let request = Packet(type: .request, sequence: 77, callID: 5, address: MethodID.devicePing, payload: payload)
        #expect(try PacketEncoder.encode(request).count - payload.count == 10)
        // The same holds for payloads with zeros in them (COBS costs one byte below 254 bytes either way).
        let zeros = [UInt8](repeating: 0, count: 10)
        #expect(try PacketEncoder.encode(Packet(type: .streamMessage, callID: 5, payload: zeros)).count == 18)
    }

    /// Packets the spec does not allow are refused before anything is written.
    @Test(arguments: [
        Packet(type: .request, callID: 1),  // no address
        Packet(type: .response, callID: 1, address: MethodID(service: 1, method: 1)),
        Packet(type: .streamEnd, callID: 1),  // no status
        Packet(type: .error, callID: 1),  // no status
        Packet(type: .cancel, callID: 1, status: .ok),
        Packet(type: .response, callID: 0),
        Packet(type: .request, callID: 0, address: MethodID(service: 1, method: 1)),
        Packet(type: .streamMessage, callID: 0),
        Packet(type: .cancel, callID: 0),
        Packet(type: .streamEnd, callID: 0, status: .ok),
        Packet(type: .heartbeat, callID: 3),
        Packet(type: .ack, callID: 3, payload: [0, 0]),
        Packet(type: .ack, callID: 0, payload: [1]),
        Packet(type: .ack, callID: 0),
    ])
    func invalidPacketsRejected(packet: Packet) {
        do {
            let bytes = try PacketEncoder.encode(packet)
            Issue.record("encoded \(bytes.hex)")
        } catch {
            #expect(error.code == .invalidValue)
        }
    }

    /// The size limit counts the unstuffed frame including the check; exactly at the limit is fine.
    @Test(arguments: [128, 512, 4093])
    func frameSizeLimit(limit: Int) throws {
        let fits = PacketEncoder.maxPayloadBytes(type: .streamMessage, callID: 3, maxFrameBytes: limit)
        let packet = Packet(type: .streamMessage, callID: 3, payload: [UInt8](repeating: 7, count: fits))
        #expect(try PacketEncoder.encodeUnstuffed(packet, maxFrameBytes: limit).count == limit)
        var tooBig = packet
        tooBig.payload.append(7)
        do {
            _ = try PacketEncoder.encode(tooBig, maxFrameBytes: limit)
            Issue.record("oversized packet encoded")
        } catch {
            #expect(error.code == .payloadTooLarge)
            #expect(error.byteCount == limit + 1)
        }
    }

    /// A limit above 4093 (the limit of the check's Hamming distance) is treated as 4093.
    @Test func limitAboveProtocolMaximumIsClamped() {
        let packet = Packet(type: .streamMessage, callID: 1, payload: [UInt8](repeating: 1, count: 4093))
        #expect(throws: WireError.self) { try PacketEncoder.encode(packet, maxFrameBytes: 100_000) }
    }

    /// Reserved flag bits 5–7 are ignored on decode; bit 4 is RELIABLE.
    @Test(arguments: [(UInt8(0x28), false), (0x48, false), (0x88, false), (0xE8, false), (0x18, true), (0xF8, true)])
    func reservedFlagBitsIgnored(firstByte: UInt8, reliable: Bool) throws {
        var body: [UInt8] = [firstByte, 0x09, 0x00, 0x00]
        let check = CRC16.checksum(body)
        body += [UInt8(check & 0xFF), UInt8(check >> 8)]
        let packet = try PacketDecoder.decode(unstuffed: body)
        #expect(packet == Packet(type: .heartbeat, isReliable: reliable, sequence: 9, callID: 0))
        var wire = COBS.encode(body)
        wire.append(0)
        #expect(decodeAll([wire]).outputs == [.packet(packet)])
    }

    /// Unknown types (0, 9–15) are reported with the call id and as much of the packet as parses.
    @Test(arguments: [0, 9, 10, 15] as [UInt8])
    func unknownPacketType(rawType: UInt8) throws {
        let packet = Packet(type: PacketType(rawValue: rawType), isReliable: true, sequence: 44, callID: 1234, payload: [1, 2, 3])
        let wire = try PacketEncoder.encode(packet)
        let (outputs, counters) = decodeAll([wire, try PacketEncoder.encode(.heartbeat(sequence: 45))])
        #expect(outputs.count == 2)
        guard case .error(let error) = outputs.first else {
            Issue.record("expected an error, got \(outputs)")
            return
        }
        #expect(error.code == .unknownPacketType)
        #expect(error.packet == packet)
        #expect(error.packet?.callID == 1234)
        #expect(outputs.last == .packet(.heartbeat(sequence: 45)))
        #expect(counters.unknownPacketTypes == 1)
        #expect(counters.framesDecoded == 1)
    }

    /// Frames too short for their envelope, or missing id or status bytes, are framing errors.
    @Test(arguments: [
        "", "08", "0805", "080500",  // fewer than 4 bytes before the check
        "01000001", "0100000101",  // REQUEST without (both) ids
        "04000001", "06000001",  // STREAM_END / ERROR without status
        // truncated / overlong / ≥ 2³² call id
        "01000080", "0800008080808080", "08000080808080ff7f", "08000080808080801f", "0800008080808010",
    ])
    func shortOrTruncatedEnvelopes(bodyHex: String) {
        var body = [UInt8](hex: bodyHex)
        let check = CRC16.checksum(body)
        body += [UInt8(check & 0xFF), UInt8(check >> 8)]
        if bodyHex.isEmpty { body = [0x01] }  // a lone byte: shorter than a check
        do {
            let packet = try PacketDecoder.decode(unstuffed: body)
            Issue.record("decoded \(packet)")
        } catch {
            #expect(error.code == .framing)
            #expect(error.byteCount == body.count)
        }
        var wire = COBS.encode(body)
        wire.append(0)
        let (outputs, counters) = decodeAll([wire])
        #expect(errorCodes(outputs) == [.framing])
        #expect(counters.framingErrors == 1)
    }

    @Test func ackAndHeartbeatHelpers() throws {
        let ack = Packet.ack(sequence: 2, acking: 0x0102)
        #expect(ack.type == .ack && ack.callID == 0 && ack.sequence == 2)
        #expect(ack.payload == [0x02, 0x01])
        #expect(ack.ackedSequence == 0x0102)
        #expect(Packet.heartbeat(sequence: 1).ackedSequence == nil)
        #expect(Packet(type: .ack, callID: 0, payload: [1]).ackedSequence == nil)
        #expect(Packet(type: .error, callID: 1, status: .internal, payload: Array("boom".utf8)).statusMessage == "boom")
        #expect(Packet.heartbeat(sequence: 1).statusMessage == nil)
    }
}

@Suite struct PacketMessageHelperTests {
    @Test func requestAndDecodePayload() throws {
        let packet = Packet.request(.deviceHandshake, callID: 4, sequence: 2, message: SampleMessages.handshakeRequest)
        #expect(packet.type == .request && packet.address == MethodID(service: 1, method: 1))
        #expect(try packet.decodePayload(as: HandshakeRequest.self) == SampleMessages.handshakeRequest)
        let garbage = Packet(type: .response, callID: 4, payload: [0x0A, 0x09])
        #expect(throws: WireError.self) { try garbage.decodePayload(as: HandshakeResponse.self) }
    }
}
