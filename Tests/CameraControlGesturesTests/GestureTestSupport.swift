import CameraControlGestures
import CameraControlWire

/// Milliseconds to device microseconds.
func ms(_ value: UInt64) -> UInt64 { value * 1000 }

/// A synthetic input event at `atMs` milliseconds.
func event(
    _ atMs: UInt64, _ kind: InputEventKind, _ source: InputSource = .cameraControl, position: UInt32 = 0,
    force: UInt32 = 0, peak: UInt32 = 0, number: UInt32 = 0
) -> InputEvent {
    InputEvent(
        timestampMicros: ms(atMs), kind: kind, source: source, forceMillinewtons: force, position: position,
        peakForceMillinewtons: peak, eventNumber: number)
}

/// A compact name of a gesture kind, for readable expectations.
func name(_ kind: GestureKind) -> String {
    switch kind {
    case .touchBegan: "touchBegan"
    case .touchEnded: "touchEnded"
    case .lightPressBegan: "lightPressBegan"
    case .lightPressEnded: "lightPressEnded"
    case .doubleLightPress: "doubleLightPress"
    case .slideBegan: "slideBegan"
    case .slideChanged: "slideChanged"
    case .slideEnded: "slideEnded"
    case .pressBegan: "pressBegan"
    case .longPressBegan: "longPressBegan"
    case .pressEnded: "pressEnded"
    case .pressCancelled: "pressCancelled"
    case .remoteClick: "remoteClick"
    }
}

/// Names of the gestures, in order.
func names(_ gestures: [Gesture]) -> [String] { gestures.map { name($0.kind) } }

/// The summary of the first `pressEnded` in `gestures`.
func summary(_ gestures: [Gesture]) -> PressSummary? {
    for gesture in gestures { if case .pressEnded(let summary) = gesture.kind { return summary } }
    return nil
}

/// The slide motions (began, changed, ended) in `gestures`.
func motions(_ gestures: [Gesture]) -> [SlideMotion] {
    gestures.compactMap { gesture in
        switch gesture.kind {
        case .slideBegan(let motion), .slideChanged(let motion), .slideEnded(let motion): motion
        default: nil
        }
    }
}
