import CameraControlPosixTransport
import CameraControlTestSupport
import CameraControlTransport
import Foundation
import Synchronization
import Testing

/// A tap that looks at nothing.
private final class NoTap: TransportTap {
    func received(_ bytes: UnsafeRawBufferPointer) {}
    func sent(_ bytes: UnsafeRawBufferPointer) {}
}

/// Records what an event loop hands its delegate, and on which thread.
final class LoopRecorder: EventLoopDelegate {
    private struct State {
        var bytes: [UInt8] = []
        var timerFirings: [ContinuousClock.Instant] = []
        var endings: [TransportError] = []
        var threads: Set<UInt> = []
    }

    private let state = Mutex(State())

    var bytes: [UInt8] { state.withLock { $0.bytes } }
    var timerFirings: [ContinuousClock.Instant] { state.withLock { $0.timerFirings } }
    var endings: [TransportError] { state.withLock { $0.endings } }
    var threads: Set<UInt> { state.withLock { $0.threads } }

    private func noteThread(_ state: inout State) {
        #if canImport(Glibc)
            state.threads.insert(UInt(pthread_self()))
        #else
            state.threads.insert(UInt(bitPattern: pthread_self()))
        #endif
    }

    func eventLoopReceived(_ bytes: UnsafeRawBufferPointer) {
        state.withLock { state in
            state.bytes += bytes
            noteThread(&state)
        }
    }

    func eventLoopTimerFired() {
        state.withLock { state in
            state.timerFirings.append(.now)
            noteThread(&state)
        }
    }

    func eventLoopEnded(_ error: TransportError) {
        state.withLock { state in
            state.endings.append(error)
            noteThread(&state)
        }
    }
}

@Suite("PTY transport as an event loop")
struct EventLoopTransportTests {
    @Test("every byte reaches the delegate in order, on one thread of the loop's own")
    func bytesInOrderOnOneThread() async throws {
        let pair = try PseudoTerminalPair.open()
        defer {
            pair.master.close()
            pair.subordinate.close()
        }
        let recorder = LoopRecorder()
        _ = try #require(pair.master.startEventLoop(delegate: recorder))
        let sent = pattern(20_000, seed: 3)
        for start in stride(from: 0, to: sent.count, by: 777) {
            try await pair.subordinate.send(Array(sent[start..<min(start + 777, sent.count)]))
        }
        #expect(await eventually { recorder.bytes.count >= sent.count })
        #expect(recorder.bytes == sent)
        #expect(recorder.threads.count == 1)
        #expect(recorder.endings.isEmpty)
    }

    @Test(
        "a port's control, tapped or not, says its time is the system's monotonic clock; an in-memory transport's (a loop a test may drive) does not"
    )
    func whichControlsReadTheSystemClock() async throws {
        let pair = try PseudoTerminalPair.open()
        defer {
            pair.master.close()
            pair.subordinate.close()
        }
        let port = try #require(pair.master.startEventLoop(delegate: LoopRecorder()))
        #expect(port.readsSystemClock)
        let tapped = try #require(TappedTransport(pair.subordinate, tap: NoTap()).startEventLoop(delegate: LoopRecorder()))
        #expect(tapped.readsSystemClock)
        let (host, device) = InMemoryTransport.makePair()
        defer {
            host.close()
            device.close()
        }
        let manual = SerialQueueEventLoop(name: "manual", clock: ManualClock())
        let inMemory = try #require(host.startEventLoop(delegate: LoopRecorder(), on: manual))
        #expect(!inMemory.readsSystemClock)
        #expect(!(try #require(TappedTransport(device, tap: NoTap()).startEventLoop(delegate: LoopRecorder()))).readsSystemClock)
    }

    @Test("writes reach the peer whole and in order; what the pty cannot take at once is written by the loop")
    func writesInOrder() async throws {
        let pair = try PseudoTerminalPair.open()
        defer {
            pair.master.close()
            pair.subordinate.close()
        }
        let recorder = LoopRecorder()
        let control = try #require(pair.master.startEventLoop(delegate: recorder))
        // 256 KiB: far more than a pty buffers, so most of it waits in the loop's queue.
        let big = pattern(256 * 1024, seed: 9)
        let small = pattern(100, seed: 1)
        big.withUnsafeBytes { control.write($0) }
        small.withUnsafeBytes { control.write($0) }
        let received = try await receiveBytes(big.count + small.count, from: pair.subordinate)
        #expect(received == big + small)
        #expect(recorder.endings.isEmpty)
    }

