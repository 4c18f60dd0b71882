import CameraControlTransport
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The claim one transport holds on a port, so a second open of the same port (by this process or
/// another program) fails at once with ``TransportError/Code/inUse``.
///
/// Three locks, because each alone has a gap:
///
/// - `flock(LOCK_EX | LOCK_NB)` on the device: respected by everything that flocks (screen, picocom,
///   pyserial's `exclusive=True`, other CameraControl hosts), also for root; released by the kernel when
///   the process dies.
/// - a UUCP lock file, `LCK..ttyACM0` in `/var/lock` (or `/run/lock`), holding the PID as ten ASCII
///   characters and a newline: respected by minicom and other UUCP-style programs, and it tells who holds
///   the port. A lock file whose PID is dead is stale and removed; when no lock directory is writable
///   only `flock` is used.
/// - `ioctl(TIOCEXCL)`: the kernel refuses further opens with `EBUSY` (but not for root).
///
/// A pseudo-terminal reached through a symlink is locked under its real `/dev/pts/N` name, so two names
/// for one device collide. When the holder is not in a lock file, Linux's `/proc/*/fd` is searched for
/// a process that has the device open.
package final class PortLock: @unchecked Sendable {
    /// Where the locks live.
    package struct Options: Sendable {
        /// Lock directories to try, in order; the first one that exists is used.
        package var lockDirectories: [String]
        /// Where to look for processes that have the device open (`/proc` on Linux; nil: do not look).
        package var processDirectory: String?

        /// `/var/lock`, then `/run/lock`; `/proc` on Linux.
        package static let standard: Options = {
            #if os(Linux)
                return Options(lockDirectories: ["/var/lock", "/run/lock"], processDirectory: "/proc")
            #else
                return Options(lockDirectories: ["/var/lock", "/var/spool/lock"], processDirectory: nil)
            #endif
        }()

        /// Options with the given lock directories and process directory.
        package init(lockDirectories: [String], processDirectory: String?) {
            self.lockDirectories = lockDirectories
            self.processDirectory = processDirectory
        }
    }

    /// The device, symlinks resolved.
    package let devicePath: String
    /// The lock file this lock created, if any.
    package let lockFilePath: String?
    private let descriptor: Int32
    private let system: SystemCalls
    private let state = NSLock()
    private var released = false

    private init(devicePath: String, lockFilePath: String?, descriptor: Int32, system: SystemCalls) {
        self.devicePath = devicePath
        self.lockFilePath = lockFilePath
        self.descriptor = descriptor
        self.system = system
    }

    deinit {
        release()
    }

    // MARK: Acquiring

    /// Before opening: fails when a live process's lock file names the device (so opening a port that
    /// is in use does not even toggle its modem lines). A stale lock file is removed.
    ///
    /// - Throws: ``TransportError/Code/inUse``.
    package static func checkLockFile(
        devicePath: String, portName: String, options: Options = .standard, system: SystemCalls = .live
    ) throws(TransportError) {
        guard let lockFile = lockFilePath(for: devicePath, options: options, system: system) else { return }
        if let holder = liveHolder(of: lockFile, system: system) {
            throw inUseError(portName: portName, holder: holder, options: options, system: system)
        }
    }

    /// After opening `descriptor` on `devicePath`: `flock`s it, writes the lock file and sets exclusive mode.
    /// The caller still owns `descriptor` (and closes it when this throws).
    ///
    /// - Throws: ``TransportError/Code/inUse`` naming the holder's PID where it can be known.
    package static func acquire(
        descriptor: Int32, devicePath: String, portName: String, options: Options = .standard,
        system: SystemCalls = .live
    ) throws(TransportError) -> PortLock {
        flockLoop: while true {
            switch system.flock(descriptor, LOCK_EX | LOCK_NB) {
            case .success: break flockLoop
            case .failure(let error) where error.rawValue == EINTR: continue
            case .failure(let error) where error.rawValue == EWOULDBLOCK || error.rawValue == EAGAIN:
                let lockFile = lockFilePath(for: devicePath, options: options, system: system)
                let holder =
                    lockFile.flatMap { liveHolder(of: $0, system: system) }
                    ?? processHolding(devicePath, options: options, system: system)
                throw inUseError(portName: portName, holder: holder, options: options, system: system)
            case .failure:
                break flockLoop  // a device or file system without flock: the other locks still apply
            }
        }
        var created: String?
        if let lockFile = lockFilePath(for: devicePath, options: options, system: system) {
            do {
                created = try createLockFile(lockFile, system: system)
            } catch {
                _ = system.flock(descriptor, LOCK_UN)
                throw inUseError(portName: portName, holder: error.pid, options: options, system: system)
            }
        }
        _ = system.setExclusive(descriptor, true)
        if let created { heldLockFiles.withLock { _ = $0.insert(created) } }
        return PortLock(devicePath: devicePath, lockFilePath: created, descriptor: descriptor, system: system)
    }

    /// The error for an `open()` that failed with `EBUSY` (the holder set exclusive mode).
    package static func busyError(
        devicePath: String, portName: String, options: Options = .standard, system: SystemCalls = .live
    ) -> TransportError {
        let holder =
            lockFilePath(for: devicePath, options: options, system: system).flatMap { liveHolder(of: $0, system: system) }
            ?? processHolding(devicePath, options: options, system: system)
        var error = inUseError(portName: portName, holder: holder, options: options, system: system)
        error.errno = EBUSY
        return error
    }

    /// Clears exclusive mode, removes the lock file (if it still names this process) and unlocks the
    /// device; safe to call more than once. The descriptor stays open (its owner closes it).
    package func release() {
        state.lock()
        let first = !released
        released = true
        state.unlock()
        guard first else { return }
        _ = system.setExclusive(descriptor, false)
        if let lockFilePath {
            Self.heldLockFiles.withLock { _ = $0.remove(lockFilePath) }
            if Self.pid(in: system.readFile(lockFilePath)) == system.processID() { _ = system.unlink(lockFilePath) }
        }
        _ = system.flock(descriptor, LOCK_UN)
    }

    /// The lock files the locks of this process created and hold now.
    private static let heldLockFiles = Mutex<Set<String>>([])

    /// Removes the lock file of every lock this process holds (each only if it still names this process),
    /// for a process about to exit without releasing its ports (a tool interrupted by a signal). `flock` and
    /// exclusive mode end with the process; a UUCP lock file would stay behind until another program found
    /// it stale.
    package static func removeHeldLockFiles(system: SystemCalls = .live) {
        let paths = heldLockFiles.withLock { paths in
            defer { paths.removeAll() }
            return paths
        }
        for path in paths where pid(in: system.readFile(path)) == system.processID() {
            _ = system.unlink(path)
        }
    }

    // MARK: Lock files

    /// The UUCP lock file name for a device: `LCK..` and the path below `/dev/`, `/` replaced by `_`
    /// (`/dev/ttyACM0` → `LCK..ttyACM0`, `/dev/pts/3` → `LCK..pts_3`).
    package static func lockFileName(for devicePath: String) -> String {
        var name = Substring(devicePath)
        if name.hasPrefix("/dev/") { name = name.dropFirst(5) }
        while name.hasPrefix("/") { name = name.dropFirst() }
        return "LCK.." + name.replacingOccurrences(of: "/", with: "_")
    }

    /// The PID as a UUCP lock file holds it: ten characters, right-aligned, and a newline.
    package static func lockFileContents(pid: Int32) -> [UInt8] {
        let digits = String(pid)
        return Array((String(repeating: " ", count: max(0, 10 - digits.count)) + digits + "\n").utf8)
    }

    /// The PID in a lock file's contents (ASCII, surrounding blanks ignored), nil when there is none.
    package static func pid(in contents: [UInt8]?) -> Int32? {
        guard let contents else { return nil }
        let text = String(decoding: contents, as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: " \t\r\n\0"))
        guard let value = Int32(text), value > 0 else { return nil }
        return value
    }

    private static func lockFilePath(for devicePath: String, options: Options, system: SystemCalls) -> String? {
        for directory in options.lockDirectories {
            if case .success(.directory) = system.fileType(directory) {
                return directory + "/" + lockFileName(for: devicePath)
            }
        }
        return nil
    }

    /// The live process a lock file names; removes the file when its process is gone or it names none.
    private static func liveHolder(of lockFile: String, system: SystemCalls) -> Int32? {
        guard let contents = system.readFile(lockFile, limit: 64) else { return nil }
        if contents.isEmpty {
            return nil  // being written by its creator right now, or garbage: treated as no lock
        }
        if let pid = pid(in: contents), system.processExists(pid) {
            return pid
        }
        _ = system.unlink(lockFile)  // stale
        return nil
    }

    private struct HeldBy: Error {
        var pid: Int32?
    }

    /// Creates `lockFile` atomically (written under a temporary name, then hard-linked): its path, or nil
    /// when the directory is not writable (then only `flock` guards the port).
    private static func createLockFile(_ lockFile: String, system: SystemCalls) throws(HeldBy) -> String? {
        let me = system.processID()
        let temporary = lockFile + ".\(me).tmp"
        _ = system.unlink(temporary)
        removeAbandonedTemporaries(of: lockFile, system: system)
        guard case .success(let descriptor) = system.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) else {
            return nil  // EACCES, EROFS, ...: no lock file
        }
        let written = system.writeAll(descriptor, lockFileContents(pid: me))
        _ = system.close(descriptor)
        defer { _ = system.unlink(temporary) }
        guard case .success = written else { return nil }
        for _ in 0..<3 {
            switch system.link(temporary, lockFile) {
            case .success:
                return lockFile
            case .failure(let error) where error.rawValue == EEXIST:
                let holder = pid(in: system.readFile(lockFile, limit: 64))
                if let holder, holder == me {
                    return lockFile  // ours, left by a transport of this process: we hold the flock now
                }
                if let holder, system.processExists(holder) {
                    throw HeldBy(pid: holder)
                }
                _ = system.unlink(lockFile)  // stale (or unreadable garbage): replace it
            case .failure:
                return nil
            }
        }
        throw HeldBy(pid: nil)
    }

    /// Removes the temporary files (`LCK..NAME.PID.tmp`) of `lockFile` that processes which no longer exist
    /// left: one killed between writing its temporary and linking it (`SIGKILL`) cannot remove its own. A
    /// live process's temporary is its lock being made now, and stays.
    private static func removeAbandonedTemporaries(of lockFile: String, system: SystemCalls) {
        guard let slash = lockFile.lastIndex(of: "/") else { return }
        let directory = String(lockFile[..<slash])
        let prefix = lockFile[lockFile.index(after: slash)...] + "."
        for entry in system.directoryEntries(directory) ?? [] where entry.hasPrefix(prefix) && entry.hasSuffix(".tmp") {
            let digits = entry.dropFirst(prefix.count).dropLast(4)
            guard let pid = Int32(digits), pid > 0, !system.processExists(pid) else { continue }
            _ = system.unlink(directory + "/" + entry)
        }
    }

    // MARK: Holders

    /// A process that has `devicePath` open, found through `/proc/PID/fd`; another process is preferred
    /// to this one.
    private static func processHolding(_ devicePath: String, options: Options, system: SystemCalls) -> Int32? {
        guard let proc = options.processDirectory, let entries = system.directoryEntries(proc) else { return nil }
        let me = system.processID()
        var mine = false
        for entry in entries {
            guard let pid = Int32(entry), pid > 0 else { continue }
            guard let descriptors = system.directoryEntries("\(proc)/\(entry)/fd") else { continue }
            for descriptor in descriptors where system.readlink("\(proc)/\(entry)/fd/\(descriptor)") == devicePath {
                if pid != me { return pid }
                mine = true
            }
        }
        return mine ? me : nil
    }

    private static func inUseError(portName: String, holder: Int32?, options: Options, system: SystemCalls) -> TransportError {
        guard let holder else {
            return TransportError(code: .inUse, message: "\(portName) is in use by another program")
        }
        var message = "\(portName) is in use by PID \(holder)"
        if holder == system.processID() {
            message += " (this process)"
        } else if let proc = options.processDirectory, let comm = system.readFile("\(proc)/\(holder)/comm", limit: 64) {
            let name = String(decoding: comm, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !name.isEmpty { message += " (\(name))" }
        }
        return TransportError(code: .inUse, message: message, holderPID: holder)
    }
}
