import CameraControlDevice
import CameraControlRPC
import CameraControlTestSupport
import CameraControlWire
import Foundation
import Testing

/// Issue 9 over a real pseudo-terminal: `camctl-sim` reads only what the firmware's receive ring can
/// take (R6), and `camctl ping` counts losses (R5).
extension OverRealPTY {
    @Suite("Reliability over a pty (v1.1)", .serialized)
    struct Reliability {
        /// Issue 9 item 1: 200 pipelined Pings of ~115 bytes (≈ 23 KB) in one write are all answered and
        /// nothing is dropped (`rx_overruns` stays 0). Before R6 `camctl-sim` read everything the kernel
        /// had and dropped what did not fit its 8 KB ring: 78–118 Pings went unanswered.
        @Test("200 pipelined Pings in one write are all answered")
        func pipelinedPingsAllAnswered() async throws {
            try await withTappedSession { tap, session in
                let calls = (0..<200).map { _ in tap.nextRawCallID() }
                var bytes: [UInt8] = []
                for (index, call) in calls.enumerated() {
                    bytes += try RawFrame.ping(callID: call, payload: [UInt8](repeating: UInt8(index % 250 + 1), count: 100))
                }
                #expect(bytes.count > 20_000)
                try await tap.inject(bytes)
                let answered = await eventually(within: .seconds(20)) {
                    calls.allSatisfy { !tap.packets(callID: $0).isEmpty }
                }
                let unanswered = calls.filter { tap.packets(callID: $0).isEmpty }.count
                #expect(answered, "\(unanswered) of 200 Pings unanswered")
                for (index, call) in calls.enumerated() {
                    let reply = try await tap.rawPingReply(callID: call)
                    #expect(reply == [UInt8](repeating: UInt8(index % 250 + 1), count: 100))
                }
                let counters = try await session.counters()
                #expect(counters.rxOverruns == 0)
            }
        }

        /// Issue 9 item 1: a run of 10,000 non-zero bytes, then `0x00`, then a Ping: the run is one
        /// oversized frame, the delimiter ends it, and the Ping is answered. Before R6 the delimiter fell
        /// in the bytes `camctl-sim` dropped and the Ping was swallowed by the run.
        @Test("10,000 non-zero bytes, a delimiter, then a Ping: the Ping is answered")
        func longRunThenPing() async throws {
            try await withTappedSession { tap, session in
                let before = try await session.counters()
                let call = tap.nextRawCallID()
                try await tap.whileHoldingClient {
                    try await tap.inject([UInt8](repeating: 0x41, count: 10_000) + [0x00] + RawFrame.ping(callID: call, payload: [0x5A]))
                }
                #expect(try await tap.rawPingReply(callID: call) == [0x5A])
                let after = try await session.counters()
                #expect(after.oversizedFrames == before.oversizedFrames + 1)
                #expect(after.rxOverruns == 0)
            }
        }

        /// R5: `camctl ping` reports what it sent, received and lost (v1.0 printed only timings and
        /// aborted at the first lost reply).
        @Test("camctl ping prints sent, received and lost")
        func pingCountsLosses() async throws {
            try await withSimulator { simulator in
                let run = try await runTool("camctl", ["ping", simulator.ptyPath, "--count", "5"])
                #expect(run.status == 0, "\(run.standardError)")
                #expect(run.standardOutput.contains("5 sent, 5 received, 0 lost"), "\(run.standardOutput)")
            }
        }
    }
}
