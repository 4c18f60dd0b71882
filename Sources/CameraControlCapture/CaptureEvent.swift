import CameraControlGestures
import CameraControlWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a press is in its life (AVCaptureEventPhase).
public enum CaptureEventPhase: String, Hashable, Sendable, CaseIterable {
    /// The input went down: prepare the camera.
    case began
    /// The input was released: capture now.
    case ended
    /// The press will not end normally (session stopped, interaction disabled, device lost): do not capture.
    case cancelled
}

/// Identifies one press: its `began` and its `ended` or `cancelled` carry the same id.
/// Unique per router (per ``CaptureEventInteraction``); counts up from 1.
public struct CaptureEventID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number.
    public var rawValue: UInt64
    /// An id from its number.
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// Orders ids by number (the order presses began in).
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    /// `press#N`.
    public var description: String { "press#\(rawValue)" }
}

/// Which handler an event goes to.
public enum CaptureHandlerRole: String, Hashable, Sendable {
    /// Volume down, action button, Camera Control full click, remote click (and volume up when there is
    /// no secondary handler).
    case primary
    /// Volume up, when a secondary handler exists.
    case secondary
}

/// Plays capture sounds (the wire's built-in `Sound`s, as AVCaptureEventSound). The device session
/// conforms (in CameraControlControls, which sees both it and this protocol: it sends
/// `FeedbackService/PlaySound`); tests fake it.
public protocol CaptureSoundPlaying: Sendable {
    /// Plays `sound` now. Throws whatever the player's transport throws.
    func play(_ sound: Sound) async throws
}

/// The host clock capture events are stamped with on receipt, microseconds (injected so tests control it).
public struct CaptureClock: Sendable {
    /// Reads the clock: microseconds since an arbitrary fixed start, never decreasing.
    public let nowMicros: @Sendable () -> UInt64

    /// A clock read by `nowMicros`.
    public init(nowMicros: @escaping @Sendable () -> UInt64) { self.nowMicros = nowMicros }

    /// The system's monotonic clock, `CLOCK_MONOTONIC` (from an arbitrary start, e.g. the system's boot):
    /// ``monotonicMicros()``.
    public static let continuous = CaptureClock(nowMicros: monotonicMicros)

    /// `CLOCK_MONOTONIC` now, microseconds: one read of the clock (through the vDSO on Linux, no system
    /// call) and an integer conversion. The host reads it on every input event, so it goes around
    /// `ContinuousClock`'s 128-bit durations.
    @Sendable public static func monotonicMicros() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000 &+ UInt64(now.tv_nsec / 1_000)
    }
}

/// One capture event (AVCaptureEvent), with what Apple hides added.
///
/// Beyond Apple: `source`, forces, the device timestamp, and on `ended` the press duration and whether
/// it was a long press. Equality and hashing compare the values only (not the sound player attached by
/// ``CaptureEventInteraction``).
public struct CaptureEvent: Sendable, Hashable, Identifiable, CustomStringConvertible {
    /// Began, ended (capture here) or cancelled.
    public var phase: CaptureEventPhase
    /// The press this event belongs to.
    public var id: CaptureEventID
    /// Beyond Apple: which physical input made the press.
    public var source: InputSource
    /// Beyond Apple: force at this event, millinewtons (0 for buttons and remote clicks).
    public var forceMillinewtons: UInt32
    /// Beyond Apple: largest force during the press, millinewtons; on `ended` only, else 0.
    public var peakForceMillinewtons: UInt32
    /// Beyond Apple: device time of the gesture behind this event, microseconds.
    public var deviceTimestampMicros: UInt64
    /// Beyond Apple: press-down to release, microseconds; on `ended` only (0 for a remote click), else nil.
    public var pressDurationMicros: UInt64?
    /// Beyond Apple: true on `ended` (and on `cancelled`) of a press held past the long-press threshold
    /// (click-and-hold: record video rather than take a photo).
    public var isLongPress: Bool
    /// True only for a remote click while ``CaptureEventInteraction/defaultCaptureSoundDisabled`` is true:
    /// the app should play its own capture sound (with ``play(_:)``).
    public var shouldPlaySound: Bool
    /// Host clock time the event was received at (the router's `now`), microseconds; ``play(_:)`` judges
    /// the event's age from it.
    public var receivedAtHostMicros: UInt64

    var soundContext: SoundContext?

    /// How old an event may be and still play a sound: 15 s (AVCaptureEvent's documented limit).
    public static let maximumSoundAgeMicros: UInt64 = 15_000_000

    /// An event with every value given (the router makes them; tests may too).
    public init(
        phase: CaptureEventPhase,
        id: CaptureEventID,
        source: InputSource,
        forceMillinewtons: UInt32 = 0,
        peakForceMillinewtons: UInt32 = 0,
        deviceTimestampMicros: UInt64,
        pressDurationMicros: UInt64? = nil,
        isLongPress: Bool = false,
        shouldPlaySound: Bool = false,
        receivedAtHostMicros: UInt64
    ) {
        self.phase = phase
        self.id = id
        self.source = source
        self.forceMillinewtons = forceMillinewtons
        self.peakForceMillinewtons = peakForceMillinewtons
        self.deviceTimestampMicros = deviceTimestampMicros
        self.pressDurationMicros = pressDurationMicros
        self.isLongPress = isLongPress
        self.shouldPlaySound = shouldPlaySound
        self.receivedAtHostMicros = receivedAtHostMicros
    }

