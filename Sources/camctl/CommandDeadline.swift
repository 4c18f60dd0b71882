import CameraControlTools
import Foundation
import Synchronization

/// `--seconds N` counted from the command's start, whatever it is doing then: once the command has a
/// session it hands over how to stop it (``onExpiry(_:)``), and the deadline stops it. A deadline that
/// comes while the command is still connecting leaves the first handshake its own time (``handshakeTime``:
/// a handshake that fails reports itself, with its hint) and then ends the command with "no answer"
/// (exit 3): a device that answered the handshake, then nothing since, no longer keeps it waiting.
final class CommandDeadline: Sendable {
    private let stopAction = Mutex<(@Sendable () async -> Void)?>(nil)
    /// Whether a deadline was given (`--seconds` above 0).
    let isSet: Bool

    /// How long a first handshake may take before it fails on its own (``DeviceSession``'s `connect`
    /// gives up after 3 s), with room for a loaded machine.
    static let handshakeTime = Duration.seconds(5)

    /// Starts counting `seconds` (0: no deadline) for `command`.
    init(seconds: Int, command: String) {
        isSet = seconds > 0
        guard isSet else { return }
        let start = ContinuousClock.now
        Task { [self] in
            try? await Task.sleep(until: start + .seconds(seconds), clock: .continuous)
            if let stop = self.stopAction.withLock({ $0 }) {
                await stop()
                return
            }
            try? await Task.sleep(until: start + Self.handshakeTime, clock: .continuous)
            if let stop = self.stopAction.withLock({ $0 }) {
                await stop()
                return
            }
            let failure = CLIFailure(
                status: .noAnswer, message: "\(seconds) s passed and the device has not finished connecting",
                hint: "it answered the handshake, then went quiet: is it busy or stuck? Reset it, or try `camctl ping PORT`")
            StandardStreams.error("camctl \(command): \(failure)")
            exit(failure.status.rawValue)
        }
    }

    /// How to stop the command once it runs (called at the deadline, or at once if it has passed).
    func onExpiry(_ stop: @escaping @Sendable () async -> Void) {
        stopAction.withLock { $0 = stop }
    }
}
