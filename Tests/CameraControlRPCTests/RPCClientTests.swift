import CameraControlPosixTransport
import CameraControlRPC
import CameraControlTestSupport
import CameraControlTransport
import CameraControlWire
import Foundation
import Testing

@Suite("RPCClient")
struct RPCClientTests {
    /// A client on the host end of an in-memory pair and a fake device on the other.
    func makeClient(
        clock: ManualClock = ManualClock(),
        configuration: RPCClient.Configuration = RPCClient.Configuration(),
        respond: @escaping FakeDevice.Responder = echoResponder
    ) async -> (RPCClient, FakeDevice) {
        let (host, deviceEnd) = InMemoryTransport.makePair()
        let device = FakeDevice(transport: deviceEnd, respond: respond)
        await device.start()
        let client = RPCClient(
            transport: host, configuration: configuration, eventLoop: SerialQueueEventLoop(name: "test", clock: clock))
        return (client, device)
    }

    @Test("a unary call round-trips through the device")
    func unaryRoundTrip() async throws {
        let (client, _) = await makeClient()
        defer { client.close() }
        let reply: Blob = try await client.unary(.devicePing, Blob([1, 2, 3]))
        #expect(reply == Blob([1, 2, 3]))
        #expect(client.counters.callsSucceeded == 1)
    }

    @Test("a handshake response establishes the session and is reported on linkEvents")
    func handshakeEstablishes() async throws {
        let (client, _) = await makeClient()
        defer { client.close() }
        _ = try await client.unary(.deviceHandshake, Blob([7]), as: Blob.self)
        #expect(client.isSessionEstablished)
        var events = client.linkEvents.makeAsyncIterator()
        #expect(await events.next() == .sessionEstablished)
    }

    @Test("many calls in flight at once, answered in reverse order, each get their own answer")
    func concurrentCalls() async throws {
        let (client, device) = await makeClient(respond: { _ in [] })
        defer { client.close() }
        let results = Task {
            try await withThrowingTaskGroup(of: (UInt8, Blob).self) { group in
                for index in UInt8(0)..<8 {
                    group.addTask { (index, try await client.unary(.configGetConfig, Blob([index]), as: Blob.self)) }
                }
                var collected: [UInt8: Blob] = [:]
                for try await (index, reply) in group { collected[index] = reply }
                return collected
            }
        }
        await device.waitUntil { $0.filter { $0.type == .request }.count == 8 }
        let requests = await device.received.filter { $0.type == .request }
        await device.send(
            requests.reversed().map { Packet(type: .response, callID: $0.callID, payload: $0.payload + [0xFF]) })
        let collected = try await results.value
        #expect(collected.count == 8)
        for (index, reply) in collected {
            #expect(reply == Blob([index, 0xFF]))
        }
    }

    @Test("a server stream yields its messages and ends at STREAM_END OK")
    func serverStream() async throws {
        let (client, device) = await makeClient(respond: { packet in
            guard packet.type == .request else { return [] }
            return (1...3).map { Packet(type: .streamMessage, isReliable: $0 == 2, callID: packet.callID, payload: [UInt8($0)]) }
                + [Packet(type: .streamEnd, callID: packet.callID, status: .ok)]
        })
        defer { client.close() }
        let stream = try client.serverStream(.inputStreamInputEvents, Blob(), as: Blob.self)
        var messages: [Blob] = []
        for try await message in stream { messages.append(message) }
        #expect(messages == [Blob([1]), Blob([2]), Blob([3])])
        await device.waitFor(.ack)
        #expect(client.counters.acksSent == 1)
    }

