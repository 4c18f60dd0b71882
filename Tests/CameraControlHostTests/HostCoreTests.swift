import CameraControlCapture
import CameraControlControls
import CameraControlGestures
import CameraControlHost
import CameraControlRPC
import CameraControlTestSupport
import CameraControlTransport
import CameraControlWire
import Testing

/// The pipeline's wiring, byte-free: events and time in, effects and capture events out.
@Suite("HostCore")
struct HostCoreTests {
    struct Rig {
        let core = HostCore()
        /// Everything the app and the observer saw, in one ordered log.
        let log = Recorder<String>()
        let clock = ManualClock()
        let interaction: CaptureEventInteraction

        init(deviceOffset: UInt64 = 0) {
            let log = self.log
            interaction = CaptureEventInteraction(clock: clock.captureClock) { event in
                log.append("capture \(event.phase.rawValue) \(event.source)")
            }
            core.attach(interaction)
            core.observer = { effect in
                switch effect {
                case .gesture(let gesture): log.append("gesture \(gesture.kind)")
                case .overlay(let effect, _): log.append("overlay \(effect)")
                case .deviceLost: log.append("device-lost")
                case .focusExposureLock(let event): log.append("lock \(event)")
                case .connected, .input: break
                }
            }
            var capabilities = Capabilities()
            capabilities.supportsControls = true
            capabilities.maxControls = 4
            core.connected(capabilities)
            // The device's clock reads host time minus `deviceOffset`, exactly.
            core.addClockSample(sentAtHostMicros: 1_000_000, receivedAtHostMicros: 1_000_000, deviceMicros: 1_000_000 - deviceOffset)
            interaction.setSessionRunning(true)
        }

        /// The delegates the rig's controls sessions hold weakly (as Apple's), kept for the test's life.
        private let delegates = Recorder<Delegate>()

        /// A controls session with one slider ("Level") and a delegate logging into ``log``, attached to the core.
        @discardableResult
        func attachControls() throws -> CaptureControlsSession {
            let controls = try CaptureControlsSession(capabilities: ControlsCapabilities(supportsControls: true, maxControls: 4))
            let slider = try CaptureSlider("Level", symbolName: "dial.low", in: 0...1)
            slider.setActionQueue(InlineExecutor()) { _ in }
            try controls.addControl(slider)
            let delegate = Delegate(log: log)
            delegates.append(delegate)
            controls.setControlsDelegate(delegate, executor: InlineExecutor())
            core.attach(controls)
            return controls
        }

        func receive(_ kind: InputEventKind, _ source: InputSource, atHost host: UInt64, number: UInt32, deviceOffset: UInt64 = 0) {
            clock.advance(toMicros: host)
            core.receive(
                InputEvent(
                    timestampMicros: host - deviceOffset, kind: kind, source: source,
                    forceMillinewtons: kind == .fullPressDown ? 2600 : 0, eventNumber: number),
                atHostMicros: host)
            core.advance(toHostMicros: host)
        }
    }

    @Test("a controls session attached before the device connected is bound to it at connect, and again at every connect")
    func controlsBoundAtConnect() throws {
        let core = HostCore()
        let controls = try CaptureControlsSession(capabilities: nil)
        core.attach(controls)
        #expect(controls.capabilities == nil)
        core.connected(Capabilities(maxControls: 3, supportsControls: true))
        #expect(controls.capabilities == ControlsCapabilities(supportsControls: true, maxControls: 3))
        core.deviceLost(atHostMicros: 1_000)
        core.connected(Capabilities(maxControls: 1, supportsControls: true))
        #expect(controls.maxControlsCount == 1, "another device: its limit")
        let late = try CaptureControlsSession(capabilities: nil)
        core.attach(late)
        let bound = ControlsCapabilities(supportsControls: true, maxControls: 1)
        #expect(late.capabilities == bound, "attached while connected: bound at once")
    }

