import CameraControlGestures
import CameraControlWire
import Dispatch
import Synchronization

/// Physical capture for an app (AVCaptureEventInteraction / SwiftUI's `onCameraCaptureEvent`): feed it
/// gestures and the capture session's state; it calls your handlers with capture events.
///
/// ```
/// let interaction = CaptureEventInteraction { event in
///     if event.phase == .ended { camera.capturePhoto() }
/// }
/// interaction.setSessionRunning(true)
/// for gesture in recognizer.handle(inputEvent) { interaction.handle(gesture) }
/// ```
///
/// Routing, phases and the default actions are ``CaptureEventRouter``'s (see docs/CAPTURE.md).
///
/// **Where handlers run.** With ``Delivery/synchronous`` (the default) handlers run on the thread that
/// called ``handle(_:)-(Gesture)`` (or a setter), before it returns; with ``Delivery/queue(_:)`` they run
/// asynchronously on that dispatch queue (make it serial, or order is lost). Either way events are
/// delivered one at a time in the order the router produced them, also when several threads feed the
/// interaction, and no lock is held while a handler runs (a handler may call back into the interaction;
/// what that produces is delivered after the current event). For actor isolation, iterate ``events``
/// from a task on that actor instead.
///
/// Thread-safe: all state is behind one `Mutex`.
public final class CaptureEventInteraction: Sendable {
    /// A capture-event handler.
    public typealias Handler = @Sendable (CaptureEvent) -> Void
    /// A default-action handler.
    public typealias DefaultActionHandler = @Sendable (DefaultActionEvent) -> Void
    /// Sees every router output.
    public typealias OutputObserver = @Sendable (CaptureRouterOutput) -> Void

    /// Where handlers are called.
    public enum Delivery: Sendable {
        /// On the thread that fed the interaction, before the feeding call returns.
        case synchronous
        /// Asynchronously on this dispatch queue (serial, so order holds).
        case queue(DispatchQueue)
    }

    private struct State: ~Copyable {
        var router: CaptureEventRouter
        var defaultActionHandler: DefaultActionHandler?
        var outputObserver: OutputObserver?
        var subscribers: [UInt64: AsyncStream<CaptureEvent>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
        var outbox: [CaptureRouterOutput] = []
        var isDraining = false
    }

    private let state: Mutex<State>
    private let primary: Handler?
    private let secondary: Handler?
    private let delivery: Delivery
    private let soundPlayer: (any CaptureSoundPlaying)?
    private let clock: CaptureClock
    private let eventBufferLimit: Int

    /// One handler for primary and secondary events (volume up included).
    ///
    /// - Parameters:
    ///   - delivery: where the handler runs (default: synchronously, on the feeding thread).
    ///   - soundPlayer: what ``CaptureEvent/play(_:)`` and the default remote-click sound play through
    ///     (the device session); nil: no sounds.
    ///   - clock: host clock events are stamped with on receipt (judges the 15 s sound limit).
    ///   - eventBufferLimit: events each ``events`` stream buffers for a slow consumer; one that falls
    ///     further behind has its stream ended (never an `ended` silently missed).
    ///   - handler: called with every capture event.
    public convenience init(
        delivery: Delivery = .synchronous, soundPlayer: (any CaptureSoundPlaying)? = nil, clock: CaptureClock = .continuous,
        eventBufferLimit: Int = 1024, handler: @escaping Handler
    ) {
        self.init(
            primaryHandler: handler, secondaryHandler: nil, delivery: delivery, soundPlayer: soundPlayer, clock: clock,
            eventBufferLimit: eventBufferLimit)
    }

    /// Separate handlers: primary (volume down, action button, Camera Control click, remote click) and
    /// secondary (volume up). With `secondary` nil, volume up goes to `primary`. Other parameters as
    /// ``init(delivery:soundPlayer:clock:eventBufferLimit:handler:)``.
    public convenience init(
        delivery: Delivery = .synchronous, soundPlayer: (any CaptureSoundPlaying)? = nil, clock: CaptureClock = .continuous,
        eventBufferLimit: Int = 1024, primary: @escaping Handler, secondary: Handler? = nil
    ) {
        self.init(
            primaryHandler: primary, secondaryHandler: secondary, delivery: delivery, soundPlayer: soundPlayer,
            clock: clock, eventBufferLimit: eventBufferLimit)
    }

