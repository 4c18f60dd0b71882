import Foundation
import Synchronization

/// `--seconds N` counted from the command's start, whatever it is doing then: once the command has a
/// session it hands over how to stop it (``onExpiry(_:)``), and the deadline stops it; a deadline that
/// comes while the command is still connecting (a device that answered the handshake, then went quiet)
/// ends the command with "no answer" (exit 3) instead of waiting on.
final class CommandDeadline: Sendable {
    private let stopAction = Mutex<(@Sendable () async -> Void)?>(nil)
    /// Whether a deadline was given (`--seconds` above 0).
    let isSet: Bool

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
            let failure = CLIFailure(
                status: .noAnswer, message: "\(seconds) s passed and the device has not finished connecting",
                hint: "it answered the handshake, then went quiet: is it busy or stuck? Reset it, or try `camctl ping PORT`")
            FileHandle.standardError.write(Data("camctl \(command): \(failure)\n".utf8))
            exit(failure.status.rawValue)
        }
    }

    /// How to stop the command once it runs (called at the deadline, or at once if it has passed).
    func onExpiry(_ stop: @escaping @Sendable () async -> Void) {
        stopAction.withLock { $0 = stop }
    }
}
