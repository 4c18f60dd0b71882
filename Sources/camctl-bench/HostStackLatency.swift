import CBenchSupport
import CameraControlPosixTransport
import CameraControlRPC
import CameraControlWire
import Dispatch
import Foundation
import Synchronization

/// The host stack alone over a real pty, for `camctl-bench latency`: a device played by a thread of this
/// process writes one `STREAM_MESSAGE` frame (an `InputEvent`) at a time to the master end of a
/// pseudo-terminal pair with `write()`; the host end is this project's `PTYTransport` under an
/// `RPCClient`, and the handler is the body of the `for try await` loop over the `RPCStream`. Each
/// figure is the time from calling `write()` (the frame's last byte is in the pty when it returns, a
/// few µs later) to the handler, on one clock (`CLOCK_MONOTONIC`): taken before the write, it cannot be
/// made negative by the device thread being preempted after it. The next frame is written once the
/// handler ran. Path: the pty's event-loop thread (`poll()` wakes, read, deframe, `ConnectionCore`) →
/// `StreamChannel` resumes the consumer task: one thread hop, onto the cooperative pool. With
/// ``Consumer/loopExecutor`` the consumer prefers the client's `taskExecutor` and runs on the loop's own
/// thread right after the read: no hop, one task resumed. With ``Consumer/handler`` the stream's handler
/// (`serverStream(…deliveringOn:to:)` on the client's loop) is called during the read: no hop, no task.
///
/// Frames follow each other ``warmGapMicros`` apart: the host's code and data are still in the caches.
/// The last two rows repeat the C reader and the handler with ``coldGapMicros`` between frames, as
/// between a person's presses: after that long asleep every page and cache line a path touches costs a
/// miss on this shared VM (the first `clock_gettime` after 50 ms asleep took 1.7 µs against 30 ns
/// warm), so a path's cold time follows how much memory it touches more than how many instructions it
/// runs.
///
/// The baseline next to it is a minimal C reader of the same shape (`cc_bench_pty_cross_thread`): a
/// thread asleep in `poll()` on the subordinate, woken by another thread's `write()` of the same frame,
/// reads to its delimiter and stamps the time; the writer waits for it, then sleeps 200 µs. That is the
/// floor a host pays for the pty and one thread wake-up. The bare one-way trip (`write()` of 2 bytes →
/// blocking `read()` of them in the same C thread, no wake-up of a sleeping thread) is shown too.
enum HostStackLatency {
    /// The consumer's side: when the handler last ran (ns), and a semaphore the device thread waits on.
    final class Handoff: Sendable {
        let handled = Atomic<UInt64>(0)
        let semaphore = DispatchSemaphore(value: 0)
    }

    static func nanos() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Who takes the stream's messages.
    enum Consumer {
        /// A task iterating the `RPCStream` on the cooperative pool.
        case pool
        /// A task iterating it on the client's `taskExecutor` (the loop's thread).
        case loopExecutor
        /// A handler called synchronously on the client's loop.
        case handler
    }

    /// The pause between two frames of the warm rows, µs: the reader is back asleep in `poll()`.
    static let warmGapMicros: UInt32 = 200
    /// The pause between two frames of the cold rows, µs: as between a person's presses.
    static let coldGapMicros: UInt32 = 20_000

    /// Write → handler samples, µs, for one kind of consumer, frames `gapMicros` apart.
    static func samples(count: Int, consumer: Consumer = .pool, gapMicros: UInt32 = warmGapMicros) async throws -> [Double] {
        var master: Int32 = -1
        var path = [CChar](repeating: 0, count: 128)
        guard cc_bench_open_pty(&master, &path, path.count) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        defer { close(master) }
        let transport = try PTYTransport(
            path: String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), exclusive: false)
        let loop = try PollEventLoop(name: "cc-bench-stack")
        defer { loop.shutdown() }
        let client = RPCClient(transport: transport, eventLoop: loop)
        defer { client.close() }
        let handoff = Handoff()
        var stream: RPCStream<InputEvent>?
        var subscription: StreamSubscription?
        if consumer == .handler {
            subscription = try client.serverStream(
                .inputStreamInputEvents, StreamInputEventsRequest(), as: InputEvent.self, deliveringOn: loop
            ) { event in
                guard case .message = event else { return }
                handoff.handled.store(nanos(), ordering: .releasing)
                handoff.semaphore.signal()
            }
        } else {
            stream = try client.serverStream(.inputStreamInputEvents, StreamInputEventsRequest(), as: InputEvent.self)
        }
        defer { subscription?.cancel() }

        // The device: read the REQUEST, acknowledge it (so it is not retransmitted), learn its call id.
        var decoder = FrameDecoder()
        var request: Packet?
        var buffer = [UInt8](repeating: 0, count: 512)
        while request == nil {
            let got = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
            guard got > 0 else { throw POSIXError(.EIO) }
            decoder.append(buffer[0..<got])
            while let output = decoder.next() {
                if case .packet(let packet) = output, packet.type == .request { request = packet }
            }
        }
        guard let request else { throw POSIXError(.EIO) }
        var frames: [[UInt8]] = [try PacketEncoder.encode(.ack(sequence: 0, acking: request.sequence))]
        for index in 0..<count {
            let event = InputEvent(
                timestampMicros: UInt64(index) * 1_000, kind: .lightPressDown, source: .cameraControl,
                forceMillinewtons: 900, position: 0, eventNumber: UInt32(index + 1))
            frames.append(
                try PacketEncoder.encode(
                    Packet(
                        type: .streamMessage, sequence: UInt16(truncatingIfNeeded: index + 1), callID: request.callID,
                        payload: event.serializedBytes())))
        }

