import CameraControlCapture
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
        let clicks = options.smoke ? 3 : try options.integer("clicks", default: 60)
        // A scenario holds at most 128 steps (docs/SIMULATOR.md): a pause and two steps per click.
        guard clicks > 0, clicks <= 63 else { throw BenchOptions.UsageError(message: "--clicks must be 1…63") }
        let simulator = options.values["sim"] ?? LatencyBench.siblingExecutable("camctl-sim")
        var rows: [BenchRow] = []
        var series: [LatencyPlot.Series] = []
        for pacing in pacings {
            let (latencies, estimateErrors) = try await pressToHandler(simulator: simulator, baud: pacing.baud, clicks: clicks)
            let floor = floorMicros(baud: pacing.baud)
            rows.append(
                BenchRow(
                    name: "press → capture handler, \(pacing.name)", unit: "µs", project: Stats(latencies),
                    baseline: ("wire + 1 sample period", Stats([floor]))))
            // The latency starts at the sample that saw the press, so the floor's sample period is not in
            // it: what the host stack and the simulator add is the latency above the wire time.
            let wire = floor - samplePeriodMicros
            rows.append(
                BenchRow(
                    name: "  same, above the wire time (\(BenchRow.format(wire)) µs)", unit: "µs",
                    project: Stats(latencies.map { $0 - wire }), baseline: ("target", Stats([100]))))
            rows.append(
                BenchRow(
                    name: "  the host's clock estimate, its error on the same presses", unit: "µs", project: Stats(estimateErrors),
                    baseline: nil))
            series.append(
                LatencyPlot.Series(
                    name: pacing.baud == nil ? pacing.name : "\(pacing.name) (wire \(Int(wire.rounded())) µs, dashed)",
                    valuesMicros: latencies,
                    referenceMicros: pacing.baud == nil ? nil : wire))
        }
        if let path = options.values["svg"] {
            let plot = LatencyPlot(
                title: "camctl-sim → CameraControlHost: press → capture handler, \(clicks) clicks each", series: series)
            try plot.svg().write(toFile: path, atomically: true, encoding: .utf8)
        }
        return rows
    }

    /// Runs `camctl-sim` (paced at `baud`, or unpaced) playing `clicks` volume-down clicks into a
    /// `CameraControlHost`; returns each press's latency, µs (fewer when the run times out), and how much
    /// the latency computed through the host's clock estimate differs from it (the estimate's error).
    static func pressToHandler(simulator: String, baud: Int?, clicks: Int) async throws -> (latencies: [Double], estimateErrors: [Double]) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("camctl-bench-paced-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let scenario = folder.appendingPathComponent("clicks.scenario")
        let steps = ["pause 300ms"] + Array(repeating: ["button volume-down hold=60ms", "pause 90ms"], count: clicks).flatMap { $0 }
        try (steps.joined(separator: "\n") + "\n").write(to: scenario, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: simulator)
        process.arguments =
            ["--quiet", "--exit-with-parent", "--print-clock-origin", "--scenario", scenario.path]
            + (baud.map { ["--baud", String($0)] } ?? [])
        let stdout = Pipe()
        process.standardOutput = stdout
        try process.run()
        defer { process.terminate() }
        func readLine() throws -> String {
            var line: [UInt8] = []
            while let byte = try stdout.fileHandleForReading.read(upToCount: 1)?.first, byte != 10 { line.append(byte) }
            return String(decoding: line, as: UTF8.self)
        }
        let port = try readLine()
        // Device time 0 on CLOCK_MONOTONIC: device timestamps placed exactly, not through the host's estimate.
        let originLine = try readLine()
        guard originLine.hasPrefix("clock-origin-us "), let origin = Int64(originLine.dropFirst("clock-origin-us ".count)) else {
            throw ScaleBench.Failure(description: "camctl-sim did not print its clock origin: '\(originLine)'")
        }

        let host = try await CameraControlHost.connect(to: port, hostName: "camctl-bench")
        let latencies = LatencyBench.Samples()
        let estimateErrors = LatencyBench.Samples()
        let interaction = CaptureEventInteraction { event in
            guard event.phase == .began else { return }
            let device = Int64(bitPattern: event.deviceTimestampMicros)
            let exact = Double(monotonicMicros() - (origin + device))
            latencies.add(exact)
            if let offset = host.clockOffsetMicros {
                let estimated = Double(Int64(bitPattern: HostClock.monotonic.nowMicros()) - (device + offset))
                estimateErrors.add(estimated - exact)
            }
        }
        await host.attach(interaction)
        interaction.setSessionRunning(true)
        let deadline = ContinuousClock.now + .seconds(Double(clicks) * 0.2 + 10)
        while latencies.all.count < clicks, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        await host.stop()
        return (latencies.all, estimateErrors.all)
    }

    /// CLOCK_MONOTONIC, microseconds (the clock camctl-sim's device time follows).
    static func monotonicMicros() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000
    }
}
