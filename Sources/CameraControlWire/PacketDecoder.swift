/// Parses one unstuffed frame (envelope ‖ payload ‖ CRC-16 LE) into a ``Packet`` (docs/PROTOCOL.md §3–§4).
///
/// ``FrameDecoder`` uses it after unstuffing; it is public for tests and tools that hold a whole frame.
/// Reserved flag bits (5–7) are ignored. `ACK` payloads are not checked for length here (see
/// ``Packet/ackedSequence``), so a later minor version may extend them.
public enum PacketDecoder {
    /// Decodes an unstuffed frame.
    ///
    /// - Throws:
    ///   - ``WireError/Code/framing`` when the frame has fewer than 4 bytes before its check, a
    ///     truncated or overlong call id, or lacks the service/method or status bytes of its type;
    ///   - ``WireError/Code/badCheck`` when the CRC-16 does not match;
    ///   - ``WireError/Code/unknownPacketType`` for types 0 and 9–15, with ``WireError/packet`` set to the
    ///     packet decoded as far as possible (type, flags, sequence, call id; the rest as payload).
    ///
    ///   Every error's ``WireError/byteCount`` is the frame's size.
    public static func decode(unstuffed frame: [UInt8]) throws(WireError) -> Packet {
        let size = frame.count
        guard size >= WireFormat.minFrameBytes else {
            throw WireError(
                .framing, "frame of \(size) bytes is shorter than an envelope and its check", byteCount: size)
        }
        let bodyEnd = size - WireFormat.checkBytes
        let received = UInt16(frame[bodyEnd]) | UInt16(frame[bodyEnd + 1]) << 8
        let computed = CRC16.checksum(frame[0..<bodyEnd])
        guard received == computed else {
            throw WireError(
                .badCheck,
                "check \(hex16(received)) does not match the computed \(hex16(computed))",
                byteCount: size)
        }
        let type = PacketType(rawValue: frame[0] & WireFormat.typeMask)
        let isReliable = frame[0] & WireFormat.reliableFlag != 0
        let sequence = UInt16(frame[1]) | UInt16(frame[2]) << 8
        let callID: UInt32
        var index = 3
        do {
            let varint = try Varint.decode(frame[3..<bodyEnd])
            callID = varint.value
            index += varint.length
        } catch {
            throw WireError(.framing, "call id: \(error.message)", byteCount: size)
        }
        var packet = Packet(type: type, isReliable: isReliable, sequence: sequence, callID: callID)
        switch type {
        case .request:
            guard bodyEnd - index >= 2 else {
                throw WireError(.framing, "REQUEST without its service and method ids", byteCount: size)
            }
            packet.address = MethodID(service: frame[index], method: frame[index + 1])
            index += 2
        case .streamEnd, .error:
            guard bodyEnd - index >= 1 else {
                throw WireError(.framing, "\(type) without its status", byteCount: size)
            }
            packet.status = StatusCode(rawValue: frame[index])
            index += 1
        default:
            break
        }
        packet.payload = Array(frame[index..<bodyEnd])
        guard type.isKnown else {
            throw WireError(
                .unknownPacketType, "unknown packet type \(type.rawValue) on call \(callID)", byteCount: size,
                packet: packet)
        }
        return packet
    }

    private static func hex16(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }
}
