import CameraControlHost
import CameraControlPosixTransport
import CameraControlWire
import Foundation

/// `camctl-bench paced [--clicks N (≤ 63)] [--svg FILE] [--sim-args "ARGS"]`: the simulated press → capture handler latency with
/// `camctl-sim` pacing its bytes like a UART (`--baud`) at 115200 baud and 1 Mbaud, and unpaced, each next
/// to the same press → frame read by a minimal C host (``MinimalCHost``) measured in the same run, and that
/// next to the physical floor: the press event's frame on the wire (10 bits a byte, 8N1) plus one sample
/// period (the press happened somewhere in the sample period before the sample that saw it). The measured
/// latency starts at the device timestamp of that sample, so the rows "above the wire time" are what the
/// simulator's wake-ups and the pty add to the physics, with this project's host on top or with the C host
/// (the target: at most 100 µs). The C host's figure is what `camctl-sim` and the pty cost alone; ours minus
/// it, quantile by quantile, is this project's host.
///
/// Each pacing alternates the two hosts over ``rounds`` rounds (the clicks shared between them): a fresh
/// `camctl-sim` playing volume-down clicks into the public `CameraControlHost`, then another with as many
/// clicks into the C host, and again, so that what the shared machine does during the run (another job,
/// where the scheduler puts the simulator and the reader, which can move a run's median by tens of µs)
/// falls on both hosts alike, not on one run of each. The handler (and the C host) computes
/// `CLOCK_MONOTONIC` now minus the press's device timestamp placed on that clock exactly (`camctl-sim
/// --print-clock-origin`). The same latency through the host's own clock estimate (ping round trips, which
/// assume the two directions take equally long) is printed as that estimate's error. `--svg FILE` writes
/// this project's distributions as an SVG plot (``LatencyPlot``). `--sim-args "--spin-us 60"` passes words to
/// every `camctl-sim` it starts (``BenchSimulator``), e.g. its precise wake-ups.
enum PacedLatencyBench {
    /// One pacing of the simulator's output.
    struct Pacing: Sendable {
        /// Shown in the table, e.g. `115200 baud`.
        let name: String
        /// Bits per second; nil: unpaced.
        let baud: Int?
    }

    /// One pacing's presses: each one's latency, µs, the same above its frame's time on the wire, µs, and
    /// the host's clock estimate's error on it, µs.
    struct Presses {
        /// Device timestamp → capture handler, µs, in the order handled.
        var latencies: [Double]
        /// The same less each press's frame time on the wire (0 unpaced), µs.
        var aboveWire: [Double]
        /// Latency through the host's clock estimate minus the exact one, µs.
        var estimateErrors: [Double]
        /// The host's own work on the press: from its loop's `poll()` returning to the handler, µs.
        var hostWork: [Double]
    }

    /// The rounds each pacing alternates the two hosts in (fewer when there are fewer clicks).
    static let rounds = 4

    /// `clicks` shared between the rounds, in order: `[10, 10, 10, 10]` for 40, `[3]` for 3 with one
    /// round a click… at most ``rounds`` rounds, their sizes one apart at most.
    static func roundSizes(clicks: Int) -> [Int] {
        let count = max(1, min(rounds, clicks))
        return (0..<count).map { clicks / count + ($0 < clicks % count ? 1 : 0) }
    }

    /// The simulator's sample period at its default 1 kHz.
    static let samplePeriodMicros = 1_000.0

    /// The pacings measured, in this order.
    static let pacings = [
        Pacing(name: "unpaced", baud: nil), Pacing(name: "1 Mbaud", baud: 1_000_000), Pacing(name: "115200 baud", baud: 115_200),
    ]

    /// The press event's frame as the device sends it, in bytes on the wire including the delimiter: a
    /// volume-down press at `timestampMicros` of device time (by default a few seconds into a session), with
    /// the v1.1 `reliable_event_number` a device always sets. 21 bytes past 2.1 s of device time, 20 before
    /// (the timestamp's varint is a byte shorter), as the minimal C host sees (`cc_bench_press_t.wire_bytes`).
    static func pressFrameBytes(timestampMicros: UInt64 = 2_500_000) -> Int {
        let event = InputEvent(
            timestampMicros: timestampMicros, kind: .buttonDown, source: .volumeDown, eventNumber: 21, reliableEventNumber: 21)
        let packet = Packet(type: .streamMessage, isReliable: true, sequence: 40, callID: 3, payload: event.serializedBytes())
        return (try? PacketEncoder.encode(packet).count) ?? 0
    }

