import CameraControlPosixTransport
import CameraControlTestSupport
import CameraControlTransport
import Foundation
import Synchronization
import Testing

/// The OS's name of the calling thread (Linux: `/proc/thread-self/comm`; nil elsewhere).
func osThreadName() -> String? {
    guard let text = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) else { return nil }
    return text.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// An actor whose executor is a loop.
actor OnLoop {
    let loop: PollEventLoop
    private var log: [Int] = []

    init(loop: PollEventLoop) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    func note(_ value: Int) -> String? {
        log.append(value)
        return osThreadName()
    }

    var notes: [Int] { log }
}

@Suite("PollEventLoop")
struct PollEventLoopTests {
    @Test("several ports on one loop: each one's bytes reach its own delegate in order, all on the loop's thread")
    func portsShareALoop() async throws {
        let loop = try PollEventLoop(name: "cc-test-loop")
        defer { loop.shutdown() }
        let first = try PseudoTerminalPair.open()
        let second = try PseudoTerminalPair.open()
        defer {
            for end in [first.master, first.subordinate, second.master, second.subordinate] { end.close() }
        }
        let one = LoopRecorder()
        let two = LoopRecorder()
        _ = try #require(first.master.startEventLoop(delegate: one, on: loop))
        _ = try #require(second.master.startEventLoop(delegate: two, on: loop))
        let a = pattern(3_000, seed: 1)
        let b = pattern(3_000, seed: 2)
        async let sendA: Void = first.subordinate.send(a)
        async let sendB: Void = second.subordinate.send(b)
        _ = try await (sendA, sendB)
        #expect(await eventually { one.bytes.count >= a.count && two.bytes.count >= b.count })
        #expect(one.bytes == a)
        #expect(two.bytes == b)
        #expect(one.threads == two.threads, "one thread serves both ports")
        #expect(one.threads.count == 1)

        // One port closing leaves the other running.
        first.master.close()
        #expect(await eventually { one.endings.count == 1 })
        try await second.subordinate.send([9])
        #expect(await eventually { two.bytes.last == 9 })
        #expect(two.endings.isEmpty)
    }

    @Test("an actor on the loop runs on its thread, in order, whoever calls it; after the end it still runs")
    func actorOnTheLoop() async throws {
        let loop = try PollEventLoop(name: "cc-test-actor")
        let actor = OnLoop(loop: loop)
        let names = await withTaskGroup(of: String?.self) { group in
            for value in 0..<20 { group.addTask { await actor.note(value) } }
            var names: [String?] = []
            for await name in group { names.append(name) }
            return names
        }
        #if os(Linux)
            #expect(Set(names) == ["cc-test-actor"])
        #endif
        #expect(await actor.notes.sorted() == Array(0..<20))

        // No port, shut down: the thread ends, and the actor's jobs run elsewhere, one at a time.
        loop.shutdown()
        try await Task.sleep(for: .milliseconds(50))
        let after = await actor.note(99)
        #if os(Linux)
            #expect(after != "cc-test-actor", "the loop's thread has ended")
        #endif
        #expect(await actor.notes.last == 99)
    }

