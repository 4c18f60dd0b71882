/// A service of the v1 schema, by its wire id.
///
/// The id is the 1-based position of the service in `Proto/cameracontrol/v1/services.proto`
/// (docs/PROTOCOL.md §10). The known services are generated as static constants in
/// `Generated/MethodIDs.swift`.
public struct ServiceID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The id as it travels in a `REQUEST` envelope.
    public var rawValue: UInt8
    /// Wraps a wire id; any value is representable, known or not.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The id in decimal.
    public var description: String { "service \(rawValue)" }
}

/// A method of the v1 schema: its service and method ids, its full name and whether it streams.
///
/// The method id is the 1-based position of the method in its service. The known methods are the
/// static constants in `Generated/MethodIDs.swift` (for example ``MethodID/deviceHandshake``).
public struct MethodID: Hashable, Sendable, CustomStringConvertible {
    /// The service's wire id.
    public var service: UInt8
    /// The method's wire id within the service.
    public var method: UInt8
    /// `Service/Method`, as in the schema (for logs and errors).
    public var name: String
    /// True for server-streaming methods.
    public var isServerStreaming: Bool

    /// A method by its ids; `name` and `isServerStreaming` describe it for logs and the RPC layer.
    public init(service: UInt8, method: UInt8, name: String, isServerStreaming: Bool) {
        self.service = service
        self.method = method
        self.name = name
        self.isServerStreaming = isServerStreaming
    }

    /// The v1 method with these ids, or nil when the schema has none.
    public static func known(service: UInt8, method: UInt8) -> MethodID? {
        allV1.first { $0.service == service && $0.method == method }
    }

    /// `Service/Method (s.m)`.
    public var description: String { "\(name) (\(service).\(method))" }

    /// Equal when they name the same thing (see the type's documentation for what is compared).
    public static func == (lhs: MethodID, rhs: MethodID) -> Bool {
        lhs.service == rhs.service && lhs.method == rhs.method
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(service)
        hasher.combine(method)
    }
}
