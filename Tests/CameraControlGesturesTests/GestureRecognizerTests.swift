import CameraControlGestures
import CameraControlWire
import Testing

@Suite("Light press")
struct LightPressTests {
    @Test("a light press that never becomes full: began and ended, no press, no capture gesture")
    func lightPressOnly() {
        var recognizer = GestureRecognizer()
        var out = recognizer.handle(event(0, .touchDown, position: 500))
        out += recognizer.handle(event(10, .lightPressDown, position: 500, force: 900))
        out += recognizer.advance(toMicros: ms(2000))  // held long: still no long press (light presses never are)
        out += recognizer.handle(event(2100, .lightPressUp, position: 500, force: 300))
        out += recognizer.handle(event(2110, .touchUp, position: 500))
        #expect(names(out) == ["touchBegan", "lightPressBegan", "lightPressEnded", "touchEnded"])
        #expect(out[1].forceMillinewtons == 900)
        #expect(out[1].timestampMicros == ms(10))
    }

    @Test("a light press that escalates: the full click is a separate press inside the light press")
    func escalation() {
        var recognizer = GestureRecognizer()
        var out = recognizer.handle(event(0, .lightPressDown, force: 900))
        out += recognizer.handle(event(50, .fullPressDown, force: 3000))
        out += recognizer.handle(event(150, .fullPressUp, force: 2000, peak: 3500))
        out += recognizer.handle(event(180, .lightPressUp, force: 300))
        #expect(names(out) == ["touchBegan", "lightPressBegan", "pressBegan", "pressEnded", "lightPressEnded"])
        #expect(out[2].source == .cameraControl)
        #expect(summary(out) == PressSummary(durationMicros: ms(100), isLongPress: false, peakForceMillinewtons: 3500))
    }

    @Test("a full press without a light press first still clicks")
    func fullPressWithoutLightPress() {
        var recognizer = GestureRecognizer()
        let out = recognizer.handle([event(0, .fullPressDown, force: 3000), event(80, .fullPressUp, force: 100)])
        #expect(names(out) == ["touchBegan", "pressBegan", "pressEnded"])
        #expect(summary(out)?.durationMicros == ms(80))
        #expect(summary(out)?.peakForceMillinewtons == 3000)
    }
}

@Suite("Double light press")
struct DoubleLightPressTests {
    @Test("two quick light presses make a double, reported when the second begins")
    func quickDouble() {
        var recognizer = GestureRecognizer()
        var out = recognizer.handle([event(0, .lightPressDown), event(100, .lightPressUp)])
        out += recognizer.handle(event(250, .lightPressDown))
        #expect(names(out) == ["touchBegan", "lightPressBegan", "lightPressEnded", "lightPressBegan", "doubleLightPress"])
        #expect(out.last?.timestampMicros == ms(250))
        let end = recognizer.handle(event(330, .lightPressUp))
        #expect(names(end) == ["lightPressEnded"])
    }

    /// (first press held ms, gap to the second press ms, double expected)
    @Test(
        "the window, the minimum gap and the first press's hold decide",
        arguments: [
            (100, 40, true),  // exactly the minimum gap
            (100, 300, true),  // exactly the window
            (100, 39, false),  // too soon: a bounce
            (100, 301, false),  // two slow light presses
            (100, 2000, false),
            (399, 100, true),  // first released just before the hold threshold: a tap
            (400, 100, false),  // first held exactly the threshold: a hold (it locks AE/AF), not a tap
            (401, 100, false),  // first held too long: a hold, not a tap
        ] as [(UInt64, UInt64, Bool)])
    func windows(held: UInt64, gap: UInt64, expectDouble: Bool) {
        var recognizer = GestureRecognizer()
        var out = recognizer.handle([event(0, .lightPressDown), event(held, .lightPressUp)])
        out += recognizer.advance(toMicros: ms(held + gap / 2))
        out += recognizer.handle([event(held + gap, .lightPressDown), event(held + gap + 80, .lightPressUp)])
        #expect(names(out).contains("doubleLightPress") == expectDouble)
        #expect(names(out).filter { $0 == "lightPressBegan" }.count == 2)
        #expect(names(out).filter { $0 == "lightPressEnded" }.count == 2)
    }

