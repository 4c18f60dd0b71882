import CameraControlCapture
import CameraControlGestures
import CameraControlWire
import Testing

@Suite("Capture routing")
struct CaptureRoutingTests {
    @Test("a Camera Control full click: began at press, ended at release with duration and force")
    func fullClick() throws {
        var router = runningRouter()
        let began = router.handle(gesture(10, .pressBegan, .cameraControl, force: 3000), atHostMicros: 111)
        let end = router.handle(gesture(130, ended(120, peak: 3600), .cameraControl, force: 500), atHostMicros: 222)
        #expect(described(began + end) == ["began primary camera-control", "ended primary camera-control"])
        let first = try #require(events(began).first)
        let last = try #require(events(end).first)
        #expect(first.id == last.id)
        #expect(first.forceMillinewtons == 3000 && first.deviceTimestampMicros == ms(10) && first.receivedAtHostMicros == 111)
        #expect(first.pressDurationMicros == nil)
        #expect(last.pressDurationMicros == ms(120) && last.peakForceMillinewtons == 3600 && !last.isLongPress)
        #expect(!last.shouldPlaySound)
    }

    @Test("handle(_:atHostMicros:into:) appends to the buffer what handle(_:atHostMicros:) returns")
    func routesIntoABuffer() {
        var buffered = runningRouter()
        var plain = runningRouter()
        var out: [CaptureRouterOutput] = []
        for gesture in click(.volumeDown) + click(.volumeUp, at: 500) {
            buffered.handle(gesture, atHostMicros: 1, into: &out)
        }
        let expected = (click(.volumeDown) + click(.volumeUp, at: 500)).flatMap { plain.handle($0, atHostMicros: 1) }
        #expect(described(out) == described(expected))
        #expect(described(out).count == 4)
    }

    @Test("light presses, slides, touches and double presses never make capture events")
    func nonCaptureGestures() {
        var router = runningRouter()
        let motion = SlideMotion(position: 0.5, delta: 0.1, velocity: 1)
        let out = router.handle(
            [
                gesture(0, .touchBegan, .cameraControl), gesture(1, .lightPressBegan, .cameraControl),
                gesture(2, .doubleLightPress, .cameraControl), gesture(3, .slideBegan(motion), .cameraControl),
                gesture(4, .slideChanged(motion), .cameraControl), gesture(5, .slideEnded(motion), .cameraControl),
                gesture(6, .lightPressEnded, .cameraControl), gesture(7, .touchEnded, .cameraControl),
            ], atHostMicros: 0)
        #expect(out.isEmpty)
    }

    @Test("primary sources", arguments: [InputSource.volumeDown, .actionButton, .cameraControl])
    func primarySources(source: InputSource) {
        var router = runningRouter(secondary: true)
        #expect(described(router.handle(click(source), atHostMicros: 0)) == ["began primary \(source)", "ended primary \(source)"])
    }

    @Test("a remote click is began and ended at once, to primary, with the default sound")
    func remoteClick() {
        var router = runningRouter(secondary: true)
        let out = router.handle(gesture(5, .remoteClick, .remote), atHostMicros: 0)
        #expect(described(out) == ["began primary remote", "ended primary remote", "sound shutter"])
        let both = events(out)
        #expect(both[0].id == both[1].id && both[1].pressDurationMicros == 0)
    }

