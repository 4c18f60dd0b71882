import CameraControlRPC
import CameraControlTransport
import CameraControlWire
import Synchronization

/// A live session with one device: the handshake done, typed calls for every v1 service.
///
/// ```swift
/// let session = try await DeviceSession.connect(transport: transport)  // or open(path:), CameraControlPorts
/// print(session.info.summary)
/// for try await event in try await session.inputEvents() { … }
/// ```
///
/// Every call throws ``RPCError``; the codes each can throw are listed on it. A session does not
/// reconnect by itself: ``DeviceConnection`` does that. It holds no state of its own beyond what the
/// handshake said, so its calls run on the caller's executor straight into the ``RPCClient``.
public final class DeviceSession: Sendable {
    /// The protocol version this host speaks.
    public static let hostVersion = ProtocolVersion(major: 1, minor: 2)
    /// How long the first handshake attempt waits for its response; each later one waits twice as long.
    public static let firstHandshakeWait: Duration = .milliseconds(100)
    /// How long an attempt waits for its response once the device has acknowledged its request (at most
    /// until the handshake's deadline): the device has it, and its response is reliable. A 1,024-byte frame
    /// (the largest a device may announce) takes 1.07 s at 9600 baud; this covers it behind another one.
    public static let handshakeWaitOnceAcknowledged: Duration = .seconds(2)
    /// How long the handshake waits before asking again on the same link after an answer that the device is
    /// held for another host (``DeviceError/isDeviceBusy``: `camctl serve` while this app waits in the
    /// background).
    public static let busyHandshakeInterval: Duration = .milliseconds(500)

    /// The RPC client underneath (for raw calls and counters).
    public let client: RPCClient
    /// What the device announced in the handshake.
    public let info: DeviceInfo

    private init(client: RPCClient, info: DeviceInfo) {
        self.client = client
        self.info = info
    }

    /// Handshakes over an open transport on `eventLoop` (or a loop of the transport's own), timed by the
    /// loop's clock (docs/PROTOCOL.md §9, v1.1): the system's, or a test's `ManualClock`.
    ///
    /// The handshake `REQUEST` is sent reliably (retransmitted until the device acknowledges it), and
    /// re-sent with a fresh call id with backoff: an attempt waits 100 ms, then 200 ms, 400 ms, … for its
    /// response, until `attempts` attempts were made or `deadline` has passed (the last attempt gets the
    /// rest of it). That covers line noise after a port opens, and bridges that open late. Once the device
    /// acknowledges an attempt's request, that attempt waits ``handshakeWaitOnceAcknowledged`` (within
    /// `deadline`): on a slow line the response takes longer than the backoff to arrive, and a new attempt
    /// would only queue another one behind it (docs/PROTOCOL.md §9, v1.2). Nor does an attempt end while the
    /// device is still sending when its wait runs out (for as long again at most): its `ACK` may be behind
    /// what is on the line (`ConnectionCore.deviceSendingGrace`). An attempt answered `ERROR UNAVAILABLE`
    /// (the device is held for another host) is followed by another on the same link after
    /// ``busyHandshakeInterval``, within `deadline`: the link stays open, as `camctl serve` expects of an app
    /// waiting in the background (``DeviceError/isDeviceBusy``).
    ///
    /// - Throws: ``DeviceError``: ``DeviceError/Code/handshakeFailed`` (the RPC error is attached, and
    ///   ``DeviceError/unframedBytesHeard`` when bytes but no frame came back; a device of another major
    ///   answers `FAILED_PRECONDITION`, reported as ``DeviceError/Code/versionMismatch``),
    ///   ``DeviceError/Code/badHandshake``.
    public static func connect(
        transport: any EventLoopTransport, hostName: String = "camctl", attempts: Int = 8,
        deadline: Duration = .seconds(3), eventLoop: (any EventLoop)? = nil
    ) async throws(DeviceError) -> DeviceSession {
        let client = RPCClient(
            transport: transport,
            configuration: RPCClient.Configuration(connection: ConnectionConfiguration(firstCallID: nextFirstCallID())),
            eventLoop: eventLoop)
        let request = HandshakeRequest(hostVersion: hostVersion, hostName: hostName)
        var lastError: RPCError?
        let start = client.now
        var wait = Self.firstHandshakeWait
        let attempts = max(1, attempts)
        for attempt in 0..<attempts {
            let remaining = deadline - (client.now - start)
            guard remaining > .zero else { break }
            let thisWait = attempt == attempts - 1 ? remaining : min(wait, remaining)
            wait *= 2
            do {
                let response: HandshakeResponse = try await client.unary(
                    .deviceHandshake, request, deadline: thisWait,
                    waitOnceAcknowledged: min(Self.handshakeWaitOnceAcknowledged, remaining))
                let info: DeviceInfo
                do {
                    info = try DeviceInfo(handshake: response, hostVersion: hostVersion)
                } catch {
                    client.close()
                    throw error
                }
                client.markSessionEstablished(
                    heartbeatInterval: info.capabilities.heartbeatIntervalMillis > 0
                        ? .milliseconds(Int(info.capabilities.heartbeatIntervalMillis)) : nil,
                    maxFrameBytes: Int(info.capabilities.maxFrameBytes),
                    streamsConfirmed: info.negotiatedVersion.minor >= 1)
                return DeviceSession(client: client, info: info)
            } catch let error as RPCError {
                lastError = error
                if error.code == .failedPrecondition {
                    client.close()
                    throw DeviceError(.versionMismatch, error.message, rpcError: error)
                }
                if error.code == .unavailable, error.isReportedByDevice {
                    // Held for another host: asked again on this link, which stays open, until the deadline.
                    let pause = min(Self.busyHandshakeInterval, deadline - (client.now - start))
                    guard pause > .zero, (try? await Task.sleep(for: pause)) != nil else { break }
                    continue
                }
                if error.code != .deadlineExceeded { break }
            } catch let error as DeviceError {
                throw error
            } catch {
                lastError = RPCError(code: .unknown, message: "\(error)")
                break
            }
        }
        let wire = client.counters.wire
        client.close()
        var failure = DeviceError(
            .handshakeFailed, lastError.map { "handshake failed: \($0)" } ?? "handshake failed", rpcError: lastError)
        if failure.isUnansweredHandshake, wire.framesDecoded == 0, wire.bytesReceived > 0 {
            failure.unframedBytesHeard = wire.bytesReceived
            failure.message += " (\(wire.bytesReceived) bytes came back, but no frame of this protocol)"
        }
        throw failure
    }

