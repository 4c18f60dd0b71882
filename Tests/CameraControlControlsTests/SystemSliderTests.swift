import CameraControlCapture
import CameraControlControls
import CameraControlTestSupport
import Foundation
import Testing

@Suite("System sliders and the camera abstraction")
struct SystemSliderTests {
    @Test("the zoom slider's range, value and id come from the device")
    func zoomRange() throws {
        let camera = try SyntheticCamera(zoomFactorRange: 1...6, prominentZoomFactors: [2, 5, 9])
        let zoom = try SystemZoomSlider(device: camera)
        #expect(zoom.domain == .continuous(1...6, scale: .logarithmic))
        #expect(zoom.value == 1)
        #expect(zoom.id == "zoom")
        #expect(zoom.prominentValues == [2, 5])
        #expect(zoom.hasAction)
        #expect(zoom.displayText(for: 2.5) == "2.5×")
    }

    @Test("a slide sets the device's zoom; the action fires with origin slider")
    func zoomBySlide() throws {
        let camera = try SyntheticCamera(zoomFactorRange: 1...10, prominentZoomFactors: [])
        let actions = Recorder<Double>()
        let changes = Recorder<ValueChange<Double>>()
        let zoom = try SystemZoomSlider(device: camera, executor: InlineExecutor()) { actions.append($0) }
        zoom.observeValueChanges(on: InlineExecutor()) { changes.append($0) }
        let delegate = RecordingDelegate()
        let session = try readySession(delegate: delegate)
        try session.addControl(zoom)
        var script = GestureScript()
        script.lightPress()
        script.slide(samples: 5, delta: 0.1)  // log scale: 10^0.5
        for gesture in script.gestures { session.handle(gesture) }
        #expect(abs(camera.zoomFactor - 10.0.squareRoot()) < 1e-9)
        #expect(zoom.value == camera.zoomFactor)
        #expect(actions.values.count == 5)
        #expect(changes.values.allSatisfy { $0.origin == .slider })
        #expect(changes.values.last?.value == camera.zoomFactor)
    }

    @Test("zoom changed elsewhere (a pinch): the slider follows, the action does not fire, origin external")
    func pinchFollows() throws {
        let camera = try SyntheticCamera(zoomFactorRange: 1...10)
        let actions = Recorder<Double>()
        let changes = Recorder<ValueChange<Double>>()
        let zoom = try SystemZoomSlider(device: camera, executor: InlineExecutor()) { actions.append($0) }
        zoom.observeValueChanges(on: InlineExecutor()) { changes.append($0) }
        try camera.pinch(toZoomFactor: 3)
        #expect(zoom.value == 3)
        #expect(zoom.snapshot.value == .number(3))
        #expect(actions.values.isEmpty)
        #expect(changes.values == [ValueChange(controlID: "zoom", value: 3, origin: .external)])
    }

    @Test("after a pinch, the next slide starts from the pinched zoom, not a stale one")
    func slideAfterPinch() throws {
        let camera = try SyntheticCamera(zoomFactorRange: 1...10, prominentZoomFactors: [])
        let zoom = try SystemZoomSlider(device: camera, executor: InlineExecutor()) { _ in }
        let delegate = RecordingDelegate()
        let session = try readySession(delegate: delegate)
        try session.addControl(zoom)
        var script = GestureScript()
        script.lightPress()
        script.slide(samples: 1, delta: 0.1)
        for gesture in script.gestures { session.handle(gesture) }
        try camera.pinch(toZoomFactor: 5)
        var more = GestureScript(startMicros: script.now)
        more.slide(samples: 1, delta: 0.1)
        for gesture in more.gestures { session.handle(gesture) }
        let expected = 5 * pow(10, 0.1)
        #expect(abs(camera.zoomFactor - expected) < 1e-9)
    }

    @Test("app code zooms through the camera (the system slider has no value setter); the slider follows, origin external")
    func programmaticZoom() throws {
        let camera = try SyntheticCamera(zoomFactorRange: 1...10)
        let actions = Recorder<Double>()
        let zoom = try SystemZoomSlider(device: camera, executor: InlineExecutor()) { actions.append($0) }
        let changes = Recorder<ValueChange<Double>>()
        zoom.observeValueChanges(on: InlineExecutor()) { changes.append($0) }
        try camera.setZoomFactor(4, source: .external)
        #expect(zoom.value == 4)
        #expect(changes.values == [ValueChange(controlID: "zoom", value: 4, origin: .external)])
        #expect(actions.values.isEmpty)
        #expect(throws: ControlError.self) { try camera.setZoomFactor(11, source: .external) }
        #expect(zoom.value == 4)
    }

