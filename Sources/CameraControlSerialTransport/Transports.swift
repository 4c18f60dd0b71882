import CameraControlPosixTransport
import CameraControlTransport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opens the right transport for a device path.
public enum Transports {
    /// Opens `path` as a device link, claimed for this host.
    ///
    /// A local socket (`camctl serve --socket PATH`) gets a ``LocalSocketTransport``: the app attaches to the
    /// service that owns the device (docs/CAPTURE.md, "Apps attached to camctl serve"), not exclusively.
    /// Pseudo-terminals (`/dev/pts/N`, macOS `/dev/ttysN`, and symlinks to them, resolved first) get a
    /// ``PTYTransport``; anything else is opened as a serial port with libserialport
    /// (``SerialPortTransport``). A terminal that libserialport does not know falls back to termios. Either
    /// way the port is opened exclusively: while it is open, opening it again (here, in another process,
    /// or under another name for the same device) fails with ``TransportError/Code/inUse``, whose message
    /// reads `PATH is in use by PID n` where the holder can be known.
    ///
    /// - Throws: ``TransportError/Code/notFound`` when nothing is at the path (`no such file PATH`) or it
    ///   names no port, ``TransportError/Code/notATerminal`` when it is a regular file, a directory or
    ///   another kind of file, ``TransportError/Code/inUse``, ``TransportError/Code/openFailed``,
    ///   ``TransportError/Code/configurationFailed``.
    public static func open(
        path: String, baudRate: Int = SerialPortTransport.defaultBaudRate
    ) throws(TransportError) -> any EventLoopTransport {
        let resolved = resolvedPath(path)
        if case .success(.socket) = SystemCalls.live.fileType(resolved) {
            return try LocalSocketTransport(connectingTo: path)
        }
        try checkDevice(path: path, resolved: resolved)
        do {
            if isPseudoTerminalPath(resolved) {
                return try PTYTransport(path: resolved)
            }
            do {
                return try SerialPortTransport(portName: resolved, baudRate: baudRate)
            } catch  where error.code == .notFound {
                return try PTYTransport(path: resolved, baudRate: baudRate)
            }
        } catch  where error.code == .inUse && resolved != path && error.message.hasPrefix(resolved) {
            // Name the port as the caller did (a `--link` symlink, say), not its resolved device.
            var renamed = error
            renamed.message = path + error.message.dropFirst(resolved.count)
            throw renamed
        }
    }

    /// True when `path`, after resolving symlinks, names a pseudo-terminal subordinate.
    public static func isPseudoTerminal(path: String) -> Bool {
        isPseudoTerminalPath(resolvedPath(path))
    }

    /// Fails unless `resolved` (`path` with its symlinks resolved) is a character device.
    static func checkDevice(path: String, resolved: String, system: SystemCalls = .live) throws(TransportError) {
        let named = resolved == path ? path : "\(path) (\(resolved))"
        switch system.fileType(resolved) {
        case .success(.characterDevice):
            return
        case .success(.regular):
            throw TransportError(code: .notATerminal, message: "\(named) is a regular file, not a serial port or pseudo-terminal")
        case .success(.directory):
            throw TransportError(code: .notATerminal, message: "\(named) is a directory, not a serial port or pseudo-terminal")
        case .success(.other), .success(.socket):
            throw TransportError(
                code: .notATerminal, message: "\(named) is not a character device, so not a serial port or pseudo-terminal")
        case .failure(let error) where error.rawValue == ENOENT || error.rawValue == ENOTDIR:
            if resolved == path {
                throw TransportError(code: .notFound, message: "no such file \(path)", errno: error.rawValue)
            }
            throw TransportError(
                code: .notFound, message: "no such file \(resolved) (\(path) points there)", errno: error.rawValue)
        case .failure(let error):
            throw TransportError.openFailure(path: named, errno: error.rawValue)
        }
    }

    /// `path` with every symlink resolved, or `path` itself when it cannot be resolved.
    static func resolvedPath(_ path: String, system: SystemCalls = .live) -> String {
        if let resolved = system.realpath(path) {
            return resolved
        }
        // realpath fails when the link's target is gone (a simulator killed without removing its `--link`);
        // follow the links one by one so the error names the pty that is missing, not "no serial port".
        var current = path
        for _ in 0..<16 {
            guard let target = system.readlink(current) else { break }
            if target.hasPrefix("/") {
                current = target
            } else if let slash = current.lastIndex(of: "/") {
                current = String(current[...slash]) + target
            } else {
                current = target
            }
        }
        return current
    }

    static func isPseudoTerminalPath(_ path: String) -> Bool {
        if path.hasPrefix("/dev/pts/") { return true }
        #if canImport(Darwin)
            if path.hasPrefix("/dev/ttys") { return true }
        #endif
        return false
    }
}
