/// The protobuf wire format for the generated message types (`Generated/*.pb.swift`).
///
/// A small runtime: a writer that fills a buffer sized in advance, and a reader over borrowed bytes
/// that never copies the payload (only string and bytes fields copy their own contents). The rules
/// follow Google's protobuf for proto3: zero scalars are not written, fields are written in field
/// number order, repeated scalars are packed; decoding accepts packed and unpacked repeated scalars,
/// lets the last occurrence of a scalar win, merges repeated occurrences of an embedded message and
/// skips unknown fields of every wire type.

/// The protobuf wire types (the low three bits of a field key).
enum ProtoWireType {
    /// int32, int64, uint32, uint64, sint32, sint64, bool, enum.
    static let varint: UInt8 = 0
    /// fixed64, sfixed64, double.
    static let fixed64: UInt8 = 1
    /// string, bytes, embedded messages, packed repeated fields.
    static let lengthDelimited: UInt8 = 2
    /// A deprecated group's start (skipped).
    static let startGroup: UInt8 = 3
    /// A deprecated group's end.
    static let endGroup: UInt8 = 4
    /// fixed32, sfixed32, float.
    static let fixed32: UInt8 = 5
}

/// How the generated code encodes, sizes and decodes a message.
protocol ProtoCodable: WireMessage {
    /// The encoding's size in bytes.
    func encodedSize() -> Int
    /// Writes the encoding (exactly ``encodedSize()`` bytes).
    func encode(to writer: inout ProtoWriter)
    /// Reads fields until the reader's end, merging them into `self`.
    mutating func merge(from reader: inout ProtoReader) throws(WireError)
}

extension ProtoCodable {
    /// The protobuf encoding in one exactly sized array.
    func encodedBytes() -> [UInt8] {
        let size = encodedSize()
        guard size > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            var writer = ProtoWriter(buffer.baseAddress!)
            encode(to: &writer)
            precondition(writer.offset == size, "\(Self.protoMessageName): size \(size), wrote \(writer.offset)")
            count = size
        }
    }

    /// Decodes `buffer` (at most ``WireFormat/maxFrameBytes``), reading it in place.
    static func decoding(_ buffer: UnsafeRawBufferPointer) -> Result<Self, WireError> {
        guard buffer.count <= WireFormat.maxFrameBytes else {
            return .failure(
                WireError(
                    .malformedMessage, "\(protoMessageName) of \(buffer.count) bytes exceeds \(WireFormat.maxFrameBytes)",
                    byteCount: buffer.count))
        }
        var reader = ProtoReader(buffer, depth: 0)
        var message = Self()
        do {
            try message.merge(from: &reader)
        } catch {
            return .failure(
                WireError(
                    .malformedMessage, "payload does not parse as \(protoMessageName): \(error.message)",
                    byteCount: buffer.count))
        }
        return .success(message)
    }

    /// Decodes an array's bytes in place.
    static func decoding(_ bytes: [UInt8]) throws(WireError) -> Self {
        try bytes.withUnsafeBytes { decoding($0) }.get()
    }
}

/// Sizes of encoded values.
enum ProtoSize {
    /// Bytes of `value` as a varint (1–10).
    @inline(__always)
    static func varint(_ value: UInt64) -> Int {
        // 1 + floor(bit width / 7), with 0 taking one byte.
        let bits = 64 - (value | 1).leadingZeroBitCount
        return (bits + 6) / 7
    }

    /// Bytes of a length-delimited field's length prefix and contents.
    @inline(__always)
    static func lengthDelimited(_ count: Int) -> Int { varint(UInt64(count)) + count }
}

/// Writes protobuf values into a buffer sized by ``ProtoCodable/encodedSize()``.
struct ProtoWriter {
    private let base: UnsafeMutablePointer<UInt8>
    /// Bytes written so far.
    private(set) var offset = 0

    /// A writer at the start of `base`.
    init(_ base: UnsafeMutablePointer<UInt8>) { self.base = base }

    /// Writes one varint.
    @inline(__always)
    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            base[offset] = UInt8(truncatingIfNeeded: rest) | 0x80
            offset += 1
            rest >>= 7
        }
        base[offset] = UInt8(truncatingIfNeeded: rest)
        offset += 1
    }

    /// Writes four bytes, little-endian.
    @inline(__always)
    mutating func fixed32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) {
            base[offset] = UInt8(truncatingIfNeeded: value >> UInt32(shift))
            offset += 1
        }
    }

    /// Writes eight bytes, little-endian.
    @inline(__always)
    mutating func fixed64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) {
            base[offset] = UInt8(truncatingIfNeeded: value >> UInt64(shift))
            offset += 1
        }
    }

    /// Writes a length prefix and `bytes`.
    mutating func lengthDelimited(_ bytes: UnsafeBufferPointer<UInt8>) {
        varint(UInt64(bytes.count))
        if let source = bytes.baseAddress, !bytes.isEmpty {
            (base + offset).initialize(from: source, count: bytes.count)
        }
        offset += bytes.count
    }

    /// Writes a length prefix and `bytes`.
    mutating func lengthDelimited(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { lengthDelimited($0) }
    }

    /// Writes a string's UTF-8 with its length prefix.
    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { lengthDelimited($0) }
    }

    /// Writes an embedded message with its length prefix.
    mutating func message<M: ProtoCodable>(_ value: M) {
        varint(UInt64(value.encodedSize()))
        value.encode(to: &self)
    }
}

