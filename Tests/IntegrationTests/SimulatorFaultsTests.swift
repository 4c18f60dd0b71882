import CameraControlTestSupport
import CameraControlWire
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `camctl-sim --faults SPEC` and the scenario's `fault` lines, with `camctl` over real pseudo-terminals.
extension OverRealPTY {
    @Suite("camctl-sim --faults")
    struct SimulatorFaults {
        /// A `camctl-sim` whose stderr is kept (the fault log and the counts), stopped by `SIGTERM`.
        final class FaultySimulator {
            let process = Process()
            let standardError: PipeCollector
            let standardOutput: PipeCollector

            init(_ arguments: [String]) throws {
                process.executableURL = URL(fileURLWithPath: try BuiltProducts.executable("camctl-sim"))
                process.arguments = ["--exit-with-parent"] + arguments
                let out = Pipe()
                let err = Pipe()
                process.standardInput = FileHandle.nullDevice
                process.standardOutput = out
                process.standardError = err
                try process.run()
                standardOutput = PipeCollector(out.fileHandleForReading)
                standardError = PipeCollector(err.fileHandleForReading)
            }

            /// Stops it and waits for its last words.
            func stop() async {
                terminateChild(process)
                _ = await eventually(within: .seconds(5)) { standardError.isEnded }
            }

            deinit {
                if process.isRunning {
                    terminateChild(process)
                }
            }
        }

        /// `camctl monitor PORT --json` for `seconds`, its lines decoded.
        static func monitor(_ link: String, seconds: Int) async throws -> [[String: Any]] {
            let run = try await runTool("camctl", ["monitor", link, "--seconds", "\(seconds)", "--json"], timeout: .seconds(seconds + 40))
            #expect(run.status == 0, "monitor: \(run.standardError)")
            return run.standardOutput.split(separator: "\n").compactMap { line in
                try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            }
        }

        /// `N sent, R received, L lost` from `camctl ping`.
        static func pingCounts(_ text: String) -> (sent: Int, received: Int, lost: Int)? {
            guard let line = text.split(separator: "\n").first(where: { $0.contains(" sent, ") }) else { return nil }
            let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            guard numbers.count >= 3 else { return nil }
            return (numbers[0], numbers[1], numbers[2])
        }

        @Test("a bad --faults SPEC is refused with a clear message and exit 2")
        func badSpecRefused() async throws {
            let cases = [
                ("corrupt=2", "'corrupt=2': bad value"), ("bogus=1%", "unknown item 'bogus'"), ("dup", "'dup' needs a value"),
                ("unplg", "unknown item 'unplg'"),
                ("garbage=1%:0", "'garbage=1%:0': bad value"), ("baud=3", "'baud=3': bad value"),
                ("stall=1%:soon", "'stall=1%:soon': bad value"), ("stall=10%:0", "'stall=10%:0': bad value"),
            ]
            for (spec, message) in cases {
                let run = try await runTool("camctl-sim", ["--faults", spec])
                #expect(run.status == 2, "\(spec): \(run.status)")
                #expect(run.standardError.contains("--faults: \(message)"), "\(spec): \(run.standardError)")
                #expect(run.standardOutput.isEmpty, "\(spec): no pty was made")
            }
            let list = try await runTool("camctl-sim", ["--list-faults"])
            #expect(list.status == 0)
            for item in [
                "corrupt=", "drop=", "drop-frame=", "dup=", "reorder=", "garbage=", "stall=", "baud=", "reset=", "unplug=", "seed=",
                "fault unplug",
            ] {
                #expect(list.standardOutput.contains(item), "--list-faults names \(item)")
            }
        }

