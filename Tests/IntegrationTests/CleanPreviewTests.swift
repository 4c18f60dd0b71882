import CameraControlControls
import CameraControlHost
import CameraControlRPC
import CameraControlSimulation
import CameraControlWire
import Testing

/// Clean preview and no flash (issue 20, item 6), over the real C firmware and the real host stack in
/// virtual time (``VirtualControlsRig``): a confirmed light press shows the overlay with its fullscreen
/// appearance at once, and a full click from idle — at any realistic press speed — never shows it.
@Suite("Clean preview and no overlay flash over the real firmware")
struct CleanPreviewTests {
    /// A full click's force rise: how long the finger takes from resting to the peak, and the peak.
    struct Click: Sendable, CustomStringConvertible {
        var riseMillis: Int
        var forceMillinewtons: Int
        var description: String { "rise \(riseMillis) ms to \(forceMillinewtons) mN" }
    }

    /// Realistic clicks: a quick tap (10 ms rise) to a slow, deliberate press (150 ms, three times the
    /// simulator's default 50 ms), from a firm 3 N click just past the full stage's 2.5 N to 6 N.
    static let clicks: [Click] = [10, 25, 50, 80, 110, 150].flatMap { rise in
        [3000, 3500, 4500, 6000].map { Click(riseMillis: rise, forceMillinewtons: $0) }
    }

    /// Lines of the log after the time column.
    static func lines(_ rig: VirtualControlsRig) -> [String] { rig.log.map { String($0.dropFirst(10)) } }

    /// A fresh rig (seed 3) that played `scenario` to its end, with its log lines.
    static func played(_ scenario: String) throws -> (rig: VirtualControlsRig, log: [String]) {
        let rig = try VirtualControlsRig(seed: 3)
        try rig.play(scenario: scenario)
        rig.runUntilScenarioEnds()
        return (rig, lines(rig))
    }

    /// Device time of the first input event of `kind`.
    static func firstEvent(_ rig: VirtualControlsRig, _ kind: InputEventKind) -> UInt64? {
        rig.captureRig.inputEvents.first { $0.kind == kind }?.timestampMicros
    }

    @Test("a full click from idle never shows the overlay, and the light-to-full crossing fits the hold-off", arguments: clicks)
    func fullClickNeverFlashes(click: Click) throws {
        let (rig, log) = try Self.played("full-click force=\(click.forceMillinewtons)mN rise=\(click.riseMillis)ms\npause 300ms\n")
        // The firmware saw both stages; the full one came within the overlay's hold-off of the light one.
        let light = try #require(Self.firstEvent(rig, .lightPressDown), "\(click): no light press")
        let full = try #require(Self.firstEvent(rig, .fullPressDown), "\(click): no full press")
        #expect(full - light < OverlayConfiguration().lightPressConfirmMicros, "\(click): \(full - light) µs")
        // No overlay and no delegate call at all; one photo.
        #expect(!log.contains { $0.hasPrefix("overlay ") || $0.hasPrefix("delegate ") }, "\(click):\n\(rig.logText)")
        #expect(log.filter { $0.hasPrefix("photo ") }.count == 1, "\(click):\n\(rig.logText)")
    }