/// Zigzag mapping of signed integers (sint32, sint64).
enum ProtoZigZag {
    /// `n` → `(n << 1) ^ (n >> 63)`.
    @inline(__always)
    static func encode(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }
    /// The inverse of ``encode(_:)``.
    @inline(__always)
    static func decode(_ value: UInt64) -> Int64 { Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1) }
}

/// Reads protobuf values from borrowed bytes; every read is bounds-checked and throws on truncation.
struct ProtoReader {
    /// The deepest nesting of embedded messages and groups a reader accepts.
    static let maxDepth = 32

    private let buffer: UnsafeRawBufferPointer
    private var index = 0
    /// How many embedded messages or groups enclose this reader.
    let depth: Int

    /// A reader over `buffer` at nesting `depth`.
    init(_ buffer: UnsafeRawBufferPointer, depth: Int) {
        self.buffer = buffer
        self.depth = depth
    }

    /// True when every byte was read.
    var isAtEnd: Bool { index >= buffer.count }

    private func failure(_ what: String) -> WireError {
        WireError(.malformedMessage, "\(what) at byte \(index)")
    }

    /// The next field's number and wire type, or nil at the end.
    @inline(__always)
    mutating func nextField() throws(WireError) -> (number: UInt32, wireType: UInt8)? {
        guard index < buffer.count else { return nil }
        let key = try varint()
        let number = key >> 3
        guard number > 0, number <= 0x1FFF_FFFF else { throw failure("field number \(number)") }
        return (UInt32(number), UInt8(truncatingIfNeeded: key & 7))
    }

    /// One varint of at most ten bytes.
    @inline(__always)
    mutating func varint() throws(WireError) -> UInt64 {
        if index < buffer.count, buffer[index] < 0x80 {
            defer { index += 1 }
            return UInt64(buffer[index])
        }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < buffer.count {
            let byte = buffer[index]
            index += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
            if shift >= 70 { throw failure("varint longer than 10 bytes") }
        }
        throw failure("truncated varint")
    }

    /// Four bytes, little-endian.
    mutating func fixed32() throws(WireError) -> UInt32 {
        guard buffer.count - index >= 4 else { throw failure("truncated fixed32") }
        defer { index += 4 }
        return UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: index, as: UInt32.self))
    }

    /// Eight bytes, little-endian.
    mutating func fixed64() throws(WireError) -> UInt64 {
        guard buffer.count - index >= 8 else { throw failure("truncated fixed64") }
        defer { index += 8 }
        return UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: index, as: UInt64.self))
    }

    /// A length-delimited value's bytes, borrowed.
    mutating func lengthDelimited() throws(WireError) -> UnsafeRawBufferPointer {
        let length = try varint()
        guard length <= UInt64(buffer.count - index) else { throw failure("length \(length) past the end") }
        let start = index
        index += Int(length)
        return UnsafeRawBufferPointer(rebasing: buffer[start..<index])
    }

    /// A string; invalid UTF-8 is repaired, NUL is carried.
    mutating func string() throws(WireError) -> String {
        String(decoding: try lengthDelimited(), as: UTF8.self)
    }

    /// A bytes value.
    mutating func bytes() throws(WireError) -> [UInt8] {
        [UInt8](try lengthDelimited())
    }

    /// A reader over a length-delimited value one level deeper (an embedded message or a packed field).
    mutating func nested() throws(WireError) -> ProtoReader {
        guard depth < Self.maxDepth else { throw failure("nesting deeper than \(Self.maxDepth)") }
        return ProtoReader(try lengthDelimited(), depth: depth + 1)
    }

    /// Skips a field of any wire type whose key was just read.
    mutating func skip(number: UInt32, wireType: UInt8) throws(WireError) {
        switch wireType {
        case ProtoWireType.varint: _ = try varint()
        case ProtoWireType.fixed64: _ = try fixed64()
        case ProtoWireType.lengthDelimited: _ = try lengthDelimited()
        case ProtoWireType.fixed32: _ = try fixed32()
        case ProtoWireType.startGroup: try skipGroup(number: number, depth: depth + 1)
        case ProtoWireType.endGroup: throw failure("end of group \(number) without a start")
        default: throw failure("wire type \(wireType)")
        }
    }

    private mutating func skipGroup(number: UInt32, depth: Int) throws(WireError) {
        guard depth <= Self.maxDepth else { throw failure("nesting deeper than \(Self.maxDepth)") }
        while let field = try nextField() {
            switch field.wireType {
            case ProtoWireType.endGroup:
                guard field.number == number else { throw failure("group \(number) ended by \(field.number)") }
                return
            case ProtoWireType.startGroup: try skipGroup(number: field.number, depth: depth + 1)
            default: try skip(number: field.number, wireType: field.wireType)
            }
        }
        throw failure("group \(number) not ended")
    }
}
