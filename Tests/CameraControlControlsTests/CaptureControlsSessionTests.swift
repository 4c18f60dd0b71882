import CameraControlCapture
import CameraControlControls
import Testing

@Suite("CaptureControlsSession")
struct CaptureControlsSessionTests {
    func slider(_ title: String, withAction: Bool = true) throws -> CaptureSlider {
        let slider = try CaptureSlider(title, symbolName: "s", in: 0...1)
        if withAction { slider.setActionQueue(InlineExecutor()) { _ in } }
        return slider
    }

    @Test("capabilities: supportsControls and maxControlsCount come from the device")
    func capabilities() throws {
        let yes = try CaptureControlsSession(capabilities: ControlsCapabilities(supportsControls: true, maxControls: 6))
        #expect(yes.supportsControls)
        #expect(yes.maxControlsCount == 6)
        let no = try CaptureControlsSession(capabilities: ControlsCapabilities(supportsControls: false, maxControls: 6))
        #expect(!no.supportsControls)
        #expect(no.maxControlsCount == 0)
        #expect(ControlsCapabilities(supportsControls: true, maxControls: -3).maxControls == 0)
        let control = try slider("A")
        #expect(!no.canAddControl(control))
        #expect(no.refusal(toAdd: control)?.code == .controlsNotSupported)
    }

    @Test("a session made before its device takes controls; bind(to:) applies the device's limit and support")
    func bindToTheDevice() throws {
        let session = try CaptureControlsSession(capabilities: nil)
        session.setEventInteractionAttached(true)
        let delegate = RecordingDelegate()
        session.setControlsDelegate(delegate, executor: InlineExecutor())
        #expect(session.capabilities == nil)
        #expect(session.supportsControls)
        #expect(session.maxControlsCount == ControlLimits.maximumControls)
        for title in ["A", "B", "C"] { try session.addControl(try slider(title)) }

        session.bind(to: ControlsCapabilities(supportsControls: true, maxControls: 2))
        #expect(session.capabilities == ControlsCapabilities(supportsControls: true, maxControls: 2))
        #expect(session.maxControlsCount == 2)
        #expect(session.controls.count == 3, "the app's controls stay")
        #expect(session.diagnostics.contains(.tooManyControls(count: 3, limit: 2)))
        #expect(session.refusal(toAdd: try slider("D"))?.code == .controlLimitReached)
        // The picker offers the first two: a slide past the second stops at the end of the list.
        let gestures = [
            cc(.touchBegan, 990_000),
            cc(.lightPressBegan, 1_000_000), cc(.lightPressEnded, 1_090_000),
            cc(.lightPressBegan, 1_210_000), cc(.doubleLightPress, 1_210_000), cc(.lightPressEnded, 1_290_000),
            cc(.slideBegan(motion(0)), 1_300_000),
            cc(.slideChanged(motion(0.15)), 1_310_000),
            cc(.slideChanged(motion(0.15)), 1_320_000),
            cc(.slideChanged(motion(0.15)), 1_330_000),
        ]
        let log = gestures.flatMap { session.handle($0) }.map(\.description)
        #expect(log.contains("picker-moved 1"))
        #expect(!log.contains("picker-moved 2"))
        #expect(log.contains("haptic limit @1320000"))

        // Bound to a device that cannot drive controls while the picker shows: the overlay goes, and the
        // delegate is told.
        #expect(session.isFullscreen)
        let before = delegate.calls.values
        session.bind(to: ControlsCapabilities(supportsControls: false, maxControls: 6))
        #expect(!session.supportsControls)
        #expect(session.refusal(toAdd: try slider("E"))?.code == .controlsNotSupported)
        #expect(!session.isFullscreen)
        #expect(delegate.calls.values.dropFirst(before.count) == ["exit", "inactive"])
    }

