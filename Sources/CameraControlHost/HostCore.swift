import CameraControlCapture
import CameraControlControls
import CameraControlGestures
import CameraControlWire

/// What the host pipeline did, in the order it happened, as ``HostCore`` reports it to its observer.
public enum HostEffect: Sendable, Hashable {
    /// A session is up with a device that has these capabilities.
    case connected(Capabilities)
    /// An input event as it arrived from the device (before it was put back in device order).
    case input(InputEvent)
    /// A gesture the recogniser completed (delivered to the controls, then to the capture interactions).
    case gesture(Gesture)
    /// An effect of the controls overlay at device time `atMicros` (the gesture's that caused it, or the
    /// deadline's: the overlay shows 100 ms after a light press began), reported before the delegate calls
    /// and control actions it causes. A `.haptic` one is for the device: the driver plays it with
    /// `FeedbackService/PlayHaptic` (``CameraControlHost`` does).
    case overlay(OverlayEffect, atMicros: UInt64)
    /// The device went away: whatever was in flight was cancelled.
    case deviceLost
    /// The AE/AF lock locked or unlocked the attached camera (or could not).
    case focusExposureLock(FocusExposureLockEvent)
}

/// The host pipeline with no I/O: device events and host time in, gestures, overlay effects and capture
/// events out. It is the one place where the host's layers are wired together:
///
/// ```
///  InputEvent ─▶ InputEventOrderer ─▶ GestureRecognizer ─▶ CaptureControlsSession ─▶ CaptureEventInteraction(s)
///   (arrival)     (device order)        (gestures)           (overlay; collapses        (capture events to the
///                                                              on a full click)          app's handlers)
/// ```
///
/// - Time: the recogniser and the overlay run on device time, which the core estimates from host time
///   with a ``DeviceClockEstimate`` (feed it round trips with ``addClockSample(sentAtHostMicros:receivedAtHostMicros:deviceMicros:)``).
///   Nothing moves by itself: call ``advance(toHostMicros:)`` at ``nextDeadlineHostMicros`` (and after
///   feeding events), never on a fixed tick.
/// - Order: each gesture goes to the controls session first, then to every capture interaction. A full
///   click therefore collapses the overlay (the controls delegate is told it became inactive) before the
///   capture event is delivered: with the delegate and the capture handlers on one serial queue, the app
///   sees them in that order.
/// - The overlay shows only while a capture session runs; when every attached interaction's session
///   stops, a showing overlay is dismissed. The AE/AF lock too needs an attached interaction that takes
///   captures.
/// - Device lost: events still waiting for an earlier one are delivered, every press in flight is
///   cancelled (`cancelled` to the app, never a capture), the overlay is dismissed.
///
/// ``CameraControlHost`` drives it over a real device; the virtual-time rigs of CameraControlSimulation
/// drive the same core. Not thread-safe: drive it from one serial context.
///
/// The state an input event touches is `@exclusivity(unchecked)`: the core is confined to one serial
/// context and no access to it overlaps another (a handler that feeds the core again finds the event
/// buffers taken and uses its own), so the runtime's check on every access — a tenth of the instructions
/// from the `read()` to the handler (`camctl-bench presspath`) — is left out.
public final class HostCore {
    /// How the core is tuned.
    public struct Configuration: Sendable {
        /// The recogniser's configuration for a device with these capabilities.
        public var recognizer: @Sendable (Capabilities) -> GestureRecognizer.Configuration
        /// The longest an input event waits for an earlier one, host microseconds, when the device does
        /// not say whether the missing one is reliable (a 1.0 device; ``InputEventOrderer``).
        public var maximumReorderHoldMicros: UInt64
        /// The longest an input event waits for an earlier reliable one that the device is
        /// retransmitting, host microseconds (its whole retransmission budget by default).
        public var maximumReliableReorderHoldMicros: UInt64
        /// The host's AE/AF lock setting at start (``HostCore/isFocusExposureLockEnabled``). Default off, as
        /// Apple's (Settings › Camera › Camera Control › AE/AF Lock, iOS 18.2).
        public var focusExposureLockEnabled: Bool

