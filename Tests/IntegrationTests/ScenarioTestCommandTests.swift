import CameraControlSimulation
import CameraControlTestSupport
import CameraControlTools
import CameraControlWire
import Foundation
import Testing

/// `camctl test` on every scenario in `Firmware-sim/scenarios`: their `expect` lines hold in virtual time
/// and over a real pty (camctl-sim), a deliberately wrong one fails with the events around it, exit 1 and a
/// JUnit failure, and `scenario --check` names a bad expectation's FILE:LINE:COLUMN.
extension OverRealPTY {
    @Suite("camctl test: scenario expectations", .serialized)
    struct ScenarioTestCommand {
        static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Firmware-sim/scenarios")

        static func files() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".scenario") }
                .sorted().map { directory.appendingPathComponent($0).path }
        }

        static func temporary(_ name: String) -> String {
            FileManager.default.temporaryDirectory.appendingPathComponent("camctl-test-\(getpid())-\(name)").path
        }

        @Test("every Firmware-sim scenario carries expectations, and they pass in virtual time (JUnit too)")
        func everyScenarioPassesInVirtualTime() async throws {
            let files = try Self.files()
            #expect(files.count >= 9)
            var total = 0
            for file in files {
                let script = try ScenarioScript(try String(contentsOfFile: file, encoding: .utf8))
                #expect(script.expectations.count >= 3, "\(file) says what must happen")
                total += script.expectations.count
            }
            let junit = Self.temporary("virtual.xml")
            defer { try? FileManager.default.removeItem(atPath: junit) }
            let run = try await runTool("camctl", ["test", "--virtual", "--junit", junit] + files, timeout: .seconds(120))
            #expect(run.status == 0, "\(run.standardOutput)\(run.standardError)")
            #expect(run.standardOutput.contains("all \(total) expectations passed in \(files.count) scenarios"))
            let xml = try String(contentsOfFile: junit, encoding: .utf8)
            #expect(xml.components(separatedBy: "<testcase ").count - 1 == total)
            #expect(xml.contains("failures=\"0\""))
        }

        @Test("a file that does not parse, among others: an ERROR and a JUnit error for it, the others still run, exit 1")
        func aBadFileAmongOthers() async throws {
            let good = Self.directory.appendingPathComponent("full-click.scenario").path
            let bad = Self.temporary("bad.scenario")
            let junit = Self.temporary("mixed.xml")
            defer {
                try? FileManager.default.removeItem(atPath: bad)
                try? FileManager.default.removeItem(atPath: junit)
            }
            try "full-click\nexpect capture endd\n".write(toFile: bad, atomically: true, encoding: .utf8)
            let run = try await runTool("camctl", ["test", "--virtual", good, bad, "--junit", junit], timeout: .seconds(60))
            #expect(run.status == 1, "\(run.standardOutput)\(run.standardError)")
            #expect(run.standardOutput.contains("\(good): 9 passed, 0 failed"), "\(run.standardOutput)")
            #expect(run.standardOutput.contains("ERROR \(bad): not run: \(bad):2:16: unknown capture phase"), "\(run.standardOutput)")
            #expect(run.standardError.contains("1 of 2 files could not be read or parsed"), "\(run.standardError)")
            let xml = try String(contentsOfFile: junit, encoding: .utf8)
            #expect(xml.contains("errors=\"1\""), "\(xml)")
            #expect(xml.contains("<error message=\"not run: the file could not be read or parsed\">"), "\(xml)")
            // Only bad files: the ERROR lines and the JUnit still come, in the files' order.
            let none = try await runTool("camctl", ["test", "--virtual", bad, "/nonexistent.scenario", "--junit", junit])
            #expect(none.status == 1, "\(none.standardOutput)\(none.standardError)")
            let errors = none.standardOutput.split(separator: "\n").filter { $0.hasPrefix("ERROR ") }
            #expect(errors.count == 2 && errors[0].contains(bad) && errors[1].contains("/nonexistent.scenario"), "\(errors)")
            #expect(try String(contentsOfFile: junit, encoding: .utf8).contains("errors=\"2\""))
            // One file alone that does not parse is the command's error, as before.
            let alone = try await runTool("camctl", ["test", bad])
            #expect(alone.status == 1 && alone.standardError.contains("unknown capture phase"), "\(alone.standardError)")
        }

        @Test("--events lists a run's events in device time, the time base of the PASS lines")
        func eventsInTheReportsTimeBase() async throws {
            let file = Self.directory.appendingPathComponent("ae-af-lock.scenario").path
            let run = try await runTool("camctl", ["test", "--virtual", "--events", file], timeout: .seconds(60))
            #expect(run.status == 0, "\(run.standardOutput)\(run.standardError)")
            let lines = run.standardOutput.split(separator: "\n").map(String.init)
            #expect(lines.contains { $0.hasSuffix("events (device time, ms; the scenario started at 100.0 ms)") }, "\(lines)")
            // Each PASS line's time is the time --events gives the event it matched.
            let passes = lines.filter { $0.hasPrefix("PASS") && $0.contains("expect gesture light-press-began") }
            let pass = try #require(passes.first, "\(lines)")
            let at = try #require(pass.range(of: "(at ")).upperBound
            let time = String(pass[at...].prefix { $0 != " " })
            #expect(
                lines.contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix("\(time)  gesture light-press-began") },
                "\(time) not among the events: \(lines)")
        }

        @Test("the same scenarios pass over camctl-sim's pty (firmware feedback skipped: not seen over a port)")
        func everyScenarioPassesOverAPty() async throws {
            let files = try Self.files()
            // One host for every file, each on a fresh app with controls of its own: the control
            // choose-control.scenario selects must not be the one light-press.scenario's overlay shows.
            try await withSimulator(seed: 1) { simulator in
                let run = try await runTool(
                    "camctl", ["test", "--port", simulator.ptyPath, "--settle-ms", "300"] + files, timeout: .seconds(180))
                #expect(run.status == 0, "\(run.standardOutput)\(run.standardError)")
                #expect(!run.standardOutput.contains("FAIL "))
                #expect(run.standardOutput.contains("SKIP "))
                // The closing line counts the skipped ones apart, not among the passed.
                var passed = 0
                var skipped = 0
                for line in run.standardOutput.split(separator: "\n") where line.contains(" passed, 0 failed") {
                    let words = line.split(separator: " ")
                    let at = try #require(words.firstIndex(of: "passed,"))
                    passed += try #require(Int(words[at - 1]))
                    if let skip = words.firstIndex(of: "skipped") { skipped += try #require(Int(words[skip - 1])) }
                }
                #expect(skipped > 0)
                #expect(
                    run.standardOutput.contains(
                        "\n\(passed) expectations passed, \(skipped) skipped, in \(files.count) scenarios\n"),
                    "\(run.standardOutput)")
                #expect(!run.standardOutput.split(separator: "\n").contains { $0.hasPrefix("all ") }, "\(run.standardOutput)")
            }
        }

        @Test("test --port starts each scenario from the default settings, whatever the device kept, and puts the device's back")
        func settingsLeftOnTheDevice() async throws {
            try await withSimulator(seed: 3) { simulator in
                // Camera Control off, kept by the device (as an interrupted settings.scenario leaves it, or a user).
                let off = try await runTool(
                    "camctl", ["settings", simulator.ptyPath, "camera-control=off", "light-press-force=lighter"])
                #expect(off.status == 0, "\(off.standardError)")
                let run = try await runTool(
                    "camctl",
                    [
                        "test", "--port", simulator.ptyPath, "--settle-ms", "300",
                        Self.directory.appendingPathComponent("full-click.scenario").path,
                    ],
                    timeout: .seconds(60))
                #expect(run.status == 0, "\(run.standardOutput)\(run.standardError)")
                // It passed: the click captured, so Camera Control was on while it played. Then the device's own
                // settings are back (a run that left the defaults lost a board's stored settings for good).
                let after = try await runTool("camctl", ["settings", simulator.ptyPath, "--json"])
                #expect(after.standardOutput.contains("\"cameraControl\":\"SETTING_SWITCH_OFF\""), "\(after.standardOutput)")
                #expect(after.standardOutput.contains("\"lightPressForce\":\"LIGHT_PRESS_FORCE_LIGHTER\""), "\(after.standardOutput)")
            }
        }

        @Test("a device lost for good during test --port: exit 1 saying it did not come back, no wait for ever")
        func aDeviceThatDoesNotComeBack() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let scenario = folder + "/long.scenario"
            try BoundedFiles.write(Array("full-click\nexpect capture ended primary camera-control\npause 20s\n".utf8), to: scenario)
            // A simulator whose stderr tells when the host's session started (SimulatorProcess keeps it quiet).
            let simulator = Process()
            simulator.executableURL = URL(fileURLWithPath: try BuiltProducts.executable("camctl-sim"))
            simulator.arguments = ["--exit-with-parent", "--link", folder + "/pty"]
            let err = Pipe()
            simulator.standardOutput = FileHandle.nullDevice
            simulator.standardError = err
            try simulator.run()
            defer { if simulator.isRunning { signalProcess(simulator.processIdentifier, SIGKILL) } }
            let log = PipeCollector(err.fileHandleForReading)
            #expect(await eventually(within: .seconds(30)) { log.text.contains("running") })
            let run = Task { try await runTool("camctl", ["test", "--port", folder + "/pty", scenario], timeout: .seconds(60)) }
            // Gone once the host has its session (its ACK of the HandshakeResponse arrived; "session started" is
            // the device's side, before the answer reached the host), wherever the command is then (its clock
            // estimate or the scenario).
            #expect(await eventually(within: .seconds(30)) { log.text.contains("session acknowledged by the host") })
            signalProcess(simulator.processIdentifier, SIGKILL)
            // Its link goes too, as an unplugged board's port does: left behind, it names a /dev/pts number the
            // next pty made (another test's simulator) takes, and the host reconnects to that device.
            try? FileManager.default.removeItem(atPath: folder + "/pty")
            let result = try await run.value
            #expect(result.status == 1, "\(result.standardOutput)\(result.standardError)")
            #expect(result.standardError.contains("did not come back within 10"), "\(result.standardOutput)\(result.standardError)")
        }

        /// `--port` plays a file in one RunScenario (its expectations time from that one start): a file too big
        /// for the device's frames is refused in one line that says the limit and how to split it, before any
        /// file plays (a run did not stop at its sixth file after playing five).
        @Test(
            "test --port with a file too big for one RunScenario: one line with its size, the limit and how to split, before any file plays"
        )
        func fileTooBigForOneRequest() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let long = folder + "/long.scenario"
            let text = String(repeating: "light-press hold=120ms\npause 80ms\n", count: 60) + "expect gesture light-press-began\n"
            try BoundedFiles.write(Array(text.utf8), to: long)
            let good = Self.directory.appendingPathComponent("full-click.scenario").path
            let simulator = try SimulatorProcess(seed: 31)
            defer { simulator.kill() }
            let run = try await runTool("camctl", ["test", "--port", simulator.ptyPath, "--events", good, long], timeout: .seconds(60))
            #expect(run.status == 1, "\(run.standardOutput)\(run.standardError)")
            // 60 × 34 bytes of steps; the simulator's frames are 1024 bytes, 992 of them for steps.
            #expect(run.standardError.contains("\(long): its steps are 2040 bytes of text, more than the 992"), "\(run.standardError)")
            #expect(run.standardError.contains("(1024-byte frames)"), "\(run.standardError)")
            #expect(run.standardError.contains("split it into files of at most 992 bytes of steps"), "\(run.standardError)")
            #expect(run.standardError.split(separator: "\n").count == 1, "one line: \(run.standardError)")
            // --events prints each file's events once it has played: none did.
            #expect(!run.standardOutput.contains("\(good): events"), "nothing played: \(run.standardOutput)")
        }

        @Test("a deliberately wrong expectation fails: FAIL with its line, the events around it, exit 1, JUnit")
        func wrongExpectationFails() async throws {
            let file = Self.temporary("wrong.scenario")
            let junit = Self.temporary("wrong.xml")
            defer {
                try? FileManager.default.removeItem(atPath: file)
                try? FileManager.default.removeItem(atPath: junit)
            }
            let text = try String(contentsOfFile: Self.directory.appendingPathComponent("full-click.scenario").path, encoding: .utf8)
                .replacingOccurrences(of: "expect no gesture long-press-began", with: "expect no capture began")
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            let line = try #require(lines.firstIndex { $0 == "expect no capture began" }) + 1
            let run = try await runTool("camctl", ["test", file, "--junit", junit])
            #expect(run.status == 1)
            #expect(run.standardOutput.contains("FAIL \(file):\(line) expect no capture began (capture began primary camera-control at "))
            #expect(run.standardOutput.contains("> ") && run.standardOutput.contains("gesture press-began camera-control"))
            #expect(run.standardError.contains("1 of 9 expectations failed"))
            let xml = try String(contentsOfFile: junit, encoding: .utf8)
            #expect(xml.contains("failures=\"1\"") && xml.contains("<failure message=\"capture began primary camera-control at "))
        }

        @Test("scenario --check names a bad expectation's FILE:LINE:COLUMN and counts the good ones")
        func checkNamesBadExpectations() async throws {
            let file = Self.temporary("check.scenario")
            defer { try? FileManager.default.removeItem(atPath: file) }
            try "full-click\nexpect capture ended primary camera-control within 30ms\nexpect gesture dubble-light-press\n"
                .write(toFile: file, atomically: true, encoding: .utf8)
            let bad = try await runTool("camctl", ["scenario", "--check", file])
            #expect(bad.status == 1)
            #expect(bad.standardError.contains("\(file):3:16: unknown gesture (did you mean double-light-press?)"))
            let good = try await runTool("camctl", ["scenario", "--check"] + (try Self.files()))
            #expect(good.status == 0, "\(good.standardError)")
            #expect(good.standardOutput.contains("full-click.scenario: 2 steps, 9 expectations"))
            // Several files, a bad one first and one missing: every file is checked, each with its own object.
            let full = Self.directory.appendingPathComponent("full-click.scenario").path
            let missing = Self.temporary("missing.scenario")
            let all = try await runTool("camctl", ["scenario", "--check", file, full, missing, "--json"])
            #expect(all.status == 1, "\(all.standardError)")
            let objects = try all.standardOutput.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
            #expect(objects.map { $0["file"] } == [.string(file), .string(full), .string(missing)], "\(all.standardOutput)")
            #expect(objects.map { $0["ok"] } == [.bool(false), .bool(true), .bool(false)], "\(all.standardOutput)")
            #expect(objects.first?["line"] == .number("3"), "\(all.standardOutput)")
            guard case .string(let reason)? = objects.last?["reason"] else {
                Issue.record("no reason for the missing file: \(all.standardOutput)")
                return
            }
            #expect(reason.contains(missing), "\(reason)")
            #expect(all.standardError.contains("\(file):3:16: unknown gesture"), "\(all.standardError)")
            #expect(all.standardError.contains("2 of 3 files have errors"), "\(all.standardError)")
            let text = try await runTool("camctl", ["scenario", "--check", file, full])
            #expect(text.status == 1, "\(text.standardError)")
            #expect(text.standardOutput.contains("full-click.scenario: 2 steps, 9 expectations"), "\(text.standardOutput)")
        }
    }
}
