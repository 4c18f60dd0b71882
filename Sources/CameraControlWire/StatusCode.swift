/// gRPC's canonical status codes, as one byte on the wire (docs/PROTOCOL.md §5).
///
/// Codes the schema does not name are carried through unchanged (``isKnown`` is false).
public struct StatusCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code's wire value.
    public var rawValue: UInt8
    /// Wraps a wire value.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Success.
    public static let ok = StatusCode(rawValue: 0)
    /// The call was cancelled.
    public static let cancelled = StatusCode(rawValue: 1)
    /// Unknown error.
    public static let unknown = StatusCode(rawValue: 2)
    /// The request does not parse or its values are invalid.
    public static let invalidArgument = StatusCode(rawValue: 3)
    /// The host's deadline passed before the call ended.
    public static let deadlineExceeded = StatusCode(rawValue: 4)
    /// Not found.
    public static let notFound = StatusCode(rawValue: 5)
    /// A call with this id is already in flight.
    public static let alreadyExists = StatusCode(rawValue: 6)
    /// Permission denied.
    public static let permissionDenied = StatusCode(rawValue: 7)
    /// Too many calls in flight, or a response too large for a frame.
    public static let resourceExhausted = StatusCode(rawValue: 8)
    /// The call is not allowed in the current state (e.g. before the handshake).
    public static let failedPrecondition = StatusCode(rawValue: 9)
    /// Aborted.
    public static let aborted = StatusCode(rawValue: 10)
    /// Out of range.
    public static let outOfRange = StatusCode(rawValue: 11)
    /// Unknown service, method or packet type, or a method this device does not implement.
    public static let unimplemented = StatusCode(rawValue: 12)
    /// An internal error of the peer.
    public static let `internal` = StatusCode(rawValue: 13)
    /// The link is gone (port closed, heartbeat timeout).
    public static let unavailable = StatusCode(rawValue: 14)
    /// Unrecoverable data loss.
    public static let dataLoss = StatusCode(rawValue: 15)
    /// Unauthenticated.
    public static let unauthenticated = StatusCode(rawValue: 16)

    private static let names = [
        "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
        "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
        "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
    ]

    /// True for the codes 0–16 that gRPC defines.
    public var isKnown: Bool { Int(rawValue) < Self.names.count }

    /// gRPC's name for the code (`UNIMPLEMENTED`), or `CODE_<n>` for an unknown one.
    public var name: String { isKnown ? Self.names[Int(rawValue)] : "CODE_\(rawValue)" }

    /// Same as ``name``.
    public var description: String { name }
}