    /// The time `bytes` take on the wire at `baud` (10 bits a byte, 8N1; nil: unpaced, no time), µs.
    static func wireMicros(bytes: Int, baud: Int?) -> Double {
        guard let baud else { return 0 }
        return Double(bytes * 10) * 1e6 / Double(baud)
    }

    /// The physical floor at `baud` (nil: unpaced, the wire takes no time): the representative press
    /// frame's time plus one sample period, microseconds.
    static func floorMicros(baud: Int?) -> Double {
        wireMicros(bytes: pressFrameBytes(), baud: baud) + samplePeriodMicros
    }

    /// The subcommand: ``measure(_:clicks:)``'s rows, and the plot when `--svg FILE` asks for it.
    static func run(_ options: BenchOptions) async throws -> [BenchRow] {
        let clicks = try Self.clicks(options, option: "clicks", default: 60)
        let (rows, series) = try await measure(options, clicks: clicks)
        if let path = options.values["svg"] {
            let plot = LatencyPlot(
                title: "camctl-sim → CameraControlHost: press → capture handler, \(clicks) clicks each", series: series)
            try plot.svg().write(toFile: path, atomically: true, encoding: .utf8)
        }
        return rows
    }

    /// The clicks per pacing from `--OPTION N` (`fallback` without it; 3 in smoke mode).
    ///
    /// - Throws: a usage error outside 1…63 (a scenario's limit).
    static func clicks(_ options: BenchOptions, option: String, default fallback: Int) throws -> Int {
        let clicks = options.smoke ? 3 : try options.integer(option, default: fallback)
        guard clicks > 0, clicks <= BenchSimulator.maxClicks else {
            throw BenchOptions.UsageError(message: "--\(option) must be 1…\(BenchSimulator.maxClicks)")
        }
        return clicks
    }

    /// Every pacing's rows (press → handler next to the minimal C host's press → frame read, that next to
    /// its floor; both above the wire time; ours minus the C host's; the clock estimate's error) and this
    /// project's latencies for the plot: `clicks` presses each. `paced` prints these, and `latency` prints
    /// them after its own rows.
    static func measure(_ options: BenchOptions, clicks: Int) async throws -> (rows: [BenchRow], series: [LatencyPlot.Series]) {
        var rows: [BenchRow] = []
        var series: [LatencyPlot.Series] = []
        for pacing in pacings {
            var presses = Presses(latencies: [], aboveWire: [], estimateErrors: [], hostWork: [])
            var cHost = (latencies: [Double](), aboveWire: [Double](), hostWork: [Double]())
            let shares = roundSizes(clicks: clicks)
            for (index, share) in shares.enumerated() {
                // A run takes a minute or more (one click each 150 ms, a fresh simulator for every round
                // and host): say where it is, on standard error so that the table stays clean.
                FileHandle.standardError.write(
                    Data("  \(pacing.name): round \(index + 1) of \(shares.count), \(share) clicks each host\n".utf8))
                let round = try await pressToHandler(options, baud: pacing.baud, clicks: share)
                presses.latencies += round.latencies
                presses.aboveWire += round.aboveWire
                presses.estimateErrors += round.estimateErrors
                presses.hostWork += round.hostWork
                let cRound = try await MinimalCHost.presses(options, baud: pacing.baud, clicks: share)
                cHost.latencies += cRound.latencies
                cHost.aboveWire += cRound.aboveWire
                cHost.hostWork += cRound.hostWork
            }
            let (latencies, estimateErrors) = (presses.latencies, presses.estimateErrors)
            let baseline = cHost.latencies
            let floor = floorMicros(baud: pacing.baud)
            // The latency starts at the sample that saw the press, so the floor's sample period is not in
            // it: what the simulator, the pty and a host add is the latency above the wire time (each press
            // less its own frame's time, one byte shorter in the first 2.1 s of a session).
            let wire = floor - samplePeriodMicros
            rows += [
                .compare("press → capture handler, \(pacing.name)", unit: "µs", latencies, against: "minimal C host", baseline),
                .compare(
                    "press → frame read by a minimal C host, \(pacing.name)", unit: "µs", baseline, against: "wire + 1 sample period",
                    [floor]),
                .compare(
                    "  press → handler, above the wire time (\(BenchRow.format(wire)) µs)", unit: "µs", presses.aboveWire,
                    against: "target", [100]),
                .compare("  the C host's, above the wire time", unit: "µs", cHost.aboveWire, against: "target", [100]),
                BenchRow(
                    name: "  this project's host: ours − C host's, quantile by quantile", unit: "µs",
                    project: quantileDifference(Stats(latencies), Stats(baseline)), baseline: nil),
                .compare(
                    "  of which the host's own work: poll() returns → handler", unit: "µs", presses.hostWork,
                    against: "C host's: → unpacked", cHost.hostWork),
                BenchRow(
                    name: "  the host's clock estimate, its error on the same presses", unit: "µs", project: Stats(estimateErrors),
                    baseline: nil),
            ]
            series.append(
                LatencyPlot.Series(
                    name: pacing.baud == nil ? pacing.name : "\(pacing.name) (wire \(Int(wire.rounded())) µs, dashed)",
                    valuesMicros: latencies,
                    referenceMicros: pacing.baud == nil ? nil : wire))
        }
        return (rows, series)
    }

