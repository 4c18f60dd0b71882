import CameraControlTestSupport
import Foundation
import Testing

/// The quick start's first command: `camctl demo` starts the simulator itself, connects over its pty and
/// plays the tour. It must run to the end, show every layer, and leave nothing behind.
@Suite("camctl demo", .serialized)
struct DemoTests {
    @Test("the tour runs end to end and shows every layer")
    func theTourRunsEndToEndAndShowsEveryLayer() async throws {
        let seed = 50_000 + UInt64(getpid() % 10_000)  // to find the demo's own simulator afterwards
        // One smoke run over a real pty, no retry: the tour's behaviour itself is pinned in virtual time
        // (ControlsScenarioTests' demo replay and demoTour).
        let run = try await runTool("camctl", ["demo", "--seed", "\(seed)"], timeout: .seconds(90))
        let leftovers = simulatorProcesses(seed: seed)
        for pid in leftovers { signalProcess(pid, SIGKILL) }
        let out = run.standardOutput
        #expect(run.status == 0, "stderr: \(run.standardError)")
        #expect(leftovers.isEmpty, "camctl demo left camctl-sim running: \(leftovers)")
        // The handshake, then each layer: gestures, overlay and delegate, haptics, capture events.
        for text in [
            "device      CameraControl Simulator", "gesture  light-press-began camera-control",
            "gesture  double-light-press", "overlay  overlay-shown zoom", "overlay  picker-opened",
            "overlay  control-selected exposure-bias", "overlay  control-selected reactions",
            "delegate did-become-active", "delegate will-exit-fullscreen", "haptic   detent → device",
            "capture  began     secondary volume-up", "gesture  long-press-began",
            "ui       own controls hidden (clean preview)", "lock     locked AE/AF", "AE/AF locked",
        ] {
            #expect(out.contains(text), "the demo's output lacks '\(text)'")
        }
        // Every input source captured exactly as the tour presses them; nothing cancelled or invented.
        #expect(
            out.contains(
                "captures    7 ended (action-button 1, camera-control 3, remote 1, volume-down 1, volume-up 1), 0 cancelled"),
            "\(out.suffix(600))")
        #expect(out.contains("photos      5 taken, 2 videos"), "the click and the volume-down held record videos")
        #expect(!out.contains("reaction    none"), "the picker flow chose no reaction")
        #expect(!out.contains("exposure    +0.00 EV"), "the exposure slider did not move")
        #expect(out.contains("0 check errors"))
        // The README's sample output is a real run's: each of its lines still appears, apart from numbers
        // (times, forces, latencies).
        for line in Self.readmeSampleLines() {
            #expect(
                out.split(separator: "\n").contains { Self.shape(String($0)) == Self.shape(line) },
                "README's sample line is no longer in the demo's output: \(line)")
        }
    }

    @Test("demo --quiet prints only the summary: no pty line, no device identity, no events")
    func quietPrintsOnlyTheSummary() async throws {
        let seed = 60_000 + UInt64(getpid() % 10_000)  // to find the demo's own simulator afterwards
        let root = "/" + String(#filePath).split(separator: "/").dropLast(3).joined(separator: "/")
        let run = try await runTool(
            "camctl",
            ["demo", "--quiet", "--seed", "\(seed)", "--scenario", root + "/Firmware-sim/scenarios/full-click.scenario"],
            timeout: .seconds(60))
        for pid in simulatorProcesses(seed: seed) { signalProcess(pid, SIGKILL) }
        #expect(run.status == 0, "stderr: \(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("captures    1 ended (camera-control 1)") == true, "\(run.standardOutput)")
        #expect(
            lines.map { $0.split(separator: " ").first.map(String.init) ?? "" } == [
                "captures", "photos", "zoom", "exposure", "reaction", "link",
            ], "\(run.standardOutput)")
    }

    /// The README's `demo-sample` block, without the elision line.
    static func readmeSampleLines() -> [String] {
        let root = "/" + String(#filePath).split(separator: "/").dropLast(3).joined(separator: "/")
        guard let readme = try? String(contentsOfFile: root + "/README.md", encoding: .utf8),
            let marker = readme.range(of: "<!-- demo-sample"),
            let open = readme.range(of: "```\n", range: marker.upperBound..<readme.endIndex),
            let close = readme.range(of: "\n```", range: open.upperBound..<readme.endIndex)
        else { return ["README.md has no demo-sample block"] }
        return readme[open.upperBound..<close.lowerBound].split(separator: "\n").map(String.init).filter { $0 != "…" }
    }

    /// A line with every number (and its sign) replaced by `#` and runs of spaces folded.
    static func shape(_ line: String) -> String {
        var out = ""
        var inNumber = false
        for character in line {
            if character.isNumber || (inNumber && character == ".") {
                if out.last == "-" || out.last == "+" { out.removeLast() }
                if !inNumber { out.append("#") }
                inNumber = true
            } else {
                inNumber = false
                if character == " ", out.last == " " { continue }
                out.append(character)
            }
        }
        return out.trimmingCharacters(in: .whitespaces)
    }
}

