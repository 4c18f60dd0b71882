import CameraAppExample
import CameraControlCapture
import CameraControlControls
import CameraControlEmbedded
import CameraControlGestures
import CameraControlHost
import CameraControlRPC
import CameraControlWire
import Synchronization

/// Why a ``VirtualControlsRig`` could not be set up.
public enum VirtualControlsRigError: Error, Sendable {
    /// The handshake or the input stream failed.
    case link(RPCError)
    /// The controls session or a control refused its configuration.
    case controls(ControlError)
    /// The handshake's response carried no `Capabilities`.
    case missingCapabilities
}

/// The example camera app (``CameraApp``: the WWDC25 talk's zoom and exposure-bias sliders, the
/// "Reactions" picker, capture on every button, on a ``SyntheticCamera``) over the real firmware, in
/// virtual time: a ``VirtualCaptureRig`` (C firmware, simulated finger, host connection, ``HostCore``)
/// with a ``CaptureControlsSession`` sized from the handshake's `Capabilities` (`supports_controls`,
/// `max_controls`) attached to the core.
///
/// Each `.haptic` effect is sent to the firmware as a real `FeedbackService/PlayHaptic` call over the
/// ``VirtualLink`` (started without waiting; later steps carry it). Actions, value observers and the
/// controls delegate run on one ``ManualExecutor`` that the rig drains after every effect, so everything
/// is deterministic.
///
/// Everything that happens is written to ``log``, one line each, in order, stamped with the virtual time
/// in milliseconds (see ``log`` for the line format):
///
/// ```swift
/// let rig = try VirtualControlsRig(seed: 7)
/// try rig.play(scenario: "light-press\nslide to=0.8\n")
/// rig.runUntilScenarioEnds()
/// print(rig.logText)
/// ```
public final class VirtualControlsRig {
    /// A PlayHaptic call the host made for an overlay `.haptic` effect.
    public struct HapticRequest: Sendable {
        /// The pattern asked for.
        public var haptic: HapticPattern
        /// Device time of the gesture sample (or momentum frame) that caused it (the effect's `atMicros`).
        public var causeMicros: UInt64
        /// Virtual time at which the host started the call.
        public var sentAtMicros: UInt64
        /// The call, or nil when it could not start.
        public var call: CallID?
        /// How it ended: nil while in flight, `.some(nil)` for OK, `.some(error)` otherwise.
        public var outcome: RPCError??
    }

    /// The whole capture stack under the controls.
    public let captureRig: VirtualCaptureRig
    /// The app.
    public let app: CameraApp
    /// The camera the system sliders drive and photos are taken with.
    public var camera: SyntheticCamera { app.camera }
    /// The controls half of the capture session.
    public let session: CaptureControlsSession
    /// The system zoom slider (id `zoom`).
    public var zoom: SystemZoomSlider { app.zoom }
    /// The system exposure-bias slider (id `exposure-bias`).
    public var exposure: SystemExposureBiasSlider { app.exposure }
    /// The "Reactions" picker (id `reactions`).
    public var reactions: CaptureIndexPicker { app.reactions }
    /// The capabilities the device reported in the handshake.
    public let capabilities: Capabilities
    /// Where actions, observers and the delegate run; drained by the rig after each effect.
    public let executor: ManualExecutor

    /// The reactions the picker offers, in index order.
    public static var reactionTitles: [String] { CameraApp.reactionTitles }

    /// Every PlayHaptic call the host made, in order.
    public private(set) var hapticRequests: [HapticRequest] = []
    /// Every overlay effect, with the device time of the gesture sample (or `advance`) that produced it.
    public private(set) var effects: [(effect: OverlayEffect, causeMicros: UInt64)] = []
    /// Every feedback the firmware started (the rig drains the device's bounded `feedbackLog` into this
    /// list as it goes, so nothing is lost to the device log's capacity).
    public private(set) var firmwareFeedback: [FeedbackRecord] = []

    private let recorder: Recorder
    private var lastCauseMicros: UInt64 = 0

