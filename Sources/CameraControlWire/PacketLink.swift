extension Packet {
    /// An `ACK` (call id 0) with its own `sequence`, acknowledging the packet numbered `acking`.
    public static func ack(sequence: UInt16, acking: UInt16) -> Packet {
        Packet(
            type: .ack, sequence: sequence, callID: 0,
            payload: [UInt8(truncatingIfNeeded: acking), UInt8(truncatingIfNeeded: acking >> 8)])
    }

    /// A `HEARTBEAT` (call id 0, empty payload) with its own `sequence`.
    public static func heartbeat(sequence: UInt16) -> Packet {
        Packet(type: .heartbeat, sequence: sequence, callID: 0)
    }

    /// For an `ACK` whose payload is the 2-byte sequence number: the acknowledged number; nil otherwise.
    public var ackedSequence: UInt16? {
        guard type == .ack, payload.count == WireFormat.ackPayloadBytes else { return nil }
        return UInt16(payload[0]) | UInt16(payload[1]) << 8
    }

    /// For a `STREAM_END` or `ERROR`: the payload as the UTF-8 status message (invalid UTF-8 repaired);
    /// nil for other types.
    public var statusMessage: String? {
        guard type == .streamEnd || type == .error else { return nil }
        return String(decoding: payload, as: UTF8.self)
    }
}

extension Packet {
    /// A `REQUEST` calling `method` on `callID` with `message` as its payload.
    public static func request<M: WireMessage>(
        _ method: MethodID, callID: UInt32, sequence: UInt16 = 0, message: M
    ) -> Packet {
        Packet(type: .request, sequence: sequence, callID: callID, address: method, payload: message.serializedBytes())
    }

    /// The payload decoded as a message of type `M`.
    ///
    /// - Throws: ``WireError/Code/malformedMessage`` when the payload does not parse as `M`.
    public func decodePayload<M: WireMessage>(as type: M.Type = M.self) throws(WireError) -> M {
        try M(serializedBytes: payload)
    }
}
