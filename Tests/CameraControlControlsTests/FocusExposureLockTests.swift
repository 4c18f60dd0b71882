import CameraControlCapture
import CameraControlControls
import CameraControlGestures
import CameraControlWire
import Testing

@Suite("AE/AF lock controller")
struct FocusExposureLockTests {
    @Test("a light press held past the lock time locks; the full press shoots with it; the release unlocks")
    func holdLockShootRelease() throws {
        let camera = try SyntheticCamera()
        var lock = FocusExposureLockController(camera: camera)
        #expect(lock.handle(cc(.lightPressBegan, 1_000)).isEmpty)
        #expect(lock.nextDeadlineMicros == 401_000)
        #expect(lock.advance(toMicros: 400_999).isEmpty)
        #expect(lock.advance(toMicros: 401_000) == [.locked(.both, atMicros: 401_000)])
        #expect(camera.focusExposureLock == .both)
        #expect(lock.handle(cc(.pressBegan, 600_000)).isEmpty)
        #expect(try camera.capturePhoto().focusExposureLock == .both)
        #expect(lock.handle(cc(.lightPressEnded, 800_000)) == [.unlocked(atMicros: 800_000, cancelled: false)])
        #expect(camera.focusExposureLock.isEmpty)
        #expect(camera.focusExposureLockChanges == [.both, []])
        #expect(try camera.capturePhoto().focusExposureLock.isEmpty)
    }

    @Test(
        "a full click, a slide or a double light press before the lock time locks nothing",
        arguments: [
            GestureKind.pressBegan, .slideBegan(SlideMotion(position: 0.5, delta: 0, velocity: 0)), .doubleLightPress,
        ])
    func noLockWhenNotHeld(kind: GestureKind) throws {
        let camera = try SyntheticCamera()
        var lock = FocusExposureLockController(camera: camera)
        _ = lock.handle(cc(.lightPressBegan, 1_000))
        _ = lock.handle(cc(kind, 100_000))
        #expect(lock.nextDeadlineMicros == nil)
        #expect(lock.advance(toMicros: 2_000_000).isEmpty)
        #expect(camera.focusExposureLockChanges.isEmpty)
    }

    @Test("a light press begun while the control list is shown never locks; one in the plain overlay or with none does")
    func noLockWhileChoosingAControl() throws {
        let camera = try SyntheticCamera()
        var lock = FocusExposureLockController(camera: camera)
        #expect(lock.handle(cc(.lightPressBegan, 0), overlay: .picking(highlightedIndex: 1)).isEmpty)
        #expect(lock.nextDeadlineMicros == nil)
        #expect(lock.advance(toMicros: 2_000_000).isEmpty)
        #expect(lock.handle(cc(.lightPressEnded, 2_000_000)).isEmpty)
        #expect(camera.focusExposureLockChanges.isEmpty)
        let id: ControlID = "zoom"
        let presses: [(UInt64, OverlayPhase)] = [(3_000_000, .adjusting(id)), (4_000_000, .showing(id)), (5_000_000, .hidden)]
        for (start, overlay) in presses {
            _ = lock.handle(cc(.lightPressBegan, start), overlay: overlay)
            #expect(lock.advance(toMicros: start + 400_000) == [.locked(.both, atMicros: start + 400_000)], "\(overlay)")
            _ = lock.handle(cc(.lightPressEnded, start + 500_000))
        }
    }

    @Test("the touch ends while the full press is down (a finger lifted off the click): locked until the light press ends")
    func releasedDuringTheShot() throws {
        let camera = try SyntheticCamera()
        var lock = FocusExposureLockController(camera: camera)
        _ = lock.handle(cc(.lightPressBegan, 0))
        #expect(lock.advance(toMicros: 400_000) == [.locked(.both, atMicros: 400_000)])
        #expect(lock.handle(cc(.pressBegan, 500_000)).isEmpty)
        #expect(lock.handle(cc(.touchEnded, 600_000)).isEmpty)
        #expect(lock.isLocked)
        #expect(try camera.capturePhoto().focusExposureLock == .both)
        let summary = PressSummary(durationMicros: 106_000, isLongPress: false, peakForceMillinewtons: 3_500)
        #expect(lock.handle(cc(.pressEnded(summary), 606_000)).isEmpty)
        #expect(try camera.capturePhoto().focusExposureLock == .both, "the photo of the capture's `ended`")
        #expect(lock.handle(cc(.lightPressEnded, 608_000)) == [.unlocked(atMicros: 608_000, cancelled: false)])
        #expect(camera.focusExposureLockChanges == [.both, []])
        // The same with the shutter cancelled (device lost): a cancel.
        _ = lock.handle(cc(.lightPressBegan, 1_000_000))
        _ = lock.advance(toMicros: 1_400_000)
        _ = lock.handle(cc(.pressBegan, 1_500_000))
        #expect(lock.handle(cc(.touchEnded, 1_600_000)).isEmpty)
        #expect(lock.handle(cc(.pressCancelled, 1_700_000)) == [.unlocked(atMicros: 1_700_000, cancelled: true)])
        // A normal release order is unchanged: the shot ends first, the light press's end unlocks.
        _ = lock.handle(cc(.lightPressBegan, 2_000_000))
        _ = lock.advance(toMicros: 2_400_000)
        _ = lock.handle(cc(.pressBegan, 2_500_000))
        #expect(lock.handle(cc(.pressEnded(summary), 2_600_000)).isEmpty)
        #expect(lock.handle(cc(.lightPressEnded, 2_650_000)) == [.unlocked(atMicros: 2_650_000, cancelled: false)])
    }

    @Test("a cancel unlocks at once; a reset press (pressCancelled) too")
    func cancelUnlocks() throws {
        let camera = try SyntheticCamera()
        var lock = FocusExposureLockController(camera: camera)
        _ = lock.handle(cc(.lightPressBegan, 0))
        _ = lock.advance(toMicros: 400_000)
        #expect(lock.cancel(atMicros: 500_000) == [.unlocked(atMicros: 500_000, cancelled: true)])
        #expect(camera.focusExposureLock.isEmpty)
        #expect(lock.cancel(atMicros: 600_000).isEmpty)
        _ = lock.handle(cc(.lightPressBegan, 1_000_000))
        _ = lock.advance(toMicros: 1_400_000)
        #expect(lock.handle(cc(.pressCancelled, 1_500_000)) == [.unlocked(atMicros: 1_500_000, cancelled: true)])
    }

    @Test("a camera that cannot lock says so and locks nothing; a camera with AE only locks AE")
    func unsupported() throws {
        let none = try SyntheticCamera(supportedFocusExposureLock: [])
        var lock = FocusExposureLockController(camera: none)
        _ = lock.handle(cc(.lightPressBegan, 0))
        let events = lock.advance(toMicros: 400_000)
        #expect(events.count == 1)
        if case .unsupported = events.first {} else { Issue.record("expected unsupported, got \(events)") }
        #expect(!lock.isLocked)
        #expect(throws: ControlError.self) { try none.setFocusExposureLock(.focus) }

        let exposureOnly = try SyntheticCamera(supportedFocusExposureLock: .exposure)
        var partial = FocusExposureLockController(camera: exposureOnly)
        _ = partial.handle(cc(.lightPressBegan, 0))
        #expect(partial.advance(toMicros: 400_000) == [.locked(.exposure, atMicros: 400_000)])
        #expect("\(FocusExposureLockEvent.locked(.exposure, atMicros: 400_000))" == "locked AE @400000")
    }
}
