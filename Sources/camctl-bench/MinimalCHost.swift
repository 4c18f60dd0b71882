import CBenchSupport
import Foundation

/// The baseline of `camctl-bench paced`: a minimal C host (`cc_bench_press_host_run`, in CBenchSupport's
/// `cc_bench_press.c`) against its own `camctl-sim`, with the same clicks and pacing as this project's host.
///
/// On one thread of its own it opens the simulator's pty raw, does the handshake (host version 1.1), opens
/// `InputService/StreamInputEvents`, ACKs every reliable packet, sends heartbeats, and in a `poll()` loop
/// reads, deframes (the firmware core's COBS and CRC-16 decoder), parses the envelope and unpacks each
/// `InputEvent` (protobuf-c). `CLOCK_MONOTONIC` is read right after a volume-down press's event is
/// unpacked; minus the press's device timestamp placed on that clock exactly
/// (``BenchSimulator/clockOrigin()``), that is the latency with no Swift host at all: what `camctl-sim`
/// (its wake-up after the sample, the firmware, its pacing and write) and the pty cost.
enum MinimalCHost {
    /// What one run of the C host gave.
    struct Run: Sendable {
        /// Each press's latency, µs: decoded (`CLOCK_MONOTONIC`) minus the press's device timestamp.
        var latencies: [Double]
        /// The same less the time its frame (as received) takes on the wire at the run's pacing, µs.
        var aboveWire: [Double]
        /// Its own work on each press: from the `poll()` that brought the frame returning to the event
        /// unpacked, µs.
        var hostWork: [Double]
        /// What the C host counted (frames, duplicates, ACKs, heartbeats).
        var counts: cc_bench_press_host_counts_t
    }

    /// Runs `camctl-sim` (paced at `baud`, or unpaced) playing `clicks` volume-down clicks into the minimal C
    /// host; returns each press's latency (fewer when the run times out, after the clicks' time plus 10 s).
    ///
    /// - Throws: ``BenchSimulator/Failure`` when the simulator does not start, its pty does not open, the
    ///   device refuses the handshake or the stream, or not one press arrived.
    static func presses(_ options: BenchOptions, baud: Int?, clicks: Int) async throws -> Run {
        let simulator = try BenchSimulator(
            options, clicks: clicks, arguments: ["--print-clock-origin"] + (baud.map { ["--baud", String($0)] } ?? []))
        defer { simulator.stop() }
        let origin = try simulator.clockOrigin()
        let port = simulator.port
        let timeout = Double(clicks) * 0.2 + 10
        // Its own thread: the C loop blocks in poll() for the whole run, which a cooperative thread must not.
        let (stored, presses, counts, error) = await withCheckedContinuation { continuation in
            Thread {
                var presses = [cc_bench_press_t](repeating: cc_bench_press_t(), count: clicks)
                var counts = cc_bench_press_host_counts_t()
                let stored = cc_bench_press_host_run(port, clicks, timeout, &presses, &counts)
                continuation.resume(returning: (stored, presses, counts, errno))
            }.start()
        }
        guard stored >= 0 else {
            throw BenchSimulator.Failure(description: "the minimal C host could not open \(port): \(String(cString: strerror(error)))")
        }
        guard counts.refused == 0, stored > 0 else {
            throw BenchSimulator.Failure(
                description:
                    "the minimal C host got no press from camctl-sim (refused: \(counts.refused), frames: \(counts.frames), failed writes: \(counts.failed_writes))"
            )
        }
        let received = presses.prefix(Int(stored))
        let latencies = received.map { Double($0.decoded_nanos) / 1_000 - Double(origin + Int64($0.device_micros)) }
        let aboveWire = zip(latencies, received).map { latency, press in
            latency - PacedLatencyBench.wireMicros(bytes: Int(press.wire_bytes), baud: baud)
        }
        let hostWork = received.map { Double($0.decoded_nanos &- $0.woke_nanos) / 1_000 }
        return Run(latencies: latencies, aboveWire: aboveWire, hostWork: hostWork, counts: counts)
    }
}
