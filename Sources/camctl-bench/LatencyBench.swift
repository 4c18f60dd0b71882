import CameraControlCapture
import CameraControlHost
import CameraControlPosixTransport
import Foundation
import Synchronization

/// `camctl-bench latency`: how long the host takes to deliver what the device did.
///
/// - **pty floor**: a bare round trip over a pseudo-terminal pair (write on one end → read on the other),
///   measured in this run with this project's own PTY transport.
/// - **press → handler**: `camctl-sim` plays button clicks; for each capture event the handler computes host
///   time now minus the host time of the press's device timestamp (through the host's device-clock
///   estimate, whose uncertainty is a few tens of µs on a pty). It includes the firmware's debounce and the
///   simulator's pacing; the floor it is compared with is one sample period (1 ms at 1 kHz).
enum LatencyBench {
    final class Samples: Sendable {
        private let values = Mutex<[Double]>([])
        func add(_ value: Double) { values.withLock { $0.append(value) } }
        var all: [Double] { values.withLock { $0 } }
    }

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
        let floor = try await ptyRoundTrips(count: options.smoke ? 20 : 2_000)

        let simulator = options.values["sim"] ?? siblingExecutable("camctl-sim")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("camctl-bench-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let scenario = folder.appendingPathComponent("clicks.scenario")
        let steps = ["pause 300ms"] + Array(repeating: ["button volume-down hold=60ms", "pause 90ms"], count: clicks).flatMap { $0 }
        try (steps.joined(separator: "\n") + "\n").write(to: scenario, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: simulator)
        process.arguments = ["--quiet", "--exit-with-parent", "--scenario", scenario.path]
        let stdout = Pipe()
        process.standardOutput = stdout
        try process.run()
        defer { process.terminate() }
        var line: [UInt8] = []
        while let byte = try stdout.fileHandleForReading.read(upToCount: 1)?.first, byte != 10 { line.append(byte) }
        let port = String(decoding: line, as: UTF8.self)

        let host = try await CameraControlHost.connect(to: port, hostName: "camctl-bench")
        let latencies = Samples()
        let interaction = CaptureEventInteraction { event in
            guard event.phase == .began, let offset = host.clockOffsetMicros else { return }
            let now = Int64(bitPattern: HostClock.monotonic.nowMicros())
            latencies.add(Double(now - (Int64(bitPattern: event.deviceTimestampMicros) + offset)))
        }
        await host.attach(interaction)
        interaction.setSessionRunning(true)
        let deadline = ContinuousClock.now + .seconds(Double(clicks) * 0.2 + 10)
        while latencies.all.count < clicks, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        await host.stop()
        let hostStack = try await HostStackLatency.rows(smoke: options.smoke)
        return hostStack + [
            BenchRow(name: "pty round trip, 2 bytes (the floor)", unit: "µs", project: Stats(floor), baseline: nil),
            BenchRow(
                name: "press → capture handler (device timestamp → handler)", unit: "µs", project: Stats(latencies.all),
                baseline: ("one 1 kHz sample period", Stats([1_000]))),
        ]
    }

    /// The path of an executable next to this one (`swift build` puts them together).
    static func siblingExecutable(_ name: String) -> String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent(name).path
    }
}
