// `camera-app PORT`: the WWDC25 talk's camera app (Examples/CameraApp) on a Camera Control at PORT — a real
// prototype, or the pty `camctl-sim` prints. Prints what the app does: captures and the input that made each,
// photos, control actions, overlay delegate calls.
import CameraAppExample
import CameraControlControls
import CameraControlHost

let port = CommandLine.arguments.dropFirst().first ?? "/dev/ttyACM0"
let host = try await CameraControlHost.connect(to: port, hostName: "camera-app")
let app = try CameraApp(executor: InlineExecutor(), soundPlayer: host) { event in print(event) }
await host.attach(app.interaction)
app.install(in: try await host.makeControlsSession())
await host.attachCamera(app.device, focusExposureLock: app.focusExposureLock)  // a light press held locks AE/AF
app.interaction.setSessionRunning(true)
await host.run()
