import CameraControlTools
import Foundation

/// `camctl-bench firmware`: the board images, measured from the linked images (docs/FIRMWARE.md), and the same
/// core's polls on the host build under callgrind (``FirmwareHostBench``).
///
/// Two boards side by side: the BBC micro:bit v1 (Cortex-M0; rows named as before) and the STM32F4 (Cortex-M4; rows
/// prefixed `STM32F4`). Instructions per poll come from each board's `-bench.elf` under QEMU's `-icount shift=0`, where
/// the guest's clock counts instructions, so every round gives the same figure on any host; flash and RAM by component
/// come from the board image's map file (`Firmware-sim/port/common/footprint.py`), which also proves that no heap is
/// linked (the `heap linked` row is 0, or the run fails). Run from the repository's root; it runs `make -C Firmware-sim
/// microbit` / `stm32` first when the images are missing. `--build DIR` and `--stm32-build DIR` name other build
/// folders. Instructions per poll on the host build (x86-64, gcc -O2) come from `Firmware-sim/build/cc_host_bench`
/// under `valgrind --tool=callgrind` (``FirmwareHostBench``; `--host-build DIR`, `--polls N`). The rows have no
/// baseline: the targets they are held against are in docs/FIRMWARE.md.
enum FirmwareBench {
    /// A missing image, tool or figure.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// One board: where its images are and how QEMU runs them.
    struct Board {
        /// Put before every row's name ("" for the micro:bit, whose rows keep their names).
        let prefix: String
        /// The `make -C Firmware-sim` target that builds the images.
        let makeTarget: String
        /// The option naming another build folder, and the default folder.
        let buildOption: String
        let defaultBuild: String
        /// The images' base name (`camctl-microbit`: `-bench.elf`, `.map`).
        let image: String
        /// QEMU's machine and serial arguments (the image's UART on stdio).
        let qemu: [String]
    }

    static let boards = [
        Board(
            prefix: "", makeTarget: "microbit", buildOption: "build", defaultBuild: "Firmware-sim/build/microbit",
            image: "camctl-microbit", qemu: ["-M", "microbit", "-serial", "stdio"]),
        Board(
            prefix: "STM32F4 ", makeTarget: "stm32", buildOption: "stm32-build",
            defaultBuild: "Firmware-sim/build/stm32f4", image: "camctl-stm32",
            qemu: ["-M", "netduinoplus2", "-serial", "null", "-serial", "stdio"]),
    ]

    static func run(_ options: BenchOptions) async throws -> [BenchRow] {
        // Deterministic figures: a few rounds only show that they agree.
        let rounds = options.smoke ? 1 : min(options.rounds, 3)
        var rows: [BenchRow] = []
        for board in boards {
            rows += try boardRows(board, options, rounds: rounds)
        }
        return rows + (try FirmwareHostBench.rows(options, rounds: rounds))
    }

    /// One board's rows: instructions per poll, deepest stack, no heap, flash and RAM by component.
    static func boardRows(_ board: Board, _ options: BenchOptions, rounds: Int) throws -> [BenchRow] {
        let build = options.values[board.buildOption] ?? board.defaultBuild
        let image = build + "/\(board.image)-bench.elf"
        let map = build + "/\(board.image).map"
        if options.values[board.buildOption] == nil, ![image, map].allSatisfy(FileManager.default.fileExists(atPath:)) {
            _ = try output(of: "make", ["-s", "-C", "Firmware-sim", board.makeTarget])
        }
        for file in [image, map] where !FileManager.default.fileExists(atPath: file) {
            throw Failure(description: "\(file) not found (run `make -C Firmware-sim \(board.makeTarget)` from the repository's root)")
        }
        var figures: [String: [Double]] = [:]
        for _ in 0..<rounds {
            let output = try output(
                of: "qemu-system-arm",
                board.qemu + [
                    "-nographic", "-monitor", "none", "-icount", "shift=0",
                    "-semihosting-config", "enable=on,target=native", "-kernel", image,
                ])
            for (key, value) in benchFigures(output) { figures[key, default: []].append(value) }
        }
        let polls = [
            ("idle_tick", "poll, idle tick"), ("sample_rest", "poll, one sample at rest"),
            ("sample_active", "poll, one sample with a finger"),
        ]
        var rows: [BenchRow] = try polls.map { key, name in
            guard let values = figures[key] else { throw Failure(description: "\(image) printed no \(key)") }
            return BenchRow(name: board.prefix + name, unit: "instructions", project: Stats(values), baseline: nil)
        }
        if let stack = figures["stack"] {
            rows.append(BenchRow(name: board.prefix + "deepest stack", unit: "bytes", project: Stats(stack), baseline: nil))
        }
        // footprint.py fails when the map file shows the heap's members: the run fails with it.
        let report: String
        do {
            report = try output(of: "/usr/bin/python3", ["Firmware-sim/port/common/footprint.py", map])
        } catch {
            throw Failure(description: "\(map): the heap is linked, or footprint.py failed (\(error))")
        }
        rows.append(BenchRow(name: board.prefix + "heap linked", unit: "members", project: Stats([0]), baseline: nil))
        let footprint = footprintRows(report)
        let total = ("total", footprint.reduce(0) { $0 + $1.1 }, footprint.reduce(0) { $0 + $1.2 })
        for (component, flash, ram) in footprint + [total] {
            rows.append(BenchRow(name: board.prefix + "flash, \(component)", unit: "bytes", project: Stats([flash]), baseline: nil))
            if ram > 0 {
                rows.append(BenchRow(name: board.prefix + "RAM, \(component)", unit: "bytes", project: Stats([ram]), baseline: nil))
            }
        }
        return rows
    }

    /// `bench idle_tick=213.2 sample_rest=743.6 ...` → the figures by name.
    static func benchFigures(_ output: String) -> [String: Double] {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("bench ") }) else { return [:] }
        var figures: [String: Double] = [:]
        for pair in line.split(separator: " ").dropFirst() {
            let parts = pair.split(separator: "=")
            if parts.count == 2, let value = Double(parts[1]) { figures[String(parts[0])] = value }
        }
        return figures
    }

    /// footprint.py's component lines (name, then text, rodata, data, bss, flash, RAM) → (name, flash, RAM).
    static func footprintRows(_ output: String) -> [(String, Double, Double)] {
        output.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            let numbers = words.suffix(6).compactMap { Double($0) }
            guard words.count > 6, numbers.count == 6 else { return nil }
            return (words.dropLast(6).joined(separator: " "), numbers[4], numbers[5])
        }
    }

    /// Runs a tool and returns its standard output; fails on a non-zero exit.
    static func output(of tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool.hasPrefix("/") ? tool : "/usr/bin/env")
        process.arguments = tool.hasPrefix("/") ? arguments : [tool] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardInput = FileHandle.nullDevice
        do {
            try process.runWithDefaultSignals()
        } catch {
            throw Failure(description: "cannot run \(tool): \(error)")
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(tool) exited with status \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
