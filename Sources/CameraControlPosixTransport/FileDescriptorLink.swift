import CSystemShim
import CameraControlTransport
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The I/O engine shared by ``PTYTransport`` and ``SerialPortTransport``: one open, non-blocking
/// descriptor and one thread of its own that `poll()`s it, driven one of two ways, chosen by the first use:
///
/// - **As a ``ByteTransport``** (the first call is ``receive()``): the thread reads into a bounded
///   ``ChunkQueue`` that ``receive()`` drains, and a serial queue writes what ``send(_:)`` is given.
/// - **As an event loop** (the first call is ``startEventLoop(delegate:)``, see ``EventLoopTransport``):
///   the thread hands each read to the delegate in place, writes come straight from the thread that
///   produced them (what the descriptor does not take at once is written by the loop when `poll()` says it
///   can), and `poll()`'s timeout is the delegate's timer. Nothing else wakes: an idle link costs one
///   wake-up per byte burst and per timer.
///
/// No thread starts before that first use. A self-pipe wakes the thread when ``close()`` is called (and,
/// in event-loop mode, when another thread brings the timer forward or leaves bytes to write), so closing
/// is prompt. The descriptor is released (by `release`, on the writer queue) only once the thread has
/// stopped and the transport is closed, so no thread ever touches a closed or reused descriptor.
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
    package static let writeQueueLimit = 1 << 20

    /// How the link is driven; decided by the first ``receive()`` or ``startEventLoop(delegate:)``.
    private enum Mode {
        /// Not yet used: no thread runs, nothing is read.
        case idle
        /// ``receive()`` / ``send(_:)``: the reader thread fills ``inbound``.
        case stream
        /// The event loop runs for this delegate.
        case eventLoop(any EventLoopDelegate)
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
    /// Event-loop mode: the thread running the loop.
    private var loopThread: pthread_t?
    /// Event-loop mode: when ``EventLoopDelegate/eventLoopTimerFired()`` is due.
    private var timerDeadline: ContinuousClock.Instant?
    /// Event-loop mode: bytes the descriptor did not take yet, in order, from `pendingStart`.
    private var pending: [UInt8] = []
    private var pendingStart = 0
    /// Event-loop mode: a write failed (or the queue overflowed); the loop ends with this.
    private var writeFailure: TransportError?
    /// Event-loop mode: jobs of tasks that prefer the loop's task executor, run on its thread in order.
    private var jobs: [UnownedJob] = []
    /// Event-loop mode: the loop still runs jobs (false once it ended: later jobs run elsewhere).
    private var runsJobs = false

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
        _ = system.setNonblocking(pipeEnds.read)
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
        let (isClosed, looping) = sendMode()
        if isClosed {
            throw TransportError(code: .closed, message: "\(name) is closed")
        }
        guard !bytes.isEmpty else { return }
        if looping {
            bytes.withUnsafeBytes { loopWrite($0) }
            return
        }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, TransportError>, Never>) in
            writer.async { [self] in
                continuation.resume(returning: writeAll(bytes))
            }
        }
        try result.get()
    }

    /// Whether the link is closed, and whether an event loop drives it.
    private func sendMode() -> (closed: Bool, looping: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if case .eventLoop = mode { return (closed, true) }
        return (closed, false)
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
            startThread(name: FileDescriptorLink.readerThreadName) { [self] in readLoop() }
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
        lock.unlock()
        onClose()
        wake()
        inbound.finish(TransportError(code: .closed, message: "\(name) was closed"), discardBuffered: true)
        writer.async { [self] in releaseIfDone() }
    }

    // MARK: EventLoopTransport

    /// Runs the link as an event loop for `delegate` (see ``EventLoopTransport/startEventLoop(delegate:)``).
    ///
    /// - Returns: nil when the link was already used through ``receive()``, already runs a loop, or is closed.
    package func startEventLoop(delegate: any EventLoopDelegate) -> (any EventLoopControl)? {
        lock.lock()
        guard case .idle = mode, !closed else {
            lock.unlock()
            return nil
        }
        mode = .eventLoop(delegate)
        threadRunning = true
        runsJobs = true
        lock.unlock()
        let executor = LoopExecutor(link: self)
        startThread(name: FileDescriptorLink.loopThreadName) { [self] in eventLoop(delegate, executor: executor) }
        return LoopControl(link: self, taskExecutor: executor)
    }

    /// The controls handed out by ``startEventLoop(delegate:)``.
    private struct LoopControl: EventLoopControl {
        let link: FileDescriptorLink
        let taskExecutor: any TaskExecutor

        func write(_ bytes: UnsafeRawBufferPointer) {
            link.loopWrite(bytes)
        }

        func setTimer(after delay: Duration?) {
            link.setTimer(after: delay)
        }
    }

    /// The event loop's thread as a task executor (see ``EventLoopControl/taskExecutor``).
    private final class LoopExecutor: TaskExecutor {
        let link: FileDescriptorLink

        init(link: FileDescriptorLink) {
            self.link = link
        }

        func enqueue(_ job: consuming ExecutorJob) {
            link.enqueue(UnownedJob(job), on: self)
        }
    }

    /// Queues `job` for the loop's thread, or runs it on another thread once the loop ended.
    private func enqueue(_ job: UnownedJob, on executor: LoopExecutor) {
        lock.lock()
        guard runsJobs else {
            lock.unlock()
            DispatchQueue.global().async { job.runSynchronously(on: executor.asUnownedTaskExecutor()) }
            return
        }
        jobs.append(job)
        let needsWake = jobs.count == 1 && !onLoopThreadLocked
        lock.unlock()
        if needsWake { wake() }
    }

    /// Runs the jobs queued so far (on the loop's thread); true when any ran.
    private func runJobs(_ executor: LoopExecutor) -> Bool {
        lock.lock()
        guard !jobs.isEmpty else {
            lock.unlock()
            return false
        }
        let ready = jobs
        jobs.removeAll(keepingCapacity: true)
        lock.unlock()
        for job in ready {
            job.runSynchronously(on: executor.asUnownedTaskExecutor())
        }
        return true
    }

    // MARK: Private

    /// Starts `body` on a thread of its own, named `name` for the OS too (`top -H`, debuggers; at most
    /// 15 characters on Linux).
    private func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            _ = cc_shim_set_thread_name(name)
            body()
        }
        thread.name = name
        thread.start()
    }

    /// Wakes the link's thread out of `poll()` (one byte on the self-pipe; a full pipe wakes it already).
    private func wake() {
        let one: [UInt8] = [1]
        _ = one.withUnsafeBytes { system.write(wakeWrite, $0) }
    }

    /// True on the event loop's own thread (call under `lock`).
    private var onLoopThreadLocked: Bool {
        guard let loopThread else { return false }
        return pthread_equal(loopThread, pthread_self()) != 0
    }

    /// Runs on the writer queue: releases the descriptor once closed and the link's thread has stopped.
    private func releaseIfDone() {
        lock.lock()
        let ready = closed && !threadRunning && !released
        if ready { released = true }
        lock.unlock()
        guard ready else { return }
        release(descriptor)
        _ = system.close(wakeRead)
        _ = system.close(wakeWrite)
    }

    /// The thread has stopped: lets `releaseIfDone` release the descriptor.
    private func threadStopped() {
        lock.lock()
        threadRunning = false
        loopThread = nil
        lock.unlock()
        writer.async { [self] in releaseIfDone() }
    }

    /// What one read of the descriptor gave.
    private enum ReadOutcome {
        /// `count` bytes are in the buffer.
        case bytes(Int)
        /// Nothing this time (a spurious wake-up, `EINTR`, another reader took the bytes): poll again.
        case again
        /// The stream ended.
        case end(TransportError)
    }

    /// Reads once after `poll()` reported `events` on the descriptor; `emptyReads` counts 0-byte reads in
    /// a row on a terminal.
    private func readOnce(
        into buffer: inout [UInt8], events: Int32, isTerminal: Bool, emptyReads: inout Int
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
            switch readOnce(into: &buffer, events: events, isTerminal: isTerminal, emptyReads: &emptyReads) {
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

    /// Event-loop mode: reads, writes and times for `delegate` until the end or ``close()``.
    private func eventLoop(_ delegate: any EventLoopDelegate, executor: LoopExecutor) {
        lock.lock()
        loopThread = pthread_self()
        lock.unlock()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var drain = [UInt8](repeating: 0, count: 64)
        var ending = TransportError(code: .closed, message: "\(name) was closed")
        var emptyReads = 0
        let isTerminal = system.isTerminal(descriptor)
        var fds = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
        ]
        loop: while true {
            while runJobs(executor) {}
            lock.lock()
            if closed {
                lock.unlock()
                break
            }
            if let writeFailure {
                ending = writeFailure
                lock.unlock()
                break
            }
            let wantsOut = pendingStart < pending.count
            let deadline = timerDeadline
            var timeout: Int32 = -1
            if let deadline {
                let remaining = ContinuousClock.now.duration(to: deadline)
                if remaining <= .zero {
                    timerDeadline = nil
                    lock.unlock()
                    delegate.eventLoopTimerFired()
                    continue
                }
                timeout = Self.pollTimeout(remaining)
            }
            lock.unlock()
            fds[0].events = Int16(wantsOut ? POLLIN | POLLOUT : POLLIN)
            fds[0].revents = 0
            fds[1].revents = 0
            if case .failure(let failure) = system.poll(&fds, timeout) {
                let error = failure.rawValue
                if error == EINTR || error == EAGAIN { continue }
                ending = TransportError(code: .io, message: "poll on \(name) failed", errno: error)
                break
            }
            if fds[1].revents != 0 {
                _ = drain.withUnsafeMutableBytes { system.read(wakeRead, $0) }
            }
            let events = Int32(fds[0].revents)
            if events & Int32(POLLNVAL) != 0 {
                ending = TransportError(code: .io, message: "\(name): descriptor is not open")
                break
            }
            if events & Int32(POLLOUT) != 0 {
                lock.lock()
                flushPendingLocked()
                lock.unlock()
            }
            guard events & Int32(POLLIN | POLLHUP | POLLERR) != 0 else { continue }
            switch readOnce(into: &buffer, events: events, isTerminal: isTerminal, emptyReads: &emptyReads) {
            case .bytes(let count):
                buffer.withUnsafeBytes { delegate.eventLoopReceived(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            case .again:
                continue
            case .end(let error):
                ending = error
                break loop
            }
        }
        lock.lock()
        let local = closed
        timerDeadline = nil
        pending = []
        pendingStart = 0
        lock.unlock()
        inbound.finish(TransportError(code: .closed, message: "\(name) was closed"), discardBuffered: true)
        delegate.eventLoopEnded(local ? TransportError(code: .closed, message: "\(name) was closed") : ending)
        // What the ending resumed runs here still; from now on jobs run elsewhere.
        while runJobs(executor) {}
        lock.lock()
        runsJobs = false
        lock.unlock()
        while runJobs(executor) {}
        threadStopped()
    }

    /// A `poll()` timeout in whole milliseconds that does not end before `remaining` (at most a day).
    static func pollTimeout(_ remaining: Duration) -> Int32 {
        let (seconds, attoseconds) = remaining.components
        if seconds >= 86_400 { return 86_400_000 }
        let millis = seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(max(1, millis))
    }

    /// Event-loop mode: sets the timer (see ``EventLoopControl/setTimer(after:)``).
    private func setTimer(after delay: Duration?) {
        let deadline = delay.map { ContinuousClock.now.advanced(by: $0) }
        lock.lock()
        let previous = timerDeadline
        timerDeadline = deadline
        var needsWake = false
        if let deadline, !closed, !onLoopThreadLocked {
            needsWake = previous.map { deadline < $0 } ?? true
        }
        lock.unlock()
        if needsWake { wake() }
    }

    /// Event-loop mode: writes what the descriptor takes now, queues the rest for the loop (see
    /// ``EventLoopControl/write(_:)``).
    private func loopWrite(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        lock.lock()
        guard !closed, writeFailure == nil, threadRunning else {
            lock.unlock()
            return
        }
        let wasIdle = pendingStart == pending.count
        var offset = 0
        if wasIdle {
            offset = writeSome(bytes)
        }
        var needsWake = false
        if writeFailure != nil {
            needsWake = !onLoopThreadLocked
        } else if offset < bytes.count {
            if wasIdle {
                pending.removeAll(keepingCapacity: true)
                pendingStart = 0
            }
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            if pending.count - pendingStart > Self.writeQueueLimit {
                writeFailure = TransportError(
                    code: .io, message: "\(name) does not read: \(Self.writeQueueLimit) bytes wait to be written")
            }
            needsWake = !onLoopThreadLocked
        }
        lock.unlock()
        if needsWake { wake() }
    }

    /// Writes from `bytes` until the descriptor would block; returns how many were written. A failure
    /// sets `writeFailure`. Call under `lock`.
    private func writeSome(_ bytes: UnsafeRawBufferPointer) -> Int {
        var offset = 0
        while offset < bytes.count {
            switch system.write(descriptor, UnsafeRawBufferPointer(rebasing: bytes[offset...])) {
            case .success(let written):
                offset += written
            case .failure(let failure):
                switch failure.rawValue {
                case EINTR:
                    continue
                case EAGAIN:
                    return offset
                case EIO, EPIPE:
                    writeFailure = TransportError(code: .closed, message: "the peer of \(name) closed", errno: failure.rawValue)
                    return offset
                default:
                    writeFailure = TransportError(code: .io, message: "write to \(name) failed", errno: failure.rawValue)
                    return offset
                }
            }
        }
        return offset
    }

    /// Writes queued bytes now that the descriptor takes some. Call under `lock`.
    private func flushPendingLocked() {
        guard pendingStart < pending.count else { return }
        let written = pending.withUnsafeBytes { writeSome(UnsafeRawBufferPointer(rebasing: $0[pendingStart...])) }
        pendingStart += written
        if pendingStart == pending.count {
            pending.removeAll(keepingCapacity: pending.capacity <= 64 * 1024)
            pendingStart = 0
        }
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