    /// No handlers: consume ``events`` instead (volume up then counts as primary). Parameters as
    /// ``init(delivery:soundPlayer:clock:eventBufferLimit:handler:)``.
    public convenience init(
        soundPlayer: (any CaptureSoundPlaying)? = nil, clock: CaptureClock = .continuous, eventBufferLimit: Int = 1024
    ) {
        self.init(
            primaryHandler: nil, secondaryHandler: nil, delivery: .synchronous, soundPlayer: soundPlayer, clock: clock,
            eventBufferLimit: eventBufferLimit)
    }

    private init(
        primaryHandler: Handler?, secondaryHandler: Handler?, delivery: Delivery, soundPlayer: (any CaptureSoundPlaying)?,
        clock: CaptureClock, eventBufferLimit: Int
    ) {
        self.primary = primaryHandler
        self.secondary = secondaryHandler
        self.delivery = delivery
        self.soundPlayer = soundPlayer
        self.clock = clock
        self.eventBufferLimit = max(eventBufferLimit, 1)
        let router = CaptureEventRouter(configuration: .init(hasSecondaryHandler: secondaryHandler != nil))
        self.state = Mutex(State(router: router))
    }

    deinit {
        let continuations = state.withLock { state in Array(state.subscribers.values) }
        for continuation in continuations { continuation.finish() }
    }

    // MARK: Settings

    /// False when the app cannot respond: presses get their default action (and presses in flight to a
    /// handler are cancelled when it turns false). Default true.
    public var isEnabled: Bool {
        get { state.withLock { $0.router.configuration.isEnabled } }
        set {
            let now = clock.nowMicros()
            enqueue { router, outbox in outbox += router.setEnabled(newValue, atHostMicros: now) }
        }
    }

    /// True when the app plays capture sounds itself: remote-click events then have
    /// ``CaptureEvent/shouldPlaySound`` true and no default sound is played. Default false.
    public var defaultCaptureSoundDisabled: Bool {
        get { state.withLock { $0.router.configuration.defaultCaptureSoundDisabled } }
        set { state.withLock { $0.router.setDefaultCaptureSoundDisabled(newValue) } }
    }

    /// Told about presses that get their default action (volume, launch camera…), so the host can
    /// perform it; nil ignores them. Runs where capture handlers run.
    public var defaultActionHandler: DefaultActionHandler? {
        get { state.withLock { $0.defaultActionHandler } }
        set { state.withLock { $0.defaultActionHandler = newValue } }
    }

    /// Called with every output of the router (capture events with their role, default actions,
    /// default sounds), in order, on the feeding thread, just before it is delivered: for logs,
    /// recorders and test rigs. nil: none.
    public var outputObserver: OutputObserver? {
        get { state.withLock { $0.outputObserver } }
        set { state.withLock { $0.outputObserver = newValue } }
    }

    /// True while the capture session runs.
    public var isSessionRunning: Bool { state.withLock { $0.router.isSessionRunning } }

    /// Presses ignored because their handler was busy with another press (Camera Control held, then
    /// volume down: only the first is delivered). See ``CaptureEventRouter``.
    public var ignoredPressCount: UInt64 { state.withLock { $0.router.ignoredPressCount } }

    /// What was not delivered and why, newest last (bounded; see ``CaptureDiagnostic``).
    public var diagnostics: [CaptureDiagnostic] { state.withLock { $0.router.diagnostics } }

    /// ``ignoredPressCount`` and ``diagnostics`` in one look: a press ignored meanwhile is in both or in
    /// neither (two reads could see it in the list and not in the count).
    package var ignoredPresses: (count: UInt64, diagnostics: [CaptureDiagnostic]) {
        state.withLock { ($0.router.ignoredPressCount, $0.router.diagnostics) }
    }