        /// Specs on both sides of every rule of ``LinkFaults``'s parser (`reset=0` and `unplug=0`, which
        /// the simulator refuses as meaningless, aside).
        static let parityCases = [
            "corrupt=1%", "corrupt=0.01", "corrupt=1e-2", "corrupt=+0.5", "corrupt=101%", "corrupt=-1", "corrupt=abc", "corrupt=",
            "corrupt", "drop=0.1%", "drop-frame=1", "dup=100%", "reorder=5%", "garbage=1%:64", "garbage=1%:2000000",
            "garbage=1%:0", "garbage=1%:", "garbage=:0.5", "garbage=1%:x", "stall=1%:200ms", "stall=1%:1.5s", "stall=1%:500us",
            "stall=1%:7", "stall=1%:-5ms", "stall=1%:ms", "baud=1.05", "baud=0.5", "baud=2", "baud=0.4", "baud=x", "reset=30s",
            "reset=2.5", "unplug=20s:1s", "unplug=5s", "unplug=5s:x", "seed=7", "seed=-1", "seed=18446744073709551616",
            " corrupt=1% , dup=2% ", "", ",,", "x=1", "corrupt=1%,bogus=2", "Corrupt=1%",
        ]

        @Test("camctl-sim --faults accepts exactly the specs LinkFaults (camctl relay --faults) accepts")
        func sameSyntaxAsRelay() async throws {
            for spec in Self.parityCases {
                let swiftAccepts = (try? LinkFaults(spec: spec)) != nil
                let run = try await runTool("camctl-sim", ["--faults", spec, "--list-faults"])
                #expect(
                    (run.status == 0) == swiftAccepts,
                    "'\(spec)': LinkFaults \(swiftAccepts ? "accepts" : "refuses"), camctl-sim exit \(run.status) \(run.standardError)")
            }
        }

        /// The `host->device` counts line of a simulator with `spec` and `seed` after it read `bytes`
        /// (asked for with `SIGUSR1` until the line shows them all: no timing involved).
        static func hostToDeviceCounts(spec: String, seed: UInt64, bytes: [UInt8]) async throws -> String? {
            let simulator = try FaultySimulator(["--quiet", "--seed", "\(seed)", "--faults", spec])
            #expect(await eventually(within: .seconds(10)) { simulator.standardOutput.text.contains("\n") })
            let path = String(simulator.standardOutput.text.prefix { $0 != "\n" })
            let descriptor = open(path, O_RDWR | O_NOCTTY)
            #expect(descriptor >= 0, "opened \(path)")
            defer { if descriptor >= 0 { close(descriptor) } }
            var offset = 0
            while offset < bytes.count, descriptor >= 0 {
                let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                if written > 0 { offset += written } else { try await Task.sleep(for: .milliseconds(5)) }
            }
            let marker = "faults host->device: \(bytes.count) bytes"
            var line: String?
            _ = await eventually(within: .seconds(20)) {
                signalProcess(simulator.process.processIdentifier, SIGUSR1)
                try? await Task.sleep(for: .milliseconds(100))
                line = simulator.standardError.text.split(separator: "\n").last { $0.contains(marker) }.map(String.init)
                return line != nil
            }
            await simulator.stop()
            let reports = simulator.standardError.text.components(separatedBy: "faults host->device: ").count - 1
            #expect(reports >= 2, "counts on SIGUSR1 and again at exit")
            return line
        }

        @Test("--faults is deterministic given the seed: the same bytes and seed, the same faults")
        func deterministicGivenTheSeed() async throws {
            // 400 frames of made-up bytes (not valid packets: the firmware just counts them)
            var generator = UInt32(12345)
            var bytes: [UInt8] = []
            for frame in 0..<400 {
                for _ in 0..<(8 + frame % 40) {
                    generator = generator &* 1_103_515_245 &+ 12345
                    bytes.append(UInt8(truncatingIfNeeded: generator >> 16) | 1)
                }
                bytes.append(0)
            }
            let spec = "corrupt=2%,drop=1%,drop-frame=3%,dup=3%,reorder=3%,garbage=3%:16,stall=1%:1ms"
            let first = try await Self.hostToDeviceCounts(spec: spec, seed: 9, bytes: bytes)
            let again = try await Self.hostToDeviceCounts(spec: spec, seed: 9, bytes: bytes)
            let other = try await Self.hostToDeviceCounts(spec: spec + ",seed=10", seed: 9, bytes: bytes)
            #expect(first != nil && first == again, "\(first ?? "-") / \(again ?? "-")")
            #expect(first != other, "seed=10 rolls other faults: \(other ?? "-")")
            #expect(first?.contains("in 400 frames") == true, "\(first ?? "-")")
        }

