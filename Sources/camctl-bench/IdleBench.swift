import CBenchSupport
import CameraControlHost
import CameraControlTools
import CameraControlWire
import Foundation

/// `camctl-bench idle`: what an idle connected session costs this process, next to a minimal C loop doing
/// the same heartbeat work.
///
/// - **this project**: `CameraControlHost` connected to `camctl-sim` (handshake done, clock samples
///   taken, nothing streaming): CPU time (user + system, `getrusage` of the whole process) and context
///   switches over rounds of `--round-seconds` (1 s), as a share of one core and per second.
/// - **baseline**: a C `poll()` loop over a pseudo-terminal pair, in its own thread, writing an 8-byte
///   HEARTBEAT frame each way every 50 ms (the heartbeat interval) and reading them: the heartbeat
///   traffic of an idle link at its cheapest.
/// - **`camctl monitor`**: the tool as a user runs it (`camctl` next to this executable, or `--camctl PATH`),
///   idle against a simulator of its own, its output discarded: CPU time summed over its threads
///   (`/proc/PID/task/*/schedstat`, nanoseconds) per round, next to the library session and the C loop.
enum IdleBench {
    /// CPU time and context switches of this process so far.
    struct Usage {
        var cpuMicros: Double
        var contextSwitches: Double

        static func now() -> Usage {
            var usage = rusage()
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
            let user = Double(usage.ru_utime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec)
            let system = Double(usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_stime.tv_usec)
            return Usage(cpuMicros: user + system, contextSwitches: Double(usage.ru_nvcsw + usage.ru_nivcsw))
        }
    }

    /// One round's figures: percent of a core, context switches per second, heartbeats sent per second.
    struct Round {
        var cpuPercent: Double
        var switchesPerSecond: Double
        var heartbeatsPerSecond: Double
    }

    static func run(_ options: BenchOptions) async throws -> [BenchRow] {
        let roundSeconds = options.smoke ? 0.2 : Double(try options.integer("round-seconds", default: 1))
        let rounds = min(options.rounds, 10)
        let heartbeat = ConnectionDefaults.heartbeatMicros

        // This project: an idle connected session against camctl-sim.
        let simulator = try BenchSimulator(options)
        defer { simulator.stop() }
        let host = try await simulator.connect()
        try await Task.sleep(for: .seconds(options.smoke ? 0.2 : 1))  // the connect's clock samples settle
        var ours: [Round] = []
        for _ in 0..<rounds {
            let heartbeatsBefore = await host.session?.client.counters.heartbeatsSent ?? 0
            let before = Usage.now()
            let start = ContinuousClock.now
            try await Task.sleep(for: .seconds(roundSeconds))
            let after = Usage.now()
            let wall = seconds(ContinuousClock.now - start)
            let heartbeats = (await host.session?.client.counters.heartbeatsSent ?? 0) - heartbeatsBefore
            ours.append(
                Round(
                    cpuPercent: (after.cpuMicros - before.cpuMicros) / (wall * 1e6) * 100,
                    switchesPerSecond: (after.contextSwitches - before.contextSwitches) / wall,
                    heartbeatsPerSecond: Double(heartbeats) / wall))
        }
        await host.stop()

        // The baseline: the C heartbeat loop, in a thread of its own.
        let frame = try PacketEncoder.encode(Packet.heartbeat(sequence: 0))
        var baseline: [Round] = []
        for _ in 0..<rounds {
            let cost = try await cLink(seconds: roundSeconds, intervalMicros: heartbeat, frame: frame)
            let wall = Double(cost.wall_micros) / 1e6
            baseline.append(
                Round(
                    cpuPercent: Double(cost.cpu_micros) / Double(max(cost.wall_micros, 1)) * 100,
                    switchesPerSecond: Double(cost.context_switches) / wall,
                    heartbeatsPerSecond: Double(cost.frames_received) / 2 / wall))
        }
        let baselineName = "C poll() loop, heartbeats over a pty"

        // camctl monitor, idle, in a process of its own.
        let monitorSimulator = try BenchSimulator(options)
        defer { monitorSimulator.stop() }
        let monitor = try MonitorProcess(
            camctl: options.values["camctl"] ?? BenchSimulator.siblingExecutable("camctl"), port: monitorSimulator.port)
        defer { monitor.stop() }
        try await Task.sleep(for: .seconds(options.smoke ? 0.5 : 1.5))  // connected, clock samples taken
        var monitorRounds: [Double] = []
        for _ in 0..<rounds {
            try monitor.checkRunning()
            let before = try monitor.threadCPUNanoseconds()
            let start = ContinuousClock.now
            try await Task.sleep(for: .seconds(roundSeconds))
            let after = try monitor.threadCPUNanoseconds()
            let used = after.reduce(UInt64(0)) { total, thread in total + (thread.value - min(before[thread.key] ?? 0, thread.value)) }
            monitorRounds.append(Double(used) / (seconds(ContinuousClock.now - start) * 1e9) * 100)
        }
        try monitor.checkRunning()
        return [
            .compare(
                "idle connected session, CPU", unit: "% core", ours.map(\.cpuPercent), against: baselineName,
                baseline.map(\.cpuPercent)),
            .compare(
                "  context switches", unit: "/s", ours.map(\.switchesPerSecond), against: baselineName,
                baseline.map(\.switchesPerSecond)),
            .compare(
                "  heartbeats sent", unit: "/s", ours.map(\.heartbeatsPerSecond), against: baselineName,
                baseline.map(\.heartbeatsPerSecond)),
            .compare(
                "idle camctl monitor process, CPU", unit: "% core", monitorRounds, against: "the library session above",
                ours.map(\.cpuPercent)),
            .compare(
                "idle camctl monitor process, CPU", unit: "% core", monitorRounds, against: baselineName,
                baseline.map(\.cpuPercent)),
        ]
    }

