import CBenchSupport
import CameraControlDevice
import CameraControlPorts
import CameraControlWire
import Foundation
import Synchronization

/// `camctl-bench scale [--max N] [--seconds S]`: N simulated devices streaming raw samples at 1 kHz into
/// one host process, next to a minimal C host reading the same frames.
///
/// The devices are the real firmware and simulator (`ccsim_device_t`), N of them on one feeder thread of
/// this process in real time (1 ms steps), each behind its own pseudo-terminal: the bytes N `camctl-sim`
/// processes would send, without N processes waking 1000 times a second on a 2-core machine. The feeder's
/// own CPU time is measured on its thread and subtracted from the process's, so a row is the host's cost.
///
/// For each N of a doubling ramp (1, 2, 4, … up to `--max`), first this project's host — one
/// `DeviceSession` per port and one task iterating its `rawSamples()` stream, as an application would
/// write it — then the minimal C host (`cc_bench_c_host_run`: read, COBS, CRC, envelope, protobuf-c unpack,
/// count, on one thread) over the same ports, each for a warm-up and `--seconds` of measurement. A step
/// holds when no sample was lost (the device's `dropped_before` and gaps in the batches' timestamps) and
/// the host used at most one core. The ramp stops for a host at its first step that does not hold; for this
/// project's host three bisecting steps then narrow the largest N down.
enum ScaleBench {
    /// One measured step: a host at N devices.
    struct Step {
        var devices: Int
        /// CPU time over wall time, in cores (1 = one whole core).
        var cores: Double
        var samples: UInt64
        /// Samples the devices made in the window: devices × seconds × 1 kHz.
        var expected: UInt64
        var lost: UInt64
        /// The feeder fell behind (its 1 ms steps started late): the step says nothing about the host.
        var feederLate: Bool

        /// No loss on at most one core. (A late feeder loses nothing, the firmware catches up; it is noted.)
        /// Received means at least 97 % of `expected` (batches straddle the window's edges); fewer is a
        /// stream or session that ended (a starved host misses the 200 ms heartbeat deadline).
        var holds: Bool { lost == 0 && cores <= 1 && samples * 100 >= expected * 97 }
        /// Percent of a core per device.
        var percentPerDevice: Double { 100 * cores / Double(devices) }
    }