    @Test("Firmware-sim/scenarios/quick-clicks.scenario: three photos, no overlay")
    func quickClicksScenario() throws {
        let root = String(#filePath).split(separator: "/").dropLast(3).joined(separator: "/")
        let text = try String(contentsOfFile: "/\(root)/Firmware-sim/scenarios/quick-clicks.scenario", encoding: .utf8)
        let (rig, log) = try Self.played(text)
        #expect(!log.contains { $0.hasPrefix("overlay ") || $0.hasPrefix("delegate ") }, "\(rig.logText)")
        #expect(log.filter { $0.hasPrefix("photo ") }.count == 3, "\(rig.logText)")
    }

    @Test("a press that crosses the stages slower than the hold-off is a light press first: shown, then collapsed")
    func slowPressIsALightPressFirst() throws {
        // 250 ms to 3 N crosses 800 → 2500 mN in about 157 ms: longer than the hold-off, so the light
        // press is confirmed (the overlay shows) and the click collapses it before the photo.
        let (rig, log) = try Self.played("full-click force=3000mN rise=250ms\npause 300ms\n")
        let shown = try #require(log.firstIndex(of: "overlay overlay-shown zoom"), "\(rig.logText)")
        let hidden = try #require(log.firstIndex(of: "overlay overlay-hidden"), "\(rig.logText)")
        let photo = try #require(log.firstIndex { $0.hasPrefix("photo ") }, "\(rig.logText)")
        #expect(shown < hidden && hidden < photo, "\(rig.logText)")
    }

    @Test("a light press shows the overlay fullscreen one hold-off after the firmware's light stage; the app hides its controls")
    func lightPressGivesCleanPreview() throws {
        let rig = try VirtualControlsRig(seed: 3)
        try rig.play(scenario: "light-press force=1200mN hold=400ms\npause 300ms\n")
        var shownAt: UInt64?
        var hiddenOwnControlsWhileShown = false
        while rig.captureRig.device.isScenarioRunning || shownAt == nil {
            rig.run(forMicros: 1000)
            if shownAt == nil, rig.session.isFullscreen {
                shownAt = rig.nowMicros
                hiddenOwnControlsWhileShown = !rig.app.areOwnControlsVisible
            }
            if rig.nowMicros > 5_000_000 { break }
        }
        rig.runUntilScenarioEnds()
        let light = try #require(Self.firstEvent(rig, .lightPressDown))
        let shown = try #require(shownAt, "\(rig.logText)")
        let holdOff = OverlayConfiguration().lightPressConfirmMicros
        // Virtual time, stepped by 1 ms: shown in the step the hold-off ends, never before.
        #expect(shown >= light + holdOff && shown <= light + holdOff + 2000, "light \(light) shown \(shown)")
        #expect(hiddenOwnControlsWhileShown)
        let log = Self.lines(rig)
        let calls = log.filter { $0.hasPrefix("delegate ") || $0.hasPrefix("ui ") }
        #expect(
            calls == [
                "delegate did-become-active", "delegate will-enter-fullscreen", "ui own controls hidden (clean preview)",
                "delegate will-exit-fullscreen", "ui own controls shown", "delegate did-become-inactive",
            ], "\(rig.logText)")
        #expect(rig.app.areOwnControlsVisible)
    }

    @Test("a light tap shorter than the hold-off shows the overlay at its release")
    func lightTapShowsAtRelease() throws {
        let (rig, log) = try Self.played("light-press force=1200mN hold=20ms rise=20ms fall=20ms\npause 300ms\n")
        let ended = try #require(log.firstIndex(of: "gesture light-press-ended camera-control"), "\(rig.logText)")
        let shown = try #require(log.firstIndex(of: "overlay overlay-shown zoom"), "\(rig.logText)")
        #expect(shown == ended + 1, "\(rig.logText)")
        #expect(log.contains("overlay entered-fullscreen"))
    }

    @Test("a slide right after a light press confirms it: the first slide sample already adjusts")
    func slideConfirmsLightPress() throws {
        let (rig, log) = try Self.played("touch at=0.3 hold=40ms\nforce 1200mN over=20ms\nslide to=0.7 over=200ms\nrelease\npause 300ms\n")
        let began = try #require(log.firstIndex { $0.hasPrefix("gesture slide-began") }, "\(rig.logText)")
        let shown = try #require(log.firstIndex(of: "overlay overlay-shown zoom"), "\(rig.logText)")
        #expect(shown == began + 1, "\(rig.logText)")
        #expect(rig.camera.zoomFactor > 1, "\(rig.logText)")
    }
}

