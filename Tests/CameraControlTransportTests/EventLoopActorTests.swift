import CameraControlPosixTransport
import CameraControlTransport
import Synchronization
import Testing

/// The example of ``EventLoopActor``'s documentation: a timer's body counts, isolated to the actor.
actor TickCounter: EventLoopActor {
    nonisolated let eventLoop: any EventLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { eventLoop.asUnownedSerialExecutor() }
    var ticks = 0
    init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    func start() {
        eventLoop.schedule(after: .milliseconds(10)) { [self] in
            assumeIsolatedOnLoop { counter in counter.ticks += 1 }
        }
    }
}

/// What runs on an actor's event loop outside its jobs (a timer's body here; a read's delegate call, a
/// stream handler in the library) runs isolated to the actor with `assumeIsolatedOnLoop`: synchronously,
/// on the loop's thread, its changes seen by the actor's own methods.
@Suite("EventLoopActor")
struct EventLoopActorTests {
    @Test("a timer's body changes the actor's state in place, on the loop's thread, and returns its value")
    func timerBodyIsIsolated() async throws {
        let loop = try PollEventLoop(name: "cc-loop-actor")
        defer { loop.shutdown() }
        let counter = TickCounter(eventLoop: loop)
        await counter.start()
        let seen = Mutex<(value: Int, onLoop: Bool)?>(nil)
        let done = Mutex(false)
        loop.schedule(after: .milliseconds(30)) {
            // Due after the counter's timer: its change is there, read synchronously.
            let value = counter.assumeIsolatedOnLoop { $0.ticks }
            seen.withLock { $0 = (value, loop.isCurrent) }
            done.withLock { $0 = true }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !done.withLock({ $0 }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let result = try #require(seen.withLock { $0 })
        #expect(result.value == 1)
        #expect(result.onLoop)
        #expect(await counter.ticks == 1)
    }

    @Test("on a dispatch-queue loop too: the body runs where the loop's jobs run")
    func serialQueueLoop() async throws {
        let loop = SerialQueueEventLoop(name: "cc-loop-actor-queue")
        let counter = TickCounter(eventLoop: loop)
        await counter.start()
        let deadline = ContinuousClock.now + .seconds(10)
        while await counter.ticks == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(await counter.ticks == 1)
    }
}
