/// A method of the v1 schema by its wire ids: the two id bytes of a `REQUEST` (docs/PROTOCOL.md §10).
///
/// The service id is the 1-based position of the service in `Proto/cameracontrol/v1/services.proto`, the
/// method id the 1-based position of the method in its service. Any pair is representable, known or not;
/// ``name``, ``isServerStreaming`` and ``info`` look the pair up in the schema's table. The known methods
/// are the static constants in `Generated/MethodIDs.swift` (for example ``MethodID/deviceHandshake``).
public struct MethodID: Hashable, Sendable, CustomStringConvertible {
    /// The service's wire id.
    public var service: UInt8
    /// The method's wire id within the service.
    public var method: UInt8

    /// A method by its ids (inlinable, as the generated constants are: ``MethodID/deviceHandshake`` is two
    /// numbers where it is used, not a global read through its lazy initialiser).
    @inlinable public init(service: UInt8, method: UInt8) {
        self.service = service
        self.method = method
    }

    /// The method's schema entry (names, message types, streaming), or nil when the schema has none.
    public var info: MethodInfo? { MethodInfo.known(service: service, method: method) }

    /// The v1 method with these ids, or nil when the schema has none.
    public static func known(service: UInt8, method: UInt8) -> MethodID? {
        MethodInfo.known(service: service, method: method)?.id
    }

    /// `Service/Method` as in the schema (for logs and errors), or `s.m` for an unknown method.
    public var name: String { info?.name ?? "\(service).\(method)" }

    /// True for server-streaming methods (false for unknown ones).
    public var isServerStreaming: Bool { info?.isServerStreaming ?? false }

    /// `Service/Method (s.m)`, or `s.m` for an unknown method.
    public var description: String {
        guard let info else { return "\(service).\(method)" }
        return "\(info.name) (\(service).\(method))"
    }
}

/// One method of the schema with its message types (generated: ``MethodInfo/allV1``), for tools that
/// describe or call methods by name.
public struct MethodInfo: Sendable {
    /// The wire ids.
    public let id: MethodID
    /// The service's schema name, e.g. `DeviceService`.
    public let serviceName: String
    /// The method's schema name, e.g. `Handshake`.
    public let methodName: String
    /// The request's Swift type.
    public let requestType: any WireMessage.Type
    /// The response's (or each stream message's) Swift type.
    public let responseType: any WireMessage.Type
    /// True for server-streaming methods.
    public let isServerStreaming: Bool

    /// `Service/Method`.
    public var name: String { "\(serviceName)/\(methodName)" }
    /// The request's full protobuf name, e.g. `cameracontrol.v1.HandshakeRequest`.
    public var requestMessageName: String { requestType.protoMessageName }
    /// The response's full protobuf name.
    public var responseMessageName: String { responseType.protoMessageName }
}