/// AE/AF lock (issue 20, item 1) over the real firmware and host in virtual time.
@Suite("AE/AF lock over the real firmware")
struct FocusExposureLockRigTests {
    /// `Firmware-sim/scenarios/ae-af-lock.scenario`: a light press held 500 ms, then the full press, then
    /// the release (empty if the file is missing: the tests then fail, they do not crash).
    static let halfPressThenShoot: String = {
        let root = String(#filePath).split(separator: "/").dropLast(3).joined(separator: "/")
        return (try? String(contentsOfFile: "/\(root)/Firmware-sim/scenarios/ae-af-lock.scenario", encoding: .utf8)) ?? ""
    }()

    static func lines(_ rig: VirtualControlsRig) -> [String] { rig.log.map { String($0.dropFirst(10)) } }

    @Test("with the app's override on: held light press locks, the photo is AE/AF locked, the release unlocks")
    func lockedPhoto() throws {
        let rig = try VirtualControlsRig(seed: 5)
        try rig.play(scenario: Self.halfPressThenShoot)
        rig.runUntilScenarioEnds()
        let log = Self.lines(rig)
        let locked = try #require(log.firstIndex { $0.hasPrefix("lock locked AE/AF") }, "\(rig.logText)")
        let photo = try #require(log.firstIndex { $0.hasPrefix("photo ") }, "\(rig.logText)")
        let unlocked = try #require(log.firstIndex { $0.hasPrefix("lock unlocked") }, "\(rig.logText)")
        #expect(locked < photo && photo < unlocked, "\(rig.logText)")
        #expect(log[photo].hasSuffix("AE/AF locked"), "\(log[photo])")
        #expect(rig.camera.focusExposureLockChanges == [.both, []])
        #expect(rig.camera.focusExposureLock.isEmpty)
        // The lock came 400 ms after the firmware's light stage (virtual time, 1 ms steps).
        let light = try #require(rig.captureRig.inputEvents.first { $0.kind == .lightPressDown }?.timestampMicros)
        let lockedAt = try #require(log[locked].split(separator: "@").last.flatMap { UInt64($0) })
        #expect(lockedAt >= light + 400_000 && lockedAt <= light + 402_000, "light \(light) locked \(lockedAt)")
    }

    @Test("a quick click, and the host setting off with no app override, never lock")
    func noLock() throws {
        let rig = try VirtualControlsRig(seed: 5)
        try rig.play(scenario: "full-click\npause 300ms\n")
        rig.runUntilScenarioEnds()
        #expect(rig.camera.focusExposureLockChanges.isEmpty)
        #expect(Self.lines(rig).contains { $0.hasPrefix("photo ") && !$0.contains("locked") })

        // The host's setting off (the default) and no override: the held press does not lock.
        let hostOnly = try VirtualControlsRig(seed: 5)
        hostOnly.captureRig.core.attachCamera(hostOnly.camera, focusExposureLock: nil)
        #expect(!hostOnly.captureRig.core.isFocusExposureLockEnabled)
        try hostOnly.play(scenario: Self.halfPressThenShoot)
        hostOnly.runUntilScenarioEnds()
        #expect(hostOnly.camera.focusExposureLockChanges.isEmpty)
        // The host's setting on, the app says nothing: it locks.
        let hostOn = try VirtualControlsRig(seed: 5, focusExposureLock: true)
        hostOn.captureRig.core.attachCamera(hostOn.camera, focusExposureLock: nil)
        try hostOn.play(scenario: Self.halfPressThenShoot)
        hostOn.runUntilScenarioEnds()
        #expect(hostOn.camera.focusExposureLockChanges == [.both, []])
    }

    @Test("a cancel unlocks: the capture session stopped, or the device lost, while locked")
    func cancelUnlocks() throws {
        for stopSession in [true, false] {
            let rig = try VirtualControlsRig(seed: 5)
            try rig.play(scenario: "touch at=0.5 hold=60ms\nforce 1200mN over=50ms\nhold 2s\nrelease\n")
            let locked = rig.captureRig.run(timeoutMicros: 2_000_000) { rig.camera.focusExposureLock == .both }
            #expect(locked)
            if stopSession {
                rig.captureRig.setSessionRunning(false)
            } else {
                rig.captureRig.core.deviceLost(atHostMicros: rig.nowMicros)
            }
            rig.run(forMicros: 20_000)
            #expect(rig.camera.focusExposureLock.isEmpty, "stopSession \(stopSession)")
            #expect(Self.lines(rig).contains { $0.hasPrefix("lock unlocked") && $0.hasSuffix("cancelled") }, "\(rig.logText)")
        }
    }
}

/// Orientation (issue 20, item 4) over the real firmware and host in virtual time.
@Suite("Interface orientation over the real firmware")
struct OrientationRigTests {
    @Test(
        "a slide toward the device's top zooms in where that is up or right on screen, out elsewhere",
        arguments: InterfaceOrientation.allCases)
    func zoomSlide(orientation: InterfaceOrientation) throws {
        let rig = try VirtualControlsRig(seed: 9)
        rig.captureRig.core.interfaceOrientation = orientation
        #expect(rig.session.interfaceOrientation == orientation)
        #expect(rig.session.overlayPlacement == orientation.overlayPlacement)
        try rig.pinch(toZoomFactor: 3)
        try rig.play(
            scenario: "touch at=0.3 hold=60ms\nlight-press force=1200mN hold=150ms\nslide to=0.6 over=400ms\nhold 350ms\nrelease\n")
        rig.runUntilScenarioEnds()
        if orientation.slideSign > 0 {
            #expect(rig.camera.zoomFactor > 3, "\(orientation): \(rig.camera.zoomFactor)")
        } else {
            #expect(rig.camera.zoomFactor < 3, "\(orientation): \(rig.camera.zoomFactor)")
        }
    }
}

/// System sliders from the camera (issue 20, item 5) over the real firmware and host in virtual time.
@Suite("System sliders follow the camera's format over the real firmware")
struct CameraFormatRigTests {
    @Test("after a format change the same slide zooms within the new range; a format without zoom leaves it alone")
    func reRangedSlide() throws {
        let camera = try SyntheticCamera(formats: [
            CameraFormat(name: "wide", zoomFactorRange: 1...10, exposureBiasRange: -8...8, prominentZoomFactors: [2, 5]),
            CameraFormat(name: "tele", zoomFactorRange: 2...4, exposureBiasRange: -2...2),
            CameraFormat(name: "fixed", zoomFactorRange: nil, exposureBiasRange: -2...2),
        ])
        let rig = try VirtualControlsRig(seed: 11, camera: camera)
        let slide =
            "touch at=0.2 hold=60ms\nlight-press force=1200mN hold=150ms\nslide to=0.95 over=300ms\nhold 350ms\nrelease\npause 2500ms\n"
        try camera.setActiveFormat(1)
        try rig.play(scenario: slide)
        rig.runUntilScenarioEnds()
        #expect(camera.zoomFactor > 2 && camera.zoomFactor <= 4, "\(camera.zoomFactor)")
        #expect(rig.zoom.domain == .continuous(2...4, scale: .logarithmic))

        try camera.setActiveFormat(2)
        #expect(!rig.zoom.isEnabled)
        let actionsBefore = rig.log.filter { $0.contains(" action zoom ") }.count
        try rig.play(scenario: slide)
        rig.runUntilScenarioEnds()
        #expect(camera.zoomFactor == 1)
        #expect(rig.log.filter { $0.contains(" action zoom ") }.count == actionsBefore, "\(rig.logText)")
        #expect(rig.log.contains { $0.hasSuffix("overlay overlay-shown zoom") })  // shown, but disabled
    }
}

/// Camera Control settings (issue 20, item 2, the host's half) over the real firmware in virtual time.
@Suite("Camera Control settings over the real firmware")
struct CameraControlSettingsRigTests {
    static func lines(_ rig: VirtualControlsRig) -> [String] { rig.log.map { String($0.dropFirst(10)) } }

