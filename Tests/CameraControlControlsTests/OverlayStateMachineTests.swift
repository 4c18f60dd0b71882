import CameraControlControls
import CameraControlGestures
import CameraControlWire
import Testing

@Suite("OverlayStateMachine")
struct OverlayStateMachineTests {
    /// A machine whose light presses show the overlay at once (`lightPressConfirmMicros` 0), so the tests
    /// of slides, pickers and dismissal need no hold-off; the confirmation has its own tests below.
    func machine(
        _ controls: [ControlSnapshot], configuration: OverlayConfiguration = OverlayConfiguration(lightPressConfirmMicros: 0)
    ) throws
        -> OverlayStateMachine
    {
        try OverlayStateMachine(configuration: configuration, controls: controls)
    }

    func exposure(value: Double = 0) throws -> ControlSnapshot {
        try discreteSnapshot("ev", values: (-6...6).map { Double($0) / 3 }, value: value)
    }

    @Test("a light press shows the overlay with the active control, fullscreen (the clean preview); a slide adjusts")
    func lightPressAndSlide() throws {
        var overlay = try machine([sliderSnapshot("a"), sliderSnapshot("b")])
        #expect(overlay.phase == .hidden)
        #expect(run(&overlay, [cc(.lightPressBegan, 1_000)]) == ["overlay-shown a", "entered-fullscreen"])
        #expect(overlay.phase == .showing("a"))
        #expect(overlay.isFullscreen)
        let log = run(&overlay, [cc(.slideBegan(motion(0, velocity: 0)), 2_000), cc(.slideChanged(motion(0.25)), 3_000)])
        #expect(log == ["value-changed a 0.25 slider"])
        #expect(overlay.phase == .adjusting("a"))
        #expect(overlay.controls[0].value == .number(0.25))
    }

    @Test("slides with the overlay hidden do nothing")
    func slideWhileHidden() throws {
        var overlay = try machine([sliderSnapshot("a")])
        #expect(run(&overlay, [cc(.touchBegan, 1), cc(.slideBegan(motion(0)), 2), cc(.slideChanged(motion(0.5)), 3)]).isEmpty)
        #expect(overlay.controls[0].value == .number(0))
    }

    @Test("gestures from other inputs (volume, action button, remote) do not drive the overlay")
    func otherSources() throws {
        var overlay = try machine([sliderSnapshot("a")])
        for source in [InputSource.volumeUp, .volumeDown, .actionButton, .remote] {
            let gesture = Gesture(kind: .lightPressBegan, source: source, timestampMicros: 5)
            #expect(overlay.handle(gesture).isEmpty)
        }
        #expect(overlay.phase == .hidden)
    }

