import CameraControlPosixTransport
import CameraControlTransport
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A scripted stand-in for the OS behind ``SystemCalls``: one device descriptor whose `poll`, `read`,
/// `write` and `flock` results come from scripts, and an event loop's wake-up pipe that works like a real
/// one. No real descriptor is involved.
final class ScriptedSystem: @unchecked Sendable {
    /// What one `poll()` of the device reports.
    enum PollStep {
        /// These `revents` on the device.
        case events(Int32)
        /// `poll` fails with this errno.
        case fail(Int32)
    }

    /// What one `read()` of the device returns.
    enum ReadStep {
        /// These bytes.
        case bytes([UInt8])
        /// 0: end of file.
        case endOfFile
        /// -1 with this errno.
        case fail(Int32)
    }

    /// What one `write()` to the device does.
    enum WriteStep {
        /// Takes at most this many bytes (a short write).
        case accept(Int)
        /// -1 with this errno.
        case fail(Int32)
    }

    static let device: Int32 = 50
    static let wakeRead: Int32 = 51
    static let wakeWrite: Int32 = 52
    static let pid: Int32 = 4242

    private let condition = NSCondition()
    private var pollSteps: [PollStep]
    private var readSteps: [ReadStep]
    private var writeSteps: [WriteStep]
    private var flockResults: [Int32]
    private var openResult: Result<Int32, SystemErrno>
    private let pipeResult: Result<(read: Int32, write: Int32), SystemErrno>
    private var woken = false
    private var written: [UInt8] = []
    private var log: [String] = []
    private var pollCount = 0
    private let terminal: Bool

    init(
        polls: [PollStep] = [], reads: [ReadStep] = [], writes: [WriteStep] = [], flockErrors: [Int32] = [],
        open: Result<Int32, SystemErrno> = .success(ScriptedSystem.device), terminal: Bool = true,
        pipe: Result<(read: Int32, write: Int32), SystemErrno> = .success((ScriptedSystem.wakeRead, ScriptedSystem.wakeWrite))
    ) {
        self.terminal = terminal
        pipeResult = pipe
        pollSteps = polls
        readSteps = reads
        writeSteps = writes
        flockResults = flockErrors
        openResult = open
    }

    /// The bytes written to the device so far.
    var bytesWritten: [UInt8] { condition.withLock { written } }
    /// The calls made so far that touch locks and descriptors, e.g. `flock(50, 6)`, `exclusive(50, true)`.
    var calls: [String] { condition.withLock { log } }
    /// How many scripted polls of the device the link's loop has taken.
    var readerPolls: Int { condition.withLock { pollCount } }

    /// A link over the scripted device.
    func makeLink() throws(TransportError) -> FileDescriptorLink {
        FileDescriptorLink(descriptor: Self.device, name: "scripted", system: system) { [self] descriptor in
            _ = system.close(descriptor)
        }
    }

    private func record(_ call: String) {
        condition.withLock { log.append(call) }
    }

    /// One `poll()` of the link's event loop: the wake-up pipe when it was written to, the device's
    /// `POLLOUT` at once when asked for, otherwise the next scripted step; with nothing scripted it sleeps
    /// like a quiet device until woken or timed out.
    private func poll(_ fds: inout [pollfd], timeout: Int32) -> Result<Int32, SystemErrno> {
        condition.lock()
        defer { condition.unlock() }
        let wake = fds.firstIndex { $0.fd == Self.wakeRead }
        let device = fds.firstIndex { $0.fd == Self.device }
        let deadline = timeout >= 0 ? Date(timeIntervalSinceNow: Double(timeout) / 1_000) : nil
        while true {
            if woken, let wake {
                fds[wake].revents = Int16(POLLIN)
                return .success(1)
            }
            if let device, Int32(fds[device].events) & Int32(POLLOUT) != 0 {
                log.append("poll-out")
                fds[device].revents = Int16(POLLOUT)
                return .success(1)
            }
            if let device, !pollSteps.isEmpty {
                pollCount += 1
                switch pollSteps.removeFirst() {
                case .events(let events):
                    fds[device].revents = Int16(truncatingIfNeeded: events)
                    return .success(1)
                case .fail(let error):
                    return .failure(SystemErrno(error))
                }
            }
            if let deadline {
                if !condition.wait(until: deadline) { return .success(0) }
            } else {
                condition.wait()  // nothing scripted: block like a quiet device until woken
            }
        }
    }

    private func read(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Result<Int, SystemErrno> {
        condition.lock()
        defer { condition.unlock() }
        if descriptor == Self.wakeRead {
            guard woken else { return .failure(SystemErrno(EAGAIN)) }
            woken = false
            return .success(1)
        }
        guard !readSteps.isEmpty else { return .failure(SystemErrno(EAGAIN)) }
        switch readSteps.removeFirst() {
        case .bytes(let bytes):
            precondition(bytes.count <= buffer.count)
            buffer.copyBytes(from: bytes)
            return .success(bytes.count)
        case .endOfFile:
            return .success(0)
        case .fail(let error):
            return .failure(SystemErrno(error))
        }
    }

    private func write(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) -> Result<Int, SystemErrno> {
        condition.lock()
        defer { condition.unlock() }
        if descriptor == Self.wakeWrite {
            woken = true
            condition.broadcast()
            return .success(buffer.count)
        }
        let step = writeSteps.isEmpty ? .accept(buffer.count) : writeSteps.removeFirst()
        switch step {
        case .accept(let limit):
            let count = min(limit, buffer.count)
            written += buffer.prefix(count)
            return .success(count)
        case .fail(let error):
            log.append("write-failed(\(error))")
            return .failure(SystemErrno(error))
        }
    }

    private func flock(_ descriptor: Int32, _ operation: Int32) -> Result<Void, SystemErrno> {
        condition.lock()
        defer { condition.unlock() }
        log.append("flock(\(descriptor), \(operation))")
        if operation & LOCK_UN == 0, !flockResults.isEmpty {
            let error = flockResults.removeFirst()
            if error != 0 { return .failure(SystemErrno(error)) }
        }
        return .success(())
    }

    /// The scripted ``SystemCalls``.
    var system: SystemCalls {
        SystemCalls(
            open: { [self] path, _, _ in
                if path.hasPrefix("/dev/") { return condition.withLock { openResult } }
                return .failure(SystemErrno(ENOENT))
            },
            close: { [self] descriptor in
                record("close(\(descriptor))")
                return .success(())
            },
            read: { [self] descriptor, buffer in read(descriptor, buffer) },
            write: { [self] descriptor, buffer in write(descriptor, buffer) },
            poll: { [self] fds, timeout in poll(&fds, timeout: timeout) },
            pipe: { [pipeResult] in pipeResult },
            setNonblocking: { _ in .success(()) },
            setCloseOnExec: { _ in .success(()) },
            isTerminal: { [terminal] _ in terminal },
            configureRaw: { [self] descriptor, _ in
                record("raw(\(descriptor))")
                return .success(())
            },
            setExclusive: { [self] descriptor, exclusive in
                record("exclusive(\(descriptor), \(exclusive))")
                return .success(())
            },
            flock: { [self] descriptor, operation in flock(descriptor, operation) },
            fileType: { _ in .success(.characterDevice) },
            realpath: { $0 },
            readlink: { _ in nil },
            link: { _, _ in .failure(SystemErrno(EACCES)) },
            unlink: { _ in .failure(SystemErrno(ENOENT)) },
            isWritable: { _ in false },
            processExists: { _ in false },
            processID: { ScriptedSystem.pid },
            directoryEntries: { _ in nil }
        )
    }
}
