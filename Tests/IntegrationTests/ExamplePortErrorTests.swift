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

    @Test("a busy port: one line naming the holder, exit 1")
    func busyPort() async throws {
        try await withSimulator(seed: 41) { simulator in
            let holder = Process()
            holder.executableURL = URL(fileURLWithPath: try BuiltProducts.executable("camctl"))
            holder.arguments = ["monitor", simulator.ptyPath, "--seconds", "60"]  // killed below; never gone before camera-app tries
            let output = Pipe()
            holder.standardOutput = output
            holder.standardError = FileHandle.nullDevice
            try holder.run()
            defer {
                if holder.isRunning { signalProcess(holder.processIdentifier, SIGKILL) }
                holder.waitUntilExit()
            }
            // The monitor prints the device once connected: it holds the port from then on.
            let printed = PipeCollector(output.fileHandleForReading)
            #expect(await eventually(within: .seconds(10)) { !printed.text.isEmpty })
            let busy = try await runTool("camera-app", [simulator.ptyPath], timeout: .seconds(10))
            #expect(busy.standardError.contains("in use by PID"), "\(busy.standardError)")
            #expect(busy.status == 1)
            #expect(busy.standardError.split(separator: "\n").count == 1, "\(busy.standardError)")
        }
    }
}
