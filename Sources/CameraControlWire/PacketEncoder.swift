/// Turns a ``Packet`` into wire bytes (docs/PROTOCOL.md §2–§4).
///
/// ```
/// unstuffed frame:
/// +-----------+----------+-------------+-----------------+---------+--------------+
/// | type|flags| sequence | call id     | service, method | payload | CRC-16       |
/// | 1 byte    | u16 LE   | varint 1–5  | or status: 0–2  |         | u16 LE       |
/// +-----------+----------+-------------+-----------------+---------+--------------+
/// wire bytes: COBS(unstuffed frame) 0x00
/// ```
///
/// The encoder checks the packet against the spec before it writes anything:
/// - a `REQUEST` has an ``Packet/address`` and only a request has one;
/// - a `STREAM_END` or `ERROR` has a ``Packet/status`` and only those have one;
/// - call id 0 is only for `ACK`, `HEARTBEAT` and `ERROR` (the spec's "call (or 0)"); `ACK` and
///   `HEARTBEAT` always use call id 0;
/// - an `ACK` payload is exactly the two bytes of the acknowledged sequence;
/// - the unstuffed frame, check included, is at most `maxFrameBytes` bytes.
///
/// Packets of types v1 does not define are encoded with no method or status bytes (tests use that to
/// produce frames of unknown types).
public enum PacketEncoder {
    /// The wire bytes of `packet`: `COBS(envelope ‖ payload ‖ CRC-16 LE) 0x00`.
    ///
    /// - Parameter maxFrameBytes: the largest unstuffed frame allowed, check included; values above
    ///   ``WireFormat/maxFrameBytes`` (4093) are treated as 4093.
    /// - Throws: ``WireError/Code/invalidValue`` for a packet the spec does not allow (see the type's
    ///   documentation), ``WireError/Code/payloadTooLarge`` when the frame would exceed `maxFrameBytes`.
    public static func encode(
        _ packet: Packet, maxFrameBytes: Int = WireFormat.maxFrameBytes
    )
        throws(WireError) -> [UInt8]
    {
        var wire = COBS.encode(try encodeUnstuffed(packet, maxFrameBytes: maxFrameBytes))
        wire.append(WireFormat.delimiter)
        return wire
    }

    /// Appends the wire bytes of `packet` (`COBS(envelope ‖ payload ‖ CRC-16 LE) 0x00`) to `wire`, building
    /// the unstuffed frame in `scratch` (overwritten): once both have grown, encoding allocates nothing.
    /// On an error nothing is appended.
    ///
    /// - Throws: the same errors as ``encode(_:maxFrameBytes:)``.
    public static func encode(
        _ packet: Packet, maxFrameBytes: Int = WireFormat.maxFrameBytes, appendingTo wire: inout [UInt8],
        scratch: inout [UInt8]
    ) throws(WireError) {
        try encodeUnstuffed(packet, maxFrameBytes: maxFrameBytes, into: &scratch)
        COBS.encode(scratch, appendingTo: &wire)
        wire.append(WireFormat.delimiter)
    }

    /// The unstuffed frame of `packet`: envelope, payload and CRC-16, without COBS or delimiter.
    ///
    /// - Throws: the same errors as ``encode(_:maxFrameBytes:)``.
    public static func encodeUnstuffed(
        _ packet: Packet, maxFrameBytes: Int = WireFormat.maxFrameBytes
    )
        throws(WireError) -> [UInt8]
    {
        var frame: [UInt8] = []
        try encodeUnstuffed(packet, maxFrameBytes: maxFrameBytes, into: &frame)
        return frame
    }

    /// Writes the unstuffed frame of `packet` into `frame`, replacing its contents (its storage is reused).
    ///
    /// - Throws: the same errors as ``encode(_:maxFrameBytes:)``; `frame` is unchanged then.
    public static func encodeUnstuffed(
        _ packet: Packet, maxFrameBytes: Int = WireFormat.maxFrameBytes, into frame: inout [UInt8]
    ) throws(WireError) {
        try validate(packet)
        let limit = min(maxFrameBytes, WireFormat.maxFrameBytes)
        let size = frameSize(of: packet)
        guard size <= limit else {
            throw WireError(
                .payloadTooLarge,
                "\(packet.type) frame over the limit of \(limit) bytes",  // the description adds its size
                byteCount: size)
        }
        frame.removeAll(keepingCapacity: true)
        frame.reserveCapacity(size)
        frame.append((packet.type.rawValue & WireFormat.typeMask) | (packet.isReliable ? WireFormat.reliableFlag : 0))
        frame.append(UInt8(truncatingIfNeeded: packet.sequence))
        frame.append(UInt8(truncatingIfNeeded: packet.sequence >> 8))
        Varint.append(packet.callID, to: &frame)
        if let address = packet.address {
            frame.append(address.service)
            frame.append(address.method)
        }
        if let status = packet.status {
            frame.append(status.rawValue)
        }
        frame.append(contentsOf: packet.payload)
        let check = CRC16.checksum(frame)
        frame.append(UInt8(truncatingIfNeeded: check))
        frame.append(UInt8(truncatingIfNeeded: check >> 8))
    }

    /// The unstuffed size of `packet`'s frame, check included (whether or not the packet is valid).
    public static func frameSize(of packet: Packet) -> Int {
        1 + 2 + Varint.size(of: packet.callID) + (packet.address == nil ? 0 : 2) + (packet.status == nil ? 0 : 1)
            + packet.payload.count + WireFormat.checkBytes
    }

    /// The largest payload a packet of this shape can carry in a frame of `maxFrameBytes`.
    public static func maxPayloadBytes(
        type: PacketType, callID: UInt32, maxFrameBytes: Int = WireFormat.maxFrameBytes
    ) -> Int {
        let extra = type == .request ? 2 : (type == .streamEnd || type == .error ? 1 : 0)
        return max(0, min(maxFrameBytes, WireFormat.maxFrameBytes) - (3 + Varint.size(of: callID) + extra + WireFormat.checkBytes))
    }

    private static func validate(_ packet: Packet) throws(WireError) {
        let type = packet.type
        if type == .request, packet.address == nil {
            throw WireError(.invalidValue, "REQUEST without service and method ids", packet: packet)
        }
        if type != .request, packet.address != nil {
            throw WireError(.invalidValue, "\(type) cannot carry service and method ids", packet: packet)
        }
        let carriesStatus = type == .streamEnd || type == .error
        if carriesStatus, packet.status == nil {
            throw WireError(.invalidValue, "\(type) without a status", packet: packet)
        }
        if !carriesStatus, packet.status != nil {
            throw WireError(.invalidValue, "\(type) cannot carry a status", packet: packet)
        }
        guard type.isKnown else { return }
        let isLink = type == .ack || type == .heartbeat
        if isLink, packet.callID != 0 {
            throw WireError(.invalidValue, "\(type) must use call id 0, not \(packet.callID)", packet: packet)
        }
        if !isLink, type != .error, packet.callID == 0 {
            throw WireError(.invalidValue, "\(type) needs a non-zero call id", packet: packet)
        }
        if type == .ack, packet.payload.count != WireFormat.ackPayloadBytes {
            throw WireError(
                .invalidValue, "ACK payload must be the 2-byte sequence, not \(packet.payload.count) bytes",
                packet: packet)
        }
    }
}
