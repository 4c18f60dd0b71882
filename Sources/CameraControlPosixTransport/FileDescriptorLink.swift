import CSystemShim
import CameraControlTransport
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The I/O engine shared by ``PTYTransport``, ``SerialPortTransport`` and ``LocalSocketTransport``: one
/// open, non-blocking descriptor, always driven by an event loop (see ``EventLoopTransport``): the
/// descriptor joins a ``PollEventLoop`` (a shared one, or one of its own that ends with the link), whose
/// thread hands each read to the delegate in place; writes come straight from the thread that produced
/// them (what the descriptor does not take at once is written by the loop when `poll()` says it can), and
/// `poll()`'s timeout is the delegate's timer. Nothing else wakes: an idle link costs one wake-up per byte
/// burst and per timer.
///
/// ``receive()`` and ``send(_:)`` are an adapter over that one path, for code that reads a link itself
/// (the conformance probe, tests' fake devices): the first of them starts the link on a loop of its own whose
/// delegate fills a bounded buffer that ``receive()`` drains; while that buffer is full the loop stops
/// reading the descriptor (its writes, its timer and the end of the stream go on), as a slow reader would
/// want.
///
/// Nothing is read before that first use. The descriptor is released (by `release`) only once the loop no
/// longer touches it and the transport is closed, so no thread ever touches a closed or reused descriptor;
/// there is no wake-up pipe of the link's own (the loop owns the waking).
///
/// Every OS call goes through ``SystemCalls`` (``SystemCalls/live`` unless a test scripts it). `EINTR` is
/// retried; `EAGAIN` waits in `poll()`; a short write is continued; the end of the stream (end of file,
/// a hang-up, `EIO`, `EPIPE`) ends it with ``TransportError/Code/closed``; any other failure with
/// ``TransportError/Code/io``.
package final class FileDescriptorLink: @unchecked Sendable {
    /// How many received bytes may wait for ``receive()`` before reading pauses.
    package static let receiveCapacity = 64 * 1024
    /// How many reads in a row may return 0 bytes on a terminal that has not hung up before the link takes
    /// it for the end of file (one such read is another reader taking the bytes first).
    package static let emptyReadLimit = 64
    /// The name of a link's own loop thread.
    package static let loopThreadName = "cc-link-loop"
    /// How many bytes may wait to be written before the link ends with ``TransportError/Code/io`` (the
    /// device stopped reading).
    package static let writeQueueLimit = LoopRegistration.writeQueueLimit

    /// How the link is driven; decided by the first ``receive()``, ``send(_:)`` or
    /// ``startEventLoop(delegate:on:)``.
    private enum Mode {
        /// Not yet used: no thread runs, nothing is read.
        case idle
        /// On a loop for a delegate of the caller's.
        case eventLoop(LoopRegistration)
        /// On a loop of its own for ``receive()`` and ``send(_:)``.
        case adapter(LoopRegistration)
    }

    /// The name for messages.
    package let name: String
    private let descriptor: Int32
    /// The delegate of the adapter's loop: what ``receive()`` drains.
    private let inbound = ReceiveAdapter(capacity: FileDescriptorLink.receiveCapacity)
    private let release: @Sendable (Int32) -> Void
    private let onClose: @Sendable () -> Void
    private let system: SystemCalls

    // Under `lock`:
    private let lock = NSLock()
    private var mode = Mode.idle
    private var closed = false
    private var loopRunning = false
    private var released = false

    /// Takes ownership of `descriptor` (already open, non-blocking). Nothing is read until the first
    /// ``receive()``, ``send(_:)`` or ``startEventLoop(delegate:on:)``.
    ///
    /// `onClose` runs once, synchronously, in ``close()`` (a port lock is released there, so the port can be
    /// opened again at once); `release` closes the descriptor once the link's loop has let it go.
    package init(
        descriptor: Int32, name: String, system: SystemCalls = .live, onClose: @escaping @Sendable () -> Void = {},
        release: @escaping @Sendable (Int32) -> Void
    ) {
        self.descriptor = descriptor
        self.name = name
        self.release = release
        self.onClose = onClose
        self.system = system
    }

    // MARK: ByteTransport (the adapter)

    /// Hands `bytes` to the loop's writer, after everything written before (see ``ByteTransport/send(_:)``):
    /// what the descriptor takes now is written from this thread, the rest by the loop, in order.
    ///
    /// - Throws: ``TransportError/Code/closed`` when the link is closed or its peer went away,
    ///   ``TransportError/Code/io`` when a write failed or the device stopped reading: the link's ending,
    ///   when it has ended (by this write or before it).
    package func send(_ bytes: [UInt8]) async throws(TransportError) {
        let registration = try registration(sending: true)
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeBytes { registration.write($0) }
        if let ending = registration.ending { throw ending }
    }

    /// The next received bytes (see ``ByteTransport/receive()``). The first use starts the adapter's loop.
    ///
    /// - Throws: as ``ByteTransport/receive()``; ``TransportError/Code/concurrentReceive`` when the link
    ///   runs on an event loop for a delegate of the caller's.
    package func receive() async throws(TransportError) -> [UInt8] {
        do {
            _ = try registration(sending: false)
        } catch  where error.code == .closed {
            // Closed: what was read before still comes first, then the ending.
        }
        return try await inbound.receive()
    }

    /// The registration ``receive()`` and ``send(_:)`` use, started on a loop of the link's own at the
    /// first use; `sending` also takes a caller's loop (its writes join that loop's queue).
    private func registration(sending: Bool) throws(TransportError) -> LoopRegistration {
        lock.lock()
        defer { lock.unlock() }
        switch mode {
        case .adapter(let registration):
            if closed { throw TransportError(code: .closed, message: "\(name) is closed") }
            return registration
        case .eventLoop(let registration):
            guard sending else {
                throw TransportError(code: .concurrentReceive, message: "\(name) is driven by an event loop")
            }
            if closed { throw TransportError(code: .closed, message: "\(name) is closed") }
            return registration
        case .idle:
            if closed { throw TransportError(code: .closed, message: "\(name) is closed") }
            guard let registration = registerLocked(delegate: inbound, on: nil) else {
                throw TransportError(code: .openFailed, message: "cannot start an event loop for \(name)")
            }
            inbound.attach { registration.setReading($0) }
            mode = .adapter(registration)
            return registration
        }
    }

    /// True once the other end hung up (a socket's peer closed it), or this link was closed: one `poll()`
    /// that waits for nothing and reads nothing, so bytes not read yet stay where they are.
    package var peerHungUp: Bool {
        lock.lock()
        defer { lock.unlock() }
        if closed { return true }  // the descriptor may be released, its number reused
        // POLLIN asked for, not tested: macOS reports a hang-up only on a descriptor polled for something.
        var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        guard case .success(let ready) = system.poll(&fds, 0), ready > 0 else { return false }
        return Int32(fds[0].revents) & Int32(POLLHUP | POLLERR) != 0
    }

    /// Stops the link's loop, runs `onClose` and releases the descriptor soon (see ``ByteTransport/close()``).
    package func close() {
        lock.lock()
        if closed {
            lock.unlock()
            return
        }
        closed = true
        var registration: LoopRegistration?
        switch mode {
        case .eventLoop(let registered), .adapter(let registered): registration = registered
        case .idle: break
        }
        lock.unlock()
        onClose()
        registration?.close(TransportError(code: .closed, message: "\(name) was closed"))
        inbound.finish(TransportError(code: .closed, message: "\(name) was closed"), discardBuffered: true)
        releaseIfDone()
    }

    // MARK: EventLoopTransport

    /// Registers the link on `loop` (a ``PollEventLoop``), or on a loop of its own that ends with it, for
    /// `delegate` (see ``EventLoopTransport/startEventLoop(delegate:on:)``).
    ///
    /// - Returns: nil when the link was already used through ``receive()`` or ``send(_:)``, already runs
    ///   on a loop, is closed, or no loop could be made.
    package func startEventLoop(delegate: any EventLoopDelegate, on loop: (any EventLoop)?) -> (any EventLoopControl)? {
        lock.lock()
        defer { lock.unlock() }
        guard case .idle = mode, !closed else { return nil }
        guard let registration = registerLocked(delegate: delegate, on: loop) else { return nil }
        mode = .eventLoop(registration)
        return registration
    }

    // MARK: Private

    /// Registers the descriptor on `loop`, or on a loop of its own (under `lock`).
    private func registerLocked(delegate: any EventLoopDelegate, on loop: (any EventLoop)?) -> LoopRegistration? {
        let pollLoop: PollEventLoop
        let own: Bool
        if let shared = loop as? PollEventLoop {
            pollLoop = shared
            own = false
        } else {
            guard let made = try? PollEventLoop(name: Self.loopThreadName, system: system) else { return nil }
            pollLoop = made
            own = true
        }
        loopRunning = true
        let registration = pollLoop.register(descriptor: descriptor, name: name, delegate: delegate) { [self] in
            loopStopped()
        }
        if own { pollLoop.shutdown() }  // it ends once this link has ended
        return registration
    }

    /// Releases the descriptor once closed and no loop touches it any more (once).
    private func releaseIfDone() {
        lock.lock()
        let ready = closed && !loopRunning && !released
        if ready { released = true }
        lock.unlock()
        guard ready else { return }
        release(descriptor)
    }

    /// The loop no longer touches the descriptor.
    private func loopStopped() {
        lock.lock()
        loopRunning = false
        lock.unlock()
        releaseIfDone()
    }

    /// What one read of the descriptor gave.
    enum ReadOutcome {
        /// `count` bytes are in the buffer.
        case bytes(Int)
        /// Nothing this time (a spurious wake-up, `EINTR`, another reader took the bytes): poll again.
        case again
        /// The stream ended.
        case end(TransportError)
    }

    /// Reads `descriptor` once after `poll()` reported `events` on it; `emptyReads` counts 0-byte reads in
    /// a row on a terminal.
    static func readOnce(
        system: SystemCalls, descriptor: Int32, name: String, into buffer: inout [UInt8], events: Int32,
        isTerminal: Bool, emptyReads: inout Int
    ) -> ReadOutcome {
        let result = buffer.withUnsafeMutableBytes { system.read(descriptor, $0) }
        let error: Int32
        switch result {
        case .success(0):
            // On a terminal, 0 bytes without a hang-up is not the end: another reader of the same tty
            // (a stray `cat`, a modem manager probing) took the bytes poll saw. A hang-up, or a file that
            // is not a terminal, is the end; so are many empty reads in a row (no busy loop).
            emptyReads += 1
            if isTerminal && events & Int32(POLLHUP | POLLERR) == 0 && emptyReads < Self.emptyReadLimit {
                return .again
            }
            return .end(TransportError(code: .closed, message: "the peer of \(name) closed (end of file)"))
        case .success(let count):
            emptyReads = 0
            return .bytes(min(count, buffer.count))
        case .failure(let failure):
            error = failure.rawValue
        }
        switch error {
        case EINTR, EAGAIN:
            if events & Int32(POLLHUP | POLLERR) != 0 && events & Int32(POLLIN) == 0 {
                return .end(TransportError(code: .closed, message: "the peer of \(name) hung up"))
            }
            return .again
        case EIO:
            return .end(TransportError(code: .closed, message: "the peer of \(name) closed", errno: error))
        default:
            return .end(TransportError(code: .io, message: "read from \(name) failed", errno: error))
        }
    }
}

/// Starts `body` on a thread of its own, named `name` for the OS too (`top -H`, debuggers; at most 15
/// characters on Linux).
func startNamedThread(_ name: String, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread {
        _ = cc_shim_set_thread_name(name)
        body()
    }
    thread.name = name
    thread.start()
}
