import CameraControlTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A port belongs to one host at a time: a second `camctl` on a port that `camctl monitor` holds fails at
/// once, naming the monitor's PID, under either name of the port; once the monitor is gone the port opens.
extension OverRealPTY {
    @Suite("A port in use")
    struct PortInUse {
        @Test("camctl info on a port that camctl monitor holds exits 1 with 'PORT is in use by PID n'")
        func secondCamctlFails() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let link = folder + "/camera-control"
            let simulator = try SimulatorProcess(seed: 71, linkPath: link)
            defer { simulator.stop() }  // SIGTERM, so it removes its link

            let camctl = try Camctl(["monitor", link, "--seconds", "60"])
            defer { camctl.kill() }
            let (monitor, output) = (camctl.process, camctl.output)
            let connected = await eventually(within: .seconds(30)) { output.text.contains("device      CameraControl") }
            try #require(connected, "the monitor never connected: \(output.text.suffix(800))")
            let holder = monitor.processIdentifier

            let viaLink = try await runTool("camctl", ["info", link])
            #expect(viaLink.status == 1)
            #expect(viaLink.standardError.contains("\(link) is in use by PID \(holder)"), "\(viaLink.standardError)")
            #expect(viaLink.standardOutput.isEmpty)

            // The same pty under its own name collides too.
            let viaPty = try await runTool("camctl", ["info", simulator.ptyPath])
            #expect(viaPty.status == 1)
            #expect(viaPty.standardError.contains("\(simulator.ptyPath) is in use by PID \(holder)"), "\(viaPty.standardError)")

            // The kernel drops the monitor's flock when it dies; its lock file is then stale and replaced.
            signalProcess(holder, SIGKILL)
            monitor.waitUntilExit()
            let afterwards = try await runTool("camctl", ["info", link])
            #expect(afterwards.status == 0, "\(afterwards.standardError)")
            #expect(afterwards.standardOutput.contains("device      CameraControl"))
        }

        /// A pty never comes back, and its number goes to the next pty opened: a monitor that reopened
        /// `/dev/pts/N` after its simulator died claimed (lock file, `flock`) another program's simulator there,
        /// and that program's camctl found the port "in use by PID n" (camctl monitor), or the monitor talked to it.
        #if os(Linux)  // devpts makes a pty's node anew: its number's next pty is told apart
            @Test(
                "camctl monitor on a pty by its own path: the simulator killed, it exits 1 'gone for good' and never claims the next pty on that number"
            )
            func monitorGivesUpOnAPtyThatClosed() async throws {
                try await Self.killSimulatorUnder(["monitor"], connectedWhen: "device      CameraControl", seed: 73)
            }
        #endif

        /// The page's monitor (--http) ended with exit 0 whatever ended its host.
        #if os(Linux)  // devpts makes a pty's node anew: its number's next pty is told apart
            @Test("camctl monitor --http on a pty by its own path: the simulator killed, the page ends with exit 1 'gone for good'")
            func pageGivesUpOnAPtyThatClosed() async throws {
                // "page:" is printed once the host is connected and its clock estimated.
                try await Self.killSimulatorUnder(["monitor", "--http", "0"], connectedWhen: "page: http://", seed: 75)
            }
        #endif

