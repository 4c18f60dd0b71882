import FirmwareSim
import Synchronization

/// The real C firmware core and the simulator's finger model, running in-process in virtual time.
///
/// An `EmbeddedDevice` is a whole simulated device (`ccsim_device_t`): the firmware (framing, RPC,
/// services, input pipeline) behind a virtual HAL with a virtual clock, byte rings for the link,
/// a deterministic finger and button model, the scenario player and the `SimulatorService`.
/// Nothing happens by itself: time moves only in ``advance(byMicros:)``, so tests are deterministic
/// and need no sleeps. The same seed, scenario and host bytes give the same device bytes on every run.
///
/// ```swift
/// let device = EmbeddedDevice(seed: 42)
/// device.write(handshakeFrame)       // host → device
/// device.advance(byMicros: 1_000)    // 1 ms of device time
/// let reply = device.read()          // device → host
/// ```
///
/// Thread safety: the class is `Sendable`; every method takes an internal lock, so it may be shared
/// between tasks (for example a host-stack transport adapter and a test driving time). Each call is
/// atomic; sequences of calls are not.
public final class EmbeddedDevice: Sendable {
    /// The C state; it must never move after `ccsim_device_init` (it points into itself).
    private let state: Mutex<DevicePointer>

    /// The seed the device was created with.
    public let seed: UInt64

    /// A device booted at device time 0 with the finger and sensor model seeded by `seed`.
    public init(seed: UInt64 = 1) {
        self.seed = seed
        let pointer = UnsafeMutablePointer<ccsim_device_t>.allocate(capacity: 1)
        ccsim_device_init(pointer, seed)
        state = Mutex(DevicePointer(raw: pointer))
    }

    /// A device booted at device time 0 whose settings store (its emulated flash, two slots) holds `store`
    /// (at most ``settingsStoreByteCount`` bytes; the rest erased): a device "after a power cycle".
    public init(seed: UInt64 = 1, settingsStore store: [UInt8]) {
        self.seed = seed
        let pointer = UnsafeMutablePointer<ccsim_device_t>.allocate(capacity: 1)
        store.withUnsafeBufferPointer { ccsim_device_init_with_store(pointer, seed, $0.baseAddress, $0.count) }
        state = Mutex(DevicePointer(raw: pointer))
    }

    /// The size of the settings store's image.
    public static var settingsStoreByteCount: Int { Int(CC_SETTINGS_SLOTS * CC_SETTINGS_SLOT_BYTES) }

    /// The settings store's image now (slot 0 then slot 1; erased bytes are 0xFF).
    public var settingsStore: [UInt8] {
        state.withLock { device in
            Array(UnsafeBufferPointer(start: ccsim_device_store(device.raw), count: Self.settingsStoreByteCount))
        }
    }

    /// A reset of the board: the firmware boots again and reads its settings store; bytes in flight both ways
    /// are lost and a host must handshake again. The clock, the finger and a scenario go on.
    public func reset() {
        state.withLock { device in ccsim_device_reset(device.raw) }
    }

    deinit {
        state.withLock { device in
            device.raw.deallocate()
            device.replay?.deallocate()
        }
    }

    // MARK: Link

    /// Hands host → device bytes to the firmware's UART (read at its next poll).
    ///
    /// Bytes beyond the receive ring's free space (``receiveCapacity``) are dropped and counted in
    /// ``droppedHostBytes``, like a UART overrun.
    public func write(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        state.withLock { device in
            bytes.withUnsafeBufferPointer { buffer in
                _ = ccsim_device_host_write(device.raw, buffer.baseAddress, buffer.count)
            }
        }
    }

    /// Every device → host byte sent so far and not yet read (empty when none).
    public func read() -> [UInt8] {
        state.withLock { device in
            let pending = ccsim_device_host_pending(device.raw)
            guard pending > 0 else { return [] }
            return [UInt8](unsafeUninitializedCapacity: pending) { buffer, count in
                count = ccsim_device_host_read(device.raw, buffer.baseAddress, pending)
            }
        }
    }

    /// Host bytes dropped because the device's receive ring was full.
    public var droppedHostBytes: UInt32 {
        state.withLock { $0.raw.pointee.rx_dropped }
    }

    /// Models a UART of `baudRate` bits per second (8N1: 10 bits a byte) in both directions: the firmware
    /// reads and writes at most that fast in device time, as over a real serial line (bytes it cannot
    /// write wait in its own transmit buffer). 0, the default, means unlimited.
    public func setBaudRate(_ baudRate: UInt32) {
        state.withLock { ccsim_device_set_baud($0.raw, baudRate) }
    }

    /// The device's receive ring (host → device), bytes.
    public static let receiveCapacity = Int(CCSIM_RX_BYTES)
    /// The device's transmit ring (device → host), bytes; the firmware counts what does not fit
    /// (`tx_dropped`) when the host does not read.
    public static let transmitCapacity = Int(CCSIM_TX_BYTES)
    /// A scenario never starts before this device time, microseconds (`CCSIM_BOOT_SETTLE_US`: the firmware's
    /// tare sees an untouched sensor first).
    public static let bootSettleMicros = UInt64(CCSIM_BOOT_SETTLE_US)

