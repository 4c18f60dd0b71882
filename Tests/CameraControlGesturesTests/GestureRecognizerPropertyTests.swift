import CameraControlGestures
import CameraControlTestSupport
import CameraControlWire
import Testing

/// Checks the pairing rules on a gesture stream, gesture by gesture.
struct GestureStreamChecker {
    var openPresses: [InputSource: Bool] = [:]  // source → long press seen
    var lightOpen = false
    var slideOpen = false
    var touchOpen = false
    var previous: GestureKind?
    var violations: [String] = []

    mutating func check(_ gesture: Gesture) {
        let source = gesture.source
        switch gesture.kind {
        case .touchBegan:
            if touchOpen { violations.append("touchBegan while touching") }
            touchOpen = true
        case .touchEnded:
            if !touchOpen { violations.append("touchEnded without touchBegan") }
            if slideOpen { violations.append("touchEnded with a slide open") }
            touchOpen = false
        case .lightPressBegan:
            if lightOpen { violations.append("lightPressBegan twice") }
            if !touchOpen { violations.append("lightPressBegan without touch") }
            lightOpen = true
        case .lightPressEnded:
            if !lightOpen { violations.append("lightPressEnded without lightPressBegan") }
            lightOpen = false
        case .doubleLightPress:
            if previous != .lightPressBegan { violations.append("doubleLightPress not right after lightPressBegan") }
        case .slideBegan(let motion):
            if slideOpen { violations.append("slideBegan twice") }
            if !touchOpen { violations.append("slideBegan without touch") }
            if motion.delta != 0 { violations.append("slideBegan with a delta") }
            checkMotion(motion)
            slideOpen = true
        case .slideChanged(let motion):
            if !slideOpen { violations.append("slideChanged without slideBegan") }
            checkMotion(motion)
        case .slideEnded(let motion):
            if !slideOpen { violations.append("slideEnded without slideBegan") }
            checkMotion(motion)
            slideOpen = false
        case .pressBegan:
            if openPresses[source] != nil { violations.append("pressBegan twice on \(source)") }
            if source == .cameraControl && !touchOpen { violations.append("full press without touch") }
            openPresses[source] = false
        case .longPressBegan:
            if openPresses[source] != false { violations.append("longPressBegan outside a press or twice on \(source)") }
            if openPresses[source] != nil { openPresses[source] = true }
        case .pressEnded(let summary):
            if let longSeen = openPresses[source] {
                if summary.isLongPress != longSeen {
                    violations.append("isLongPress \(summary.isLongPress) but long press seen \(longSeen)")
                }
            } else {
                violations.append("pressEnded without pressBegan on \(source)")
            }
            openPresses[source] = nil
        case .pressCancelled:
            if openPresses[source] == nil { violations.append("pressCancelled without pressBegan on \(source)") }
            openPresses[source] = nil
        case .remoteClick:
            if source != .remote { violations.append("remote click from \(source)") }
        }
        previous = gesture.kind
    }

    mutating func checkMotion(_ motion: SlideMotion) {
        if !(0...1).contains(motion.position) { violations.append("position \(motion.position) outside 0…1") }
        if !motion.velocity.isFinite || !motion.delta.isFinite { violations.append("non-finite motion") }
    }

    var everythingClosed: Bool { openPresses.isEmpty && !lightOpen && !slideOpen && !touchOpen }
}

/// Random input, biased towards plausible sequences but with every kind of mistake mixed in.
func randomInputEvents(count: Int, using rng: inout SeededGenerator) -> [InputEvent?] {
    let kinds: [(InputEventKind, InputSource)] = [
        (.touchDown, .cameraControl), (.touchUp, .cameraControl), (.lightPressDown, .cameraControl),
        (.lightPressUp, .cameraControl), (.fullPressDown, .cameraControl), (.fullPressUp, .cameraControl),
        (.slide, .cameraControl), (.slide, .cameraControl), (.slide, .cameraControl),
        (.buttonDown, .volumeUp), (.buttonUp, .volumeUp), (.buttonDown, .volumeDown), (.buttonUp, .volumeDown),
        (.buttonDown, .actionButton), (.buttonUp, .actionButton), (.remoteClick, .remote),
        (.unspecified, .unspecified), (.buttonDown, .remote), (.remoteClick, .unspecified),
    ]
    var time: UInt64 = UInt64.random(in: 0...1_000_000, using: &rng)
    var number: UInt32 = 1
    var out: [InputEvent?] = []
    for _ in 0..<count {
        let roll = Int.random(in: 0..<100, using: &rng)
        if roll < 8 {
            out.append(nil)  // an `advance` instead of an event
            time += UInt64.random(in: 0...700_000, using: &rng)
            continue
        }
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<3: time = time > 50_000 ? time - UInt64.random(in: 0...50_000, using: &rng) : time  // reordered
        case 3: time = UInt64.random(in: 0...1000, using: &rng)  // clock restart
        default: time += UInt64.random(in: 0...450_000, using: &rng)
        }
        let (kind, source) = kinds[Int.random(in: 0..<kinds.count, using: &rng)]
        let duplicate = roll < 12 && number > 1
        out.append(
            InputEvent(
                timestampMicros: time, kind: kind, source: source,
                forceMillinewtons: UInt32.random(in: 0...5000, using: &rng),
                position: Int.random(in: 0..<10, using: &rng) == 0
                    ? UInt32.random(in: 0...UInt32.max, using: &rng) : UInt32.random(in: 0..<1024, using: &rng),
                peakForceMillinewtons: UInt32.random(in: 0...6000, using: &rng),
                eventNumber: duplicate ? number - 1 : (Int.random(in: 0..<5, using: &rng) == 0 ? 0 : number)))
        if !duplicate { number += 1 }
    }
    return out
}

@Suite("Recogniser properties")
struct GestureRecognizerPropertyTests {
    @Test("2000 random event sequences: gestures always pair up, nothing ends without beginning")
    func randomSequences() {
        var rng = SeededGenerator(seed: 0xC0FFEE)
        var totalGestures = 0
        for sequence in 0..<2000 {
            var recognizer = GestureRecognizer(
                configuration: .init(slideIdleEndMicros: sequence % 3 == 0 ? nil : 300_000, slideResolution: 1024))
            var checker = GestureStreamChecker()
            var time: UInt64 = 0
            for item in randomInputEvents(count: Int.random(in: 1...60, using: &rng), using: &rng) {
                let gestures: [Gesture]
                if let event = item {
                    time = max(time, event.timestampMicros)
                    gestures = recognizer.handle(event)
                } else {
                    time += UInt64.random(in: 0...700_000, using: &rng)
                    gestures = recognizer.advance(toMicros: time)
                }
                for gesture in gestures { checker.check(gesture) }
                totalGestures += gestures.count
            }
            for gesture in recognizer.reset() { checker.check(gesture) }
            #expect(checker.violations.isEmpty, "sequence \(sequence): \(checker.violations)")
            #expect(checker.everythingClosed, "sequence \(sequence) left something open")
            #expect(recognizer.pressesInFlight.isEmpty && !recognizer.isTouching && !recognizer.isSliding)
            if !checker.violations.isEmpty { break }
        }
        #expect(totalGestures > 10_000)  // the generator really exercises the recogniser
    }
}