    @Test("three quick light presses make one double, not two")
    func triple() {
        var recognizer = GestureRecognizer()
        let out = recognizer.handle([
            event(0, .lightPressDown), event(80, .lightPressUp),
            event(200, .lightPressDown), event(280, .lightPressUp),
            event(400, .lightPressDown), event(480, .lightPressUp),
        ])
        #expect(names(out).filter { $0 == "doubleLightPress" }.count == 1)
    }

    @Test("a full click, or a slide, in the first press stops it from starting a double")
    func escalatedOrSlidFirstPress() {
        var clicked = GestureRecognizer()
        let afterClick = clicked.handle([
            event(0, .lightPressDown), event(20, .fullPressDown), event(60, .fullPressUp), event(80, .lightPressUp),
            event(200, .lightPressDown),
        ])
        #expect(!names(afterClick).contains("doubleLightPress"))

        var slid = GestureRecognizer(configuration: .init(slideResolution: 101))
        let afterSlide = slid.handle([
            event(0, .lightPressDown, position: 10), event(20, .slide, position: 30), event(80, .lightPressUp, position: 30),
            event(200, .lightPressDown, position: 30),
        ])
        #expect(names(afterSlide).contains("slideBegan"))
        #expect(!names(afterSlide).contains("doubleLightPress"))
    }
}

