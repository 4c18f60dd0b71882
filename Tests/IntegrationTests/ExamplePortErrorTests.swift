import CameraControlPosixTransport
import CameraControlTestSupport
import Foundation
import Testing

/// The example app reports a port that does not open in one line, with camctl's exit statuses.
@Suite("camera-app's port errors")
struct ExamplePortErrorTests {
    @Test("a missing port: one line on stderr, exit 1, no crash")
    func missingPort() async throws {
        let run = try await runTool("camera-app", ["/dev/cc-no-such-port"])
        #expect(run.status == 1, "\(run.standardError)")
        let lines = run.standardError.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("camera-app: cannot open /dev/cc-no-such-port"), "\(run.standardError)")
    }

    @Test("--help prints the usage (exit 0); an option it does not know is a usage error (exit 2), not a port")
    func helpAndUnknownOptions() async throws {
        let help = try await runTool("camera-app", ["--help"])
        #expect(help.status == 0, "\(help.standardError)")
        #expect(help.standardOutput.hasPrefix("usage: camera-app [PORT]"), "\(help.standardOutput)")
        for arguments in [["--verbose"], ["/dev/a", "/dev/b"]] {
            let run = try await runTool("camera-app", arguments)
            #expect(run.status == 2, "\(arguments): \(run.standardError)")
            #expect(run.standardError.hasPrefix("camera-app: unknown arguments; usage: camera-app [PORT]"), "\(run.standardError)")
        }
    }

    /// The port is held by this test process (the project's own lock: `flock`, the lock file, `TIOCEXCL`),
    /// not by a `camctl monitor`: a monitor whose link died under load closes the port while it reconnects,
    /// and a camera-app started in that moment got the port and ran until killed (seen once in the parallel
    /// test step, 2026-12-05).
    @Test("a busy port: one line naming the holder, exit 1")
    func busyPort() async throws {
        try await withSimulator(seed: 41) { simulator in
            let holder = try PTYTransport(path: simulator.ptyPath)
            defer { holder.close() }
            let busy = try await runTool("camera-app", [simulator.ptyPath], timeout: .seconds(10))
            #expect(busy.standardError.contains("in use by PID \(getpid())"), "\(busy.standardError)")
            #expect(busy.status == 1)
            #expect(busy.standardError.split(separator: "\n").count == 1, "\(busy.standardError)")
        }
    }

    @Test("a device lost: the app says it waits; one gone for good (its simulator ended): one line, exit 1")
    func goneForGood() async throws {
        let simulator = try SimulatorProcess(seed: 43)
        let app = try Background("camera-app", [simulator.ptyPath])
        defer { app.stop() }
        try await app.waitFor("device connected")
        simulator.stop()
        try await app.waitFor("device lost; waiting for \(simulator.ptyPath) to come back")
        // (A guard against a hang, not a timing: the host gives up on a closed pseudo-terminal at once.)
        let status = await app.waitForExit(within: .seconds(60))
        #expect(status == 1, "\(app.text)")
        // Its output and its one error line (stdout and stderr, collected together).
        let failures = app.text.split(separator: "\n").filter { $0.hasPrefix("camera-app: ") }
        #expect(failures.count == 1 && failures[0].hasPrefix("camera-app: the device is gone for good"), "\(app.text)")
    }

    @Test("camctl info auto when the only device's port is held: names the holder (exit 1), no 'no device answered'")
    func autoWithTheOnlyPortHeld() async throws {
        try await withSimulator(seed: 42) { simulator in
            let holder = try PTYTransport(path: simulator.ptyPath)
            defer { holder.close() }
            let run = try await runTool("camctl", ["info", "auto"], environment: ["CAMCTL_PORTS": simulator.ptyPath])
            #expect(run.status == 1, "\(run.standardError)")
            #expect(run.standardError.contains("auto: no free device answered"), "\(run.standardError)")
            #expect(run.standardError.contains("in use by PID \(getpid())"), "\(run.standardError)")
        }
    }
}
