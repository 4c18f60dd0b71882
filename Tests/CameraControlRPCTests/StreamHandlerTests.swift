import CameraControlPosixTransport
import CameraControlRPC
import CameraControlTestSupport
import CameraControlTransport
import CameraControlWire
import Dispatch
import Synchronization
import Testing

/// A stream whose messages go to a handler (`serverStream(…deliveringOn:to:)`): on the loop that drives
/// the client the handler runs during the read, with nothing scheduled; from anywhere else it is scheduled
/// on the loop. Either way it runs on the loop, in order, the ending last and once.
@Suite("RPCClient stream handlers")
struct StreamHandlerTests {
    /// Streams `count` one-byte messages and then `OK` to each stream request; echoes pings.
    static func streamingResponder(count: Int) -> FakeDevice.Responder {
        { packet in
            guard packet.type == .request, packet.address == MethodID.inputStreamInputEvents else { return echoResponder(packet) }
            return (0..<count).map { Packet(type: .streamMessage, isReliable: true, callID: packet.callID, payload: [UInt8($0)]) }
                + [Packet(type: .streamEnd, callID: packet.callID, status: .ok)]
        }
    }

    @Test("on the client's own loop, each message reaches the handler during the read: nothing is scheduled")
    func synchronousOnTheClientsLoop() async throws {
        let loop = try PollEventLoop(name: "cc-handler-test")
        defer { loop.shutdown() }
        let counting = SchedulingCounter(loop)
        let pair = try PseudoTerminalPair.open()
        defer { pair.master.close() }
        let client = RPCClient(transport: pair.subordinate, eventLoop: loop)
        defer { client.close() }
        #expect(client.taskExecutor != nil)
        let device = FakeDevice(transport: pair.master, respond: Self.streamingResponder(count: 5))
        await device.start()
        let log = HandlerLog(loop: loop)  // its own marker goes to the loop itself, not counted
        _ = try client.serverStream(.inputStreamInputEvents, Blob(), as: Blob.self, deliveringOn: counting) { log.record($0) }
        let events = await log.ending()
        #expect(events == ["0", "1", "2", "3", "4", "end ok"])
        #expect(log.everyCallOnTheLoop)
        #expect(counting.scheduled == 0, "a delivery was scheduled instead of made during the read")
    }

    @Test("on the client's own loop, each message reaches the handler before its ACK is written")
    func handlerBeforeItsAck() async throws {
        let loop = SerialQueueEventLoop(name: "client", clock: ManualClock())
        let wire = WireOrder()
        let (host, deviceEnd) = InMemoryTransport.makePair()
        let client = RPCClient(transport: TappedTransport(host, tap: wire), eventLoop: loop)
        defer { client.close() }
        let device = FakeDevice(transport: deviceEnd, respond: Self.streamingResponder(count: 5))
        await device.start()
        let log = HandlerLog(loop: loop)
        _ = try client.serverStream(.inputStreamInputEvents, Blob(), as: Blob.self, deliveringOn: loop) { event in
            if case .message(let blob) = event { wire.note("message \(blob.bytes[0])") }
            log.record(event)
        }
        #expect(await log.ending() == ["0", "1", "2", "3", "4", "end ok"])
        await device.waitUntil { packets in packets.filter { $0.type == .ack }.count >= 5 }
        // The device numbers its packets from 0: message k is sequence k.
        let entries = wire.entries
        for message in 0..<5 {
            let delivered = try #require(entries.firstIndex(of: "message \(message)"), "\(entries)")
            let acknowledged = try #require(entries.firstIndex(of: "ACK \(message)"), "\(entries)")
            #expect(delivered < acknowledged, "message \(message) was acknowledged before its handler ran: \(entries)")
        }
    }

    @Test("from a client driven by another loop, deliveries are scheduled on the loop, in order")
    func scheduledFromElsewhere() async throws {
        let loop = SerialQueueEventLoop(name: "handler-test")
        let counting = SchedulingCounter(loop)
        let (host, deviceEnd) = InMemoryTransport.makePair()
        let client = RPCClient(transport: host, eventLoop: SerialQueueEventLoop(name: "client", clock: ManualClock()))
        defer { client.close() }
        let device = FakeDevice(transport: deviceEnd, respond: Self.streamingResponder(count: 40))
        await device.start()
        let log = HandlerLog(loop: loop)  // its own marker goes to the loop itself, not counted
        _ = try client.serverStream(.inputStreamInputEvents, Blob(), as: Blob.self, deliveringOn: counting) { log.record($0) }
        let events = await log.ending()
        #expect(events == (0..<40).map { "\($0)" } + ["end ok"])
        #expect(log.everyCallOnTheLoop)
        #expect(counting.scheduled > 0)
    }