@Suite("Slide")
struct SlideTests {
    @Test("a slide that starts with a light press: begins past the slop, changes, ends with the touch")
    func slideFromLightPress() throws {
        var recognizer = GestureRecognizer(configuration: .init(slideResolution: 101))  // position n → n %
        var out = recognizer.handle(event(0, .touchDown, position: 50))
        out += recognizer.handle(event(10, .lightPressDown, position: 50, force: 900))
        out += recognizer.handle(event(26, .slide, position: 52))  // 2 %: inside the 3 % slop
        #expect(!names(out).contains("slideBegan"))
        out += recognizer.handle(event(42, .slide, position: 54))  // 4 %: a slide
        out += recognizer.handle(event(58, .slide, position: 60))
        out += recognizer.handle(event(74, .slide, position: 58))
        out += recognizer.handle(event(90, .lightPressUp, position: 58))
        out += recognizer.handle(event(100, .touchUp, position: 58))
        #expect(
            names(out) == [
                "touchBegan", "lightPressBegan", "slideBegan", "slideChanged", "slideChanged", "lightPressEnded",
                "slideEnded", "touchEnded",
            ])
        let motion = motions(out)
        #expect(motion.count == 4)
        #expect(abs(motion[0].position - 0.54) < 1e-9)
        #expect(motion[0].delta == 0)
        #expect(motion[0].velocity > 0)
        #expect(abs(motion[1].position - 0.60) < 1e-9)
        #expect(abs(motion[1].delta - 0.06) < 1e-9)
        #expect(abs(motion[2].delta - -0.02) < 1e-9)
        #expect(motion[2].velocity < motion[1].velocity)
        #expect(abs(motion[3].position - 0.58) < 1e-9)
        #expect(!recognizer.isSliding && !recognizer.isTouching)
    }

    @Test("movement inside the slop is not a slide")
    func insideSlop() {
        var recognizer = GestureRecognizer(configuration: .init(slideResolution: 101))
        var out = recognizer.handle(event(0, .touchDown, position: 50))
        for step in 1...20 { out += recognizer.handle(event(UInt64(step) * 10, .slide, position: step % 2 == 0 ? 52 : 48)) }
        out += recognizer.handle(event(300, .touchUp, position: 50))
        #expect(names(out) == ["touchBegan", "touchEnded"])
    }

    @Test("velocity: a steady swipe converges on its speed, in strip lengths per second")
    func velocity() throws {
        var recognizer = GestureRecognizer(configuration: .init(slideResolution: 1001))
        var out = recognizer.handle(event(0, .touchDown, position: 0))
        // 10 positions per 10 ms = 1 % per 10 ms = 1 strip per second.
        for step in 1...40 { out += recognizer.handle(event(UInt64(step) * 10, .slide, position: UInt32(step) * 10)) }
        let last = try #require(motions(out).last)
        #expect(abs(last.velocity - 1.0) < 0.01)
        #expect(abs(last.position - 0.4) < 1e-9)
        // Without smoothing, the velocity is the last step's.
        var raw = GestureRecognizer(configuration: .init(velocitySmoothingMicros: 0, slideResolution: 1001))
        let rawOut = raw.handle([event(0, .touchDown), event(10, .slide, position: 100), event(20, .slide, position: 300)])
        #expect(abs((motions(rawOut).last?.velocity ?? 0) - 20.0) < 1e-9)
    }

    @Test("a slide whose finger rests ends after the idle time, and can begin again")
    func idleEnd() {
        var recognizer = GestureRecognizer(configuration: .init(slideResolution: 101))
        var out = recognizer.handle([event(0, .touchDown, position: 10), event(20, .slide, position: 20)])
        #expect(names(out).last == "slideBegan")
        out = recognizer.advance(toMicros: ms(319))
        #expect(out.isEmpty)
        out = recognizer.advance(toMicros: ms(320))
        #expect(names(out) == ["slideEnded"])
        #expect(motions(out).first?.velocity == 0)
        #expect(recognizer.isTouching)
        out = recognizer.handle(event(400, .slide, position: 22))  // inside the slop from the new rest
        #expect(out.isEmpty)
        out = recognizer.handle(event(420, .slide, position: 30))
        #expect(names(out) == ["slideBegan"])
    }

    /// A host whose line brings moves late sets the horizon up to which they have surely arrived: the idle
    /// end waits for it, a reliable event stamped later (it overtook the queued moves) does not end the
    /// slide, a move that arrives moves the horizon to its own time, and a long press does not wait.
    @Test("an idle slide is judged on the best-effort horizon; a press is not")
    func idleEndOnTheHorizon() {
        var recognizer = GestureRecognizer(configuration: .init(slideResolution: 101))
        recognizer.bestEffortHorizonMicros = 0
        var out = recognizer.handle([event(0, .touchDown, position: 10), event(20, .slide, position: 20)])
        #expect(names(out).last == "slideBegan")
        #expect(recognizer.bestEffortHorizonMicros == ms(20))
        out = recognizer.advance(toMicros: ms(600))
        #expect(out.isEmpty, "the horizon is still at the last move")
        #expect(recognizer.slideIdleDeadlineMicros == ms(320))
        // A button pressed at 650 ms overtook the moves: no slide end, and its long press comes on time.
        out = recognizer.handle(event(650, .buttonDown, .volumeUp))
        #expect(names(out) == ["pressBegan"])
        #expect(recognizer.pressDeadlineMicros == ms(1050))
        out = recognizer.advance(toMicros: ms(1050))
        #expect(names(out) == ["longPressBegan"])
        // The queued move at 300 ms arrives: the same slide goes on.
        out = recognizer.handle(event(300, .slide, position: 30))
        #expect(names(out) == ["slideChanged"])
        #expect(recognizer.bestEffortHorizonMicros == ms(300))
        recognizer.bestEffortHorizonMicros = ms(599)
        #expect(recognizer.advance(toMicros: ms(1100)).isEmpty)
        recognizer.bestEffortHorizonMicros = ms(600)
        #expect(names(recognizer.advance(toMicros: ms(1100))) == ["slideEnded"])
    }

    @Test("positions beyond the resolution are clamped; a zero resolution never divides by zero")
    func badPositions() {
        var recognizer = GestureRecognizer(configuration: .init(slideResolution: 101))
        let out = recognizer.handle([event(0, .touchDown, position: 50), event(10, .slide, position: 4_000_000_000)])
        #expect(motions(out).first?.position == 1)
        var zero = GestureRecognizer(configuration: .init(slideSlopFraction: .nan, slideResolution: 0))
        let zeroOut = zero.handle([event(0, .touchDown, position: 5), event(10, .slide, position: 900)])
        #expect(names(zeroOut) == ["touchBegan"])
    }

    @Test("a slide without a touch-down (lost best-effort event) implies the touch")
    func impliedTouch() {
        var recognizer = GestureRecognizer(configuration: .init(slideResolution: 101))
        let out = recognizer.handle([event(0, .slide, position: 10), event(10, .slide, position: 20), event(20, .touchUp)])
        #expect(names(out) == ["touchBegan", "slideBegan", "slideEnded", "touchEnded"])
    }

    @Test("an older slide sample arriving late is dropped (latest wins)")
    func olderSample() {
        var recognizer = GestureRecognizer(configuration: .init(slideResolution: 101))
        var out = recognizer.handle([event(0, .touchDown, position: 10), event(30, .slide, position: 30)])
        out += recognizer.handle(event(20, .slide, position: 20))
        #expect(names(out) == ["touchBegan", "slideBegan"])
    }

    @Test("configuration from the device: slop is 1.3 mm of the strip, clamped")
    func deviceConfiguration() {
        let strip40 = GestureRecognizer.Configuration(slideResolution: 4096, slideLengthMicrometres: 40_000)
        #expect(strip40.slideResolution == 4096)
        #expect(abs(strip40.slideSlopFraction - 0.0325) < 1e-12)
        #expect(GestureRecognizer.Configuration(slideResolution: 10, slideLengthMicrometres: 1000).slideSlopFraction == 0.25)
        #expect(GestureRecognizer.Configuration(slideResolution: 10, slideLengthMicrometres: 0).slideSlopFraction == 0.03)
        var capabilities = Capabilities()
        capabilities.slideResolution = 2048
        capabilities.slideLengthMicrometres = 26_000
        let fromCaps = GestureRecognizer.Configuration(capabilities: capabilities)
        #expect(fromCaps.slideResolution == 2048 && abs(fromCaps.slideSlopFraction - 0.05) < 1e-12)
        #expect(GestureRecognizer.Configuration(capabilities: Capabilities()) == GestureRecognizer.Configuration())
    }
}