    @Test("a held button: the next deadline is the long-press threshold, in host time, and nothing fires before it")
    func longPressDeadline() {
        let offset: UInt64 = 250_000
        let rig = Rig(deviceOffset: offset)
        rig.receive(.buttonDown, .volumeDown, atHost: 2_000_000, number: 1, deviceOffset: offset)
        let threshold = GestureRecognizer.Configuration().longPressThresholdMicros
        #expect(rig.core.nextDeadlineHostMicros == 2_000_000 + threshold)
        rig.core.advance(toHostMicros: 2_000_000 + threshold - 1)
        #expect(!rig.log.values.contains { $0.hasPrefix("gesture long-press-began") })
        rig.core.advance(toHostMicros: 2_000_000 + threshold)
        #expect(rig.log.values.contains { $0.hasPrefix("gesture long-press-began") })
        #expect(rig.core.nextDeadlineHostMicros == nil, "nothing pending: the host sleeps until the next event")
    }

    @Test("without reportsInputsAndGestures the observer hears no input or gesture, the rest as before, and captures still come")
    func inputsAndGesturesUnreported() {
        let rig = Rig()
        rig.core.reportsInputsAndGestures = false
        rig.receive(.touchDown, .cameraControl, atHost: 2_000_000, number: 1)
        rig.receive(.fullPressDown, .cameraControl, atHost: 2_050_000, number: 2)
        rig.receive(.fullPressUp, .cameraControl, atHost: 2_100_000, number: 3)
        rig.receive(.touchUp, .cameraControl, atHost: 2_120_000, number: 4)
        #expect(!rig.log.values.contains { $0.hasPrefix("gesture ") }, "\(rig.log.values)")
        #expect(rig.log.values.contains("capture began camera-control"), "\(rig.log.values)")
        #expect(rig.log.values.contains("capture ended camera-control"), "\(rig.log.values)")
        rig.core.deviceLost(atHostMicros: 2_200_000)
        #expect(rig.log.values.last == "device-lost", "the other effects are still reported: \(rig.log.values)")

        rig.core.reportsInputsAndGestures = true
        rig.core.addClockSample(sentAtHostMicros: 3_000_000, receivedAtHostMicros: 3_000_000, deviceMicros: 3_000_000)
        rig.receive(.buttonDown, .volumeUp, atHost: 3_000_000, number: 1)
        #expect(rig.log.values.contains { $0.hasPrefix("gesture press-began") }, "\(rig.log.values)")
    }

    @Test("an event after a gap waits for the missing one at most the reorder hold, and the deadline says when")
    func reorderDeadline() {
        let rig = Rig()
        rig.receive(.buttonDown, .volumeUp, atHost: 2_000_000, number: 1)
        rig.receive(.buttonUp, .volumeUp, atHost: 2_100_000, number: 3)  // number 2 is missing
        #expect(rig.core.nextDeadlineHostMicros == 2_100_000 + 150_000)
        #expect(!rig.log.values.contains("capture ended volume-up"))
        rig.core.advance(toHostMicros: 2_250_000)
        #expect(rig.log.values.contains("capture ended volume-up"))
    }

    @Test("a full click collapses the overlay, delegate told, before the capture event is delivered")
    func fullClickCollapsesFirst() throws {
        let rig = Rig()
        try rig.attachControls()
        rig.receive(.touchDown, .cameraControl, atHost: 2_000_000, number: 1)
        rig.receive(.lightPressDown, .cameraControl, atHost: 2_010_000, number: 2)
        // A half press held past the light-press hold-off shows the overlay; the full press then shoots.
        rig.core.advance(toHostMicros: 2_010_000 + OverlayConfiguration().lightPressConfirmMicros)
        rig.receive(.fullPressDown, .cameraControl, atHost: 2_200_000, number: 3)
        let log = rig.log.values
        let hidden = try #require(log.firstIndex(of: "overlay overlay-hidden"))
        let inactive = try #require(log.firstIndex(of: "delegate inactive"))
        let began = try #require(log.firstIndex(of: "capture began camera-control"))
        #expect(log.firstIndex(of: "delegate active")! < inactive)
        #expect(inactive < began && hidden < began, "\(log)")
    }

