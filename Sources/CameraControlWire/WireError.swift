/// An error of the wire layer: a frame that does not decode, a packet or message that does not encode.
///
/// Errors are values: the ``code`` says what went wrong, the ``message`` says it for humans. Errors tied
/// to a received frame carry the frame's size in ``byteCount`` (the unstuffed bytes, or for an oversized
/// frame the bytes discarded so far) and, when the envelope could still be parsed, the partially decoded
/// ``packet`` (for ``Code/unknownPacketType`` that carries the call id the RPC layer may answer).
public struct WireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of wire error this is; extensible, compare with the static constants.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// A stable name of the code (`bad-check`, …).
        public var rawValue: String
        /// Wraps a code name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The frame's CRC-16 does not match its contents (docs/PROTOCOL.md §3; `check_errors`).
        public static let badCheck = Code(rawValue: "bad-check")
        /// The frame cannot be unstuffed, is shorter than an envelope, or has a truncated or overlong
        /// varint, or a `REQUEST`/`STREAM_END`/`ERROR` without its id or status bytes (`framing_errors`).
        public static let framing = Code(rawValue: "framing")
        /// The frame is longer than the decoder's `maxFrameBytes` (`oversized_frames`).
        public static let oversizedFrame = Code(rawValue: "oversized-frame")
        /// The envelope carries a packet type v1 does not define (`unknown_packet_types`); ``packet``
        /// holds what could be decoded.
        public static let unknownPacketType = Code(rawValue: "unknown-packet-type")
        /// The encoder was asked for a frame larger than its `maxFrameBytes`.
        public static let payloadTooLarge = Code(rawValue: "payload-too-large")
        /// A protobuf payload does not parse as the expected message.
        public static let malformedMessage = Code(rawValue: "malformed-message")
        /// A value is outside what the protocol allows (e.g. a `REQUEST` without an address).
        public static let invalidValue = Code(rawValue: "invalid-value")

        /// Same as ``rawValue``.
        public var description: String { rawValue }
    }

    /// What went wrong.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// For errors tied to a frame: its size in bytes (see the type's documentation); nil otherwise.
    public var byteCount: Int?
    /// For errors where the envelope was parsed (``Code/unknownPacketType``): the packet as far as it
    /// could be decoded; nil otherwise.
    public var packet: Packet?

    /// An error with a code, a message and, for frame errors, the frame's size and partial packet.
    public init(_ code: Code, _ message: String, byteCount: Int? = nil, packet: Packet? = nil) {
        self.code = code
        self.message = message
        self.byteCount = byteCount
        self.packet = packet
    }

    /// `code: message (n bytes)`.
    public var description: String {
        if let byteCount { return "\(code): \(message) (\(byteCount) bytes)" }
        return "\(code): \(message)"
    }
}