    @Test("the timer fires once after its delay; a later setting replaces it, from any thread; nil clears it")
    func timer() async throws {
        let pair = try PseudoTerminalPair.open()
        defer {
            pair.master.close()
            pair.subordinate.close()
        }
        let recorder = LoopRecorder()
        let control = try #require(pair.master.startEventLoop(delegate: recorder))

        let start = ContinuousClock.now
        control.setTimer(after: .milliseconds(30))
        #expect(await eventually { recorder.timerFirings.count == 1 })
        #expect(try #require(recorder.timerFirings.first) - start >= .milliseconds(30))
        try await Task.sleep(for: .milliseconds(60))
        #expect(recorder.timerFirings.count == 1, "a setting fires once")

        // A far timer brought forward from another thread wakes the sleeping loop.
        control.setTimer(after: .seconds(60))
        try await Task.sleep(for: .milliseconds(20))
        let forward = ContinuousClock.now
        control.setTimer(after: .milliseconds(10))
        #expect(await eventually(within: .seconds(5)) { recorder.timerFirings.count == 2 })
        #expect(try #require(recorder.timerFirings.last) - forward >= .milliseconds(10))

        control.setTimer(after: .milliseconds(20))
        control.setTimer(after: nil)
        try await Task.sleep(for: .milliseconds(100))
        #expect(recorder.timerFirings.count == 2, "a cleared timer does not fire")
        #expect(recorder.threads.count == 1)
    }

    @Test("close ends the loop once with .closed; a peer hanging up ends it with .closed too")
    func endings() async throws {
        let pair = try PseudoTerminalPair.open()
        let recorder = LoopRecorder()
        _ = try #require(pair.master.startEventLoop(delegate: recorder))
        pair.master.close()
        pair.master.close()
        #expect(await eventually { !recorder.endings.isEmpty })
        try await Task.sleep(for: .milliseconds(20))
        #expect(recorder.endings.map(\.code) == [.closed])
        pair.subordinate.close()

        let second = try PseudoTerminalPair.open()
        defer { second.master.close() }
        let watcher = LoopRecorder()
        _ = try #require(second.master.startEventLoop(delegate: watcher))
        second.subordinate.close()
        #expect(await eventually { !watcher.endings.isEmpty })
        #expect(watcher.endings.map(\.code) == [.closed])
    }

    @Test("a transport is driven one way only: receive() or send() first means no loop of the caller's; a loop first refuses receive()")
    func oneWayOnly() async throws {
        let pair = try PseudoTerminalPair.open()
        let other = try PseudoTerminalPair.open()
        defer {
            pair.master.close()
            pair.subordinate.close()
            other.master.close()
            other.subordinate.close()
        }
        try await other.master.send([7])
        #expect(try await other.subordinate.receive() == [7])
        #expect(other.subordinate.startEventLoop(delegate: LoopRecorder()) == nil)
        #expect(other.master.startEventLoop(delegate: LoopRecorder()) == nil)

        let recorder = LoopRecorder()
        let control = try #require(pair.master.startEventLoop(delegate: recorder))
        #expect(pair.master.startEventLoop(delegate: LoopRecorder()) == nil, "one loop per transport")
        await #expect(throws: TransportError.self) { _ = try await pair.master.receive() }
        do {
            _ = try await pair.master.receive()
        } catch {
            #expect(error.code == .concurrentReceive)
        }
        // send() still works, through the loop's write queue, in order with its writes.
        try await pair.master.send([1, 2])
        [UInt8]([3]).withUnsafeBytes { control.write($0) }
        #expect(try await receiveBytes(3, from: pair.subordinate) == [1, 2, 3])

        let closed = try PseudoTerminalPair.open()
        closed.master.close()
        defer { closed.subordinate.close() }
        #expect(closed.master.startEventLoop(delegate: LoopRecorder()) == nil, "a closed transport runs no loop")
    }

    @Test("a device that stops reading: the write queue grows to its bound, then the loop ends with .io")
    func writeQueueBound() async throws {
        let pair = try PseudoTerminalPair.open()
        defer {
            pair.master.close()
            pair.subordinate.close()
        }
        let recorder = LoopRecorder()
        let control = try #require(pair.master.startEventLoop(delegate: recorder))
        // Nobody reads the subordinate: the pty fills, then the queue.
        let chunk = pattern(64 * 1024)
        for _ in 0..<(FileDescriptorLink.writeQueueLimit / chunk.count + 4) {
            chunk.withUnsafeBytes { control.write($0) }
        }
        #expect(await eventually { !recorder.endings.isEmpty })
        #expect(recorder.endings.map(\.code) == [.io])
        #expect(recorder.endings.first?.message.contains("does not read") == true)
    }
}
