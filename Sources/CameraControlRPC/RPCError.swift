import CameraControlWire

/// The error of an RPC call: a status code, a message, the method, and what caused it.
///
/// Device-reported errors (`ERROR`, a non-OK `STREAM_END`) carry the device's status and message.
/// The host raises these itself:
///
/// | code | when |
/// |---|---|
/// | ``StatusCode/deadlineExceeded`` | the call's deadline passed (a `CANCEL` was sent) |
/// | ``StatusCode/cancelled`` | the call was cancelled by the host (task cancellation, ending a stream early, ``ConnectionCore/cancelCall(_:now:)``) |
/// | ``StatusCode/unavailable`` | the link died (no packet for 4 × the heartbeat interval), the transport closed, or the client was closed |
/// | ``StatusCode/internal`` | a response payload does not decode as the expected message (the cause is the ``WireError``) |
/// | ``StatusCode/resourceExhausted`` | a request does not fit the device's frame, or too many calls are in flight on the host |
/// | ``StatusCode/invalidArgument`` | a unary method was started as a stream or the other way round |
///
/// Two errors are equal when code, message and method are equal (the cause and ``isReportedByDevice``
/// are not compared).
public struct RPCError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The status code (gRPC's canonical codes; unknown codes are carried through).
    public var code: StatusCode
    /// A message for humans: the device's status message or the host's explanation.
    public var message: String
    /// The method of the failed call, when the error belongs to one.
    public var method: MethodID?
    /// The underlying error, e.g. the ``WireError`` of an undecodable payload or the transport's error.
    public var cause: (any Error)?
    /// True when the device answered with this status (an `ERROR`, a non-OK `STREAM_END`); false when the
    /// host raised it (a deadline, a lost link: the table above). An `UNAVAILABLE` the device sent is an
    /// answer, one the host raised is the lack of one.
    public var isReportedByDevice: Bool

    /// An error with a code and a message, optionally the method and the cause; `isReportedByDevice` when
    /// the device sent it.
    public init(
        code: StatusCode, message: String, method: MethodID? = nil, cause: (any Error)? = nil, isReportedByDevice: Bool = false
    ) {
        self.code = code
        self.message = message
        self.method = method
        self.cause = cause
        self.isReportedByDevice = isReportedByDevice
    }

    /// `UNAVAILABLE: link dead … (DeviceService/Ping (1.2))`.
    public var description: String {
        var text = "\(code.name)"
        if !message.isEmpty { text += ": \(message)" }
        if let method { text += " (\(method))" }
        if let cause { text += " [cause: \(cause)]" }
        return text
    }

    /// Equal when they name the same thing (see the type's documentation for what is compared).
    public static func == (lhs: RPCError, rhs: RPCError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.method == rhs.method
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(method)
    }
}