    /// A new stream of every capture event delivered from now on (primary and secondary), in order.
    /// Each access makes a new subscriber; it ends when the interaction is released or the consumer stops,
    /// or when the consumer falls more than `eventBufferLimit` events behind (rather than silently
    /// missing an `ended`: every `began` a stream delivers is closed on it, or the stream ends).
    public var events: AsyncStream<CaptureEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: CaptureEvent.self, bufferingPolicy: .bufferingOldest(eventBufferLimit))
        let key = state.withLock { state in
            let key = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[key] = continuation
            return key
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: key) }
        }
        return stream
    }

    // MARK: Feeding

    /// Tells the interaction whether the capture session runs. Events are delivered only while it does;
    /// stopping cancels the presses in flight.
    public func setSessionRunning(_ running: Bool) {
        let now = clock.nowMicros()
        enqueue { router, outbox in outbox += router.setSessionRunning(running, atHostMicros: now) }
    }

    /// Routes one gesture from the recogniser.
    public func handle(_ gesture: Gesture) {
        let now = clock.nowMicros()
        enqueue { router, outbox in router.handle(gesture, atHostMicros: now, into: &outbox) }
    }

    /// Routes gestures in order.
    public func handle(_ gestures: some Sequence<Gesture>) {
        let now = clock.nowMicros()
        let list = Array(gestures)
        enqueue { router, outbox in outbox += router.handle(list, atHostMicros: now) }
    }

    /// The device is gone: cancels every press in flight (also those on their default action).
    public func deviceLost() {
        let now = clock.nowMicros()
        enqueue { router, outbox in outbox += router.cancelAll(atHostMicros: now) }
    }

    // MARK: Delivery

    /// One output to deliver, with where it goes as they were when it was taken.
    /// (A struct, not a tuple: an optional tuple is copied through the runtime's generic tuple witnesses.)
    private struct Delivering {
        var output: CaptureRouterOutput
        var defaultHandler: DefaultActionHandler?
        var observer: OutputObserver?
        var subscribers: [AsyncStream<CaptureEvent>.Continuation]
    }

    /// Runs `step` on the router, which appends what it produces to the outbox, and delivers that and
    /// what any other thread produced, in order, unless another call is delivering already (that one
    /// delivers it). The first output is taken in the same lock as the step: a press's one event costs
    /// two lock rounds, and no array of its own.
    private func enqueue(_ step: (inout CaptureEventRouter, inout [CaptureRouterOutput]) -> Void) {
        var next = state.withLock { state -> Delivering? in
            step(&state.router, &state.outbox)
            guard !state.isDraining, !state.outbox.isEmpty else { return nil }
            state.isDraining = true
            return Self.takeNext(&state)
        }
        while let current = next {
            current.observer?(current.output)
            deliver(current.output, defaultHandler: current.defaultHandler, subscribers: current.subscribers)
            next = state.withLock { state in Self.takeNext(&state) }
        }
    }

    /// The next output to deliver; nil (and no longer draining) when none is left.
    private static func takeNext(_ state: inout State) -> Delivering? {
        guard !state.outbox.isEmpty else {
            state.isDraining = false
            return nil
        }
        return Delivering(
            output: state.outbox.removeFirst(), defaultHandler: state.defaultActionHandler, observer: state.outputObserver,
            subscribers: state.subscribers.isEmpty ? [] : Array(state.subscribers.values)
        )
    }

    private func deliver(
        _ output: CaptureRouterOutput, defaultHandler: DefaultActionHandler?,
        subscribers: [AsyncStream<CaptureEvent>.Continuation]
    ) {
        switch output {
        case .event(let routed, let role):
            var attached = routed
            if let player = soundPlayer { attached.soundContext = SoundContext(player: player, clock: clock) }
            let event = attached
            for subscriber in subscribers {
                // A consumer so far behind that its buffer is full would silently miss an `ended` or
                // `cancelled`; end its stream instead, so it knows it lost track.
                if case .dropped = subscriber.yield(event) { subscriber.finish() }
            }
            let handler = role == .secondary ? (secondary ?? primary) : primary
            if let handler { run(handler, event) }
        case .defaultAction(let action):
            if let defaultHandler { run(defaultHandler, action) }
        case .defaultSound(let sound, _):
            if let player = soundPlayer {
                Task { try? await player.play(sound) }
            }
        }
    }

    /// Calls `handler` with `value` where handlers run (synchronously: no closure is made).
    private func run<Value: Sendable>(_ handler: @escaping @Sendable (Value) -> Void, _ value: Value) {
        switch delivery {
        case .synchronous: handler(value)
        case .queue(let queue): queue.async { handler(value) }
        }
    }
}
