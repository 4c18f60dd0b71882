/// The wire constants of docs/PROTOCOL.md, in one place.
public enum WireFormat {
    /// The frame delimiter (§2).
    public static let delimiter: UInt8 = 0x00
    /// The largest unstuffed frame (envelope + payload + check) any peer may use (§2, §3).
    public static let maxFrameBytes = 4093
    /// The smallest `max_frame_bytes` a device may announce; every peer accepts frames this large (§2).
    public static let minMaxFrameBytes = 128
    /// Bytes of the CRC-16 at the end of a frame (§3).
    public static let checkBytes = 2
    /// The shortest envelope: type/flags, sequence and a one-byte call id (§4).
    public static let minEnvelopeBytes = 4
    /// The shortest valid unstuffed frame: an envelope and its check.
    public static let minFrameBytes = minEnvelopeBytes + checkBytes
    /// The `RELIABLE` flag in the envelope's first byte (§4).
    public static let reliableFlag: UInt8 = 0x10
    /// The mask of the packet type in the envelope's first byte (§4).
    public static let typeMask: UInt8 = 0x0F
    /// The bytes of an `ACK` payload: the acknowledged sequence number, u16 LE (§4).
    public static let ackPayloadBytes = 2
    /// The host sequence numbers a device remembers at least (§6): a host packet numbered this many or more
    /// behind the newest the host sent is one the device may take for a duplicate (acknowledged, never
    /// delivered).
    public static let deviceDuplicateWindow: UInt16 = 64
}
