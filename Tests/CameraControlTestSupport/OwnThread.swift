import Foundation

/// Runs `body` on a thread of its own and waits for it without holding a thread of Swift's cooperative pool.
///
/// A test that computes for tens of seconds without suspending (a property test in virtual time) would
/// otherwise keep one of the pool's threads, of which there are as many as cores: on a 2-core machine two
/// such tests stall every other test, and a real-time test then misses its deadlines although its device
/// answered. On its own thread the work only shares the CPU, as any process would; and at most one such
/// body computes at a time in the test process (the others wait on their own threads), so the real-time
/// tests keep a core.
public func onOwnThread<T: Sendable>(
    _ name: String = "cameracontrol.test.compute", _ body: @escaping @Sendable () throws -> T
) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            ownThreadGate.wait()
            let result = Result { try body() }
            ownThreadGate.signal()
            continuation.resume(with: result)
        }
        thread.name = name
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// Runs `body`, which blocks on I/O (a socket's reads, say), on a thread of its own and waits for it without
/// holding a thread of Swift's cooperative pool — and without the gate of ``onOwnThread(_:_:)``: it waits
/// rather than computes, and behind that gate it would wait for every long computation of the test process
/// (a property test's minutes) while its peer (a server with a deadline of its own) runs on.
public func blockingOnOwnThread<T: Sendable>(
    _ name: String = "cameracontrol.test.io", _ body: @escaping @Sendable () throws -> T
) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = name
        thread.start()
    }
}

/// Lets one ``onOwnThread(_:_:)`` body compute at a time.
private let ownThreadGate = DispatchSemaphore(value: 1)
