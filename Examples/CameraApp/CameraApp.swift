import CameraControlCapture
import CameraControlControls
import CameraControlWire
import Dispatch
import Synchronization

/// The camera app of Apple's WWDC25 talk "Enhance your app with the Camera Control", on a
/// ``SyntheticCamera``, written only against this package's public API: a zoom slider and an
/// exposure-bias slider (the system ones, driving the camera), a "Reactions" index picker, and a capture
/// interaction on every button that takes a photo on each `ended` (a video for a click and hold, when the
/// camera records: ``SyntheticCamera`` and `GStreamerCamera` do).
///
/// ```swift
/// import CameraAppExample
/// import CameraControlHost
///
/// let host = try await CameraControlHost.connect(to: "/dev/ttyACM0")
/// let app = try CameraApp { event in print(event) }
/// await host.attach(app.interaction)
/// _ = try app.install(in: await host.makeControlsSession())
/// await host.attachCamera(app.device, focusExposureLock: app.focusExposureLock)
/// await host.run()
/// ```
///
/// `camctl demo` runs this app against the simulator; the virtual-time rig of CameraControlSimulation runs
/// it too.
public final class CameraApp: Sendable {
    /// Something the app did, for its log.
    public enum Event: Sendable, CustomStringConvertible {
        /// A capture event reached a handler (`role`: primary or secondary).
        case capture(CaptureEvent, CaptureHandlerRole)
        /// A photo (or a video: ``CapturedPhoto/isVideo``) was taken for a capture `ended`.
        case photo(CapturedPhoto, CaptureEvent)
        /// The camera could not handle a capture event (it is gone, or a file could not be written).
        case cameraFailed(ControlError, CaptureEvent)
        /// A control's action ran with this value (the slider's value, or the picker's index).
        case action(ControlID, Double)
        /// The controls delegate was called: `did-become-active`, `will-enter-fullscreen`,
        /// `will-exit-fullscreen` or `did-become-inactive`.
        case delegate(String)
        /// The app hid its own on-screen controls (shutter button, mode switch) for the overlay's clean
        /// preview (`false`), or showed them again (`true`).
        case ownControls(visible: Bool)

        /// One line.
        public var description: String {
            switch self {
            case .capture(let event, let role): "capture \(event.phase.rawValue) \(role.rawValue) \(event.source)"
            case .photo(let photo, _):
                "\(photo.isVideo ? "video" : "photo") \(photo.sequenceNumber) zoom \(photo.zoomFactor) bias \(photo.exposureBias)"
                    + (photo.focusExposureLock.isEmpty ? "" : " \(photo.focusExposureLock) locked")
                    + (photo.path.map { " → \($0)" } ?? "")
            case .cameraFailed(let error, let event): "camera failed \(event.id) \(event.phase.rawValue): \(error)"
            case .action(let id, let value): "action \(id) \(value)"
            case .delegate(let call): "delegate \(call)"
            case .ownControls(let visible): visible ? "ui own controls shown" : "ui own controls hidden (clean preview)"
            }
        }
    }

    /// The tour `camctl demo` plays on the simulator (docs/SIMULATOR.md for the format): the talk's app,
    /// then every input source, with the `expect` lines `camctl test` checks (the device never sees them).
    /// `Firmware-sim/scenarios/demo.scenario` is the same text (a test keeps them equal).
    public static let demoScenario = """
        # camctl demo: the seed talk's app, then every input source.
        seed 42
        # Zoom: a light press shows the overlay with the active control (zoom); a slide zooms in
        # (through the 2x detent) and holds still, so it stops where it is.
        touch at=0.25 hold=60ms
        light-press force=1200mN hold=150ms
        expect overlay overlay-shown zoom within 0ms
        slide to=0.75 over=500ms
        expect overlay entered-fullscreen
        expect overlay value zoom 2.0±0.01 within 0ms
        hold 350ms
        release
        pause 400ms
        # Exposure: a double light press opens the control picker, a slide moves one entry on,
        # a light press confirms, a slide adjusts it in 1/3 EV detents.
        touch at=0.3 hold=60ms
        double-light-press force=1200mN gap=150ms
        expect gesture double-light-press within 0ms
        slide to=0.55 over=300ms
        expect overlay picker-moved 1 within 0ms
        hold 100ms
        light-press force=1300mN hold=120ms
        expect overlay control-selected exposure-bias within 0ms
        slide to=0.78 over=400ms
        expect overlay value exposure-bias 0.667±0.01 within 0ms
        hold 350ms
        release
        pause 400ms
        # Reactions: the picker again, one entry on (and against the end of the list), confirm,
        # choose a reaction.
        touch at=0.3 hold=60ms
        double-light-press force=1200mN gap=150ms
        expect gesture double-light-press within 0ms
        slide to=0.55 over=300ms
        expect overlay picker-moved 2 within 0ms
        hold 100ms
        light-press force=1300mN hold=120ms
        expect overlay control-selected reactions within 0ms
        slide to=0.95 over=500ms
        expect overlay value reactions * slider within 0ms
        hold 350ms
        release
        pause 300ms
        # A full click is the shutter, whatever the overlay shows.
        full-click
        expect capture ended primary camera-control within 30ms
        expect photo 1 zoom 2.7±0.2
        pause 400ms
        # AE/AF lock: a light press held frames and locks focus and exposure, the full press
        # shoots with the lock, letting go unlocks (the app asks for the lock).
        touch at=0.5 hold=60ms
        force 1200mN over=50ms
        hold 500ms
        force 3500mN over=50ms
        hold 80ms
        force 1200mN over=40ms
        hold 100ms
        release
        pause 400ms
        # Click and hold: a long press (video in a camera app).
        click-and-hold 1s
        expect gesture long-press-began camera-control
        expect capture ended primary camera-control within 30ms
        pause 400ms
        # The other inputs: volume up (secondary), volume down held, the action button, a remote click.
        button volume-up
        expect capture ended secondary volume-up within 20ms
        pause 250ms
        button volume-down hold=600ms
        expect gesture long-press-began volume-down
        pause 250ms
        button action
        expect capture ended primary action-button within 20ms
        pause 250ms
        remote-click
        expect capture ended primary remote within 20ms
        pause 300ms
        expect no capture began for 0ms
        expect counter check_errors 0
        """

