import CameraControlGestures
import CameraControlHost
import CameraControlTools
import Foundation
import Synchronization

/// `camctl serve PORT --launch CMD`: the system's part of the Camera Control (docs/CAPTURE.md, "Launch on
/// click"). It holds the device while no app has it; a click (or a double click) launches the camera app,
/// a click-and-hold its own action, and the program launched gets the device: `serve` lets the port go,
/// runs the command with `CAMCTL_PORT` set to the port, and takes the device back when the command exits.
///
/// Not yet: apps that attach to a running `serve` through a socket, several at once with Apple's foreground
/// rules (issue 23). Until then the program launched opens the port itself.
enum Serve {
    static let command = Command(
        name: "serve", summary: "hold the device for the system: a click launches the camera app, which then gets the device",
        usage: "PORT --launch CMD [--launch-on click|double-click] [--double-click-ms N] [--hold CMD] [--seconds N]",
        details: """
            While no program has the device, serve holds it. A Camera Control click launches CMD (with sh -c, and
            CAMCTL_PORT set to the port); serve lets the port go first and takes it back when CMD exits, so CMD
            (a camera app) opens it itself. Apple's Settings > Camera > Camera Control > Launch Camera.
              --launch CMD          the camera app
              --launch-on TRIGGER   click (default) or double-click: two clicks, the second ending within the window
              --double-click-ms N   the double-click window (default 400)
              --hold CMD            a click-and-hold runs CMD instead (iPhone: Visual Intelligence); without it a
                                    hold is a click
              --seconds N           stop after N seconds (default: run until Ctrl-C)
            """,
        examples: [
            "serve /dev/ttyACM0 --launch '.build/debug/camera-app \"$CAMCTL_PORT\"'",
            "serve auto --launch 'my-camera' --launch-on double-click --hold 'say hello'",
        ],
        run: run)

    static func run(_ argv: [String]) async throws {
        let args = try Arguments(
            argv, valued: ["launch", "launch-on", "double-click-ms", "hold", "seconds"], switches: [], positionals: ["PORT"])
        guard let camera = args.value("launch") else {
            throw Arguments.Failure(description: "serve needs --launch CMD (the camera app to launch on a click)")
        }
        let hold = args.value("hold")
        let triggerName = args.value("launch-on") ?? LaunchOnClick.Trigger.click.rawValue
        guard let trigger = LaunchOnClick.Trigger(rawValue: triggerName) else {
            throw Arguments.Failure(description: "--launch-on \(triggerName): expected click or double-click")
        }
        let window = try args.integer("double-click-ms", default: 400)
        guard (50...2000).contains(window) else {
            throw Arguments.Failure(description: "--double-click-ms \(window): expected 50 to 2000")
        }
        let seconds = try args.integer("seconds", default: 0)
        let end: ContinuousClock.Instant? = seconds > 0 ? .now + .seconds(seconds) : nil
        let rules = SharedRules(
            LaunchOnClick(trigger: trigger, doubleClickWindowMicros: UInt64(window) * 1000, holdHasAction: hold != nil))

        // The first connect must work (a typo in PORT is an error, not an endless retry).
        var (host, path) = try await Ports.connectHost(try args.required(0, "PORT"), hostName: "camctl serve")
        while true {
            print("serve: holding \(path); waiting for a click")
            let launch = await waitForLaunch(on: host, rules: rules, until: end)
            await host.stop()
            guard let launch else { return }  // --seconds passed
            let commandLine = launch == .hold ? hold ?? camera : camera
            print("serve: \(launch == .hold ? "hold" : "click") → launching `\(commandLine)` (the device is its own until it exits)")
            let status = await runCommand(commandLine, port: path)
            print("serve: `\(commandLine)` exited with status \(status); taking the device back")
            guard let next = await reacquire(path, until: end) else { return }
            host = next
        }
    }

    /// Waits for a press that launches something, or for `end`; the host runs meanwhile.
    private static func waitForLaunch(
        on host: CameraControlHost, rules: SharedRules, until end: ContinuousClock.Instant?
    ) async -> LaunchOnClick.Launch? {
        let (launches, continuation) = AsyncStream<LaunchOnClick.Launch>.makeStream()
        await host.observe { effect in
            switch effect {
            case .gesture(let gesture):
                if let launch = rules.state.withLock({ $0.take(gesture) }) { continuation.yield(launch) }
            case .deviceLost:
                rules.state.withLock { $0.reset() }
            default:
                break
            }
        }
        let timer = end.map { end in
            Task {
                try? await Task.sleep(until: end, clock: .continuous)
                continuation.finish()
            }
        }
        defer { timer?.cancel() }
        for await launch in launches {
            continuation.finish()
            return launch
        }
        return nil
    }

    /// Runs `commandLine` with `sh -c`, `CAMCTL_PORT` set to `port`, and returns its exit status (127 when
    /// it could not start).
    private static func runCommand(_ commandLine: String, port: String) async -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", commandLine]
        process.environment = ProcessInfo.processInfo.environment.merging(["CAMCTL_PORT": port]) { _, new in new }
        return await withCheckedContinuation { continuation in
            process.terminationHandler = { ended in continuation.resume(returning: ended.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                FileHandle.standardError.write(Data("camctl serve: cannot run /bin/sh: \(error)\n".utf8))
                continuation.resume(returning: 127)
            }
        }
    }

    /// Connects to `path` again, every 250 ms until it works or `end` passes (the device may have been
    /// unplugged while the program had it).
    private static func reacquire(_ path: String, until end: ContinuousClock.Instant?) async -> CameraControlHost? {
        var reported = false
        while end.map({ ContinuousClock.now < $0 }) ?? true {
            do {
                return try await Ports.connectHost(path, hostName: "camctl serve").host
            } catch {
                if !reported {
                    print("serve: \(path) does not answer yet (\(error)); trying again every 250 ms")
                    reported = true
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        return nil
    }
}

/// The launch rules, shared by the host's observer (on its loop) across sessions.
private final class SharedRules: Sendable {
    let state: Mutex<LaunchOnClick>
    init(_ rules: LaunchOnClick) { state = Mutex(rules) }
}