    // MARK: Time

    /// Moves device time forward by `micros`, in steps of at most one sample period; at every step the
    /// scenario player moves the finger and the firmware polls (reads, samples, streams, retransmits).
    public func advance(byMicros micros: UInt64) {
        state.withLock { device in
            ccsim_device_advance(device.raw, micros)
        }
    }

    /// Runs the firmware once without moving time (it answers bytes just written, for example).
    public func poll() {
        state.withLock { device in
            ccsim_device_poll(device.raw)
        }
    }

    /// Device time, microseconds since boot.
    public var nowMicros: UInt64 {
        state.withLock { ccsim_device_now_us($0.raw) }
    }

    // MARK: Scenarios and the finger

    /// Parses a scenario (docs/SIMULATOR.md) and starts it now, replacing any scenario playing.
    ///
    /// A scenario never starts before device time 100 ms (the firmware tares its force sensor at
    /// start-up while untouched). The finger keeps its state across scenarios.
    ///
    /// - Throws: ``ScenarioError`` with the line number and message of the first error.
    public func play(scenario: String) throws(ScenarioError) {
        // A trailing NUL (not counted) keeps the buffer non-empty; the parser reads `length` bytes.
        let text = Array(scenario.utf8).map { CChar(bitPattern: $0) } + [0]
        let length = text.count - 1
        let failure: ScenarioError? = state.withLock { device in
            var error = ccsim_parse_error_t()
            let status = text.withUnsafeBufferPointer { buffer in
                ccsim_device_play_scenario(device.raw, buffer.baseAddress, length, &error)
            }
            return status == 0 ? nil : ScenarioError(cError: error)
        }
        if let failure { throw failure }
    }

    /// True while a scenario is playing (or waiting to start).
    public var isScenarioRunning: Bool {
        state.withLock { ccsim_device_scenario_running($0.raw) }
    }

    /// How long the scenario playing takes from its start, microseconds; 0 when none plays.
    public var scenarioDurationMicros: UInt64 {
        state.withLock { ccsim_device_scenario_duration_us($0.raw) }
    }

    /// Stops the scenario playing; the finger lifts.
    public func stopScenario() {
        state.withLock { ccsim_device_stop_scenario($0.raw) }
    }

    /// Puts the finger under direct control while no scenario plays (a scenario takes precedence).
    ///
    /// - Parameters:
    ///   - touched: skin on the capacitive strip.
    ///   - forceMillinewtons: force applied (the sensor adds its offset, drift and, with noise on,
    ///     tremor and noise).
    ///   - position: 0 (one end of the strip) … 1 (the other).
    ///   - buttons: buttons held (contacts bounce unless ``setBounce(_:)`` turned it off).
    public func setFinger(touched: Bool, forceMillinewtons: Int32, position: Double = 0.5, buttons: Buttons = []) {
        let clamped = position.isNaN ? 0.5 : min(max(position, 0), 1)
        let raw = UInt32((clamped * Double(CCSIM_POS_ONE)).rounded())
        state.withLock { device in
            ccsim_device_set_finger(device.raw, touched, forceMillinewtons, raw, buttons.rawValue)
        }
    }

    /// Ends direct control: the finger rests where the last scenario left it (lifted by default).
    public func releaseFinger() {
        state.withLock { ccsim_device_release_finger($0.raw) }
    }

    /// Queues `count` remote clicks for the firmware's next sample.
    public func remoteClick(count: UInt32 = 1) {
        state.withLock { ccsim_device_remote_click($0.raw, count) }
    }

    /// Replays recorded input in place of the finger model and the button contacts (docs/SIMULATOR.md,
    /// "Replay"): each sample is what the sensors and buttons read from its time (after the replay's start:
    /// now, and not before ``bootSettleMicros``) until the next, and its remote clicks arrive once. The
    /// forces are applied forces: the device's own sensor offset and drift are added, so the firmware's tare
    /// holds. It ends one sample period after the last sample (``isReplaying``); an empty list stops it.
    public func replay(_ samples: [ReplaySample]) {
        let buffer = UnsafeMutableBufferPointer<ccsim_replay_sample_t>.allocate(capacity: max(1, samples.count))
        for (index, sample) in samples.enumerated() {
            buffer[index] = ccsim_replay_sample_t(
                t_us: sample.micros, force_mn: sample.forceMillinewtons, position: sample.position, touched: sample.touched,
                buttons: UInt8(truncatingIfNeeded: sample.buttons.rawValue), remote_clicks: sample.remoteClicks)
        }
        state.withLock { device in
            ccsim_device_replay(device.raw, buffer.baseAddress, samples.count)
            device.replay?.deallocate()
            device.replay = buffer
        }
    }

