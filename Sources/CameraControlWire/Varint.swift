/// Unsigned LEB128 varints as used for the envelope's call id (docs/PROTOCOL.md §4).
///
/// Seven bits per byte, least significant group first, the high bit set on every byte but the last.
/// A call id takes 1–5 bytes and is less than 2³².
public enum Varint {
    /// The longest varint the envelope allows.
    public static let maxBytes = 5

    /// The bytes of `value`.
    public static func encode(_ value: UInt32) -> [UInt8] {
        var bytes: [UInt8] = []
        append(value, to: &bytes)
        return bytes
    }

    /// Appends the bytes of `value` to `bytes`.
    public static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// How many bytes `value` takes (1–5).
    public static func size(of value: UInt32) -> Int {
        var size = 1
        var rest = value >> 7
        while rest != 0 {
            size += 1
            rest >>= 7
        }
        return size
    }

    /// Decodes a varint at the start of `bytes`: its value and how many bytes it took.
    ///
    /// - Throws: ``WireError/Code/framing`` when the bytes end before the varint does, when it is longer
    ///   than five bytes, or when its value is 2³² or more.
    public static func decode<C: Collection>(_ bytes: C) throws(WireError) -> (value: UInt32, length: Int)
    where C.Element == UInt8 {
        var value: UInt64 = 0
        var length = 0
        for byte in bytes {
            guard length < maxBytes else {
                throw WireError(.framing, "varint longer than \(maxBytes) bytes")
            }
            value |= UInt64(byte & 0x7F) << (7 * UInt64(length))
            length += 1
            if byte & 0x80 == 0 {
                guard value <= UInt64(UInt32.max) else {
                    throw WireError(.framing, "varint \(value) does not fit 32 bits")
                }
                return (UInt32(value), length)
            }
        }
        throw WireError(.framing, "truncated varint")
    }
}