    @Test("a device ERROR surfaces as an RPCError with the device's code and message")
    func deviceError() async throws {
        let (client, _) = await makeClient(respond: { packet in
            guard packet.type == .request else { return [] }
            return [Packet(type: .error, callID: packet.callID, status: .unimplemented, payload: Array("nope".utf8))]
        })
        defer { client.close() }
        do {
            _ = try await client.unary(.feedbackPlaySound, Blob(), as: Blob.self)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .unimplemented)
            #expect(error.message == "nope")
            #expect(error.method == .feedbackPlaySound)
        }
    }

    @Test("a response that does not decode is INTERNAL")
    func undecodableResponse() async throws {
        let (client, _) = await makeClient()
        defer { client.close() }
        do {
            _ = try await client.unary(.devicePing, Blob([1]), as: Undecodable.self)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .internal)
            #expect(error.cause is WireError)
        }
    }

    @Test("an unanswered call fails with DEADLINE_EXCEEDED in virtual time and the device gets CANCEL")
    func deadlineInVirtualTime() async throws {
        let clock = ManualClock()
        let (client, device) = await makeClient(clock: clock, respond: { _ in [] })
        defer { client.close() }
        let call = Task { () -> RPCError? in
            do {
                _ = try await client.unary(.configGetConfig, Blob(), as: Blob.self, deadline: .milliseconds(100))
                return nil
            } catch {
                return error as? RPCError
            }
        }
        let error = await clock.advance(by: .milliseconds(10), until: call)
        #expect(error?.code == .deadlineExceeded)
        await device.waitFor(.cancel)
        #expect(client.counters.deadlinesExceeded == 1)
    }

    @Test("cancelling the calling task sends CANCEL and throws CANCELLED")
    func taskCancellation() async throws {
        let (client, device) = await makeClient(respond: { _ in [] })
        defer { client.close() }
        let call = Task { () -> RPCError? in
            do {
                _ = try await client.unary(.configGetConfig, Blob(), as: Blob.self, deadline: .seconds(60))
                return nil
            } catch {
                return error as? RPCError
            }
        }
        await device.waitFor(.request)
        call.cancel()
        #expect(await call.value?.code == .cancelled)
        await device.waitFor(.cancel)
    }

    @Test("leaving a stream early sends CANCEL")
    func streamEndedEarly() async throws {
        let (client, device) = await makeClient(respond: { packet in
            guard packet.type == .request else { return [] }
            return (1...5).map { Packet(type: .streamMessage, callID: packet.callID, payload: [UInt8($0)]) }
        })
        defer { client.close() }
        // The stream and its iterator live only inside the helper: dropping them cancels the call.
        let (call, first) = try await firstMessage(of: client)
        #expect(first == Blob([1]))
        await device.waitFor(.cancel, call: call)
        #expect(client.counters.callsCancelled == 1)
    }

    private func firstMessage(of client: RPCClient) async throws -> (CallID, Blob?) {
        let stream = try client.serverStream(.inputStreamRawSamples, Blob(), as: Blob.self)
        for try await message in stream {
            return (stream.callID, message)
        }
        return (stream.callID, nil)
    }

    @Test("RPCStream.cancel sends CANCEL and the iterator then throws CANCELLED")
    func explicitStreamCancel() async throws {
        let (client, device) = await makeClient(respond: { _ in [] })
        defer { client.close() }
        let stream = try client.serverStream(.inputStreamInputEvents, Blob(), as: Blob.self)
        await device.waitFor(.request)
        stream.cancel()
        await device.waitFor(.cancel, call: stream.callID)
        do {
            for try await _ in stream {}
            Issue.record("a cancelled stream ended normally")
        } catch {
            #expect(error.code == .cancelled)
        }
    }

    @Test("cancelling the task iterating a stream sends CANCEL and throws CANCELLED")
    func streamTaskCancelled() async throws {
        let (client, device) = await makeClient(respond: { _ in [] })
        defer { client.close() }
        let stream = try client.serverStream(.inputStreamInputEvents, Blob(), as: Blob.self)
        let consumer = Task { () -> RPCError? in
            do {
                for try await _ in stream {}
                return nil
            } catch {
                return error as? RPCError
            }
        }
        await device.waitFor(.request)
        consumer.cancel()
        #expect(await consumer.value?.code == .cancelled)
        await device.waitFor(.cancel, call: stream.callID)
    }

    @Test("after the handshake, a silent device kills the link: calls fail UNAVAILABLE (virtual time)")
    func linkDeadInVirtualTime() async throws {
        let clock = ManualClock()
        let (client, device) = await makeClient(
            clock: clock,
            respond: { packet in
                // Only the handshake is answered; the device is silent afterwards.
                guard packet.type == .request, packet.address == MethodID.deviceHandshake else { return [] }
                return [Packet(type: .response, callID: packet.callID)]
            })
        defer { client.close() }
        _ = try await client.unary(.deviceHandshake, Blob(), as: Blob.self)
        let stream = try client.serverStream(.inputStreamInputEvents, Blob(), as: Blob.self)
        let consumer = Task { () -> RPCError? in
            do {
                for try await _ in stream {}
                return nil
            } catch {
                return error as? RPCError
            }
        }
        let error = await clock.advance(by: .milliseconds(10), until: consumer)
        #expect(error?.code == .unavailable)
        #expect(client.counters.linkDeaths == 1)
        // The host sent heartbeats while it waited.
        await device.waitFor(.heartbeat)
    }

    /// Waits (without a time limit that matters: 20 s, for a broken implementation) until `condition`
    /// holds; false if it never did.
    func eventually(_ condition: () async -> Bool) async -> Bool {
        for _ in 0..<4_000 {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return await condition()
    }

    /// Lets the client's tasks run (real time; virtual time does not move).
    func settle() async {
        for _ in 0..<20 {
            await Task.yield()
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    /// A client whose session was established at t+0 by a handshake (the only thing the device answers),
    /// moved past the handshake request's retransmission time (t+20 ms, armed while the call was in
    /// flight): from then on only the link's own deadlines remain.
    func idleSession(_ clock: ManualClock) async throws -> (RPCClient, FakeDevice) {
        let (client, device) = await makeClient(
            clock: clock,
            respond: { packet in
                guard packet.type == .request, packet.address == MethodID.deviceHandshake else { return [] }
                return [Packet(type: .response, callID: packet.callID)]
            })
        _ = try await client.unary(.deviceHandshake, Blob(), as: Blob.self)
        #expect(client.isSessionEstablished)
        let retransmission = client.connectionConfiguration.retransmissionTimeout
        #expect(await eventually { clock.sleeperCount == 1 })
        clock.advance(to: ManualClock.Instant(offset: retransmission))
        return (client, device)
    }

    @Test("an idle session's timer sleeps until the next heartbeat: no wake-up between deadlines")
    func idleTimerSleepsUntilTheNextDeadline() async throws {
        let clock = ManualClock()
        let (client, device) = try await idleSession(clock)
        defer { client.close() }
        let heartbeat = client.connectionConfiguration.heartbeatInterval
        let firstBeat = ManualClock.Instant(offset: heartbeat)
        // One timer, armed for the heartbeat: not for a polling interval.
        #expect(await eventually { clock.nextDeadline == firstBeat })
        #expect(clock.sleeperCount == 1)
        let wakes = clock.wakeCount
        clock.advance(to: ManualClock.Instant(offset: heartbeat - .milliseconds(1)))
        await settle()
        #expect(clock.wakeCount == wakes)
        #expect(await !device.received.contains { $0.type == .heartbeat })
        #expect(clock.nextDeadline == firstBeat)
        // At the deadline: one wake-up, one heartbeat, and the timer re-armed for the next one.
        clock.advance(to: firstBeat)
        await device.waitFor(.heartbeat)
        #expect(clock.wakeCount == wakes + 1)
        #expect(await eventually { clock.nextDeadline == firstBeat.advanced(by: heartbeat) })
        #expect(clock.sleeperCount == 1)
    }

    @Test("new work with an earlier deadline re-arms the sleeping timer early")
    func newCallRearmsTheTimer() async throws {
        let clock = ManualClock()
        let (client, device) = try await idleSession(clock)
        defer { client.close() }
        let heartbeat = client.connectionConfiguration.heartbeatInterval
        #expect(await eventually { clock.nextDeadline == ManualClock.Instant(offset: heartbeat) })
        let start = clock.now
        let call = Task { () -> RPCError? in
            do {
                _ = try await client.unary(.configGetConfig, Blob(), as: Blob.self, deadline: .milliseconds(5))
                return nil
            } catch {
                return error as? RPCError
            }
        }
        await device.waitUntil { $0.contains { $0.type == .request && $0.address == MethodID.configGetConfig } }
        let callDeadline = start.advanced(by: .milliseconds(5))
        #expect(await eventually { clock.nextDeadline == callDeadline })
        #expect(await eventually { clock.sleeperCount == 1 })  // the superseded sleep was cancelled
        clock.advance(to: callDeadline)
        #expect(await call.value?.code == .deadlineExceeded)
    }

    @Test("close fails calls in flight with UNAVAILABLE and refuses new ones")
    func closeFailsCalls() async throws {
        let (client, device) = await makeClient(respond: { _ in [] })
        let call = Task { () -> RPCError? in
            do {
                _ = try await client.unary(.configGetConfig, Blob(), as: Blob.self)
                return nil
            } catch {
                return error as? RPCError
            }
        }
        await device.waitFor(.request)
        client.close()
        #expect(await call.value?.code == .unavailable)
        do {
            _ = try await client.unary(.devicePing, Blob(), as: Blob.self)
            Issue.record("call after close succeeded")
        } catch {
            #expect(error.code == .unavailable)
        }
    }

    @Test("over a real pseudo-terminal, the device closing mid-call fails the call with UNAVAILABLE")
    func ptyPeerClosesMidCall() async throws {
        let pair = try PseudoTerminalPair.open()
        let client = RPCClient(transport: pair.subordinate)
        defer { client.close() }
        let device = FakeDevice(transport: pair.master, respond: echoResponder)
        await device.start()
        // First a call that works over the pty.
        // (A generous deadline: a loaded machine must not turn this into DEADLINE_EXCEEDED.)
        #expect(try await client.unary(.devicePing, Blob([0, 1, 0]), as: Blob.self, deadline: .seconds(60)) == Blob([0, 1, 0]))
        let call = Task { () -> RPCError? in
            do {
                _ = try await client.unary(.configGetConfig, Blob(), as: Blob.self, deadline: .seconds(60))
                return nil
            } catch {
                return error as? RPCError
            }
        }
        await device.waitUntil { $0.contains { $0.type == .request && $0.address == MethodID.configGetConfig } }
        pair.master.close()
        let error = await call.value
        #expect(error?.code == .unavailable)
        #expect(client.isClosed)
    }

    @Test("one driver: a pty and an in-memory end both run on an event loop; a transport that cannot start on one gives a closed client")
    func oneDriverForEveryTransport() async throws {
        let pair = try PseudoTerminalPair.open()
        defer { pair.master.close() }
        let looping = RPCClient(transport: pair.subordinate)
        defer { looping.close() }
        #expect(looping.taskExecutor != nil)
        let device = FakeDevice(transport: pair.master) { packet in
            guard packet.type == .request, packet.address == MethodID.inputStreamInputEvents else { return echoResponder(packet) }
            return [1, 2, 3].map { Packet(type: .streamMessage, isReliable: true, callID: packet.callID, payload: [$0]) }
        }
        await device.start()
        #expect(try await looping.unary(.devicePing, Blob([4, 2]), as: Blob.self, deadline: .seconds(60)) == Blob([4, 2]))
        // A stream over the loop: messages arrive in order, the device's reliable ones acknowledged.
        let stream = try looping.serverStream(.inputStreamInputEvents, Blob([3]), as: Blob.self)
        var received: [Blob] = []
        for try await message in stream {
            received.append(message)
            if received.count == 3 { break }
        }
        #expect(received == [Blob([1]), Blob([2]), Blob([3])])
        await device.waitUntil { $0.filter { $0.type == .ack }.count >= 3 }

        // An in-memory end on a loop timed by a manual clock: the same driver, in virtual time.
        let clock = ManualClock()
        let loop = SerialQueueEventLoop(name: "test", clock: clock)
        let (host, deviceEnd) = InMemoryTransport.makePair()
        let inMemoryDevice = FakeDevice(transport: deviceEnd, respond: echoResponder)
        await inMemoryDevice.start()
        let inMemory = RPCClient(transport: host, eventLoop: loop)
        defer { inMemory.close() }
        #expect(inMemory.taskExecutor != nil)
        #expect(try await inMemory.unary(.devicePing, Blob([9]), as: Blob.self) == Blob([9]))
        clock.advance(by: .seconds(1))
        #expect(await eventually { inMemory.now == .seconds(1) }, "the client's time is the loop's")

        // An end already on a loop cannot start another: the client is closed, its calls unavailable.
        let (taken, _) = InMemoryTransport.makePair()
        _ = taken.startEventLoop(delegate: IgnoringDelegate())
        let refused = RPCClient(transport: taken)
        #expect(refused.isClosed)
        #expect(refused.taskExecutor == nil)
        await #expect(throws: RPCError.self) { _ = try await refused.unary(.devicePing, Blob([1]), as: Blob.self) }
    }

    @Test("a client nobody holds any more closes its transport")
    func releasedClientCloses() async throws {
        let pair = try PseudoTerminalPair.open()
        defer { pair.master.close() }
        do {
            let client = RPCClient(transport: pair.subordinate)
            #expect(client.taskExecutor != nil)
        }
        // The subordinate end was closed with the client: the master sees the hang-up.
        var ending: TransportError?
        while ending == nil {
            do {
                _ = try await pair.master.receive()
            } catch {
                ending = error
            }
        }
        #expect(ending?.code == .closed)
    }

    @Test("a stream consumed on the client's taskExecutor runs on the link's own thread; work still runs after the link ends")
    func consumerOnTheLinksThread() async throws {
        let pair = try PseudoTerminalPair.open()
        defer { pair.master.close() }
        let client = RPCClient(transport: pair.subordinate)
        let executor = try #require(client.taskExecutor)
        let device = FakeDevice(transport: pair.master) { packet in
            guard packet.type == .request, packet.address == MethodID.inputStreamInputEvents else { return [] }
            return [7, 8].map { Packet(type: .streamMessage, callID: packet.callID, payload: [$0]) }
        }
        await device.start()
        let stream = try client.serverStream(.inputStreamInputEvents, Blob(), as: Blob.self)
        let threads = try await withTaskExecutorPreference(executor) {
            var names: [String?] = []
            for try await _ in stream {
                names.append(currentThreadName())
                if names.count == 2 { break }
            }
            return names
        }
        #if os(Linux)  // the thread's name is read from /proc
            #expect(threads == ["cc-link-loop", "cc-link-loop"])
            #expect(await Task(executorPreference: executor) { currentThreadName() }.value == "cc-link-loop")
        #else
            #expect(threads.count == 2)
        #endif

        client.close()
        let after = await Task(executorPreference: executor) { 42 }.value
        #expect(after == 42, "a job enqueued after the loop ended still runs")
    }

}

/// The OS's name of the thread running the caller (Linux: `/proc/thread-self/comm`; nil elsewhere).
func currentThreadName() -> String? {
    guard let text = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) else { return nil }
    return text.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// A delegate that ignores everything (for an end started only so that nothing else can start it).
final class IgnoringDelegate: EventLoopDelegate {
    func eventLoopReceived(_ bytes: UnsafeRawBufferPointer) {}
    func eventLoopTimerFired() {}
    func eventLoopEnded(_ error: TransportError) {}
}

/// The client's clock: read through the loop's control, unless the control says it is the system's.
@Suite("RPCClient clock")
struct RPCClientClockTests {
    @Test(
        "on a control that reads the system clock the client reads CLOCK_MONOTONIC itself; on any other it asks the control (a frozen manual clock stays frozen)",
        arguments: [true, false])
    func clockSource(claimsSystemClock: Bool) async throws {
        let (host, device) = InMemoryTransport.makePair()
        defer { device.close() }
        let client = RPCClient(
            transport: ClockClaimingTransport(host, claimsSystemClock: claimsSystemClock),
            eventLoop: SerialQueueEventLoop(name: "frozen", clock: ManualClock()))
        defer { client.close() }
        let before = client.now
        try await Task.sleep(for: .milliseconds(20))
        let after = client.now
        if claimsSystemClock {
            #expect(after - before >= .milliseconds(20))
        } else {
            #expect(before == .zero && after == .zero)
        }
    }
}

/// An in-memory transport whose loop's control says (or not) that its time is the system's, while the
/// loop's own time is a manual clock nobody advances.
private final class ClockClaimingTransport: EventLoopTransport {
    private let inner: InMemoryTransport
    private let claimsSystemClock: Bool

    init(_ inner: InMemoryTransport, claimsSystemClock: Bool) {
        self.inner = inner
        self.claimsSystemClock = claimsSystemClock
    }

    var name: String { inner.name }
    func send(_ bytes: [UInt8]) async throws(TransportError) { try await inner.send(bytes) }
    func receive() async throws(TransportError) -> [UInt8] { try await inner.receive() }
    func close() { inner.close() }

    func startEventLoop(delegate: any EventLoopDelegate, on loop: (any EventLoop)?) -> (any EventLoopControl)? {
        inner.startEventLoop(delegate: delegate, on: loop).map { Control(inner: $0, claimsSystemClock: claimsSystemClock) }
    }

    private struct Control: EventLoopControl {
        let inner: any EventLoopControl
        let claimsSystemClock: Bool

        func write(_ bytes: UnsafeRawBufferPointer) { inner.write(bytes) }
        func setTimer(after delay: Duration?) { inner.setTimer(after: delay) }
        var now: Duration { inner.now }
        var readsSystemClock: Bool { claimsSystemClock }
        var taskExecutor: any TaskExecutor { inner.taskExecutor }
    }
}