    @Test("volume up: secondary when there is a secondary handler, else primary")
    func volumeUp() {
        var withSecondary = runningRouter(secondary: true)
        #expect(
            described(withSecondary.handle(click(.volumeUp), atHostMicros: 0)) == [
                "began secondary volume-up", "ended secondary volume-up",
            ])
        var without = runningRouter(secondary: false)
        #expect(described(without.handle(click(.volumeUp), atHostMicros: 0)) == ["began primary volume-up", "ended primary volume-up"])
    }

    @Test("the same press never reaches both handlers, even if the handlers change mid-press")
    func sameNeverBoth() {
        var router = runningRouter(secondary: true)
        var out = router.handle(gesture(0, .pressBegan, .volumeUp), atHostMicros: 0)
        router.setHasSecondaryHandler(false)
        out += router.handle(gesture(100, ended(100), .volumeUp), atHostMicros: 0)
        #expect(described(out) == ["began secondary volume-up", "ended secondary volume-up"])
        out = router.handle(click(.volumeUp, at: 200), atHostMicros: 0)
        #expect(described(out) == ["began primary volume-up", "ended primary volume-up"])
    }

    @Test("every press gets its own id")
    func uniqueIDs() {
        var router = runningRouter()
        var out: [CaptureRouterOutput] = []
        for index in 0..<5 { out += router.handle(click(.volumeDown, at: UInt64(index) * 1000), atHostMicros: 0) }
        out += router.handle(gesture(9000, .remoteClick, .remote), atHostMicros: 0)
        let ids = events(out).filter { $0.phase == .began }.map(\.id)
        #expect(Set(ids).count == 6)
    }

    @Test("click-and-hold: ended says long press and how long")
    func hold() throws {
        var router = runningRouter()
        var out = router.handle(gesture(0, .pressBegan, .volumeDown), atHostMicros: 0)
        out += router.handle(gesture(400, .longPressBegan(heldMicros: ms(400)), .volumeDown), atHostMicros: 0)
        #expect(out.count == 1)  // no event for the long-press moment itself (Apple has no such phase)
        out += router.handle(gesture(1500, ended(1500, long: true), .volumeDown), atHostMicros: 0)
        let last = try #require(events(out).last)
        #expect(last.phase == .ended && last.isLongPress && last.pressDurationMicros == ms(1500))
    }

    @Test("ends and cancels without a began are ignored")
    func orphanEnds() {
        var router = runningRouter()
        let out = router.handle([gesture(0, ended(10), .volumeDown), gesture(1, .pressCancelled, .actionButton)], atHostMicros: 0)
        #expect(out.isEmpty)
    }

    @Test("a pressBegan while that source is already in flight is ignored")
    func doubleBegan() {
        var router = runningRouter()
        let out = router.handle([gesture(0, .pressBegan, .volumeDown), gesture(1, .pressBegan, .volumeDown)], atHostMicros: 0)
        #expect(out.count == 1)
    }
}

@Suite("Capture session state and default actions")
struct CaptureSessionStateTests {
    @Test(
        "disabled: presses go to the default action with phases of their own",
        arguments: [
            (InputSource.volumeUp, DefaultAction.volumeUp), (.volumeDown, .volumeDown), (.actionButton, .actionButton),
            (.cameraControl, .launchCamera),
        ])
    func disabled(source: InputSource, action: DefaultAction) {
        var router = CaptureEventRouter(configuration: .init(isEnabled: false), isSessionRunning: true)
        let out = router.handle(click(source), atHostMicros: 0)
        #expect(described(out) == ["default began \(action.rawValue)", "default ended \(action.rawValue)"])
    }

