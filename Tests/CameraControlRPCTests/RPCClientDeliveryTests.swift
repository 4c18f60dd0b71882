import CameraControlRPC
import CameraControlTestSupport
import CameraControlTransport
import CameraControlWire
import Testing

/// What the client hands out (responses, stream messages, link events) leaves its lock first: a task
/// cancelled while its answer arrives never deadlocks, and the order of deliveries is the core's.
@Suite("RPCClient deliveries")
struct RPCClientDeliveryTests {
    func makeClient() async -> (RPCClient, FakeDevice) {
        let (host, deviceEnd) = InMemoryTransport.makePair()
        let device = FakeDevice(transport: deviceEnd, respond: echoResponder)
        await device.start()
        return (RPCClient(transport: host, eventLoop: SerialQueueEventLoop(name: "client", clock: ManualClock())), device)
    }

    @Test(
        "calls cancelled at random moments while answers arrive: each ends (answered or cancelled), none hangs",
        .timeLimit(.minutes(1)))
    func cancellationRacesTheAnswer() async throws {
        let (client, _) = await makeClient()
        defer { client.close() }
        var random = SeededGenerator(seed: 77)
        var answered = 0
        var cancelled = 0
        for index in 0..<500 {
            let call = Task { try await client.unary(.devicePing, Blob([UInt8(truncatingIfNeeded: index)]), as: Blob.self) }
            for _ in 0..<Int.random(in: 0..<6, using: &random) { await Task.yield() }
            call.cancel()
            do {
                #expect(try await call.value == Blob([UInt8(truncatingIfNeeded: index)]))
                answered += 1
            } catch let error as RPCError {
                #expect(error.code == .cancelled)
                cancelled += 1
            }
        }
        #expect(answered + cancelled == 500)
    }

    @Test("a close from another task never overtakes a stream message: the messages come, in order, then the end")
    func closeAfterMessages() async throws {
        for round in 0..<50 {
            let (client, device) = await makeClient()
            let stream = try client.serverStream(.inputStreamInputEvents, Blob([]), as: Blob.self)
            await device.waitFor(.request)
            let request = try #require(await device.received.first { $0.type == .request })
            let messages = (0..<20).map { Packet(type: .streamMessage, callID: request.callID, payload: [UInt8($0)]) }
            await device.send(messages)
            let closer = Task {
                for _ in 0..<(round % 5) { await Task.yield() }
                client.close()
            }
            var seen: [UInt8] = []
            do {
                for try await message in stream { seen += message.bytes }
            } catch {
                #expect(error.code == .unavailable)
            }
            await closer.value
            // Whatever came is a prefix of what was sent, in order: nothing after the end, nothing reordered.
            #expect(seen == Array(0..<UInt8(seen.count)), "round \(round): \(seen)")
        }
    }
}
