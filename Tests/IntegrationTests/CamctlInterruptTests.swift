import CameraControlPosixTransport
import CameraControlTestSupport
import Foundation
import Testing

/// Ctrl-C and SIGTERM at a camctl command that holds a port: it leaves no lock file, socket or link behind,
/// ends with 128 + the signal (130, 143) unless it can end cleanly (`ping`: its summary, exit 0). No timing
/// is asserted: each signal is sent once the command holds its port (its lock file is there).
@Suite("camctl interrupted")
struct CamctlInterruptTests {
    /// A camctl command started in the background, its output in files.
    final class Running: @unchecked Sendable {
        let process = Process()
        let output: String
        let errors: String

        init(_ arguments: [String], folder: String) throws {
            output = folder + "/stdout-\(arguments[0])"
            errors = folder + "/stderr-\(arguments[0])"
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            _ = FileManager.default.createFile(atPath: errors, contents: nil)
            process.executableURL = URL(fileURLWithPath: try BuiltProducts.executable("camctl"))
            process.arguments = arguments
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
            try process.run()
        }

        /// Sends `signal`, then waits for the end (killed after 20 s: a hang fails the test).
        func interrupt(with signal: Int32) async -> Int32 {
            kill(process.processIdentifier, signal)
            if !(await eventually(within: .seconds(20)) { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            return process.terminationStatus
        }

        var printed: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        var complained: String { (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "" }
    }

    /// The UUCP lock files a process may hold for the pty `ptyPath`.
    static func lockFiles(of ptyPath: String) -> [String] {
        let name = PortLock.lockFileName(for: ptyPath)
        return PortLock.Options.standard.lockDirectories.map { $0 + "/" + name }
    }

    static func locked(_ ptyPath: String) -> Bool {
        lockFiles(of: ptyPath).contains { FileManager.default.fileExists(atPath: $0) }
    }

    @Test("monitor (and its page) stops cleanly on Ctrl-C (exit 0); serve on SIGTERM exits 143; none leaves its lock file or socket")
    func interruptedCommandsLeaveNothing() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let simulator = try SimulatorProcess()
        defer { simulator.kill() }
        try #require(!Self.locked(simulator.ptyPath), "a lock file was there before the test")

        let monitor = try Running(["monitor", simulator.ptyPath], folder: folder)
        #expect(await eventually { Self.locked(simulator.ptyPath) })
        // Once it prints events it has its session (and its handler for the signal).
        #expect(await eventually { monitor.printed.contains("device") })
        #expect(await monitor.interrupt(with: SIGINT) == 0)
        #expect(!Self.locked(simulator.ptyPath), "monitor left its lock file")

        // The live page the same way (it exited 130 before, the README said 0).
        let page = try Running(["monitor", simulator.ptyPath, "--http", "0"], folder: folder)
        #expect(await eventually { page.printed.contains("page: http://") })
        #expect(await page.interrupt(with: SIGINT) == 0, "\(page.complained)")
        #expect(!Self.locked(simulator.ptyPath), "monitor --http left its lock file")

        let socket = folder + "/serve.sock"
        let serve = try Running(["serve", simulator.ptyPath, "--socket", socket], folder: folder)
        #expect(await eventually { Self.locked(simulator.ptyPath) && FileManager.default.fileExists(atPath: socket) })
        #expect(await serve.interrupt(with: SIGTERM) == 143)
        #expect(!Self.locked(simulator.ptyPath), "serve left its lock file")
        #expect(!FileManager.default.fileExists(atPath: socket), "serve left its socket")
    }

    @Test("a command that fails after it opened the port (a scenario too long for one call): exit 1, no lock file left")
    func failureAfterOpenLeavesNoLockFile() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let simulator = try SimulatorProcess()
        defer { simulator.kill() }
        let scenario = folder + "/long.scenario"
        try String(repeating: "pause 100ms\n", count: 100).write(toFile: scenario, atomically: true, encoding: .utf8)
        for arguments in [
            ["monitor", simulator.ptyPath, "--scenario", scenario], ["monitor", simulator.ptyPath, "--http", "0", "--scenario", scenario],
        ] {
            let run = try await runTool("camctl", arguments)
            #expect(run.status == 1, "\(arguments): \(run.standardError)")
            #expect(run.standardError.contains("more than one RunScenario takes"), "\(run.standardError)")
            #expect(!Self.locked(simulator.ptyPath), "\(arguments) left its lock file")
        }
    }

    @Test("ping on Ctrl-C stops pinging and prints its summary of the pings sent: exit 0, the port released")
    func interruptedPingSummarises() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let simulator = try SimulatorProcess()
        defer { simulator.kill() }
        let ping = try Running(["ping", simulator.ptyPath, "--count", "10000000", "--json"], folder: folder)
        #expect(await eventually { ping.printed.contains("\"type\":\"ping\"") })
        #expect(await ping.interrupt(with: SIGINT) == 0)
        let summary = try #require(ping.printed.split(separator: "\n").last.map(String.init))
        let json = try JSONSerialization.jsonObject(with: Data(summary.utf8)) as? [String: Any]
        let sent = try #require(json?["sent"] as? Int)
        #expect(json?["type"] as? String == "summary")
        #expect(sent > 0 && sent < 10_000_000)
        #expect(!Self.locked(simulator.ptyPath), "ping left its lock file")
    }

    @Test("ping whose device goes away mid-run: exit 1, 'the device went away', not a silent device's exit 3")
    func pingLosesItsDevice() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let simulator = try SimulatorProcess()
        let ping = try Running(["ping", simulator.ptyPath, "--count", "10000000", "--json"], folder: folder)
        #expect(await eventually { ping.printed.contains("\"type\":\"ping\"") })
        simulator.kill()
        #expect(await eventually(within: .seconds(30)) { !ping.process.isRunning })
        if ping.process.isRunning { kill(ping.process.processIdentifier, SIGKILL) }
        ping.process.waitUntilExit()
        #expect(ping.process.terminationStatus == 1, "\(ping.complained)")
        #expect(ping.complained.contains("the device went away"), "\(ping.complained)")
    }

    @Test("relay on Ctrl-C ends as its --seconds would: its counts printed, its link and the lock file removed, exit 0")
    func interruptedRelaySummarises() async throws {
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let simulator = try SimulatorProcess()
        defer { simulator.kill() }
        let link = folder + "/relayed"
        let relay = try Running(["relay", "pty", simulator.ptyPath, "--link", link], folder: folder)
        #expect(await eventually { relay.printed.contains("relay: faults") && FileManager.default.fileExists(atPath: link) })
        #expect(await relay.interrupt(with: SIGINT) == 0, "\(relay.complained)")
        #expect(relay.printed.contains("relay: host→device "), "\(relay.printed)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == nil, "relay left its link")
        #expect(!Self.locked(simulator.ptyPath), "relay left its lock file")
    }
}
