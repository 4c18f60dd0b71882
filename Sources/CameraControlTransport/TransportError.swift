#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An error of a byte transport: what went wrong (``code``), the OS error number when there was one, and
/// a message for humans.
public struct TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is. Extensible: compare against the static constants.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// A short lower-case identifier (`closed`, `open-failed`, ...).
        public var rawValue: String
        /// Wraps an identifier.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The transport is closed: by ``ByteTransport/close()``, or because the peer went away
        /// (end of file, hang-up, `EIO` on a pseudo-terminal, the other end of an in-memory pair closed).
        public static let closed = Code(rawValue: "closed")
        /// The path does not exist (no such file or no such serial port).
        public static let notFound = Code(rawValue: "not-found")
        /// The device the path named is gone and cannot come back under that path: a pseudo-terminal whose
        /// other side closed (its number goes to the next pseudo-terminal opened, another program's). A host
        /// stops reconnecting on it.
        public static let gone = Code(rawValue: "gone")
        /// Opening the port or terminal failed for another reason (permissions, busy, ...); see `errno`.
        public static let openFailed = Code(rawValue: "open-failed")
        /// The path is not a terminal, so termios cannot configure it (a regular file, a directory, ...).
        public static let notATerminal = Code(rawValue: "not-a-terminal")
        /// Another open transport, this process or another program holds the port (a lock file, `flock`,
        /// or exclusive mode); ``TransportError/holderPID`` names the holder when it can be known.
        public static let inUse = Code(rawValue: "in-use")
        /// The port opened but could not be configured (baud rate, 8N1, raw mode).
        public static let configurationFailed = Code(rawValue: "configuration-failed")
        /// A read or write failed.
        public static let io = Code(rawValue: "io")
        /// The waiting task was cancelled; the transport itself stays usable.
        public static let cancelled = Code(rawValue: "cancelled")
        /// `receive()` was called while another `receive()` on the same transport was still waiting.
        public static let concurrentReceive = Code(rawValue: "concurrent-receive")

        /// Same as ``rawValue``.
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// The OS error number (`errno`) behind the failure, when there is one.
    public var errno: Int32?
    /// What happened, for humans.
    public var message: String
    /// For ``Code/inUse``: the process that holds the port, when it can be known.
    public var holderPID: Int32?

    /// An error with a code, a message and optionally the `errno` behind it and the PID of the port's holder.
    public init(code: Code, message: String, errno: Int32? = nil, holderPID: Int32? = nil) {
        self.code = code
        self.message = message
        self.errno = errno
        self.holderPID = holderPID
    }

    /// `code: message (strerror)`.
    public var description: String {
        if let errno {
            return "\(code): \(message) (\(Self.describe(errno: errno)))"
        }
        return "\(code): \(message)"
    }

    /// The C library's text for an `errno` value.
    package static func describe(errno value: Int32) -> String {
        guard let text = strerror(value) else { return "errno \(value)" }
        return String(cString: text) + " [errno \(value)]"
    }

    /// An error for a failed `open` of `path`, mapping `ENOENT`/`ENXIO`/`ENODEV` to ``Code/notFound``.
    package static func openFailure(path: String, errno value: Int32) -> TransportError {
        let code: Code = (value == ENOENT || value == ENXIO || value == ENODEV) ? .notFound : .openFailed
        return TransportError(code: code, message: "cannot open \(path)", errno: value)
    }
}