    @Test("the overlay does not show while the capture session is stopped, and is dismissed when it stops")
    func overlayOnlyWhileRunning() throws {
        let rig = Rig()
        let controls = try rig.attachControls()
        rig.interaction.setSessionRunning(false)
        rig.receive(.lightPressDown, .cameraControl, atHost: 2_000_000, number: 1)
        #expect(controls.phase == .hidden)
        #expect(controls.diagnostics.contains(.sessionNotRunning))
        rig.receive(.lightPressUp, .cameraControl, atHost: 2_100_000, number: 2)
        rig.interaction.setSessionRunning(true)
        rig.receive(.lightPressDown, .cameraControl, atHost: 2_500_000, number: 3)
        rig.core.advance(toHostMicros: 2_600_000)
        #expect(controls.phase != .hidden)
        rig.interaction.setSessionRunning(false)
        rig.core.advance(toHostMicros: 2_700_000)
        #expect(controls.phase == .hidden)
        #expect(rig.log.values.last == "overlay overlay-hidden" || rig.log.values.last == "delegate inactive")
    }

    @Test("the AE/AF lock: none while the interaction is disabled, and a held one is cancelled when it is disabled")
    func lockNeedsAnEnabledInteraction() throws {
        let rig = Rig()
        rig.core.attachCamera(try SyntheticCamera(), focusExposureLock: true)
        // Disabled before the lock's 400 ms: it never locks.
        rig.receive(.touchDown, .cameraControl, atHost: 2_000_000, number: 1)
        rig.receive(.lightPressDown, .cameraControl, atHost: 2_010_000, number: 2)
        rig.interaction.isEnabled = false
        // A gesture past the lock's deadline, before any advance since the interaction was disabled, takes no lock.
        rig.clock.advance(toMicros: 2_450_000)
        rig.core.receive(
            InputEvent(timestampMicros: 2_450_000, kind: .lightPressUp, source: .cameraControl, eventNumber: 3),
            atHostMicros: 2_450_000)
        rig.core.advance(toHostMicros: 2_500_000)
        #expect(!rig.log.values.contains { $0.hasPrefix("lock ") }, "\(rig.log.values)")
        rig.receive(.touchUp, .cameraControl, atHost: 2_600_000, number: 4)
        rig.receive(.touchDown, .cameraControl, atHost: 2_900_000, number: 5)
        // Enabled again: a held light press locks; disabled then, the lock is cancelled.
        rig.interaction.isEnabled = true
        rig.receive(.lightPressDown, .cameraControl, atHost: 3_000_000, number: 6)
        rig.core.advance(toHostMicros: 3_450_000)
        #expect(rig.log.values.contains { $0.hasPrefix("lock locked") }, "\(rig.log.values)")
        rig.interaction.isEnabled = false
        rig.core.advance(toHostMicros: 3_460_000)
        #expect(rig.log.values.last?.hasPrefix("lock unlocked") == true, "\(rig.log.values)")
        #expect(rig.log.values.last?.hasSuffix("cancelled") == true, "\(rig.log.values)")
    }

    @Test("the AE/AF lock needs a capture interaction: with none attached a held light press locks nothing")
    func lockNeedsAnInteraction() throws {
        let core = HostCore()
        let log = Recorder<String>()
        core.observer = { effect in if case .focusExposureLock(let event) = effect { log.append("lock \(event)") } }
        core.connected(Capabilities(maxControls: 4, supportsControls: true))
        core.addClockSample(sentAtHostMicros: 1_000_000, receivedAtHostMicros: 1_000_000, deviceMicros: 1_000_000)
        let camera = try SyntheticCamera()
        core.attachCamera(camera, focusExposureLock: true)
        let press = InputEvent(timestampMicros: 2_000_000, kind: .lightPressDown, source: .cameraControl, eventNumber: 1)
        core.receive(press, atHostMicros: 2_000_000)
        core.advance(toHostMicros: 2_600_000)
        #expect(camera.focusExposureLockChanges.isEmpty, "\(log.values)")
        #expect(log.values.isEmpty)
        // An interaction attached and running: the next held light press locks.
        let interaction = CaptureEventInteraction(clock: CaptureClock { 2_600_000 }) { _ in }
        core.attach(interaction)
        interaction.setSessionRunning(true)
        core.receive(
            InputEvent(timestampMicros: 2_700_000, kind: .lightPressUp, source: .cameraControl, eventNumber: 2),
            atHostMicros: 2_700_000)
        core.receive(
            InputEvent(timestampMicros: 2_800_000, kind: .lightPressDown, source: .cameraControl, eventNumber: 3),
            atHostMicros: 2_800_000)
        core.advance(toHostMicros: 3_300_000)
        #expect(camera.focusExposureLock == .both, "\(log.values)")
    }

