import CameraControlTransport
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The I/O engine shared by ``PTYTransport`` and ``SerialPortTransport``: one open, non-blocking
/// descriptor, a dedicated reader thread that `poll()`s it, and a serial queue that writes.
///
/// A self-pipe wakes the reader and any blocked writer when ``close()`` is called, so closing is prompt.
/// The descriptor is released (by `release`, on the writer queue) only once the reader thread has stopped
/// and the transport is closed, so no thread ever touches a closed or reused descriptor.
///
/// Every OS call goes through ``SystemCalls`` (``SystemCalls/live`` unless a test scripts it). `EINTR` is
/// retried; `EAGAIN` waits in `poll()`; a short write is continued; the end of the stream (end of file,
/// a hang-up, `EIO`, `EPIPE`) ends it with ``TransportError/Code/closed``; any other failure with
/// ``TransportError/Code/io``.
package final class FileDescriptorLink: @unchecked Sendable {
    /// How many received bytes may wait for the consumer before the reader pauses.
    package static let receiveCapacity = 64 * 1024

    /// The name for messages.
    package let name: String
    private let descriptor: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let inbound = ChunkQueue(capacity: FileDescriptorLink.receiveCapacity)
    private let writer: DispatchQueue
    private let lock = NSLock()
    private var closed = false
    private var readerDone = false
    private var released = false
    private let release: @Sendable (Int32) -> Void
    private let onClose: @Sendable () -> Void
    private let system: SystemCalls

    /// Takes ownership of `descriptor` (already open, non-blocking) and starts the reader thread.
    ///
    /// `onClose` runs once, synchronously, in ``close()`` (a port lock is released there, so the port can be
    /// opened again at once); `release` closes the descriptor once the reader has stopped.
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
        let thread = Thread { [self] in
            self.readLoop()
        }
        thread.name = "cameracontrol.transport.reader"
        thread.start()
    }

    // MARK: ByteTransport

    /// Writes all of `bytes` (see ``ByteTransport/send(_:)``).
    package func send(_ bytes: [UInt8]) async throws(TransportError) {
        if isClosed {
            throw TransportError(code: .closed, message: "\(name) is closed")
        }
        guard !bytes.isEmpty else { return }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, TransportError>, Never>) in
            writer.async { [self] in
                continuation.resume(returning: writeAll(bytes))
            }
        }
        try result.get()
    }

    /// The next received bytes (see ``ByteTransport/receive()``).
    package func receive() async throws(TransportError) -> [UInt8] {
        try await inbound.pop()
    }

    /// Stops the reader, runs `onClose` and releases the descriptor soon (see ``ByteTransport/close()``).
    package func close() {
        lock.lock()
        if closed {
            lock.unlock()
            return
        }
        closed = true
        lock.unlock()
        onClose()
        let one: [UInt8] = [1]
        _ = one.withUnsafeBytes { system.write(wakeWrite, $0) }
        inbound.finish(TransportError(code: .closed, message: "\(name) was closed"), discardBuffered: true)
        writer.async { [self] in releaseIfDone() }
    }

    // MARK: Private

    private var isClosed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return closed
    }

    /// Runs on the writer queue: releases the descriptor once closed and the reader has stopped.
    private func releaseIfDone() {
        lock.lock()
        let ready = closed && readerDone && !released
        if ready { released = true }
        lock.unlock()
        guard ready else { return }
        release(descriptor)
        _ = system.close(wakeRead)
        _ = system.close(wakeWrite)
    }

    private func readLoop() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var ending = TransportError(code: .closed, message: "\(name) was closed")
        var local = false
        loop: while true {
            var fds = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
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
            if events & Int32(POLLIN | POLLHUP | POLLERR) != 0 {
                let result = buffer.withUnsafeMutableBytes { system.read(descriptor, $0) }
                let error: Int32
                switch result {
                case .success(0):
                    ending = TransportError(code: .closed, message: "the peer of \(name) closed (end of file)")
                    break loop
                case .success(let count):
                    if !inbound.pushBlocking(Array(buffer[0..<min(count, buffer.count)])) {
                        local = true
                        break loop
                    }
                    continue
                case .failure(let failure):
                    error = failure.rawValue
                }
                switch error {
                case EINTR, EAGAIN:
                    if events & Int32(POLLHUP | POLLERR) != 0 && events & Int32(POLLIN) == 0 {
                        ending = TransportError(code: .closed, message: "the peer of \(name) hung up")
                        break loop
                    }
                    continue
                case EIO:
                    ending = TransportError(code: .closed, message: "the peer of \(name) closed", errno: error)
                    break loop
                default:
                    ending = TransportError(code: .io, message: "read from \(name) failed", errno: error)
                    break loop
                }
            }
        }
        if local {
            inbound.finish(TransportError(code: .closed, message: "\(name) was closed"), discardBuffered: true)
        } else {
            inbound.finish(ending, discardBuffered: false)
        }
        lock.lock()
        readerDone = true
        lock.unlock()
        writer.async { [self] in releaseIfDone() }
    }

    /// Runs on the writer queue.
    private func writeAll(_ bytes: [UInt8]) -> Result<Void, TransportError> {
        var offset = 0
        while offset < bytes.count {
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
