import Foundation
import Testing

/// The quick start's first command: `camctl demo` starts the simulator itself, connects over its pty and
/// plays the tour. It must run to the end, show every layer, and leave nothing behind.
@Suite("camctl demo", .serialized)
struct DemoTests {
    @Test func theTourRunsEndToEndAndShowsEveryLayer() async throws {
        let seed = 50_000 + UInt64(getpid() % 10_000)  // to find the demo's own simulator afterwards
        let run = try await runTool("camctl", ["demo", "--seed", "\(seed)"], timeout: .seconds(90))
        let leftovers = simulatorProcesses(seed: seed)
        for pid in leftovers { signalProcess(pid, SIGKILL) }
        let out = run.standardOutput
        #expect(run.status == 0, "stderr: \(run.standardError)")
        #expect(leftovers.isEmpty, "camctl demo left camctl-sim running: \(leftovers)")
        // The handshake, then each layer: gestures, overlay and delegate, haptics, capture events.
        for text in [
            "device      CameraControl Simulator", "gesture  light-press-began camera-control",
            "gesture  double-light-press", "overlay  overlay-shown zoom", "overlay  picker-opened",
            "overlay  control-selected exposure-bias", "overlay  control-selected reactions",
            "delegate: controls did become active", "delegate: will exit fullscreen", "haptic   detent → device",
            "capture  began     secondary volume-up", "gesture  long-press-began",
        ] {
            #expect(out.contains(text), "the demo's output lacks '\(text)'")
        }
        // Every input source captured exactly as the tour presses them; nothing cancelled or invented.
        #expect(
            out.contains(
                "captures    6 ended (action-button 1, camera-control 2, remote 1, volume-down 1, volume-up 1), 0 cancelled"),
            "\(out.suffix(600))")
        #expect(out.contains("photos      6 taken"))
        #expect(!out.contains("reaction    none"), "the picker flow chose no reaction")
        #expect(!out.contains("exposure    +0.00 EV"), "the exposure slider did not move")
        #expect(out.contains("0 check errors"))
    }
}