@Suite("Presses: full click, click-and-hold, buttons, remote")
struct PressTests {
    @Test("click-and-hold: long press begins at 400 ms without a new event, ends with its duration")
    func clickAndHold() {
        var recognizer = GestureRecognizer()
        var out = recognizer.handle(event(1000, .fullPressDown, force: 3000))
        #expect(recognizer.advance(toMicros: ms(1399)).isEmpty)
        out = recognizer.advance(toMicros: ms(1400))
        #expect(
            out == [
                Gesture(
                    kind: .longPressBegan(heldMicros: ms(400)), source: .cameraControl, timestampMicros: ms(1400), forceMillinewtons: 3000)
            ])
        #expect(recognizer.advance(toMicros: ms(1500)).isEmpty)  // only once
        out = recognizer.handle(event(2250, .fullPressUp, peak: 3300))
        #expect(names(out) == ["pressEnded"])
        #expect(summary(out) == PressSummary(durationMicros: ms(1250), isLongPress: true, peakForceMillinewtons: 3300))
    }

    @Test("a release that arrives late still reports the long press first")
    func lateRelease() {
        var recognizer = GestureRecognizer()
        let out = recognizer.handle([event(0, .buttonDown, .volumeDown), event(900, .buttonUp, .volumeDown)])
        #expect(names(out) == ["pressBegan", "longPressBegan", "pressEnded"])
        #expect(summary(out)?.isLongPress == true)
    }

    @Test("button click vs hold", arguments: [InputSource.volumeUp, .volumeDown, .actionButton])
    func buttons(source: InputSource) {
        var recognizer = GestureRecognizer()
        let click = recognizer.handle([event(0, .buttonDown, source), event(120, .buttonUp, source)])
        #expect(names(click) == ["pressBegan", "pressEnded"])
        #expect(click.allSatisfy { $0.source == source })
        #expect(summary(click) == PressSummary(durationMicros: ms(120), isLongPress: false, peakForceMillinewtons: 0))
        var hold = recognizer.handle(event(1000, .buttonDown, source))
        hold += recognizer.advance(toMicros: ms(1400))
        hold += recognizer.handle(event(1600, .buttonUp, source))
        #expect(names(hold) == ["pressBegan", "longPressBegan", "pressEnded"])
        #expect(summary(hold) == PressSummary(durationMicros: ms(600), isLongPress: true, peakForceMillinewtons: 0))
    }

    @Test("the long-press threshold is a configuration value")
    func threshold() {
        var recognizer = GestureRecognizer(configuration: .init(longPressThresholdMicros: ms(1000)))
        let out = recognizer.handle([event(0, .buttonDown, .actionButton), event(900, .buttonUp, .actionButton)])
        #expect(summary(out)?.isLongPress == false)
    }

    @Test("presses on different buttons overlap independently")
    func overlapping() {
        var recognizer = GestureRecognizer()
        let out = recognizer.handle([
            event(0, .buttonDown, .volumeUp), event(10, .buttonDown, .volumeDown), event(20, .buttonUp, .volumeUp),
            event(30, .buttonUp, .volumeDown),
        ])
        #expect(
            out.map { "\(name($0.kind)) \($0.source)" } == [
                "pressBegan volume-up", "pressBegan volume-down", "pressEnded volume-up", "pressEnded volume-down",
            ])
    }

    @Test("remote click: one gesture, remote source (also when the device left the source unset)")
    func remote() {
        var recognizer = GestureRecognizer()
        let out = recognizer.handle([event(5, .remoteClick, .remote), event(6, .remoteClick, .unspecified)])
        #expect(
            out == [
                Gesture(kind: .remoteClick, source: .remote, timestampMicros: ms(5)),
                Gesture(kind: .remoteClick, source: .remote, timestampMicros: ms(6)),
            ])
    }
}

