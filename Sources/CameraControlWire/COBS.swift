/// Consistent Overhead Byte Stuffing (Cheshire & Baker, 1999), the framing of docs/PROTOCOL.md §2.
///
/// ``encode(_:)`` removes every `0x00` from a frame so that `0x00` can end it on the wire; it adds at
/// most `ceil(n / 254)` bytes (at least one) for `n` bytes and never emits `0x00`. The delimiter is not
/// part of the stuffed bytes: ``PacketEncoder`` appends it.
///
/// The encoding is the canonical one: a run of exactly 254 non-zero bytes at the end of the input is not
/// followed by an extra `0x01` code. ``decode(_:)`` also accepts that redundant code byte.
public enum COBS {
    /// The largest value of a code byte: 254 data bytes not followed by a zero.
    static let maxCode: UInt8 = 0xFF

    /// The largest stuffed size of `count` unstuffed bytes: `count + max(1, ceil(count / 254))`.
    public static func maxEncodedCount(_ count: Int) -> Int {
        count + max(1, (count + 253) / 254)
    }

    /// Stuffs `bytes`; the result contains no `0x00`.
    public static func encode<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 {
        var out: [UInt8] = []
        encode(bytes, appendingTo: &out)
        return out
    }

    /// Stuffs `bytes` and appends the result (no `0x00`) to `out`, growing it at most once.
    public static func encode<C: Collection>(_ bytes: C, appendingTo out: inout [UInt8]) where C.Element == UInt8 {
        out.reserveCapacity(out.count + maxEncodedCount(bytes.count))
        var codeIndex = out.count
        var code: UInt8 = 1
        out.append(0)  // placeholder for the first code byte
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            bytes.formIndex(after: &index)
            if byte == 0 {
                out[codeIndex] = code
                codeIndex = out.count
                out.append(0)
                code = 1
            } else {
                out.append(byte)
                code += 1
                if code == maxCode && index != bytes.endIndex {
                    out[codeIndex] = code
                    codeIndex = out.count
                    out.append(0)
                    code = 1
                }
            }
        }
        out[codeIndex] = code
    }

    /// Unstuffs `bytes` (without the delimiter).
    ///
    /// - Throws: ``WireError/Code/framing`` when `bytes` contains a `0x00` or ends inside a group.
    public static func decode<C: Collection>(_ bytes: C) throws(WireError) -> [UInt8] where C.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var unstuffer = COBSUnstuffer()
        for byte in bytes {
            guard byte != 0 else {
                throw WireError(.framing, "COBS data contains a zero byte", byteCount: bytes.count)
            }
            unstuffer.feed(byte, into: &out)
        }
        guard unstuffer.isAtGroupEnd else {
            throw WireError(.framing, "COBS data ends inside a group", byteCount: bytes.count)
        }
        return out
    }
}

/// The incremental COBS decoder shared by ``COBS/decode(_:)`` and ``FrameDecoder``.
///
/// Feed it the non-zero bytes of one frame; each call appends at most one unstuffed byte. The zero that
/// ends a group is only appended once the next group starts, so the phantom zero of the last group is
/// never produced.
struct COBSUnstuffer: Hashable, Sendable {
    /// Data bytes still to come in the current group; 0 means the next byte is a code byte.
    private var remaining = 0
    /// True when the current group ends with an (implicit) zero.
    private var zeroPending = false

    /// True when the frame may end here (not inside a group).
    var isAtGroupEnd: Bool { remaining == 0 }

    /// Consumes one stuffed, non-zero byte.
    mutating func feed(_ byte: UInt8, into out: inout [UInt8]) {
        if remaining == 0 {
            if zeroPending { out.append(0) }
            remaining = Int(byte) - 1
            zeroPending = byte != COBS.maxCode
        } else {
            out.append(byte)
            remaining -= 1
        }
    }

    /// Forgets the current frame.
    mutating func reset() {
        remaining = 0
        zeroPending = false
    }
}
