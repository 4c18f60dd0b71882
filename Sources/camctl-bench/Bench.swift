import Foundation

/// `camctl-bench`: measurements of this project next to a baseline measured in the same run.
///
/// Each subcommand prints a table (or, with `--json`, one JSON object per row) whose rows carry this
/// project's figure, the baseline's, and their ratio, with min, median and p99 over repeated rounds.
/// `--smoke` runs each subcommand in a tiny mode, for the test command: it checks the harness works,
/// never a speed (machines are shared and noisy; figures come from real runs, in docs/).
@main
struct Bench {
    /// A subcommand: its name, one line of help, and what it runs.
    struct Command {
        let name: String
        let summary: String
        let run: @Sendable (BenchOptions) async throws -> [BenchRow]
    }

    /// Every subcommand; a new one is one entry here and a file of its own.
    static let commands: [Command] = [
        Command(name: "wire", summary: "bytes on the wire per message kind and raw sample, next to peer protocols", run: WireBench.run),
        Command(
            name: "decode",
            summary: "frames → typed InputEvent, next to a bare protobuf-c unpack and the firmware's own C path; allocations per message",
            run: DecodeBench.run),
        Command(
            name: "latency",
            summary:
                "host stack over a pty next to the bare pty; press → capture handler over camctl-sim, paced and unpaced, and through camctl monitor",
            run: LatencyBench.run),
        Command(
            name: "idle", summary: "an idle connected session's CPU and wake-ups, and an idle camctl monitor's, next to a C heartbeat loop",
            run: IdleBench.run),
        Command(
            name: "paced",
            summary: "press → capture handler over camctl-sim at 115200 baud, 1 Mbaud and unpaced, next to a minimal C host; --svg FILE",
            run: PacedLatencyBench.run),
        Command(
            name: "presspath",
            summary: "one press from read() to the capture handler under callgrind: instructions, lines of code, next to a minimal C host",
            run: PressPathBench.run),
        Command(
            name: "firmware",
            summary: "micro:bit and STM32F4 images: instructions per poll (QEMU -icount), no heap, flash, RAM; host build (callgrind)",
            run: FirmwareBench.run),
        Command(
            name: "scale", summary: "N simulated devices at 1 kHz into one host process, next to a minimal C host; --max N",
            run: ScaleBench.run),
        Command(
            name: "scenario", summary: "camctl test --virtual: a ten-second scenario played and checked, next to real time",
            run: ScenarioBench.run),
        Command(name: "selftest", summary: "the harness itself: statistics of a known sample", run: SelfTest.run),
        Command(
            name: "shutter", summary: "shutter lag (press → saved frame) of the GStreamer camera, videotestsrc at 30/60 fps",
            run: Shutter.run),
        Command(
            name: "soak", summary: "many simulated devices through faulty links: memory over time, event accounting",
            run: Soak.run),
    ]

    static func main() async {
        var argv = Array(CommandLine.arguments.dropFirst())
        guard let name = argv.first, name != "help", name != "--help", name != "-h" else {
            print(usage)
            exit(argv.isEmpty ? 2 : 0)
        }
        argv.removeFirst()
        if name == "--list" {
            print(commands.map(\.name).joined(separator: "\n"))
            exit(0)
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            FileHandle.standardError.write(Data("camctl-bench: unknown subcommand '\(name)'\n\n\(usage)\n".utf8))
            exit(2)
        }
        do {
            let options = try BenchOptions(argv)
            let rows = try await command.run(options)
            print(options.json ? BenchRow.jsonLines(rows, subcommand: name) : BenchRow.table(rows, title: command.summary))
        } catch let error as BenchOptions.UsageError {
            FileHandle.standardError.write(Data("camctl-bench \(name): \(error.message)\n".utf8))
            exit(2)
        } catch {
            FileHandle.standardError.write(Data("camctl-bench \(name): \(error)\n".utf8))
            exit(1)
        }
    }

    static var usage: String {
        let lines = commands.map { "  \($0.name.padding(toLength: 10, withPad: " ", startingAt: 0)) \($0.summary)" }
        return """
            usage: camctl-bench SUBCOMMAND [--json] [--smoke] [--rounds N] [options]
                   camctl-bench --list

            subcommands:
            \(lines.joined(separator: "\n"))

            Run with `swift run -c release camctl-bench SUBCOMMAND`. Each row: this project, the baseline measured
            in the same run, their ratio; min, median and p99 over the rounds.
            """
    }
}

/// Options every subcommand understands, plus its own `--name value` pairs.
struct BenchOptions: Sendable {
    /// A usage error (exit status 2).
    struct UsageError: Error {
        let message: String
    }