        /// The defaults: ``GestureRecognizer/Configuration/init(capabilities:)``, a 150 ms reorder hold
        /// for a gap of unknown kind and the retransmission budget (2.7 s) for a gap hiding a reliable
        /// event.
        public init(
            recognizer: @escaping @Sendable (Capabilities) -> GestureRecognizer.Configuration = {
                GestureRecognizer.Configuration(capabilities: $0)
            },
            maximumReorderHoldMicros: UInt64 = 150_000,
            maximumReliableReorderHoldMicros: UInt64 = InputEventOrderer.reliableRetransmissionBudgetMicros,
            focusExposureLockEnabled: Bool = false
        ) {
            self.recognizer = recognizer
            self.maximumReorderHoldMicros = maximumReorderHoldMicros
            self.maximumReliableReorderHoldMicros = maximumReliableReorderHoldMicros
            self.focusExposureLockEnabled = focusExposureLockEnabled
        }

        fileprivate func makeOrderer() -> InputEventOrderer {
            InputEventOrderer(
                maximumHoldMicros: maximumReorderHoldMicros, maximumReliableHoldMicros: maximumReliableReorderHoldMicros)
        }
    }

    /// The tuning in use.
    public let configuration: Configuration
    /// The device clock as estimated from the samples fed so far.
    public private(set) var clock = DeviceClockEstimate()
    /// The gesture recogniser (configured from the capabilities at each ``connected(_:)``).
    @exclusivity(unchecked) public private(set) var recognizer: GestureRecognizer
    /// Puts input events back in device order.
    @exclusivity(unchecked) public private(set) var orderer: InputEventOrderer
    /// The capture interactions gestures are routed to, in the order they were attached.
    @exclusivity(unchecked) public private(set) var interactions: [CaptureEventInteraction] = []
    /// The controls session, if one is attached.
    @exclusivity(unchecked) public private(set) var controls: CaptureControlsSession?
    /// The capabilities of the connected device (nil while disconnected).
    public private(set) var capabilities: Capabilities?
    /// The host's AE/AF lock setting (Apple's Settings › Camera › Camera Control › AE/AF Lock): off by
    /// default, as Apple's. An app's override (``attachCamera(_:focusExposureLock:lockAfterMicros:)``) wins
    /// over it. Switching it off while a lock is held unlocks at once.
    public var isFocusExposureLockEnabled = false {
        didSet { if !isFocusExposureLockActive { cancelFocusExposureLock() } }
    }
    /// The camera the AE/AF lock drives (nil: none attached).
    public var camera: (any CameraDevice)? { focusLock?.camera }
    /// True when a light press held past the lock time locks the attached camera: the app's override if it
    /// gave one, else ``isFocusExposureLockEnabled``.
    public var isFocusExposureLockActive: Bool { focusLock != nil && (focusLockOverride ?? isFocusExposureLockEnabled) }
    /// The user's Camera Control settings (docs/CONTROLS.md, "Settings"): the double-light-press window
    /// takes effect at once (also for a device already connected); Camera Control off drops every Camera
    /// Control gesture, dismisses the overlay, releases an AE/AF lock and cancels a click in flight (with
    /// every press in flight, as a lost device does); Camera Adjustments off keeps every gesture from the overlay (it never shows,
    /// sliders never move) while a full click still captures. The force preset is the device's: send
    /// ``CameraControlSettings/LightPressForce/thresholds`` with `ConfigService/Configure`.
    @exclusivity(unchecked) public var settings = CameraControlSettings() {
        didSet {
            recognizer.configuration.doubleLightPressWindowMicros = settings.doubleLightPressSpeed.windowMicros
            let now = recognizer.currentMicros ?? 0
            if !settings.isCameraControlEnabled, oldValue.isCameraControlEnabled {
                cancelFocusExposureLock(atMicros: now)
                // A Camera Control click in flight can no longer end: cancelled, as on a lost device.
                if recognizer.pressesInFlight.contains(.cameraControl) {
                    for interaction in interactions { interaction.deviceLost() }
                }
            }
            if !settings.isCameraControlEnabled || !settings.areAdjustmentsEnabled, let controls {
                controls.dismiss(atMicros: now) { report($0, atMicros: now) }
            }
        }
    }