@Suite("Robustness and reset")
struct RobustnessTests {
    @Test("an UP without its DOWN is ignored", arguments: [InputEventKind.touchUp, .lightPressUp, .fullPressUp, .buttonUp])
    func upWithoutDown(kind: InputEventKind) {
        var recognizer = GestureRecognizer()
        let source: InputSource = kind == .buttonUp ? .volumeDown : .cameraControl
        #expect(recognizer.handle(event(10, kind, source)).isEmpty)
    }

    @Test("a DOWN while already down is ignored")
    func downWhileDown() {
        var recognizer = GestureRecognizer()
        let out = recognizer.handle([
            event(0, .buttonDown, .actionButton), event(10, .buttonDown, .actionButton), event(20, .buttonUp, .actionButton),
            event(30, .buttonUp, .actionButton), event(40, .lightPressDown), event(50, .lightPressDown), event(60, .touchDown),
        ])
        #expect(names(out) == ["pressBegan", "pressEnded", "touchBegan", "lightPressBegan"])
        #expect(summary(out)?.durationMicros == ms(20))
    }

    @Test("duplicated events (same event number) are ignored; number 0 is never a duplicate")
    func duplicates() {
        var recognizer = GestureRecognizer()
        let out = recognizer.handle([
            event(0, .remoteClick, .remote, number: 7), event(0, .remoteClick, .remote, number: 7),
            event(1, .remoteClick, .remote), event(1, .remoteClick, .remote),
        ])
        #expect(out.count == 3)
    }

    @Test("the duplicate history keeps the last duplicateHistoryLength numbers, also after it wrapped or its length changed")
    func duplicateHistoryLength() {
        var recognizer = GestureRecognizer(configuration: .init(duplicateHistoryLength: 3))
        func clicks(_ numbers: [UInt32], at time: UInt64) -> Int {
            recognizer.handle(numbers.enumerated().map { event(time + UInt64($0.offset), .remoteClick, .remote, number: $0.element) }).count
        }
        #expect(clicks([1, 2, 3, 4, 5], at: 0) == 5)  // the ring wrapped: 3, 4, 5 are kept
        #expect(clicks([3, 4, 5], at: 10) == 0)
        #expect(clicks([1], at: 20) == 1)  // forgotten: 4, 5, 1 now
        #expect(clicks([3], at: 30) == 1)  // 5, 1, 3
        #expect(clicks([4], at: 40) == 1)  // 1, 3, 4
        // Shorter: the newest kept, the next one in place of the oldest.
        recognizer.configuration.duplicateHistoryLength = 2
        #expect(clicks([9], at: 50) == 1)  // 4, 9
        #expect(clicks([3], at: 60) == 1)
        #expect(clicks([9, 3], at: 70) == 0)
        // Longer: nothing forgotten until it fills.
        recognizer.configuration.duplicateHistoryLength = 4
        #expect(clicks([6, 7], at: 80) == 2)  // 9, 3, 6, 7
        #expect(clicks([9, 3, 6, 7], at: 90) == 0)
    }