    /// Boots a device with `seed`, connects (handshake, event stream, capture session running), builds the
    /// controls session from the handshake's capabilities and installs the app (each control only if
    /// ``CaptureControlsSession/canAddControl(_:)`` says so, as the talk does; a refusal is logged).
    ///
    /// - Parameters:
    ///   - reactionsEnabled: the picker's `isEnabled` (the talk sets it from `canPerformReactionEffects`).
    ///   - overlay: the overlay's tuning.
    ///   - focusExposureLock: the host's AE/AF lock setting (off by default, as Apple's). The app's camera
    ///     is attached with the app's override (``CameraApp/focusExposureLock``: on), which wins.
    ///   - camera: the app's camera (default: a ``SyntheticCamera`` with the example app's formats, `CameraApp.cameraFormats`).
    /// - Throws: ``VirtualControlsRigError``.
    public init(
        seed: UInt64 = 1, reactionsEnabled: Bool = true, overlay: OverlayConfiguration = OverlayConfiguration(),
        focusExposureLock: Bool = false, camera: SyntheticCamera? = nil
    )
        throws(VirtualControlsRigError)
    {
        captureRig = VirtualCaptureRig(seed: seed, host: HostCore.Configuration(focusExposureLockEnabled: focusExposureLock))
        let recorder = Recorder()
        self.recorder = recorder
        let executor = ManualExecutor()
        self.executor = executor
        do throws(ControlError) {
            let device: SyntheticCamera
            if let camera { device = camera } else { device = try SyntheticCamera(formats: CameraApp.cameraFormats) }
            app = try CameraApp(device: device, executor: executor, clock: captureRig.captureClock) { event in
                recorder.add(Self.describe(event))
            }
        } catch {
            throw .controls(error)
        }
        captureRig.replaceInteraction(app.interaction) { output in
            switch output {
            case .event: break  // the app logs what its handlers get
            case .defaultAction(let event):
                recorder.add("default-action \(event.action) \(event.phase.rawValue) \(event.source)")
            case .defaultSound(let sound, _):
                recorder.add("default-sound \(sound)")
            }
        }
        app.reactions.isEnabled = reactionsEnabled
        app.zoom.observeValueChanges(on: executor) { change in
            recorder.add("value \(change.controlID) \(Self.number(change.value)) \(change.origin)")
        }
        app.exposure.observeValueChanges(on: executor) { change in
            recorder.add("value \(change.controlID) \(Self.number(change.value)) \(change.origin)")
        }
        app.reactions.observeValueChanges(on: executor) { change in
            recorder.add("value \(change.controlID) #\(change.value) \(change.origin)")
        }

        let handshake: HandshakeResponse
        do {
            handshake = try captureRig.connect()
        } catch {
            throw .link(error)
        }
        guard let capabilities = handshake.capabilities else { throw .missingCapabilities }
        self.capabilities = capabilities
        captureRig.link.adoptSession(capabilities)
        do {
            session = try CaptureControlsSession(
                capabilities: ControlsCapabilities(capabilities),
                configuration: overlay)
        } catch {
            throw .controls(error)
        }
        captureRig.core.attach(session)
        captureRig.core.attachCamera(app.device, focusExposureLock: app.focusExposureLock)
        for (id, refusal) in app.install(in: session) {
            recorder.add("refused \(id) \(refusal.code)")
        }
        recorder.setTime(nowMicros)
        executor.runAll()

        captureRig.onEffect = { [unowned self] effect in self.handle(effect) }
        captureRig.onStep = { [unowned self] now in self.step(now: now) }
    }

    // MARK: Driving

    /// The firmware device.
    public var device: EmbeddedDevice { captureRig.device }
    /// The host link.
    public var link: VirtualLink { captureRig.link }
    /// Virtual time, microseconds (device time).
    public var nowMicros: UInt64 { captureRig.link.nowMicros }

