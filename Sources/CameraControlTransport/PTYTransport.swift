import CSystemShim

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A transport over any terminal device configured with termios: pseudo-terminals (`/dev/pts/N`, the
/// simulator's link) and serial ports that libserialport does not know.
///
/// Opening puts the terminal in raw mode, 8N1, no flow control, modem lines ignored. A dedicated thread
/// `poll()`s the descriptor; when the peer closes (end of file, `EIO` or a hang-up, which is what a
/// pseudo-terminal reports when its other side is closed), ``receive()`` throws
/// ``TransportError/Code/closed`` after the bytes received before.
public final class PTYTransport: ByteTransport {
    /// The path that was opened.
    public let path: String
    /// Same as ``path``.
    public var name: String { path }
    private let link: FileDescriptorLink

    /// Opens the terminal at `path` (`O_RDWR | O_NOCTTY | O_NONBLOCK`) and configures it raw, 8N1.
    ///
    /// - Parameters:
    ///   - path: the terminal, e.g. `/dev/pts/3` (symlinks are followed by `open`).
    ///   - baudRate: a standard termios rate to set, or nil to leave the speed alone (a pseudo-terminal has
    ///     no speed).
    /// - Throws: ``TransportError/Code/notFound`` when the path does not exist,
    ///   ``TransportError/Code/openFailed`` when it cannot be opened, ``TransportError/Code/notATerminal``
    ///   when it is not a terminal, ``TransportError/Code/configurationFailed`` when termios refuses the
    ///   settings.
    public convenience init(path: String, baudRate: Int? = nil) throws(TransportError) {
        let descriptor = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        if descriptor < 0 {
            throw TransportError.openFailure(path: path, errno: errno)
        }
        try self.init(configuring: descriptor, path: path, baudRate: baudRate)
    }

    /// Takes ownership of an open terminal descriptor, configures it raw, 8N1, and starts reading.
    init(configuring descriptor: Int32, path: String, baudRate: Int?) throws(TransportError) {
        if isatty(descriptor) == 0 {
            systemClose(descriptor)
            throw TransportError(code: .notATerminal, message: "\(path) is not a terminal")
        }
        if let baudRate, baudRate <= 0 || baudRate > Int(UInt32.max) {
            systemClose(descriptor)
            throw TransportError(code: .configurationFailed, message: "invalid baud rate \(baudRate) for \(path)")
        }
        var status = cc_shim_configure_raw(descriptor, UInt32(baudRate ?? 0))
        if status == 0 {
            status = cc_shim_set_nonblocking(descriptor, 1)
        }
        if status != 0 {
            systemClose(descriptor)
            throw TransportError(code: .configurationFailed, message: "cannot configure \(path) raw 8N1", errno: status)
        }
        self.path = path
        self.link = try FileDescriptorLink(descriptor: descriptor, name: path) { systemClose($0) }
    }

    deinit {
        link.close()
    }

    /// Writes all of `bytes` to the terminal.
    ///
    /// - Throws: ``TransportError/Code/closed`` after ``close()`` or when the peer is gone,
    ///   ``TransportError/Code/io`` when the write fails.
    public func send(_ bytes: [UInt8]) async throws(TransportError) {
        try await link.send(bytes)
    }

    /// The next received bytes (see ``ByteTransport/receive()``).
    ///
    /// - Throws: ``TransportError/Code/closed`` at the end, ``TransportError/Code/io``,
    ///   ``TransportError/Code/cancelled``, ``TransportError/Code/concurrentReceive``.
    public func receive() async throws(TransportError) -> [UInt8] {
        try await link.receive()
    }

    /// Stops the reader and closes the descriptor.
    public func close() {
        link.close()
    }
}

/// A pseudo-terminal opened in-process: its master side and its subordinate side, both as transports.
///
/// Bytes sent on one end arrive at the other. Closing either end makes the other's ``ByteTransport/receive()``
/// throw ``TransportError/Code/closed``. Used by tests and by tools that stand in for a device.
public struct PseudoTerminalPair: Sendable {
    /// The master (controlling) side.
    public let master: PTYTransport
    /// The subordinate side, a terminal at ``subordinatePath``.
    public let subordinate: PTYTransport
    /// The subordinate's path, e.g. `/dev/pts/7`; other processes can open it as a terminal too.
    public let subordinatePath: String

    /// Opens a new pseudo-terminal pair, both sides raw.
    ///
    /// - Throws: ``TransportError/Code/openFailed`` when no pseudo-terminal can be allocated,
    ///   ``TransportError/Code/configurationFailed`` when termios refuses raw mode.
    public static func open() throws(TransportError) -> PseudoTerminalPair {
        var masterDescriptor: Int32 = -1
        let status = cc_shim_open_pty_master(&masterDescriptor)
        if status != 0 {
            throw TransportError(code: .openFailed, message: "cannot allocate a pseudo-terminal", errno: status)
        }
        var nameBuffer = [CChar](repeating: 0, count: 256)
        let nameStatus = cc_shim_pty_subordinate_name(masterDescriptor, &nameBuffer, nameBuffer.count)
        if nameStatus != 0 {
            systemClose(masterDescriptor)
            throw TransportError(code: .openFailed, message: "cannot name the pseudo-terminal", errno: nameStatus)
        }
        let path = String(decoding: nameBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // Open the subordinate first: a master without an open subordinate reports a hang-up.
        let subordinate: PTYTransport
        do {
            subordinate = try PTYTransport(path: path)
        } catch {
            systemClose(masterDescriptor)
            throw error
        }
        let master = try PTYTransport(configuring: masterDescriptor, path: "\(path) (master)", baudRate: nil)
        return PseudoTerminalPair(master: master, subordinate: subordinate, subordinatePath: path)
    }
}