    @Test("a finger lifted straight off a locked full click (the touch ends before the press): the photo is still locked")
    func abruptReleaseShootsLocked() throws {
        let rig = Rig()
        let camera = try SyntheticCamera()
        rig.core.attachCamera(camera, focusExposureLock: true)
        // What the photo is taken with: the camera's lock when the capture ends.
        let shot = Recorder<FocusExposureLock>()
        let shooter = CaptureEventInteraction(clock: rig.clock.captureClock) { event in
            if event.phase == .ended { shot.append(camera.focusExposureLock) }
        }
        rig.core.attach(shooter)
        shooter.setSessionRunning(true)
        rig.receive(.touchDown, .cameraControl, atHost: 2_000_000, number: 1)
        rig.receive(.lightPressDown, .cameraControl, atHost: 2_010_000, number: 2)
        rig.core.advance(toHostMicros: 2_500_000)
        #expect(camera.focusExposureLock == .both)
        rig.receive(.fullPressDown, .cameraControl, atHost: 2_600_000, number: 3)
        // The capacitive touch ends at once; the filtered force falls through the stages a few ms later.
        rig.receive(.touchUp, .cameraControl, atHost: 2_700_000, number: 4)
        rig.receive(.fullPressUp, .cameraControl, atHost: 2_706_000, number: 5)
        rig.receive(.lightPressUp, .cameraControl, atHost: 2_708_000, number: 6)
        #expect(shot.values == [.both], "\(rig.log.values)")
        #expect(camera.focusExposureLock.isEmpty)
        #expect(camera.focusExposureLockChanges == [.both, []])
        let log = rig.log.values
        let ended = try #require(log.firstIndex(of: "capture ended camera-control"), "\(log)")
        let unlocked = try #require(log.firstIndex { $0.hasPrefix("lock unlocked") }, "\(log)")
        #expect(ended < unlocked, "\(log)")
        #expect(log[unlocked] == "lock unlocked @2708000", "unlocked at the light press's end: \(log)")
    }

    /// On an iPhone the light press that confirms a choice in the control list is a selection, not a
    /// half-press of the shutter. Before 2026-12-07 one held 400 ms also locked focus and exposure.
    @Test("a light press that confirms a control in the list never locks AE/AF; one in the plain overlay still does")
    func confirmingLightPressDoesNotLock() throws {
        let rig = Rig()
        let camera = try SyntheticCamera()
        rig.core.attachCamera(camera, focusExposureLock: true)
        let controls = try rig.attachControls()
        let second = try CaptureSlider("Warmth", symbolName: "thermometer", in: 0...1)
        second.setActionQueue(InlineExecutor()) { _ in }
        try controls.addControl(second)
        // A double light press opens the list; a slide highlights the second control.
        let open: [(device: UInt64, kind: InputEventKind, position: UInt32)] = [
            (2_000_000, .touchDown, 100), (2_010_000, .lightPressDown, 100), (2_080_000, .lightPressUp, 100),
            (2_200_000, .lightPressDown, 100), (2_280_000, .lightPressUp, 100),
        ]
        var slide: [(device: UInt64, kind: InputEventKind, position: UInt32)] = []
        for step in 1...20 { slide.append((2_300_000 + UInt64(step) * 16_000, .slide, 100 + UInt32(step) * 10)) }
        _ = deliver(open + slide, lag: 0, to: rig)
        #expect(controls.phase == .picking(highlightedIndex: 1), "\(rig.log.values)")
        // The confirming light press, held 600 ms: a selection, not a half press.
        _ = deliver([(2_700_000, .lightPressDown, 300)], lag: 0, to: rig, numbersFrom: 30)
        rig.core.advance(toHostMicros: 3_300_000)
        #expect(camera.focusExposureLockChanges.isEmpty, "\(rig.log.values)")
        #expect(rig.core.nextDeadlineHostMicros.map { $0 > 3_300_000 } ?? true)
        _ = deliver([(3_300_000, .lightPressUp, 300)], lag: 0, to: rig, numbersFrom: 31)
        #expect(controls.phase == .adjusting(second.id), "\(rig.log.values)")
        #expect(rig.log.values.contains("overlay control-selected \(second.id)"), "\(rig.log.values)")
        #expect(!rig.log.values.contains { $0.hasPrefix("lock ") }, "\(rig.log.values)")
        // A light press held in the plain overlay (adjusting the chosen control) locks after the hold.
        _ = deliver([(3_600_000, .lightPressDown, 300)], lag: 0, to: rig, numbersFrom: 32)
        rig.core.advance(toHostMicros: 4_000_000)
        #expect(camera.focusExposureLock == .both, "\(rig.log.values)")
        #expect(rig.log.values.contains("lock locked AE/AF @4000000"), "\(rig.log.values)")
    }

