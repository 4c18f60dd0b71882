import CameraControlTestSupport
import CameraControlTransport
import CameraControlWire
import Testing

@testable import CameraControlConformance

/// A case that fails with nothing seen, or with "no session", asks the device how long it has run: a device
/// that restarted during the case is named as the cause (ConformanceSuite.restartNote).
@Suite("A device that restarted during a case is named in its failure")
struct RestartNoteTests {
    /// Runs one case that waits 400 ms and then fails as `failure` says, against a device whose uptime is
    /// `uptimeMicros`; returns the failure's message.
    static func failureMessage(uptimeMicros: UInt64, failure: ConformanceFailure) async throws -> String {
        let (host, device) = InMemoryTransport.makePair()
        let fake = FakeDevice(transport: device, respond: RerunPolicyTests.fakeDevice(uptimeMicros: uptimeMicros))
        await fake.start()
        let testCase = ConformanceCase("waits-then-fails", "PROTOCOL.md §7", "fails after 400 ms") { _ in
            try await Task.sleep(for: .milliseconds(400))
            throw failure
        }
        let results = await ConformanceSuite.run([testCase], over: host)
        host.close()
        device.close()
        guard case .fail(let seen) = results[0].outcome else {
            Issue.record("the case did not fail: \(results[0].outcome)")
            return ""
        }
        return seen.message
    }

    @Test("an uptime shorter than the case: the failure says the device restarted during it")
    func restartNamed() async throws {
        let message = try await Self.failureMessage(
            uptimeMicros: 50_000, failure: ConformanceFailure("Ping was not answered", seen: nil))
        #expect(message.hasPrefix("Ping was not answered; the device restarted during the case: its uptime is 0.050 s"), "\(message)")
    }

    @Test("a device that ran all along, or a failure that saw an answer: no restart note")
    func noRestartNamed() async throws {
        let ranAlong = try await Self.failureMessage(
            uptimeMicros: 3_600_000_000, failure: ConformanceFailure("Ping was not answered", seen: nil))
        #expect(ranAlong == "Ping was not answered")
        // A failure showing what the device sent instead is about that answer: the device is not asked.
        let wrongAnswer = try await Self.failureMessage(
            uptimeMicros: 50_000, failure: ConformanceFailure("wrong status", seen: [0x02, 0x11, 0x00]))
        #expect(wrongAnswer == "wrong status")
    }
}