    @Test("a close from another task never overtakes a message: a prefix in order, then one ending")
    func closeNeverOvertakes() async throws {
        for round in 0..<40 {
            let loop = SerialQueueEventLoop(name: "handler-close")
            let (host, deviceEnd) = InMemoryTransport.makePair()
            let client = RPCClient(transport: host, eventLoop: SerialQueueEventLoop(name: "client", clock: ManualClock()))
            let device = FakeDevice(transport: deviceEnd, respond: echoResponder)
            await device.start()
            let log = HandlerLog(loop: loop)
            _ = try client.serverStream(.inputStreamInputEvents, Blob(), as: Blob.self, deliveringOn: loop) { log.record($0) }
            await device.waitFor(.request)
            let request = try #require(await device.received.first { $0.type == .request })
            await device.send((0..<20).map { Packet(type: .streamMessage, callID: request.callID, payload: [UInt8($0)]) })
            for _ in 0..<(round % 5) { await Task.yield() }
            client.close()
            let events = await log.ending()
            let messages = events.dropLast()
            #expect(Array(messages) == (0..<messages.count).map { "\($0)" }, "round \(round): \(events)")
            #expect(events.last == "end UNAVAILABLE", "round \(round): \(events)")
            #expect(log.everyCallOnTheLoop)
        }
    }

    @Test("a handler that cancels its own stream gets no message after the cancel, then one ending")
    func cancelFromTheHandler() async throws {
        let loop = try PollEventLoop(name: "cc-handler-cncl")
        defer { loop.shutdown() }
        let pair = try PseudoTerminalPair.open()
        defer { pair.master.close() }
        let client = RPCClient(transport: pair.subordinate, eventLoop: loop)
        defer { client.close() }
        let device = FakeDevice(transport: pair.master, respond: echoResponder)
        await device.start()
        let log = HandlerLog(loop: loop)
        let subscription = Mutex<StreamSubscription?>(nil)
        let started = try client.serverStream(.inputStreamInputEvents, Blob(), as: Blob.self, deliveringOn: loop) { event in
            log.record(event)
            if case .message(let blob) = event, blob.bytes == [2] { subscription.withLock { $0?.cancel() } }
        }
        subscription.withLock { $0 = started }
        await device.waitFor(.request)
        // In one write: the messages after the third arrive with it, and must still not be delivered.
        await device.send((0..<30).map { Packet(type: .streamMessage, callID: started.callID.rawValue, payload: [UInt8($0)]) })
        #expect(await log.ending() == ["0", "1", "2", "end CANCELLED"])
        await device.waitFor(.cancel, call: started.callID)
        #expect(log.everyCallOnTheLoop)
    }

    @Test("a message that does not decode ends the stream with INTERNAL and cancels the call")
    func undecodableMessageEndsTheStream() async throws {
        let loop = SerialQueueEventLoop(name: "handler-decode")
        let (host, deviceEnd) = InMemoryTransport.makePair()
        let client = RPCClient(transport: host, eventLoop: SerialQueueEventLoop(name: "client", clock: ManualClock()))
        defer { client.close() }
        let device = FakeDevice(transport: deviceEnd, respond: echoResponder)
        await device.start()
        let log = HandlerLog(loop: loop)
        let subscription = try client.serverStream(
            .inputStreamInputEvents, Blob(), as: Undecodable.self, deliveringOn: loop
        ) { log.record($0) }
        await device.waitFor(.request)
        await device.send([Packet(type: .streamMessage, callID: subscription.callID.rawValue, payload: [1])])
        #expect(await log.ending() == ["end INTERNAL"])
        await device.waitFor(.cancel, call: subscription.callID)
    }

    @Test("a handler more than the buffer limit behind ends the stream with RESOURCE_EXHAUSTED after what it took")
    func aHandlerTooFarBehind() async throws {
        let loop = SerialQueueEventLoop(name: "handler-slow")
        let (host, deviceEnd) = InMemoryTransport.makePair()
        let client = RPCClient(
            transport: host, configuration: RPCClient.Configuration(streamBufferLimit: 4),
            eventLoop: SerialQueueEventLoop(name: "client", clock: ManualClock()))
        defer { client.close() }
        let device = FakeDevice(transport: deviceEnd, respond: echoResponder)
        await device.start()
        // The loop is kept busy until the client has given up on the stream.
        let blocked = DispatchSemaphore(value: 0)
        loop.schedule(after: .zero) { blocked.wait() }
        let log = HandlerLog(loop: loop)
        let subscription = try client.serverStream(.inputStreamInputEvents, Blob(), as: Blob.self, deliveringOn: loop) {
            log.record($0)
        }
        await device.waitFor(.request)
        await device.send((0..<10).map { Packet(type: .streamMessage, callID: subscription.callID.rawValue, payload: [UInt8($0)]) })
        await device.waitFor(.cancel, call: subscription.callID)
        blocked.signal()
        #expect(await log.ending() == ["0", "1", "2", "3", "end RESOURCE_EXHAUSTED"])
    }
}

