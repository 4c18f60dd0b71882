import CameraAppExample
import CameraControlControls
import CameraControlDevice
import CameraControlGStreamer
import CameraControlHost
import CameraControlTools
import Foundation

/// `camctl shoot PORT --camera test|/dev/videoN [-o DIR]`: the WWDC25 talk's app (Examples/CameraApp) on a
/// real camera. The system zoom and exposure-bias sliders drive the camera, every button captures: a
/// click writes a JPEG (the frame of the press, with a sidecar JSON), a click and hold a video. Each
/// capture prints the file written. With `--scenario FILE` it plays a scenario through its own session
/// (on `camctl-sim`) and stops after it; otherwise it reconnects and runs until `--seconds` pass or Ctrl-C, or the
/// device is gone for good (a pseudo-terminal that closed: exit 1).
enum Shoot {
    static let command = Command(
        name: "shoot", summary: "the talk's camera app on a real camera (GStreamer): photos and videos",
        usage: "PORT [--camera test|/dev/videoN|libcamera] [-o DIR] [--scenario FILE] [--seconds N] [--width W --height H --fps F]",
        details: """
              --camera SOURCE  test (videotestsrc, the default), /dev/videoN (V4L2) or libcamera
              -o DIR           where photos (JPEG + sidecar JSON) and videos (.mkv) go (default: .)
              --scenario FILE  play a scenario through this session first (a simulator); stops after it
              --seconds N      stop after N seconds
            Without --scenario it reconnects after an unplug and runs until --seconds or Ctrl-C; a device that cannot
            come back (a pseudo-terminal whose simulator ended) ends it with one line and exit status 1.
            """,
        examples: [
            "shoot /dev/ttyACM0 --camera /dev/video0 -o Photos",
            "shoot /tmp/camctl0 --camera test -o /tmp/shots --scenario Firmware-sim/scenarios/full-click.scenario",
        ],
        run: run)

    static func run(_ argv: [String]) async throws {
        let argv = argv.map { $0 == "-o" ? "--output" : $0 }
        let args = try Arguments(
            argv, valued: ["camera", "output", "seconds", "scenario", "width", "height", "fps"], switches: ["quiet"])
        let port = try args.required(0, "PORT")
        // A source that is none of the forms is a usage error; one that cannot be opened, a runtime one.
        let source: CameraSource
        do {
            source = try CameraSource(parsing: args.value("camera") ?? "test")
        } catch {
            throw Arguments.Failure(description: "--camera: \(error.message)")
        }
        let directory = args.value("output") ?? "."
        let seconds = try args.seconds()
        // Checked offline first, as monitor and record do: a bad line is FILE:LINE:COLUMN with a caret.
        let scenario = try args.value("scenario").map { try ScenarioFiles.load($0) }
        let configuration = GStreamerCamera.Configuration(
            source: source, width: try args.integer("width", default: 640), height: try args.integer("height", default: 480),
            framesPerSecond: try args.integer("fps", default: 30), outputDirectory: directory)
        let camera = try GStreamerCamera(configuration: configuration)
        defer { camera.stop() }
        print(
            "camera \(source): \(configuration.width)×\(configuration.height) at \(configuration.framesPerSecond) fps, zoom "
                + String(
                    format: "%.0f–%.0f× (%@), ", camera.zoomFactorRange.lowerBound, camera.zoomFactorRange.upperBound,
                    camera.hasOpticalZoom ? "V4L2" : "digital")
                + String(
                    format: "EV %+.1f…%+.1f (%@) → %@", camera.exposureBiasRange.lowerBound, camera.exposureBiasRange.upperBound,
                    camera.hasDeviceExposureBias ? "V4L2" : "digital gain", directory))

        let host = try await CameraControlHost.connect(
            to: port, hostName: "camctl shoot", configuration: .init(reconnects: scenario == nil))
        // Set when shoot stops the host itself: a device lost before then (the scenario not over) is a failure.
        let stopping = StopFlag()
        @Sendable func stop() async {
            stopping.value.withLock { $0 = true }
            await host.stop()
        }
        if let info = await host.deviceInfo { print(info.summary) }
        let printer = EventPrinter(quiet: args.flag("quiet"), verbose: false)
        printer.offsetSource = { host.clockOffsetMicros }
        let app = try CameraApp(
            device: camera, executor: InlineExecutor(), soundPlayer: host,
            hostMicros: { device in host.clockOffsetMicros.map { UInt64(clamping: Int64(bitPattern: device) + $0) } }
        ) { event in
            if case .photo(let photo, _) = event {
                print(describe(photo))
            } else {
                printer.app(event)
            }
        }
        printer.watch(app.interaction)
        await host.attach(app.interaction)
        app.install(in: try await host.makeControlsSession())
        app.interaction.setSessionRunning(true)

        var scenarioEnd: ScenarioFiles.ScenarioEnd?
        // When the scenario has surely been played (its duration and the listening after it, on this clock).
        var playedBy: ContinuousClock.Instant?
        if let scenario, let session = await host.session {
            let played = try await ScenarioFiles.play(scenario, file: args.value("scenario") ?? "", on: session)
            printer.note(String(format: "scenario: %u steps, %.1f s", played.steps, Double(played.durationMicros) / 1e6))
            if seconds == 0 { scenarioEnd = (session, UInt64(played.durationMicros)) }
            playedBy = .now + .microseconds(Int64(played.durationMicros + ScenarioFiles.listenAfterScenarioMicros))
        }
        ScenarioFiles.stop(afterSeconds: seconds, orAfter: scenarioEnd, by: stop)
        await host.run()
        camera.waitForWrites()  // the captures of presses that ended are written off the host's loop
        let count = camera.captureCount
        print("\(count) \(count == 1 ? "capture" : "captures") written to \(directory) (each a picture or video and its .json)")
        if let failure = camera.failure, !failure.message.hasSuffix("was stopped") { throw failure }
        // Without --scenario the host reconnects; it ends on its own only when the device cannot come back (a
        // pseudo-terminal that closed): a failure, never a quiet success (README, "Exit status": 1).
        if !stopping.value.withLock({ $0 }), let gone = await host.goneForGood {
            throw CLIFailure(
                status: .failure, message: "the device is gone for good (\(count) written; no more captures): \(gone.message)")
        }
        // Without --scenario the host reconnects and run() returns only when stopped (or gone for good, above);
        // with it, a session lost before the scenario ended is a failure (its later captures never came), not a
        // success. One lost well after it (`--seconds` longer than the scenario) lost nothing.
        if scenario != nil, !stopping.value.withLock({ $0 }), ContinuousClock.now < playedBy ?? .now + .seconds(1),
            let lost = await host.lastDisconnect
        {
            // One line (README, "Exit status": 1): the captures after the loss are missing.
            throw CLIFailure(
                status: .failure,
                message: "the device went away before the scenario ended (\(count) written; later captures are missing): \(lost)")
        }
    }

    /// `photo PATH (zoom Z×, E EV, shutter lag L ms)`.
    static func describe(_ photo: CapturedPhoto) -> String {
        var text = "\(photo.isVideo ? "video" : "photo") \(photo.path ?? "?")"
        text += String(format: " (zoom %.2f×, %+.2f EV", photo.zoomFactor, photo.exposureBias)
        if let frame = photo.frameHostMicros, let press = photo.pressHostMicros {
            let lag = Double(Int64(bitPattern: frame) - Int64(bitPattern: press)) / 1000
            text += String(format: ", shutter lag %+.1f ms", lag)
        }
        return text + ")"
    }
}
