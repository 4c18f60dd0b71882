import CameraControlCapture
import CameraControlGestures
import CameraControlWire
import Synchronization

/// Milliseconds to microseconds.
func ms(_ value: UInt64) -> UInt64 { value * 1000 }

/// A gesture at `atMs` device milliseconds.
func gesture(_ atMs: UInt64, _ kind: GestureKind, _ source: InputSource, force: UInt32 = 0) -> Gesture {
    Gesture(kind: kind, source: source, timestampMicros: ms(atMs), forceMillinewtons: force)
}

/// `pressEnded` with a summary.
func ended(_ durationMs: UInt64, long: Bool = false, peak: UInt32 = 0) -> GestureKind {
    .pressEnded(PressSummary(durationMicros: ms(durationMs), isLongPress: long, peakForceMillinewtons: peak))
}

/// A click: `pressBegan` at `atMs`, `pressEnded` 100 ms later.
func click(_ source: InputSource, at atMs: UInt64 = 0) -> [Gesture] {
    [gesture(atMs, .pressBegan, source), gesture(atMs + 100, ended(100), source)]
}

/// The capture events in router outputs, as "phase role source" strings.
func described(_ outputs: [CaptureRouterOutput]) -> [String] {
    outputs.map { output in
        switch output {
        case .event(let event, let role): "\(event.phase.rawValue) \(role.rawValue) \(event.source)"
        case .defaultAction(let action): "default \(action.phase.rawValue) \(action.action.rawValue)"
        case .defaultSound(let sound, _): "sound \(sound)"
        }
    }
}

/// The capture events alone.
func events(_ outputs: [CaptureRouterOutput]) -> [CaptureEvent] {
    outputs.compactMap { if case .event(let event, _) = $0 { event } else { nil } }
}

/// A running, enabled router.
func runningRouter(secondary: Bool = false, soundDisabled: Bool = false) -> CaptureEventRouter {
    CaptureEventRouter(
        configuration: .init(hasSecondaryHandler: secondary, defaultCaptureSoundDisabled: soundDisabled), isSessionRunning: true)
}

/// Records what it was asked to play.
final class RecordingSoundPlayer: CaptureSoundPlaying {
    private let played = Mutex<[Sound]>([])
    private let continuation: AsyncStream<Sound>.Continuation
    /// Every sound, as it is played.
    let stream: AsyncStream<Sound>

    init() { (stream, continuation) = AsyncStream.makeStream(of: Sound.self) }

    var sounds: [Sound] { played.withLock { $0 } }

    func play(_ sound: Sound) async throws {
        played.withLock { $0.append(sound) }
        continuation.yield(sound)
    }
}
