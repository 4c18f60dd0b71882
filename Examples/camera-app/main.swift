// `camera-app PORT`: the WWDC25 talk's camera app (Examples/CameraApp) on a Camera Control at PORT — a real
// prototype, the pty `camctl-sim` prints, or `camctl serve`'s socket. Prints what the app does, a line each,
// flushed at once: the device connected or lost, captures and the input that made each, photos, control
// actions, overlay delegate calls.
//
// A port that does not open (busy, missing), a device that does not answer or one gone for good (its
// pseudo-terminal closed) is reported in one line on stderr, with the exit status camctl uses (README, "Exit
// status"): 1 a runtime failure, 3 no answer. A device lost otherwise is waited for, and the app says so.
import CameraAppExample
import CameraControlControls
import CameraControlDevice
import CameraControlHost
import CameraControlPorts

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Prints `line` on stdout and flushes it (stdout may be a pipe or a file: each line is news at once).
func say(_ line: String) {
    print(line)
    fflush(nil)
}

/// Prints `message` on stderr as one line and exits with `status`.
func fail(_ message: String, status: Int32) -> Never {
    let line = Array("camera-app: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(status)
}

let usage = "usage: camera-app [PORT]   (default /dev/ttyACM0: a serial port, camctl-sim's pty or camctl serve's socket)"
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--help" || arguments.first == "-h" {
    say(usage)
    exit(0)
}
guard arguments.count <= 1, arguments.first?.hasPrefix("-") != true else { fail("unknown arguments; \(usage)", status: 2) }
let port = arguments.first ?? "/dev/ttyACM0"
let host: CameraControlHost
do {
    host = try await CameraControlHost.connect(to: port, hostName: "camera-app")
} catch {
    fail(error.message, status: error.isUnansweredHandshake ? 3 : 1)
}
say("device connected")
do {
    await host.observe { effect in
        switch effect {
        case .connected: say("device connected")
        // It waits for the device to come back at the same path (a serve that ended, an unplugged board):
        // say so, or a user sees an app that does nothing.
        case .deviceLost: say("device lost; waiting for \(port) to come back (Ctrl-C quits)")
        default: break
        }
    }
    let app = try CameraApp(executor: InlineExecutor(), soundPlayer: host) { event in say("\(event)") }
    await host.attach(app.interaction)
    app.install(in: try await host.makeControlsSession())
    await host.attachCamera(app.device, focusExposureLock: app.focusExposureLock)  // a light press held locks AE/AF
    app.interaction.setSessionRunning(true)
} catch {
    await host.stop()
    fail("\(error)", status: 1)
}
await host.run()
// run() returns when the device cannot come back (a pseudo-terminal whose simulator ended): one line, exit 1.
if let gone = await host.goneForGood { fail("the device is gone for good: \(gone.message)", status: 1) }
