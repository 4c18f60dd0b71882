import CameraControlPosixTransport
import CameraControlSerialTransport
import CameraControlTestSupport
import CameraControlTransport
import Foundation
import Testing

@Suite("PTY transport")
struct PTYTransportTests {
    @Test("bytes travel both ways over a pseudo-terminal pair, unchanged by the line discipline")
    func roundTrip() async throws {
        let pair = try PseudoTerminalPair.open()
        defer {
            pair.master.close()
            pair.subordinate.close()
        }
        // Raw mode: 0x00, CR, LF, ^C, ^D and 0xFF must all arrive as they were sent.
        let toDevice: [UInt8] = [0x00, 0x0D, 0x0A, 0x03, 0x04, 0x11, 0x13, 0xFF] + pattern(3000)
        try await pair.subordinate.send(toDevice)
        #expect(try await receiveBytes(toDevice.count, from: pair.master) == toDevice)

        let toHost = pattern(2000, seed: 7)
        try await pair.master.send(toHost)
        #expect(try await receiveBytes(toHost.count, from: pair.subordinate) == toHost)
    }

    @Test(
        "a reader that falls behind: reading pauses at the receive capacity, its writes still go out, and every byte arrives in order once it reads"
    )
    func aReaderBehindStillWrites() async throws {
        let pair = try PseudoTerminalPair.open()
        defer {
            pair.master.close()
            pair.subordinate.close()
        }
        try await pair.subordinate.send([1])  // starts the subordinate's loop: it reads from now on
        #expect(try await pair.master.receive() == [1])
        let flood = pattern(FileDescriptorLink.receiveCapacity * 3, seed: 3)
        try await pair.master.send(flood)
        // Nobody reads the subordinate: it buffers its capacity and stops reading; its writes, more than
        // the pty takes at once (the rest waits for its loop), still go out.
        try await Task.sleep(for: .milliseconds(100))
        let reply = pattern(256 * 1024, seed: 4)
        try await pair.subordinate.send(reply)
        let master = pair.master
        let echoed = try await withTimeout(.seconds(20), "the behind reader's writes") {
            try await receiveBytes(reply.count, from: master)
        }
        #expect(echoed == reply)
        #expect(try await receiveBytes(flood.count, from: pair.subordinate) == flood)
    }

    @Test("closing the master ends the subordinate's stream with .closed")
    func peerClosingMaster() async throws {
        let pair = try PseudoTerminalPair.open()
        defer { pair.subordinate.close() }
        try await pair.master.send([1, 2, 3])
        #expect(try await receiveBytes(3, from: pair.subordinate) == [1, 2, 3])
        pair.master.close()
        let ending = await receiveUntilEnd(from: pair.subordinate)
        #expect(ending.error?.code == .closed)
    }

    @Test("closing the subordinate ends the master's stream with .closed")
    func peerClosingSubordinate() async throws {
        let pair = try PseudoTerminalPair.open()
        defer { pair.master.close() }
        pair.subordinate.close()
        let ending = await receiveUntilEnd(from: pair.master)
        #expect(ending.error?.code == .closed)
    }

    @Test("close ends a waiting receive, and sending afterwards throws .closed")
    func localClose() async throws {
        let pair = try PseudoTerminalPair.open()
        defer { pair.master.close() }
        let transport = pair.subordinate
        let waiter = Task { await receiveUntilEnd(from: transport) }
        transport.close()
        transport.close()  // idempotent
        #expect(await waiter.value.error?.code == .closed)
        await #expect(throws: TransportError.self) { try await transport.send([1]) }
        do {
            try await transport.send([1])
        } catch {
            #expect(error.code == .closed)
        }
    }

    @Test("cancelling a waiting receive throws .cancelled and the transport keeps working")
    func cancelledReceive() async throws {
        let pair = try PseudoTerminalPair.open()
        defer {
            pair.master.close()
            pair.subordinate.close()
        }
        let transport = pair.master
        let waiter = Task { () -> TransportError? in
            do {
                _ = try await transport.receive()
                return nil
            } catch {
                return error as? TransportError
            }
        }
        waiter.cancel()
        #expect(await waiter.value?.code == .cancelled)
        try await pair.subordinate.send([9, 8, 7])
        #expect(try await receiveBytes(3, from: transport) == [9, 8, 7])
    }

    @Test("opening a path that does not exist throws .notFound")
    func missingPath() throws {
        #expect {
            _ = try PTYTransport(path: "/dev/pts/this-does-not-exist")
        } throws: { error in
            (error as? TransportError)?.code == .notFound
        }
    }

    @Test("opening a regular file throws .notATerminal")
    func notATerminal() throws {
        let path = NSTemporaryDirectory() + "cc-not-a-tty-\(getpid())"
        #expect(FileManager.default.createFile(atPath: path, contents: Data([1, 2, 3])))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            _ = try PTYTransport(path: path)
        } throws: { error in
            (error as? TransportError)?.code == .notATerminal
        }
    }

    @Test("Transports.open picks termios for a pseudo-terminal reached through a symlink")
    func factoryFollowsSymlink() async throws {
        let pair = try PseudoTerminalPair.open()
        defer {
            pair.master.close()
            pair.subordinate.close()
        }
        let link = NSTemporaryDirectory() + "cc-pty-link-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: pair.subordinatePath)
        defer { try? FileManager.default.removeItem(atPath: link) }
        #expect(Transports.isPseudoTerminal(path: link))
        let opened = try Transports.open(path: link)
        defer { opened.close() }
        #expect(opened is PTYTransport)
        #expect(opened.name == pair.subordinatePath)
        try await opened.send([0x42, 0x00, 0x43])
        #expect(try await receiveBytes(3, from: pair.master) == [0x42, 0x00, 0x43])
    }
}