    @Test("a DOWN older than the last UP of that input arrived out of order and is ignored")
    func staleDown() {
        var recognizer = GestureRecognizer()
        let out = recognizer.handle([event(200, .buttonUp, .volumeUp), event(100, .buttonDown, .volumeUp)])
        #expect(out.isEmpty)
        #expect(recognizer.pressesInFlight.isEmpty)
    }

    @Test("buttons from sources that are not buttons, and unknown kinds, are ignored")
    func strangeSources() {
        var recognizer = GestureRecognizer()
        let out = recognizer.handle([
            event(0, .buttonDown, .unspecified), event(1, .buttonDown, .remote), event(2, .buttonDown, .cameraControl),
            event(3, .unspecified, .volumeUp), event(4, .slide, .volumeUp, position: 500),
        ])
        #expect(out.isEmpty)
    }

    @Test("reset (device lost) closes everything in flight, then later UPs are ignored")
    func resetMidGesture() {
        var recognizer = GestureRecognizer(configuration: .init(slideResolution: 101))
        _ = recognizer.handle([
            event(0, .touchDown, position: 10), event(5, .lightPressDown, position: 10), event(10, .slide, position: 30),
            event(20, .fullPressDown, position: 30), event(25, .buttonDown, .volumeUp),
        ])
        let out = recognizer.reset(cancellingAtMicros: ms(50))
        #expect(
            out.map { "\(name($0.kind)) \($0.source)" } == [
                "slideEnded camera-control", "lightPressEnded camera-control", "pressCancelled camera-control",
                "pressCancelled volume-up", "touchEnded camera-control",
            ])
        #expect(out.allSatisfy { $0.timestampMicros == ms(50) })
        let after = recognizer.handle([event(60, .fullPressUp), event(61, .buttonUp, .volumeUp), event(62, .touchUp)])
        #expect(after.isEmpty)
        #expect(recognizer.reset().isEmpty)
    }

    @Test("a device clock that jumps far back (unnoticed reboot) resets first")
    func clockRestart() {
        var recognizer = GestureRecognizer()
        _ = recognizer.handle(event(10_000, .buttonDown, .volumeDown))
        let out = recognizer.handle(event(5, .buttonDown, .volumeDown))
        #expect(out.map { "\(name($0.kind)) \($0.timestampMicros)" } == ["pressCancelled \(ms(10_000))", "pressBegan \(ms(5))"])
        // A small reordering (within the tolerance) is not a restart.
        var small = GestureRecognizer()
        _ = small.handle(event(1000, .buttonDown, .volumeUp))
        #expect(small.handle(event(900, .remoteClick, .remote)).map { name($0.kind) } == ["remoteClick"])
        #expect(small.pressesInFlight == [.volumeUp])
    }

    @Test("time never runs backwards")
    func advanceBackwards() {
        var recognizer = GestureRecognizer()
        _ = recognizer.handle(event(0, .fullPressDown))
        _ = recognizer.advance(toMicros: ms(100))
        #expect(recognizer.advance(toMicros: ms(50)).isEmpty)
        #expect(recognizer.currentMicros == ms(100))
    }
}

@Suite("Recogniser: gestures into a kept buffer")
struct RecognizerBufferTests {
    @Test("handle(_:into:) and advance(toMicros:into:) append to the buffer, the same gestures as the arrays")
    func appendsLikeTheArrays() {
        var buffered = GestureRecognizer()
        var plain = GestureRecognizer()
        let events = [event(0, .buttonDown, .volumeDown), event(900, .buttonUp, .volumeDown)]
        var out = [Gesture(kind: .touchEnded, source: .cameraControl, timestampMicros: 1, forceMillinewtons: 0)]
        buffered.handle(events[0], into: &out)
        buffered.advance(toMicros: ms(700), into: &out)
        buffered.handle(events[1], into: &out)
        let expected = plain.handle(events[0]) + plain.advance(toMicros: ms(700)) + plain.handle(events[1])
        #expect(names(out) == ["touchEnded"] + names(expected))
        #expect(names(expected) == ["pressBegan", "longPressBegan", "pressEnded"])
    }
}
