import CameraControlRPC
import CameraControlTransport

/// Why a device session could not be opened or kept.
public struct DeviceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure; extensible.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// A short stable name.
        public var rawValue: String
        /// A code by name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The port could not be opened (see ``DeviceError/transportError``).
        public static let transport = Code(rawValue: "transport")
        /// The handshake call failed (see ``DeviceError/rpcError``).
        public static let handshakeFailed = Code(rawValue: "handshake-failed")
        /// Device and host speak different major versions.
        public static let versionMismatch = Code(rawValue: "version-mismatch")
        /// The handshake response is incomplete or inconsistent.
        public static let badHandshake = Code(rawValue: "bad-handshake")
        /// The session is closed.
        public static let closed = Code(rawValue: "closed")
        /// The name.
        public var description: String { rawValue }
    }

    /// What failed.
    public var code: Code
    /// A sentence for humans.
    public var message: String
    /// The RPC error underneath, if any.
    public var rpcError: RPCError?
    /// The transport error underneath, if any.
    public var transportError: TransportError?
    /// For a handshake that got no answer: the bytes that came back meanwhile, none of them in a frame of
    /// this protocol (nil when a frame did arrive, or nothing was counted). Bytes but no frame point at
    /// the port, not the device: a wrong line speed, or another program or protocol on it.
    public var unframedBytesHeard: UInt64?

    /// An error with a code and message.
    public init(
        _ code: Code, _ message: String, rpcError: RPCError? = nil, transportError: TransportError? = nil,
        unframedBytesHeard: UInt64? = nil
    ) {
        self.code = code
        self.message = message
        self.rpcError = rpcError
        self.transportError = transportError
        self.unframedBytesHeard = unframedBytesHeard
    }

    /// True for a handshake that no frame answered (``Code/handshakeFailed`` after a deadline or the
    /// link's end, not the device's refusal).
    public var isUnansweredHandshake: Bool {
        guard code == .handshakeFailed, let rpcError, !rpcError.isReportedByDevice else { return false }
        return rpcError.code == .deadlineExceeded || rpcError.code == .unavailable
    }

    /// True for a handshake answered `ERROR UNAVAILABLE`: the device is there and held for another host
    /// (`camctl serve` answers so while another app is in front and this one waits in the background). Not
    /// a refusal: opening again later gets the device once the other host lets it go.
    public var isDeviceBusy: Bool {
        guard code == .handshakeFailed, let rpcError else { return false }
        return rpcError.isReportedByDevice && rpcError.code == .unavailable
    }

    /// True for a handshake the device answered by refusing: another major version
    /// (``Code/versionMismatch``), or an error it answered (``Code/handshakeFailed`` with an ``rpcError``
    /// other than an unanswered or a busy one: `camctl serve`'s `ALREADY_EXISTS` for a second host in one
    /// process).
    /// Opening again at once gets the same answer; ``DeviceConnection`` waits longer and longer.
    public var isRefusedHandshake: Bool {
        code == .versionMismatch || (code == .handshakeFailed && rpcError != nil && !isUnansweredHandshake && !isDeviceBusy)
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