    /// Plays a simulator scenario on the device (docs/SIMULATOR.md).
    ///
    /// - Throws: ``ScenarioError`` when the text does not parse.
    public func play(scenario: String) throws(ScenarioError) {
        try captureRig.device.play(scenario: scenario)
    }

    /// Plays a scenario the way `camctl demo` does: a `SimulatorService/RunScenario` call over the link
    /// (so the text must fit one request frame), stepping the whole stack until the device answers.
    ///
    /// - Throws: ``RPCError`` as the device answers (`INVALID_ARGUMENT` with `line N: message` for a
    ///   scenario that does not parse, `RESOURCE_EXHAUSTED` for one that does not fit a frame), or
    ///   `DEADLINE_EXCEEDED` when no answer came within `deadlineMicros`.
    @discardableResult
    public func runScenarioOverLink(
        _ scenario: String, deadlineMicros: UInt64 = 1_000_000
    ) throws(RPCError)
        -> RunScenarioResponse
    {
        let method = MethodID.simulatorRunScenario
        let call = try link.startUnaryCall(method, RunScenarioRequest(scenario: scenario), deadlineMicros: deadlineMicros)
        let end = nowMicros + deadlineMicros + 1_000_000
        while nowMicros < end {
            captureRig.step()
            guard let result = link.takeUnaryResult(call) else { continue }
            let bytes = try result.get()
            do {
                return try RunScenarioResponse(serializedBytes: bytes)
            } catch {
                throw RPCError(code: .internal, message: "response does not decode: \(error)", method: method, cause: error)
            }
        }
        throw RPCError(code: .deadlineExceeded, message: "RunScenario never ended", method: method)
    }

    /// Steps the whole stack for `micros` of virtual time.
    public func run(forMicros micros: UInt64) {
        captureRig.run(forMicros: micros)
    }

    /// Runs until the scenario ended, then `settleMicros` more (default 2.6 s: long enough for the overlay
    /// to dismiss itself after the last touch, so a log always ends with the overlay hidden).
    public func runUntilScenarioEnds(settleMicros: UInt64 = 2_600_000, timeoutMicros: UInt64 = 120_000_000) {
        captureRig.runUntilScenarioEnds(settleMicros: settleMicros, timeoutMicros: timeoutMicros)
    }

    /// Takes a scenario's `host` step now (``ScenarioHostStep``), logged as its line (`host format tele`): the
    /// host core's interface orientation, or the camera's active format (the system sliders re-range).
    ///
    /// - Throws: ``ControlError`` `indexOutOfRange` when the camera has no format of that name.
    public func apply(_ step: ScenarioHostStep) throws(ControlError) {
        recorder.setTime(nowMicros)
        recorder.add(step.description)
        switch step.action {
        case .orientation(let orientation):
            captureRig.core.interfaceOrientation = orientation
        case .format(let name):
            guard let index = camera.formats.firstIndex(where: { $0.name == name }) else {
                throw ControlError(.indexOutOfRange, "the camera has no format \(name)")
            }
            try camera.setActiveFormat(index)
        }
        executor.runAll()
    }

    /// A zoom change from outside the controls (a pinch on the preview): the slider follows it with origin
    /// `external` and its action does not run. Logged as `pinch <factor>`.
    ///
    /// - Throws: ``ControlError`` when the camera refuses the factor.
    public func pinch(toZoomFactor factor: Double) throws(ControlError) {
        recorder.setTime(nowMicros)
        recorder.add("pinch \(Self.number(factor))")
        try camera.pinch(toZoomFactor: factor)
        executor.runAll()
    }

    // MARK: The log