    @Test("system sliders are SliderControls, not CaptureSliders: format and prominent values are fixed by the camera")
    func systemSlidersAreNotAppSliders() throws {
        let camera = try SyntheticCamera()
        let controls: [any CaptureControl] = [try SystemZoomSlider(device: camera), try SystemExposureBiasSlider(device: camera)]
        let sliders = controls.compactMap { $0 as? SliderControl }
        let appSliders = controls.compactMap { $0 as? CaptureSlider }
        #expect(sliders.count == 2)
        #expect(appSliders.isEmpty)
        #expect(sliders.map(\.localizedValueFormat) == ["%@×", "%@ EV"])
        #expect(sliders.map(\.diagnostics) == [[], []])
        #expect(sliders.map(\.hasAction) == [true, true])
    }

    @Test("exposure bias: 1/3 EV steps over ±2 EV, prominent 0, starting at the device's bias")
    func exposureDefault() throws {
        let camera = try SyntheticCamera(exposureBiasRange: -8...8)
        let exposure = try SystemExposureBiasSlider(device: camera)
        guard case .discrete(let values) = exposure.domain else {
            Issue.record("not discrete")
            return
        }
        #expect(values.count == 13)
        #expect(values.first == -2)
        #expect(values.last == 2)
        #expect(abs(values.value(at: 7) - 1.0 / 3.0) < 1e-12)
        #expect(exposure.value == 0)
        #expect(exposure.prominentValues == [0])
        #expect(exposure.id == "exposure-bias")
        #expect(exposure.displayText(for: -2.0 / 3.0) == "-0.67 EV")
    }

    @Test("exposure bias: a narrower device range narrows the slider to its 1/3 EV multiples")
    func exposureNarrow() throws {
        let camera = try SyntheticCamera(exposureBiasRange: -1.5...1)
        let exposure = try SystemExposureBiasSlider(device: camera)
        guard case .discrete(let values) = exposure.domain else {
            Issue.record("not discrete")
            return
        }
        #expect(values.count == 8)  // -4/3 … 1 in thirds
        #expect(abs(values.first + 4.0 / 3.0) < 1e-12)
        #expect(values.last == 1)
        let tiny = try SyntheticCamera(exposureBiasRange: 0.1...0.2)
        #expect(throws: ControlError.self) { try SystemExposureBiasSlider(device: tiny) }
    }

    @Test("exposure bias: slides step the device by thirds; an external change snaps the slider")
    func exposureSlides() throws {
        let camera = try SyntheticCamera()
        let exposure = try SystemExposureBiasSlider(device: camera, executor: InlineExecutor()) { _ in }
        let delegate = RecordingDelegate()
        let session = try readySession(delegate: delegate)
        try session.addControl(exposure)
        var script = GestureScript()
        script.lightPress()
        script.slide(samples: 2, delta: 1.0 / 12.0)
        for gesture in script.gestures { session.handle(gesture) }
        #expect(abs(camera.exposureBias - 2.0 / 3.0) < 1e-9)
        try camera.setExposureBias(-0.9, source: .external)
        #expect(abs(exposure.value + 1) < 1e-9)
    }

    @Test("the synthetic camera validates, records photos and notifies observers with the source")
    func syntheticCamera() throws {
        #expect(throws: ControlError.self) { try SyntheticCamera(zoomFactorRange: 2...2) }
        let camera = try SyntheticCamera(zoomFactorRange: 1...4)
        let seen = Recorder<CameraPropertyChange>()
        let token = camera.addObserver { seen.append($0) }
        try camera.setZoomFactor(2, source: .control("zoom"))
        #expect(throws: ControlError.self) { try camera.setZoomFactor(5, source: .external) }
        #expect(throws: ControlError.self) { try camera.setExposureBias(.nan, source: .external) }
        let photo = try camera.capturePhoto()
        camera.removeObserver(token)
        try camera.setZoomFactor(3, source: .external)
        #expect(seen.values == [CameraPropertyChange(property: .zoomFactor, value: 2, source: .control("zoom"))])
        #expect(photo == CapturedPhoto(sequenceNumber: 1, zoomFactor: 2, exposureBias: 0))
        #expect(camera.photos == [photo])
    }

    @Test("SyntheticCamera: a click's ended takes a photo, a long press's a video; began and cancelled take nothing")
    func syntheticCameraRecordsVideoOnHold() throws {
        let camera = try SyntheticCamera()
        func event(_ phase: CaptureEventPhase, long: Bool = false) -> CaptureEvent {
            CaptureEvent(
                phase: phase, id: CaptureEventID(rawValue: 1), source: .cameraControl, deviceTimestampMicros: 1,
                isLongPress: long, receivedAtHostMicros: 1)
        }
        #expect(try camera.capture(event(.began), hostMicros: nil) == nil)
        #expect(try camera.capture(event(.cancelled), hostMicros: nil) == nil)
        let photo = try #require(try camera.capture(event(.ended), hostMicros: nil))
        let video = try #require(try camera.capture(event(.ended, long: true), hostMicros: nil))
        #expect(!photo.isVideo && video.isVideo)
        #expect(camera.photos.map(\.sequenceNumber) == [1, 2])
    }
}
