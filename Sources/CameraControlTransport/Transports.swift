#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opens the right transport for a device path.
public enum Transports {
    /// Opens `path` as a device link.
    ///
    /// Pseudo-terminals (`/dev/pts/N`, macOS `/dev/ttysN`, and symlinks to them, resolved first) get a
    /// ``PTYTransport``; anything else is opened as a serial port with libserialport
    /// (``SerialPortTransport``). A terminal that libserialport does not know falls back to termios.
    ///
    /// - Throws: ``TransportError/Code/notFound`` when the path does not exist or names no port,
    ///   ``TransportError/Code/openFailed``, ``TransportError/Code/notATerminal``,
    ///   ``TransportError/Code/configurationFailed``.
    public static func open(path: String, baudRate: Int = SerialPortTransport.defaultBaudRate) throws(TransportError) -> any ByteTransport {
        let resolved = resolvedPath(path)
        if isPseudoTerminalPath(resolved) {
            return try PTYTransport(path: resolved)
        }
        do {
            return try SerialPortTransport(portName: resolved, baudRate: baudRate)
        } catch  where error.code == .notFound && isCharacterDevice(resolved) {
            return try PTYTransport(path: resolved, baudRate: baudRate)
        }
    }

    /// True when `path`, after resolving symlinks, names a pseudo-terminal subordinate.
    public static func isPseudoTerminal(path: String) -> Bool {
        isPseudoTerminalPath(resolvedPath(path))
    }

    /// `path` with every symlink resolved, or `path` itself when it cannot be resolved.
    static func resolvedPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func isPseudoTerminalPath(_ path: String) -> Bool {
        if path.hasPrefix("/dev/pts/") { return true }
        #if canImport(Darwin)
            if path.hasPrefix("/dev/ttys") { return true }
        #endif
        return false
    }

    static func isCharacterDevice(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFCHR
    }
}
