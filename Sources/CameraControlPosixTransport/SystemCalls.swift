import CSystemShim

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An OS error number (`errno`) returned by a ``SystemCalls`` function.
package struct SystemErrno: Error, Hashable, Sendable {
    /// The `errno` value.
    package var rawValue: Int32

    /// Wraps an `errno` value.
    package init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// The current thread's `errno`.
    static var current: SystemErrno { SystemErrno(errno) }
}

/// What `stat(2)` says a path is.
package enum SystemFileType: Hashable, Sendable {
    /// A regular file.
    case regular
    /// A directory.
    case directory
    /// A character device (a terminal, a serial port).
    case characterDevice
    /// A local (Unix-domain) socket: `camctl serve`'s, for the apps that attach to it.
    case socket
    /// Anything else (a FIFO, a block device).
    case other
}

/// Every OS call the posix transports make, as function values: ``live`` calls the C library, tests put
/// scripted functions in their place (as swift-system does in its `Syscalls.swift` / `Mocking.swift`).
///
/// A function returns its result or the `errno` it failed with; none of them retries `EINTR` itself, so
/// the callers' retry loops can be tested.
package struct SystemCalls: Sendable {
    /// `open(2)`: a descriptor.
    package var open: @Sendable (_ path: String, _ flags: Int32, _ mode: UInt32) -> Result<Int32, SystemErrno>
    /// `close(2)`.
    package var close: @Sendable (_ descriptor: Int32) -> Result<Void, SystemErrno>
    /// `read(2)` into the buffer: the byte count, 0 at end of file.
    package var read: @Sendable (_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Result<Int, SystemErrno>
    /// `write(2)` of the buffer: the byte count written (possibly short).
    package var write: @Sendable (_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) -> Result<Int, SystemErrno>
    /// `poll(2)` with a timeout in milliseconds (-1: forever); fills in `revents`, returns the ready count.
    package var poll: @Sendable (_ fds: inout [pollfd], _ timeout: Int32) -> Result<Int32, SystemErrno>
    /// `pipe(2)`: the read and write ends.
    package var pipe: @Sendable () -> Result<(read: Int32, write: Int32), SystemErrno>
    /// `fcntl(F_SETFL, O_NONBLOCK)`.
    package var setNonblocking: @Sendable (_ descriptor: Int32) -> Result<Void, SystemErrno>
    /// `fcntl(F_SETFD, FD_CLOEXEC)`.
    package var setCloseOnExec: @Sendable (_ descriptor: Int32) -> Result<Void, SystemErrno>
    /// `isatty(3)`.
    package var isTerminal: @Sendable (_ descriptor: Int32) -> Bool
    /// `tcgetattr`, `cfmakeraw`, 8N1, no flow control, `tcsetattr`; a baud rate of 0 keeps the speed.
    package var configureRaw: @Sendable (_ descriptor: Int32, _ baudRate: UInt32) -> Result<Void, SystemErrno>
    /// `ioctl(TIOCEXCL)` (true) or `ioctl(TIOCNXCL)` (false).
    package var setExclusive: @Sendable (_ descriptor: Int32, _ exclusive: Bool) -> Result<Void, SystemErrno>
    /// `flock(2)` with `LOCK_EX`, `LOCK_UN`, `LOCK_NB`.
    package var flock: @Sendable (_ descriptor: Int32, _ operation: Int32) -> Result<Void, SystemErrno>
    /// `stat(2)` (following symlinks): what the path is.
    package var fileType: @Sendable (_ path: String) -> Result<SystemFileType, SystemErrno>
    /// `realpath(3)`: the path with every symlink resolved, nil when that fails.
    package var realpath: @Sendable (_ path: String) -> String?
    /// `readlink(2)`: a symlink's target, nil when `path` is no symlink.
    package var readlink: @Sendable (_ path: String) -> String?
    /// `link(2)`: a hard link `newPath` to `existingPath` (fails with `EEXIST` when `newPath` exists).
    package var link: @Sendable (_ existingPath: String, _ newPath: String) -> Result<Void, SystemErrno>
    /// `unlink(2)`.
    package var unlink: @Sendable (_ path: String) -> Result<Void, SystemErrno>
    /// `access(path, W_OK)`.
    package var isWritable: @Sendable (_ path: String) -> Bool
    /// `kill(pid, 0)`: true when the process exists (even if it belongs to someone else).
    package var processExists: @Sendable (_ pid: Int32) -> Bool
    /// `getpid(2)`.
    package var processID: @Sendable () -> Int32
    /// `opendir`/`readdir`: the names in a directory (without `.` and `..`), nil when it cannot be read.
    package var directoryEntries: @Sendable (_ path: String) -> [String]?

    /// A set of calls (``live``, or a test's scripted ones).
    package init(
        open: @escaping @Sendable (_ path: String, _ flags: Int32, _ mode: UInt32) -> Result<Int32, SystemErrno>,
        close: @escaping @Sendable (_ descriptor: Int32) -> Result<Void, SystemErrno>,
        read: @escaping @Sendable (_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Result<Int, SystemErrno>,
        write: @escaping @Sendable (_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) -> Result<Int, SystemErrno>,
        poll: @escaping @Sendable (_ fds: inout [pollfd], _ timeout: Int32) -> Result<Int32, SystemErrno>,
        pipe: @escaping @Sendable () -> Result<(read: Int32, write: Int32), SystemErrno>,
        setNonblocking: @escaping @Sendable (_ descriptor: Int32) -> Result<Void, SystemErrno>,
        setCloseOnExec: @escaping @Sendable (_ descriptor: Int32) -> Result<Void, SystemErrno>,
        isTerminal: @escaping @Sendable (_ descriptor: Int32) -> Bool,
        configureRaw: @escaping @Sendable (_ descriptor: Int32, _ baudRate: UInt32) -> Result<Void, SystemErrno>,
        setExclusive: @escaping @Sendable (_ descriptor: Int32, _ exclusive: Bool) -> Result<Void, SystemErrno>,
        flock: @escaping @Sendable (_ descriptor: Int32, _ operation: Int32) -> Result<Void, SystemErrno>,
        fileType: @escaping @Sendable (_ path: String) -> Result<SystemFileType, SystemErrno>,
        realpath: @escaping @Sendable (_ path: String) -> String?,
        readlink: @escaping @Sendable (_ path: String) -> String?,
        link: @escaping @Sendable (_ existingPath: String, _ newPath: String) -> Result<Void, SystemErrno>,
        unlink: @escaping @Sendable (_ path: String) -> Result<Void, SystemErrno>,
        isWritable: @escaping @Sendable (_ path: String) -> Bool,
        processExists: @escaping @Sendable (_ pid: Int32) -> Bool,
        processID: @escaping @Sendable () -> Int32,
        directoryEntries: @escaping @Sendable (_ path: String) -> [String]?
    ) {
        self.open = open
        self.close = close
        self.read = read
        self.write = write
        self.poll = poll
        self.pipe = pipe
        self.setNonblocking = setNonblocking
        self.setCloseOnExec = setCloseOnExec
        self.isTerminal = isTerminal
        self.configureRaw = configureRaw
        self.setExclusive = setExclusive
        self.flock = flock
        self.fileType = fileType
        self.realpath = realpath
        self.readlink = readlink
        self.link = link
        self.unlink = unlink
        self.isWritable = isWritable
        self.processExists = processExists
        self.processID = processID
        self.directoryEntries = directoryEntries
    }

    /// Up to `limit` bytes of the file at `path`, through ``open``, ``read`` and ``close``; nil when it
    /// cannot be opened or read.
    package func readFile(_ path: String, limit: Int = 4096) -> [UInt8]? {
        guard case .success(let descriptor) = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC, 0) else { return nil }
        defer { _ = close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while bytes.count < limit {
            let result = buffer.withUnsafeMutableBytes { read(descriptor, $0) }
            switch result {
            case .success(0): return bytes
            case .success(let count): bytes += buffer[0..<min(count, limit - bytes.count)]
            case .failure(let error) where error.rawValue == EINTR: continue
            case .failure: return nil
            }
        }
        return bytes
    }

    /// Writes all of `bytes` to `descriptor` (retrying `EINTR` and short writes).
    package func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Result<Void, SystemErrno> {
        var offset = 0
        while offset < bytes.count {
            let result = bytes.withUnsafeBytes { write(descriptor, UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            switch result {
            case .success(let count): offset += count
            case .failure(let error) where error.rawValue == EINTR: continue
            case .failure(let error): return .failure(error)
            }
        }
        return .success(())
    }
}

extension SystemCalls {
    /// The real C library calls.
    package static let live = SystemCalls(
        open: LiveCalls.openFile, close: LiveCalls.closeFile, read: LiveCalls.readFile, write: LiveCalls.writeFile,
        poll: LiveCalls.pollFiles, pipe: LiveCalls.makePipe,
        setNonblocking: { LiveCalls.status(cc_shim_set_nonblocking($0, 1)) },
        setCloseOnExec: { LiveCalls.status(cc_shim_set_cloexec($0)) },
        isTerminal: LiveCalls.isTerminal,
        configureRaw: { LiveCalls.status(cc_shim_configure_raw($0, $1)) },
        setExclusive: { LiveCalls.status(cc_shim_set_exclusive($0, $1 ? 1 : 0)) },
        flock: LiveCalls.lockFile, fileType: LiveCalls.fileType, realpath: LiveCalls.resolve,
        readlink: LiveCalls.linkTarget, link: LiveCalls.makeLink, unlink: LiveCalls.removeFile,
        isWritable: LiveCalls.isWritable, processExists: LiveCalls.processExists, processID: LiveCalls.processID,
        directoryEntries: LiveCalls.directoryEntries
    )
}

/// The C library behind ``SystemCalls/live`` (names that do not hide the C functions they call).
private enum LiveCalls {
    static func status(_ value: Int32) -> Result<Void, SystemErrno> {
        value == 0 ? .success(()) : .failure(SystemErrno(value))
    }

    @Sendable static func openFile(_ path: String, _ flags: Int32, _ mode: UInt32) -> Result<Int32, SystemErrno> {
        let descriptor = open(path, flags, mode_t(mode))
        return descriptor >= 0 ? .success(descriptor) : .failure(.current)
    }

    @Sendable static func closeFile(_ descriptor: Int32) -> Result<Void, SystemErrno> {
        close(descriptor) == 0 ? .success(()) : .failure(.current)
    }

    @Sendable static func readFile(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Result<Int, SystemErrno> {
        let count = read(descriptor, buffer.baseAddress, buffer.count)
        return count >= 0 ? .success(count) : .failure(.current)
    }

    /// Never raises SIGPIPE: a reader that went away is `EPIPE` (see `cc_shim_write_nosigpipe`).
    @Sendable static func writeFile(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) -> Result<Int, SystemErrno> {
        let count = cc_shim_write_nosigpipe(descriptor, buffer.baseAddress, buffer.count)
        return count >= 0 ? .success(count) : .failure(.current)
    }

    @Sendable static func pollFiles(_ fds: inout [pollfd], _ timeout: Int32) -> Result<Int32, SystemErrno> {
        let ready = poll(&fds, nfds_t(fds.count), timeout)
        return ready >= 0 ? .success(ready) : .failure(.current)
    }

    @Sendable static func makePipe() -> Result<(read: Int32, write: Int32), SystemErrno> {
        var ends: [Int32] = [-1, -1]
        return pipe(&ends) == 0 ? .success((ends[0], ends[1])) : .failure(.current)
    }

    @Sendable static func isTerminal(_ descriptor: Int32) -> Bool {
        isatty(descriptor) != 0
    }

    @Sendable static func lockFile(_ descriptor: Int32, _ operation: Int32) -> Result<Void, SystemErrno> {
        flock(descriptor, operation) == 0 ? .success(()) : .failure(.current)
    }

    @Sendable static func fileType(_ path: String) -> Result<SystemFileType, SystemErrno> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(.current) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .success(.regular)
        case S_IFDIR: return .success(.directory)
        case S_IFCHR: return .success(.characterDevice)
        case S_IFSOCK: return .success(.socket)
        default: return .success(.other)
        }
    }

    @Sendable static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    @Sendable static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Sendable static func makeLink(_ existingPath: String, _ newPath: String) -> Result<Void, SystemErrno> {
        link(existingPath, newPath) == 0 ? .success(()) : .failure(.current)
    }

    @Sendable static func removeFile(_ path: String) -> Result<Void, SystemErrno> {
        unlink(path) == 0 ? .success(()) : .failure(.current)
    }

    @Sendable static func isWritable(_ path: String) -> Bool {
        access(path, W_OK) == 0
    }

    @Sendable static func processExists(_ pid: Int32) -> Bool {
        guard pid > 0 else { return false }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    @Sendable static func processID() -> Int32 {
        getpid()
    }

    @Sendable static func directoryEntries(_ path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