    /// `minuend` minus `subtrahend`, quantile by quantile (min − min, median − median, p99 − p99): how far one
    /// distribution sits above the other, from runs whose presses cannot be paired one by one.
    static func quantileDifference(_ minuend: Stats, _ subtrahend: Stats) -> Stats {
        var difference = minuend
        difference.min -= subtrahend.min
        difference.median -= subtrahend.median
        difference.p99 -= subtrahend.p99
        return difference
    }

    /// Runs `camctl-sim` (paced at `baud`, or unpaced) playing `clicks` volume-down clicks into a
    /// `CameraControlHost`; returns each press's latency, µs (fewer when the run times out), the same less
    /// its frame's time on the wire (``pressFrameBytes(timestampMicros:)``), and how much the latency
    /// computed through the host's clock estimate differs from it (the estimate's error).
    static func pressToHandler(_ options: BenchOptions, baud: Int?, clicks: Int) async throws -> Presses {
        let simulator = try BenchSimulator(
            options, clicks: clicks, arguments: ["--print-clock-origin"] + (baud.map { ["--baud", String($0)] } ?? []))
        defer { simulator.stop() }
        // Device time 0 on CLOCK_MONOTONIC: device timestamps placed exactly, not through the host's estimate.
        let origin = try simulator.clockOrigin()

        let host = try await simulator.connect()
        let latencies = BenchSimulator.Samples()
        let aboveWire = BenchSimulator.Samples()
        let estimateErrors = BenchSimulator.Samples()
        let hostWork = BenchSimulator.Samples()
        // The handler runs on this loop's thread, right after the read that brought the press.
        let loop = host.eventLoop as? PollEventLoop
        try await simulator.collectPresses(into: host, count: clicks, until: latencies) { event in
            let now = monotonicNanos()
            let device = Int64(bitPattern: event.deviceTimestampMicros)
            let exact = Double(Int64(now / 1_000) - (origin + device))
            if let loop { hostWork.add(Double(now &- loop.lastWakeUpNanos) / 1_000) }
            // Before the latency: collection ends at the last latency.
            aboveWire.add(exact - wireMicros(bytes: pressFrameBytes(timestampMicros: event.deviceTimestampMicros), baud: baud))
            latencies.add(exact)
            if let offset = host.clockOffsetMicros {
                let estimated = Double(Int64(bitPattern: HostClock.monotonic.nowMicros()) - (device + offset))
                estimateErrors.add(estimated - exact)
            }
        }
        return Presses(
            latencies: latencies.all, aboveWire: aboveWire.all, estimateErrors: estimateErrors.all, hostWork: hostWork.all)
    }

    /// CLOCK_MONOTONIC, microseconds (the clock camctl-sim's device time follows).
    static func monotonicMicros() -> Int64 { Int64(monotonicNanos() / 1_000) }

    /// CLOCK_MONOTONIC, nanoseconds.
    static func monotonicNanos() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