/// What a handler was called with, as text ("3", "end ok", "end UNAVAILABLE"), and whether every call ran
/// on the loop.
final class HandlerLog: Sendable {
    private let loop: any EventLoop
    private let state = Mutex<(events: [String], offLoop: Int, ended: Bool, waiter: CheckedContinuation<[String], Never>?)>(
        ([], 0, false, nil))

    init(loop: any EventLoop) {
        self.loop = loop
    }

    func record(_ event: StreamEvent<Blob>) {
        switch event {
        case .message(let blob): append(blob.bytes.map { "\($0)" }.joined(separator: ","), ends: false)
        case .ended(let error): append("end \(error.map { "\($0.code)" } ?? "ok")", ends: true)
        }
    }

    func record(_ event: StreamEvent<Undecodable>) {
        switch event {
        case .message: append("undecodable decoded", ends: false)
        case .ended(let error): append("end \(error.map { "\($0.code)" } ?? "ok")", ends: true)
        }
    }

    private func append(_ text: String, ends: Bool) {
        let onLoop = loop.isCurrent
        let waiter = state.withLock { state -> (CheckedContinuation<[String], Never>, [String])? in
            state.events.append(state.ended ? "after the end: \(text)" : text)
            if !onLoop { state.offLoop += 1 }
            guard ends, !state.ended else { return nil }
            state.ended = true
            defer { state.waiter = nil }
            return state.waiter.map { ($0, state.events) }
        }
        waiter.map { $0.0.resume(returning: $0.1) }
    }

    /// Waits for the ending, then once more for the loop to run what was already waiting on it, and
    /// returns every call: one after the ending shows up as "after the end: …".
    func ending() async -> [String] {
        _ = await withCheckedContinuation { continuation in
            let done = state.withLock { state -> [String]? in
                if state.ended { return state.events }
                state.waiter = continuation
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.schedule(after: .zero) { continuation.resume() }
        }
        return state.withLock { $0.events }
    }

    var everyCallOnTheLoop: Bool { state.withLock { $0.offLoop == 0 } }
}

/// An event loop that counts the bodies scheduled on it and passes everything to `base`.
final class SchedulingCounter: EventLoop, @unchecked Sendable {
    let base: any EventLoop
    private let count = Mutex(0)

    init(_ base: any EventLoop) {
        self.base = base
    }

    var scheduled: Int { count.withLock { $0 } }
    var isCurrent: Bool { base.isCurrent }
    func shutdown() { base.shutdown() }
    func enqueue(_ job: consuming ExecutorJob) { base.enqueue(job) }
    func asUnownedSerialExecutor() -> UnownedSerialExecutor { base.asUnownedSerialExecutor() }
    func asUnownedTaskExecutor() -> UnownedTaskExecutor { base.asUnownedTaskExecutor() }
    func checkIsolated() { base.checkIsolated() }

    @discardableResult
    func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> LoopTimer {
        count.withLock { $0 += 1 }
        return base.schedule(after: delay, body)
    }
}

/// The order of what a handler saw and what the client wrote: `ACK n` for each `ACK` of sequence n sent
/// (a tap on the client's transport), and the handler's own notes.
final class WireOrder: TransportTap {
    private let state = Mutex<(decoder: FrameDecoder, entries: [String])>((FrameDecoder(), []))

    var entries: [String] { state.withLock { $0.entries } }

    func note(_ text: String) {
        state.withLock { $0.entries.append(text) }
    }

    func received(_ bytes: UnsafeRawBufferPointer) {}

    func sent(_ bytes: UnsafeRawBufferPointer) {
        state.withLock { state in
            state.decoder.append(Array(bytes))
            while let output = state.decoder.next() {
                guard case .packet(let packet) = output, packet.type == .ack, packet.payload.count == 2 else { continue }
                state.entries.append("ACK \(UInt16(packet.payload[0]) | UInt16(packet.payload[1]) << 8)")
            }
        }
    }
}
