import CSystemShim
import CameraControlTransport
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A transport over a local (Unix-domain) stream socket: how an app reaches a device that `camctl serve`
/// owns. The service relays the wire protocol between the device's port and the app that is active, so the
/// bytes are the same as on the port itself (docs/CAPTURE.md, "Apps attached to camctl serve").
///
/// Driven like ``PTYTransport`` (one `FileDescriptorLink`): ``receive()`` or an event loop. The end of the
/// stream (the service closed the connection: another app became active, or the service stopped) ends
/// it with ``TransportError/Code/closed`` after the bytes received before; writes never raise `SIGPIPE`.
public final class LocalSocketTransport: EventLoopTransport {
    /// The socket's path (an app's side), or a name for an accepted connection (the service's side).
    public let name: String
    /// The process at the other end (the service's side: the app that connected), when the OS says.
    public let peerProcessID: Int32?
    private let link: FileDescriptorLink

    /// Connects to the socket at `path`.
    ///
    /// - Throws: ``TransportError/Code/notFound`` when nothing is at `path`, ``TransportError/Code/openFailed``
    ///   when nobody listens there (`ECONNREFUSED`) or the connection cannot be made.
    public convenience init(connectingTo path: String) throws(TransportError) {
        var descriptor: Int32 = -1
        let status = cc_shim_unix_connect(path, &descriptor)
        if status == ENOENT {
            throw TransportError(code: .notFound, message: "no such file \(path)", errno: status)
        }
        if status == ECONNREFUSED {
            throw TransportError(
                code: .openFailed, message: "nothing listens at \(path) (is camctl serve running?)", errno: status)
        }
        if status != 0 {
            throw TransportError.openFailure(path: path, errno: status)
        }
        try self.init(descriptor: descriptor, name: path)
    }

    /// Takes ownership of an accepted, non-blocking connection.
    init(descriptor: Int32, name: String) throws(TransportError) {
        var pid: Int32 = 0
        peerProcessID = cc_shim_peer_pid(descriptor, &pid) == 0 && pid > 0 ? pid : nil
        self.name = name
        let system = SystemCalls.live
        link = FileDescriptorLink(descriptor: descriptor, name: name, system: system, release: { _ = system.close($0) })
    }

    deinit {
        link.close()
    }

    /// Hands `bytes` to the socket's loop (see ``ByteTransport/send(_:)``).
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

    /// Runs the connection on an event loop for `delegate` (see ``EventLoopTransport/startEventLoop(delegate:on:)``).
    ///
    /// - Returns: nil after ``receive()`` or ``send(_:)`` was called, a loop was started already, or the connection is closed.
    public func startEventLoop(delegate: any EventLoopDelegate, on loop: (any EventLoop)?) -> (any EventLoopControl)? {
        link.startEventLoop(delegate: delegate, on: loop)
    }

    /// True once the other end closed the connection (or this end did), seen without reading: bytes not
    /// read yet stay. `camctl serve` asks it of an app's open connection when the same process connects
    /// again: a closed one is the app reconnecting, an open one a second host in the same process.
    public var isPeerClosed: Bool { link.peerHungUp }

    /// Ends the connection.
    public func close() {
        link.close()
    }
}

/// A listening local socket: `camctl serve`'s, which apps connect to with ``LocalSocketTransport``.
///
/// ``connections`` yields each connection as it is accepted (a thread of the listener's own waits in
/// `poll()`); ``close()`` ends the stream and removes the socket's file.
public final class LocalSocketListener: Sendable {
    /// The socket's path.
    public let path: String
    /// The accepted connections, in order, until ``close()``.
    public let connections: AsyncStream<LocalSocketTransport>
    private let descriptor: Int32
    private let wake: (read: Int32, write: Int32)
    private let isClosed = Mutex(false)

    /// Listens at `path`. A socket file left there by a service that is gone is replaced; a live one is not.
    ///
    /// - Throws: ``TransportError/Code/inUse`` when a service already listens at `path`,
    ///   ``TransportError/Code/openFailed`` when the socket cannot be made (the reason attached).
    public init(path: String) throws(TransportError) {
        switch SystemCalls.live.fileType(path) {
        case .success(.socket), .failure: break
        case .success(let type):
            // Never replaced: only a socket file is a service's.
            let what = type == .directory ? "a directory" : "a file that is not a socket"
            throw TransportError(code: .openFailed, message: "cannot listen at \(path): it is \(what)", errno: EEXIST)
        }
        if case .success(.socket) = SystemCalls.live.fileType(path) {
            var probe: Int32 = -1
            if cc_shim_unix_connect(path, &probe) == 0 {
                _ = SystemCalls.live.close(probe)
                throw TransportError(code: .inUse, message: "\(path) is in use: a service already listens there")
            }
            unlink(path)  // stale: nobody listens
        }
        var opened: Int32 = -1
        let status = cc_shim_unix_listen(path, &opened)
        let listener = opened
        if status != 0 {
            throw TransportError(
                code: status == EADDRINUSE ? .inUse : .openFailed,
                message: "cannot listen at \(path): \(String(cString: strerror(status)))", errno: status)
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            let error = errno
            _ = SystemCalls.live.close(listener)
            unlink(path)
            throw TransportError(code: .openFailed, message: "cannot create a wake-up pipe for \(path)", errno: error)
        }
        _ = cc_shim_set_cloexec(ends[0])
        _ = cc_shim_set_cloexec(ends[1])
        self.path = path
        self.descriptor = listener
        self.wake = (ends[0], ends[1])
        let (stream, continuation) = AsyncStream<LocalSocketTransport>.makeStream()
        connections = stream
        let wakeRead = ends[0]
        let thread = Thread {
            _ = cc_shim_set_thread_name("cc-serve-accept")
            var count = 0
            while true {
                var fds = [
                    pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                ]
                let ready = poll(&fds, 2, -1)
                if ready < 0 && errno == EINTR { continue }
                if ready < 0 || fds[1].revents != 0 { break }
                var accepted: Int32 = -1
                guard cc_shim_unix_accept(listener, &accepted) == 0 else { continue }
                count += 1
                if let connection = try? LocalSocketTransport(descriptor: accepted, name: "\(path) #\(count)") {
                    continuation.yield(connection)
                }
            }
            continuation.finish()
            _ = SystemCalls.live.close(listener)
            _ = SystemCalls.live.close(wakeRead)
        }
        thread.start()
    }

    /// Stops listening, ends ``connections`` and removes the socket's file (connections accepted stay open).
    public func close() {
        let wasClosed = isClosed.withLock { closed in
            defer { closed = true }
            return closed
        }
        guard !wasClosed else { return }
        unlink(path)
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        _ = SystemCalls.live.close(wake.write)
    }

    deinit {
        close()
    }
}