    /// The app's interface orientation, passed to the controls session (attached now or later): slide
    /// direction and the overlay's placement follow it. Portrait by default.
    public var interfaceOrientation: InterfaceOrientation = .portrait {
        didSet { controls?.interfaceOrientation = interfaceOrientation }
    }
    @exclusivity(unchecked) private var focusLock: FocusExposureLockController?
    /// The events the orderer released and the gestures of one event, kept between calls (``take(_:)``).
    @exclusivity(unchecked) private var dueEvents: [InputEvent] = []
    @exclusivity(unchecked) private var recognized: [Gesture] = []
    @exclusivity(unchecked) private var focusLockOverride: Bool?
    /// How late the recent input events arrived (``deliveryLagMicros``).
    @exclusivity(unchecked) private var lateness = RecentLateness()
    /// Called with every effect, in order, synchronously (capture handlers with synchronous delivery run
    /// in between, in the order described above).
    @exclusivity(unchecked) public var observer: ((HostEffect) -> Void)?
    /// False: ``observer`` is not told of each input event and gesture (``HostEffect/input(_:)``,
    /// ``HostEffect/gesture(_:)``), only of the other effects — for a driver whose observer acts on those
    /// alone (``CameraControlHost`` while nobody observes it: the overlay's haptics), so that an effect
    /// nobody looks at is not built on every press. Default true.
    @exclusivity(unchecked) public var reportsInputsAndGestures = true

