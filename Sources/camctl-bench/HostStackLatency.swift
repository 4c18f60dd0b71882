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
/// handler ran. Path: reader thread →
/// `ChunkQueue` → `RPCClient` actor (deframe, decode) → `StreamChannel` → the consumer task.
///
/// The floor next to it is the same pty's bare one-way trip: `write()` of 2 bytes on the master →
/// blocking `read()` of them on the subordinate, in one C thread.
enum HostStackLatency {
    /// The consumer's side: when the handler last ran (ns), and a semaphore the device thread waits on.
    final class Handoff: Sendable {
        let handled = Atomic<UInt64>(0)
        let semaphore = DispatchSemaphore(value: 0)
    }

    static func nanos() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Write → handler samples, µs.
    static func samples(count: Int) async throws -> [Double] {
        var master: Int32 = -1
        var path = [CChar](repeating: 0, count: 128)
        guard cc_bench_open_pty(&master, &path, path.count) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        defer { close(master) }
        let transport = try PTYTransport(path: String(cString: path), exclusive: false)
        let client = RPCClient(transport: transport)
        defer { client.close() }
        let stream = try client.serverStream(.inputStreamInputEvents, StreamInputEventsRequest(), as: InputEvent.self)

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

        let handoff = Handoff()
        let consumer = Task {
            do {
                for try await _ in stream {
                    handoff.handled.store(nanos(), ordering: .releasing)
                    handoff.semaphore.signal()
                }
            } catch {}
        }
        defer { consumer.cancel() }
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
                    usleep(200)  // let the host go idle between messages, as between real events
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

    /// The latency rows: the host stack next to the bare one-way pty trip.
    static func rows(smoke: Bool) async throws -> [BenchRow] {
        let count = smoke ? 20 : 2_000
        let bare = try bareOneWay(count: count)
        let stack = try await samples(count: count)
        guard stack.count == count else {
            throw POSIXError(.ETIMEDOUT)  // the host did not deliver a message within 5 s
        }
        return [
            BenchRow(
                name: "pty one way, 2 bytes (C write → read)", unit: "µs", project: Stats(bare), baseline: nil),
            BenchRow(
                name: "host stack: write() called → stream handler", unit: "µs", project: Stats(stack),
                baseline: ("pty one way (C)", Stats(bare))),
        ]
    }
}