    @Test("Camera Adjustments off: no overlay, sliders never move, the full click still captures")
    func adjustmentsOff() throws {
        let rig = try VirtualControlsRig(seed: 13)
        rig.captureRig.core.settings.areAdjustmentsEnabled = false
        try rig.play(
            scenario:
                "touch at=0.3 hold=60ms\nlight-press force=1200mN hold=150ms\nslide to=0.8 over=300ms\nrelease\nfull-click\npause 300ms\n")
        rig.runUntilScenarioEnds()
        let log = Self.lines(rig)
        #expect(!log.contains { $0.hasPrefix("overlay ") || $0.hasPrefix("delegate ") || $0.hasPrefix("action ") }, "\(rig.logText)")
        #expect(rig.camera.zoomFactor == 1)
        #expect(log.filter { $0.hasPrefix("capture ended primary camera-control") }.count == 1, "\(rig.logText)")
    }

    @Test("Camera Control off: its clicks do nothing; the other buttons still capture")
    func cameraControlOff() throws {
        let rig = try VirtualControlsRig(seed: 13)
        rig.captureRig.core.settings.isCameraControlEnabled = false
        try rig.play(scenario: "full-click\npause 300ms\nlight-press hold=300ms\npause 300ms\nbutton volume-down\npause 300ms\n")
        rig.runUntilScenarioEnds()
        let log = Self.lines(rig)
        #expect(!log.contains { $0.contains("camera-control") || $0.hasPrefix("overlay ") }, "\(rig.logText)")
        #expect(log.contains("capture ended primary volume-down"), "\(rig.logText)")
        #expect(rig.camera.photos.count == 1)
    }

