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
        try decodeView(unstuffed: frame[...]).packet
    }

    /// Decodes an unstuffed frame without copying its payload: the view's payload is a slice of `frame`.
    ///
    /// - Throws: as ``decode(unstuffed:)``.
    public static func decodeView(unstuffed frame: ArraySlice<UInt8>) throws(WireError) -> PacketView {
        let size = frame.count
        guard size >= WireFormat.minFrameBytes else {
            throw WireError(
                .framing, "frame of \(size) bytes is shorter than an envelope and its check", byteCount: size)
        }
        let base = frame.startIndex
        let bodyEnd = base + size - WireFormat.checkBytes
        let received = UInt16(frame[bodyEnd]) | UInt16(frame[bodyEnd + 1]) << 8
        let computed = frame.withUnsafeBufferPointer { bytes in
            CRC16.checksum(UnsafeBufferPointer(rebasing: bytes[0..<(size - WireFormat.checkBytes)]))
        }
        guard received == computed else {
            throw WireError(
                .badCheck, "check \(hex16(received)) does not match the computed \(hex16(computed))",
                byteCount: size)
        }
        let first = frame[base]
        let type = PacketType(rawValue: first & WireFormat.typeMask)
        let isReliable = first & WireFormat.reliableFlag != 0
        let sequence = UInt16(frame[base + 1]) | UInt16(frame[base + 2]) << 8
        var callID: UInt64 = 0
        var index = base + 3
        var shift: UInt64 = 0
        while true {
            guard index < bodyEnd else {
                throw WireError(.framing, "call id: truncated varint", byteCount: size)
            }
            guard index - base - 3 < Varint.maxBytes else {
                throw WireError(.framing, "call id: varint longer than \(Varint.maxBytes) bytes", byteCount: size)
            }
            let byte = frame[index]
            index += 1
            callID |= UInt64(byte & 0x7F) << shift
            shift += 7
            if byte & 0x80 == 0 { break }
        }
        guard callID <= UInt64(UInt32.max) else {
            throw WireError(.framing, "call id: varint \(callID) does not fit 32 bits", byteCount: size)
        }
        var address: MethodID?
        var status: StatusCode?
        switch type {
        case .request:
            guard bodyEnd - index >= 2 else {
                throw WireError(.framing, "REQUEST without its service and method ids", byteCount: size)
            }
            address = MethodID(service: frame[index], method: frame[index + 1])
            index += 2
        case .streamEnd, .error:
            guard bodyEnd - index >= 1 else {
                throw WireError(.framing, "\(type) without its status", byteCount: size)
            }
            status = StatusCode(rawValue: frame[index])
            index += 1
        default:
            break
        }
        let view = PacketView(
            type: type, isReliable: isReliable, sequence: sequence, callID: UInt32(callID), address: address,
            status: status, payload: frame[index..<bodyEnd])
        guard view.type.isKnown else {
            throw WireError(
                .unknownPacketType, "unknown packet type \(view.type.rawValue) on call \(view.callID)",
                byteCount: size, packet: view.packet)
        }
        return view
    }

    private static func hex16(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }
}

/// A decoded packet whose payload is a slice of the frame it was decoded from (no copy): what
/// ``FrameDecoder/nextView()`` and ``PacketDecoder/decodeView(unstuffed:)`` return.
///
/// The fields are those of ``Packet``; ``packet`` copies the payload out into an owned ``Packet``.
public struct PacketView: Hashable, Sendable {
    /// The packet type.
    public var type: PacketType
    /// True when the receiver must acknowledge (flag bit 4).
    public var isReliable: Bool
    /// The sender's sequence number for this packet.
    public var sequence: UInt16
    /// The call this packet belongs to; 0 for link packets (ACK, HEARTBEAT).
    public var callID: UInt32
    /// The called method; only for ``PacketType/request``.
    public var address: MethodID?
    /// The status; only for ``PacketType/streamEnd`` and ``PacketType/error``.
    public var status: StatusCode?
    /// The payload, a slice of the decoded frame.
    public var payload: ArraySlice<UInt8>

    /// A view with the fields given.
    public init(
        type: PacketType, isReliable: Bool = false, sequence: UInt16 = 0, callID: UInt32,
        address: MethodID? = nil, status: StatusCode? = nil, payload: ArraySlice<UInt8> = []
    ) {
        self.type = type
        self.isReliable = isReliable
        self.sequence = sequence
        self.callID = callID
        self.address = address
        self.status = status
        self.payload = payload
    }

    /// The packet, with its own copy of the payload.
    public var packet: Packet {
        Packet(
            type: type, isReliable: isReliable, sequence: sequence, callID: callID, address: address, status: status,
            payload: Array(payload))
    }
}
