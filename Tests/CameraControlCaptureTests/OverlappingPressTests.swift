import CameraControlCapture
import CameraControlGestures
import CameraControlTestSupport
import CameraControlWire
import Testing

@Suite("Two presses held at once")
struct OverlappingPressTests {
    @Test("Camera Control held, then volume down: only the first press is delivered; the second is ignored and recorded")
    func secondPrimaryIgnored() throws {
        var router = runningRouter()
        var out = router.handle(gesture(0, .pressBegan, .cameraControl), atHostMicros: 0)
        out += router.handle(gesture(50, .pressBegan, .volumeDown), atHostMicros: 0)
        out += router.handle(gesture(120, ended(70), .volumeDown), atHostMicros: 0)
        out += router.handle(gesture(200, ended(200), .cameraControl), atHostMicros: 0)
        #expect(described(out) == ["began primary camera-control", "ended primary camera-control"])
        let first = try #require(events(out).first)
        #expect(router.ignoredPressCount == 1)
        #expect(
            router.diagnostics == [
                .overlappingPressIgnored(source: .volumeDown, role: .primary, activePress: first.id, deviceTimestampMicros: ms(50))
            ])
        #expect(router.diagnostics.map(\.description) == ["overlapping-press-ignored volume-down: primary busy with press#1 @50000"])
    }

    @Test("the ignored press stays ignored when the first ends before it; the next press is delivered with the next id")
    func ignoredForItsWholeLife() {
        var router = runningRouter()
        var out = router.handle(gesture(0, .pressBegan, .volumeDown), atHostMicros: 0)
        out += router.handle(gesture(10, .pressBegan, .actionButton), atHostMicros: 0)
        out += router.handle(gesture(100, ended(100), .volumeDown), atHostMicros: 0)  // the first ends
        out += router.handle(gesture(150, .longPressBegan(heldMicros: ms(140)), .actionButton), atHostMicros: 0)
        out += router.handle(gesture(300, ended(290, long: true), .actionButton), atHostMicros: 0)
        #expect(described(out) == ["began primary volume-down", "ended primary volume-down"])
        #expect(router.pressesInFlight.isEmpty)
        let next = router.handle(click(.actionButton, at: 400), atHostMicros: 0)
        #expect(described(next) == ["began primary action-button", "ended primary action-button"])
        #expect(events(next).map(\.id.rawValue) == [2, 2])  // an ignored press takes no id
    }

    @Test("a remote click while a primary press is held is ignored too, without the default sound")
    func remoteClickWhileHeld() {
        var router = runningRouter()
        var out = router.handle(gesture(0, .pressBegan, .volumeDown), atHostMicros: 0)
        out += router.handle(gesture(50, .remoteClick, .remote), atHostMicros: 0)
        out += router.handle(gesture(100, ended(100), .volumeDown), atHostMicros: 0)
        #expect(described(out) == ["began primary volume-down", "ended primary volume-down"])
        #expect(router.ignoredPressCount == 1)
    }

    @Test("secondary and primary presses overlap independently")
    func secondaryAndPrimaryIndependent() {
        var router = runningRouter(secondary: true)
        var out = router.handle(gesture(0, .pressBegan, .volumeUp), atHostMicros: 0)
        out += router.handle(gesture(50, .pressBegan, .cameraControl), atHostMicros: 0)
        out += router.handle(gesture(60, .remoteClick, .remote), atHostMicros: 0)  // primary busy: ignored
        out += router.handle(gesture(100, ended(50), .cameraControl), atHostMicros: 0)
        out += router.handle(gesture(150, .pressBegan, .volumeDown), atHostMicros: 0)  // primary free again
        out += router.handle(gesture(200, ended(50), .volumeDown), atHostMicros: 0)
        out += router.handle(gesture(300, ended(300), .volumeUp), atHostMicros: 0)
        #expect(
            described(out) == [
                "began secondary volume-up", "began primary camera-control", "ended primary camera-control",
                "began primary volume-down", "ended primary volume-down", "ended secondary volume-up",
            ])
        #expect(router.ignoredPressCount == 1)
    }

    @Test("without a secondary handler volume up is primary, so it is limited like the others")
    func volumeUpWithoutSecondary() {
        var router = runningRouter(secondary: false)
        var out = router.handle(gesture(0, .pressBegan, .volumeUp), atHostMicros: 0)
        out += router.handle(click(.cameraControl, at: 10), atHostMicros: 0)
        out += router.handle(gesture(300, ended(300), .volumeUp), atHostMicros: 0)
        #expect(described(out) == ["began primary volume-up", "ended primary volume-up"])
    }

    @Test("the session stopping cancels the active press; the ignored one's release still produces nothing")
    func stopWhileBothHeld() {
        var router = runningRouter()
        var out = router.handle(gesture(0, .pressBegan, .cameraControl), atHostMicros: 0)
        out += router.handle(gesture(10, .pressBegan, .volumeDown), atHostMicros: 0)
        out += router.setSessionRunning(false, atHostMicros: 0)
        out += router.setSessionRunning(true, atHostMicros: 0)
        out += router.handle(gesture(100, ended(90), .volumeDown), atHostMicros: 0)
        out += router.handle(gesture(200, ended(200), .cameraControl), atHostMicros: 0)
        #expect(described(out) == ["began primary camera-control", "cancelled primary camera-control"])
    }

    @Test("presses on their default action are not limited")
    func defaultActionsOverlap() {
        var router = CaptureEventRouter()  // not running
        var out = router.handle(gesture(0, .pressBegan, .volumeDown), atHostMicros: 0)
        out += router.handle(gesture(10, .pressBegan, .cameraControl), atHostMicros: 0)
        #expect(described(out) == ["default began volumeDown", "default began launchCamera"])
        #expect(router.ignoredPressCount == 0)
        #expect(router.diagnostics.isEmpty)
    }

    @Test("diagnostics keep the newest 64; the count keeps counting")
    func diagnosticsBounded() {
        var router = runningRouter()
        _ = router.handle(gesture(0, .pressBegan, .cameraControl), atHostMicros: 0)
        for index in 1...100 { _ = router.handle(click(.volumeDown, at: UInt64(index) * 1000), atHostMicros: 0) }
        #expect(router.ignoredPressCount == 100)
        #expect(router.diagnostics.count == CaptureEventRouter.maximumDiagnostics)
        if case .overlappingPressIgnored(_, _, _, let micros) = router.diagnostics.first {
            #expect(micros == ms(37_000))
        } else {
            Issue.record("unexpected diagnostic \(String(describing: router.diagnostics.first))")
        }
    }

    @Test("an app keeping one pressing flag sees began and ended alternate and takes one photo")
    func interactionOnePhoto() {
        let seen = Recorder<CaptureEventPhase>()
        let interaction = CaptureEventInteraction { seen.append($0.phase) }
        interaction.setSessionRunning(true)
        interaction.handle([
            gesture(0, .pressBegan, .cameraControl), gesture(50, .pressBegan, .volumeDown),
            gesture(200, ended(200), .cameraControl), gesture(250, ended(200), .volumeDown),
        ])
        #expect(seen.values == [.began, .ended])
        #expect(interaction.ignoredPressCount == 1)
        #expect(interaction.diagnostics.count == 1)
    }
}
