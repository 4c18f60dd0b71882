/// The packet type, the low four bits of an envelope's first byte (docs/PROTOCOL.md §4).
public struct PacketType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The 4-bit wire value.
    public var rawValue: UInt8
    /// Wraps a wire value (only the low four bits travel).
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue & 0x0F }

    // The types are inlinable constants, not stored `static let`s: another module's `switch` on a packet's
    // type then compares numbers, with no call to a global's lazy initialiser per case (the input-event path,
    // docs/PERFORMANCE.md, `presspath`).

    /// Host → device: starts a call; carries service and method ids and the request.
    @inlinable public static var request: PacketType { PacketType(rawValue: 1) }
    /// Device → host: the single response of a unary call (status OK).
    @inlinable public static var response: PacketType { PacketType(rawValue: 2) }
    /// Device → host: one message of a server stream.
    @inlinable public static var streamMessage: PacketType { PacketType(rawValue: 3) }
    /// Device → host: ends a server stream with a status.
    @inlinable public static var streamEnd: PacketType { PacketType(rawValue: 4) }
    /// Host → device: cancels a call.
    @inlinable public static var cancel: PacketType { PacketType(rawValue: 5) }
    /// Device → host: ends any call with a non-OK status.
    @inlinable public static var error: PacketType { PacketType(rawValue: 6) }
    /// Either way: acknowledges a reliable packet by its sequence number.
    @inlinable public static var ack: PacketType { PacketType(rawValue: 7) }
    /// Either way: keeps an idle link alive.
    @inlinable public static var heartbeat: PacketType { PacketType(rawValue: 8) }

    /// True for the types v1 defines (1–8).
    public var isKnown: Bool { (1...8).contains(rawValue) }

    /// The spec's name for the type, or `TYPE_<n>`.
    public var description: String {
        switch rawValue {
        case 1: "REQUEST"
        case 2: "RESPONSE"
        case 3: "STREAM_MESSAGE"
        case 4: "STREAM_END"
        case 5: "CANCEL"
        case 6: "ERROR"
        case 7: "ACK"
        case 8: "HEARTBEAT"
        default: "TYPE_\(rawValue)"
        }
    }
}

/// One decoded envelope: what a frame carries once unstuffed and checked (docs/PROTOCOL.md §4).
///
/// ```
///   byte 0          1     2        3 …                  …                 last 2
/// +---------------+-----------+--------------------+------------------+---------+----------+
/// | type | flags  | sequence  | call id            | method or status | payload | CRC-16   |
/// | 4 bits 4 bits | u16 LE    | varint (1–5 bytes) | 0, 1 or 2 bytes  | …       | u16 LE   |
/// +---------------+-----------+--------------------+------------------+---------+----------+
/// ```
public struct Packet: Hashable, Sendable {
    /// The packet type.
    public var type: PacketType
    /// True when the receiver must acknowledge (flag bit 4).
    public var isReliable: Bool
    /// The sender's sequence number for this packet.
    public var sequence: UInt16
    /// The call this packet belongs to; 0 for link packets (ACK, HEARTBEAT).
    public var callID: UInt32
    /// The called method (its service and method ids); only for ``PacketType/request``.
    public var address: MethodID?
    /// The status; only for ``PacketType/streamEnd`` and ``PacketType/error``.
    public var status: StatusCode?
    /// The payload: a protobuf message, a UTF-8 status message, or an acknowledged sequence number.
    public var payload: [UInt8]

    /// A packet of any type; set `address` for requests and `status` for stream ends and errors.
    public init(
        type: PacketType,
        isReliable: Bool = false,
        sequence: UInt16 = 0,
        callID: UInt32,
        address: MethodID? = nil,
        status: StatusCode? = nil,
        payload: [UInt8] = []
    ) {
        self.type = type
        self.isReliable = isReliable
        self.sequence = sequence
        self.callID = callID
        self.status = status
        self.payload = payload
        self.address = address
    }
}