    @Test("an overlay effect carries its device time (the confirmation deadline's) and is reported before the delegate hears it")
    func overlayEffectsTimedAndFirst() throws {
        let rig = Rig()
        try rig.attachControls()
        let log = rig.log
        rig.core.observer = { effect in
            if case .overlay(let overlay, let at) = effect { log.append("overlay \(overlay) @\(at)") }
            if case .focusExposureLock(let event) = effect { log.append("lock \(event)") }
        }
        rig.receive(.touchDown, .cameraControl, atHost: 2_000_000, number: 1)
        rig.receive(.lightPressDown, .cameraControl, atHost: 2_010_000, number: 2)
        let confirm = OverlayConfiguration().lightPressConfirmMicros
        rig.core.advance(toHostMicros: 2_010_000 + confirm + 3_000)  // the timer fired 3 ms late: the deadline's time
        rig.receive(.fullPressDown, .cameraControl, atHost: 2_300_000, number: 3)
        let values = log.values
        let shown = try #require(values.firstIndex(of: "overlay overlay-shown level @\(2_010_000 + confirm)"), "\(values)")
        let active = try #require(values.firstIndex(of: "delegate active"), "\(values)")
        let hidden = try #require(values.firstIndex(of: "overlay overlay-hidden @2300000"), "\(values)")
        let inactive = try #require(values.firstIndex(of: "delegate inactive"), "\(values)")
        #expect(shown < active && hidden < inactive, "\(values)")
    }

    @Test("after a device that restarted reconnects, the overlay confirms and dismisses itself on the new clock")
    func overlayAfterADeviceRestart() throws {
        let rig = Rig()
        let controls = try rig.attachControls()
        let confirm = OverlayConfiguration().lightPressConfirmMicros
        // An hour into the first session: a light press shows the overlay.
        let late: UInt64 = 3_600_000_000
        rig.core.addClockSample(sentAtHostMicros: late, receivedAtHostMicros: late, deviceMicros: late)
        rig.receive(.touchDown, .cameraControl, atHost: late, number: 1)
        rig.receive(.lightPressDown, .cameraControl, atHost: late + 10_000, number: 2)
        rig.core.advance(toHostMicros: late + 10_000 + confirm)
        #expect(controls.phase != .hidden)
        // The device goes away and comes back restarted: its clock reads 3 s at host time late + 10 s.
        rig.core.deviceLost(atHostMicros: late + 1_000_000)
        #expect(controls.phase == .hidden)
        var capabilities = Capabilities()
        capabilities.supportsControls = true
        capabilities.maxControls = 4
        rig.core.connected(capabilities)
        let host = late + 10_000_000
        let offset = host - 3_000_000
        rig.core.addClockSample(sentAtHostMicros: host, receivedAtHostMicros: host, deviceMicros: 3_000_000)
        rig.receive(.touchDown, .cameraControl, atHost: host, number: 1, deviceOffset: offset)
        rig.receive(.lightPressDown, .cameraControl, atHost: host + 10_000, number: 2, deviceOffset: offset)
        rig.core.advance(toHostMicros: host + 10_000 + confirm)
        #expect(controls.phase != .hidden, "the light press is confirmed 100 ms after it began")
        rig.receive(.lightPressUp, .cameraControl, atHost: host + 300_000, number: 3, deviceOffset: offset)
        rig.receive(.touchUp, .cameraControl, atHost: host + 320_000, number: 4, deviceOffset: offset)
        rig.core.advance(toHostMicros: host + 320_000 + OverlayConfiguration().dismissAfterMicros)
        #expect(controls.phase == .hidden, "dismissed 2 s after the touch ended")
    }

