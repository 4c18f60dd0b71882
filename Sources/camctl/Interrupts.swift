import CSystemShim
import CameraControlPosixTransport
import Foundation
import Synchronization

/// camctl's answer to Ctrl-C (`SIGINT`) and `SIGTERM`, installed before a command runs.
///
/// A command that can end cleanly says how (``onInterrupt(_:)``: `record`, `monitor` and `relay` stop,
/// `ping` prints its summary): the first signal calls that. Otherwise, and on a second signal, camctl
/// leaves nothing behind and exits at once with 128 + the signal's number (130, 143), as a process killed
/// by it would: the UUCP lock files of the ports it holds are removed (``PortLock/removeHeldLockFiles(system:)``;
/// `flock` and exclusive mode end with the process) and so are the paths it made (``removeOnExit(_:kind:)``:
/// `serve`'s socket, `relay`'s `--link`); the apps `serve` launched are sent `SIGTERM` (``LaunchedProcesses``).
enum Interrupts {
    /// What a path made by a command is, so that only such a thing is removed.
    enum Kind {
        case socket
        case symbolicLink
    }

    private struct State {
        var graceful: (@Sendable () -> Void)?
        var paths: [(path: String, kind: Kind)] = []
        var installed = false
        var signalled = false
    }

    private static let state = Mutex(State())

    /// Takes `SIGINT` and `SIGTERM` from their default action (once): a C handler writes each to a pipe that
    /// a thread of its own reads (a dispatch signal source can miss one: it needs the signal blocked in
    /// every thread, and threads made before it do not block it).
    static func install() {
        let first = state.withLock { state in
            defer { state.installed = true }
            return !state.installed
        }
        guard first else { return }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return }  // no pipe: the signals keep their default action
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = cc_shim_set_nonblocking(ends[1], 1)
        let reader = ends[0]
        Thread.detachNewThread {
            var number: UInt8 = 0
            while true {
                let count = read(reader, &number, 1)
                if count == 1 {
                    received(Int32(number))
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
        let signals = [SIGINT, SIGTERM]
        _ = signals.withUnsafeBufferPointer { cc_shim_signals_to_pipe($0.baseAddress, Int32($0.count), ends[1]) }
    }

    /// On the first signal, `stop` is called instead of exiting (it must end the command soon; a second
    /// signal exits at once).
    static func onInterrupt(_ stop: @escaping @Sendable () -> Void) {
        state.withLock { $0.graceful = stop }
    }

    /// `path` (a `kind` of thing the command made) is removed if camctl exits on a signal.
    static func removeOnExit(_ path: String, kind: Kind) {
        state.withLock { $0.paths.append((path, kind)) }
    }

    private static func received(_ number: Int32) {
        let graceful = state.withLock { state -> (@Sendable () -> Void)? in
            defer { state.signalled = true }
            return state.signalled ? nil : state.graceful
        }
        if let graceful {
            graceful()
            return
        }
        let paths = state.withLock { $0.paths }
        for (path, kind) in paths where isA(kind, path) { _ = unlink(path) }
        PortLock.removeHeldLockFiles()
        LaunchedProcesses.terminateAll()
        exit(128 + number)
    }

    private static func isA(_ kind: Kind, _ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        switch kind {
        case .socket: return info.st_mode & S_IFMT == S_IFSOCK
        case .symbolicLink: return info.st_mode & S_IFMT == S_IFLNK
        }
    }
}