    /// `camctl monitor PORT` as a child process, its output discarded.
    final class MonitorProcess {
        private let process = Process()
        /// The monitor's standard error, kept to explain an early exit.
        private let errors: URL

        /// Starts `camctl monitor port`.
        convenience init(camctl: String, port: String) throws {
            try self.init(camctl: camctl, arguments: ["monitor", port], standardOutput: FileHandle.nullDevice)
        }

        /// Starts `camctl arguments…` with its standard output on `standardOutput` (a `FileHandle` or `Pipe`).
        init(camctl: String, arguments: [String], standardOutput: Any) throws {
            errors = FileManager.default.temporaryDirectory.appendingPathComponent("camctl-bench-monitor-\(getpid()).err")
            guard FileManager.default.createFile(atPath: errors.path, contents: nil) else {
                throw BenchSimulator.Failure(description: "cannot create \(errors.path)")
            }
            // The monitor ends with this process, also when it is killed (as the simulator does with
            // --exit-with-parent): setpriv (util-linux) sets the parent-death signal, then runs camctl in its
            // place (same PID).
            let setpriv = "/usr/bin/setpriv"
            if FileManager.default.isExecutableFile(atPath: setpriv) {
                process.executableURL = URL(fileURLWithPath: setpriv)
                process.arguments = ["--pdeathsig", "TERM", "--", camctl] + arguments
            } else {
                process.executableURL = URL(fileURLWithPath: camctl)
                process.arguments = arguments
            }
            process.standardOutput = standardOutput
            process.standardError = try FileHandle(forWritingTo: errors)
            // The parent-death signal follows the spawning thread: it lives as long as the monitor.
            try process.runWithDefaultSignals(keepingSpawnerUntilExit: true)
        }

        /// Fails, with what the monitor said, unless it still runs.
        func checkRunning() throws {
            guard !process.isRunning else { return }
            let said = ((try? String(contentsOf: errors, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            throw BenchSimulator.Failure(description: "camctl monitor ended (status \(process.terminationStatus)): \(said)")
        }

        /// CPU time of each live thread of the process so far, in nanoseconds, by thread id (the first field
        /// of `/proc/PID/task/TID/schedstat`: nanosecond resolution, where `/proc/PID/stat` counts 10 ms
        /// ticks). A round's use is the growth of each thread alive at its end (a thread new in the round
        /// counts whole); what a thread used in a round it ended in is not seen, so the figure can only be low
        /// by that, never high.
        func threadCPUNanoseconds() throws -> [String: UInt64] {
            let tasks = "/proc/\(process.processIdentifier)/task"
            var times: [String: UInt64] = [:]
            for thread in try FileManager.default.contentsOfDirectory(atPath: tasks) {
                // A thread may end between the listing and the read: it no longer counts.
                guard let text = try? String(contentsOfFile: "\(tasks)/\(thread)/schedstat", encoding: .utf8),
                    let first = text.split(separator: " ").first, let nanoseconds = UInt64(first)
                else { continue }
                times[thread] = nanoseconds
            }
            return times
        }

        /// Ends the monitor and removes its error file.
        func stop() {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
            try? FileManager.default.removeItem(at: errors)
        }
    }

    /// Runs the C baseline on a thread of its own (it blocks in `poll()`).
    static func cLink(seconds: Double, intervalMicros: UInt32, frame: [UInt8]) async throws -> cc_bench_idle_cost {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                var cost = cc_bench_idle_cost()
                let status = frame.withUnsafeBufferPointer { buffer in
                    cc_bench_idle_c_link(seconds, intervalMicros, buffer.baseAddress, buffer.count, &cost)
                }
                if status == 0 {
                    continuation.resume(returning: cost)
                } else {
                    continuation.resume(throwing: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
                }
            }
            thread.start()
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// v1's heartbeat interval, as the C loop takes it.
    enum ConnectionDefaults {
        static let heartbeatMicros: UInt32 = 50_000
    }
}