    @Test("picker: double light press opens it, a slide moves between controls, a light press confirms")
    func pickerFlow() throws {
        var overlay = try machine([sliderSnapshot("a"), sliderSnapshot("b"), sliderSnapshot("c")])
        let log = run(
            &overlay,
            [
                cc(.touchBegan, 990_000),
                cc(.lightPressBegan, 1_000_000), cc(.lightPressEnded, 1_090_000),
                cc(.lightPressBegan, 1_210_000), cc(.doubleLightPress, 1_210_000), cc(.lightPressEnded, 1_290_000),
                cc(.slideBegan(motion(0)), 1_300_000),
                cc(.slideChanged(motion(0.15)), 1_310_000),
                cc(.slideChanged(motion(0.15)), 1_320_000),
                cc(.slideChanged(motion(0.15)), 1_330_000),
                cc(.slideEnded(motion(0, velocity: 0)), 1_340_000),
                cc(.lightPressBegan, 1_500_000), cc(.lightPressEnded, 1_580_000),
                cc(.slideBegan(motion(0)), 1_600_000), cc(.slideChanged(motion(0.5)), 1_610_000),
            ])
        #expect(
            log == [
                "overlay-shown a",
                "entered-fullscreen", "picker-opened 0",
                "picker-moved 1", "haptic detent @1310000",
                "picker-moved 2", "haptic detent @1320000",
                "haptic limit @1330000",
                "control-selected c",
                "value-changed c 0.5 slider",
            ])
        #expect(overlay.activeControlID == "c")
        #expect(overlay.phase == .adjusting("c"))
    }

    @Test("picker: the press that opened it does not confirm, and a full click collapses it without confirming")
    func pickerNotConfirmedByFullClick() throws {
        var overlay = try machine([sliderSnapshot("a"), sliderSnapshot("b")])
        _ = run(&overlay, [cc(.lightPressBegan, 1_000), cc(.doubleLightPress, 1_000), cc(.lightPressEnded, 50_000)])
        #expect(overlay.phase == .picking(highlightedIndex: 0))
        _ = run(&overlay, [cc(.slideChanged(motion(0.15)), 60_000)])
        let click = run(
            &overlay,
            [
                cc(.lightPressBegan, 100_000), cc(.pressBegan, 120_000),
                cc(.pressEnded(PressSummary(durationMicros: 50_000, isLongPress: false, peakForceMillinewtons: 3000)), 170_000),
                cc(.lightPressEnded, 180_000),
            ])
        // The shutter collapses the overlay (Apple's overlay hides on a full click); nothing was chosen.
        #expect(click == ["exited-fullscreen", "overlay-hidden"])
        #expect(overlay.phase == .hidden)
        #expect(overlay.activeControlID == "a")
        // The next light press shows the overlay again, on the control that was active.
        #expect(
            run(&overlay, [cc(.lightPressBegan, 300_000), cc(.lightPressEnded, 350_000)]) == [
                "overlay-shown a", "entered-fullscreen",
            ])
    }

    @Test("discrete slider: a detent at each step crossing, stamped with the crossing sample's time")
    func discreteDetents() throws {
        var overlay = try machine([try exposure()])
        _ = overlay.handle(cc(.lightPressBegan, 1_000_000))
        var effects: [OverlayEffect] = []
        // 13 values over one strip: a step every 1/12 strip. Cursor 0.5 + k·0.03 crosses a step
        // (index 6 → 7 → 8 → 9 → 10) at samples k = 2, 5, 7, 10.
        for k in 1...10 {
            effects += overlay.handle(cc(.slideChanged(motion(0.03)), 1_000_000 + UInt64(k) * 4_000))
        }
        let detents = effects.compactMap { effect -> UInt64? in
            if case .haptic(.detent, let at) = effect { return at }
            return nil
        }
        #expect(detents == [2, 5, 7, 10].map { 1_000_000 + UInt64($0) * 4_000 })
        let values = effects.compactMap { effect -> String? in
            if case .valueChanged(_, let value, _) = effect { return value.description }
            return nil
        }
        #expect(values == ["0.3333", "0.6667", "1", "1.3333"])
    }

    @Test("one step per sample: every sample gives a value change and a detent at its own timestamp")
    func detentPerStep() throws {
        var overlay = try machine([try exposure(value: -2)])
        _ = overlay.handle(cc(.lightPressBegan, 10))
        for k in 1...12 {
            let at = UInt64(1_000 + k * 1_000)
            let effects = overlay.handle(cc(.slideChanged(motion(1.0 / 12)), at)).map(\.description)
            #expect(effects.contains("haptic detent @\(at)"))
            #expect(effects.filter { $0.hasPrefix("value-changed ev") }.count == 1)
        }
        #expect(overlay.controls[0].value == .number(2))
    }

    @Test("prominent value on a continuous slider: a magnet zone, a detent on entering it or jumping over it")
    func prominentMagnet() throws {
        var overlay = try machine([sliderSnapshot("a", value: 0.4, prominent: [0.5])])
        _ = overlay.handle(cc(.lightPressBegan, 1))
        var log: [String] = []
        for k in 1...7 { log += overlay.handle(cc(.slideChanged(motion(0.02)), UInt64(100 * k))).map(\.description) }
        #expect(
            log == [
                "value-changed a 0.42 slider", "value-changed a 0.44 slider", "value-changed a 0.46 slider",
                "value-changed a 0.5 slider", "haptic detent @400",  // 0.48 is inside 0.47…0.53: lands on 0.5
                // 0.50 and 0.52 stay on 0.5: no change, no detent
                "value-changed a 0.54 slider",
            ])
        // Jumping over the zone in one sample still ticks.
        let back = overlay.handle(cc(.slideChanged(motion(-0.3)), 1_000)).map(\.description)
        #expect(back == ["value-changed a 0.24 slider", "haptic detent @1000"])
    }

    @Test("prominent value on a discrete slider with a wide magnet attracts from more than half a step")
    func prominentDiscrete() throws {
        let snapshot = try discreteSnapshot("d", values: [0, 1, 2, 3, 4], value: 0, prominent: [2])
        var overlay = try machine([snapshot], configuration: OverlayConfiguration(prominentMagnetWidth: 0.2, lightPressConfirmMicros: 0))
        _ = overlay.handle(cc(.lightPressBegan, 1))
        // Cursor 0.32 would round to index 1; the magnet (±0.2 around 0.5) takes it to 2.
        let log = overlay.handle(cc(.slideChanged(motion(0.32)), 10)).map(\.description)
        #expect(log == ["value-changed d 2 slider", "haptic detent @10"])
    }

    @Test("a slide pushing past an end plays one limit bump until the cursor leaves the end")
    func limit() throws {
        var overlay = try machine([sliderSnapshot("a")])
        _ = overlay.handle(cc(.lightPressBegan, 1))
        #expect(run(&overlay, [cc(.slideChanged(motion(-0.1)), 10)]) == ["haptic limit @10"])
        #expect(run(&overlay, [cc(.slideChanged(motion(-0.1)), 20)]).isEmpty)
        #expect(run(&overlay, [cc(.slideChanged(motion(0.2)), 30)]) == ["value-changed a 0.2 slider"])
        #expect(run(&overlay, [cc(.slideChanged(motion(-0.5)), 40)]) == ["value-changed a 0 slider", "haptic limit @40"])
    }

    @Test("fine mode: slow slides move a third as far")
    func fineMode() throws {
        var overlay = try machine([sliderSnapshot("a", range: 0...100)])
        _ = overlay.handle(cc(.lightPressBegan, 1))
        _ = overlay.handle(cc(.slideChanged(motion(0.1, velocity: 0.1)), 10))
        #expect(overlay.controls[0].value == .number(3))
        _ = overlay.handle(cc(.slideChanged(motion(0.1, velocity: 1)), 20))
        #expect(overlay.controls[0].value == .number(13))
    }

    @Test("momentum: a fast swipe keeps gliding in virtual time and stops by itself; a touch stops it")
    func momentum() throws {
        var overlay = try machine([sliderSnapshot("a", range: 0...100)])
        _ = overlay.handle(cc(.lightPressBegan, 1_000))
        _ = overlay.handle(cc(.slideChanged(motion(0.1, velocity: 3)), 10_000))
        _ = overlay.handle(cc(.slideEnded(motion(0, velocity: 3)), 20_000))
        #expect(overlay.nextDeadlineMicros == 20_000 + 16_667)
        var frames = 0
        while let deadline = overlay.nextDeadlineMicros, frames < 1_000, overlay.phase != .hidden {
            let effects = overlay.advance(toMicros: deadline)
            if effects.contains(.overlayHidden) { break }
            frames += 1
        }
        // Glide distance τ·(v − v_stop) = 0.15 s · 2.8 strips/s = 0.42 of the range after 0.1.
        guard case .number(let final) = overlay.controls[0].value else { return }
        #expect(abs(final - 52) < 1e-3)  // endMicros is rounded to whole µs
        #expect(frames > 5)

        var stopped = try machine([sliderSnapshot("a", range: 0...100)])
        _ = stopped.handle(cc(.lightPressBegan, 1_000))
        _ = stopped.handle(cc(.slideChanged(motion(0.1, velocity: 3)), 10_000))
        _ = stopped.handle(cc(.slideEnded(motion(0, velocity: 3)), 20_000))
        _ = stopped.advance(toMicros: 40_000)
        guard case .number(let mid) = stopped.controls[0].value else { return }
        _ = stopped.handle(cc(.touchBegan, 40_000))
        _ = stopped.advance(toMicros: 1_000_000)
        #expect(stopped.controls[0].value == .number(mid))
        #expect(mid > 10 && mid < 52)
    }

    @Test("a slow end of slide has no momentum")
    func noMomentumWhenSlow() throws {
        var overlay = try machine([sliderSnapshot("a")])
        _ = overlay.handle(cc(.lightPressBegan, 1))
        _ = overlay.handle(cc(.slideChanged(motion(0.1, velocity: 1)), 10))
        _ = overlay.handle(cc(.slideEnded(motion(0, velocity: 1)), 20))
        #expect(overlay.nextDeadlineMicros == 20 + 2_000_000)
    }

    @Test(
        "no touch for the dismissal time hides the overlay: exit fullscreen, then hidden",
        arguments: [
            UInt64(2_000_000), 500_000,
        ])
    func dismissal(_ timeout: UInt64) throws {
        var overlay = try machine(
            [sliderSnapshot("a")], configuration: OverlayConfiguration(dismissAfterMicros: timeout, lightPressConfirmMicros: 0))
        _ = run(&overlay, [cc(.touchBegan, 0), cc(.lightPressBegan, 1_000), cc(.slideChanged(motion(0.1)), 2_000)])
        // While the finger rests on the control, nothing times out.
        #expect(overlay.advance(toMicros: 60_000_000).isEmpty)
        _ = overlay.handle(cc(.touchEnded, 60_000_000))
        #expect(overlay.nextDeadlineMicros == 60_000_000 + timeout)
        #expect(overlay.advance(toMicros: 60_000_000 + timeout - 1).isEmpty)
        #expect(overlay.advance(toMicros: 60_000_000 + timeout).map(\.description) == ["exited-fullscreen", "overlay-hidden"])
        #expect(overlay.phase == .hidden)
        #expect(overlay.nextDeadlineMicros == nil)
    }

    @Test("a gesture arriving after the timeout first dismisses, then is handled")
    func lateGesture() throws {
        var overlay = try machine([sliderSnapshot("a")])
        _ = run(&overlay, [cc(.lightPressBegan, 1_000), cc(.lightPressEnded, 2_000)])
        #expect(
            run(&overlay, [cc(.lightPressBegan, 5_000_000)]) == [
                "exited-fullscreen", "overlay-hidden", "overlay-shown a", "entered-fullscreen",
            ])
    }

    @Test("a full click never changes a value, even with slide samples while the switch is down")
    func fullClick() throws {
        var overlay = try machine([sliderSnapshot("a", value: 0.5)])
        let log = run(
            &overlay,
            [
                cc(.touchBegan, 0), cc(.lightPressBegan, 10_000), cc(.pressBegan, 40_000),
                cc(.slideBegan(motion(0)), 50_000), cc(.slideChanged(motion(0.2)), 60_000),
                cc(.slideEnded(motion(0.1, velocity: 4)), 70_000),
                cc(.pressEnded(PressSummary(durationMicros: 100_000, isLongPress: false, peakForceMillinewtons: 3000)), 140_000),
                cc(.lightPressEnded, 150_000),
            ])
        // The click collapses the overlay (with this machine's 0 hold-off the light press showed it first).
        #expect(log == ["overlay-shown a", "entered-fullscreen", "exited-fullscreen", "overlay-hidden"])
        #expect(overlay.controls[0].value == .number(0.5))
        #expect(overlay.nextDeadlineMicros == nil)  // hidden, no momentum
    }

    @Test("a disabled control is shown and selectable but slides do not change it")
    func disabledControl() throws {
        var overlay = try machine([sliderSnapshot("a"), sliderSnapshot("off", value: 0.3, enabled: false)])
        let log = run(
            &overlay,
            [
                cc(.lightPressBegan, 1_000), cc(.doubleLightPress, 1_000), cc(.lightPressEnded, 2_000),
                cc(.slideChanged(motion(0.15)), 3_000),
                cc(.lightPressBegan, 4_000), cc(.lightPressEnded, 5_000),
                cc(.slideChanged(motion(0.3)), 6_000), cc(.slideEnded(motion(0, velocity: 5)), 7_000),
            ])
        #expect(
            log == [
                "overlay-shown a", "entered-fullscreen", "picker-opened 0", "picker-moved 1", "haptic detent @3000",
                "control-selected off",
            ])
        #expect(overlay.controls[1].value == .number(0.3))
        #expect(overlay.phase == .adjusting("off"))
    }

    @Test("the last used control is remembered across dismissals")
    func lastUsedRemembered() throws {
        var overlay = try machine([sliderSnapshot("a"), sliderSnapshot("b")])
        _ = run(
            &overlay,
            [
                cc(.lightPressBegan, 1_000), cc(.doubleLightPress, 1_000), cc(.lightPressEnded, 2_000),
                cc(.slideChanged(motion(0.15)), 3_000), cc(.lightPressBegan, 4_000), cc(.lightPressEnded, 5_000),
            ])
        #expect(overlay.advance(toMicros: 3_000_000).map(\.description) == ["exited-fullscreen", "overlay-hidden"])
        #expect(run(&overlay, [cc(.lightPressBegan, 4_000_000)]) == ["overlay-shown b", "entered-fullscreen"])
        // Remembered also when the controls are replaced, as long as it is still there.
        _ = overlay.setControls([sliderSnapshot("c"), sliderSnapshot("b")])
        #expect(overlay.activeControlID == "b")
        _ = overlay.setControls([sliderSnapshot("c")])
        #expect(overlay.activeControlID == "c")
        #expect(overlay.setControls([]).map(\.description) == ["exited-fullscreen", "overlay-hidden"])
    }

    @Test("the active control removed while the overlay shows it: the first one is selected, and said so")
    func activeControlRemovedWhileShown() throws {
        var overlay = try machine([sliderSnapshot("a"), sliderSnapshot("b")])
        #expect(run(&overlay, [cc(.lightPressBegan, 1_000)]) == ["overlay-shown a", "entered-fullscreen"])
        #expect(overlay.setControls([sliderSnapshot("b")]).map(\.description) == ["control-selected b"])
        #expect(overlay.activeControlID == "b")
        // Hidden, a removal is news only at the next showing.
        _ = overlay.advance(toMicros: 5_000_000)
        #expect(overlay.setControls([sliderSnapshot("c")]).isEmpty)
        #expect(run(&overlay, [cc(.lightPressBegan, 6_000_000)]) == ["overlay-shown c", "entered-fullscreen"])
    }

    @Test("a value changed from elsewhere moves the cursor: the next slide starts from it")
    func externalValueMovesCursor() throws {
        var overlay = try machine([sliderSnapshot("a")])
        _ = run(&overlay, [cc(.lightPressBegan, 1), cc(.slideChanged(motion(0.1)), 2)])
        _ = overlay.setControls([sliderSnapshot("a", value: 0.8)])
        #expect(run(&overlay, [cc(.slideChanged(motion(0.1)), 3)]) == ["value-changed a 0.9 slider"])
    }

    @Test("index pickers step by index with detents")
    func indexPicker() throws {
        let picker = ControlSnapshot(id: "fx", title: "FX", isEnabled: true, adjustment: .indexPicker(count: 3), value: .index(0))
        var overlay = try machine([picker])
        _ = overlay.handle(cc(.lightPressBegan, 1))
        #expect(
            run(&overlay, [cc(.slideChanged(motion(0.3)), 10)]) == ["value-changed fx #1 slider", "haptic detent @10"])
    }

    @Test("dismiss hides at once and keeps the active control")
    func dismissNow() throws {
        var overlay = try machine([sliderSnapshot("a")])
        _ = run(&overlay, [cc(.lightPressBegan, 1), cc(.slideChanged(motion(0.1)), 2)])
        #expect(overlay.dismiss(atMicros: 3).map(\.description) == ["exited-fullscreen", "overlay-hidden"])
        #expect(overlay.dismiss(atMicros: 4).isEmpty)
        #expect(overlay.activeControlID == "a")
    }

    @Test("time never goes backwards")
    func monotonicTime() throws {
        var overlay = try machine([sliderSnapshot("a")])
        _ = overlay.handle(cc(.lightPressBegan, 5_000_000))
        _ = overlay.handle(cc(.touchEnded, 1_000))
        #expect(overlay.nowMicros == 5_000_000)
        #expect(overlay.nextDeadlineMicros == 7_000_000)
    }

    // MARK: Light-press confirmation (the default hold-off)

    @Test("a full click within the hold-off never shows the overlay; a light press held past it shows it fullscreen")
    func confirmationHoldOff() throws {
        var overlay = try OverlayStateMachine(controls: [sliderSnapshot("a")])
        let holdOff = OverlayConfiguration().lightPressConfirmMicros
        #expect(holdOff == 100_000)
        // A click: the light stage, then the full stage 27 ms later (the simulator's default click).
        let click = run(
            &overlay,
            [
                cc(.touchBegan, 0), cc(.lightPressBegan, 10_000), cc(.pressBegan, 37_000),
                cc(.pressEnded(PressSummary(durationMicros: 100_000, isLongPress: false, peakForceMillinewtons: 3500)), 137_000),
                cc(.lightPressEnded, 150_000), cc(.touchEnded, 160_000),
            ])
        #expect(click.isEmpty)
        #expect(overlay.advance(toMicros: 10_000_000).isEmpty)
        // A light press: pending until the hold-off, which is the next deadline.
        #expect(run(&overlay, [cc(.touchBegan, 20_000_000), cc(.lightPressBegan, 20_010_000)]).isEmpty)
        #expect(overlay.isLightPressPending)
        #expect(overlay.nextDeadlineMicros == 20_010_000 + holdOff)
        #expect(overlay.advance(toMicros: 20_010_000 + holdOff - 1).isEmpty)
        #expect(overlay.advance(toMicros: 20_010_000 + holdOff).map(\.description) == ["overlay-shown a", "entered-fullscreen"])
        #expect(!overlay.isLightPressPending)
        // A full click now (a half press, then the shutter) collapses it.
        #expect(run(&overlay, [cc(.pressBegan, 20_300_000)]) == ["exited-fullscreen", "overlay-hidden"])
    }

    @Test("a light tap released within the hold-off, or a slide, confirms the light press at once")
    func confirmationByReleaseOrSlide() throws {
        var overlay = try OverlayStateMachine(controls: [sliderSnapshot("a")])
        #expect(run(&overlay, [cc(.lightPressBegan, 1_000)]).isEmpty)
        #expect(run(&overlay, [cc(.lightPressEnded, 40_000)]) == ["overlay-shown a", "entered-fullscreen"])
        _ = overlay.dismiss(atMicros: 50_000)
        #expect(run(&overlay, [cc(.touchBegan, 60_000), cc(.lightPressBegan, 61_000)]).isEmpty)
        #expect(
            run(&overlay, [cc(.slideBegan(motion(0)), 80_000), cc(.slideChanged(motion(0.25)), 90_000)]) == [
                "overlay-shown a", "entered-fullscreen", "value-changed a 0.25 slider",
            ])
        // Forgetting a pending press: nothing shows at its deadline.
        _ = overlay.dismiss(atMicros: 100_000)
        _ = run(&overlay, [cc(.lightPressBegan, 200_000)])
        overlay.forgetPendingLightPress()
        #expect(overlay.nextDeadlineMicros == nil)
        #expect(overlay.advance(toMicros: 400_000).isEmpty)
    }

    @Test("a hold-off above 1 s is an invalid configuration")
    func confirmationLimit() {
        #expect(throws: ControlError.self) { try OverlayConfiguration(lightPressConfirmMicros: 1_000_001).validate() }
        #expect(throws: Never.self) { try OverlayConfiguration(lightPressConfirmMicros: 0).validate() }
    }
}