/// `camctl monitor` against a simulator that is unplugged (killed) and plugged back (restarted at the same
/// `--link` path): the first device's capture is reported, the loss is noted, and the second device's
/// presses are reported too.
extension DemoTests {
    /// The device lost during a demo ends it then, not at its scenario's end: the scenario here lasts 40 s
    /// after its click, and the demo must have ended within 15 s of the loss (a hang bound, far from both).
    @Test("a device lost during the demo ends it then, not at its scenario's end")
    func aLostDeviceEndsTheDemo() async throws {
        try await Self.loseTheDevice(
            scenario: "full-click\npause 20s\npause 20s\n", saying: "the simulator was lost during the demo")
    }

    /// The same while the demo waits for a scenario piece to end before it sends the next (a scenario larger
    /// than a frame, ScenarioPieces.swift): the first piece plays for 10 minutes after its click, and the demo
    /// must end within 15 s of the loss, not when the piece would have ended.
    @Test("a device lost while the demo waits for a scenario piece to end ends it then")
    func aLostDeviceEndsTheDemoBetweenPieces() async throws {
        let filler = String(repeating: "pause 1ms # fills the first piece's frame\n", count: 40)  // 1,640 bytes: two frames
        try await Self.loseTheDevice(
            scenario: "full-click\npause 600s\n" + filler, saying: "the device was lost while the scenario played")
    }

    /// Runs `camctl demo --port` on a simulator playing `scenario`, kills the simulator once the demo has shown
    /// a capture, and expects the demo to end soon after with status 1 and `message` in its errors.
    static func loseTheDevice(scenario text: String, saying message: String) async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let scenario = folder + "/long.scenario"
        #expect(FileManager.default.createFile(atPath: scenario, contents: Data(text.utf8)))
        let simulator = try SimulatorProcess(seed: 64)
        defer { simulator.kill() }
        let demo = Process()
        demo.executableURL = URL(fileURLWithPath: try BuiltProducts.executable("camctl"))
        demo.arguments = ["demo", "--port", simulator.ptyPath, "--scenario", scenario]
        demo.standardInput = FileHandle.nullDevice
        let out = Pipe()
        let err = Pipe()
        demo.standardOutput = out
        demo.standardError = err
        try demo.run()
        defer { if demo.isRunning { signalProcess(demo.processIdentifier, SIGKILL) } }
        let output = PipeCollector(out.fileHandleForReading)
        let errors = PipeCollector(err.fileHandleForReading)
        // Once the demo's capture shows, the device goes.
        let captured = await eventually(within: .seconds(30)) { output.text.contains("capture  ended") }
        #expect(captured, "the demo never captured: \(output.text.suffix(400))")
        simulator.kill()
        let ended = await eventually(within: .seconds(15)) { !demo.isRunning }
        #expect(ended, "the demo still ran after its device was gone")
        if !ended { signalProcess(demo.processIdentifier, SIGKILL) }
        demo.waitUntilExit()
        _ = await eventually(within: .seconds(5)) { errors.isEnded }
        #expect(demo.terminationStatus == 1, "\(errors.text)")
        #expect(errors.text.contains(message), "\(errors.text)")
    }
}

