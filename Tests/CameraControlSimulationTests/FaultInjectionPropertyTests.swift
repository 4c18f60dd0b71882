import CameraControlSimulation
import CameraControlTestSupport
import CameraControlWire
import Foundation
import Testing

// The fault-injection property test (issue 9): random gestures through a link that corrupts bytes,
// loses and duplicates frames and injects garbage bursts, in virtual time, on the real firmware and the
// real host pipeline. Prints the counts.

/// The fault model of the issue: 1 % of bytes corrupted, 1 % of frames lost, 1 % duplicated, garbage bursts.
/// `CAMCTL_FAULT_SPEC=SPEC` tries another model (LinkFaults' syntax).
let propertyFaults = ProcessInfo.processInfo.environment["CAMCTL_FAULT_SPEC"] ?? "corrupt=1%,drop-frame=1%,dup=1%,garbage=0.5%:64"

@Suite("Fault injection: random gestures through a corrupting, lossy, duplicating link")
struct FaultInjectionPropertyTests {
    /// Four devices in parallel, 2,520 gestures each: 10,080 in all.
    static let devices: [UInt64] = [1, 2, 3, 4]
    /// `CAMCTL_FAULT_SCENARIOS=N` runs N scenarios per device instead (a quick look, or a longer run).
    static let scenariosPerDevice = ProcessInfo.processInfo.environment["CAMCTL_FAULT_SCENARIOS"].flatMap { Int($0) } ?? 126
    static let gesturesPerScenario = 20

    @Test("no phantom capture, no duplicated capture, every began closed once", arguments: devices)
    func randomGestures(device: UInt64) async throws {
        // Minutes of computing in virtual time: off the cooperative pool, so the real-time tests keep running.
        // (#expect stays here, in the test's task, where it is attributed to this test.)
        let (connected, tally) = try await onOwnThread("fault-injection \(device)") { try Self.play(device: device) }
        #expect(connected, "connected")
        #expect(tally.gestures == Self.scenariosPerDevice * Self.gesturesPerScenario)
        #expect(tally.faults.corruptedBytes > 0 && tally.faults.droppedFrames > 0 && tally.faults.duplicatedFrames > 0)
        #expect(tally.faults.garbageBursts > 0, "the link injected garbage")
        // What v1.0 guarantees already.
        #expect(tally.phantomCaptures == 0, "no capture nobody asked for")
        #expect(tally.pairingViolations == 0, "no duplicated began, no ended or cancelled without an open began")
        #expect(tally.pressesOpen == 0, "every began closed exactly once")
        #expect(tally.capturesFull + tally.capturesOther > 0, "captures happened")
        // strictAfterV11: what v1.1 adds (losses a v1.0 host cannot prevent are printed above).
        if strictAfterV11 {
            #expect(tally.silentLostFullClicks == 0, "a lost full click surfaces as cancelled plus a loss report")
            #expect(tally.rawDuplicates == 0, "raw batches are delivered at most once")
            // The handshake retries: most connects succeed although faults hit them too. A device makes only 5 to
            // 7 connects here, each failing at a few per cent (the ~330-byte response comes through 1 % byte
            // corruption whole only by the device's retransmissions and the host's re-handshakes), so one
            // failure is chance (a change to any byte sent re-rolls it) and the bound is a quarter; without the
            // retries most would fail. The retry schedule itself is pinned by DeviceSessionTests.handshakeRetriedWithBackoff.
            #expect(tally.connectFailures * 4 < tally.connectAttempts, "the handshake retries")
        }
    }

    /// Plays one device's random gestures through the faults: whether it connected, and the tally.
    static func play(device: UInt64) throws -> (connected: Bool, tally: ReliabilityTally) {
        var faults = try LinkFaults(spec: propertyFaults)
        faults.seed = 0xFA17 + device
        var options = ReliabilityRun.Options()
        options.faultsWhileConnecting = strictAfterV11
        // Small raw batches: a 25-sample batch rarely survives 1 % corruption and, streaming, the device
        // sends no heartbeat, so the link would die every second or so (ReliabilityRun.Options).
        options.samplesPerBatch = 5
        // Two samples' time per step: half the host work, the same firmware.
        options.stepMicros = 2_000
        options.settleMicros = 400_000
        let run = ReliabilityRun(seed: device, faults: faults, options: options)
        let connected = run.connect()
        var generator = GestureGenerator(seed: 0x6E57 + device)
        for _ in 0..<Self.scenariosPerDevice {
            try run.play(generator.scenario(gestures: Self.gesturesPerScenario))
        }
        run.finish()
        print("fault injection, device \(device) (\(propertyFaults)):\n\(run.tally)")
        return (connected, run.tally)
    }
}