    // MARK: DeviceService

    /// Round trip with a payload echoed back.
    /// - Throws: ``RPCError``: `DEADLINE_EXCEEDED`, `UNAVAILABLE`.
    public func ping(_ payload: [UInt8] = [], deadline: Duration? = nil) async throws(RPCError) -> PingResponse {
        try await client.unary(.devicePing, PingRequest(payload: payload), deadline: deadline)
    }

    // MARK: InputService

    /// Every input event from now on; ends only by cancellation or a link failure.
    /// - Throws: ``RPCError`` from the iterator: `UNAVAILABLE` when the link is lost, `CANCELLED`.
    public func inputEvents() async throws(RPCError) -> RPCStream<InputEvent> {
        try client.serverStream(.inputStreamInputEvents, StreamInputEventsRequest())
    }

    /// Every input event from now on, handed to `handler` on `loop` as it arrives; on the loop that drives
    /// this session's port, synchronously during the read (see
    /// `RPCClient.serverStream(_:_:as:deadline:deliveringOn:to:)`). The last call is `.ended`, with
    /// `UNAVAILABLE` when the link is lost or `CANCELLED` after ``StreamSubscription/cancel()``.
    /// - Throws: ``RPCError``: `UNAVAILABLE` when the session is closed.
    public func inputEvents(
        deliveringOn loop: any EventLoop, to handler: @escaping @Sendable (StreamEvent<InputEvent>) -> Void
    ) throws(RPCError) -> StreamSubscription {
        try client.serverStream(.inputStreamInputEvents, StreamInputEventsRequest(), deliveringOn: loop, to: handler)
    }

    /// Raw conditioned samples at the configured rate (best-effort).
    /// - Throws: ``RPCError``: `UNAVAILABLE`; `UNIMPLEMENTED` on a device without raw streaming.
    public func rawSamples(samplesPerBatch: UInt32 = 0) async throws(RPCError) -> RPCStream<RawSampleBatch> {
        try client.serverStream(
            .inputStreamRawSamples, StreamRawSamplesRequest(samplesPerBatch: samplesPerBatch))
    }

    // MARK: ConfigService

    /// The configuration in force.
    /// - Throws: ``RPCError``: `DEADLINE_EXCEEDED`, `UNAVAILABLE`.
    public func config() async throws(RPCError) -> Config {
        try await client.unary(.configGetConfig, GetConfigRequest())
    }

    /// Replaces the configuration; returns what is now in force.
    /// - Throws: ``RPCError``: `INVALID_ARGUMENT` (the configuration is unchanged), `UNAVAILABLE`.
    public func configure(_ config: Config) async throws(RPCError) -> Config {
        try await client.unary(.configConfigure, ConfigureRequest(config: config))
    }

    /// The user's Camera Control settings and where the device got them at boot (v1.2; the device announces
    /// ``Capabilities/hasSettings``, and ``Capabilities/settingsPersist`` when they survive its reset).
    /// - Throws: ``RPCError``: `UNIMPLEMENTED` on a device without settings (before v1.2), `DEADLINE_EXCEEDED`,
    ///   `UNAVAILABLE`.
    public func settings() async throws(RPCError) -> SettingsResponse {
        try await client.unary(.configGetSettings, GetSettingsRequest())
    }