    /// Whether a ``replay(_:)`` is still playing.
    public var isReplaying: Bool {
        state.withLock { ccsim_device_replay_running($0.raw) }
    }

    /// Sensor noise, tremor, slide jitter and per-touch force variation on (the default) or off.
    /// The sensor's baseline offset and drift stay either way. A scenario's `noise on|off` step lasts until
    /// that scenario ends; then this setting is back.
    public func setNoise(_ on: Bool) {
        state.withLock { ccsim_device_set_noise($0.raw, on) }
    }

    /// Whether sensor noise is on now: ``setNoise(_:)``'s setting, or a playing scenario's `noise` step.
    public var isNoiseOn: Bool {
        state.withLock { $0.raw.pointee.finger.noise }
    }

    /// Contact bounce of the buttons on (the default) or off.
    public func setBounce(_ on: Bool) {
        state.withLock { ccsim_device_set_bounce($0.raw, on) }
    }

    // MARK: Observation

    /// The haptics, sounds and indicator changes the firmware started, oldest first (the newest
    /// ``feedbackLogCapacity`` are kept).
    public var feedbackLog: [FeedbackRecord] {
        state.withLock { device in
            let count = ccsim_device_feedback_count(device.raw)
            var records: [FeedbackRecord] = []
            records.reserveCapacity(Int(count))
            for index in 0..<count {
                var record = ccsim_feedback_t()
                if ccsim_device_feedback_at(device.raw, index, &record) {
                    records.append(FeedbackRecord(record))
                }
            }
            return records
        }
    }

    /// How many feedback records the log keeps.
    public static let feedbackLogCapacity = Int(CCSIM_FEEDBACK_LOG)

    /// Empties ``feedbackLog``.
    public func clearFeedbackLog() {
        state.withLock { ccsim_device_feedback_clear($0.raw) }
    }

    /// The firmware's link and call counters, and the input queue's overflows.
    public var counters: FirmwareCounters {
        state.withLock { device in
            FirmwareCounters(
                ccsim_device_counters(device.raw).pointee,
                inputQueueOverflows: cc_input_queue_overflows(&device.raw.pointee.dev.input)
            )
        }
    }

    /// True between a successful handshake and the link being declared dead.
    public var isSessionActive: Bool {
        state.withLock { cc_device_session_active(ccsim_device_core($0.raw)) }
    }

    /// The input configuration in force (thresholds, sample rate, slide interval, debounce).
    public var inputConfiguration: InputConfiguration {
        state.withLock { InputConfiguration(cc_device_config(ccsim_device_core($0.raw)).pointee) }
    }
}

/// The raw pointer to the C device, only ever touched under the lock.
private struct DevicePointer: @unchecked Sendable {
    let raw: UnsafeMutablePointer<ccsim_device_t>
    /// The samples a replay reads (the C side keeps a pointer into them until the replay ends).
    var replay: UnsafeMutableBufferPointer<ccsim_replay_sample_t>?
}

/// Buttons of the simulated board, as the HAL's `CC_BUTTON_*` bits.
public struct Buttons: OptionSet, Hashable, Sendable {
    /// The HAL bits.
    public var rawValue: UInt32
    /// Wraps HAL bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Volume up (secondary capture button).
    public static let volumeUp = Buttons(rawValue: UInt32(CC_BUTTON_VOLUME_UP))
    /// Volume down (primary capture button).
    public static let volumeDown = Buttons(rawValue: UInt32(CC_BUTTON_VOLUME_DOWN))
    /// The action button.
    public static let action = Buttons(rawValue: UInt32(CC_BUTTON_ACTION))
    /// The Camera Control's full-press switch (the simulated board reports none by itself; holding this
    /// makes the firmware see one).
    public static let shutterSwitch = Buttons(rawValue: UInt32(CC_BUTTON_SHUTTER_SWITCH))
}

/// One recorded input sample for ``EmbeddedDevice/replay(_:)``.
public struct ReplaySample: Hashable, Sendable {
    /// When it is read, microseconds after the replay's start.
    public var micros: UInt64
    /// The applied force, millinewtons (the firmware's conditioned force, as raw samples carry it).
    public var forceMillinewtons: Int32
    /// The slide position, strip counts (0 … the slide resolution − 1).
    public var position: UInt16
    /// Skin on the strip.
    public var touched: Bool
    /// Buttons held (levels; the firmware debounces them).
    public var buttons: Buttons
    /// Remote clicks delivered when this sample is reached.
    public var remoteClicks: UInt8

    /// A sample.
    public init(
        micros: UInt64, forceMillinewtons: Int32, position: UInt16, touched: Bool, buttons: Buttons = [], remoteClicks: UInt8 = 0
    ) {
        self.micros = micros
        self.forceMillinewtons = forceMillinewtons
        self.position = position
        self.touched = touched
        self.buttons = buttons
        self.remoteClicks = remoteClicks
    }
}
