import CameraControlTransport
import Synchronization
import Testing

@Suite("Receive adapter")
struct ReceiveAdapterTests {
    @Test("reading stops once the capacity is buffered, once, and restarts when receive() has taken it")
    func pausesAtTheCapacity() async throws {
        let adapter = ReceiveAdapter(capacity: 16)
        let calls = Mutex<[Bool]>([])
        adapter.attach { reading in calls.withLock { $0.append(reading) } }
        deliver(pattern(10), to: adapter)
        #expect(calls.withLock { $0 }.isEmpty, "below the capacity reading goes on")
        deliver(pattern(10, seed: 10), to: adapter)
        deliver(pattern(3, seed: 20), to: adapter)
        #expect(calls.withLock { $0 } == [false], "stopped once, at the capacity")
        #expect(try await adapter.receive() == pattern(23), "everything buffered, in order, in one piece")
        #expect(calls.withLock { $0 } == [false, true], "reading restarts once taken")
    }

    @Test("a waiting receive gets the next read at once; the ending comes after what was buffered, or at once when discarded")
    func endings() async throws {
        let adapter = ReceiveAdapter(capacity: 64)
        let waiting = Task { try await adapter.receive() }
        try await Task.sleep(for: .milliseconds(20))  // let it wait (it gets the bytes either way)
        deliver([1, 2, 3], to: adapter)
        #expect(try await waiting.value == [1, 2, 3])
        deliver([4], to: adapter)
        adapter.eventLoopEnded(TransportError(code: .io, message: "read failed"))
        deliver([5], to: adapter)  // nothing is taken after the end
        #expect(try await adapter.receive() == [4])
        do {
            _ = try await adapter.receive()
            Issue.record("read past the ending")
        } catch {
            #expect(error.code == .io)
        }

        let closing = ReceiveAdapter(capacity: 64)
        deliver([9], to: closing)
        closing.finish(TransportError(code: .closed, message: "closed here"), discardBuffered: true)
        do {
            _ = try await closing.receive()
            Issue.record("a discarded buffer was still read")
        } catch {
            #expect(error.code == .closed)
        }
    }

    @Test("one reader at a time; a cancelled reader ends with .cancelled and the next one reads")
    func oneReader() async throws {
        let adapter = ReceiveAdapter(capacity: 64)
        let (outcomes, outcome) = AsyncStream<(reader: Int, code: TransportError.Code?)>.makeStream()
        let readers = (0..<2).map { index in
            Task {
                do {
                    _ = try await adapter.receive()
                    outcome.yield((index, nil))
                } catch {
                    outcome.yield((index, (error as? TransportError)?.code))
                }
            }
        }
        // The one that came second is refused at once; the other waits until it is cancelled.
        var next = outcomes.makeAsyncIterator()
        let refused = try #require(await next.next())
        #expect(refused.code == .concurrentReceive)
        readers[1 - refused.reader].cancel()
        let cancelled = try #require(await next.next())
        #expect(cancelled.code == .cancelled)
        deliver([7], to: adapter)
        #expect(try await adapter.receive() == [7])
    }

    private func deliver(_ bytes: [UInt8], to adapter: ReceiveAdapter) {
        bytes.withUnsafeBytes { adapter.eventLoopReceived($0) }
    }
}
