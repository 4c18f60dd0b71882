import CameraControlPosixTransport
import CameraControlTestSupport
import CameraControlTransport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// No write of the transports can raise SIGPIPE: a pipe or pty whose reader is gone is an error, not the
/// end of the host process (the library never makes its host ignore SIGPIPE).
@Suite("Writes never raise SIGPIPE")
struct NoSigpipeTests {
    @Test("a write to a pipe whose reader closed fails with EPIPE and leaves no SIGPIPE pending")
    func pipeWithoutReader() throws {
        let ends = try SystemCalls.live.pipe().get()
        _ = SystemCalls.live.close(ends.read)
        defer { _ = SystemCalls.live.close(ends.write) }
        for _ in 0..<3 {
            let result = [UInt8(1)].withUnsafeBytes { SystemCalls.live.write(ends.write, $0) }
            #expect(result == .failure(SystemErrno(EPIPE)))
        }
        var pending = sigset_t()
        sigemptyset(&pending)
        sigpending(&pending)
        #expect(sigismember(&pending, SIGPIPE) == 0)
    }

    @Test("an event loop's link whose reader went away ends, and the process lives on")
    func loopWriteAfterPeerGone() async throws {
        let ends = try SystemCalls.live.pipe().get()
        _ = SystemCalls.live.setNonblocking(ends.write)
        let loop = try PollEventLoop(name: "cc-test-pipe")
        defer { loop.shutdown() }
        let ended = EndRecorder()
        let registration = loop.register(descriptor: ends.write, name: "pipe", delegate: ended) {
            _ = SystemCalls.live.close(ends.write)
        }
        _ = SystemCalls.live.close(ends.read)
        // From another thread (written at once) and as the loop's queue drains.
        for _ in 0..<4 { [UInt8](repeating: 7, count: 64).withUnsafeBytes { registration.write($0) } }
        #expect(await eventually { ended.error != nil })
    }
}

/// Records the ending an event loop reports.
private final class EndRecorder: EventLoopDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var ending: TransportError?

    var error: TransportError? { lock.withLock { ending } }

    func eventLoopReceived(_ bytes: UnsafeRawBufferPointer) {}
    func eventLoopTimerFired() {}
    func eventLoopEnded(_ error: TransportError) { lock.withLock { ending = error } }
}