        #if os(Linux)  // devpts makes a pty's node anew: its number's next pty is told apart
            /// The collision as tests running at once met it: a simulator killed (SIGKILL) leaves its `--link`;
            /// the monitor reconnecting through it opened whatever pty had its number since, another test's
            /// simulator, whose camctl then found it "in use by PID n (camctl)".
            @Test(
                "camctl monitor through a --link left by a killed simulator claims none of the ptys made since, and carries on once a simulator places the link anew"
            )
            func monitorThroughALinkLeftBehind() async throws {
                let folder = try makeTemporaryFolder()
                defer { try? FileManager.default.removeItem(atPath: folder) }
                let link = folder + "/camera-control"
                let first = try SimulatorProcess(seed: 76, linkPath: link)
                defer { first.kill() }
                let camctl = try Camctl(["monitor", link, "--seconds", "120"])
                defer { camctl.kill() }
                let (monitor, output) = (camctl.process, camctl.output)
                let connected = await eventually(within: .seconds(30)) { output.text.contains("device      CameraControl") }
                try #require(connected, "the monitor never connected: \(output.text.suffix(800))")

                first.kill()  // SIGKILL: its link stays, naming a pty number that is free now
                let lost = await eventually(within: .seconds(30)) { output.text.contains("device lost") }
                try #require(lost, "\(output.text.suffix(800))")
                var others: [SimulatorProcess] = []
                defer { for other in others { other.kill() } }
                for index in 0..<4 { others.append(try SimulatorProcess(seed: 176 + UInt64(index))) }
                // The monitor reopens every 250 ms (its retry delay): a dozen times in 3 s on an idle machine, and
                // each would have claimed the pty on the link's number and shaken hands with its simulator. A
                // busy machine tries less often in that time, so it can only miss a claim here, never make one up.
                _ = await eventually(within: .seconds(3)) {
                    output.text.components(separatedBy: "device      CameraControl").count - 1 >= 2
                }
                // Each is free for its own host: the monitor took none.
                for other in others {
                    let info = try await runTool("camctl", ["info", other.ptyPath])
                    #expect(info.status == 0, "\(other.ptyPath): \(info.standardError)")
                }
                #expect(monitor.isRunning, "a link may be made anew: the monitor waits")
                let sessions = output.text.components(separatedBy: "device      CameraControl").count - 1
                #expect(sessions == 1, "it connected to another simulator: \(output.text)")

                // A simulator started again places its link anew (whatever pty number it got): the monitor carries on.
                let second = try SimulatorProcess(seed: 77, linkPath: link)
                defer { second.kill() }
                let again = await eventually(within: .seconds(30)) {
                    output.text.components(separatedBy: "device      CameraControl").count - 1 >= 2
                }
                #expect(again, "no second session: \(output.text.suffix(800))")
                signalProcess(monitor.processIdentifier, SIGTERM)
            }
        #endif

        /// Runs `camctl ARGUMENTS PTY --seconds 120` on a simulator, kills the simulator (SIGKILL) once stdout
        /// shows `connectedWhen`, starts simulators that may take its pty number, and checks that camctl ends
        /// by itself with one line, exit 1, "gone for good", having claimed none of them.
        static func killSimulatorUnder(_ arguments: [String], connectedWhen: String, seed: UInt64) async throws {
            let first = try SimulatorProcess(seed: seed)
            defer { first.kill() }
            let camctl = try Camctl([arguments[0], first.ptyPath] + arguments.dropFirst() + ["--seconds", "120"])
            defer { camctl.kill() }
            let (command, output, errors) = (camctl.process, camctl.output, camctl.errors)
            let connected = await eventually(within: .seconds(30)) { output.text.contains(connectedWhen) }
            try #require(connected, "camctl never connected: \(output.text.suffix(800)) \(errors.text)")

            first.kill()  // SIGKILL: the pty closes; its number is free for the next one
            // Simulators started now may take that number (this process's pty numbers, lowest first).
            var others: [SimulatorProcess] = []
            defer { for other in others { other.kill() } }
            for index in 0..<4 { others.append(try SimulatorProcess(seed: seed + 100 + UInt64(index))) }
            // Ended by itself, well before its --seconds: it retries every 250 ms and the first reopen says so.
            let ended = await eventually(within: .seconds(60)) { !command.isRunning }
            try #require(ended, "camctl still runs: \(output.text.suffix(800))")
            #expect(command.terminationStatus == 1, "\(output.text.suffix(800)) \(errors.text)")
            let said = await eventually(within: .seconds(5)) { errors.isEnded }
            #expect(said)
            // "the device is gone for good: …", or "… went away while connecting, gone for good: …" when the
            // kill came while its clock was still being estimated.
            #expect(errors.text.contains("gone for good"), "\(errors.text)")
            #expect(errors.text.contains("never comes back"), "\(errors.text)")
            #expect(errors.text.split(separator: "\n").count == 1, "one line: \(errors.text)")
            let afterLoss = output.text.components(separatedBy: "device lost").dropFirst().joined()
            #expect(!afterLoss.contains("device      CameraControl"), "it connected again: \(output.text)")
            // Every new simulator is free for its own host.
            for other in others {
                let info = try await runTool("camctl", ["info", other.ptyPath])
                #expect(info.status == 0, "\(other.ptyPath): \(info.standardError)")
            }
        }
    }
}

/// `camctl ARGUMENTS` running for a test, its standard output and error collected apart; ``kill()`` ends it
/// (SIGKILL) and reaps it, should it still run: called from the test's `defer`, which also keeps it alive
/// that long.
private final class Camctl {
    let process = Process()
    let output: PipeCollector
    let errors: PipeCollector

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: try BuiltProducts.executable("camctl"))
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        output = PipeCollector(out.fileHandleForReading)
        errors = PipeCollector(err.fileHandleForReading)
    }

    func kill() {
        if process.isRunning {
            signalProcess(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