    /// True when a sound may be played for this event at host time `now`: ``shouldPlaySound`` is true and
    /// the event is at most ``maximumSoundAgeMicros`` old.
    public func canPlaySound(atHostMicros now: UInt64) -> Bool {
        guard shouldPlaySound else { return false }
        let age = now >= receivedAtHostMicros ? now - receivedAtHostMicros : 0
        return age <= Self.maximumSoundAgeMicros
    }

    /// Plays `sound` through `player` if ``canPlaySound(atHostMicros:)`` allows it at `now`; otherwise
    /// does nothing. Returns whether it asked the player. Rethrows the player's error.
    @discardableResult
    public func play(
        _ sound: Sound, using player: some CaptureSoundPlaying, atHostMicros now: UInt64
    )
        async throws -> Bool
    {
        guard canPlaySound(atHostMicros: now) else { return false }
        try await player.play(sound)
        return true
    }

    /// Plays `sound` through the interaction's sound player (AVCaptureEvent's `play(_:)`). Does nothing
    /// (returns false) when ``shouldPlaySound`` is false, the event is more than 15 s old by the
    /// interaction's clock, or the event did not come from an interaction with a sound player.
    /// Rethrows the player's error.
    @discardableResult
    public func play(_ sound: Sound) async throws -> Bool {
        guard let context = soundContext else { return false }
        return try await play(sound, using: context.player, atHostMicros: context.clock.nowMicros())
    }

    /// `press#N began camera-control`.
    public var description: String { "\(id) \(phase.rawValue) \(source)" }

    /// Compares the values (not the attached sound player).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.phase == rhs.phase && lhs.id == rhs.id && lhs.source == rhs.source
            && lhs.forceMillinewtons == rhs.forceMillinewtons && lhs.peakForceMillinewtons == rhs.peakForceMillinewtons
            && lhs.deviceTimestampMicros == rhs.deviceTimestampMicros && lhs.pressDurationMicros == rhs.pressDurationMicros
            && lhs.isLongPress == rhs.isLongPress && lhs.shouldPlaySound == rhs.shouldPlaySound
            && lhs.receivedAtHostMicros == rhs.receivedAtHostMicros
    }

    /// Hashes the values (not the attached sound player).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(phase)
        hasher.combine(id)
        hasher.combine(source)
        hasher.combine(deviceTimestampMicros)
        hasher.combine(receivedAtHostMicros)
    }
}

/// What ``CaptureEvent/play(_:)`` plays through.
struct SoundContext: Sendable {
    let player: any CaptureSoundPlaying
    let clock: CaptureClock
}

/// What an input does when the app does not take it (interaction disabled, or no running session): the
/// system behaviour the host should perform itself, as iOS does for its buttons.
public enum DefaultAction: String, Hashable, Sendable, CaseIterable {
    /// Volume up (held: repeat until `ended`).
    case volumeUp
    /// Volume down (held: repeat until `ended`).
    case volumeDown
    /// Whatever the host has assigned to the action button.
    case actionButton
    /// The Camera Control's system behaviour: open the camera app.
    case launchCamera
    /// Nothing (a remote click).
    case none

    /// The default action of a source, or nil for `unspecified`.
    public init?(source: InputSource) {
        switch source {
        case .volumeUp: self = .volumeUp
        case .volumeDown: self = .volumeDown
        case .actionButton: self = .actionButton
        case .cameraControl: self = .launchCamera
        case .remote: self = .none
        case .unspecified: return nil
        }
    }
}

/// A press that went to its default action instead of a capture handler. It has phases like a capture
/// event: every `began` is followed by exactly one `ended` or `cancelled` with the same id.
public struct DefaultActionEvent: Hashable, Sendable, CustomStringConvertible {
    /// What the host should do.
    public var action: DefaultAction
    /// Began, ended or cancelled.
    public var phase: CaptureEventPhase
    /// The press (ids are shared with capture events: one counter).
    public var id: CaptureEventID
    /// Which input.
    public var source: InputSource
    /// Device time of the gesture, microseconds.
    public var deviceTimestampMicros: UInt64

    /// A default-action event.
    public init(
        action: DefaultAction, phase: CaptureEventPhase, id: CaptureEventID, source: InputSource,
        deviceTimestampMicros: UInt64
    ) {
        self.action = action
        self.phase = phase
        self.id = id
        self.source = source
        self.deviceTimestampMicros = deviceTimestampMicros
    }

    /// `press#N began volume-down → volumeDown`.
    public var description: String { "\(id) \(phase.rawValue) \(source) → \(action.rawValue)" }
}