    /// Changes the settings whose fields are set in `settings` (a field left `.unspecified` keeps its value),
    /// stores them on the device and returns every setting now in force.
    /// - Throws: ``RPCError``: `INVALID_ARGUMENT` (nothing changed), `FAILED_PRECONDITION` (the Light-Press Force
    ///   does not fit the full-press thresholds set by ``configure(_:)``; nothing changed), `INTERNAL` (the
    ///   device's store failed to write; nothing changed), `UNIMPLEMENTED` on a device without settings,
    ///   `UNAVAILABLE`.
    @discardableResult
    public func setSettings(_ settings: Settings) async throws(RPCError) -> SettingsResponse {
        try await client.unary(.configSetSettings, SetSettingsRequest(settings: settings))
    }

    // MARK: FeedbackService

    /// Plays a haptic pattern.
    /// - Throws: ``RPCError``: `FAILED_PRECONDITION` without an actuator, `INVALID_ARGUMENT`, `UNAVAILABLE`.
    @discardableResult
    public func playHaptic(_ pattern: HapticPattern, intensityPercent: UInt32 = 0) async throws(RPCError) -> FeedbackResponse {
        try await client.unary(.feedbackPlayHaptic, PlayHapticRequest(pattern: pattern, intensityPercent: intensityPercent))
    }

    /// Plays a built-in sound.
    /// - Throws: ``RPCError``: `FAILED_PRECONDITION` without a speaker, `INVALID_ARGUMENT`, `UNAVAILABLE`.
    @discardableResult
    public func playSound(_ sound: Sound) async throws(RPCError) -> FeedbackResponse {
        try await client.unary(.feedbackPlaySound, PlaySoundRequest(sound: sound))
    }

    /// Sets the indicator LED.
    /// - Throws: ``RPCError``: `FAILED_PRECONDITION` without an LED, `UNAVAILABLE`.
    @discardableResult
    public func setIndicator(_ mode: IndicatorMode, rgb: UInt32 = 0xFFFFFF) async throws(RPCError) -> FeedbackResponse {
        try await client.unary(.feedbackSetIndicator, SetIndicatorRequest(mode: mode, rgb: rgb))
    }

    // MARK: DiagnosticsService

    /// The device's link and call counters.
    /// - Throws: ``RPCError``: `UNAVAILABLE`.
    public func counters() async throws(RPCError) -> Counters {
        try await client.unary(.diagnosticsGetCounters, GetCountersRequest())
    }

    /// Resets the device's counters; returns them as they were.
    /// - Throws: ``RPCError``: `UNAVAILABLE`.
    @discardableResult
    public func resetCounters() async throws(RPCError) -> Counters {
        try await client.unary(.diagnosticsResetCounters, ResetCountersRequest())
    }

    // MARK: SimulatorService

    /// Plays a scenario (docs/SIMULATOR.md) on a simulator.
    /// - Throws: ``RPCError``: `UNIMPLEMENTED` on a real device, `INVALID_ARGUMENT` with the line at fault.
    @discardableResult
    public func runScenario(_ text: String) async throws(RPCError) -> RunScenarioResponse {
        try await client.unary(.simulatorRunScenario, RunScenarioRequest(scenario: text))
    }

    /// Whether the simulator still plays a scenario.
    /// - Throws: ``RPCError``: `UNIMPLEMENTED` on a real device.
    public func simulatorStatus() async throws(RPCError) -> SimulatorStatus {
        try await client.unary(.simulatorGetSimulatorStatus, GetSimulatorStatusRequest())
    }

    /// Closes the link and returns once the port is released; calls in flight fail with `UNAVAILABLE`.
    /// What the host wrote before (the `ACK` of the last reply) still goes out first (see
    /// ``RPCClient/shutdown()``).
    public func close() async {
        await client.shutdown()
    }
}

/// The first call id of the next session in this process: one of 1, 9, 17, … 121, eight apart, the next
/// session's the next one (after 121, 1 again), the process's first chosen at random. A reconnect's handshake
/// never has the call id of the session before (docs/PROTOCOL.md §9): a device whose session outlived the
/// link's loss would otherwise take it for that handshake's retransmission and answer with the old session.
/// Nor, 15 times in 16, does a new process's: two `camctl info` run back to back at 9600 baud found the first
/// one's session still alive (a device only ends it after its dead timeout), and the second's handshake, on
/// the same call id 1 at sequence 0, was dropped as a copy of the first's: it took five attempts and 2.3 s. Eight
/// apart, as a handshake makes at most 8 attempts by default, and below 128, so that a session's first call
/// ids are one byte long (at least its first 7; a frame's room, §7).
private func nextFirstCallID() -> UInt32 {
    let session = sessionsStarted.add(1, ordering: .relaxed).oldValue
    return (session % firstCallIDSlots) * 8 + 1
}

private let firstCallIDSlots: UInt32 = 16
private let sessionsStarted = Atomic<UInt32>(UInt32.random(in: 0..<firstCallIDSlots))
