import Synchronization
import Testing

@testable import CameraControlTransport

@Suite("In-memory transport")
struct InMemoryTransportTests {
    @Test("bytes travel both ways in order")
    func roundTrip() async throws {
        let (host, device) = InMemoryTransport.makePair()
        try await host.send([1, 2])
        try await host.send([3])
        #expect(try await receiveBytes(3, from: device) == [1, 2, 3])
        try await device.send(pattern(500))
        #expect(try await receiveBytes(500, from: host) == pattern(500))
    }

    @Test("closing one end: the peer reads what was sent, then .closed; both ends refuse to send")
    func closePropagates() async throws {
        let (host, device) = InMemoryTransport.makePair()
        try await host.send([5, 6, 7])
        host.close()
        let ending = await receiveUntilEnd(from: device)
        #expect(ending.bytes == [5, 6, 7])
        #expect(ending.error?.code == .closed)
        for end in [host, device] {
            do {
                try await end.send([1])
                Issue.record("send after close succeeded")
            } catch {
                #expect(error.code == .closed)
            }
        }
        let own = await receiveUntilEnd(from: host)
        #expect(own.error?.code == .closed)
    }

    @Test("a sender never waits: past the bound of bytes the peer has not taken the pair ends with .io; nothing sent before is lost")
    func boundedBuffering() async throws {
        let (host, device) = InMemoryTransport.makePair(capacity: 16)
        try await host.send(pattern(16))
        #expect(try await receiveBytes(16, from: device) == pattern(16))  // the device's reader runs
        // It takes nothing more: once its buffer holds 16 bytes or more, delivery pauses (ReceiveAdapterTests)
        // and the rest waits in the pipe, up to the bound.
        let chunk = [UInt8](repeating: 0x55, count: 4096)
        var sent = 0
        var failure: TransportError?
        for _ in 0...(2 * InMemoryTransport.unreadLimit / chunk.count + 1) {
            do {
                try await host.send(chunk)
                sent += chunk.count
            } catch {
                failure = error
                break
            }
        }
        #expect(failure?.code == .io)
        #expect(sent <= 2 * InMemoryTransport.unreadLimit)
        let ending = await receiveUntilEnd(from: device)
        #expect(ending.bytes.count == sent, "what was sent before the end is still read")
        #expect(ending.error?.code == .closed)
    }

    @Test("closing an end: its own receive throws .closed at once, and what was buffered for it is dropped")
    func closeEndsOwnReceive() async throws {
        let (host, device) = InMemoryTransport.makePair()
        defer { withExtendedLifetime(host) {} }
        try await host.send([0])
        #expect(try await device.receive() == [0])  // the device's reader runs
        try await host.send([1, 2, 3])
        try await Task.sleep(for: .milliseconds(20))  // let them reach the reader's buffer
        device.close()
        do {
            let bytes = try await device.receive()
            Issue.record("received \(bytes) after a local close")
        } catch {
            #expect(error.code == .closed)
        }
    }

    @Test("a single write larger than the bound goes through into an empty pipe")
    func oneLargeWrite() async throws {
        let (host, device) = InMemoryTransport.makePair()
        let large = pattern(InMemoryTransport.unreadLimit + 1)
        try await host.send(large)
        #expect(try await receiveBytes(large.count, from: device) == large)
    }

    @Test("the inbox of a paused in-memory reader: a peer's close waits behind its bytes, a local close ends it at once")
    func pausedInboxEnds() throws {
        let inbox = InMemoryInbox()
        let peer = InMemoryInbox()
        let wakes = Mutex(0)
        inbox.deliver { wakes.withLock { $0 += 1 } }
        try [UInt8]([1, 2]).withUnsafeBytes { raw in
            if let error = InMemoryInbox.write(raw, to: inbox, from: peer, name: "test") { throw error }
        }
        #expect(wakes.withLock { $0 } == 1)
        inbox.setReading(false)
        guard case .empty = inbox.take() else { throw TransportError(code: .io, message: "a paused inbox gave bytes") }
        inbox.finish(TransportError(code: .closed, message: "peer closed"), discardBuffered: false)
        #expect(wakes.withLock { $0 } == 1, "the ending waits behind the bytes the reader has not taken")
        inbox.finish(TransportError(code: .closed, message: "closed here"), discardBuffered: true)
        #expect(wakes.withLock { $0 } == 2, "a local close wakes the loop, so the end lets its loop go")
        guard case .ended(let error) = inbox.take() else { throw TransportError(code: .io, message: "no ending") }
        #expect(error.message == "peer closed")
    }
}

