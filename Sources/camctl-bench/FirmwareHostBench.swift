import Foundation

/// The firmware core's polls on the host build, counted by valgrind's callgrind: the `firmware` rows next to
/// the micro:bit image's QEMU `-icount` figures.
///
/// `Firmware-sim/build/cc_host_bench` (`make -C Firmware-sim host-bench`, from `Firmware-sim/bench/cc_host_bench.c`)
/// runs the core, built as `camctl-sim` builds it (gcc `-O2`, x86-64), through `--polls N` idle ticks, N samples of
/// an untouched sensor and N samples of a finger pressing and sliding, each from a function of its own. Under
/// `valgrind --tool=callgrind` the instructions callgrind records for that function's calls to `cc_device_poll`,
/// divided by the calls, are the instructions per poll (the loop around the calls is not in them). Callgrind's counts
/// are deterministic: rounds only show that they agree. `make` runs first (it rebuilds only what changed, so the
/// figures never come from a stale harness) unless `--host-build DIR` names a folder holding `cc_host_bench`.
/// Without valgrind the rows are left out and a note says so on standard error.
enum FirmwareHostBench {
    /// The harness's measuring functions (`cc_host_bench.c`) and the row each one gives.
    static let polls: [(function: String, name: String)] = [
        ("bench_idle_ticks", "host build, x86-64 (callgrind): poll, idle tick"),
        ("bench_samples_at_rest", "  poll, one sample at rest"),
        ("bench_samples_pressed", "  poll, one sample with a finger"),
    ]

    /// The function whose calls are counted.
    static let callee = "cc_device_poll"

    /// The host build's rows (empty, with a note on standard error, when valgrind is not installed).
    static func rows(_ options: BenchOptions, rounds: Int) throws -> [BenchRow] {
        guard let valgrind = executableInPath("valgrind") else {
            FileHandle.standardError.write(
                Data(
                    ("camctl-bench firmware: valgrind not found (Debian: apt-get install valgrind); skipping the host build's "
                        + "instructions per poll (callgrind)\n").utf8))
            return []
        }
        let harness: String
        if let folder = options.values["host-build"] {
            harness = folder + "/cc_host_bench"
        } else {
            _ = try FirmwareBench.output(of: "make", ["-s", "-C", "Firmware-sim", "host-bench"])
            harness = "Firmware-sim/build/cc_host_bench"
        }
        guard FileManager.default.isExecutableFile(atPath: harness) else {
            throw FirmwareBench.Failure(
                description: "\(harness) not found (run `make -C Firmware-sim host-bench` from the repository's root)")
        }
        let count = options.smoke ? 100 : try options.integer("polls", default: 4_000)
        guard count > 0 else { throw BenchOptions.UsageError(message: "--polls must be positive") }

        var perPoll: [String: [Double]] = [:]
        for round in 0..<rounds {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("camctl-bench-callgrind-\(getpid())-\(round).out")
            defer { try? FileManager.default.removeItem(at: file) }
            _ = try FirmwareBench.output(
                of: valgrind,
                [
                    "-q", "--tool=callgrind", "--callgrind-out-file=\(file.path)", "--compress-strings=no", "--compress-pos=no",
                    harness, String(count),
                ])
            let calls = try CallgrindCalls.parse(try String(contentsOf: file, encoding: .utf8), callee: callee)
            for (function, _) in polls {
                guard let figure = calls[function], figure.calls == count else {
                    throw FirmwareBench.Failure(
                        description: "callgrind counted \(calls[function]?.calls ?? 0) calls from \(function) to \(callee), not \(count)")
                }
                perPoll[function, default: []].append(Double(figure.instructions) / Double(figure.calls))
            }
        }
        return polls.map { function, name in
            BenchRow(name: name, unit: "instructions", project: Stats(perPoll[function] ?? []), baseline: nil)
        }
    }

    /// The absolute path of `tool` in `PATH`, or nil.
    static func executableInPath(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(tool)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// The calls from one function to another as callgrind counted them: how many, and the instructions spent inside
/// them (inclusive: the callee and everything it called).
struct CallgrindCalls: Equatable {
    /// A callgrind output file this parser cannot read.
    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    /// Calls made.
    var calls: Int
    /// Instructions (callgrind's `Ir` event) executed inside those calls.
    var instructions: Int

    /// Every caller of `callee` in a callgrind output file (valgrind's "Callgrind Format Specification"), with its
    /// calls to `callee` summed over the call sites and parts: a `calls=` line gives the count, the cost line after
    /// it the inclusive cost of those calls, in the columns named by `positions:` and `events:`. Compressed names
    /// (`fn=(12) name`, later `fn=(12)`) are resolved; `fn` and `cfn` share one table.
    static func parse(_ text: String, callee: String) throws(Malformed) -> [String: CallgrindCalls] {
        var positionColumns = 1
        var instructionColumn: Int?
        var names: [String: String] = [:]
        var function = ""
        var calledFunction = ""
        var pendingCalls: Int?
        var found: [String: CallgrindCalls] = [:]

        func name(_ value: Substring) -> String {
            guard value.hasPrefix("("), let close = value.firstIndex(of: ")") else { return String(value) }
            let id = String(value[value.index(after: value.startIndex)..<close])
            let rest = value[value.index(after: close)...].drop { $0 == " " }
            if !rest.isEmpty { names[id] = String(rest) }
            return names[id] ?? String(value)
        }

        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("positions:") {
                positionColumns = max(1, line.dropFirst("positions:".count).split(separator: " ").count)
            } else if line.hasPrefix("events:") {
                let events = line.dropFirst("events:".count).split(separator: " ")
                instructionColumn = events.firstIndex(of: "Ir")
            } else if line.hasPrefix("fn=") {
                function = name(line.dropFirst(3))
                pendingCalls = nil
            } else if line.hasPrefix("cfn=") {
                calledFunction = name(line.dropFirst(4))
            } else if line.hasPrefix("calls=") {
                guard let count = line.dropFirst("calls=".count).split(separator: " ").first.flatMap({ Int($0) }) else {
                    throw Malformed(description: "callgrind: unreadable line '\(line)'")
                }
                pendingCalls = count
            } else if let count = pendingCalls, let first = line.first, first.isNumber || "+-*".contains(first) {
                // The cost line after calls=: the inclusive cost of those calls.
                pendingCalls = nil
                guard calledFunction == callee else { continue }
                guard let instructionColumn else { throw Malformed(description: "callgrind: no Ir event before the costs") }
                let columns = line.split(separator: " ")
                let column = positionColumns + instructionColumn
                // Trailing zero costs may be left out.
                let cost = column < columns.count ? Int(columns[column]) : 0
                guard let cost else { throw Malformed(description: "callgrind: unreadable cost line '\(line)'") }
                found[function, default: CallgrindCalls(calls: 0, instructions: 0)].calls += count
                found[function, default: CallgrindCalls(calls: 0, instructions: 0)].instructions += cost
            }
        }
        return found
    }
}
