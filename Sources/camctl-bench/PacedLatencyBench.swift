import CameraControlHost
import CameraControlWire
import Foundation

/// `camctl-bench paced [--clicks N (≤ 63)] [--svg FILE]`: the simulated press → capture handler latency with
/// `camctl-sim` pacing its bytes like a UART (`--baud`) at 115200 baud and 1 Mbaud, and unpaced, each next
/// to its physical floor: the press event's frame on the wire (10 bits a byte, 8N1) plus one sample
/// period (the press happened somewhere in the sample period before the sample that saw it). The measured
/// latency starts at the device timestamp of that sample, so the row "above the wire time" is what the
/// host stack and the simulator's wake-ups add to the physics (the target: at most 100 µs).
///
/// Each pacing runs its own `camctl-sim` playing volume-down clicks into the public `CameraControlHost`;
/// the handler computes `CLOCK_MONOTONIC` now minus the press's device timestamp placed on that clock
/// exactly (`camctl-sim --print-clock-origin`). The same latency through the host's own clock estimate
/// (ping round trips, which assume the two directions take equally long) is printed as that estimate's
/// error. `--svg FILE` writes the distributions as an SVG plot (``LatencyPlot``).
enum PacedLatencyBench {
    /// One pacing of the simulator's output.
    struct Pacing: Sendable {
        /// Shown in the table, e.g. `115200 baud`.
        let name: String
        /// Bits per second; nil: unpaced.
        let baud: Int?
    }

    /// One pacing's presses: each one's latency, µs, and the host's clock estimate's error on it, µs.
    struct Presses {
        var latencies: [Double]
        var estimateErrors: [Double]
    }

    /// The simulator's sample period at its default 1 kHz.
    static let samplePeriodMicros = 1_000.0

    static let pacings = [
        Pacing(name: "unpaced", baud: nil), Pacing(name: "1 Mbaud", baud: 1_000_000), Pacing(name: "115200 baud", baud: 115_200),
    ]

    /// The press event's frame as the device sends it (a representative volume-down press a few
    /// seconds into a session), in bytes on the wire including the delimiter.
    static var pressFrameBytes: Int {
        let event = InputEvent(timestampMicros: 2_500_000, kind: .buttonDown, source: .volumeDown, eventNumber: 21)
        let packet = Packet(type: .streamMessage, isReliable: true, sequence: 40, callID: 3, payload: event.serializedBytes())
        return (try? PacketEncoder.encode(packet).count) ?? 0
    }

    /// The physical floor at `baud` (nil: unpaced, the wire takes no time): frame time plus one sample
    /// period, microseconds.
    static func floorMicros(baud: Int?) -> Double {
        guard let baud else { return samplePeriodMicros }
        return Double(pressFrameBytes * 10) * 1e6 / Double(baud) + samplePeriodMicros
    }

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

    /// Every pacing's rows (press → handler next to its floor, the same above the wire time, the clock
    /// estimate's error) and its latencies for the plot: `clicks` presses each. `paced` prints these, and
    /// `latency` prints them after its own rows.
    static func measure(_ options: BenchOptions, clicks: Int) async throws -> (rows: [BenchRow], series: [LatencyPlot.Series]) {
        var rows: [BenchRow] = []
        var series: [LatencyPlot.Series] = []
        for pacing in pacings {
            let presses = try await pressToHandler(options, baud: pacing.baud, clicks: clicks)
            let (latencies, estimateErrors) = (presses.latencies, presses.estimateErrors)
            let floor = floorMicros(baud: pacing.baud)
            // The latency starts at the sample that saw the press, so the floor's sample period is not in
            // it: what the host stack and the simulator add is the latency above the wire time.
            let wire = floor - samplePeriodMicros
            rows += [
                .compare(
                    "press → capture handler, \(pacing.name)", unit: "µs", latencies, against: "wire + 1 sample period", [floor]),
                .compare(
                    "  same, above the wire time (\(BenchRow.format(wire)) µs)", unit: "µs", latencies.map { $0 - wire },
                    against: "target", [100]),
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

    /// Runs `camctl-sim` (paced at `baud`, or unpaced) playing `clicks` volume-down clicks into a
    /// `CameraControlHost`; returns each press's latency, µs (fewer when the run times out), and how much
    /// the latency computed through the host's clock estimate differs from it (the estimate's error).
    static func pressToHandler(_ options: BenchOptions, baud: Int?, clicks: Int) async throws -> Presses {
        let simulator = try BenchSimulator(
            options, clicks: clicks, arguments: ["--print-clock-origin"] + (baud.map { ["--baud", String($0)] } ?? []))
        defer { simulator.stop() }
        // Device time 0 on CLOCK_MONOTONIC: device timestamps placed exactly, not through the host's estimate.
        let originLine = try simulator.readLine()
        guard originLine.hasPrefix("clock-origin-us "), let origin = Int64(originLine.dropFirst("clock-origin-us ".count)) else {
            throw BenchSimulator.Failure(description: "camctl-sim did not print its clock origin: '\(originLine)'")
        }

        let host = try await simulator.connect()
        let latencies = BenchSimulator.Samples()
        let estimateErrors = BenchSimulator.Samples()
        try await simulator.collectPresses(into: host, count: clicks, until: latencies) { event in
            let device = Int64(bitPattern: event.deviceTimestampMicros)
            let exact = Double(monotonicMicros() - (origin + device))
            latencies.add(exact)
            if let offset = host.clockOffsetMicros {
                let estimated = Double(Int64(bitPattern: HostClock.monotonic.nowMicros()) - (device + offset))
                estimateErrors.add(estimated - exact)
            }
        }
        return Presses(latencies: latencies.all, estimateErrors: estimateErrors.all)
    }

    /// CLOCK_MONOTONIC, microseconds (the clock camctl-sim's device time follows).
    static func monotonicMicros() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000
    }
}
