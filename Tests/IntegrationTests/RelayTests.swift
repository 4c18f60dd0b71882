import CameraControlTestSupport
import Foundation
import Testing

/// `camctl relay` between `camctl ping` and `camctl-sim` over real pseudo-terminals.
extension OverRealPTY {
    @Suite("Relay with faults")
    struct RelayFaults {
        /// The faults a v1.0 host survives (duplicates, reordering, stalls); after protocol v1.1
        /// (`strictAfterV11`), the issue's full model, which `ping` then survives by counting losses.
        static let faults =
            strictAfterV11 ? "corrupt=1%,drop-frame=1%,dup=1%,garbage=0.5%:64,seed=5" : "dup=10%,reorder=5%,stall=5%:20ms,seed=5"

        @Test("camctl ping through camctl relay --faults: every round trip accounted for, every fault logged")
        func pingThroughRelay() async throws {
            let folder = try makeTemporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let link = folder + "/relay"
            try await withSimulator { simulator in
                let relay = Process()
                relay.executableURL = URL(fileURLWithPath: try BuiltProducts.executable("camctl"))
                relay.arguments = ["relay", "pty", simulator.ptyPath, "--link", link, "--faults", Self.faults, "--seconds", "30"]
                let out = Pipe()
                let err = Pipe()
                relay.standardInput = FileHandle.nullDevice
                relay.standardOutput = out
                relay.standardError = err
                try relay.run()
                let outText = PipeCollector(out.fileHandleForReading)
                let errText = PipeCollector(err.fileHandleForReading)
                defer {
                    terminateChild(relay)
                }
                #expect(await eventually(within: .seconds(10)) { FileManager.default.fileExists(atPath: link) }, "relay placed its link")
                let ping = try await runTool("camctl", ["ping", link, "--count", "40"], timeout: .seconds(25))
                #expect(ping.status == 0, "stdout: \(ping.standardOutput) stderr: \(ping.standardError)")
                #expect(ping.standardOutput.contains("40 sent, "), "\(ping.standardOutput)")
                // strictAfterV11: ping prints sent/received/lost; every round trip is then one or the other.
                #expect(terminateChild(relay), "the relay did not end within 10 s of SIGTERM")
                _ = await eventually(within: .seconds(5)) { outText.isEnded && errText.isEnded }
                print("relay:\n\(outText.text)\(errText.text.split(separator: "\n").prefix(8).joined(separator: "\n"))")
                #expect(outText.text.contains("relay: host side at"))
                let logged = [" dup frame ", " reorder frame ", " stall ", " corrupt byte ", " drop-frame frame ", " garbage "]
                    .filter { errText.text.contains($0) }
                #expect(logged.count >= 2, "the relay logged its faults: \(logged)")
            }
        }
    }
}