    @Test("device lost mid-press: cancelled, never ended; the held events are delivered first")
    func deviceLost() {
        let rig = Rig()
        rig.receive(.buttonDown, .actionButton, atHost: 2_000_000, number: 1)
        rig.core.deviceLost(atHostMicros: 2_050_000)
        let log = rig.log.values
        #expect(log.contains("capture began action-button"))
        #expect(log.contains("capture cancelled action-button"))
        #expect(!log.contains("capture ended action-button"))
        #expect(log.last == "device-lost")
        #expect(rig.core.capabilities == nil)
        #expect(!rig.core.clock.isSynchronised)
    }

    /// Feeds `events` (device time, kind, position) as a host would: each arrives `lag` after its device
    /// time (the device's clock reads host time), and between arrivals the core is advanced to its next
    /// deadline whenever one falls due first. Returns the host time of the last arrival.
    @discardableResult
    func deliver(
        _ events: [(device: UInt64, kind: InputEventKind, position: UInt32)], lag: UInt64, to rig: Rig,
        numbersFrom first: UInt32 = 1
    ) -> UInt64 {
        var number = first
        var arrival: UInt64 = 0
        for event in events {
            arrival = event.device + lag
            while let due = rig.core.nextDeadlineHostMicros, due <= arrival { rig.core.advance(toHostMicros: due) }
            rig.clock.advance(toMicros: arrival)
            rig.core.receive(
                InputEvent(
                    timestampMicros: event.device, kind: event.kind, source: .cameraControl, position: event.position,
                    eventNumber: number),
                atHostMicros: arrival)
            rig.core.advance(toHostMicros: arrival)
            number += 1
        }
        return arrival
    }

    /// A touch, then a slide of 40 moves 16 ms apart (device time from 2 s).
    static let touchAndSlide: [(device: UInt64, kind: InputEventKind, position: UInt32)] =
        [(2_000_000, .touchDown, 100)] + (1...40).map { (2_000_000 + UInt64($0) * 16_000, .slide, 100 + UInt32($0) * 10) }

    @Test("a saturated line: a slide whose moves arrive 500 ms late is one slide, ended 300 ms after its last move arrived")
    func slideOverALateLine() throws {
        let rig = Rig()
        let idle = try #require(GestureRecognizer.Configuration().slideIdleEndMicros)
        let lastArrival = deliver(Self.touchAndSlide, lag: 500_000, to: rig)
        #expect(rig.log.values.filter { $0.hasPrefix("gesture slide-began") }.count == 1, "\(rig.log.values)")
        #expect(!rig.log.values.contains { $0.hasPrefix("gesture slide-ended") }, "ended while its moves were on the line")
        #expect(rig.core.deliveryLagMicros == 500_000)
        #expect(rig.core.nextDeadlineHostMicros == lastArrival + idle, "the idle end waits for the line, no longer")
        rig.core.advance(toHostMicros: lastArrival + idle - 1)
        #expect(!rig.log.values.contains { $0.hasPrefix("gesture slide-ended") })
        rig.core.advance(toHostMicros: lastArrival + idle)
        #expect(rig.log.values.filter { $0.hasPrefix("gesture slide-ended") }.count == 1, "\(rig.log.values)")
    }

