import CameraControlCapture
import CameraControlEmbedded
import CameraControlGestures
import CameraControlHost
import CameraControlRPC
import CameraControlWire
import Synchronization

/// A whole Camera Control in virtual time: the C firmware with its simulated finger, the host
/// connection, and the host pipeline (``HostCore``: ordering, recogniser, capture-event interaction)
/// exactly as ``CameraControlHost`` runs it over a real port, stepped together.
///
/// ```swift
/// let rig = VirtualCaptureRig(seed: 7)
/// try rig.connect()                       // handshake, event stream, capture session running
/// try rig.device.play(scenario: "full-click")
/// rig.runUntilScenarioEnds()
/// rig.captureEvents                       // began, ended from camera-control
/// ```
public final class VirtualCaptureRig {
    /// Firmware and host link.
    public let link: VirtualLink
    /// The host pipeline (the same code ``CameraControlHost`` drives).
    public let core: HostCore
    /// The app's capture interaction (handlers deliver synchronously, stamped with virtual time);
    /// ``replaceInteraction(_:tap:)`` puts the app's own in its place.
    public private(set) var interaction: CaptureEventInteraction
    /// The virtual clock, for interactions made outside the rig.
    public let captureClock: CaptureClock
    /// Every input event the host received, in the order it arrived.
    public private(set) var inputEvents: [InputEvent] = []
    /// Every gesture recognised, in order.
    public private(set) var gestures: [Gesture] = []
    /// Every output of the interaction's router, in order.
    public var outputs: [CaptureRouterOutput] { recorder.outputs }
    /// Called with every host effect as it happens (for a controls overlay's log).
    public var onEffect: ((HostEffect) -> Void)?
    /// Called after every step with the host time (for time-driven layers).
    public var onStep: ((UInt64) -> Void)?
    /// The event stream's call, while it is open.
    public private(set) var eventStream: CallID?
    /// Link losses seen (event stream failed with `UNAVAILABLE`).
    public private(set) var linkLosses = 0

    private let recorder = OutputRecorder()
    private let time: VirtualTime

    /// The firmware device.
    public var device: EmbeddedDevice { link.device }
    /// The host's recogniser (configured from the handshake).
    public var recognizer: GestureRecognizer { core.recognizer }

    /// A rig with a device booted with `seed`.
    ///
    /// - Parameters:
    ///   - recognizer: the recogniser's tuning (the slide resolution comes from the handshake).
    ///   - router: how the app set up its interaction: a secondary handler or not, enabled, default sound.
    ///   - host: the pipeline's tuning; when given, it decides the recogniser's configuration.
    public init(
        seed: UInt64 = 1,
        recognizer: GestureRecognizer.Configuration = .init(),
        router: CaptureEventRouter.Configuration = .init(),
        host: HostCore.Configuration? = nil
    ) {
        link = VirtualLink(seed: seed)
        let time = VirtualTime()
        self.time = time
        core = HostCore(
            configuration: host
                ?? HostCore.Configuration(recognizer: { capabilities in
                    var configuration = recognizer
                    if capabilities.slideResolution > 0 { configuration.slideResolution = capabilities.slideResolution }
                    return configuration
                }))
        let clock = CaptureClock { time.micros }
        captureClock = clock
        if router.hasSecondaryHandler {
            interaction = CaptureEventInteraction(clock: clock, primary: { _ in }, secondary: { _ in })
        } else {
            interaction = CaptureEventInteraction(clock: clock, handler: { _ in })
        }
        interaction.isEnabled = router.isEnabled
        interaction.defaultCaptureSoundDisabled = router.defaultCaptureSoundDisabled
        let recorder = self.recorder
        interaction.outputObserver = { recorder.add($0) }
        core.attach(interaction)
        core.observer = { [unowned self] effect in self.observe(effect) }
    }

