import CameraControlDevice
import CameraControlLivePage
import Synchronization
import Testing

@testable import camctl

/// The page's virtual-control player (`VirtualControlPlayer`): a step it answers 204 is played, never
/// dropped; past `maxWaitingSteps` steps waiting, a step is answered 409 instead.
@Suite("camctl: the page's virtual-control player")
struct VirtualControlPlayerTests {
    /// The player's session source: held shut until opened, then counting each step it is asked for.
    final class Sessions: Sendable {
        let isOpen = Mutex(false)
        let asked = Mutex(0)

        func session() async -> DeviceSession? {
            while !isOpen.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
            asked.withLock { $0 += 1 }
            return nil
        }
    }

    @Test("a burst past the bound is refused with why, and every step accepted is taken")
    func burstPastTheBound() async throws {
        let isSimulator = SharedFlag()
        isSimulator.value.withLock { $0 = true }
        let sessions = Sessions()
        let player = VirtualControlPlayer(isSimulator: isSimulator, session: { await sessions.session() })
        let step = try #require(VirtualControlStep("release"))
        var accepted = 0
        var refusal: String?
        for _ in 0..<(VirtualControlPlayer.maxWaitingSteps + 50) {
            switch player.take(step) {
            case .accepted: accepted += 1
            case .unavailable(let why): refusal = refusal ?? why
            case .invalid(let why): Issue.record("a valid step refused: \(why)")
            }
        }
        // The player's task may have taken the first step before it blocked on the session: one more fits.
        #expect(accepted >= VirtualControlPlayer.maxWaitingSteps)
        #expect(accepted <= VirtualControlPlayer.maxWaitingSteps + 1)
        #expect(refusal?.contains("wait to be played") == true)

        sessions.isOpen.withLock { $0 = true }
        // Every accepted step reaches the player's task (none dropped); the deadline only stops a hang.
        let end = ContinuousClock.now + .seconds(60)
        while sessions.asked.withLock({ $0 }) < accepted, ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(sessions.asked.withLock { $0 } == accepted)
        // With the queue drained, steps are taken again.
        #expect(player.take(step) == .accepted)
        withExtendedLifetime(player) {}
    }
}