@Suite("camctl monitor", .serialized)
struct MonitorTests {
    @Test("monitor rides through an unplug and reports the second device's presses")
    func monitorRidesThroughAnUnplug() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let link = folder + "/camera-control"
        let scenarios = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Firmware-sim/scenarios")
        // The simulator plays when the monitor's handshake completes; the pause lets the monitor attach its capture
        // interaction first (a press that began before it did is not its press, as with Apple's interaction).
        let firstScenario = folder + "/first.scenario"
        let click = try String(contentsOf: scenarios.appendingPathComponent("full-click.scenario"), encoding: .utf8)
        #expect(FileManager.default.createFile(atPath: firstScenario, contents: Data(("pause 1500ms\n" + click).utf8)))
        let first = try SimulatorProcess(seed: 61, linkPath: link, extraArguments: ["--scenario", firstScenario])
        defer { first.kill() }

        let monitor = Process()
        monitor.executableURL = URL(fileURLWithPath: try BuiltProducts.executable("camctl"))
        monitor.arguments = ["monitor", link, "--seconds", "30"]
        monitor.standardInput = FileHandle.nullDevice
        let out = Pipe()
        monitor.standardOutput = out
        monitor.standardError = FileHandle.nullDevice
        try monitor.run()
        defer { if monitor.isRunning { signalProcess(monitor.processIdentifier, SIGKILL) } }
        let output = PipeCollector(out.fileHandleForReading)

        // Only once the monitor has seen the first device's capture is that device unplugged. It is
        // stopped with SIGTERM so it removes its link: a stale link could point at a pty number that
        // another test's simulator reuses.
        let firstSeen = await eventually(within: .seconds(30)) {
            output.text.contains("capture  ended     primary   camera-control")
        }
        #expect(firstSeen, "the first device's capture never showed: \(output.text.suffix(800))")
        first.stop()
        let lossSeen = await eventually(within: .seconds(30)) { output.text.contains("device lost") }
        #expect(lossSeen)
        let second = try SimulatorProcess(
            seed: 62, linkPath: link, extraArguments: ["--scenario", scenarios.appendingPathComponent("buttons.scenario").path])
        defer { second.stop() }
        let secondSeen = await eventually(within: .seconds(30)) {
            output.text.contains("capture  ended     secondary volume-up")
        }
        #expect(secondSeen, "no capture after the reconnect: \(output.text.suffix(800))")
        // Two sessions at least (a starved machine may lose and regain the second one, too).
        #expect(output.text.components(separatedBy: "device      CameraControl Simulator").count >= 3, "two sessions")
        signalProcess(monitor.processIdentifier, SIGTERM)
    }

    /// `camctl monitor PORT --scenario FILE`: the scenario plays through the monitor's own session, so
    /// one host sees its captures (no second host on the port), and the monitor ends after the scenario.
    @Test("monitor plays a scenario through its own session")
    func monitorPlaysAScenarioThroughItsOwnSession() async throws {
        let simulator = try SimulatorProcess(seed: 63)
        defer { simulator.stop() }
        let scenarios = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Firmware-sim/scenarios")
        let run = try await runTool(
            "camctl",
            ["monitor", simulator.ptyPath, "--scenario", scenarios.appendingPathComponent("buttons.scenario").path],
            timeout: .seconds(30))
        #expect(run.status == 0, "stderr: \(run.standardError)")
        let out = run.standardOutput
        #expect(out.contains("scenario: "), "the monitor did not play the scenario: \(out.suffix(600))")
        for source in ["volume-down", "action-button", "remote"] {
            #expect(out.contains("capture  ended     primary   \(source)"), "no capture from \(source): \(out.suffix(600))")
        }
        #expect(out.contains("capture  ended     secondary volume-up"))
        #expect(!out.contains("cancelled"), "nothing in flight was lost: \(out.suffix(600))")
        // It stopped itself at the end of the scenario: its last line is no "device lost" (that means an
        // unplug; one in the middle, with a new session after it, is a link drop on a starved machine).
        let lastLine = out.split(separator: "\n").last.map(String.init) ?? ""
        #expect(!lastLine.contains("device lost"), "\(out.suffix(600))")
    }
}