    /// The reactions the picker offers, in index order.
    public static let reactionTitles = ["none", "hearts", "balloons", "confetti", "fireworks", "lasers"]

    /// The formats of the app's synthetic camera (``SyntheticCamera/setActiveFormat(_:)``; a scenario's
    /// `host format NAME`): `wide` (active first: zoom 1–10×, ±8 EV, 2× and 5× prominent), `tele` (3–15×,
    /// ±4 EV, 5× and 10× prominent) and `fixed` (a fixed lens without exposure bias: both system sliders
    /// disabled).
    public static let cameraFormats = [
        CameraFormat(name: "wide", zoomFactorRange: 1...10, exposureBiasRange: -8...8, prominentZoomFactors: [2, 5]),
        CameraFormat(name: "tele", zoomFactorRange: 3...15, exposureBiasRange: -4...4, prominentZoomFactors: [5, 10]),
        CameraFormat(name: "fixed", zoomFactorRange: nil, exposureBiasRange: nil),
    ]

    /// The camera the system sliders drive and photos are taken with (a ``SyntheticCamera`` unless the app
    /// was made with ``init(device:executor:clock:soundPlayer:hostMicros:focusExposureLock:log:)``).
    public let device: any CameraDevice
    /// The app's synthetic camera: ``device`` when it is one (the default), else an unused synthetic camera
    /// (use ``device``).
    public let camera: SyntheticCamera
    /// Capture events from every button: volume down, the action button, a Camera Control full click and a
    /// remote click to the primary handler, volume up to the secondary one. Each `ended` takes a photo.
    public let interaction: CaptureEventInteraction
    /// The system zoom slider.
    public let zoom: SystemZoomSlider
    /// The system exposure-bias slider.
    public let exposure: SystemExposureBiasSlider
    /// The "Reactions" picker.
    public let reactions: CaptureIndexPicker
    /// The app's override of the host's AE/AF lock setting, for
    /// `CameraControlHost.attachCamera(_:focusExposureLock:)`: true (this app wants a light press held to
    /// lock focus and exposure, like a half-pressed shutter), false (never), nil (follow the host).
    public let focusExposureLock: Bool?
    private let delegate: Delegate

    /// The app, calling `log` with everything it does. Actions and the delegate run on `executor`; capture
    /// handlers run as the host delivers them; `clock` stamps capture events (virtual time in tests).
    ///
    /// - Throws: ``ControlError`` when a control cannot be made.
    public convenience init(
        executor: any ActionExecutor = DispatchQueue.main, clock: CaptureClock = .continuous,
        soundPlayer: (any CaptureSoundPlaying)? = nil, focusExposureLock: Bool? = true,
        log: @escaping @Sendable (Event) -> Void
    ) throws(ControlError) {
        try self.init(
            device: try SyntheticCamera(formats: Self.cameraFormats), executor: executor, clock: clock, soundPlayer: soundPlayer,
            focusExposureLock: focusExposureLock, log: log)
    }

