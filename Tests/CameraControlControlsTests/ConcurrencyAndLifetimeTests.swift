import CameraControlControls
import CameraControlTestSupport
import Dispatch
import Testing

@Suite("Thread safety and lifetimes")
struct ConcurrencyAndLifetimeTests {
    @Test("a slider set, read and observed from many threads at once stays consistent")
    func concurrentSlider() throws {
        let slider = try CaptureSlider("Blur", symbolName: "s", in: 0...1, step: 0.01)
        let seen = Recorder<Double>()
        slider.observeValueChanges(on: InlineExecutor()) { seen.append($0.value) }
        DispatchQueue.concurrentPerform(iterations: 400) { i in
            try? slider.setValue(Double(i % 101) / 100)
            _ = slider.snapshot
            slider.isEnabled = i % 2 == 0
        }
        #expect((0...1).contains(slider.value))
        #expect(!seen.values.isEmpty)
        #expect(seen.values.allSatisfy { (0...1).contains($0) })
    }

    @Test("a zoom slider and pinches from many threads leave slider and camera in agreement")
    func concurrentPinches() throws {
        let camera = try SyntheticCamera(zoomFactorRange: 1...10)
        let zoom = try SystemZoomSlider(device: camera)
        DispatchQueue.concurrentPerform(iterations: 200) { i in
            try? camera.pinch(toZoomFactor: 1 + Double(i % 9))
        }
        #expect(zoom.value == camera.zoomFactor)
        try camera.pinch(toZoomFactor: 7)
        #expect(zoom.value == 7)
    }

    @Test("the delegate is held weakly: once released, a light press shows nothing and reports no-delegate")
    func weakDelegate() throws {
        var delegate: RecordingDelegate? = RecordingDelegate()
        let session = try CaptureControlsSession(capabilities: ControlsCapabilities(supportsControls: true, maxControls: 4))
        session.setEventInteractionAttached(true)
        session.setControlsDelegate(delegate, executor: InlineExecutor())
        let slider = try CaptureSlider("A", symbolName: "s", in: 0...1)
        slider.setActionQueue(InlineExecutor()) { _ in }
        try session.addControl(slider)
        delegate = nil
        #expect(session.handle(cc(.lightPressBegan, 1)).isEmpty)
        #expect(session.diagnostics == [.noDelegate])
    }

    @Test("a released zoom slider stops observing its camera")
    func sliderReleaseRemovesObserver() throws {
        let camera = try SyntheticCamera()
        var zoom: SystemZoomSlider? = try SystemZoomSlider(device: camera)
        weak var weakZoom: SystemZoomSlider?
        weakZoom = zoom
        #expect(zoom?.value == 1)
        zoom = nil
        #expect(weakZoom == nil)
        try camera.pinch(toZoomFactor: 2)  // would crash or leak if the observer still held the slider
        #expect(camera.zoomFactor == 2)
    }

    @Test("ManualExecutor runs jobs in order, including jobs queued by jobs")
    func manualExecutor() {
        let executor = ManualExecutor()
        let order = Recorder<Int>()
        executor.execute {
            order.append(1); executor.execute { order.append(3) }
        }
        executor.execute { order.append(2) }
        #expect(executor.pendingCount == 2)
        #expect(executor.runAll() == 3)
        #expect(order.values == [1, 2, 3])
        #expect(executor.pendingCount == 0)
    }

    @Test("session.dismiss hides at once with exit before inactive")
    func sessionDismiss() throws {
        let delegate = RecordingDelegate()
        let session = try readySession(delegate: delegate)
        let slider = try CaptureSlider("A", symbolName: "s", in: 0...1)
        slider.setActionQueue(InlineExecutor()) { _ in }
        try session.addControl(slider)
        session.handle(cc(.lightPressBegan, 1))
        session.handle(cc(.slideChanged(motion(0.1)), 2))
        #expect(session.dismiss(atMicros: 3).map(\.description) == ["exited-fullscreen", "overlay-hidden"])
        #expect(delegate.calls.values == ["active", "enter", "exit", "inactive"])
    }
}

/// An actor whose state the jobs touch synchronously.
actor Counter {
    var values: [Double] = []
    func record(_ value: Double) { values.append(value) }
}

@Suite("ActorExecutor")
struct ActorExecutorTests {
    @Test("actions run isolated to the actor, in order")
    func actorIsolation() async throws {
        let counter = Counter()
        let executor = ActorExecutor(isolatedTo: counter)
        for i in 0..<50 {
            executor.execute { counter.assumeIsolated { $0.record(Double(i)) } }
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            executor.execute { done.resume() }
        }
        #expect(await counter.values == (0..<50).map(Double.init))
    }
}