    @Test("canAddControl is false at the limit and addControl throws controlLimitReached")
    func limit() throws {
        let session = try readySession(maxControls: 2, delegate: RecordingDelegate())
        try session.addControl(try slider("A"))
        try session.addControl(try slider("B"))
        let third = try slider("C")
        #expect(!session.canAddControl(third))
        do {
            try session.addControl(third)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .controlLimitReached)
        }
        #expect(session.controls.map(\.id) == ["a", "b"])
    }

    @Test("a second system zoom slider on the same camera is refused; another camera's is fine")
    func secondZoomSlider() throws {
        let session = try readySession(delegate: RecordingDelegate())
        let back = try SyntheticCamera(uniqueID: "back")
        let front = try SyntheticCamera(uniqueID: "front")
        try session.addControl(try SystemZoomSlider(device: back))
        for again in [try SystemZoomSlider(device: back), try SystemZoomSlider(device: back, id: "zoom-2")] {
            #expect(!session.canAddControl(again))
            do {
                try session.addControl(again)
                Issue.record("accepted")
            } catch {
                #expect(error.code == .duplicateZoomSlider)
            }
        }
        // Another camera's zoom slider needs its own id.
        #expect(session.refusal(toAdd: try SystemZoomSlider(device: front))?.code == .duplicateControl)
        try session.addControl(try SystemZoomSlider(device: front, id: "front-zoom"))
        #expect(session.controls.map(\.id) == ["zoom", "front-zoom"])
    }

    @Test("a control without an action is refused (system sliders count as having one)")
    func missingAction() throws {
        let session = try readySession(delegate: RecordingDelegate())
        let bare = try slider("Bare", withAction: false)
        #expect(!session.canAddControl(bare))
        do {
            try session.addControl(bare)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .missingAction)
        }
        let picker = try CaptureIndexPicker("Flash", symbolName: "b", localizedIndexTitles: ["Off", "On"])
        #expect(session.refusal(toAdd: picker)?.code == .missingAction)
        #expect(session.canAddControl(try SystemExposureBiasSlider(device: try SyntheticCamera())))
    }

    @Test("the same control twice, or a control from outside the module, is refused")
    func duplicatesAndForeign() throws {
        let session = try readySession(delegate: RecordingDelegate())
        let a = try slider("A")
        try session.addControl(a)
        #expect(session.refusal(toAdd: a)?.code == .duplicateControl)
        #expect(session.refusal(toAdd: ForeignControl())?.code == .unsupportedControl)
    }

    @Test("add and remove while the overlay is showing; removing the last control hides it")
    func addRemoveWhileShowing() throws {
        let delegate = RecordingDelegate()
        let session = try readySession(delegate: delegate)
        let a = try slider("A")
        try session.addControl(a)
        session.handle(cc(.lightPressBegan, 1_000_000))
        #expect(session.phase == .hidden)  // until the light press is confirmed
        session.advance(toMicros: 1_100_000)
        #expect(session.phase == .showing("a"))
        let b = try slider("B")
        try session.addControl(b)
        #expect(session.removeControl(a))
        #expect(!session.removeControl(a))
        session.handle(cc(.touchBegan, 1_100_000))
        #expect(session.activeControlID == "b")
        #expect(session.removeControl(b))
        #expect(session.phase == .hidden)
        #expect(delegate.calls.values == ["active", "enter", "exit", "inactive"])
    }

    @Test("delegate order: active → enter → exit → inactive, exit before inactive")
    func delegateOrder() throws {
        let delegate = RecordingDelegate()
        let session = try readySession(delegate: delegate)
        try session.addControl(try slider("A"))
        var script = GestureScript()
        script.lightPress()
        script.slide(samples: 3, delta: 0.1)
        script.liftFinger()
        for gesture in script.gestures { session.handle(gesture) }
        #expect(delegate.calls.values == ["active", "enter"])
        session.advance(toMicros: script.now + 2_000_000)
        #expect(delegate.calls.values == ["active", "enter", "exit", "inactive"])
    }

    @Test("delegate calls run on the delegate's executor")
    func delegateExecutor() throws {
        let delegate = RecordingDelegate()
        let session = try readySession(delegate: delegate)
        let executor = ManualExecutor()
        session.setControlsDelegate(delegate, executor: executor)
        try session.addControl(try slider("A"))
        session.handle(cc(.lightPressBegan, 1_000_000))
        session.advance(toMicros: 1_100_000)
        #expect(delegate.calls.values.isEmpty)
        executor.runAll()
        #expect(delegate.calls.values == ["active", "enter"])
    }

    @Test("a light press waiting for its confirmation shows nothing once the capture session stopped")
    func pendingLightPressDroppedWhenSessionStops() throws {
        let delegate = RecordingDelegate()
        let session = try CaptureControlsSession(capabilities: ControlsCapabilities(supportsControls: true, maxControls: 4))
        try session.addControl(try slider("A"))
        session.setControlsDelegate(delegate, executor: InlineExecutor())
        let interaction = CaptureEventInteraction { _ in }
        session.attachEventInteraction(interaction)
        interaction.setSessionRunning(true)
        #expect(session.handle(cc(.lightPressBegan, 1_000)).isEmpty)
        interaction.setSessionRunning(false)
        #expect(session.advance(toMicros: 200_000).isEmpty)
        #expect(session.nextDeadlineMicros == nil)
        #expect(delegate.calls.values.isEmpty)
    }

    /// How capture goes away under the overlay: the interaction disabled, or its session stopped.
    enum CaptureEnds: CaseIterable, Sendable {
        case disabled, sessionStopped

        func apply(to interaction: CaptureEventInteraction) {
            switch self {
            case .disabled: interaction.isEnabled = false
            case .sessionStopped: interaction.setSessionRunning(false)
            }
        }
    }

    /// A session with one slider, a recording delegate and a running, enabled interaction.
    func liveSession() throws -> (CaptureControlsSession, CaptureEventInteraction, RecordingDelegate, CaptureSlider) {
        let delegate = RecordingDelegate()
        let session = try CaptureControlsSession(capabilities: ControlsCapabilities(supportsControls: true, maxControls: 4))
        let control = try slider("A")
        try session.addControl(control)
        session.setControlsDelegate(delegate, executor: InlineExecutor())
        let interaction = CaptureEventInteraction { _ in }
        session.attachEventInteraction(interaction)
        interaction.setSessionRunning(true)
        return (session, interaction, delegate, control)
    }

    @Test(
        "a light press waiting for its confirmation, released (a tap) or slid under after capture went away, shows nothing",
        arguments: CaptureEnds.allCases, [false, true])
    func pendingLightPressConfirmedAfterCaptureWent(_ ends: CaptureEnds, slides: Bool) throws {
        let (session, interaction, delegate, control) = try liveSession()
        #expect(session.handle(cc(.lightPressBegan, 1_000)).isEmpty)
        ends.apply(to: interaction)
        let next = slides ? cc(.slideBegan(motion(0.2)), 40_000) : cc(.lightPressEnded, 40_000)
        #expect(session.handle(next).isEmpty)
        #expect(session.phase == .hidden)
        #expect(session.advance(toMicros: 300_000).isEmpty)
        #expect(delegate.calls.values.isEmpty)
        #expect(control.value == 0)
    }

    @Test(
        "an overlay showing when capture goes away is dismissed: by the next gesture (which moves nothing) or advance",
        arguments: CaptureEnds.allCases)
    func overlayDismissedWhenCaptureGoes(_ ends: CaptureEnds) throws {
        for byGesture in [true, false] {
            let (session, interaction, delegate, control) = try liveSession()
            session.handle(cc(.lightPressBegan, 1_000))
            session.advance(toMicros: 101_000)
            #expect(session.phase != .hidden)
            #expect(session.isOverlayAllowed)
            ends.apply(to: interaction)
            #expect(!session.isOverlayAllowed)
            let effects =
                byGesture ? session.handle(cc(.slideChanged(motion(0.3)), 120_000)) : session.advance(toMicros: 120_000)
            #expect(effects.map(\.description).contains("overlay-hidden"), "\(effects)")
            #expect(!effects.contains { if case .valueChanged = $0 { true } else { false } }, "\(effects)")
            #expect(session.phase == .hidden)
            #expect(control.value == 0)
            #expect(delegate.calls.values == ["active", "enter", "exit", "inactive"], "\(delegate.calls.values)")
        }
    }

    @Test("a light press without a capability, interaction, controls or delegate shows nothing, with a diagnostic")
    func diagnostics() throws {
        let unsupported = try CaptureControlsSession(capabilities: ControlsCapabilities(supportsControls: false, maxControls: 4))
        #expect(unsupported.handle(cc(.lightPressBegan, 1)).isEmpty)
        #expect(unsupported.diagnostics == [.controlsNotSupported])

        let session = try CaptureControlsSession(capabilities: ControlsCapabilities(supportsControls: true, maxControls: 4))
        #expect(session.readinessProblems == [.noEventInteraction, .noControls, .noDelegate])
        try session.addControl(try slider("A"))
        #expect(session.handle(cc(.lightPressBegan, 1)).isEmpty)
        #expect(session.diagnostics == [.noEventInteraction])

        let interaction = CaptureEventInteraction { _ in }
        session.attachEventInteraction(interaction)
        #expect(session.isEventInteractionAttached)
        // The overlay never shows while the capture session is not running.
        #expect(session.readinessProblems == [.sessionNotRunning, .noDelegate])
        #expect(session.handle(cc(.lightPressBegan, 2)).isEmpty)
        #expect(session.diagnostics == [.noEventInteraction, .sessionNotRunning])
        interaction.setSessionRunning(true)
        #expect(session.handle(cc(.lightPressEnded, 2)).isEmpty)
        #expect(session.handle(cc(.lightPressBegan, 2)).isEmpty)
        #expect(session.diagnostics == [.noEventInteraction, .sessionNotRunning, .noDelegate])

        interaction.isEnabled = false
        #expect(!session.isEventInteractionAttached)
        interaction.isEnabled = true

        let delegate = RecordingDelegate()
        session.setControlsDelegate(delegate, executor: InlineExecutor())
        #expect(session.readinessProblems.isEmpty)
        #expect(session.handle(cc(.lightPressBegan, 3)).isEmpty)
        #expect(session.advance(toMicros: 100_003).map(\.description) == ["overlay-shown a", "entered-fullscreen"])
        #expect(delegate.calls.values == ["active", "enter"])
        #expect(session.diagnostics.last?.description.hasPrefix("no-delegate") == true)
    }

    @Test(
        "an invalid overlay configuration is a typed error",
        arguments: [
            OverlayConfiguration(dismissAfterMicros: 0), OverlayConfiguration(continuousStripsPerRange: .nan),
            OverlayConfiguration(fineModeGain: 0), OverlayConfiguration(prominentMagnetWidth: 0.7),
            OverlayConfiguration(momentumMinimumVelocity: 0.1, momentumStopVelocity: 0.2),
        ])
    func badConfiguration(_ configuration: OverlayConfiguration) {
        do {
            _ = try CaptureControlsSession(
                capabilities: ControlsCapabilities(supportsControls: true, maxControls: 1), configuration: configuration)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .invalidConfiguration)
        }
    }
}

/// A control type the session does not know.
final class ForeignControl: CaptureControl {
    let id: ControlID = "foreign"
    let localizedTitle = "Foreign"
    let symbolName = "questionmark"
    var accessibilityIdentifier: String? {
        get { nil }
        set {}
    }
    var isEnabled: Bool {
        get { true }
        set {}
    }
    let hasAction = true
    var snapshot: ControlSnapshot {
        ControlSnapshot(id: id, title: localizedTitle, isEnabled: true, adjustment: .indexPicker(count: 1), value: .index(0))
    }
}
