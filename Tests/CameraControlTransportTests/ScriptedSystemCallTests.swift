import CameraControlPosixTransport
import CameraControlTestSupport
import CameraControlTransport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The descriptor engine and the port claim against a scripted OS: no real descriptor.
@Suite("Posix transport over scripted system calls")
struct ScriptedSystemCallTests {
    typealias Poll = ScriptedSystem.PollStep
    typealias Read = ScriptedSystem.ReadStep

    // MARK: Reading

    @Test("EINTR from poll and from read is retried; the bytes arrive and the link stays open")
    func interruptedCallsAreRetried() async throws {
        let system = ScriptedSystem(
            polls: [.fail(EINTR), .events(POLLIN), .events(POLLIN)],
            reads: [.fail(EINTR), .bytes([7, 8, 9])])
        let link = try system.makeLink()
        #expect(try await receiveBytes(3, from: link) == [7, 8, 9])
        #expect(system.readerPolls == 3)
        link.close()
        let ending = await receiveUntilEnd(from: link)
        #expect(ending.error?.code == .closed)
        #expect(ending.error?.message.contains("was closed") == true)
    }

    @Test("EAGAIN from read (a spurious wake-up) polls again instead of ending the stream")
    func wouldBlockPollsAgain() async throws {
        let system = ScriptedSystem(polls: [.events(POLLIN), .events(POLLIN)], reads: [.fail(EAGAIN), .bytes([1])])
        let link = try system.makeLink()
        defer { link.close() }
        #expect(try await link.receive() == [1])
        #expect(system.readerPolls == 2)
    }

    @Test(
        "read returning 0 with a hang-up, or on a file that is not a terminal, ends the stream with .closed after the bytes before it",
        arguments: [(POLLIN | POLLHUP, true), (POLLIN, false)])
    func endOfFile(_ events: Int32, terminal: Bool) async throws {
        let system = ScriptedSystem(
            polls: [.events(POLLIN), .events(events)], reads: [.bytes([1, 2]), .endOfFile], terminal: terminal)
        let link = try system.makeLink()
        defer { link.close() }
        let ending = await receiveUntilEnd(from: link)
        #expect(ending.bytes == [1, 2])
        #expect(ending.error?.code == .closed)
        #expect(ending.error?.message == "the peer of scripted closed (end of file)")
    }

    @Test("on a terminal, a read of 0 bytes without a hang-up (another reader took them) does not end the stream")
    func emptyReadOnATerminalIsNotTheEnd() async throws {
        let system = ScriptedSystem(
            polls: [.events(POLLIN), .events(POLLIN), .events(POLLIN | POLLHUP)],
            reads: [.endOfFile, .bytes([3, 4]), .endOfFile])
        let link = try system.makeLink()
        defer { link.close() }
        let ending = await receiveUntilEnd(from: link)
        #expect(ending.bytes == [3, 4])
        #expect(ending.error?.message == "the peer of scripted closed (end of file)")
    }

    @Test("on a terminal, empty reads without end end the stream after FileDescriptorLink.emptyReadLimit in a row")
    func endlessEmptyReadsEnd() async throws {
        let limit = FileDescriptorLink.emptyReadLimit
        let system = ScriptedSystem(
            polls: Array(repeating: .events(POLLIN), count: limit), reads: Array(repeating: .endOfFile, count: limit))
        let link = try system.makeLink()
        defer { link.close() }
        let ending = await receiveUntilEnd(from: link)
        #expect(ending.bytes.isEmpty)
        #expect(ending.error?.code == .closed)
        #expect(system.readerPolls == limit)
    }

    @Test("POLLHUP or POLLERR with nothing to read ends the stream with .closed (hung up)", arguments: [POLLHUP, POLLERR])
    func hangUp(_ events: Int32) async throws {
        let system = ScriptedSystem(polls: [.events(events)], reads: [.fail(EAGAIN)])
        let link = try system.makeLink()
        defer { link.close() }
        let ending = await receiveUntilEnd(from: link)
        #expect(ending.error?.code == .closed)
        #expect(ending.error?.message == "the peer of scripted hung up")
    }

    @Test("POLLHUP with bytes still readable delivers them first")
    func hangUpAfterBytes() async throws {
        let system = ScriptedSystem(
            polls: [.events(POLLIN | POLLHUP), .events(POLLHUP)], reads: [.bytes([5, 6]), .fail(EAGAIN)])
        let link = try system.makeLink()
        defer { link.close() }
        let ending = await receiveUntilEnd(from: link)
        #expect(ending.bytes == [5, 6])
        #expect(ending.error?.code == .closed)
    }

    @Test("EIO from read (a pty whose other side closed, an unplugged USB port) is .closed with errno EIO")
    func readEIO() async throws {
        let system = ScriptedSystem(polls: [.events(POLLIN | POLLHUP)], reads: [.fail(EIO)])
        let link = try system.makeLink()
        defer { link.close() }
        let error = await receiveUntilEnd(from: link).error
        #expect(error?.code == .closed)
        #expect(error?.errno == EIO)
    }

    @Test("another read error, POLLNVAL, or a poll failure ends the stream with .io")
    func readFailures() async throws {
        let scripts: [ScriptedSystem] = [
            ScriptedSystem(polls: [.events(POLLIN)], reads: [.fail(ENOMEM)]),
            ScriptedSystem(polls: [.events(POLLNVAL)]),
            ScriptedSystem(polls: [.fail(EINVAL)]),
        ]
        var errnos: [Int32?] = []
        for system in scripts {
            let link = try system.makeLink()
            let error = await receiveUntilEnd(from: link).error
            link.close()
            #expect(error?.code == .io)
            errnos.append(error?.errno)
        }
        #expect(errnos == [ENOMEM, nil, EINVAL])
    }