    @Test("once its thread has ended, the loop is current only where its jobs now run, not on threads made later")
    func anEndedLoopIsCurrentOnlyOnItsQueue() async throws {
        let loop = try PollEventLoop(name: "cc-test-ended")
        loop.shutdown()  // no port: the thread ends
        try await Task.sleep(for: .milliseconds(50))
        let onItsQueue = await withCheckedContinuation { continuation in
            loop.schedule(after: .zero) { continuation.resume(returning: loop.isCurrent) }
        }
        #expect(onItsQueue)
        // A thread made after the end may be given the ended thread's id (glibc reuses it): none is the loop.
        for _ in 0..<20 {
            let current = await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: loop.isCurrent) }.start()
            }
            #expect(!current)
        }
    }

    @Test("a delegate reads when the poll() that brought its bytes returned: after they were sent, before the read")
    func wakeUpTime() async throws {
        let loop = try PollEventLoop(name: "cc-test-wake")
        defer { loop.shutdown() }
        let pair = try PseudoTerminalPair.open()
        defer { pair.subordinate.close() }
        let stamps = WakeUpStamps(loop: loop)
        _ = try #require(pair.master.startEventLoop(delegate: stamps, on: loop))
        for round in 0..<3 {
            let sent = WakeUpStamps.monotonicNanos()
            try await pair.subordinate.send([UInt8(round)])
            #expect(await eventually { stamps.reads.count == round + 1 })
            let read = try #require(stamps.reads.last)
            #expect(read.wokeAt >= sent, "the loop woke for these bytes after they were sent (round \(round))")
            #expect(read.wokeAt <= read.readAt, "and before its delegate had them")
        }
        pair.master.close()
        #expect(await eventually { stamps.ended })
    }

    @Test("a shut-down loop keeps running until its last port ends")
    func shutdownWaitsForPorts() async throws {
        let loop = try PollEventLoop(name: "cc-test-drain")
        let pair = try PseudoTerminalPair.open()
        defer { pair.subordinate.close() }
        let recorder = LoopRecorder()
        _ = try #require(pair.master.startEventLoop(delegate: recorder, on: loop))
        loop.shutdown()
        try await pair.subordinate.send([1, 2, 3])
        #expect(await eventually { recorder.bytes == [1, 2, 3] }, "the port is still served after shutdown()")
        pair.master.close()
        #expect(await eventually { recorder.endings.count == 1 })
        // Ended: a port registered now ends at once.
        try await Task.sleep(for: .milliseconds(50))
        let late = try PseudoTerminalPair.open()
        defer { late.subordinate.close() }
        let lateRecorder = LoopRecorder()
        _ = late.master.startEventLoop(delegate: lateRecorder, on: loop)
        #expect(await eventually { lateRecorder.endings.count == 1 })
        #expect(lateRecorder.endings.first?.code == .closed)
        late.master.close()
    }

    @Test("a closed port lingers for its last bytes at most 250 ms, however much it wrote faster than 115200 baud before")
    func lingerAfterCloseIsBounded() async throws {
        let loop = try PollEventLoop(name: "cc-test-linger")
        defer { loop.shutdown() }
        let pair = try PseudoTerminalPair.open()
        defer { pair.subordinate.close() }
        let recorder = LoopRecorder()
        let control = try #require(pair.master.startEventLoop(delegate: recorder, on: loop))
        // 128 KiB: 11 s on the line the loop models (115200 baud), on a pty written and read at once. A
        // `camctl ping` of 20,000 round trips wrote 400 KB and waited 35 s to close (stop 53's audit).
        let total = 128 * 1024
        let reader = Task {
            var received = 0
            while received < total { received += try await pair.subordinate.receive().count }
            return received
        }
        let chunk = [UInt8](repeating: 0x55, count: 1024)
        for _ in 0..<(total / chunk.count) { chunk.withUnsafeBytes { control.write($0) } }
        #expect(try await reader.value == total)
        let closed = ContinuousClock.now
        pair.master.close()
        #expect(await eventually(within: .seconds(30)) { recorder.endings.count == 1 })
        // The bound is the linger's 250 ms and a busy machine's margin, far below the modelled line's 11 s.
        #expect(closed.duration(to: .now) < .seconds(3))
    }

    @Test("a task that prefers the loop runs on its thread; one enqueued from another thread wakes it")
    func taskPreference() async throws {
        let loop = try PollEventLoop(name: "cc-test-task")
        defer { loop.shutdown() }
        try await Task.sleep(for: .milliseconds(20))  // the thread is asleep in poll()
        let name = await Task(executorPreference: loop) { osThreadName() }.value
        #if os(Linux)
            #expect(name == "cc-test-task")
        #else
            _ = name
        #endif
        let serialExecutor = SerialQueueEventLoop(name: "queue")
        let queued = await Task(executorPreference: serialExecutor) { 7 }.value
        #expect(queued == 7, "the queue-backed loop runs jobs too")
    }
}

/// Notes, for each read, the loop's ``PollEventLoop/lastWakeUpNanos`` and the time the delegate had the bytes.
final class WakeUpStamps: EventLoopDelegate {
    private let loop: PollEventLoop
    private let state = Mutex<(reads: [(wokeAt: UInt64, readAt: UInt64)], ended: Bool)>(([], false))

    init(loop: PollEventLoop) { self.loop = loop }

    var reads: [(wokeAt: UInt64, readAt: UInt64)] { state.withLock { $0.reads } }
    var ended: Bool { state.withLock { $0.ended } }

    static func monotonicNanos() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    func eventLoopReceived(_ bytes: UnsafeRawBufferPointer) {
        let read = (wokeAt: loop.lastWakeUpNanos, readAt: Self.monotonicNanos())
        state.withLock { $0.reads.append(read) }
    }

    func eventLoopTimerFired() {}

    func eventLoopEnded(_ error: TransportError) { state.withLock { $0.ended = true } }
}
