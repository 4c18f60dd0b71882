import CSystemShim
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
final class FileDescriptorLink: @unchecked Sendable {
    /// How many received bytes may wait for the consumer before the reader pauses.
    static let receiveCapacity = 64 * 1024

    let name: String
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

    /// Takes ownership of `descriptor` (already open, non-blocking) and starts the reader thread.
    /// `release` closes it when the link is done.
    init(descriptor: Int32, name: String, release: @escaping @Sendable (Int32) -> Void) throws(TransportError) {
        var pipeEnds: [Int32] = [-1, -1]
        if pipe(&pipeEnds) != 0 {
            let error = errno
            release(descriptor)
            throw TransportError(code: .openFailed, message: "cannot create a wake-up pipe for \(name)", errno: error)
        }
        _ = cc_shim_set_cloexec(pipeEnds[0])
        _ = cc_shim_set_cloexec(pipeEnds[1])
        _ = cc_shim_set_nonblocking(pipeEnds[1], 1)
        self.descriptor = descriptor
        self.wakeRead = pipeEnds[0]
        self.wakeWrite = pipeEnds[1]
        self.name = name
        self.release = release
        self.writer = DispatchQueue(label: "cameracontrol.transport.writer.\(name)")
        let thread = Thread { [self] in
            self.readLoop()
        }
        thread.name = "cameracontrol.transport.reader"
        thread.start()
    }

    // MARK: ByteTransport

    func send(_ bytes: [UInt8]) async throws(TransportError) {
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

    func receive() async throws(TransportError) -> [UInt8] {
        try await inbound.pop()
    }

    func close() {
        lock.lock()
        if closed {
            lock.unlock()
            return
        }
        closed = true
        lock.unlock()
        var one: UInt8 = 1
        _ = write(wakeWrite, &one, 1)
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
        _ = systemClose(wakeRead)
        _ = systemClose(wakeWrite)
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
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                let error = errno
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
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    if !inbound.pushBlocking(Array(buffer[0..<count])) {
                        local = true
                        break
                    }
                    continue
                }
                if count == 0 {
                    ending = TransportError(code: .closed, message: "the peer of \(name) closed (end of file)")
                    break
                }
                let error = errno
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
            let written = bytes.withUnsafeBytes { raw in
                write(descriptor, raw.baseAddress! + offset, raw.count - offset)
            }
            if written >= 0 {
                offset += written
                continue
            }
            let error = errno
            switch error {
            case EINTR:
                continue
            case EAGAIN:
                var fds = [
                    pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0),
                    pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                ]
                _ = poll(&fds, 2, 100)
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

/// `close(2)`, named so it does not clash with the `close()` methods of the transports.
@discardableResult
func systemClose(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
        return Glibc.close(descriptor)
    #else
        return Darwin.close(descriptor)
    #endif
}