    /// A core with nothing attached and no device.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        recognizer = GestureRecognizer()
        orderer = configuration.makeOrderer()
        isFocusExposureLockEnabled = configuration.focusExposureLockEnabled
    }

    // MARK: Attaching

    /// Routes capture events to `interaction` too. The first interaction attached is also the one the
    /// controls session checks (enabled, session running).
    public func attach(_ interaction: CaptureEventInteraction) {
        guard !interactions.contains(where: { $0 === interaction }) else { return }
        interactions.append(interaction)
        if interactions.count == 1 { controls?.attachEventInteraction(interaction) }
    }

    /// Stops routing to `interaction`; presses it had in flight are cancelled (as on a lost device).
    public func detach(_ interaction: CaptureEventInteraction) {
        guard let index = interactions.firstIndex(where: { $0 === interaction }) else { return }
        interactions.remove(at: index)
        interaction.deviceLost()
        if index == 0 { controls?.attachEventInteraction(interactions.first) }
    }

    /// The camera the AE/AF lock drives (nil: none), with the app's override of the host setting
    /// (`focusExposureLock`: true or false; nil follows ``isFocusExposureLockEnabled``). A lock held on
    /// the previous camera is released first.
    public func attachCamera(
        _ camera: (any CameraDevice)?, focusExposureLock override: Bool? = nil,
        lockAfterMicros: UInt64 = 400_000
    ) {
        cancelFocusExposureLock()
        focusLock = camera.map { FocusExposureLockController(camera: $0, lockAfterMicros: lockAfterMicros) }
        focusLockOverride = override
    }

    /// Drives `session`'s overlay from the gestures (nil: no controls), in place of the session attached
    /// before. While a device is connected, `session` is bound to it (``CaptureControlsSession/bind(to:)``);
    /// otherwise at the next ``connected(_:)``.
    public func attach(_ session: CaptureControlsSession?) {
        controls = session
        session?.interfaceOrientation = interfaceOrientation
        session?.attachEventInteraction(interactions.first)
        if let session, let capabilities { session.bind(to: ControlsCapabilities(capabilities)) }
    }

    // MARK: Feeding

    /// A session with a device is up: the recogniser is configured for its `capabilities`, the controls
    /// session is bound to them (``CaptureControlsSession/bind(to:)``), and ordering, recognition and the
    /// clock start afresh.
    public func connected(_ capabilities: Capabilities) {
        self.capabilities = capabilities
        var recognizerConfiguration = configuration.recognizer(capabilities)
        recognizerConfiguration.doubleLightPressWindowMicros = settings.doubleLightPressSpeed.windowMicros
        recognizer = GestureRecognizer(configuration: recognizerConfiguration)
        orderer = configuration.makeOrderer()
        clock.reset()
        lateness = RecentLateness()
        controls?.bind(to: ControlsCapabilities(capabilities))
        controls?.restartClock()  // a new session's device time may start again from its boot
        observer?(.connected(capabilities))
    }

    /// A round trip to the device: sent at host time `sent`, answered with the device's clock
    /// `deviceMicros`, received at `received`.
    public func addClockSample(sentAtHostMicros sent: UInt64, receivedAtHostMicros received: UInt64, deviceMicros: UInt64) {
        clock.addRoundTrip(sentAtHostMicros: sent, receivedAtHostMicros: received, deviceMicros: deviceMicros)
    }

    /// An input event from the device, received at host time `now`. Follow it with
    /// ``advance(toHostMicros:)``.
    public func receive(_ event: InputEvent, atHostMicros now: UInt64) {
        if reportsInputsAndGestures { observer?(.input(event)) }
        // Best-effort kinds only (slide, touch): a reliable event may come late for its own reasons
        // (retransmitted after a loss) and tells nothing of the queue.
        if event.kind != .unspecified, !event.kind.isReliable {
            lateness.record(deviceMicros: event.timestampMicros, arrivedAtHostMicros: now)
        }
        var due = Self.take(&dueEvents)
        orderer.accept(event, atMicros: now, into: &due)
        recognize(due)
        Self.giveBack(&due, to: &dueEvents)
    }

    /// Moves time on to host time `now`: events that waited too long for an earlier one are released,
    /// long presses and idle slides fall due, the overlay runs its momentum and dismisses itself.
    public func advance(toHostMicros now: UInt64) {
        recognize(orderer.release(atMicros: now))
        let deviceNow = deviceMicros(atHostMicros: now)
        // Device time as far as the line has surely brought the best-effort events (a slide's next move, a
        // touch's end may still be on their way: deliveryLagMicros). An idle slide and the AE/AF lock,
        // which a slide or a touch's end prevents, are judged on it; a long press is not (a press's release
        // is reliable and overtakes queued moves).
        let horizon = max(recognizer.bestEffortHorizonMicros ?? 0, deviceNow - min(deliveryLagMicros, deviceNow))
        recognizer.bestEffortHorizonMicros = horizon
        // While an earlier event is awaited, device time must not run past it: it may be the release
        // that ends a press before the long-press threshold.
        if let latest = recognizer.currentMicros, !orderer.isHolding {
            deliver(recognizer.advance(toMicros: max(latest, deviceNow)))
        }
        let capturing = anyInteractionCaptures
        let sessionStopped = !interactions.isEmpty && !capturing
        if focusLock != nil, !capturing {
            cancelFocusExposureLock(atMicros: deviceNow)
        } else if isFocusExposureLockActive, var lock = focusLock, let due = lock.nextDeadlineMicros, horizon >= due {
            let events = lock.advance(toMicros: horizon)
            focusLock = lock
            reportLock(events)
        }
        guard let controls else { return }
        // The overlay goes with its interaction (disabled, or its session stopped), or with every capture here
        // (a session whose interaction check is overridden still follows the host's interactions).
        if controls.phase != .hidden, !controls.isOverlayAllowed || sessionStopped {
            controls.dismiss(atMicros: deviceNow) { report($0, atMicros: deviceNow) }
        }
        if let due = controls.nextDeadlineMicros, deviceNow >= due {
            // Stamped with the deadline that fell due (the overlay shows 100 ms after the light press), not
            // with when the host's timer woke, which a busy machine makes later.
            controls.advance(toMicros: deviceNow) { report($0, atMicros: due) }
        }
    }

    /// True when an attached capture interaction takes captures now (enabled, its session running). Without
    /// one the AE/AF lock is neither held nor taken: with no live capture-event interaction the Camera Control
    /// does nothing for the app (Apple's controls delegate is never called then either). When interactions are
    /// attached and none takes captures, the overlay goes too.
    private var anyInteractionCaptures: Bool {
        interactions.contains { $0.isSessionRunning && $0.isEnabled }
    }

    /// The device went away at host time `now`: events still held are delivered, then every press in
    /// flight is cancelled, the overlay is dismissed and the clock forgotten.
    public func deviceLost(atHostMicros now: UInt64) {
        let deviceNow = deviceMicros(atHostMicros: now)
        recognize(orderer.reset())
        // The lock is a cancel, not a release: unlocked before the recogniser closes the light press.
        cancelFocusExposureLock(atMicros: max(deviceNow, recognizer.currentMicros ?? 0))
        deliver(recognizer.reset(cancellingAtMicros: recognizer.currentMicros ?? deviceNow))
        for interaction in interactions { interaction.deviceLost() }
        if let controls {
            let at = max(deviceNow, recognizer.currentMicros ?? 0)
            controls.dismiss(atMicros: at) { report($0, atMicros: at) }
        }
        capabilities = nil
        clock.reset()
        lateness = RecentLateness()
        observer?(.deviceLost)
    }

    /// The earliest host time at which ``advance(toHostMicros:)`` has work, or nil when nothing is
    /// pending (then only a new event can change anything).
    public var nextDeadlineHostMicros: UInt64? {
        var deadlines: [UInt64] = []
        if let release = orderer.nextReleaseMicros { deadlines.append(release) }
        // Device-time deadlines need the clock estimate; without one, device time cannot move anyway.
        // An idle slide's end and the lock fall due once the line has had the time to bring the
        // best-effort events that would have prevented them (advance(toHostMicros:)). While the orderer
        // holds an event the recogniser does not advance: its deadlines wait for the orderer's release
        // (re-armed at once, a deadline already past spun the loop until the release, up to 2.7 s).
        let lag = deliveryLagMicros
        let lockDeadline = isFocusExposureLockActive ? focusLock?.nextDeadlineMicros.map { $0 &+ lag } : nil
        let pressDeadline = orderer.isHolding ? nil : recognizer.pressDeadlineMicros
        let slideDeadline = orderer.isHolding ? nil : recognizer.slideIdleDeadlineMicros.map { $0 &+ lag }
        for device in [pressDeadline, slideDeadline, controls?.nextDeadlineMicros, lockDeadline].compactMap({ $0 }) {
            if let host = clock.hostMicros(atDeviceMicros: device) { deadlines.append(host) }
        }
        return deadlines.min()
    }

    /// The longest ``deliveryLagMicros`` counted, microseconds: a line slower than that to bring events
    /// cannot carry the device's input anyway (the link's dead timeout is a fraction of it).
    public static let maximumDeliveryLagMicros: UInt64 = 1_000_000

    /// How late the line brings the device's best-effort input events (slide moves, touches): the latest
    /// that one of those of the last second or two of arrivals came after its device
    /// time, measured with the clock estimate, at most ``maximumDeliveryLagMicros`` (0 before a clock sample
    /// or such an event). A fast line's is a frame's time on the wire, the host's wake-up and the clock
    /// estimate's error: a few milliseconds at 115200 baud (an input event's frame alone takes 2 ms). A
    /// saturated line's is the device's queue: hundreds of milliseconds at 9600 baud, where reliable events
    /// overtake the queued moves (hence the latest of several, not the newest's). An idle slide's end and
    /// the AE/AF lock wait for it (``GestureRecognizer/bestEffortHorizonMicros``): until then the event that
    /// would have prevented them (the slide's next move, a touch's end) may still be on the line. A host
    /// stall counts as lateness too, for a window or two: those two then come as much later.
    public var deliveryLagMicros: UInt64 {
        guard let latest = lateness.latestMicros, let offset = clock.offsetMicros(atHostMicros: lateness.newestArrivalMicros)
        else { return 0 }
        let lag = latest &- offset
        return lag > 0 ? min(UInt64(lag), Self.maximumDeliveryLagMicros) : 0
    }

    /// The device's clock at host time `now` as estimated, never before the latest event seen. Before any
    /// clock sample it is the latest event's time: device time is never invented from host time.
    public func deviceMicros(atHostMicros now: UInt64) -> UInt64 {
        let latest = recognizer.currentMicros ?? 0
        guard let estimate = clock.deviceMicros(atHostMicros: now) else { return latest }
        return max(estimate, latest)
    }

    // MARK: Wiring

    private func recognize(_ events: [InputEvent]) {
        var gestures = Self.take(&recognized)
        for event in events {
            gestures.removeAll(keepingCapacity: true)
            recognizer.handle(event, into: &gestures)
            deliver(gestures)
        }
        Self.giveBack(&gestures, to: &recognized)
    }

    /// A buffer kept between calls (``dueEvents``, ``recognized``), emptied: an event costs no array. A
    /// nested call (a handler feeding the core again) finds it taken and uses a new one.
    private static func take<Element>(_ kept: inout [Element]) -> [Element] {
        var buffer: [Element] = []
        swap(&buffer, &kept)
        buffer.removeAll(keepingCapacity: true)
        return buffer
    }

    /// Keeps `buffer` for the next call (emptied, its storage kept).
    private static func giveBack<Element>(_ buffer: inout [Element], to kept: inout [Element]) {
        buffer.removeAll(keepingCapacity: true)
        swap(&buffer, &kept)
    }

    private func deliver(_ gestures: [Gesture]) {
        for gesture in gestures {
            if gesture.source == .cameraControl, !settings.isCameraControlEnabled {
                continue  // Camera Control off: it does nothing
            }
            if reportsInputsAndGestures { observer?(.gesture(gesture)) }
            // The lock first: a full press captures with the lock a held light press set.
            feedFocusExposureLock(gesture)
            if let controls, settings.areAdjustmentsEnabled {
                controls.handle(gesture) { report($0, atMicros: gesture.timestampMicros) }
            }
            for interaction in interactions { interaction.handle(gesture) }
        }
    }

    /// Gives `gesture` to the AE/AF lock; while no interaction takes captures (none attached, each disabled or
    /// its session stopped) the lock is cancelled instead (a gesture past the lock's deadline would take it).
    /// A light press that begins while the overlay shows the control list never locks
    /// (``FocusExposureLockController/handle(_:overlay:)``).
    /// The interactions are asked only when a camera can be locked (this runs for every gesture).
    private func feedFocusExposureLock(_ gesture: Gesture) {
        guard focusLock != nil else { return }
        if !anyInteractionCaptures {
            cancelFocusExposureLock(atMicros: gesture.timestampMicros)
        } else if isFocusExposureLockActive, var lock = focusLock {
            // The overlay's phase before it handles the gesture: a light press begun in the control list
            // selects, it does not lock. Read for a light press's begin only (it takes the session's mutex).
            let overlay = gesture.kind == .lightPressBegan ? controlsPhaseForLock : .hidden
            let events = lock.handle(gesture, overlay: overlay)
            focusLock = lock
            reportLock(events)
        }
    }

    /// The overlay's phase as the AE/AF lock sees it: hidden while Camera Adjustments are off (the overlay
    /// then gets no gestures).
    private var controlsPhaseForLock: OverlayPhase {
        guard let controls, settings.areAdjustmentsEnabled else { return .hidden }
        return controls.phase
    }

    /// Releases a held AE/AF lock and forgets a pending one.
    private func cancelFocusExposureLock(atMicros now: UInt64? = nil) {
        guard var lock = focusLock else { return }
        let events = lock.cancel(atMicros: now ?? recognizer.currentMicros ?? 0)
        focusLock = lock
        reportLock(events)
    }

    private func reportLock(_ events: [FocusExposureLockEvent]) {
        guard let observer else { return }
        for event in events { observer(.focusExposureLock(event)) }
    }

    private func report(_ effects: [OverlayEffect], atMicros micros: UInt64) {
        guard let observer else { return }
        for effect in effects { observer(.overlay(effect, atMicros: micros)) }
    }
}