    // MARK: Writing

    @Test("a short write is continued, EINTR retried, the rest after EAGAIN written by the link's loop: every byte goes out in order")
    func shortWritesAreContinued() async throws {
        let system = ScriptedSystem(writes: [.accept(2), .fail(EINTR), .accept(1), .fail(EAGAIN), .accept(10)])
        let link = try system.makeLink()
        defer { link.close() }
        try await link.send([1, 2, 3, 4, 5, 6])
        #expect(await eventually { system.bytesWritten == [1, 2, 3, 4, 5, 6] })
        try await link.send([7])
        #expect(await eventually { system.bytesWritten == [1, 2, 3, 4, 5, 6, 7] })
    }

    @Test("write failing with EIO is .closed (the peer is gone), with errno EIO; the bytes before it were written")
    func writeEIO() async throws {
        let system = ScriptedSystem(writes: [.accept(3), .fail(EIO)])
        let link = try system.makeLink()
        defer { link.close() }
        let error = await #expect(throws: TransportError.self) { try await link.send([1, 2, 3, 4, 5]) }
        #expect(error?.code == .closed)
        #expect(error?.errno == EIO)
        #expect(system.bytesWritten == [1, 2, 3])
    }

    @Test("write failing with another errno is .io with that errno")
    func writeFailure() async throws {
        let system = ScriptedSystem(writes: [.fail(ENOSPC)])
        let link = try system.makeLink()
        defer { link.close() }
        let error = await #expect(throws: TransportError.self) { try await link.send([1]) }
        #expect(error?.code == .io)
        #expect(error?.errno == ENOSPC)
    }

    @Test("no event loop can be made (pipe fails with EMFILE): receive() and send() throw .openFailed, never wait")
    func noEventLoop() async throws {
        let system = ScriptedSystem(pipe: .failure(SystemErrno(EMFILE)))
        let link = try system.makeLink()
        let received = await #expect(throws: TransportError.self) {
            try await withTimeout(.seconds(10), "receive() without a loop") { try await link.receive() }
        }
        #expect(received?.code == .openFailed)
        let sent = await #expect(throws: TransportError.self) { try await link.send([1]) }
        #expect(sent?.code == .openFailed)
        #expect(system.bytesWritten.isEmpty)
        // The descriptor, which no loop ever touched, is released by close().
        link.close()
        #expect(system.calls.contains("close(\(ScriptedSystem.device))"))
    }

    // MARK: Claiming a port

    static let noLockFiles = PortLock.Options(lockDirectories: [], processDirectory: nil)

    @Test("an exclusive open flocks the device and sets TIOCEXCL before configuring it; close undoes both at once")
    func exclusiveOpen() async throws {
        let system = ScriptedSystem()
        let transport = try PTYTransport(
            path: "/dev/ttyScripted", baudRate: nil, exclusive: true, lockOptions: Self.noLockFiles, system: system.system)
        let device = ScriptedSystem.device
        #expect(
            system.calls == ["flock(\(device), \(LOCK_EX | LOCK_NB))", "exclusive(\(device), true)", "raw(\(device))"])
        transport.close()
        // Released synchronously in close(), so the port can be opened again at once.
        #expect(Array(system.calls.dropFirst(3).prefix(2)) == ["exclusive(\(device), false)", "flock(\(device), \(LOCK_UN))"])
    }

    @Test("a non-exclusive open claims nothing")
    func nonExclusiveOpen() throws {
        let system = ScriptedSystem()
        let transport = try PTYTransport(
            path: "/dev/ttyScripted", baudRate: nil, exclusive: false, lockOptions: Self.noLockFiles, system: system.system)
        transport.close()
        #expect(!system.calls.contains { $0.hasPrefix("flock") || $0.hasPrefix("exclusive") })
    }

    @Test("flock EWOULDBLOCK (EINTR retried first) is .inUse, and the descriptor is closed unconfigured")
    func flockHeld() throws {
        let system = ScriptedSystem(flockErrors: [EINTR, EWOULDBLOCK])
        let error = #expect(throws: TransportError.self) {
            _ = try PTYTransport(
                path: "/dev/ttyScripted", baudRate: nil, exclusive: true, lockOptions: Self.noLockFiles, system: system.system)
        }
        #expect(error?.code == .inUse)
        #expect(error?.message == "/dev/ttyScripted is in use by another program")
        #expect(system.calls.last == "close(\(ScriptedSystem.device))")
        #expect(!system.calls.contains("raw(\(ScriptedSystem.device))"))
    }

    @Test("open failing with EBUSY (the holder set TIOCEXCL) is .inUse")
    func openBusy() throws {
        let system = ScriptedSystem(open: .failure(SystemErrno(EBUSY)))
        let error = #expect(throws: TransportError.self) {
            _ = try PTYTransport(
                path: "/dev/ttyScripted", baudRate: nil, exclusive: true, lockOptions: Self.noLockFiles, system: system.system)
        }
        #expect(error?.code == .inUse)
        #expect(error?.errno == EBUSY)
    }
}

extension FileDescriptorLink: ByteTransport {}
