import CSystemShim
import CameraControlTransport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A transport over any terminal device configured with termios: pseudo-terminals (`/dev/pts/N`, the
/// simulator's link) and serial ports that libserialport does not know.
///
/// Opening claims the terminal for this transport (see ``init(path:baudRate:exclusive:)``) and puts it in raw mode, 8N1, no flow control, modem lines ignored. A dedicated thread
/// `poll()`s the descriptor; when the peer closes (end of file, `EIO` or a hang-up, which is what a
/// pseudo-terminal reports when its other side is closed), ``receive()`` throws
/// ``TransportError/Code/closed`` after the bytes received before.
public final class PTYTransport: EventLoopTransport {
    /// The path that was opened.
    public let path: String
    /// Same as ``path``.
    public var name: String { path }
    private let link: FileDescriptorLink

    /// Opens the terminal at `path` (`O_RDWR | O_NOCTTY | O_NONBLOCK`), claims it and configures it raw, 8N1.
    ///
    /// With `exclusive` (the default, for a host opening its port) the terminal is claimed before it is
    /// configured: a UUCP lock file, `flock` and `TIOCEXCL` (see the package's `PortLock`), so a second
    /// open of the same device, under any name, fails with ``TransportError/Code/inUse``. The claim ends
    /// with ``close()`` (or with the process). `exclusive: false` opens without claiming (a stand-in
    /// device's side of a terminal).
    ///
    /// - Parameters:
    ///   - path: the terminal, e.g. `/dev/pts/3` (symlinks are followed by `open`).
    ///   - baudRate: a standard termios rate to set, or nil to leave the speed alone (a pseudo-terminal has
    ///     no speed).
    ///   - exclusive: claim the terminal for this transport.
    /// - Throws: ``TransportError/Code/notFound`` when the path does not exist,
    ///   ``TransportError/Code/inUse`` when another transport or program holds it (the message names its
    ///   PID where that can be known), ``TransportError/Code/openFailed`` when it cannot be opened,
    ///   ``TransportError/Code/notATerminal`` when it is not a terminal,
    ///   ``TransportError/Code/configurationFailed`` when termios refuses the settings.
    public convenience init(path: String, baudRate: Int? = nil, exclusive: Bool = true) throws(TransportError) {
        try self.init(path: path, baudRate: baudRate, exclusive: exclusive, lockOptions: .standard, system: .live)
    }

    /// ``init(path:baudRate:exclusive:)`` with the lock places and the OS calls given (for tests).
    package convenience init(
        path: String, baudRate: Int?, exclusive: Bool, lockOptions: PortLock.Options, system: SystemCalls
    ) throws(TransportError) {
        let devicePath = system.realpath(path) ?? path
        if exclusive {
            try PortLock.checkLockFile(devicePath: devicePath, portName: path, options: lockOptions, system: system)
        }
        var descriptor: Int32 = -1
        openLoop: while true {
            switch system.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0) {
            case .success(let opened):
                descriptor = opened
                break openLoop
            case .failure(let error) where error.rawValue == EINTR:
                continue
            case .failure(let error) where error.rawValue == EBUSY:
                throw PortLock.busyError(devicePath: devicePath, portName: path, options: lockOptions, system: system)
            case .failure(let error):
                throw TransportError.openFailure(path: path, errno: error.rawValue)
            }
        }
        if !system.isTerminal(descriptor) {
            _ = system.close(descriptor)
            throw TransportError(code: .notATerminal, message: "\(path) is not a terminal")
        }
        var lock: PortLock?
        if exclusive {
            do {
                lock = try PortLock.acquire(
                    descriptor: descriptor, devicePath: devicePath, portName: path, options: lockOptions, system: system)
            } catch {
                _ = system.close(descriptor)
                throw error
            }
        }
        try self.init(configuring: descriptor, path: path, baudRate: baudRate, lock: lock, system: system)
    }

    /// Takes ownership of an open terminal descriptor (and its lock), configures it raw, 8N1, and starts
    /// reading.
    init(
        configuring descriptor: Int32, path: String, baudRate: Int?, lock: PortLock? = nil, system: SystemCalls = .live
    )
        throws(TransportError)
    {
        func fail(_ error: TransportError) -> TransportError {
            lock?.release()
            _ = system.close(descriptor)
            return error
        }
        if !system.isTerminal(descriptor) {
            throw fail(TransportError(code: .notATerminal, message: "\(path) is not a terminal"))
        }
        if let baudRate, baudRate <= 0 || baudRate > Int(UInt32.max) {
            throw fail(TransportError(code: .configurationFailed, message: "invalid baud rate \(baudRate) for \(path)"))
        }
        var status = system.configureRaw(descriptor, UInt32(baudRate ?? 0))
        if case .success = status {
            status = system.setNonblocking(descriptor)
        }
        if case .failure(let error) = status {
            throw fail(
                TransportError(code: .configurationFailed, message: "cannot configure \(path) raw 8N1", errno: error.rawValue))
        }
        self.path = path
        self.link = FileDescriptorLink(
            descriptor: descriptor, name: path, system: system, onClose: { lock?.release() },
            release: { _ = system.close($0) })
    }

    deinit {
        link.close()
    }

    /// Hands `bytes` to the terminal's loop (see ``ByteTransport/send(_:)``).
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

    /// Runs the terminal on an event loop for `delegate` (see ``EventLoopTransport/startEventLoop(delegate:on:)``):
    /// the loop's thread (`loop`'s, a ``PollEventLoop`` shared with other links and with actors, or one of the
    /// terminal's own) hands each read to the delegate in place and sleeps in `poll()` until the next byte or
    /// the delegate's timer.
    ///
    /// - Returns: nil after ``receive()`` or ``send(_:)`` was called, a loop was started already, or the terminal is closed.
    public func startEventLoop(delegate: any EventLoopDelegate, on loop: (any EventLoop)?) -> (any EventLoopControl)? {
        link.startEventLoop(delegate: delegate, on: loop)
    }

    /// Ends the terminal's loop and closes the descriptor.
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
            _ = SystemCalls.live.close(masterDescriptor)
            throw TransportError(code: .openFailed, message: "cannot name the pseudo-terminal", errno: nameStatus)
        }
        let path = String(decoding: nameBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // Open the subordinate first: a master without an open subordinate reports a hang-up. It is the
        // stand-in device's side, so it does not claim the terminal (a host may open `subordinatePath`).
        let subordinate: PTYTransport
        do {
            subordinate = try PTYTransport(path: path, exclusive: false)
        } catch {
            _ = SystemCalls.live.close(masterDescriptor)
            throw error
        }
        let master = try PTYTransport(configuring: masterDescriptor, path: "\(path) (master)", baudRate: nil)
        return PseudoTerminalPair(master: master, subordinate: subordinate, subordinatePath: path)
    }
}
