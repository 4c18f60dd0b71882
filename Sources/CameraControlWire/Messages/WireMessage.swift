import CameraControlProtoC

/// A message of the v1 schema (`Proto/cameracontrol/v1/*.proto`) as a Swift value.
///
/// Every conforming type in this module is encoded and decoded by protoc-c's generated code for the
/// same message, so its bytes are exactly protobuf's. Field names follow the schema with units spelled
/// out (`timestamp_us` → `timestampMicros`, `force_mn` → `forceMillinewtons`, `_ms` → `Millis`,
/// `_hz` → `Hertz`, `_um` → `Micrometres`); message-typed fields are optionals (protobuf tracks their
/// presence); every other field defaults to protobuf's zero value.
///
/// Decoding rules:
/// - unknown fields are skipped (protobuf's rule, which lets a newer minor version add fields);
/// - an enum value this version does not know decodes as the enum's zero case (`.unspecified`, or
///   `.off` for ``IndicatorMode``), never as a crash;
/// - strings are decoded as UTF-8 with invalid sequences repaired, and end at the first `NUL`
///   (protoc-c uses C strings, so a `NUL` inside a string is not carried either way);
/// - input longer than ``WireFormat/maxFrameBytes`` is rejected before it is parsed.
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
    /// The message's full protobuf name, e.g. `cameracontrol.v1.HandshakeRequest`.
    static var protoMessageName: String { get }
}

extension WireMessage {
    /// The Swift type's name (conforming types of this module give their protobuf name instead).
    public static var protoMessageName: String { String(describing: Self.self) }
}

/// Memory for the C structs of one encoding; everything is freed when the arena goes away.
final class CArena {
    private var allocations: [UnsafeMutableRawPointer] = []

    deinit {
        for allocation in allocations { allocation.deallocate() }
    }

    /// A C message struct initialised by protoc-c's `*_init` function.
    func message<T>(_ initialize: (UnsafeMutablePointer<T>) -> Void) -> UnsafeMutablePointer<T> {
        let pointer = UnsafeMutablePointer<T>.allocate(capacity: 1)
        allocations.append(UnsafeMutableRawPointer(pointer))
        initialize(pointer)
        return pointer
    }

    /// A NUL-terminated copy of `string` (truncated at its first NUL by C's rules).
    func string(_ string: String) -> UnsafeMutablePointer<CChar> {
        let utf8 = Array(string.utf8)
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: utf8.count + 1)
        allocations.append(UnsafeMutableRawPointer(pointer))
        for (index, byte) in utf8.enumerated() { pointer[index] = CChar(bitPattern: byte) }
        pointer[utf8.count] = 0
        return pointer
    }

    /// A C array holding `values`, or nil when empty.
    func array<T>(_ values: [T]) -> UnsafeMutablePointer<T>? {
        guard !values.isEmpty else { return nil }
        let pointer = UnsafeMutablePointer<T>.allocate(capacity: values.count)
        allocations.append(UnsafeMutableRawPointer(pointer))
        pointer.initialize(from: values, count: values.count)
        return pointer
    }

    /// protobuf-c's view of `bytes`.
    func bytes(_ bytes: [UInt8]) -> ProtobufCBinaryData {
        ProtobufCBinaryData(len: bytes.count, data: array(bytes))
    }
}

/// How a Swift message maps to its protoc-c struct and functions.
protocol CBackedMessage: WireMessage {
    /// The protoc-c struct.
    associatedtype CMessage
    /// `*_init`.
    static func cInit(_ message: UnsafeMutablePointer<CMessage>)
    /// `*_get_packed_size`.
    static func cPackedSize(_ message: UnsafePointer<CMessage>) -> Int
    /// `*_pack`.
    static func cPack(_ message: UnsafePointer<CMessage>, _ out: UnsafeMutablePointer<UInt8>) -> Int
    /// `*_unpack` with protobuf-c's default allocator.
    static func cUnpack(_ count: Int, _ data: UnsafePointer<UInt8>?) -> UnsafeMutablePointer<CMessage>?
    /// `*_free_unpacked` with protobuf-c's default allocator.
    static func cFree(_ message: UnsafeMutablePointer<CMessage>)
    /// Writes this value's fields into an initialised struct; nested data lives in `arena`.
    func fill(_ message: inout CMessage, arena: CArena)
    /// Reads a struct unpacked by protobuf-c.
    init(c message: CMessage)
}

extension CBackedMessage {
    /// A freshly initialised C struct holding this value, valid while `arena` lives.
    func cMessage(in arena: CArena) -> UnsafeMutablePointer<CMessage> {
        let pointer = arena.message(Self.cInit)
        fill(&pointer.pointee, arena: arena)
        return pointer
    }

    /// The protobuf encoding, by protoc-c.
    func packed() -> [UInt8] {
        let arena = CArena()
        return withExtendedLifetime(arena) {
            let message = UnsafePointer(cMessage(in: arena))
            let size = Self.cPackedSize(message)
            guard size > 0 else { return [] }
            return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
                count = Self.cPack(message, buffer.baseAddress!)
            }
        }
    }

    /// Decodes with protoc-c.
    static func unpacked(_ bytes: [UInt8]) throws(WireError) -> Self {
        guard bytes.count <= WireFormat.maxFrameBytes else {
            throw WireError(
                .malformedMessage, "\(protoMessageName) of \(bytes.count) bytes exceeds \(WireFormat.maxFrameBytes)",
                byteCount: bytes.count)
        }
        let pointer = bytes.withUnsafeBufferPointer { buffer in
            cUnpack(buffer.count, buffer.baseAddress)
        }
        guard let pointer else {
            throw WireError(.malformedMessage, "payload does not parse as \(protoMessageName)", byteCount: bytes.count)
        }
        defer { cFree(pointer) }
        return Self(c: pointer.pointee)
    }
}

/// Conversions between protoc-c's C values and Swift's.
enum CValue {
    /// A C string as Swift (empty for NULL; invalid UTF-8 repaired).
    static func string(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        return String(cString: pointer)
    }

    /// protobuf-c bytes as an array.
    static func bytes(_ data: ProtobufCBinaryData) -> [UInt8] {
        guard let base = data.data, data.len > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: base, count: data.len))
    }

    /// A repeated field as an array.
    static func array<T, R>(_ pointer: UnsafeMutablePointer<T>?, _ count: Int, _ transform: (T) -> R) -> [R] {
        guard let pointer, count > 0 else { return [] }
        return UnsafeBufferPointer(start: pointer, count: count).map(transform)
    }

    /// A protobuf-c boolean.
    static func bool(_ value: protobuf_c_boolean) -> Bool { value != 0 }

    /// A Swift Bool as protobuf-c's.
    static func cBool(_ value: Bool) -> protobuf_c_boolean { value ? 1 : 0 }
}
