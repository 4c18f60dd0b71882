import CameraControlPosixTransport
import CameraControlTransport
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opens one port path again and again, as a host that reconnects does (``Transports/open(path:baudRate:)``
/// each time), and never opens a pseudo-terminal that cannot be the one it lost.
///
/// A serial port comes back under its name when it is plugged in again; a pseudo-terminal never does. Once
/// its other side (a simulator) closes, its number `/dev/pts/N` is free, and the next pseudo-terminal any
/// program opens may take it: a host reopening `/dev/pts/N`, or a `--link` symlink left behind by a simulator
/// that was killed, would claim that other program's device (its lock file, `flock` and exclusive mode) and
/// talk to it. So after a pseudo-terminal was opened here, ``open()`` refuses the same path when it leads to
/// that number again but the pseudo-terminal there is not the one opened before (it was made since; or none
/// is there):
///
/// - the path is the pseudo-terminal itself: ``TransportError/Code/gone``, for good;
/// - the path is a symlink that still is the one followed before: ``TransportError/Code/notFound`` (a
///   simulator started again replaces its link, and then it opens).
///
/// The pseudo-terminal opened before, still there (a session lost to a heartbeat timeout while its simulator
/// runs on), opens again; so does a serial port, whatever happened to it.
///
/// A pseudo-terminal is told apart from the one before on its number by its node's change time, set when
/// the node is made: Linux's devpts makes a pty's node with the pty (a pty made within the same clock tick
/// as the one before, a few milliseconds, could not be told apart; a session lasts longer). Where a node
/// outlives its pty, it looks unchanged, and the reopen goes on as ``Transports/open(path:baudRate:)``.
public final class PortReopener: Sendable {
    /// The path opened each time.
    public let path: String
    /// The baud rate for a serial port.
    public let baudRate: Int
    /// The pseudo-terminal the last ``open()`` opened, nil before one or when it opened no pseudo-terminal.
    private let lastPseudoTerminal = Mutex<Opened?>(nil)

    /// What a path led to when it was opened.
    struct Opened: Equatable {
        /// The pseudo-terminal, symlinks resolved.
        var device: String
        /// That pseudo-terminal's node: made when the pseudo-terminal was.
        var node: NodeIdentity
        /// The symlink followed to it, nil when the path is the pseudo-terminal itself.
        var link: NodeIdentity?
    }

    /// A file node as `stat` tells it apart from another at the same path: one made later differs in its
    /// change time (set when a node is made) if not in its inode.
    struct NodeIdentity: Equatable {
        var device: UInt64
        var inode: UInt64
        var changedSeconds: Int64
        var changedNanoseconds: Int64
        var specialDevice: UInt64
        var isSymlink: Bool
    }

    /// A reopener of `path` (a serial port, a pseudo-terminal or a symlink to one) at `baudRate` for a serial port.
    public init(path: String, baudRate: Int = SerialPortTransport.defaultBaudRate) {
        self.path = path
        self.baudRate = baudRate
    }

    /// Opens ``path`` (``Transports/open(path:baudRate:)``), unless it leads to a pseudo-terminal number
    /// this reopener opened before and the pseudo-terminal there now is another (see the type).
    ///
    /// - Throws: ``TransportError/Code/gone`` when the path is a pseudo-terminal that closed since it was
    ///   opened here (it never comes back); ``TransportError/Code/notFound`` when it is a symlink, unchanged
    ///   since, to such a pseudo-terminal's number; otherwise as ``Transports/open(path:baudRate:)``.
    public func open() throws(TransportError) -> any EventLoopTransport {
        let link = Self.identity(of: path, followingLinks: false).flatMap { $0.isSymlink ? $0 : nil }
        if let last = lastPseudoTerminal.withLock({ $0 }) {
            try Self.check(path: path, last: last, link: link)
        }
        let transport = try Transports.open(path: path, baudRate: baudRate)
        let device = Transports.resolvedPath(path)
        var opened: Opened?
        if Transports.isPseudoTerminalPath(device), let node = Self.identity(of: device, followingLinks: true) {
            // Held open now, the pseudo-terminal cannot be replaced while this looks at it.
            opened = Opened(device: device, node: node, link: link)
        }
        lastPseudoTerminal.withLock { $0 = opened }
        return transport
    }

    /// Fails when `path` leads to `last.device` again and what is there is not the pseudo-terminal opened
    /// then; `link` is the path's symlink now (nil: the path is no symlink).
    static func check(path: String, last: Opened, link: NodeIdentity?) throws(TransportError) {
        if let before = last.link, let link, link != before {
            return  // the link was made again (a simulator started anew): it leads where it leads now
        }
        let device = Transports.resolvedPath(path)
        guard device == last.device else { return }  // another device: opened as any
        let now = identity(of: device, followingLinks: true)
        guard now != last.node else { return }  // the same pseudo-terminal, still there
        let what = now == nil ? "is gone" : "closed, and \(device) is now another pseudo-terminal"
        if link == nil {
            throw TransportError(
                code: .gone, message: "the pseudo-terminal \(path) \(what): a pseudo-terminal never comes back (not opened)")
        }
        throw TransportError(
            code: .notFound,
            message: "\(path) still points at \(device); the pseudo-terminal it led to \(what) (not opened: waiting for a new link)")
    }

    /// The node at `path` (`stat`, or `lstat` without `followingLinks`), nil when there is none.
    static func identity(of path: String, followingLinks: Bool) -> NodeIdentity? {
        var info = stat()
        guard (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        #if canImport(Darwin)
            let changed = info.st_ctimespec
        #else
            let changed = info.st_ctim
        #endif
        return NodeIdentity(
            device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino),
            changedSeconds: Int64(changed.tv_sec), changedNanoseconds: Int64(changed.tv_nsec),
            specialDevice: UInt64(truncatingIfNeeded: info.st_rdev), isSymlink: info.st_mode & S_IFMT == S_IFLNK)
    }
}