@Suite("Overlay orientation")
struct OverlayOrientationTests {
    @Test(
        "a slide toward the device's top raises the value only where that is up or right on screen",
        arguments: InterfaceOrientation.allCases)
    func slideFollowsOrientation(orientation: InterfaceOrientation) throws {
        var overlay = try OverlayStateMachine(
            configuration: OverlayConfiguration(lightPressConfirmMicros: 0), controls: [sliderSnapshot("a", value: 0.5)])
        overlay.orientation = orientation
        _ = overlay.handle(cc(.lightPressBegan, 1_000))
        _ = overlay.handle(cc(.slideBegan(motion(0)), 2_000))
        let log = overlay.handle(cc(.slideChanged(motion(0.25)), 3_000)).map(\.description)
        let expected = orientation == .portrait || orientation == .landscapeLeft ? "0.75" : "0.25"
        #expect(log == ["value-changed a \(expected) slider"])
    }

    @Test("the overlay sits on the screen edge beside the control", arguments: InterfaceOrientation.allCases)
    func placement(orientation: InterfaceOrientation) throws {
        let session = try CaptureControlsSession(capabilities: ControlsCapabilities(supportsControls: true, maxControls: 4))
        session.interfaceOrientation = orientation
        #expect(session.interfaceOrientation == orientation)
        let expected: [InterfaceOrientation: OverlayPlacement] = [
            .portrait: .rightEdge, .portraitUpsideDown: .leftEdge, .landscapeLeft: .bottomEdge, .landscapeRight: .topEdge,
        ]
        #expect(session.overlayPlacement == expected[orientation])
    }
}
