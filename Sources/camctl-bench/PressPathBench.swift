import Foundation

/// `camctl-bench presspath [--presses N]`: what one press costs the host between the `read()` that brings it
/// and its handler, counted by valgrind's callgrind — the instructions, the distinct 64-byte lines of code
/// they came from, and the functions they were in — next to the minimal C host of `paced` (``MinimalCHost``:
/// `read()` → the `InputEvent` unpacked) over the same simulator.
///
/// Why: the time of that path (`paced`'s "host's own work") is set by how much code and data a press touches
/// after the thread slept (every line a miss on this shared VM), and it moves by tens of µs with the machine's
/// state from one hour to the next. These counts do not: callgrind's are the same run after run, so a change to
/// the path shows in them at once, where the timed rows need many runs to show it. The lines of code are the
/// figure that tracks the time best (docs/PERFORMANCE.md).
///
/// `camctl-bench-probe` (next to this executable) runs each host in turn under `valgrind --tool=callgrind
/// --zero-before=read --dump-before=cc_bench_press_handled` against a fresh `camctl-sim` playing N volume-down
/// clicks (unpaced; 24 by default): callgrind zeroes its counts at every `read()` and writes them out when the
/// host reaches the press — this project's capture handler, or the C host right after its unpack — so each
/// file is one press, from the `read()` call of its bytes (the system call itself is not counted: callgrind
/// sees user space only) to the handler. The first ``warmUpPresses`` presses are left out (their code runs for
/// the first time: metadata, lazy bindings). Without valgrind (or objcopy) it prints a note on standard error
/// and no rows, as `firmware` does.
enum PressPathBench {
    /// The presses left out at the start of each host's run.
    static let warmUpPresses = 4

    /// What callgrind counted for one press.
    struct PressCost: Equatable, Sendable {
        /// Instructions (callgrind's `Ir`).
        var instructions: Int
        /// Distinct 64-byte lines of code those instructions came from.
        var codeLines: Int
        /// Distinct functions they were in.
        var functions: Int
    }

    /// A dump callgrind wrote that this parser cannot read.
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// The subcommand's rows.
    static func run(_ options: BenchOptions) async throws -> [BenchRow] {
        guard let valgrind = FirmwareHostBench.executableInPath("valgrind"), FirmwareHostBench.executableInPath("objcopy") != nil
        else {
            // As `firmware` does without it: a note, and no rows (scripts/bench-tables carries on).
            FileHandle.standardError.write(
                Data(
                    ("camctl-bench presspath: valgrind or objcopy not found (Debian: apt-get install valgrind binutils); "
                        + "skipping the counts\n").utf8))
            return []
        }
        let probe = options.values["probe"] ?? BenchSimulator.siblingExecutable("camctl-bench-probe")
        guard FileManager.default.isExecutableFile(atPath: probe) else {
            throw BenchSimulator.Failure(
                description: "\(probe) not found (swift build -c release --product camctl-bench-probe)")
        }
        let presses = options.smoke ? warmUpPresses + 2 : try options.integer("presses", default: 24)
        guard presses > warmUpPresses, presses <= BenchSimulator.maxClicks else {
            throw BenchOptions.UsageError(message: "--presses must be \(warmUpPresses + 1)…\(BenchSimulator.maxClicks)")
        }
        let ours = try measure(options, valgrind: valgrind, probe: probe, cHost: false, presses: presses)
        let theirs = try measure(options, valgrind: valgrind, probe: probe, cHost: true, presses: presses)
        let baseline = "minimal C host: read() → unpacked"
        let figures: [(name: String, unit: String, figure: KeyPath<PressCost, Int>)] = [
            ("press: read() → capture handler, instructions (callgrind)", "instructions", \.instructions),
            ("  distinct 64-byte lines of code run", "lines", \.codeLines),
            ("  distinct functions run", "functions", \.functions),
        ]
        return figures.map { name, unit, figure in
            BenchRow(
                name: name, unit: unit, project: Stats(ours.map { Double($0[keyPath: figure]) }),
                baseline: (baseline, Stats(theirs.map { Double($0[keyPath: figure]) })))
        }
    }