        @Test("a scenario's fault SPEC for D: faults for a while, then none; no capture doubled")
        func scenarioFaultsForAWhile() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let link = folder + "/sim"
            let file = folder + "/dup.scenario"
            try """
            full-click
            fault dup=100%,reorder=20% for 600ms
            pause 100ms
            full-click
            pause 1s
            full-click
            pause 300ms

            """.write(toFile: file, atomically: true, encoding: .utf8)
            let simulator = try FaultySimulator(["--quiet", "--verbose", "--link", link, "--scenario", file])
            #expect(await eventually(within: .seconds(10)) { FileManager.default.fileExists(atPath: link) })
            let lines = try await Self.monitor(link, seconds: 6)
            await simulator.stop()
            let captures = lines.filter { $0["type"] as? String == "capture" }
            let began = captures.filter { $0["phase"] as? String == "began" }.count
            let closed = captures.filter { ["ended", "cancelled"].contains($0["phase"] as? String ?? "") }.count
            let taken = captures.filter { $0["captured"] as? Bool == true }.count
            #expect(began == closed, "every began closed exactly once: \(captures)")
            #expect(taken <= 3, "no duplicated capture though every frame was sent twice: \(captures)")
            let log = simulator.standardError.text
            #expect(log.contains("scenario faults begin (for a while)") && log.contains("scenario faults end"), "\(log.suffix(800))")
            #expect(!log.contains("duplicated 0,"), "frames were duplicated both ways: \(log.suffix(600))")
        }

        @Test("a scenario's bad fault line is refused at FILE:LINE:COLUMN, exit 2")
        func badScenarioFaultLine() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let file = folder + "/bad.scenario"
            try "full-click\nfault corrupt=5\n".write(toFile: file, atomically: true, encoding: .utf8)
            let run = try await runTool("camctl-sim", ["--scenario", file])
            #expect(run.status == 2)
            #expect(run.standardError.contains("bad.scenario:2:7: 'corrupt=5': bad value"), "\(run.standardError)")
            // A misspelt fault is unknown, whatever follows it (no "needs a value" for a name that is none).
            for (line, column, name) in [
                ("fault unplg 300ms", 7, "unplg"), ("fault corupt=1%", 7, "corupt"), ("fault dup=1%,corupt=1% for 1s", 14, "corupt"),
                ("fault rest", 7, "rest"),
            ] {
                try "full-click\n\(line)\n".write(toFile: file, atomically: true, encoding: .utf8)
                let misspelt = try await runTool("camctl-sim", ["--scenario", file])
                #expect(misspelt.status == 2, "\(line): \(misspelt.standardError)")
                #expect(
                    misspelt.standardError.contains("bad.scenario:2:\(column): unknown fault '\(name)' (reset, unplug [D], or a SPEC of"),
                    "\(line): \(misspelt.standardError)")
            }
        }

        @Test("ping through --faults corrupt=1%,drop-frame=1%,dup=1%: every round trip accounted for, check errors counted")
        func pingThroughFaults() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let link = folder + "/sim"
            let simulator = try FaultySimulator([
                "--quiet", "--verbose", "--link", link, "--faults", "corrupt=1%,drop-frame=1%,dup=1%,seed=5",
            ])
            #expect(
                await eventually(within: .seconds(10)) { FileManager.default.fileExists(atPath: link) }, "the simulator placed its link")
            var ping = try await runTool("camctl", ["ping", link, "--count", "60"], timeout: .seconds(40))
            // A starved machine can stall either side past the 200 ms dead-link time (real time, as on real
            // hardware); camctl ping then exits 3 saying so. That is the machine: ping once more.
            for _ in 0..<2 where ping.status == 3 && ping.standardError.contains("link dead") {
                ping = try await runTool("camctl", ["ping", link, "--count", "60"], timeout: .seconds(40))
            }
            #expect(ping.status == 0, "stdout: \(ping.standardOutput) stderr: \(ping.standardError)")
            let counts = Self.pingCounts(ping.standardOutput)
            #expect(counts?.sent == 60, "\(ping.standardOutput)")
            if let counts { #expect(counts.received + counts.lost == counts.sent, "every round trip is received or lost") }
            let counters = try await runTool("camctl", ["counters", link], timeout: .seconds(30))
            #expect(counters.status == 0, "\(counters.standardError)")
            let checkErrors = counters.standardOutput.split(separator: "\n").first { $0.hasPrefix("check_errors") }
                .flatMap { $0.split(separator: " ").last }.flatMap { Int($0) }
            #expect((checkErrors ?? 0) > 0, "the device counted the corrupted frames: \(counters.standardOutput)")
            await simulator.stop()
            let log = simulator.standardError.text
            #expect(log.contains("camctl-sim: faults host->device: "), "the counts at exit: \(log.suffix(600))")
            #expect(log.contains("camctl-sim: faults device->host: "))
            #expect(log.contains(" corrupt byte/of "), "--verbose logs each fault")
            #expect(!log.contains("corrupted 0,"), "both directions corrupted bytes: \(log.suffix(600))")
        }

        @Test("--faults reset=: the host sees the link drop and reconnects to a new session")
        func resetMidSession() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let link = folder + "/sim"
            try await withSimulator(linkPath: link, extraArguments: ["--faults", "reset=1500ms"]) { _ in
                let lines = try await Self.monitor(link, seconds: 6)
                let sessions = lines.filter { $0["type"] as? String == "connected" }.compactMap { $0["sessionId"] as? Int }
                let lost = lines.filter { ($0["text"] as? String)?.hasPrefix("device lost") == true }
                #expect(sessions.count >= 2, "reconnected after a reboot: \(sessions)")
                #expect(Set(sessions).count == sessions.count, "each reboot is a new session: \(sessions)")
                #expect(lost.count >= 1)
            }
        }

        @Test("--scenario starts once the host listens: the host connected first sees the first event (the touch), not from the second")
        func scenarioWaitsForTheStream() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let link = folder + "/sim"
            let scenario = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Firmware-sim/scenarios/full-click.scenario").path
            try await withSimulator(linkPath: link, extraArguments: ["--scenario", scenario]) { _ in
                // A board booted a while ago (its start-up tare long done), as on a desk: a host connected
                // within the tare's first milliseconds would see the touch late anyway.
                try await Task.sleep(for: .milliseconds(500))
                let inputs = try await Self.monitor(link, seconds: 2).filter { $0["type"] as? String == "input" }
                // Started at the handshake, the touch came before the host's stream opened (after its clock
                // pings) and went nowhere: the first event it saw was the light press.
                #expect(inputs.first?["kind"] as? String == "touch-down", "\(inputs.prefix(3))")
                #expect(inputs.contains { $0["kind"] as? String == "light-press-down" })
            }
        }

        @Test("a scripted fault unplug in the middle of a press: the host rides through, every capture began closed once")
        func unplugMidPress() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let link = folder + "/sim"
            let file = folder + "/unplug.scenario"
            try """
            full-click
            pause 300ms
            touch at=0.5
            force 3500mN over=50ms
            fault unplug 400ms
            hold 600ms
            release
            pause 2s
            full-click
            pause 500ms

            """.write(toFile: file, atomically: true, encoding: .utf8)
            try await withSimulator(linkPath: link, extraArguments: ["--scenario", file]) { _ in
                let lines = try await Self.monitor(link, seconds: 9)
                let connected = lines.filter { $0["type"] as? String == "connected" }
                let captures = lines.filter { $0["type"] as? String == "capture" }
                let began = captures.filter { $0["phase"] as? String == "began" }.count
                let closed = captures.filter { ["ended", "cancelled"].contains($0["phase"] as? String ?? "") }.count
                let taken = captures.filter { $0["captured"] as? Bool == true }.count
                #expect(connected.count >= 2, "the host reconnected after the replug")
                #expect(began == closed, "every began closed exactly once: \(captures)")
                #expect(taken >= 1 && taken <= 2, "no phantom or duplicated capture: the two full clicks at most, \(captures)")
                #expect(captures.first?["captured"] as? Bool == false && captures.first?["phase"] as? String == "began")
            }
        }
    }
}