    /// The app on `device` (a real camera: CameraControlGStreamer's `GStreamerCamera`, say). Every capture
    /// event goes to ``CameraDevice/capture(_:hostMicros:completion:)`` (a camera that writes slowly writes
    /// off the host's event loop, and the photo is logged when written) with its device timestamp mapped onto the host
    /// clock by `hostMicros` (for example `{ host.clockOffsetMicros.map { offset in UInt64(Int64($0) + offset) } }`
    /// with ``CameraControlHost``), so the camera can save the frame of the press; a camera that fails is
    /// logged as ``Event/cameraFailed(_:_:)``.
    ///
    /// - Throws: ``ControlError`` when a control cannot be made (a range the sliders cannot use).
    public init(
        device: any CameraDevice, executor: any ActionExecutor = DispatchQueue.main, clock: CaptureClock = .continuous,
        soundPlayer: (any CaptureSoundPlaying)? = nil, hostMicros: (@Sendable (UInt64) -> UInt64?)? = nil,
        focusExposureLock: Bool? = true, log: @escaping @Sendable (Event) -> Void
    ) throws(ControlError) {
        self.device = device
        self.focusExposureLock = focusExposureLock
        if let synthetic = device as? SyntheticCamera {
            camera = synthetic
        } else {
            camera = try SyntheticCamera(uniqueID: "unused-synthetic-camera")
        }
        let handler: @Sendable (CaptureEvent, CaptureHandlerRole) -> Void = { event, role in
            log(.capture(event, role))
            // Capture on `ended`, as Apple's API asks (the camera sees `began` too, to prepare). The handler
            // runs on the host's event loop: a camera that writes slowly writes off it and logs the photo later
            // (CameraDevice.capture(_:hostMicros:completion:)).
            device.capture(event, hostMicros: hostMicros?(event.deviceTimestampMicros)) { result in
                switch result {
                case .success(let photo): if let photo { log(.photo(photo, event)) }
                case .failure(let error): log(.cameraFailed(error, event))
                }
            }
        }
        interaction = CaptureEventInteraction(
            soundPlayer: soundPlayer, clock: clock,
            primary: { handler($0, .primary) }, secondary: { handler($0, .secondary) })
        zoom = try SystemZoomSlider(device: device, executor: executor) { log(.action("zoom", $0)) }
        exposure = try SystemExposureBiasSlider(device: device, executor: executor) { log(.action("exposure-bias", $0)) }
        reactions = try CaptureIndexPicker(
            "Reactions", symbolName: "face.smiling.inverted", localizedIndexTitles: Self.reactionTitles)
        reactions.setActionQueue(executor) { log(.action("reactions", Double($0))) }
        delegate = Delegate(log: log)
        delegateExecutor = executor
    }

    private let delegateExecutor: any ActionExecutor

    /// Adds the app's controls to `session` (each only if ``CaptureControlsSession/canAddControl(_:)``
    /// says so, as the talk does) and sets the app as its delegate. Returns the refusals, if any.
    @discardableResult
    public func install(in session: CaptureControlsSession) -> [(ControlID, ControlError)] {
        var refusals: [(ControlID, ControlError)] = []
        for control in [zoom, exposure, reactions] as [any CaptureControl] {
            if let refusal = session.refusal(toAdd: control) {
                refusals.append((control.id, refusal))
            } else {
                try? session.addControl(control)
            }
        }
        session.setControlsDelegate(delegate, executor: delegateExecutor)
        return refusals
    }

    /// True while the app shows its own on-screen controls: false from the overlay's
    /// `will-enter-fullscreen` (a confirmed light press: the clean preview) to its `will-exit-fullscreen`.
    public var areOwnControlsVisible: Bool { delegate.ownControlsVisible.load(ordering: .acquiring) }

    /// The reaction chosen last.
    public var selectedReaction: String { Self.reactionTitles[max(0, min(reactions.selectedIndex, Self.reactionTitles.count - 1))] }

    /// The app's controls delegate.
    /// Hides the app's own controls for the fullscreen appearance and shows them after it, as Apple's
    /// `sessionControlsWillEnterFullscreenAppearance` asks (duplicate UI hidden, the preview unobstructed).
    private final class Delegate: CaptureControlsDelegate {
        let log: @Sendable (Event) -> Void
        let ownControlsVisible = Atomic(true)
        init(log: @escaping @Sendable (Event) -> Void) { self.log = log }
        func sessionControlsDidBecomeActive(_ session: CaptureControlsSession) { log(.delegate("did-become-active")) }
        func sessionControlsWillEnterFullscreenAppearance(_ session: CaptureControlsSession) {
            log(.delegate("will-enter-fullscreen"))
            ownControlsVisible.store(false, ordering: .releasing)
            log(.ownControls(visible: false))
        }
        func sessionControlsWillExitFullscreenAppearance(_ session: CaptureControlsSession) {
            log(.delegate("will-exit-fullscreen"))
            ownControlsVisible.store(true, ordering: .releasing)
            log(.ownControls(visible: true))
        }
        func sessionControlsDidBecomeInactive(_ session: CaptureControlsSession) { log(.delegate("did-become-inactive")) }
    }
}