    /// One JSON object per row instead of a table.
    var json = false
    /// A tiny run that only checks the harness works.
    var smoke = false
    /// Rounds to repeat each measurement (statistics are over rounds).
    var rounds = 20
    /// Other `--name value` options, for the subcommand to read.
    var values: [String: String] = [:]

    init(_ argv: [String]) throws(UsageError) {
        var index = 0
        while index < argv.count {
            let argument = argv[index]
            switch argument {
            case "--json": json = true
            case "--smoke": smoke = true
            case "--rounds":
                guard index + 1 < argv.count, let value = Int(argv[index + 1]), value > 0 else {
                    throw UsageError(message: "--rounds needs a positive number")
                }
                rounds = value
                index += 1
            default:
                guard argument.hasPrefix("--"), index + 1 < argv.count else {
                    throw UsageError(message: "unexpected argument '\(argument)'")
                }
                values[String(argument.dropFirst(2))] = argv[index + 1]
                index += 1
            }
            index += 1
        }
        if smoke { rounds = min(rounds, 3) }
    }

    /// An integer option, or `fallback`.
    func integer(_ name: String, default fallback: Int) throws(UsageError) -> Int {
        guard let text = values[name] else { return fallback }
        guard let value = Int(text) else { throw UsageError(message: "--\(name) needs a number, not '\(text)'") }
        return value
    }
}

/// Statistics over rounds.
struct Stats: Sendable, Equatable {
    /// The smallest value.
    var min: Double
    /// The middle value (the mean of the two middle ones for an even count).
    var median: Double
    /// The 99th percentile (nearest rank).
    var p99: Double

    /// Statistics of `values` (all zero when empty).
    init(_ values: [Double]) {
        let sorted = values.sorted()
        guard !sorted.isEmpty else {
            (min, median, p99) = (0, 0, 0)
            return
        }
        min = sorted[0]
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        let rank = Int((0.99 * Double(sorted.count)).rounded(.up))
        p99 = sorted[Swift.max(0, Swift.min(sorted.count - 1, rank - 1))]
    }
}

/// One measured figure: this project against a baseline from the same run.
struct BenchRow: Sendable {
    /// What was measured, e.g. `decode InputEvent`.
    var name: String
    /// The unit of the figures, e.g. `ns/msg`.
    var unit: String
    /// This project's figures over the rounds.
    var project: Stats
    /// The baseline's name, e.g. `bare protobuf-c`, and its figures (nil: no baseline for this row).
    var baseline: (name: String, stats: Stats)?
    /// Smaller is better (times, bytes) unless false (throughput).
    var smallerIsBetter = true

    /// Project median over baseline median (nil without a baseline).
    var ratio: Double? {
        guard let baseline, baseline.stats.median != 0 else { return nil }
        return project.median / baseline.stats.median
    }

    static func format(_ value: Double) -> String {
        if value == 0 { return "0" }
        if abs(value) >= 100 { return String(format: "%.0f", value) }
        if abs(value) >= 1 { return String(format: "%.2f", value) }
        return String(format: "%.4f", value)
    }

    /// An aligned table with a title line.
    static func table(_ rows: [BenchRow], title: String) -> String {
        var lines = [title, ""]
        let header = ["what", "unit", "min", "median", "p99", "baseline", "median", "ratio"]
        var cells = [header]
        for row in rows {
            cells.append([
                row.name, row.unit, format(row.project.min), format(row.project.median), format(row.project.p99),
                row.baseline?.name ?? "—", row.baseline.map { format($0.stats.median) } ?? "—",
                row.ratio.map { String(format: "%.2f×", $0) } ?? "—",
            ])
        }
        let widths = (0..<header.count).map { column in cells.map { $0[column].count }.max() ?? 0 }
        for row in cells {
            lines.append(
                String(
                    zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                        .reversed().drop { $0 == " " }.reversed()))
        }
        return lines.joined(separator: "\n")
    }

    /// One JSON object per row: `{"subcommand", "name", "unit", "min", "median", "p99", "baseline",
    /// "baseline_median", "ratio"}` (baseline fields null when there is none).
    static func jsonLines(_ rows: [BenchRow], subcommand: String) -> String {
        rows.map { row in
            var object: [String: Any] = [
                "subcommand": subcommand, "name": row.name, "unit": row.unit, "min": row.project.min,
                "median": row.project.median, "p99": row.project.p99,
            ]
            object["baseline"] = row.baseline?.name ?? NSNull()
            object["baseline_median"] = row.baseline?.stats.median ?? NSNull()
            object["ratio"] = row.ratio ?? NSNull()
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            return String(decoding: data, as: UTF8.self)
        }.joined(separator: "\n")
    }
}

/// Times a closure on the monotonic clock, nanoseconds.
func measureNanos(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start)
}