    /// One host's presses past the warm-up, each as callgrind counted it.
    static func measure(_ options: BenchOptions, valgrind: String, probe: String, cHost: Bool, presses: Int) throws -> [PressCost] {
        let simulator = try BenchSimulator(options, clicks: presses)
        defer { simulator.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "camctl-bench-presspath-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // valgrind 3.19 cannot read the DWARF 5 the Swift toolchain writes ("possibly corrupted debuginfo"):
        // the probe runs from a copy without it (symbols stay, which is all the counts need).
        let stripped = folder.appendingPathComponent("camctl-bench-probe")
        _ = try FirmwareBench.output(of: "objcopy", ["--strip-debug", probe, stripped.path])
        let output = folder.appendingPathComponent("press.out")
        _ = try FirmwareBench.output(
            of: valgrind,
            [
                "-q", "--tool=callgrind", "--callgrind-out-file=\(output.path)", "--compress-strings=no", "--compress-pos=no",
                "--dump-instr=yes", "--zero-before=read", "--dump-before=cc_bench_press_handled",
                stripped.path,
            ] + (cHost ? ["--c-host"] : []) + [simulator.port, String(presses)])
        // One file a press (`press.out.1`, `.2`, … in order), and the rest of the run at the end (`press.out`).
        let dumps = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .compactMap { name -> (Int, String)? in
                guard name.hasPrefix("press.out."), let number = Int(name.dropFirst("press.out.".count)) else { return nil }
                return (number, name)
            }
            .sorted { $0.0 < $1.0 }
        let host = cHost ? "the minimal C host" : "this project's host"
        guard dumps.count == presses else {
            throw BenchSimulator.Failure(description: "callgrind wrote \(dumps.count) press dumps for \(host), not \(presses)")
        }
        return try dumps.dropFirst(warmUpPresses).map { _, name in
            try parse(String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8))
        }
    }

    /// One callgrind dump (valgrind's "Callgrind Format Specification"), written with `--dump-instr=yes`: its
    /// instructions, the 64-byte lines of their addresses, and the functions with instructions of their own. A
    /// call's line (after `calls=`) carries the callee's inclusive cost and is not counted again.
    static func parse(_ text: String) throws -> PressCost {
        var positions = 1
        var instructionColumn: Int?
        var addressed = false
        var last: UInt64 = 0
        var function = ""
        var afterCall = false
        var instructions = 0
        var lines = Set<UInt64>()
        var functions = Set<String>()
        var names: [Substring: String] = [:]
        var objects: [Substring: String] = [:]
        var object = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("positions:") {
                let kinds = line.dropFirst("positions:".count).split(separator: " ")
                positions = kinds.count
                addressed = kinds.first == "instr"
            } else if line.hasPrefix("events:") {
                instructionColumn = line.dropFirst("events:".count).split(separator: " ").firstIndex(of: "Ir")
            } else if line.hasPrefix("ob=") {
                object = name(line.dropFirst(3), table: &objects)
            } else if line.hasPrefix("fn=") {
                function = name(line.dropFirst(3), table: &names)
            } else if line.hasPrefix("cfn=") {
                _ = name(line.dropFirst(4), table: &names)  // a compressed name may be given first here
            } else if line.hasPrefix("cob=") {
                _ = name(line.dropFirst(4), table: &objects)
            } else if line.hasPrefix("calls=") {
                afterCall = true
            } else if let first = line.first, ("0"..."9").contains(first) || first == "+" || first == "-" || first == "*" {
                let fields = line.split(separator: " ")
                guard addressed else { throw Malformed(description: "callgrind: no instruction addresses (--dump-instr=yes)") }
                guard let instructionColumn else { throw Malformed(description: "callgrind: no Ir event before the costs") }
                guard let address = position(fields[0], after: last) else {
                    throw Malformed(description: "callgrind: unreadable position in '\(line)'")
                }
                last = address
                if afterCall {
                    afterCall = false
                    continue
                }
                let column = positions + instructionColumn
                guard column < fields.count else { continue }  // no Ir on this line
                guard let cost = Int(fields[column]) else { throw Malformed(description: "callgrind: unreadable cost in '\(line)'") }
                guard cost > 0 else { continue }
                instructions += cost
                lines.insert(address >> 6)
                functions.insert(object + "\u{0}" + function)  // the same name in two objects is two functions
            }
        }
        return PressCost(instructions: instructions, codeLines: lines.count, functions: functions.count)
    }

    /// A name from `fn=`, `cfn=`, `ob=` or `cob=`: `name`, or compressed, `(id) name` the first time (on
    /// either line of its kind) and `(id)` after.
    private static func name(_ text: Substring, table: inout [Substring: String]) -> String {
        guard text.hasPrefix("("), let close = text.firstIndex(of: ")") else { return String(text) }
        let id = text[...close]
        let name = text[text.index(after: close)...].drop { $0 == " " }
        if name.isEmpty { return table[id] ?? String(id) }
        table[id] = String(name)
        return String(name)
    }

    /// A position field: a number (`0x…` hexadecimal or decimal), `+n`/`-n` (relative to the last), `*` (the
    /// same); nil if unreadable.
    static func position(_ field: Substring, after last: UInt64) -> UInt64? {
        if field == "*" { return last }
        if field.hasPrefix("+") { return number(field.dropFirst()).map { last &+ $0 } }
        if field.hasPrefix("-") { return number(field.dropFirst()).map { last &- $0 } }
        return number(field)
    }

    private static func number(_ text: Substring) -> UInt64? {
        text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text, radix: 10)
    }
}