    /// A scenario's `settings` step (docs/SIMULATOR.md §3) changes the device's settings as a host's
    /// SetSettings does: stored (GetSettings reports them) and in force at once in the firmware's input gates,
    /// whatever the host believes.
    @Test("a scenario's settings step: Camera Adjustments off hides the light press, Camera Control off the click")
    func settingsStep() throws {
        let rig = try VirtualControlsRig(seed: 13)
        try rig.play(
            scenario: """
                settings camera-adjustments=off
                touch at=0.3 hold=60ms
                light-press force=1200mN hold=150ms
                slide to=0.8 over=300ms
                release
                full-click
                pause 300ms
                settings camera-adjustments=on camera-control=off light-press-force=firmer
                full-click
                pause 300ms
                button volume-down
                pause 300ms

                """)
        rig.runUntilScenarioEnds()
        let log = Self.lines(rig)
        #expect(!log.contains { $0.hasPrefix("overlay ") || $0.hasPrefix("gesture light-press") }, "\(rig.logText)")
        #expect(rig.camera.zoomFactor == 1)
        #expect(log.filter { $0.hasPrefix("capture ended primary camera-control") }.count == 1, "\(rig.logText)")
        #expect(log.contains("capture ended primary volume-down"), "\(rig.logText)")
        let call = try rig.link.startUnaryCall(.configGetSettings, GetSettingsRequest())
        var result: Result<[UInt8], RPCError>?
        _ = rig.captureRig.run(timeoutMicros: 1_000_000) {
            result = rig.link.takeUnaryResult(call)
            return result != nil
        }
        let settings = try SettingsResponse(serializedBytes: try #require(result).get()).settings
        #expect(settings?.cameraControl == .off)
        #expect(settings?.cameraAdjustments == .on)
        #expect(settings?.lightPressForce == .firmer)
        #expect(settings?.doubleLightPressSpeed == .default)
    }

    @Test(
        "Double Light-Press Speed: a 400 ms gap is a double press only at Slower or Slowest",
        arguments: CameraControlSettings.DoubleLightPressSpeed.allCases)
    func doublePressSpeed(speed: CameraControlSettings.DoubleLightPressSpeed) throws {
        let rig = try VirtualControlsRig(seed: 13)
        rig.captureRig.core.settings.doubleLightPressSpeed = speed
        try rig.play(scenario: "double-light-press gap=400ms\npause 300ms\n")
        rig.runUntilScenarioEnds()
        let doubled = Self.lines(rig).contains { $0.hasPrefix("gesture double-light-press") }
        #expect(doubled == (speed != .default), "\(speed):\n\(rig.logText)")
    }

    @Test(
        "each Light-Press Force preset is accepted by the firmware's Configure, and moves the light stage",
        arguments: CameraControlSettings.LightPressForce.allCases)
    func forcePreset(force: CameraControlSettings.LightPressForce) throws {
        let rig = try VirtualControlsRig(seed: 13)
        let config = Config(thresholds: force.thresholds, sampleRateHertz: 1000, slideIntervalMillis: 16, debounceMillis: 5)
        let call = try rig.link.startUnaryCall(.configConfigure, ConfigureRequest(config: config))
        var result: Result<[UInt8], RPCError>?
        _ = rig.captureRig.run(timeoutMicros: 1_000_000) {
            result = rig.link.takeUnaryResult(call)
            return result != nil
        }
        let bytes = try #require(result).get()
        #expect(try Config(serializedBytes: bytes).thresholds == force.thresholds)
        // A 700 mN press: a light press only with the Lighter preset (on at 600 mN).
        try rig.play(scenario: "light-press force=700mN hold=200ms\npause 300ms\n")
        rig.runUntilScenarioEnds()
        let light = Self.lines(rig).contains { $0.hasPrefix("gesture light-press-began") }
        #expect(light == (force == .lighter), "\(force):\n\(rig.logText)")
    }
}
