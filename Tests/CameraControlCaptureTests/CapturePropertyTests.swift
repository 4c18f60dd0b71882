import CameraControlCapture
import CameraControlGestures
import CameraControlTestSupport
import CameraControlWire
import Testing

@Suite("Capture properties")
struct CapturePropertyTests {
    private static let inputs: [(InputEventKind, InputSource)] = [
        (.touchDown, .cameraControl), (.touchUp, .cameraControl), (.lightPressDown, .cameraControl),
        (.lightPressUp, .cameraControl), (.fullPressDown, .cameraControl), (.fullPressUp, .cameraControl),
        (.slide, .cameraControl), (.slide, .cameraControl), (.buttonDown, .volumeUp), (.buttonUp, .volumeUp),
        (.buttonDown, .volumeDown), (.buttonUp, .volumeDown), (.buttonDown, .actionButton), (.buttonUp, .actionButton),
        (.remoteClick, .remote), (.remoteClick, .unspecified), (.buttonDown, .remote), (.unspecified, .volumeUp),
    ]

    /// The input kind that can start a capture press from each source.
    private static func startsPress(_ event: InputEvent) -> InputSource? {
        switch (event.kind, event.source) {
        case (.fullPressDown, .cameraControl): .cameraControl
        case (.buttonDown, .volumeUp), (.buttonDown, .volumeDown), (.buttonDown, .actionButton): event.source
        case (.remoteClick, _): .remote
        default: nil
        }
    }

    @Test("2000 random sequences through recogniser and router: every began closed once, one press per handler, no capture without a press")
    func randomSequences() {
        var rng = SeededGenerator(seed: 0x5EED_CAFE)
        var capturesSeen = 0
        for sequence in 0..<2000 {
            var recognizer = GestureRecognizer()
            var router = CaptureEventRouter(
                configuration: .init(
                    hasSecondaryHandler: Bool.random(using: &rng), defaultCaptureSoundDisabled: Bool.random(using: &rng)),
                isSessionRunning: Bool.random(using: &rng))
            var pressInputs: [InputSource: Int] = [:]
            var began: [CaptureEventID: (toHandler: Bool, role: CaptureHandlerRole?, source: InputSource)] = [:]
            var closed: Set<CaptureEventID> = []
            var violations: [String] = []
            var time: UInt64 = 0
            var host: UInt64 = 0

            func absorb(_ outputs: [CaptureRouterOutput], deliverable: Bool) {
                for output in outputs {
                    switch output {
                    case .event(let event, let role):
                        switch event.phase {
                        case .began:
                            if began[event.id] != nil { violations.append("\(event.id) began twice") }
                            if !deliverable { violations.append("\(event.id) delivered while not running or disabled") }
                            let busy = began.filter { $0.value.role == role && !closed.contains($0.key) }
                            if !busy.isEmpty { violations.append("\(event.id) began while \(role) was busy") }
                            began[event.id] = (true, role, event.source)
                            let starts = pressInputs[event.source, default: 0]
                            let opened = began.values.filter { $0.source == event.source }.count
                            if opened > starts { violations.append("capture press on \(event.source) without a press input") }
                            if event.shouldPlaySound != (event.source == .remote && router.configuration.defaultCaptureSoundDisabled) {
                                violations.append("\(event.id) shouldPlaySound wrong")
                            }
                        case .ended, .cancelled:
                            guard let start = began[event.id] else {
                                violations.append("\(event.id) \(event.phase) without began")
                                continue
                            }
                            if !start.toHandler || start.role != role { violations.append("\(event.id) changed handler") }
                            if closed.contains(event.id) { violations.append("\(event.id) closed twice") }
                            if event.phase == .ended { capturesSeen += 1 }
                            closed.insert(event.id)
                        }
                    case .defaultAction(let action):
                        switch action.phase {
                        case .began:
                            if began[action.id] != nil { violations.append("\(action.id) began twice") }
                            began[action.id] = (false, nil, action.source)
                        case .ended, .cancelled:
                            guard let start = began[action.id] else {
                                violations.append("\(action.id) default \(action.phase) without began")
                                continue
                            }
                            if start.toHandler { violations.append("\(action.id) went to a handler and a default action") }
                            if closed.contains(action.id) { violations.append("\(action.id) closed twice") }
                            closed.insert(action.id)
                        }
                    case .defaultSound(_, let id):
                        if began[id]?.source != .remote { violations.append("default sound for \(id), not a remote click") }
                    }
                }
            }

            for _ in 0..<Int.random(in: 1...50, using: &rng) {
                host += 1
                let deliverable = router.isSessionRunning && router.configuration.isEnabled
                switch Int.random(in: 0..<100, using: &rng) {
                case 0..<5:
                    absorb(router.setSessionRunning(!router.isSessionRunning, atHostMicros: host), deliverable: false)
                case 5..<8:
                    absorb(router.setEnabled(!router.configuration.isEnabled, atHostMicros: host), deliverable: false)
                case 8:
                    router.setHasSecondaryHandler(!router.configuration.hasSecondaryHandler)
                case 9:
                    absorb(router.handle(recognizer.reset(), atHostMicros: host), deliverable: false)
                case 10..<18:
                    time += UInt64.random(in: 0...600_000, using: &rng)
                    absorb(router.handle(recognizer.advance(toMicros: time), atHostMicros: host), deliverable: deliverable)
                default:
                    time += UInt64.random(in: 0...300_000, using: &rng)
                    let (kind, source) = Self.inputs[Int.random(in: 0..<Self.inputs.count, using: &rng)]
                    let input = InputEvent(
                        timestampMicros: time, kind: kind, source: source,
                        forceMillinewtons: UInt32.random(in: 0...4000, using: &rng),
                        position: UInt32.random(in: 0..<1024, using: &rng))
                    if let start = Self.startsPress(input) { pressInputs[start, default: 0] += 1 }
                    absorb(router.handle(recognizer.handle(input), atHostMicros: host), deliverable: deliverable)
                }
            }
            absorb(router.handle(recognizer.reset(), atHostMicros: host), deliverable: false)
            if !router.pressesInFlight.isEmpty { violations.append("router has presses the recogniser closed") }
            absorb(router.cancelAll(atHostMicros: host), deliverable: false)

            let unclosed = Set(began.keys).subtracting(closed)
            if !unclosed.isEmpty { violations.append("never closed: \(unclosed.sorted())") }
            #expect(violations.isEmpty, "sequence \(sequence): \(violations)")
            if !violations.isEmpty { break }
        }
        #expect(capturesSeen > 500)  // the generator really reaches captures
    }
}