/// An end on an event loop: what an ``EventLoopTransport`` client sees.
extension InMemoryTransportTests {
    @Test("on a loop: the peer's bytes reach the delegate in order, on the loop; its writes reach the peer; then one ending")
    func onALoop() async throws {
        let loop = SerialQueueEventLoop(name: "in-memory-test", clock: ManualClock())
        let (host, device) = InMemoryTransport.makePair()
        let recorder = InMemoryLoopRecorder(loop: loop)
        let control = try #require(host.startEventLoop(delegate: recorder, on: loop))
        #expect(host.startEventLoop(delegate: recorder, on: loop) == nil, "an end starts one loop")
        for chunk in 0..<50 { try await device.send([UInt8(chunk)]) }
        [UInt8]([200, 201]).withUnsafeBytes { control.write($0) }
        #expect(try await receiveBytes(2, from: device) == [200, 201])
        device.close()
        await recorder.waitForEnd()
        #expect(recorder.bytes == (0..<50).map { UInt8($0) })
        #expect(recorder.endings == ["closed"])
        #expect(recorder.everyCallOnTheLoop)
        await #expect(throws: TransportError.self) { _ = try await host.receive() }
    }

    @Test("on a loop timed by a manual clock: the timer fires when the clock gets there, a new setting replaces the old")
    func timerInVirtualTime() async throws {
        let clock = ManualClock()
        let loop = SerialQueueEventLoop(name: "in-memory-timer", clock: clock)
        let (host, device) = InMemoryTransport.makePair()
        defer { withExtendedLifetime(device) {} }  // a released peer closes the pair
        let recorder = InMemoryLoopRecorder(loop: loop)
        let control = try #require(host.startEventLoop(delegate: recorder, on: loop))
        control.setTimer(after: .milliseconds(10))
        control.setTimer(after: .milliseconds(30))
        clock.advance(by: .milliseconds(20))
        #expect(recorder.timerFirings == 0, "the first setting was replaced")
        #expect(control.now == .milliseconds(20))
        clock.advance(by: .milliseconds(10))
        #expect(recorder.timerFirings == 1, "fired before advance returned")
        control.setTimer(after: .milliseconds(5))
        control.setTimer(after: nil)
        clock.advance(by: .seconds(1))
        #expect(recorder.timerFirings == 1)
        #expect(clock.sleeperCount == 0)
    }

    @Test("on a loop, writes to a peer that reads nothing end the pair with .io past the bound, not memory without end")
    func aPeerThatNeverReads() async throws {
        let loop = SerialQueueEventLoop(name: "in-memory-flood")
        let (host, device) = InMemoryTransport.makePair()
        defer { withExtendedLifetime(device) {} }  // a released peer closes the pair
        let recorder = InMemoryLoopRecorder(loop: loop)
        let control = try #require(host.startEventLoop(delegate: recorder, on: loop))
        let chunk = [UInt8](repeating: 0x55, count: 4096)
        for _ in 0...(InMemoryTransport.unreadLimit / chunk.count) { chunk.withUnsafeBytes { control.write($0) } }
        await recorder.waitForEnd()
        #expect(recorder.endings == ["io"])
    }
}

/// Records an end's delegate calls, and whether each came on its loop.
final class InMemoryLoopRecorder: EventLoopDelegate, Sendable {
    private struct State {
        var bytes: [UInt8] = []
        var timerFirings = 0
        var endings: [String] = []
        var offLoop = 0
    }

    private let loop: SerialQueueEventLoop
    private let state = Mutex(State())

    init(loop: SerialQueueEventLoop) { self.loop = loop }

    var bytes: [UInt8] { state.withLock { $0.bytes } }
    var timerFirings: Int { state.withLock { $0.timerFirings } }
    var endings: [String] { state.withLock { $0.endings } }
    var everyCallOnTheLoop: Bool { state.withLock { $0.offLoop == 0 } }

    func eventLoopReceived(_ bytes: UnsafeRawBufferPointer) {
        let onLoop = loop.isCurrent
        state.withLock {
            $0.bytes += bytes
            if !onLoop { $0.offLoop += 1 }
        }
    }

    func eventLoopTimerFired() {
        let onLoop = loop.isCurrent
        state.withLock {
            $0.timerFirings += 1
            if !onLoop { $0.offLoop += 1 }
        }
    }

    func eventLoopEnded(_ error: TransportError) {
        let onLoop = loop.isCurrent
        state.withLock {
            $0.endings.append("\(error.code)")
            if !onLoop { $0.offLoop += 1 }
        }
    }

    /// Waits (up to 20 s, for a broken implementation) until the end was reported.
    func waitForEnd() async {
        for _ in 0..<4_000 where endings.isEmpty {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}
