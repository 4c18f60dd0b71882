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

            let monitor = Process()
            monitor.executableURL = URL(fileURLWithPath: try BuiltProducts.executable("camctl"))
            monitor.arguments = ["monitor", link, "--seconds", "60"]
            monitor.standardInput = FileHandle.nullDevice
            let out = Pipe()
            monitor.standardOutput = out
            monitor.standardError = FileHandle.nullDevice
            try monitor.run()
            defer {
                if monitor.isRunning {
                    signalProcess(monitor.processIdentifier, SIGKILL)
                    monitor.waitUntilExit()
                }
            }
            let output = PipeCollector(out.fileHandleForReading)
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
    }
}
