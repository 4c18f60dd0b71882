/// A message of the v1 schema (`Proto/cameracontrol/v1/*.proto`) as a Swift value.
///
/// Every conforming type in this module is generated from the schema by `scripts/generate-proto`
/// (`Generated/*.pb.swift`) and encoded and decoded in pure Swift (`Messages/ProtoRuntime.swift`); its
/// bytes are exactly Google protobuf's. Field names follow the schema with units spelled out
/// (`timestamp_us` → `timestampMicros`, `force_mn` → `forceMillinewtons`, `_ms` → `Millis`,
/// `_hz` → `Hertz`, `_um` → `Micrometres`); message-typed fields are optionals (protobuf tracks their
/// presence); every other field defaults to protobuf's zero value.
///
/// Decoding rules:
/// - unknown fields of every wire type are skipped (protobuf's rule, which lets a newer minor version add
///   fields);
/// - an enum value this version does not know decodes as the enum's zero case (`.unspecified`, or
///   `.off` for ``IndicatorMode``), never as a crash;
/// - strings are decoded as UTF-8 with invalid sequences repaired; a `NUL` inside a string is carried
///   both ways;
/// - repeated scalars are accepted packed and unpacked, the last occurrence of a scalar wins and
///   repeated occurrences of a message field are merged;
/// - input longer than ``WireFormat/maxFrameBytes`` is rejected before it is parsed, and so are
///   truncated input, bad wire types, varints longer than ten bytes and nesting deeper than 32.
public protocol WireMessage: Sendable, Hashable {
    /// The message with every field at its zero value.
    init()
    /// The message's protobuf encoding.
    func serializedBytes() -> [UInt8]
    /// Decodes the message's protobuf encoding.
    ///
    /// - Throws: ``WireError/Code/malformedMessage`` when the bytes do not parse as this message or are
    ///   longer than ``WireFormat/maxFrameBytes``.
    init(serializedBytes: [UInt8]) throws(WireError)
    /// Decodes the message's protobuf encoding from borrowed bytes, without copying them.
    ///
    /// - Throws: ``WireError/Code/malformedMessage`` as ``init(serializedBytes:)-([UInt8])``.
    init(serializedBytes: UnsafeRawBufferPointer) throws(WireError)
    /// The message's full protobuf name, e.g. `cameracontrol.v1.HandshakeRequest`.
    static var protoMessageName: String { get }
}

extension WireMessage {
    /// The Swift type's name (the generated types give their protobuf name instead).
    public static var protoMessageName: String { String(describing: Self.self) }

    /// For conforming types outside the schema: decodes a copy of `bytes` (the generated types read
    /// them in place).
    ///
    /// - Throws: ``WireError/Code/malformedMessage`` as ``init(serializedBytes:)-([UInt8])``.
    public init(serializedBytes bytes: UnsafeRawBufferPointer) throws(WireError) {
        try self.init(serializedBytes: [UInt8](bytes))
    }

    /// Decodes the message's protobuf encoding from part of an array, without copying it.
    ///
    /// - Throws: ``WireError/Code/malformedMessage`` as ``init(serializedBytes:)-([UInt8])``.
    @inlinable
    public init(serializedBytes bytes: ArraySlice<UInt8>) throws(WireError) {
        // Inlinable, so that a caller's concrete message type is decoded without generic dispatch.
        var decoded: Self?
        var failure: WireError?
        bytes.withUnsafeBytes { buffer in
            do throws(WireError) {
                decoded = try Self(serializedBytes: buffer)
            } catch {
                failure = error
            }
        }
        if let decoded {
            self = decoded
        } else {
            throw failure ?? WireError(.malformedMessage, "payload does not parse", byteCount: bytes.count)
        }
    }
}
