import CameraControlCapture
import CameraControlEmbedded
import CameraControlGestures
import CameraControlRPC
import CameraControlWire

/// A whole Camera Control in virtual time: the C firmware with its simulated finger, the host
/// connection, the gesture recogniser and the capture-event router, exactly as a camera app would run
/// them, stepped together.
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
    /// The host's recogniser.
    public var recognizer: GestureRecognizer
    /// The host's capture router.
    public var router: CaptureEventRouter
    /// Every input event the host received, in the order it arrived.
    public private(set) var inputEvents: [InputEvent] = []
    /// Puts the input events back in the device's order before the recogniser sees them (a retransmitted
    /// reliable event can arrive after later ones: docs/PROTOCOL.md §6, "hosts order input events").
    public var inputOrder = InputEventOrderer()
    /// Every gesture recognised, in order.
    public private(set) var gestures: [Gesture] = []
    /// Every router output, in order.
    public private(set) var outputs: [CaptureRouterOutput] = []
    /// Called with each gesture as it is recognised (for a controls overlay), with the host time.
    public var onGesture: ((Gesture, UInt64) -> Void)?
    /// Called after every step with the host time (for time-driven layers such as the overlay).
    public var onStep: ((UInt64) -> Void)?
    /// The event stream's call, while it is open.
    public private(set) var eventStream: CallID?
    /// Link losses seen (event stream failed with `UNAVAILABLE`).
    public private(set) var linkLosses = 0

    /// The firmware device.
    public var device: EmbeddedDevice { link.device }

    /// A rig with a device booted with `seed`.
    public init(
        seed: UInt64 = 1,
        recognizer: GestureRecognizer.Configuration = .init(),
        router: CaptureEventRouter.Configuration = .init()
    ) {
        link = VirtualLink(seed: seed)
        self.recognizer = GestureRecognizer(configuration: recognizer)
        self.router = CaptureEventRouter(configuration: router)
    }

    /// Capture events only, in order, with the handler role each went to.
    public var captureEvents: [(event: CaptureEvent, role: CaptureHandlerRole)] {
        outputs.compactMap { output in
            if case .event(let event, let role) = output { return (event, role) }
            return nil
        }
    }

    /// Handshakes, opens the input event stream, sets the slide resolution from the capabilities and
    /// starts the capture session.
    ///
    /// - Throws: ``RPCError`` when the handshake or the stream fails.
    public func connect(startSession: Bool = true) throws(RPCError) {
        let response = try link.handshake()
        if let resolution = response.capabilities?.slideResolution, resolution > 0 {
            recognizer.configuration.slideResolution = resolution
        }
        eventStream = try link.openStream(.inputStreamInputEvents, StreamInputEventsRequest())
        if startSession { setSessionRunning(true) }
        link.run(forMicros: 2_000)
    }

    /// Starts or stops the capture session (a press in flight is cancelled when it stops).
    public func setSessionRunning(_ running: Bool) {
        outputs += router.setSessionRunning(running, atHostMicros: link.nowMicros)
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
    /// recogniser and router.)
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
        if let call = eventStream {
            let events = (try? link.takeStreamMessages(call, as: InputEvent.self)) ?? []
            for event in events {
                inputEvents.append(event)
                recognize(inputOrder.accept(event, atMicros: now), now: now)
            }
            recognize(inputOrder.release(atMicros: now), now: now)
            if let ending = link.streamEnd(call) {
                eventStream = nil
                if ending?.code == .unavailable { linkLosses += 1 }
                recognize(inputOrder.reset(), now: now)
                // The device is gone: whatever was in flight can never end normally.
                deliver(recognizer.reset(cancellingAtMicros: recognizer.currentMicros ?? 0), now: now)
                outputs += router.cancelAll(atHostMicros: now)
            }
        }
        if let latest = recognizer.currentMicros, !inputOrder.isHolding {
            // Device time moves on even when no event arrives: long presses and windows expire. Not while
            // events wait for an earlier one: it may be a release that ends a press before the threshold.
            let deviceNow = max(latest, deviceTimeEstimate(hostNow: now))
            deliver(recognizer.advance(toMicros: deviceNow), now: now)
        }
        onStep?(now)
    }

    private func deviceTimeEstimate(hostNow: UInt64) -> UInt64 {
        // Host and device share the virtual clock here, so host time is device time.
        hostNow
    }

    private func recognize(_ events: [InputEvent], now: UInt64) {
        for event in events { deliver(recognizer.handle(event), now: now) }
    }

    private func deliver(_ new: [Gesture], now: UInt64) {
        for gesture in new {
            gestures.append(gesture)
            onGesture?(gesture, now)
            outputs += router.handle(gesture, atHostMicros: now)
        }
    }
}
