import CameraControlControls
import CameraControlTestSupport
import Testing

@Suite("Actions: once per distinct value, coalescing")
struct ActionDeliveryTests {
    @Test("a discrete slider's action runs once per distinct value, not once per sample")
    func oncePerDistinctValue() throws {
        let delegate = RecordingDelegate()
        let session = try readySession(delegate: delegate)
        // 5 values over one strip: a step every 0.25 strip; samples of 0.05 cross one every 5 samples.
        let slider = try CaptureSlider("Level", symbolName: "s", values: [0, 1, 2, 3, 4])
        let actions = Recorder<Double>()
        slider.setActionQueue(InlineExecutor()) { actions.append($0) }
        try session.addControl(slider)
        var script = GestureScript()
        script.lightPress()
        script.slide(samples: 12, delta: 0.05)  // cursor 0 → 0.6: values 1 (at 0.15) and 2 (at 0.4)
        script.slide(samples: 12, delta: -0.05)  // back to 0
        for gesture in script.gestures { session.handle(gesture) }
        #expect(actions.values == [1, 2, 1, 0])
    }

    @Test("a continuous slider calls its action for every sample that changes the value, never twice in a row")
    func continuousDistinct() throws {
        let delegate = RecordingDelegate()
        let session = try readySession(delegate: delegate)
        let slider = try CaptureSlider("Blur", symbolName: "s", in: 0...1)
        let actions = Recorder<Double>()
        slider.setActionQueue(InlineExecutor()) { actions.append($0) }
        try session.addControl(slider)
        var script = GestureScript()
        script.lightPress()
        script.slide(samples: 4, delta: 0.1)
        script.slide(samples: 3, delta: 0)  // no movement: no calls
        for gesture in script.gestures { session.handle(gesture) }
        #expect(actions.values.count == 4)
        #expect(zip(actions.values, actions.values.dropFirst()).allSatisfy { $0 != $1 })
        #expect(abs(slider.value - 0.4) < 1e-9)
    }

    @Test("coalescing: at most one call per interval, the latest value wins, the last value is not lost")
    func coalescing() throws {
        let delegate = RecordingDelegate()
        let session = try readySession(delegate: delegate)
        let slider = try CaptureSlider("Blur", symbolName: "s", in: 0...1)
        let actions = Recorder<Double>()
        slider.setActionQueue(InlineExecutor(), coalescing: .latest(intervalMicros: 50_000)) { actions.append($0) }
        try session.addControl(slider)
        var script = GestureScript()
        script.lightPress()
        // 9 samples 10 ms apart, 0.1 each: values 0.1 … 0.9.
        script.slide(samples: 9, delta: 0.1, interval: 10_000)
        script.liftFinger()
        for gesture in script.gestures { session.handle(gesture) }
        let during = actions.values
        // Samples at +20 ms (0.1), then the first sample ≥ 50 ms later is delivered directly…
        #expect(during.count < 9)
        #expect(during.count >= 2)
        #expect(abs(during[0] - 0.1) < 1e-9)
        // … and whatever is still held arrives by the time the overlay hides.
        session.advance(toMicros: script.now + 3_000_000)
        #expect(abs((actions.values.last ?? -1) - 0.9) < 1e-9)
        #expect(zip(actions.values, actions.values.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test("coalescing: a held value falls due at nextDeadlineMicros and advance delivers it")
    func coalescedFlushOnAdvance() throws {
        let delegate = RecordingDelegate()
        let session = try readySession(delegate: delegate)
        let slider = try CaptureSlider("Blur", symbolName: "s", in: 0...1)
        let actions = Recorder<Double>()
        slider.setActionQueue(InlineExecutor(), coalescing: .latest(intervalMicros: 100_000)) { actions.append($0) }
        try session.addControl(slider)
        var script = GestureScript()
        script.lightPress()
        script.add(.touchBegan)
        script.add(.slideBegan(motion(0)), after: 10_000)
        script.add(.slideChanged(motion(0.2)), after: 10_000)  // delivered at once
        let first = script.now
        script.add(.slideChanged(motion(0.2)), after: 10_000)  // held
        for gesture in script.gestures { session.handle(gesture) }
        #expect(actions.values.count == 1)
        #expect(session.nextDeadlineMicros == first + 100_000)
        session.advance(toMicros: first + 100_000)
        #expect(actions.values.count == 2)
        #expect(abs(actions.values[1] - 0.4) < 1e-9)
    }

    @Test("a picker's action runs once per distinct index")
    func pickerAction() throws {
        let delegate = RecordingDelegate()
        let session = try readySession(delegate: delegate)
        let picker = try CaptureIndexPicker("Flash", symbolName: "bolt", localizedIndexTitles: ["Off", "On", "Auto"])
        let actions = Recorder<Int>()
        picker.setActionQueue(InlineExecutor()) { actions.append($0) }
        try session.addControl(picker)
        var script = GestureScript()
        script.lightPress()
        script.slide(samples: 10, delta: 0.1)  // 3 indexes over one strip: 0 → 2
        for gesture in script.gestures { session.handle(gesture) }
        #expect(actions.values == [1, 2])
        #expect(picker.selectedIndex == 2)
    }
}