    /// Routes capture events to `interaction` instead of the rig's own (make it with ``captureClock``);
    /// its router outputs are recorded in ``outputs`` and passed to `tap` too.
    public func replaceInteraction(_ interaction: CaptureEventInteraction, tap: (@Sendable (CaptureRouterOutput) -> Void)? = nil) {
        core.detach(self.interaction)
        self.interaction = interaction
        let recorder = self.recorder
        interaction.outputObserver = { output in
            recorder.add(output)
            tap?(output)
        }
        core.attach(interaction)
    }

    /// Capture events only, in order, with the handler role each went to.
    public var captureEvents: [(event: CaptureEvent, role: CaptureHandlerRole)] {
        outputs.compactMap { output in
            if case .event(let event, let role) = output { return (event, role) }
            return nil
        }
    }

    /// Handshakes, opens the input event stream, configures the pipeline from the capabilities and starts
    /// the capture session.
    ///
    /// - Throws: ``RPCError`` when the handshake or the stream fails.
    @discardableResult
    public func connect(startSession: Bool = true) throws(RPCError) -> HandshakeResponse {
        let response = try link.handshake()
        core.connected(response.capabilities ?? Capabilities())
        // Host and device share the virtual clock: one exact sample says so.
        core.addClockSample(sentAtHostMicros: link.nowMicros, receivedAtHostMicros: link.nowMicros, deviceMicros: link.nowMicros)
        eventStream = try link.openStream(.inputStreamInputEvents, StreamInputEventsRequest())
        if startSession { setSessionRunning(true) }
        link.run(forMicros: 2_000)
        return response
    }

    /// Starts or stops the capture session (a press in flight is cancelled when it stops).
    public func setSessionRunning(_ running: Bool) {
        time.micros = link.nowMicros
        interaction.setSessionRunning(running)
    }

    /// Steps the whole stack for `micros` of virtual time.
    public func run(forMicros micros: UInt64) {
        let end = link.nowMicros + micros
        while link.nowMicros < end { step() }
    }

    /// Runs until the device's scenario finished, then `settleMicros` more (so releases and windows close).
    public func runUntilScenarioEnds(settleMicros: UInt64 = 600_000, timeoutMicros: UInt64 = 120_000_000) {
        let end = link.nowMicros + timeoutMicros
        while device.isScenarioRunning && link.nowMicros < end { step() }
        run(forMicros: settleMicros)
    }

    /// Steps the whole stack until `condition` holds or `timeoutMicros` of virtual time passed; returns
    /// whether it holds. (``VirtualLink/run(untilMicros:while:)`` steps the link alone, without the
    /// host pipeline.)
    @discardableResult
    public func run(timeoutMicros: UInt64 = 5_000_000, until condition: () -> Bool) -> Bool {
        let end = link.nowMicros + timeoutMicros
        while !condition() {
            if link.nowMicros >= end { return false }
            step()
        }
        return true
    }

    /// One step of the stack.
    public func step() {
        link.step()
        let now = link.nowMicros
        time.micros = now
        if let call = eventStream {
            let events = (try? link.takeStreamMessages(call, as: InputEvent.self)) ?? []
            for event in events { core.receive(event, atHostMicros: now) }
            if let ending = link.streamEnd(call) {
                eventStream = nil
                if ending?.code == .unavailable { linkLosses += 1 }
                core.deviceLost(atHostMicros: now)
            }
        }
        core.advance(toHostMicros: now)
        onStep?(now)
    }

    private func observe(_ effect: HostEffect) {
        switch effect {
        case .input(let event): inputEvents.append(event)
        case .gesture(let gesture): gestures.append(gesture)
        default: break
        }
        onEffect?(effect)
    }
}

/// Virtual time for the interaction's clock (read from its handlers' context).
private final class VirtualTime: Sendable {
    private let value = Atomic<UInt64>(0)
    var micros: UInt64 {
        get { value.load(ordering: .relaxed) }
        set { value.store(newValue, ordering: .relaxed) }
    }
}

/// Collects the router's outputs as the interaction reports them.
private final class OutputRecorder: Sendable {
    private let list = Mutex<[CaptureRouterOutput]>([])
    var outputs: [CaptureRouterOutput] { list.withLock { $0 } }
    func add(_ output: CaptureRouterOutput) { list.withLock { $0.append(output) } }
}
