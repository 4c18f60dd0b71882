import CameraControlCapture
import CameraControlControls
import CameraControlDevice
import CameraControlPosixTransport
import CameraControlRPC
import CameraControlTransport
import CameraControlWire
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The host clock ``CameraControlHost`` reads and sleeps on, microseconds (injected so tests control it).
public struct HostClock: Sendable {
    /// Reads the clock: microseconds since an arbitrary fixed start, never decreasing.
    public var nowMicros: @Sendable () -> UInt64
    /// Sleeps until the clock reads at least the given time (throws when the task is cancelled). For code
    /// timed by this clock; the host's own deadlines are timers on its event loop.
    public var sleepUntilMicros: @Sendable (UInt64) async throws -> Void

    /// A clock from its two operations.
    public init(nowMicros: @escaping @Sendable () -> UInt64, sleepUntilMicros: @escaping @Sendable (UInt64) async throws -> Void) {
        self.nowMicros = nowMicros
        self.sleepUntilMicros = sleepUntilMicros
    }

    /// The system's monotonic clock (`CLOCK_MONOTONIC`), the one ``CaptureClock/continuous`` reads.
    public static let monotonic = HostClock(
        nowMicros: CaptureClock.monotonicMicros,
        sleepUntilMicros: { deadline in
            let now = CaptureClock.monotonicMicros()
            if deadline > now { try await Task.sleep(for: .microseconds(Int64(deadline - now))) }
        })
}