    @Test("a timely line: the idle slide ends 300 ms after its last move arrived")
    func slideOverATimelyLine() throws {
        let rig = Rig()
        let idle = try #require(GestureRecognizer.Configuration().slideIdleEndMicros)
        let lastArrival = deliver(Self.touchAndSlide, lag: 200, to: rig)
        #expect(rig.core.deliveryLagMicros == 200)
        #expect(rig.core.nextDeadlineHostMicros == lastArrival + idle)
        rig.core.advance(toHostMicros: lastArrival + idle)
        #expect(rig.log.values.filter { $0.hasPrefix("gesture slide-began") }.count == 1)
        #expect(rig.log.values.filter { $0.hasPrefix("gesture slide-ended") }.count == 1)
    }

    /// Reliable events (presses, buttons) overtake the best-effort moves queued on a saturated line: their
    /// lateness says nothing of the queue, and a long press needs no wait (its release is reliable too).
    @Test("a button overtaking queued moves: the slide waits for the line, its long press does not; timely touches reset")
    func latenessOfTheRecentEvents() {
        let rig = Rig()
        let lastArrival = deliver(Self.touchAndSlide, lag: 500_000, to: rig)
        rig.receive(.buttonDown, .volumeUp, atHost: lastArrival + 1_000, number: 42, deviceOffset: 1_000)
        #expect(rig.core.deliveryLagMicros == 500_000, "the queued moves' lateness still counts")
        let threshold = GestureRecognizer.Configuration().longPressThresholdMicros
        rig.core.advance(toHostMicros: lastArrival + threshold - 1)
        #expect(!rig.log.values.contains { $0.hasPrefix("gesture long-press-began") })
        rig.core.advance(toHostMicros: lastArrival + threshold)
        #expect(rig.log.values.contains { $0.hasPrefix("gesture long-press-began") }, "at its threshold, not 500 ms later")
        rig.receive(.buttonUp, .volumeUp, atHost: lastArrival + threshold + 10_000, number: 43)
        // Timely touches for two windows: the old lateness is forgotten.
        deliver([(lastArrival + 1_100_000, .touchDown, 100)], lag: 0, to: rig, numbersFrom: 44)
        deliver([(lastArrival + 2_200_000, .touchUp, 100)], lag: 0, to: rig, numbersFrom: 45)
        #expect(rig.core.deliveryLagMicros == 0)
    }

    /// While the orderer holds an event for a missing earlier one, the recogniser does not advance, so a
    /// deadline of its that has passed stays: given as the next deadline, the host re-armed its timer at
    /// once, again and again, until the orderer let go (up to its 2.7 s reliable hold).
    @Test("while the orderer holds an event, the next deadline is its release, not a recogniser deadline already past")
    func noDeadlineInThePastWhileHolding() {
        let rig = Rig()
        rig.core.receive(
            InputEvent(timestampMicros: 2_000_000, kind: .buttonDown, source: .volumeUp, eventNumber: 1), atHostMicros: 2_000_000)
        // Number 2 is missing; number 3 comes after the long-press threshold has passed.
        rig.receive(.buttonUp, .volumeDown, atHost: 2_450_000, number: 3)
        #expect(rig.core.orderer.isHolding)
        #expect(rig.core.nextDeadlineHostMicros == 2_450_000 + 150_000, "the orderer's release")
        rig.core.advance(toHostMicros: 2_600_000)
        #expect(rig.log.values.contains { $0.hasPrefix("gesture long-press-began") })
    }

    final class Delegate: CaptureControlsDelegate {
        let log: Recorder<String>
        init(log: Recorder<String>) { self.log = log }
        func sessionControlsDidBecomeActive(_ session: CaptureControlsSession) { log.append("delegate active") }
        func sessionControlsWillEnterFullscreenAppearance(_ session: CaptureControlsSession) {}
        func sessionControlsWillExitFullscreenAppearance(_ session: CaptureControlsSession) {}
        func sessionControlsDidBecomeInactive(_ session: CaptureControlsSession) { log.append("delegate inactive") }
    }
}