/// The largest `arrival host time − device time` among the best-effort input events (slide, touch) that
/// arrived in the current and the previous window of host time (``windowMicros`` each): how late the line
/// brought them, the clock's offset still in it (``HostCore/deliveryLagMicros`` takes it out). Windows
/// turn over as such events arrive: a value is replaced once they have arrived for one to two windows
/// after it, so what a saturated line was late with still counts when the deadlines of its last events
/// (an idle slide's end 300 ms after the last move, the AE/AF lock) come; with no such event since, it
/// stays, as those deadlines are the only ones it delays. Recording is two subtractions and a comparison:
/// it runs on every such event, before the capture handler.
struct RecentLateness {
    /// The length of a window, host microseconds.
    static let windowMicros: UInt64 = 1_000_000

    private var windowStartMicros: UInt64 = 0
    private var currentLatest: Int64?
    private var previousLatest: Int64?
    /// When the newest event arrived, host microseconds (0 before any).
    private(set) var newestArrivalMicros: UInt64 = 0

    /// An event stamped `deviceMicros` arrived at host time `arrivedAtHostMicros`.
    mutating func record(deviceMicros: UInt64, arrivedAtHostMicros arrival: UInt64) {
        let lateness = Int64(bitPattern: arrival) &- Int64(bitPattern: deviceMicros)
        newestArrivalMicros = max(newestArrivalMicros, arrival)
        if arrival &- windowStartMicros >= Self.windowMicros || arrival < windowStartMicros {
            let skipped = arrival &- windowStartMicros >= 2 * Self.windowMicros || arrival < windowStartMicros
            previousLatest = skipped ? nil : currentLatest
            currentLatest = lateness
            windowStartMicros = arrival
        } else {
            currentLatest = max(currentLatest ?? lateness, lateness)
        }
    }

    /// The largest lateness recorded in the two windows (nil before any event).
    var latestMicros: Int64? {
        guard let current = currentLatest else { return previousLatest }
        return max(current, previousLatest ?? current)
    }
}
