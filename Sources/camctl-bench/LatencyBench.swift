import CameraControlCapture
import CameraControlHost
import CameraControlPosixTransport
import Foundation

/// `camctl-bench latency [--clicks N] [--paced-clicks N (≤ 63)]`: how long the host takes to deliver what the
/// device did.
///
/// - **host stack**: ``HostStackLatency``: a `STREAM_MESSAGE` frame written to a real pty → this project's
///   stream handler, on one clock, next to the bare one-way pty trip of the same run.
/// - **pty floor**: a bare round trip over a pseudo-terminal pair (write on one end → read on the other),
///   measured in this run with this project's own PTY transport.
/// - **press → handler**: `camctl-sim` plays `--clicks` button clicks (40); for each capture event the handler
///   computes host time now minus the host time of the press's device timestamp (through the host's
///   device-clock estimate, whose uncertainty is a few tens of µs on a pty). It includes the firmware's
///   debounce and the simulator's pacing; the floor it is compared with is one sample period (1 ms at 1 kHz).
/// - **paced**: the rows of `camctl-bench paced` (``PacedLatencyBench``) with `--paced-clicks` clicks (30) per
///   pacing: the simulated press → handler with `camctl-sim` pacing its bytes at 115200 baud, 1 Mbaud and
///   unpaced, each next to a minimal C host's press → frame read over its own `camctl-sim` (what the
///   simulator and the pty cost alone), and that next to the physical floor (the frame's time on the wire
///   plus one sample period). For the plot and more clicks, run `paced --svg FILE`.
enum LatencyBench {
    static func ptyRoundTrips(count: Int) async throws -> [Double] {
        let pair = try PseudoTerminalPair.open()
        defer {
            pair.master.close()
            pair.subordinate.close()
        }
        var out: [Double] = []
        let clock = ContinuousClock()
        for index in 0..<count {
            let start = clock.now
            try await pair.master.send([UInt8(truncatingIfNeeded: index | 1), 0])
            var received = 0
            while received < 2 { received += try await pair.subordinate.receive().count }
            let elapsed = start.duration(to: clock.now).components
            out.append(Double(elapsed.seconds) * 1e6 + Double(elapsed.attoseconds) / 1e12)
        }
        return out
    }

    static func run(_ options: BenchOptions) async throws -> [BenchRow] {
        let clicks = options.smoke ? 3 : try options.integer("clicks", default: 40)
        let pacedClicks = try PacedLatencyBench.clicks(options, option: "paced-clicks", default: 30)
        let floor = try await ptyRoundTrips(count: options.smoke ? 20 : 2_000)

        let simulator = try BenchSimulator(options, clicks: clicks)
        defer { simulator.stop() }
        let host = try await simulator.connect()
        let latencies = BenchSimulator.Samples()
        try await simulator.collectPresses(into: host, count: clicks, until: latencies) { event in
            guard let offset = host.clockOffsetMicros else { return }
            let now = Int64(bitPattern: HostClock.monotonic.nowMicros())
            latencies.add(Double(now - (Int64(bitPattern: event.deviceTimestampMicros) + offset)))
        }
        simulator.stop()
        let monitor = try MonitorLatency.presses(options, clicks: clicks)
        let hostStack = try await HostStackLatency.rows(smoke: options.smoke)
        let paced = try await PacedLatencyBench.measure(options, clicks: pacedClicks).rows
        return hostStack + [
            BenchRow(name: "pty round trip, 2 bytes (the floor)", unit: "µs", project: Stats(floor), baseline: nil),
            .compare(
                "press → capture handler (device timestamp → handler)", unit: "µs", latencies.all,
                against: "one 1 kHz sample period", [1_000]),
            .compare(
                "camctl monitor --json: press → its capture line read (0 hops)", unit: "µs", monitor,
                against: "the library's capture handler", latencies.all),
        ] + paced
    }
}
