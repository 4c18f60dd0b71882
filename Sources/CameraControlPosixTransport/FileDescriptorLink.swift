import CSystemShim
import CameraControlTransport
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The I/O engine shared by ``PTYTransport`` and ``SerialPortTransport``: one open, non-blocking
/// descriptor, driven one of two ways, chosen by the first use:
///
/// - **As a ``ByteTransport``** (the first call is ``receive()``): the thread reads into a bounded
///   ``ChunkQueue`` that ``receive()`` drains, and a serial queue writes what ``send(_:)`` is given.
/// - **On an event loop** (the first call is ``startEventLoop(delegate:on:)``, see ``EventLoopTransport``):
///   the descriptor joins a ``PollEventLoop`` (a shared one, or one of its own that ends with the link),
///   whose thread hands each read to the delegate in place; writes come straight from the thread that
///   produced them (what the descriptor does not take at once is written by the loop when `poll()` says
///   it can), and `poll()`'s timeout is the delegate's timer. Nothing else wakes: an idle link costs one
///   wake-up per byte burst and per timer.
///
/// Nothing is read before that first use. In stream mode a self-pipe wakes the reader and a blocked
/// writer when ``close()`` is called, so closing is prompt. The descriptor is released (by `release`, on
/// the writer queue) only once the reader or the loop no longer touches it and the transport is closed,
/// so no thread ever touches a closed or reused descriptor.
///
/// Every OS call goes through ``SystemCalls`` (``SystemCalls/live`` unless a test scripts it). `EINTR` is
/// retried; `EAGAIN` waits in `poll()`; a short write is continued; the end of the stream (end of file,
/// a hang-up, `EIO`, `EPIPE`) ends it with ``TransportError/Code/closed``; any other failure with
/// ``TransportError/Code/io``.
package final class FileDescriptorLink: @unchecked Sendable {
    /// How many received bytes may wait for the consumer before the reader pauses.
    package static let receiveCapacity = 64 * 1024
    /// How many reads in a row may return 0 bytes on a terminal that has not hung up before the link takes
    /// it for the end of file (one such read is another reader taking the bytes first).
    package static let emptyReadLimit = 64
    /// The name of a link's thread in stream mode.
    package static let readerThreadName = "cc-link-reader"
    /// The name of a link's thread in event-loop mode.
    package static let loopThreadName = "cc-link-loop"
    /// How many bytes may wait to be written in event-loop mode before the link ends with
    /// ``TransportError/Code/io`` (the device stopped reading).
    package static let writeQueueLimit = LoopRegistration.writeQueueLimit

    /// How the link is driven; decided by the first ``receive()`` or ``startEventLoop(delegate:)``.
    private enum Mode {
        /// Not yet used: no thread runs, nothing is read.
        case idle
        /// ``receive()`` / ``send(_:)``: the reader thread fills ``inbound``.
        case stream
        /// The descriptor is registered on an event loop.
        case eventLoop(LoopRegistration)
    }

    /// The name for messages.
    package let name: String
    private let descriptor: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let inbound = ChunkQueue(capacity: FileDescriptorLink.receiveCapacity)
    private let writer: DispatchQueue
    private let release: @Sendable (Int32) -> Void
    private let onClose: @Sendable () -> Void
    private let system: SystemCalls

    // Under `lock`:
    private let lock = NSLock()
    private var mode = Mode.idle
    private var closed = false
    private var threadRunning = false
    private var released = false

    /// Takes ownership of `descriptor` (already open, non-blocking). Nothing is read until the first
    /// ``receive()`` or ``startEventLoop(delegate:)``.
    ///
    /// `onClose` runs once, synchronously, in ``close()`` (a port lock is released there, so the port can be
    /// opened again at once); `release` closes the descriptor once the link's thread has stopped.
    package init(
        descriptor: Int32, name: String, system: SystemCalls = .live, onClose: @escaping @Sendable () -> Void = {},
        release: @escaping @Sendable (Int32) -> Void
    ) throws(TransportError) {
        let pipeEnds: (read: Int32, write: Int32)
        switch system.pipe() {
        case .success(let ends): pipeEnds = ends
        case .failure(let error):
            onClose()
            release(descriptor)
            throw TransportError(code: .openFailed, message: "cannot create a wake-up pipe for \(name)", errno: error.rawValue)
        }
        _ = system.setCloseOnExec(pipeEnds.read)
        _ = system.setCloseOnExec(pipeEnds.write)
        _ = system.setNonblocking(pipeEnds.write)
        self.descriptor = descriptor
        self.wakeRead = pipeEnds.read
        self.wakeWrite = pipeEnds.write
        self.name = name
        self.release = release
        self.onClose = onClose
        self.system = system
        self.writer = DispatchQueue(label: "cameracontrol.transport.writer.\(name)")
    }

    // MARK: ByteTransport

    /// Writes all of `bytes` (see ``ByteTransport/send(_:)``). In event-loop mode the bytes join the
    /// loop's write queue, in order with ``EventLoopControl/write(_:)``, and this returns once they are queued.
    package func send(_ bytes: [UInt8]) async throws(TransportError) {
        let (isClosed, registration) = sendMode()
        if isClosed {
            throw TransportError(code: .closed, message: "\(name) is closed")
        }
        guard !bytes.isEmpty else { return }
        if let registration {
            bytes.withUnsafeBytes { registration.write($0) }
            return
        }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, TransportError>, Never>) in
            writer.async { [self] in
                continuation.resume(returning: writeAll(bytes))
            }
        }
        try result.get()
    }

    /// Whether the link is closed, and its registration when an event loop drives it.
    private func sendMode() -> (closed: Bool, registration: LoopRegistration?) {
        lock.lock()
        defer { lock.unlock() }
        if case .eventLoop(let registration) = mode { return (closed, registration) }
        return (closed, nil)
    }

    /// The next received bytes (see ``ByteTransport/receive()``). The first call starts the reader thread.
    ///
    /// - Throws: as ``ByteTransport/receive()``; ``TransportError/Code/concurrentReceive`` when the link is
    ///   driven by an event loop.
    package func receive() async throws(TransportError) -> [UInt8] {
        try startReaderIfIdle()
        return try await inbound.pop()
    }

    /// The first ``receive()`` starts the reader thread (stream mode).
    private func startReaderIfIdle() throws(TransportError) {
        lock.lock()
        switch mode {
        case .idle where !closed:
            mode = .stream
            threadRunning = true
            lock.unlock()
            startNamedThread(FileDescriptorLink.readerThreadName) { [self] in readLoop() }
        case .eventLoop:
            lock.unlock()
            throw TransportError(code: .concurrentReceive, message: "\(name) is driven by an event loop")
        default:
            lock.unlock()
        }
    }

    /// Stops the link's thread, runs `onClose` and releases the descriptor soon (see ``ByteTransport/close()``).
    package func close() {
        lock.lock()
        if closed {
            lock.unlock()
            return
        }
        closed = true
        var registration: LoopRegistration?
        if case .eventLoop(let registered) = mode { registration = registered }
        lock.unlock()
        onClose()
        if let registration {
            registration.close(TransportError(code: .closed, message: "\(name) was closed"))
        } else {
            wake()  // the reader thread (stream mode); in loop mode the loop owns the waking
        }
        inbound.finish(TransportError(code: .closed, message: "\(name) was closed"), discardBuffered: true)
        writer.async { [self] in releaseIfDone() }
    }

    // MARK: EventLoopTransport

    /// Registers the link on `loop` (a ``PollEventLoop``), or on a loop of its own that ends with it, for
    /// `delegate` (see ``EventLoopTransport/startEventLoop(delegate:on:)``).
    ///
    /// - Returns: nil when the link was already used through ``receive()``, already runs on a loop, is
    ///   closed, or no loop could be made.
    package func startEventLoop(delegate: any EventLoopDelegate, on loop: (any EventLoop)?) -> (any EventLoopControl)? {
        lock.lock()
        defer { lock.unlock() }
        guard case .idle = mode, !closed else { return nil }
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
        threadRunning = true
        let registration = pollLoop.register(descriptor: descriptor, name: name, delegate: delegate) { [self] in
            threadStopped()
        }
        if own { pollLoop.shutdown() }  // it ends once this link has ended
        mode = .eventLoop(registration)
        return registration
    }

    // MARK: Private

    /// Wakes the link's thread out of `poll()` (one byte on the self-pipe; a full pipe wakes it already).
    private func wake() {
        let one: [UInt8] = [1]
        _ = one.withUnsafeBytes { system.write(wakeWrite, $0) }
    }

    /// Runs on the writer queue: releases the descriptor once closed and the link's thread has stopped.
    private func releaseIfDone() {
        lock.lock()
        let ready = closed && !threadRunning && !released
        if ready { released = true }
        lock.unlock()
        guard ready else { return }
        release(descriptor)
    }

    deinit {
        // The wake-up pipe lives as long as the link object: a wake() racing the release (close() while
        // the reader ends by itself) writes into this pipe, never into a closed or reused descriptor.
        _ = system.close(wakeRead)
        _ = system.close(wakeWrite)
    }

    /// The reader or the loop no longer touches the descriptor: lets `releaseIfDone` release it.
    private func threadStopped() {
        lock.lock()
        threadRunning = false
        lock.unlock()
        writer.async { [self] in releaseIfDone() }
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
    /// a row on a terminal. (Stream mode's reader and the event loop share this.)
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

    /// Stream mode: reads into ``inbound`` until the end or ``close()``.
    private func readLoop() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var ending = TransportError(code: .closed, message: "\(name) was closed")
        var local = false
        var emptyReads = 0
        let isTerminal = system.isTerminal(descriptor)
        var fds = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
        ]
        loop: while true {
            fds[0].revents = 0
            fds[1].revents = 0
            if case .failure(let failure) = system.poll(&fds, -1) {
                let error = failure.rawValue
                if error == EINTR || error == EAGAIN { continue }
                ending = TransportError(code: .io, message: "poll on \(name) failed", errno: error)
                break
            }
            if fds[1].revents != 0 {
                local = true
                break
            }
            let events = Int32(fds[0].revents)
            if events & Int32(POLLNVAL) != 0 {
                ending = TransportError(code: .io, message: "\(name): descriptor is not open")
                break
            }
            guard events & Int32(POLLIN | POLLHUP | POLLERR) != 0 else { continue }
            switch Self.readOnce(
                system: system, descriptor: descriptor, name: name, into: &buffer, events: events, isTerminal: isTerminal,
                emptyReads: &emptyReads)
            {
            case .bytes(let count):
                if !inbound.pushBlocking(Array(buffer[0..<count])) {
                    local = true
                    break loop
                }
            case .again:
                continue
            case .end(let error):
                ending = error
                break loop
            }
        }
        if local {
            inbound.finish(TransportError(code: .closed, message: "\(name) was closed"), discardBuffered: true)
        } else {
            inbound.finish(ending, discardBuffered: false)
        }
        threadStopped()
    }

    /// Stream mode, on the writer queue: writes all of `bytes`, waiting in `poll()` while the device is full.
    private func writeAll(_ bytes: [UInt8]) -> Result<Void, TransportError> {
        var offset = 0
        while offset < bytes.count {
            lock.lock()
            let isClosed = closed
            lock.unlock()
            if isClosed {
                return .failure(TransportError(code: .closed, message: "\(name) was closed"))
            }
            let result = bytes.withUnsafeBytes { raw in
                system.write(descriptor, UnsafeRawBufferPointer(rebasing: raw[offset...]))
            }
            let error: Int32
            switch result {
            case .success(let written):
                offset += written
                continue
            case .failure(let failure):
                error = failure.rawValue
            }
            switch error {
            case EINTR:
                continue
            case EAGAIN:
                var fds = [
                    pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0),
                    pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                ]
                _ = system.poll(&fds, 100)
                if fds[1].revents != 0 {
                    return .failure(TransportError(code: .closed, message: "\(name) was closed"))
                }
                if Int32(fds[0].revents) & Int32(POLLHUP | POLLERR | POLLNVAL) != 0 {
                    return .failure(TransportError(code: .closed, message: "the peer of \(name) hung up"))
                }
            case EIO, EPIPE:
                return .failure(TransportError(code: .closed, message: "the peer of \(name) closed", errno: error))
            default:
                return .failure(TransportError(code: .io, message: "write to \(name) failed", errno: error))
            }
        }
        return .success(())
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
