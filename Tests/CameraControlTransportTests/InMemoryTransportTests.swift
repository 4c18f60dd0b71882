import CameraControlTransport
import Testing

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

    @Test("a sender waits while the peer's buffer is full and continues once it is read")
    func boundedBuffering() async throws {
        let (host, device) = InMemoryTransport.makePair(capacity: 16)
        try await host.send(pattern(16))
        let blocked = Task { try await host.send([0xAA]) }
        // The second send cannot complete before the receiver drains; draining lets it through.
        #expect(try await receiveBytes(16, from: device) == pattern(16))
        try await blocked.value
        #expect(try await device.receive() == [0xAA])
    }

    @Test("closing unblocks a sender waiting for room")
    func closeUnblocksSender() async throws {
        let (host, device) = InMemoryTransport.makePair(capacity: 4)
        try await host.send([1, 2, 3, 4])
        let blocked = Task { () -> TransportError? in
            do {
                try await host.send([5])
                return nil
            } catch {
                return error as? TransportError
            }
        }
        device.close()
        #expect(await blocked.value?.code == .closed)
    }
}