    /// A failure of the harness itself (exit status 1).
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ options: BenchOptions) async throws -> [BenchRow] {
        let maximum = try options.integer("max", default: options.smoke ? 2 : 512)
        guard maximum >= 1, maximum <= 2_048 else { throw BenchOptions.UsageError(message: "--max must be 1…2048") }
        let secondsText = options.values["seconds"] ?? (options.smoke ? "0.3" : "3")
        guard let seconds = Double(secondsText), seconds > 0, seconds <= 600 else {
            throw BenchOptions.UsageError(message: "--seconds needs a positive number, not '\(secondsText)'")
        }
        let warmup = options.smoke ? 0.3 : 1.0
        var counts: [Int] = []
        var next = 1
        while next <= maximum {
            counts.append(next)
            next *= 2
        }
        if counts.last != maximum { counts.append(maximum) }

        var ours: [Step] = []
        var theirs: [Step] = []
        for devices in counts {
            let runOurs = ours.last?.holds ?? true
            let runTheirs = theirs.last?.holds ?? true
            guard runOurs || runTheirs else { break }
            let ports = try Ports(count: devices)
            defer { ports.close() }
            if runOurs {
                ours.append(try await swiftHost(ports, warmup: warmup, seconds: seconds))
                report("this project", ours[ours.count - 1])
            }
            if runTheirs {
                theirs.append(try await cHost(ports, warmup: warmup, seconds: seconds))
                report("minimal C host", theirs[theirs.count - 1])
            }
        }
        // This project's host: bisect between the last step that held and the first that did not, three
        // times (a bounded search: an eighth of the gap).
        var refined: [Step] = []
        if var low = ours.last(where: \.holds)?.devices, var high = ours.first(where: { !$0.holds })?.devices {
            for _ in 0..<(options.smoke ? 0 : 3) where high - low > 1 {
                let middle = (low + high) / 2
                let ports = try Ports(count: middle)
                defer { ports.close() }
                let step = try await swiftHost(ports, warmup: warmup, seconds: seconds)
                report("this project", step)
                refined.append(step)
                if step.holds { low = middle } else { high = middle }
            }
        }

        var rows: [BenchRow] = []
        if let one = ours.first, let cOne = theirs.first {
            rows.append(
                BenchRow(
                    name: "a 1 kHz raw stream, one device", unit: "% of a core", project: Stats([one.percentPerDevice]),
                    baseline: ("minimal C host", Stats([cOne.percentPerDevice]))))
        }
        for (step, cStep) in zip(ours, theirs) where step.devices > 1 {
            rows.append(
                BenchRow(
                    name: "  per device, \(step.devices) devices\(step.holds && !step.feederLate ? "" : " (\(why(step)))")",
                    unit: "% of a core",
                    project: Stats([step.percentPerDevice]),
                    baseline: (
                        "minimal C host\(cStep.holds && !cStep.feederLate ? "" : " (\(why(cStep)))")", Stats([cStep.percentPerDevice])
                    )))
        }
        for step in theirs.dropFirst(ours.count) {
            rows.append(
                BenchRow(
                    name: "  per device, \(step.devices) devices (C host only)", unit: "% of a core",
                    project: Stats([step.percentPerDevice]),
                    baseline: nil))
        }
        for step in refined {
            rows.append(
                BenchRow(
                    name: "  per device, \(step.devices) devices (bisecting)\(step.holds && !step.feederLate ? "" : " (\(why(step)))")",
                    unit: "% of a core", project: Stats([step.percentPerDevice]), baseline: nil))
        }
        let held = (ours + refined).filter(\.holds).map(\.devices).max() ?? 0
        let cHeld = theirs.last(where: \.holds)?.devices ?? 0
        rows.append(
            BenchRow(
                name:
                    "devices held at 1 kHz, no loss, ≤ 1 core (ramp ×2, then bisecting\(cHeld == maximum ? "; C host capped by --max" : ""))",
                unit: "devices", project: Stats([Double(held)]), baseline: ("minimal C host", Stats([Double(cHeld)])),
                smallerIsBetter: false))
        // What one core would hold at the per-device cost of the largest step that held.
        if let step = (ours + refined).filter(\.holds).max(by: { $0.devices < $1.devices }), let cStep = theirs.last(where: \.holds) {
            rows.append(
                BenchRow(
                    name: "  devices per core at that cost (100 % / per-device %)", unit: "devices",
                    project: Stats([(100 / step.percentPerDevice).rounded(.down)]),
                    baseline: ("minimal C host", Stats([(100 / cStep.percentPerDevice).rounded(.down)])), smallerIsBetter: false))
        }
        return rows
    }

    static func why(_ step: Step) -> String {
        if step.lost > 0 { return "lost \(step.lost)" }
        if step.samples * 100 < step.expected * 97 { return "\(step.samples * 100 / max(1, step.expected)) % of samples" }
        if step.cores > 1 { return "over one core" }
        return "feeder behind"
    }

    static func report(_ who: String, _ step: Step) {
        let line = String(
            format: "  %-15@ %4d devices  %6.2f %% of a core  %.3f %%/device  %llu of %llu samples  %llu lost%@\n",
            who as NSString, step.devices, 100 * step.cores, step.percentPerDevice, step.samples, step.expected, step.lost,
            (step.feederLate ? "  (feeder late)" : "") as NSString)
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// N pseudo-terminals with the feeder's simulated devices behind them.
    final class Ports {
        let paths: [String]
        let masters: [Int32]
        let feeder: OpaquePointer

        init(count: Int) throws {
            var paths: [String] = []
            var masters: [Int32] = []
            for _ in 0..<count {
                var buffer = [CChar](repeating: 0, count: 128)
                let fd = cc_bench_scale_open_pty(&buffer, buffer.count)
                guard fd >= 0 else {
                    masters.forEach { _ = Glibc.close($0) }
                    throw Failure(description: "cannot open pseudo-terminal \(masters.count + 1) of \(count)")
                }
                masters.append(fd)
                paths.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            guard let feeder = cc_bench_feeder_start(Int32(count), masters) else {
                masters.forEach { _ = Glibc.close($0) }
                throw Failure(description: "cannot start the feeder thread")
            }
            (self.paths, self.masters, self.feeder) = (paths, masters, feeder)
        }

        var feederCPUNanos: UInt64 { cc_bench_feeder_cpu_ns(feeder) }
        var feederLateSteps: UInt64 { cc_bench_feeder_late_steps(feeder) }

        /// Whether the feeder could not keep its 1 ms steps since `since` (late steps, feeder CPU ns, wall
        /// ns): it used 90 % of a core or more, or more than 5 % of its steps started over a step late.
        /// (A late step loses nothing, the firmware catches up, but then the feeder is what saturates.)
        func feederBehind(since: (late: UInt64, cpu: UInt64, wall: UInt64)) -> Bool {
            let wall = Double(DispatchTime.now().uptimeNanoseconds - since.wall)
            let cores = Double(feederCPUNanos - since.cpu) / wall
            let lateFraction = Double(feederLateSteps - since.late) / max(1, wall / 1e6)
            return cores >= 0.9 || lateFraction > 0.05
        }

        func close() {
            cc_bench_feeder_stop(feeder)
            masters.forEach { _ = Glibc.close($0) }
        }
    }

    /// This process's CPU time (user + system), ns.
    static func processCPUNanos() -> UInt64 {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let micros = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000 + Int(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
        return UInt64(micros) * 1_000
    }

    /// Samples and losses across the stream tasks.
    final class Tally: Sendable {
        let samples = Atomic<UInt64>(0)
        let lost = Atomic<UInt64>(0)
    }

    static func swiftHost(_ ports: Ports, warmup: Double, seconds: Double) async throws -> Step {
        let tally = Tally()
        let sessions = try await withThrowingTaskGroup(of: DeviceSession.self) { group in
            for path in ports.paths {
                group.addTask { try await DeviceSession.open(path: path, hostName: "camctl-bench scale") }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        var readers: [Task<Void, Never>] = []
        for session in sessions {
            let stream = try await session.rawSamples()
            readers.append(
                Task {
                    var expected: UInt64?
                    do {
                        for try await batch in stream {
                            let count = UInt64(batch.decodedSamples.count)  // records or delta-coded (v1.2)
                            var lost = UInt64(batch.droppedBefore)
                            if let expected, batch.firstTimestampMicros > expected, batch.sampleIntervalMicros > 0 {
                                lost += (batch.firstTimestampMicros - expected) / UInt64(batch.sampleIntervalMicros)
                            }
                            expected = batch.firstTimestampMicros + count * UInt64(batch.sampleIntervalMicros)
                            tally.samples.add(count, ordering: .relaxed)
                            if lost > 0 { tally.lost.add(lost, ordering: .relaxed) }
                        }
                    } catch {}
                })
        }
        try await Task.sleep(for: .seconds(warmup))
        let start = (wall: DispatchTime.now().uptimeNanoseconds, cpu: processCPUNanos(), feeder: ports.feederCPUNanos)
        let before = (samples: tally.samples.load(ordering: .relaxed), lost: tally.lost.load(ordering: .relaxed))
        let late = ports.feederLateSteps
        try await Task.sleep(for: .seconds(seconds))
        let end = (wall: DispatchTime.now().uptimeNanoseconds, cpu: processCPUNanos(), feeder: ports.feederCPUNanos)
        let step = Step(
            devices: ports.paths.count,
            cores: Double((end.cpu - start.cpu) - min(end.cpu - start.cpu, end.feeder - start.feeder)) / Double(end.wall - start.wall),
            samples: tally.samples.load(ordering: .relaxed) - before.samples,
            expected: UInt64(Double(ports.paths.count) * Double(end.wall - start.wall) / 1e6),
            lost: tally.lost.load(ordering: .relaxed) - before.lost,
            feederLate: ports.feederBehind(since: (late, start.feeder, start.wall)))
        readers.forEach { $0.cancel() }
        for session in sessions { await session.close() }
        return step
    }

    static func cHost(_ ports: Ports, warmup: Double, seconds: Double) async throws -> Step {
        let since = (ports.feederLateSteps, ports.feederCPUNanos, DispatchTime.now().uptimeNanoseconds)
        let counts: cc_bench_c_host_counts_t = try await withCheckedThrowingContinuation { continuation in
            let paths = ports.paths
            let thread = Thread {
                var strings = paths.map { strdup($0) }
                defer { strings.forEach { free($0) } }
                var counts = cc_bench_c_host_counts_t()
                let result = strings.withUnsafeMutableBufferPointer { buffer in
                    buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) {
                        cc_bench_c_host_run(Int32(paths.count), $0.baseAddress, warmup, seconds, &counts)
                    }
                }
                if result == 0 {
                    continuation.resume(returning: counts)
                } else {
                    continuation.resume(throwing: Failure(description: "the C host could not open its ports"))
                }
            }
            thread.start()
        }
        return Step(
            devices: ports.paths.count, cores: Double(counts.cpu_ns) / (seconds * 1e9), samples: counts.samples,
            expected: UInt64(Double(ports.paths.count) * seconds * 1_000),
            lost: counts.lost, feederLate: ports.feederBehind(since: since))
    }
}
