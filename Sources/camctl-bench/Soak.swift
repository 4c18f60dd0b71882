import CameraControlSimulation
import CameraControlWire
import Foundation
import Synchronization

/// `camctl-bench soak --minutes N [--devices D] [--faults SPEC]`: many simulated Camera Controls
/// (the real firmware at 1 kHz and the real host pipeline, in virtual time, through a faulty link)
/// playing random gestures for N minutes of wall time (fractions allowed: `--minutes 0.5`).
///
/// It prints the process's resident memory over time and fails (exit 1) when it grew after the
/// warm-up by more than 4 MB or 10 %, and it prints the event accounting and fails when a capture was
/// invented (phantom), paired wrongly (a second `began`, an `ended` without one), or left open. Lost
/// clicks are printed (a v1.0 host cannot prevent all of them; see docs/RELIABILITY.md).
enum Soak {
    /// The default fault model: every fault of `LinkFaults` that a virtual link applies.
    static let defaultFaults = "corrupt=0.5%,drop-frame=1%,dup=1%,reorder=0.5%,garbage=0.5%:64,stall=0.2%:50ms"

    /// A soak that found a problem (exit status 1).
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ options: BenchOptions) async throws -> [BenchRow] {
        let minutesText = options.values["minutes"] ?? (options.smoke ? "0.05" : "2")
        guard let minutes = Double(minutesText), minutes > 0, minutes <= 24 * 60 else {
            throw BenchOptions.UsageError(message: "--minutes needs a positive number, not '\(minutesText)'")
        }
        let devices = try options.integer("devices", default: options.smoke ? 2 : 8)
        guard devices > 0, devices <= 256 else { throw BenchOptions.UsageError(message: "--devices must be 1…256") }
        let faults: LinkFaults
        do {
            faults = try LinkFaults(spec: options.values["faults"] ?? defaultFaults)
        } catch {
            throw BenchOptions.UsageError(message: error.description)
        }
        let seconds = minutes * 60
        let workers = max(1, min(devices, ProcessInfo.processInfo.activeProcessorCount))
        let start = Date()
        let deadline = start.addingTimeInterval(seconds)
        let progress = Progress()
        print("soak: \(devices) devices on \(workers) threads for \(minutesText) min, faults \(faults)")

        // Memory samples, 20 over the run (at least every 30 s), from this task while workers play.
        let interval = min(30, max(0.5, seconds / 20))
        var samples: [(seconds: Double, rssKB: Int, scenarios: Int)] = []
        // Workers are threads of their own: they never suspend, and would starve this sampling task if
        // they ran on the cooperative pool.
        let results = Results()
        for worker in 0..<workers {
            let mine = Array(stride(from: worker, to: devices, by: workers))
            let thread = Thread {
                results.add(Result { try soakDevices(mine, faults: faults, until: deadline, progress: progress) })
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        while results.count < workers {
            try await Task.sleep(for: .seconds(min(interval, max(0.05, deadline.timeIntervalSinceNow + 0.05))))
            guard results.count < workers || samples.isEmpty else { break }
            samples.append((Date().timeIntervalSince(start), residentKB(), progress.scenarios))
            let last = samples[samples.count - 1]
            // Unbuffered, so a long run's progress shows in a log file as it happens.
            let line = String(format: "  %7.1f s  rss %7.1f MB  scenarios %d\n", last.seconds, Double(last.rssKB) / 1024, last.scenarios)
            FileHandle.standardOutput.write(Data(line.utf8))
        }
        let tallies = try results.all.map { try $0.get() }
        let total = tallies.reduce(ReliabilityTally(), +)
        let wall = Date().timeIntervalSince(start)
        print("event accounting:\n\(total)")

        // Flat memory: the last sample against the first one taken once 20 % of the run has passed (12 s
        // of a minute; never the very first sample).
        let warmIndex = samples.firstIndex { $0.seconds >= seconds / 5 } ?? samples.count - 1
        let warm = samples[min(samples.count - 1, max(1, warmIndex))]
        let final = samples[samples.count - 1]
        let growthKB = final.rssKB - warm.rssKB
        let allowedKB = max(4 * 1024, warm.rssKB / 10)
        print(
            String(
                format: "memory: %.1f MB after warm-up (%.0f s), %.1f MB at the end: %+.1f MB (allowed %.1f MB)",
                Double(warm.rssKB) / 1024, warm.seconds, Double(final.rssKB) / 1024, Double(growthKB) / 1024,
                Double(allowedKB) / 1024))
        var problems: [String] = []
        if growthKB > allowedKB { problems.append("memory grew by \(growthKB) KB after the warm-up") }
        if total.phantomCaptures != 0 { problems.append("\(total.phantomCaptures) phantom captures") }
        if total.pairingViolations != 0 { problems.append("\(total.pairingViolations) pairing violations") }
        if total.pressesOpen != 0 { problems.append("\(total.pressesOpen) presses left open") }
        if total.scenarios == 0 { problems.append("no scenario finished") }
        if !problems.isEmpty { throw Failure(description: "soak failed: " + problems.joined(separator: "; ")) }

        let rss = samples.map { Double($0.rssKB) / 1024 }
        return [
            BenchRow(name: "resident memory over the run", unit: "MB", project: Stats(rss)),
            BenchRow(
                name: "gestures per wall second", unit: "gestures/s", project: Stats([Double(total.gestures) / wall]),
                smallerIsBetter: false),
            BenchRow(
                name: "captures lost, of clicks played", unit: "%",
                project: Stats([
                    100 * Double(total.lostFullClicks + total.lostOtherClicks) / Double(max(1, total.fullClicks + total.otherClicks))
                ])),
        ]
    }

    /// Plays scenarios on `indices`' devices in turn until `deadline`; returns their summed tally.
    static func soakDevices(_ indices: [Int], faults: LinkFaults, until deadline: Date, progress: Progress) throws -> ReliabilityTally {
        var runs: [(ReliabilityRun, GestureGenerator)] = indices.map { index in
            var deviceFaults = faults
            deviceFaults.seed = faults.seed &+ UInt64(index) &* 7919
            var options = ReliabilityRun.Options()
            options.samplesPerBatch = 5
            let run = ReliabilityRun(seed: UInt64(index + 1), faults: deviceFaults, options: options)
            run.connect()
            return (run, GestureGenerator(seed: UInt64(index) &+ 0x50A4))
        }
        while Date() < deadline {
            for index in runs.indices {
                try runs[index].0.play(runs[index].1.scenario(gestures: 10))
                progress.add()
                if Date() >= deadline { break }
            }
        }
        return runs.reduce(ReliabilityTally()) { sum, entry in
            entry.0.finish()
            return sum + entry.0.tally
        }
    }

    /// This process's resident set, KB (`VmRSS` of /proc/self/status; 0 where there is none).
    static func residentKB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// The workers' tallies, as they finish.
    final class Results: Sendable {
        private let list = Mutex<[Result<ReliabilityTally, any Error>]>([])
        var count: Int { list.withLock { $0.count } }
        var all: [Result<ReliabilityTally, any Error>] { list.withLock { $0 } }
        func add(_ result: Result<ReliabilityTally, any Error>) { list.withLock { $0.append(result) } }
    }

    /// Scenarios finished, across threads.
    final class Progress: Sendable {
        private let count = Atomic<Int>(0)
        var scenarios: Int { count.load(ordering: .relaxed) }
        func add() { count.add(1, ordering: .relaxed) }
    }
}
