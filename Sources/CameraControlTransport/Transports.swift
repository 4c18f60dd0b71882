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
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        // realpath fails when the link's target is gone (a simulator killed without removing its `--link`);
        // follow the links one by one so the error names the pty that is missing, not "no serial port".
        var current = path
        for _ in 0..<16 {
            var buffer = [CChar](repeating: 0, count: 4096)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count > 0 else { break }
            let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
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

    static func isCharacterDevice(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFCHR
    }
}