    @Test("a remote click while disabled: default action none, no sound")
    func remoteDisabled() {
        var router = CaptureEventRouter(configuration: .init(isEnabled: false), isSessionRunning: true)
        #expect(
            described(router.handle(gesture(0, .remoteClick, .remote), atHostMicros: 0)) == ["default began none", "default ended none"])
    }

    @Test("not running: nothing is delivered; a press that began before the start never is, not even its end")
    func notRunning() {
        var router = CaptureEventRouter()
        var out = router.handle(click(.volumeDown), atHostMicros: 0)
        #expect(events(out).isEmpty)
        out = router.handle(gesture(200, .pressBegan, .cameraControl), atHostMicros: 0)
        out += router.setSessionRunning(true, atHostMicros: 0)
        out += router.handle(gesture(300, ended(100), .cameraControl), atHostMicros: 0)
        #expect(described(out) == ["default began launchCamera", "default ended launchCamera"])
        out = router.handle(click(.cameraControl, at: 400), atHostMicros: 0)
        #expect(described(out) == ["began primary camera-control", "ended primary camera-control"])
    }

    @Test("session stopped mid-press: cancelled now, the later release is not delivered")
    func stoppedMidPress() {
        // A secondary and a primary press in flight (two primaries cannot be: one press per handler).
        var router = runningRouter(secondary: true)
        var out = router.handle([gesture(0, .pressBegan, .volumeUp), gesture(5, .pressBegan, .cameraControl)], atHostMicros: 0)
        out += router.setSessionRunning(false, atHostMicros: 0)
        out += router.handle([gesture(100, ended(100), .volumeUp), gesture(105, ended(100), .cameraControl)], atHostMicros: 0)
        #expect(
            described(out) == [
                "began secondary volume-up", "began primary camera-control", "cancelled secondary volume-up",
                "cancelled primary camera-control",
            ])
        let ids = events(out).map(\.id)
        #expect(ids[0] == ids[2] && ids[1] == ids[3])
    }

    @Test("disabled mid-press: cancelled")
    func disabledMidPress() {
        var router = runningRouter()
        var out = router.handle(gesture(0, .pressBegan, .actionButton), atHostMicros: 0)
        out += router.setEnabled(false, atHostMicros: 0)
        out += router.handle(gesture(100, ended(100), .actionButton), atHostMicros: 0)
        #expect(described(out) == ["began primary action-button", "cancelled primary action-button"])
    }

    @Test("device lost mid-press (the recogniser's reset): cancelled")
    func deviceLostViaRecognizer() {
        var recognizer = GestureRecognizer()
        var router = runningRouter()
        var out = router.handle(
            recognizer.handle([
                InputEvent(timestampMicros: 0, kind: .lightPressDown, source: .cameraControl),
                InputEvent(timestampMicros: 10, kind: .fullPressDown, source: .cameraControl, forceMillinewtons: 3000),
            ]), atHostMicros: 0)
        out += router.handle(recognizer.reset(), atHostMicros: 0)
        #expect(described(out) == ["began primary camera-control", "cancelled primary camera-control"])
    }

    @Test("device lost (cancelAll): handler presses and default-action presses are all cancelled")
    func cancelAll() {
        var router = CaptureEventRouter()
        var out = router.handle(gesture(0, .pressBegan, .volumeUp), atHostMicros: 0)  // not running: default
        out += router.setSessionRunning(true, atHostMicros: 0)
        out += router.handle(gesture(1, .pressBegan, .volumeDown), atHostMicros: 0)
        out += router.cancelAll(atHostMicros: 0)
        #expect(
            described(out) == [
                "default began volumeUp", "began primary volume-down", "default cancelled volumeUp", "cancelled primary volume-down",
            ])
        #expect(router.pressesInFlight.isEmpty)
    }

    @Test("stopping the session leaves default-action presses alone")
    func stopKeepsDefault() {
        var router = CaptureEventRouter(configuration: .init(isEnabled: false), isSessionRunning: true)
        var out = router.handle(gesture(0, .pressBegan, .volumeUp), atHostMicros: 0)
        out += router.setSessionRunning(false, atHostMicros: 0)
        out += router.handle(gesture(100, ended(100), .volumeUp), atHostMicros: 0)
        #expect(described(out) == ["default began volumeUp", "default ended volumeUp"])
    }
}

@Suite("Capture sounds")
struct CaptureSoundTests {
    /// (source, default sound disabled, shouldPlaySound expected)
    @Test(
        "shouldPlaySound only for remote clicks with the default sound disabled",
        arguments: [
            (InputSource.remote, true, true), (.remote, false, false), (.cameraControl, true, false),
            (.volumeDown, true, false), (.volumeUp, true, false), (.actionButton, true, false),
        ] as [(InputSource, Bool, Bool)])
    func shouldPlaySound(source: InputSource, disabled: Bool, expected: Bool) {
        var router = runningRouter(soundDisabled: disabled)
        let gestures = source == .remote ? [gesture(0, .remoteClick, .remote)] : click(source)
        let delivered = events(router.handle(gestures, atHostMicros: 0))
        #expect(delivered.count == 2)
        #expect(delivered.allSatisfy { $0.shouldPlaySound == expected })
    }

    @Test("no default sound when the app plays its own")
    func noDefaultSound() {
        var router = runningRouter(soundDisabled: true)
        #expect(!described(router.handle(gesture(0, .remoteClick, .remote), atHostMicros: 0)).contains("sound shutter"))
    }

    @Test("play() ignores events older than 15 s and events that should not play")
    func playRules() async throws {
        let player = RecordingSoundPlayer()
        var router = runningRouter(soundDisabled: true)
        let remote = events(router.handle(gesture(0, .remoteClick, .remote), atHostMicros: 1_000_000))[1]
        let button = events(router.handle(click(.volumeDown), atHostMicros: 1_000_000))[1]

        #expect(try await remote.play(.shutter, using: player, atHostMicros: 1_000_000))
        #expect(try await remote.play(.beginVideoRecording, using: player, atHostMicros: 16_000_000))  // exactly 15 s: plays
        #expect(try await !remote.play(.endVideoRecording, using: player, atHostMicros: 16_000_001))  // older: ignored
        #expect(try await !button.play(.shutter, using: player, atHostMicros: 1_000_000))  // not a remote click
        #expect(player.sounds == [.shutter, .beginVideoRecording])
        // An event not made by an interaction with a player has nothing to play through.
        #expect(try await !remote.play(.shutter))
    }
}