/// A Camera Control device attached to this host, end to end: it connects (handshake, input stream),
/// reconnects after an unplug, estimates the device's clock, puts events in order, recognises gestures,
/// drives the controls overlay (sending its haptics to the device) and delivers capture events to the
/// app's ``CaptureEventInteraction``s, the way Apple's `AVCaptureEventInteraction` and
/// `AVCaptureSession` controls behave.
///
/// ```swift
/// let host = try await CameraControlHost.connect(to: "/dev/ttyACM0")
/// let interaction = CaptureEventInteraction { event in
///     if event.phase == .ended { print("capture from \(event.source)") }
/// }
/// await host.attach(interaction)
/// interaction.setSessionRunning(true)
/// await host.run()   // until stop(), or the device is gone for good
/// ```
///
/// The wiring itself is ``HostCore``'s (sans-IO); this actor adds the I/O: a ``DeviceConnection``, a
/// timer on the event loop for the core's next deadline (nothing ticks while nothing is pending), clock
/// round trips (a few at each connect, then one every ``Configuration/clockResyncInterval``, timed by the
/// loop too) and a serial sender for haptics, so a slow PlayHaptic never holds up gestures. ``run()``
/// owns that work as child tasks of one task group; ``stop()`` ends it at any moment of the host's life.
///
/// Opening a port by its path (`CameraControlHost.connect(to:)`, `init(port:)`) is the
/// `CameraControlPorts` module's: this one links no serial library, so an app that brings its own
/// transport (``init(configuration:eventLoop:opener:)``) links none either.
///
/// **One thread.** The host, its connection and the port of every session its opener opens on the
/// host's loop (as `connect(to:)` does) share one
/// ``EventLoop`` (``eventLoop``): an input event goes from the port's read through the RPC core, the
/// connection, the recogniser and the capture router to the app's handler on that thread, with no hop,
/// as a minimal C host would. Handlers run there too: keep them short (a slow handler delays the next
/// read, not correctness).
public actor CameraControlHost: CaptureSoundPlaying, EventLoopActor {
    /// How the host behaves.
    public struct Configuration: Sendable {
        /// The pipeline's tuning.
        public var core: HostCore.Configuration
        /// Time between reconnect attempts; after handshakes the device refused in a row, twice as long
        /// each time up to 2 s (``DeviceConnection/retryDelay(_:afterRefusals:)``).
        public var retryDelay: Duration
        /// False: the first time the device goes away, the host stops (``run()`` returns).
        public var reconnects: Bool
        /// Round trips for the clock estimate at each connect.
        public var clockSamplesAtConnect: Int
        /// Time between later clock round trips (nil: none).
        public var clockResyncInterval: Duration?
        /// The host clock.
        public var clock: HostClock

        /// The defaults: reconnect every 250 ms, 5 clock round trips, then one every 5 s.
        public init(
            core: HostCore.Configuration = HostCore.Configuration(), retryDelay: Duration = .milliseconds(250),
            reconnects: Bool = true, clockSamplesAtConnect: Int = 5, clockResyncInterval: Duration? = .seconds(5),
            clock: HostClock = .monotonic
        ) {
            self.core = core
            self.retryDelay = retryDelay
            self.reconnects = reconnects
            self.clockSamplesAtConnect = clockSamplesAtConnect
            self.clockResyncInterval = clockResyncInterval
            self.clock = clock
        }
    }

    /// The configuration in use.
    public nonisolated let configuration: Configuration
    /// The loop the host, its connection and the ports it opens run on (its actor executor).
    public nonisolated let eventLoop: any EventLoop
    private let core: HostCore
    private let connection: DeviceConnection

    /// Where the host is in its life. It only moves forward: idle → running → stopping → stopped, or
    /// idle → stopped when ``stop()`` comes first.
    enum Lifecycle: Equatable, Sendable {
        /// Made; nothing runs.
        case idle
        /// ``run()`` owns the connection and the host's child work.
        case running
        /// ``stop()`` was called (or the device went away for good): the child work is winding down.
        case stopping
        /// Done: ``run()`` has returned (or never will run).
        case stopped
    }

    /// What the link to the device is, for the host.
    enum Link: Sendable {
        /// No session.
        case disconnected
        /// A session is up; its clock round trips run.
        case timing(DeviceSession)
        /// A session is up and its clock estimated (``waitUntilConnected()`` returns at once).
        case ready(DeviceSession)
    }

    /// The lifecycle state (see ``Lifecycle``).
    private(set) var lifecycle = Lifecycle.idle
    private var link = Link.disconnected
    /// ``start()``'s task, which runs ``run()``.
    private var background: Task<Void, Never>?
    /// ``run()``'s body waits here until it should cancel its child work.
    private var stopSignal: CheckedContinuation<Void, Never>?
    private var stopSignalled = false
    private var runWaiters: [CheckedContinuation<Void, Never>] = []
    /// ``waitUntilConnected()``'s callers, each with its number (a timed wait ends its own).
    /// Each is resumed with true when a session became ready, false when the host stopped or (a timed
    /// wait) its time passed: what held then, not whatever holds when the waiter runs again.
    private var connectedWaiters: [(id: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
    private var nextWaiterID: UInt64 = 0
    /// The core's next deadline: a timer on the event loop (no task sleeps for it).
    private var deadline: (micros: UInt64, timer: LoopTimer)?
    /// The deadline the timer fired for last: one the core still gives after it was reached (the clock
    /// estimate maps host to device time and back through different samples) waits a millisecond, it does
    /// not spin the loop.
    private var firedDeadline: UInt64?
    /// The next clock resync: a timer on the event loop.
    private var resyncTimer: LoopTimer?
    /// Work for the child tasks of ``run()``: haptics to play, clock round trips to make.
    private var hapticQueue: AsyncStream<HapticPattern>.Continuation?
    private var clockQueue: AsyncStream<ClockWork>.Continuation?
    private var observers: [(observation: HostObservation, body: @Sendable (HostEffect) -> Void)] = []
    private var connectHandlers: [(observation: HostObservation, body: @Sendable (DeviceInfo) -> Void)] = []
    /// The streams of ``effects(bufferingNewest:)``, each with its number (it leaves when it terminates).
    private var effectStreams: [(id: UInt64, continuation: AsyncStream<HostEffect>.Continuation)] = []
    private var nextEffectStreamID: UInt64 = 0

    /// Clock round trips for the clock child of ``run()``.
    private enum ClockWork: Sendable {
        /// A session came up: `roundTrips` round trips, then it is ready.
        case connected(DeviceSession, roundTrips: Int)
        /// One resync round trip.
        case resync(DeviceSession)
    }

    /// True once ``stop()`` was called or the host ended.
    private var stopped: Bool { lifecycle == .stopping || lifecycle == .stopped }

    private nonisolated let offsetSnapshot = Mutex<Int64?>(nil)
    /// Host minus device clock, microseconds, as last estimated (nil while no device is synchronised).
    /// Readable from any thread, e.g. to turn a device timestamp into a latency.
    public nonisolated var clockOffsetMicros: Int64? { offsetSnapshot.withLock { $0 } }

    /// The device's identity and capabilities from the latest handshake (nil before the first).
    public private(set) var deviceInfo: DeviceInfo?
    /// The session in use (nil while disconnected).
    public private(set) var session: DeviceSession?
    /// Why the last session ended (nil while none ended).
    public private(set) var lastDisconnect: RPCError?
    /// Why the host stopped reconnecting on its own, when it did: the device cannot come back under its path
    /// (an open failed with `TransportError.Code.gone`: a pseudo-terminal whose other side closed). ``run()``
    /// has returned then, without ``stop()``; nil otherwise.
    public private(set) var goneForGood: DeviceError?
    /// Sessions opened so far.
    public private(set) var connectionCount = 0
    /// PlayHaptic calls that failed.
    public private(set) var failedHaptics = 0

    /// Opens a session on the host's event loop; called for the first connect and every reconnect.
    public typealias Opener = DeviceConnection.Opener

    /// A host whose sessions are opened by `opener` (first connect and every reconnect), on `eventLoop`
    /// (which the host shuts down when it stops) or a loop of its own. Nothing happens until ``start()`` or
    /// ``run()``. `opener` is given the host's loop: a session opened on it delivers its input to the host
    /// on the thread that read it, first session and reconnects alike.
    public init(configuration: Configuration = Configuration(), eventLoop: (any EventLoop)? = nil, opener: @escaping Opener) {
        let loop = eventLoop ?? EventLoops.make(name: "cc-host")
        self.configuration = configuration
        self.eventLoop = loop
        core = HostCore(configuration: configuration.core)
        connection = DeviceConnection(retryDelay: configuration.retryDelay, eventLoop: loop, opener: opener)
    }

    deinit {
        eventLoop.shutdown()
    }

    /// Opens a session with `opener` now (so a wrong port fails here, with the reason), starts the host on
    /// it and returns once it is connected and its clock estimated; `opener` opens the later sessions
    /// (reconnects) too, each on the host's own event loop (its argument). A device lost before its clock
    /// was estimated has ``reconnectWithin`` to come back, and so has one whose link ended during the first
    /// handshake (`camctl serve` closes the connection of an app that another sends to the background, its
    /// handshake included): the host opens it again as it reconnects, every ``Configuration/retryDelay``.
    /// A device that answers that it is held for another host (``DeviceError/isDeviceBusy``: `camctl serve`
    /// while another app is in front) is waited for as long as it answers so, and ``reconnectWithin`` after
    /// its last such answer: the app gets it in its turn. A port that does not open, a handshake no device
    /// answers in time and a refused one fail with no retry on the first open. After a first link lost in its
    /// handshake, the opens that follow are the host's reconnects, tried again like any reconnect, except a
    /// refused handshake (another version, or an answered error such as `camctl serve`'s
    /// one-process-one-app `ALREADY_EXISTS`): connect throws it.
    ///
    /// `prepare` runs before the host starts: once the first session is open (or, its link lost in the
    /// handshake, before the host opens it again). Attach the capture interactions, controls and observers
    /// there, and a press made as the session starts reaches them (attached after `connect` returns, they see
    /// the presses that begin after that).
    ///
    /// - Throws: ``DeviceError`` from the first open and handshake; ``DeviceError/Code/closed`` when the
    ///   device went away then (with ``Configuration/reconnects``) and did not come back in time (the host is
    ///   stopped); the reopen's ``DeviceError/Code/transport`` error when the device went away then for good
    ///   (``goneForGood``).
    public static func connect(
        configuration: Configuration = Configuration(), prepare: @Sendable (CameraControlHost) async -> Void = { _ in },
        opener: @escaping Opener
    ) async throws(DeviceError) -> CameraControlHost {
        let loop = EventLoops.make(name: "cc-host")
        let first: FirstSession
        do {
            first = FirstSession(.opened(try await opener(loop)))
        } catch {
            // A link that ended during the handshake: the device went away (or camctl serve sent this app to
            // the background). It is opened again as after a lost session, within the same time. A device
            // held for another host (serve's answer to an app in the background) is waited for.
            guard configuration.reconnects, error.code == .handshakeFailed, error.rpcError?.code == .unavailable else {
                loop.shutdown()
                throw error
            }
            first = FirstSession(.lostInHandshake(error))
            if error.isDeviceBusy { first.noteBusy() }
        }
        let retryDelay = configuration.retryDelay
        let host = CameraControlHost(configuration: configuration, eventLoop: loop) { loop async throws(DeviceError) -> DeviceSession in
            switch first.take() {
            case .opened(let session): return session
            case .lostInHandshake: try? await Task.sleep(for: retryDelay)  // as after a lost session
            case .taken: break
            }
            do throws(DeviceError) {
                return try await opener(loop)
            } catch {
                // Opened again after a first link lost in its handshake: a device (or camctl serve) that
                // answers by refusing is not waited for; connect fails with its reason.
                // Not awaited: stop() waits for the work this opener runs in.
                if first.refuses(error), let host = first.host { Task { await host.stop() } }
                if error.isDeviceBusy { first.noteBusy() }
                throw error
            }
        }
        first.host = host
        await prepare(host)
        await host.start()
        // Waited for as long as the device answers that it is held for another host (this app is in the
        // background under camctl serve): it comes to the front when that one leaves.
        var connected = await host.waitUntilConnected(within: reconnectWithin)
        while !connected, !(await host.stopped), first.refusal == nil, let left = first.busyWaitLeft(of: reconnectWithin) {
            connected = await host.waitUntilConnected(within: left)
        }
        guard connected else {
            if let refusal = first.refusal {
                await host.stop()
                throw refusal
            }
            if var gone = await host.goneForGood {
                await host.stop()
                gone.message = "the device went away while connecting, gone for good: \(gone.message)"
                throw gone
            }
            let lost = await host.lastDisconnect.map { ": \($0)" } ?? first.lostInHandshake.map { ": \($0.message)" } ?? ""
            await host.stop()
            let waited = configuration.reconnects ? " and did not come back within \(reconnectWithin)" : ""
            throw DeviceError(.closed, "the device went away while connecting\(waited)\(lost)")
        }
        first.connectEnded()
        return host
    }

    /// How long ``connect(configuration:prepare:opener:)`` waits for a device lost before its clock was estimated.
    public static let reconnectWithin: Duration = .seconds(10)

    // MARK: Attaching

    /// Delivers capture events to `interaction` (several may be attached; the first is the one the
    /// controls session checks).
    public func attach(_ interaction: CaptureEventInteraction) {
        core.attach(interaction)
    }

    /// Stops delivering to `interaction` (its presses in flight are cancelled).
    public func detach(_ interaction: CaptureEventInteraction) {
        core.detach(interaction)
    }

    /// Makes `controls` the host's controls session (for a session made by hand; ``makeControlsSession(overlay:)``
    /// makes one): the gestures drive its overlay, its haptics are played on the device. It replaces the
    /// session attached or made before, which the gestures no longer drive; ``makeControlsSession(overlay:)``
    /// returns it from now on.
    public func attach(_ controls: CaptureControlsSession) {
        core.attach(controls)
    }

    /// The camera a light press held locks focus and exposure on (AE/AF lock), with the app's override of
    /// the host setting (nil: follow ``setFocusExposureLockEnabled(_:)``). See
    /// ``HostCore/attachCamera(_:focusExposureLock:lockAfterMicros:)``.
    public func attachCamera(_ camera: (any CameraDevice)?, focusExposureLock override: Bool? = nil) {
        core.attachCamera(camera, focusExposureLock: override)
    }

    /// The app's interface orientation (portrait, landscape left/right, upside down): slides and the
    /// overlay's placement follow it (``HostCore/interfaceOrientation``). Call it whenever the UI rotates.
    public func setInterfaceOrientation(_ orientation: InterfaceOrientation) {
        core.interfaceOrientation = orientation
    }

    /// The user's Camera Control settings in force: the device's, read at every connect from a device that keeps
    /// them (``Capabilities/hasSettings``), else the last ``setSettings(_:)``.
    public var settings: CameraControlSettings { core.settings }

    /// The user's Camera Control settings (``HostCore/settings``).
    ///
    /// A device that keeps settings (``Capabilities/hasSettings``, protocol 1.2) gets all four with
    /// `ConfigService/SetSettings`: it stores them (across its reset when it announces
    /// ``Capabilities/settingsPersist``), applies the force preset to its thresholds and stops the events the
    /// switches turn off; the host reads them back at every connect. An older device gets only a changed force
    /// preset, as `ConfigService/Configure` with the preset's thresholds (the rest of its configuration kept),
    /// and forgets it at its reset.
    ///
    /// - Throws: the ``RPCError`` of SetSettings (`FAILED_PRECONDITION` when the preset does not fit the
    ///   configured full press, `INTERNAL` when the device's store failed), GetConfig or Configure, or
    ///   ``DeviceError`` when no device is connected and the settings must reach it (the host applies them
    ///   anyway).
    public func setSettings(_ settings: CameraControlSettings) async throws {
        let forceChanged = settings.lightPressForce != core.settings.lightPressForce
        core.settings = settings
        if deviceInfo?.capabilities.hasSettings == true {
            guard let session else { throw DeviceError(.closed, "no device is connected") }
            try await session.setSettings(settings.wireSettings)
            return
        }
        guard forceChanged else { return }
        guard let session else { throw DeviceError(.closed, "no device is connected") }
        var config = try await session.config()
        config.thresholds = settings.lightPressForce.thresholds
        _ = try await session.configure(config)
    }

    /// The device's stored settings become the host's (a device with ``Capabilities/hasSettings``, at connect).
    private func adoptDeviceSettings(from session: DeviceSession) async {
        guard let response = try? await session.settings(), let settings = response.settings,
            let adopted = CameraControlSettings(wire: settings, keeping: core.settings), lifecycle == .running
        else { return }
        core.settings = adopted
    }

    /// The host's AE/AF lock setting (off by default, as Apple's); switching it off unlocks at once.
    public func setFocusExposureLockEnabled(_ enabled: Bool) {
        core.isFocusExposureLockEnabled = enabled
    }

    /// The host's controls session, sized from the device's capabilities (`supports_controls`,
    /// `max_controls`). A host has one set of controls, as an `AVCaptureSession` has one `controls` list:
    /// the first call makes the session and attaches it, every later call returns that same session (a
    /// controls session given to `attach(_:)` counts as made).
    ///
    /// It can be made at any moment of the host's life: in the `prepare` step of
    /// ``connect(configuration:prepare:opener:)`` or before ``run()``, as an app sets up its
    /// `AVCaptureSession` controls before the session runs. Made before a device has connected, it takes
    /// controls at once and is bound to the device when it connects (``CaptureControlsSession/bind(to:)``);
    /// it is bound again at every reconnect.
    ///
    /// - Throws: ``ControlError`` with ``ControlError/Code/controlsSessionExists`` when the host's session
    ///   exists with another `overlay` configuration (it is not replaced), or as
    ///   ``CaptureControlsSession/init(capabilities:configuration:)``.
    public func makeControlsSession(
        overlay: OverlayConfiguration = OverlayConfiguration()
    ) throws(ControlError)
        -> CaptureControlsSession
    {
        if let existing = core.controls {
            guard existing.overlayConfiguration == overlay else {
                throw ControlError(
                    .controlsSessionExists,
                    "the host already has its controls session, made with another overlay configuration; a host has one set of controls: use that session"
                )
            }
            return existing
        }
        let session = try CaptureControlsSession(
            capabilities: deviceInfo.map { ControlsCapabilities($0.capabilities) }, configuration: overlay)
        core.attach(session)
        return session
    }

    /// Calls `observer` with every ``HostEffect``, in order, as it happens (inside the host: keep it short),
    /// until the returned observation is cancelled.
    @discardableResult
    public func observe(_ observer: @escaping @Sendable (HostEffect) -> Void) -> HostObservation {
        let observation = makeObservation()
        observers.append((observation, observer))
        core.reportsInputsAndGestures = true
        return observation
    }

    /// A new stream of every ``HostEffect`` from now on, in order. It keeps the newest `limit` effects for a
    /// consumer that falls behind (capture events have their own lossless path: the interactions), and
    /// finishes when the host stops. A consumer that stops (its task cancelled, or the stream dropped)
    /// ends it: the host lets go of it.
    public func effects(bufferingNewest limit: Int = 1024) -> AsyncStream<HostEffect> {
        let (stream, continuation) = AsyncStream.makeStream(of: HostEffect.self, bufferingPolicy: .bufferingNewest(max(1, limit)))
        if stopped {
            continuation.finish()
        } else {
            let id = nextEffectStreamID
            nextEffectStreamID += 1
            continuation.onTermination = { [weak self] _ in
                guard let self else { return }
                Task { await self.removeEffectStream(id) }
            }
            effectStreams.append((id, continuation))
            core.reportsInputsAndGestures = true
        }
        return stream
    }

    /// Calls `handler` with the device's identity each time a session comes up after this call (before
    /// any effect of that session), until the returned observation is cancelled.
    @discardableResult
    public func onConnect(_ handler: @escaping @Sendable (DeviceInfo) -> Void) -> HostObservation {
        let observation = makeObservation()
        connectHandlers.append((observation, handler))
        return observation
    }

    /// An observation whose cancellation has the host drop what it registered, on the host.
    private func makeObservation() -> HostObservation {
        HostObservation { [weak self] in
            guard let self else { return }
            Task { await self.removeCancelledRegistrations() }
        }
    }

    /// Closures registered and streams open: what the host holds for its observers.
    var registrationCount: Int { observers.count + connectHandlers.count + effectStreams.count }

    /// Lets go of the cancelled observers and connect handlers.
    private func removeCancelledRegistrations() {
        observers.removeAll { $0.observation.isCancelled }
        connectHandlers.removeAll { $0.observation.isCancelled }
        updateReporting()
    }

    /// Lets go of a stream that terminated.
    private func removeEffectStream(_ id: UInt64) {
        effectStreams.removeAll { $0.id == id }
        updateReporting()
    }

    /// Each press's input and gesture effects only for someone who observes them (observe(_:), effects()).
    private func updateReporting() {
        core.reportsInputsAndGestures = !observers.isEmpty || !effectStreams.isEmpty
    }

    // MARK: Running

    /// Runs ``run()`` in a task of its own (does nothing when running, or after ``stop()``).
    public func start() {
        guard lifecycle == .idle, background == nil else { return }
        background = Task { await self.run() }
    }

    /// Runs the host until ``stop()``, until the device went away with ``Configuration/reconnects`` false, or
    /// until it is gone for good (``goneForGood``): the connection (connect, stream, reconnect), the haptic
    /// sender and the clock round trips are child tasks of this call, cancelled together when it ends. Called while running, it returns when
    /// the host stops; after ``stop()`` at once.
    public func run() async {
        switch lifecycle {
        case .idle:
            break
        case .running, .stopping:
            await waitUntilStopped()
            return
        case .stopped:
            return
        }
        lifecycle = .running
        core.observer = { [unowned self] effect in self.handleEffect(effect) }
        updateReporting()
        let (haptics, hapticQueue) = AsyncStream<HapticPattern>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let (clockWork, clockQueue) = AsyncStream<ClockWork>.makeStream(bufferingPolicy: .bufferingNewest(16))
        self.hapticQueue = hapticQueue
        self.clockQueue = clockQueue
        await withTaskGroup(of: Void.self) { group in
            // The connection shares this host's executor (``eventLoop``): its activity is handled right where
            // it happens, an input event on the thread that read it. When it is done (stopped, or out of
            // attempts), so is the host.
            group.addTask {
                await self.connection.run { [weak self] activity, session in
                    self?.handleOnLoop(activity, session: session)
                }
                await self.connectionEnded()
            }
            group.addTask {
                for await pattern in haptics { await self.play(pattern) }
            }
            group.addTask {
                for await work in clockWork { await self.perform(work) }
            }
            await waitForStopSignal()
            // The session closes first (its input stream ends), then whatever still runs is cancelled: a
            // handshake in progress, a haptic or clock round trip in flight.
            await connection.stop()
            hapticQueue.finish()
            clockQueue.finish()
            group.cancelAll()
        }
        finished()
    }

    /// Returns once a session is up and its clock estimated (at once when one is, or the host stopped).
    public func waitUntilConnected() async {
        if isConnectedOrStopped { return }
        _ = await waitForConnection(id: takeWaiterID())
    }

    /// Returns true once a session is up and its clock estimated (at once when one is); false when `timeout`
    /// passes first or the host stops: a device that does not come back keeps nobody waiting for ever.
    public func waitUntilConnected(within timeout: Duration) async -> Bool {
        if case .ready = link { return true }
        if stopped { return false }
        let id = takeWaiterID()
        let timer = eventLoop.schedule(after: timeout) { [weak self] in
            self?.assumeIsolatedOnLoop { host in host.endWait(id) }
        }
        let connected = await waitForConnection(id: id)
        timer.cancel()
        return connected
    }

    /// Waits until ``connectedWaiters`` is resumed: connected, stopped, or (a timed wait) its time passed.
    private func waitForConnection(id: UInt64) async -> Bool {
        // The call is a suspension point: other jobs of the host may run before the body, so it looks again.
        await withCheckedContinuation { continuation in
            if case .ready = link {
                continuation.resume(returning: true)
            } else if stopped {
                continuation.resume(returning: false)
            } else {
                connectedWaiters.append((id, continuation))
            }
        }
    }

    private func takeWaiterID() -> UInt64 {
        defer { nextWaiterID += 1 }
        return nextWaiterID
    }

    /// A timed wait's time passed: its caller goes on.
    private func endWait(_ id: UInt64) {
        guard let index = connectedWaiters.firstIndex(where: { $0.id == id }) else { return }
        connectedWaiters.remove(at: index).continuation.resume(returning: false)
    }

    /// Stops: presses in flight are cancelled, the session closes, ``run()`` returns. Before ``start()``
    /// or ``run()``, the host never runs.
    public func stop() async {
        switch lifecycle {
        case .idle:
            lifecycle = .stopped
            finished()
            return
        case .running:
            lifecycle = .stopping
        case .stopping, .stopped:
            break
        }
        if case .disconnected = link {
        } else {
            core.deviceLost(atHostMicros: now)
        }
        link = .disconnected
        session = nil
        rearm()
        signalStop()
        await waitUntilStopped()
    }

    /// Plays a capture sound on the current device (`FeedbackService/PlaySound`).
    ///
    /// - Throws: ``DeviceError`` with ``DeviceError/Code/closed`` while no device is connected, or the
    ///   ``RPCError`` of the call.
    public func play(_ sound: Sound) async throws {
        guard let session else { throw DeviceError(.closed, "no device is connected") }
        _ = try await session.playSound(sound)
    }

    // MARK: Inside

    /// The host runs on ``eventLoop``, with its ``DeviceConnection`` and the ports it opens: an input event
    /// goes from the port's read to the host's handling of it on one thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { eventLoop.asUnownedSerialExecutor() }

    private var now: UInt64 { configuration.clock.nowMicros() }

    /// ``handle(_:session:)`` from the connection's handler, which runs on ``eventLoop`` outside any job,
    /// isolated as ``EventLoopActor/assumeIsolatedOnLoop(_:)`` does, through a plain function: an input
    /// event's path allocates no closure context for the isolated call (docs/PERFORMANCE.md).
    private nonisolated func handleOnLoop(_ activity: DeviceConnection.Activity, session: DeviceSession?) {
        precondition(eventLoop.isCurrent, "CameraControlHost: not on its event loop")
        let isolated: (isolated CameraControlHost, DeviceConnection.Activity, DeviceSession?) -> Void = { host, activity, session in
            host.handle(activity, session: session)
        }
        // The host's executor is `eventLoop` and the caller runs on it: the unchecked call `assumeIsolated`
        // makes once its check passed.
        unsafeBitCast(isolated, to: ((CameraControlHost, DeviceConnection.Activity, DeviceSession?) -> Void).self)(
            self, activity, session)
    }

    /// Handles one activity of the connection, the moment it happens (on the shared executor).
    private func handle(_ activity: DeviceConnection.Activity, session connected: DeviceSession?) {
        // After stop() every press was cancelled: what the connection still had queued is not delivered
        // (a `began` now could never be closed).
        guard lifecycle == .running else { return }
        switch activity {
        case .connected(let info):
            deviceInfo = info
            connectionCount += 1
            for handler in connectHandlers where !handler.observation.isCancelled { handler.body(info) }
            session = connected
            core.connected(info.capabilities)
            // A loose first sample from the handshake (read within the last 100 ms or so), so device time
            // moves even if every clock ping below is lost; tight ping samples take over at once.
            let connectedAt = now
            core.addClockSample(
                sentAtHostMicros: connectedAt &- min(connectedAt, 100_000), receivedAtHostMicros: connectedAt &+ 100_000,
                deviceMicros: info.deviceTimeMicros)
            resyncTimer?.cancel()
            if let connected, info.capabilities.hasSettings {
                Task { await self.adoptDeviceSettings(from: connected) }
            }
            if let connected {
                link = .timing(connected)
                clockQueue?.yield(.connected(connected, roundTrips: configuration.clockSamplesAtConnect))
            }
        case .input(let event):
            let time = now
            core.receive(event, atHostMicros: time)
            core.advance(toHostMicros: time)
        case .disconnected(let error):
            lastDisconnect = error
            link = .disconnected
            resyncTimer?.cancel()
            session = nil
            core.deviceLost(atHostMicros: now)
            publishOffset()
            if !configuration.reconnects {
                lifecycle = .stopping
                signalStop()
            }
        case .connectFailed:
            break
        }
        rearm()
    }

    /// The clock child's work: round trips on `session` while it is still the current one.
    private func perform(_ work: ClockWork) async {
        switch work {
        case .connected(let connected, let roundTrips):
            await synchroniseClock(connected, roundTrips: roundTrips)
            guard lifecycle == .running, case .timing(let current) = link, current === connected else { return }
            link = .ready(connected)
            scheduleResync(connected)
            let waiters = connectedWaiters.map(\.continuation)
            connectedWaiters = []
            for waiter in waiters { waiter.resume(returning: true) }
            rearm()
        case .resync(let connected):
            guard case .ready(let current) = link, current === connected else { return }
            let clock = configuration.clock
            let sent = clock.nowMicros()
            if let reply = try? await connected.ping() {
                addClockSample(sent: sent, received: clock.nowMicros(), device: reply.deviceTimeMicros)
            }
            if case .ready(let still) = link, still === connected { scheduleResync(connected) }
        }
    }

    /// The next resync round trip, a timer on the loop (none without ``Configuration/clockResyncInterval``).
    private func scheduleResync(_ connected: DeviceSession) {
        resyncTimer?.cancel()
        guard let interval = configuration.clockResyncInterval else { return }
        resyncTimer = eventLoop.schedule(after: interval) { [weak self] in
            self?.assumeIsolatedOnLoop { host in
                guard host.lifecycle == .running else { return }
                host.clockQueue?.yield(.resync(connected))
            }
        }
    }

    /// The connection is done (stopped, or it gave up on a device gone for good): so is the host.
    private func connectionEnded() async {
        if lifecycle == .running, let gaveUp = await connection.gaveUp { goneForGood = gaveUp }
        signalStop()
    }

    /// Lets ``run()`` cancel its child work and end (once).
    private func signalStop() {
        if lifecycle == .running { lifecycle = .stopping }
        stopSignalled = true
        stopSignal?.resume()
        stopSignal = nil
    }

    private func waitForStopSignal() async {
        if stopSignalled { return }
        // The call is a suspension point: other jobs of the host (a stop()) may run before the body, so it
        // looks again; a signal missed here would leave run() waiting for ever.
        await withCheckedContinuation { continuation in
            if stopSignalled { continuation.resume() } else { stopSignal = continuation }
        }
    }

    /// True once a session is ready, or the host stopped: ``waitUntilConnected()`` returns.
    private var isConnectedOrStopped: Bool {
        if case .ready = link { return true }
        return stopped
    }

    /// Returns once ``run()`` has ended (``finished()``).
    private func waitUntilStopped() async {
        if lifecycle == .stopped { return }
        // The call is a suspension point: run() may finish before the body, so it looks again.
        await withCheckedContinuation { continuation in
            if lifecycle == .stopped { continuation.resume() } else { runWaiters.append(continuation) }
        }
    }

    /// ``run()`` has ended (or never will): everyone waiting is let go.
    private func finished() {
        lifecycle = .stopped
        link = .disconnected
        session = nil
        deadline?.timer.cancel()
        deadline = nil
        resyncTimer?.cancel()
        hapticQueue?.finish()
        clockQueue?.finish()
        eventLoop.shutdown()
        for stream in effectStreams { stream.continuation.finish() }
        effectStreams = []
        let waiters = runWaiters
        let connecting = connectedWaiters.map(\.continuation)
        runWaiters = []
        connectedWaiters = []
        for waiter in waiters { waiter.resume() }
        for waiter in connecting { waiter.resume(returning: false) }
    }

    /// Keeps exactly one timer on the event loop, for the core's next deadline.
    private func rearm() {
        let next = stopped ? nil : core.nextDeadlineHostMicros
        guard next != deadline?.micros else { return }
        deadline?.timer.cancel()
        deadline = nil
        guard let next else { return }
        let current = now
        let earliest = next == firedDeadline ? current + Self.repeatedDeadlineMicros : current
        let delay = Duration.microseconds(Int64(max(next, earliest) - current))
        let timer = eventLoop.schedule(after: delay) { [weak self] in
            self?.assumeIsolatedOnLoop { host in host.timerFired(next) }
        }
        deadline = (next, timer)
    }

    /// How long a deadline the core gives again once reached waits (``firedDeadline``).
    static let repeatedDeadlineMicros: UInt64 = 1_000

    private func timerFired(_ micros: UInt64) {
        guard deadline?.micros == micros else { return }
        deadline = nil
        firedDeadline = micros
        core.advance(toHostMicros: now)
        rearm()
    }

    private func handleEffect(_ effect: HostEffect) {
        if case .overlay(.haptic(let pattern, _), _) = effect { hapticQueue?.yield(pattern) }
        for observer in observers where !observer.observation.isCancelled { observer.body(effect) }
        for stream in effectStreams { stream.continuation.yield(effect) }
    }

    private func play(_ pattern: HapticPattern) async {
        guard let session else { return }
        do {
            _ = try await session.playHaptic(pattern)
        } catch {
            failedHaptics += 1
        }
    }

    private func synchroniseClock(_ session: DeviceSession, roundTrips: Int) async {
        let clock = configuration.clock
        for _ in 0..<max(0, roundTrips) {
            let sent = clock.nowMicros()
            guard let reply = try? await session.ping() else { continue }
            core.addClockSample(sentAtHostMicros: sent, receivedAtHostMicros: clock.nowMicros(), deviceMicros: reply.deviceTimeMicros)
        }
        publishOffset()
    }

    private func publishOffset() {
        let offset = core.clock.offsetMicros(atHostMicros: now)
        offsetSnapshot.withLock { $0 = offset }
    }

    private func addClockSample(sent: UInt64, received: UInt64, device: UInt64) {
        core.addClockSample(sentAtHostMicros: sent, receivedAtHostMicros: received, deviceMicros: device)
        publishOffset()
        rearm()
    }
}

/// What the first open of ``CameraControlHost/connect(configuration:prepare:opener:)`` gave, for the host's
/// first connect, once.
private final class FirstSession: Sendable {
    enum State: Sendable {
        /// The session opened: the first connect takes it.
        case opened(DeviceSession)
        /// The link ended during the handshake: the first connect opens again, after the retry delay.
        case lostInHandshake(DeviceError)
        /// Taken by the first connect: later ones open.
        case taken
    }

    private let state: Mutex<State>
    /// Why the first open failed, when its link ended during the handshake.
    let lostInHandshake: DeviceError?
    private let refused = Mutex<(DeviceError?, connecting: Bool)>((nil, true))
    private let hostReference = Mutex<WeakHost>(WeakHost())

    private struct WeakHost: Sendable {
        weak var host: CameraControlHost?
    }

    /// The host the first connect made (held weakly), for the opener to stop on a refusal.
    var host: CameraControlHost? {
        get { hostReference.withLock { $0.host } }
        set { hostReference.withLock { $0.host = newValue } }
    }

    /// The refusal that ended the first connect's wait, if one did.
    var refusal: DeviceError? { refused.withLock { $0.0 } }

    /// True (and noted) when `error`, from opening again while the first connect waits, is the device's
    /// refusal (another version, or a handshake answered with an error): the connect fails with it. Open
    /// failures and unanswered handshakes are retried as reconnects; once the first connect has returned,
    /// nothing is noted.
    func refuses(_ error: DeviceError) -> Bool {
        refused.withLock { state in
            guard error.isRefusedHandshake, state.connecting, state.0 == nil else { return false }
            state.0 = error
            return true
        }
    }

    /// The first connect returned: later refusals are the host's reconnects' own.
    func connectEnded() { refused.withLock { $0.connecting = false } }

    /// When an open was last answered that the device is held for another host (``DeviceError/isDeviceBusy``).
    private let lastBusyAnswer = Mutex<ContinuousClock.Instant?>(nil)

    /// An open was answered that the device is held for another host.
    func noteBusy() { lastBusyAnswer.withLock { $0 = .now } }

    /// What is left of `wait` since an open was last answered busy (the device is there, held for another
    /// host); nil when none was, or `wait` has passed since.
    func busyWaitLeft(of wait: Duration) -> Duration? {
        guard let last = lastBusyAnswer.withLock({ $0 }) else { return nil }
        let left = wait - (ContinuousClock.now - last)
        return left > .zero ? left : nil
    }

    init(_ state: State) {
        self.state = Mutex(state)
        if case .lostInHandshake(let error) = state { lostInHandshake = error } else { lostInHandshake = nil }
    }

    func take() -> State {
        state.withLock { state in
            defer { state = .taken }
            return state
        }
    }
}
