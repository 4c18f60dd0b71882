// libFuzzer harness (scripts/fuzz envelope): arbitrary bytes as an unstuffed frame (envelope, payload,
// check) into PacketDecoder, and arbitrary envelope fields around a fuzzed payload into PacketEncoder.
//
// Properties: never a crash; a frame that decodes re-encodes to a frame that decodes to the same packet;
// a packet of a known type built from fuzzed fields either encodes and decodes back to itself,
// or is refused by the encoder with an error (never a trap).
import CameraControlWire

/// libFuzzer's entry point: one input, `size` bytes at `data`; returns 0 (a broken property traps).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEnvelope(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let packet = try? PacketDecoder.decode(unstuffed: bytes) {
        if let again = try? PacketEncoder.encodeUnstuffed(packet) {
            let decoded = try? PacketDecoder.decode(unstuffed: again)
            precondition(decoded == packet, "a decoded packet does not survive re-encoding")
        }
    }
    // The same bytes with a correct check, so the decoder looks past the CRC.
    if bytes.count >= 2 {
        var framed = Array(bytes.dropLast(2))
        let check = CRC16.checksum(framed)
        framed += [UInt8(check & 0xFF), UInt8(check >> 8)]
        if let packet = try? PacketDecoder.decode(unstuffed: framed), let again = try? PacketEncoder.encodeUnstuffed(packet) {
            precondition((try? PacketDecoder.decode(unstuffed: again)) == packet, "re-encoding changed the packet")
        }
    }
    // Fuzzed fields around a fuzzed payload, through the whole wire form (COBS and delimiter).
    guard bytes.count >= 8 else { return 0 }
    let type = PacketType(rawValue: bytes[0])
    let sequence = UInt16(bytes[1]) | UInt16(bytes[2]) << 8
    let callID = UInt32(bytes[3]) | UInt32(bytes[4]) << 8
    let packet = Packet(
        type: type, isReliable: bytes[0] & 0x10 != 0, sequence: sequence, callID: callID,
        address: type == .request ? MethodID(service: bytes[5], method: bytes[6]) : nil,
        status: type == .error || type == .streamEnd ? StatusCode(rawValue: bytes[7]) : nil,
        payload: Array(bytes.dropFirst(8)))
    guard type.isKnown, let wire = try? PacketEncoder.encode(packet) else { return 0 }
    var decoder = FrameDecoder()
    decoder.append(wire)
    // What the encoder accepts, the decoder accepts: the host never sends a frame a peer must drop.
    guard case .packet(let decoded) = decoder.next() else {
        preconditionFailure("an encoded packet does not decode: \(packet)")
    }
    precondition(decoded == packet, "an encoded packet decodes differently")
    return 0
}