        let executor = consumer == .loopExecutor ? client.taskExecutor : nil
        let iterating = Task(executorPreference: executor) { [stream] in
            guard let stream else { return }
            do {
                for try await _ in stream {
                    handoff.handled.store(nanos(), ordering: .releasing)
                    handoff.semaphore.signal()
                }
            } catch {}
        }
        defer { iterating.cancel() }
        // A thread of its own: it blocks in write() and on the semaphore.
        return await withCheckedContinuation { continuation in
            Thread { [frames, master] in
                var out: [Double] = []
                out.reserveCapacity(count)
                _ = frames[0].withUnsafeBytes { write(master, $0.baseAddress, $0.count) }  // the ACK
                for frame in frames.dropFirst() {
                    let start = nanos()
                    let written = frame.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
                    guard written == frame.count else { break }
                    guard handoff.semaphore.wait(timeout: .now() + .seconds(5)) == .success else { break }
                    let handled = handoff.handled.load(ordering: .acquiring)
                    out.append(Double(Int64(bitPattern: handled &- start)) / 1_000)
                    usleep(gapMicros)  // let the host go idle between messages, as between real events
                }
                continuation.resume(returning: out)
            }.start()
        }
    }

    /// The bare one-way pty trip, µs.
    static func bareOneWay(count: Int) throws -> [Double] {
        var micros = [Double](repeating: 0, count: count)
        guard cc_bench_pty_one_way(count, &micros) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return micros
    }

    /// The minimal C reader woken across threads by the same frames, `gapMicros` apart, µs.
    static func crossThread(count: Int, gapMicros: UInt32 = warmGapMicros) throws -> [Double] {
        let event = InputEvent(
            timestampMicros: 1_000, kind: .lightPressDown, source: .cameraControl, forceMillinewtons: 900, position: 0,
            eventNumber: 1)
        let frame = try PacketEncoder.encode(Packet(type: .streamMessage, sequence: 1, callID: 1, payload: event.serializedBytes()))
        var micros = [Double](repeating: 0, count: count)
        let status = frame.withUnsafeBufferPointer { cc_bench_pty_cross_thread(count, $0.baseAddress, $0.count, gapMicros, &micros) }
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return micros
    }

    /// The latency rows: the host stack (consumer on the pool, then on the link's thread) next to the C
    /// reader woken across threads, and the bare one-way pty trip; then the C reader and the handler cold.
    static func rows(smoke: Bool) async throws -> [BenchRow] {
        let count = smoke ? 20 : 2_000
        let coldCount = smoke ? 5 : 150
        let bare = try bareOneWay(count: count)
        let woken = try crossThread(count: count)
        let stack = try await samples(count: count)
        let inPlace = try await samples(count: count, consumer: .loopExecutor)
        let handler = try await samples(count: count, consumer: .handler)
        // Cold: the two alternate, half the frames each time, so what the shared machine does meanwhile
        // falls on both.
        var wokenCold: [Double] = []
        var handlerCold: [Double] = []
        for half in [coldCount / 2, coldCount - coldCount / 2] {
            wokenCold += try crossThread(count: half, gapMicros: coldGapMicros)
            handlerCold += try await samples(count: half, consumer: .handler, gapMicros: coldGapMicros)
        }
        guard stack.count == count, inPlace.count == count, handler.count == count, handlerCold.count == coldCount else {
            throw POSIXError(.ETIMEDOUT)  // the host did not deliver a message within 5 s
        }
        let baseline = "C reader woken by the write"
        return [
            BenchRow(
                name: "pty one way, 2 bytes (C write → read, one thread)", unit: "µs", project: Stats(bare), baseline: nil),
            BenchRow(
                name: "pty, a C reader asleep in poll() woken by the write (floor)", unit: "µs", project: Stats(woken),
                baseline: nil),
            BenchRow(
                name: "host stack: write() called → stream handler (1 hop)", unit: "µs", project: Stats(stack),
                baseline: (baseline, Stats(woken))),
            BenchRow(
                name: "  same, handler on the link's thread (taskExecutor, 0 hops)", unit: "µs", project: Stats(inPlace),
                baseline: (baseline, Stats(woken))),
            BenchRow(
                name: "  same, handler called during the read (deliveringOn, no task)", unit: "µs", project: Stats(handler),
                baseline: (baseline, Stats(woken))),
            BenchRow(
                name: "pty, the C reader woken by the write, frames 20 ms apart (cold)", unit: "µs", project: Stats(wokenCold),
                baseline: nil),
            BenchRow(
                name: "  host stack, handler called during the read, 20 ms apart", unit: "µs", project: Stats(handlerCold),
                baseline: ("C reader, 20 ms apart", Stats(wokenCold))),
        ]
    }
}