    /// One line per thing that happened, in order: `<ms, right-aligned to 6> ms <what>`, where `<what>` is
    ///
    /// - `gesture <kind> <source>` (slides add `at=<position>`; `press-ended` adds its duration and
    ///   whether it was a long press),
    /// - `overlay <effect>` (``OverlayEffect/description``, except value changes and haptics),
    /// - `haptic <pattern> sent` (a PlayHaptic call started) or `haptic <pattern> failed <code>`,
    /// - `firmware-haptic <pattern>`, `firmware-sound <n>`, `firmware-indicator <mode>` (what the firmware
    ///   started, stamped with the firmware's own time),
    /// - `delegate did-become-active|will-enter-fullscreen|will-exit-fullscreen|did-become-inactive`,
    /// - `value <control> <value> <slider|programmatic|external>` (observers), `action <control> <value>`,
    /// - `capture <phase> <role> <source>`, `default-action <action> <phase> <source>`, `default-sound
    ///   <sound>`, `photo <n> zoom <factor> bias <EV>`, `pinch <factor>`, `refused <control> <code>`.
    ///
    /// Numbers have at most three decimals.
    public var log: [String] { recorder.lines }

    /// ``log`` as events for scenario expectations, stamped to the microsecond (observers' `value …` lines
    /// become `overlay value …`), in order of time (firmware feedback is stamped with the firmware's own
    /// time, which can be a little earlier than the line before it).
    public var observedEvents: [ObservedEvent] {
        recorder.events.enumerated().sorted { ($0.element.micros, $0.offset) < ($1.element.micros, $1.offset) }.map(\.element)
    }

    /// ``log`` joined with newlines, with a final newline (the `.expected` file format).
    public var logText: String { log.map { $0 + "\n" }.joined() }

    // MARK: Steps

    private func handle(_ effect: HostEffect) {
        let now = nowMicros
        recorder.setTime(now)
        switch effect {
        case .gesture(let gesture):
            drainFirmwareFeedback()
            recorder.setTime(now)
            lastCauseMicros = gesture.timestampMicros
            recorder.add("gesture \(Self.describe(gesture))")
        case .overlay(let overlayEffect, _):
            deliver(overlayEffect, now: now)
        case .focusExposureLock(let event):
            recorder.add("lock \(event)")
        case .connected, .input, .deviceLost:
            break
        }
        executor.runAll()
    }

    private func step(now: UInt64) {
        recorder.setTime(now)
        executor.runAll()
        collectHapticOutcomes()
        _ = captureRig.link.takeEvents()  // nobody else reads them; keep the list from growing
        drainFirmwareFeedback()
    }

    private func deliver(_ effect: OverlayEffect, now: UInt64) {
        switch effect {
        case .valueChanged:
            // The observers log values, with their origin; run the callbacks queued so far (delegate
            // calls for earlier effects, this value's action and observers) so the log reads in order.
            effects.append((effect, lastCauseMicros))
            executor.runAll()
        case .haptic(let haptic, let cause):
            effects.append((effect, cause))
            sendHaptic(haptic, cause: cause, now: now)
        default:
            effects.append((effect, lastCauseMicros))
            recorder.add("overlay \(effect)")
            executor.runAll()
        }
    }

    private func sendHaptic(_ haptic: HapticPattern, cause: UInt64, now: UInt64) {
        var request = HapticRequest(haptic: haptic, causeMicros: cause, sentAtMicros: now, call: nil, outcome: nil)
        do {
            request.call = try captureRig.link.startUnaryCall(.feedbackPlayHaptic, PlayHapticRequest(pattern: haptic))
            recorder.add("haptic \(haptic) sent")
        } catch {
            request.outcome = .some(error)
            recorder.add("haptic \(haptic) failed \(error.code)")
        }
        hapticRequests.append(request)
    }

    private func collectHapticOutcomes() {
        for index in hapticRequests.indices where hapticRequests[index].outcome == nil {
            guard let call = hapticRequests[index].call,
                let result = captureRig.link.takeUnaryResult(call)
            else { continue }
            switch result {
            case .success:
                hapticRequests[index].outcome = .some(nil)
            case .failure(let error):
                hapticRequests[index].outcome = .some(error)
                recorder.add("haptic \(hapticRequests[index].haptic) failed \(error.code)")
            }
        }
    }

