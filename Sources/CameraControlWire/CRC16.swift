/// CRC-16/CCITT-FALSE (a.k.a. CRC-16/IBM-3740), the frame check of docs/PROTOCOL.md §3.
///
/// Polynomial `0x1021`, initial value `0xFFFF`, no reflection, no final XOR; the check value of the
/// ASCII string `123456789` is `0x29B1`. Table driven, one table lookup per byte.
///
/// ```swift
/// var crc = CRC16()
/// crc.update(envelope)
/// crc.update(payload)
/// let check = crc.value
/// ```
public struct CRC16: Hashable, Sendable {
    /// The initial register value.
    public static let initialValue: UInt16 = 0xFFFF
    /// The generator polynomial, without its x¹⁶ term.
    public static let polynomial: UInt16 = 0x1021

    /// The CRC of the bytes given so far.
    public private(set) var value: UInt16

    /// A CRC over no bytes yet (`0xFFFF`).
    public init() { value = Self.initialValue }

    /// Adds bytes to the running CRC.
    public mutating func update<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        var crc = value
        for byte in bytes {
            crc = (crc << 8) ^ Self.table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
        }
        value = crc
    }

    /// Adds one byte to the running CRC.
    public mutating func update(_ byte: UInt8) {
        value = (value << 8) ^ Self.table[Int(UInt8(truncatingIfNeeded: value >> 8) ^ byte)]
    }

    /// The CRC of `bytes`.
    public static func checksum<C: Collection>(_ bytes: C) -> UInt16 where C.Element == UInt8 {
        var crc = CRC16()
        crc.update(bytes)
        return crc.value
    }

    /// The CRC of borrowed bytes (one table lookup per byte, no generic dispatch).
    public static func checksum(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt16 {
        table.withUnsafeBufferPointer { table in
            var crc = initialValue
            for byte in bytes {
                crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
            }
            return crc
        }
    }

    /// The CRC of each possible top byte, shifted through eight steps of the polynomial.
    static let table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 {
            crc = (crc & 0x8000) != 0 ? (crc << 1) ^ polynomial : crc << 1
        }
        return crc
    }
}