    private func drainFirmwareFeedback() {
        let records = captureRig.device.feedbackLog
        guard !records.isEmpty else { return }
        captureRig.device.clearFeedbackLog()
        for record in records {
            firmwareFeedback.append(record)
            recorder.add(Self.describe(record), atMicros: record.timestampMicros)
        }
    }

    // MARK: Formatting

    /// `value` with at most three decimals, no trailing zeros, `-0` as `0`.
    public static func number(_ value: Double) -> String {
        guard value.isFinite else { return "\(value)" }
        var rounded = (value * 1000).rounded() / 1000
        if rounded == 0 { rounded = 0 }
        var text = "\(rounded)"
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    /// An app event as the log writes it (`photo 1 zoom 2 bias 0`, `capture began primary camera-control`, …).
    public static func describe(_ event: CameraApp.Event) -> String {
        switch event {
        case .photo(let photo, _):
            "\(photo.isVideo ? "video" : "photo") \(photo.sequenceNumber) zoom \(number(photo.zoomFactor)) "
                + "bias \(number(photo.exposureBias))"
                + (photo.focusExposureLock.isEmpty ? "" : " \(photo.focusExposureLock) locked")
        case .action(let id, let value) where id == "reactions":
            "action reactions #\(Int(value)) \(CameraApp.reactionTitles.indices.contains(Int(value)) ? CameraApp.reactionTitles[Int(value)] : "?")"
        case .action(let id, let value): "action \(id) \(number(value))"
        default: event.description
        }
    }

    /// A gesture as the log writes it after `gesture ` (`slide-changed camera-control at=0.5`, …).
    public static func describe(_ gesture: Gesture) -> String {
        let source = gesture.source.description
        switch gesture.kind {
        case .touchBegan: return "touch-began \(source)"
        case .touchEnded: return "touch-ended \(source)"
        case .lightPressBegan: return "light-press-began \(source)"
        case .lightPressEnded: return "light-press-ended \(source)"
        case .doubleLightPress: return "double-light-press \(source)"
        case .slideBegan(let motion): return "slide-began \(source) at=\(number(motion.position))"
        case .slideChanged(let motion): return "slide-changed \(source) at=\(number(motion.position))"
        case .slideEnded(let motion): return "slide-ended \(source) at=\(number(motion.position))"
        case .pressBegan: return "press-began \(source)"
        case .longPressBegan: return "long-press-began \(source)"
        case .pressEnded(let summary):
            return "press-ended \(source) \(summary.durationMicros / 1000)ms\(summary.isLongPress ? " long" : "")"
        case .pressCancelled: return "press-cancelled \(source)"
        case .remoteClick: return "remote-click \(source)"
        }
    }

    static func describe(_ record: FeedbackRecord) -> String {
        switch record.kind {
        case .haptic(let pattern, _):
            return "firmware-haptic \(HapticPattern(rawValue: pattern)?.description ?? "pattern-\(pattern)")"
        case .sound(let sound):
            return "firmware-sound \(Sound(rawValue: sound).map { "\($0)" } ?? "\(sound)")"
        case .indicator(let mode, _):
            return "firmware-indicator \(mode)"
        }
    }
}

/// Collects the rig's log lines; shared with the callbacks that run on the rig's executor.
private final class Recorder: Sendable {
    private struct State {
        var lines: [String] = []
        var events: [ObservedEvent] = []
        var nowMicros: UInt64 = 0
    }

    private let state = Mutex(State())

    var lines: [String] { state.withLock { $0.lines } }
    var events: [ObservedEvent] { state.withLock { $0.events } }

    func setTime(_ micros: UInt64) {
        state.withLock { $0.nowMicros = micros }
    }

    func add(_ text: String, atMicros micros: UInt64? = nil) {
        state.withLock { state in
            let at = micros ?? state.nowMicros
            let ms = String(at / 1000)
            let padded = String(repeating: " ", count: max(0, 6 - ms.count)) + ms
            state.lines.append("\(padded) ms \(text)")
            state.events.append(ObservedEvent(micros: at, text: text.hasPrefix("value ") ? "overlay " + text : text))
        }
    }
}
