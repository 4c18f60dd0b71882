import CameraControlControls
import CameraControlTestSupport
import Testing

@Suite("CaptureSlider")
struct CaptureSliderTests {
    struct BadRange: Sendable, CustomTestStringConvertible {
        var range: ClosedRange<Double>
        var testDescription: String { "\(range)" }
    }

    @Test(
        "continuous: min ≥ max or a non-finite bound throws invalidRange",
        arguments: [
            BadRange(range: 1...1), BadRange(range: 5...5), BadRange(range: -Double.infinity...0),
            BadRange(range: 0...Double.infinity), BadRange(range: -Double.greatestFiniteMagnitude...Double.infinity),
        ])
    func continuousBadRange(_ bad: BadRange) {
        #expect(throws: ControlError.self) { try CaptureSlider("S", symbolName: "s", in: bad.range) }
        do {
            _ = try CaptureSlider("S", symbolName: "s", in: bad.range)
        } catch {
            #expect(error.code == .invalidRange)
        }
    }

    @Test("discrete: bad steps throw invalidStep", arguments: [0.0, -0.5, .nan, .infinity, -.infinity])
    func badStep(_ step: Double) {
        do {
            _ = try CaptureSlider("S", symbolName: "s", in: 0...1, step: step)
            Issue.record("step \(step) accepted")
        } catch {
            #expect(error.code == .invalidStep)
        }
    }

    @Test("discrete: min ≥ max throws invalidRange even with a good step")
    func discreteBadRange() {
        do {
            _ = try CaptureSlider("S", symbolName: "s", in: 2...2, step: 1)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .invalidRange)
        }
    }

    @Test("discrete: a step giving too many values throws tooManyValues (no allocation)")
    func tooManySteps() {
        do {
            _ = try CaptureSlider("S", symbolName: "s", in: 0...1e12, step: 1e-6)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .tooManyValues)
        }
    }

    @Test("explicit values: empty throws emptyValues, NaN throws nonFiniteValue")
    func badValues() {
        do {
            _ = try CaptureSlider("S", symbolName: "s", values: [])
            Issue.record("accepted")
        } catch {
            #expect(error.code == .emptyValues)
        }
        do {
            _ = try CaptureSlider("S", symbolName: "s", values: [1, .nan])
            Issue.record("accepted")
        } catch {
            #expect(error.code == .nonFiniteValue)
        }
    }

    @Test(
        "value defaults to the minimum",
        arguments: [
            (0.0...1.0, 0.0), (-3.0...3.0, -3.0), (10.0...20.0, 10.0),
        ])
    func defaultValue(_ range: ClosedRange<Double>, _ expected: Double) throws {
        #expect(try CaptureSlider("S", symbolName: "s", in: range).value == expected)
        #expect(try CaptureSlider("S", symbolName: "s", in: range, step: 0.5).value == expected)
    }

    @Test("explicit values are sorted and deduplicated; the default is the smallest")
    func explicitValues() throws {
        let slider = try CaptureSlider("ISO", symbolName: "s", values: [400, 100, 200, 100])
        #expect(slider.value == 100)
        guard case .discrete(let values) = slider.domain else {
            Issue.record("not discrete")
            return
        }
        #expect((0..<values.count).map(values.value(at:)) == [100, 200, 400])
    }

    @Test("setting a value outside the range throws and keeps the value", arguments: [-0.1, 1.1, .nan, .infinity])
    func setOutOfRange(_ value: Double) throws {
        let slider = try CaptureSlider("S", symbolName: "s", in: 0...1)
        try slider.setValue(0.25)
        #expect(throws: ControlError.self) { try slider.setValue(value) }
        #expect(slider.value == 0.25)
    }

    @Test("setting a value on a discrete slider snaps to the nearest step")
    func snapToStep() throws {
        let slider = try CaptureSlider("S", symbolName: "s", in: 0...1, step: 0.25)
        try slider.setValue(0.3)
        #expect(slider.value == 0.25)
        try slider.setValue(1)
        #expect(slider.value == 1)
    }

    @Test("a step range ends at the last step not above the maximum")
    func steppedEnd() throws {
        let values = try DiscreteValues(range: 0...1, step: 0.3)
        #expect(values.count == 4)
        #expect(abs(values.last - 0.9) < 1e-12)
        #expect(try DiscreteValues(range: 0...1, step: 0.1).count == 11)
    }

    @Test("the nearest value's index: halfway between two, the lower one, stepped or listed alike")
    func nearestIndexTiesGoDown() throws {
        let stepped = try DiscreteValues(range: 0...4, step: 1)
        let listed = try DiscreteValues(values: [0, 1, 2, 3, 4])
        for values in [stepped, listed] {
            #expect([0.5, 1.5, 2.5, 3.5].map { values.nearestIndex(to: $0) } == [0, 1, 2, 3], "\(values)")
            #expect([0.49, 0.51, 2.0, -7, 9].map { values.nearestIndex(to: $0) } == [0, 1, 2, 0, 4], "\(values)")
        }
    }

    struct FormatCase: Sendable, CustomTestStringConvertible {
        var format: String
        var accepted: Bool
        var testDescription: String { "\"\(format)\" → \(accepted)" }
    }

    @Test(
        "value format: only exactly one %@ is accepted",
        arguments: [
            FormatCase(format: "%@ EV", accepted: true), FormatCase(format: "%@×", accepted: true),
            FormatCase(format: "100%% at %@", accepted: true), FormatCase(format: "no placeholder", accepted: false),
            FormatCase(format: "%@ and %@", accepted: false), FormatCase(format: "%d", accepted: false),
            FormatCase(format: "%@ %f", accepted: false), FormatCase(format: "%", accepted: false),
            FormatCase(format: "", accepted: false),
        ])
    func valueFormat(_ item: FormatCase) throws {
        let slider = try CaptureSlider("Blur", symbolName: "s", in: 0...10)
        slider.localizedValueFormat = item.format
        #expect(CaptureSlider.isValidValueFormat(item.format) == item.accepted)
        if item.accepted {
            #expect(slider.localizedValueFormat == item.format)
            #expect(slider.diagnostics.isEmpty)
        } else {
            #expect(slider.localizedValueFormat == nil)
            #expect(slider.diagnostics == [.invalidValueFormat(control: "blur", format: item.format)])
            #expect(slider.displayText(for: 2.5) == "2.5")
        }
    }

    @Test("display text puts the number into the format")
    func displayText() throws {
        let slider = try CaptureSlider("Blur", symbolName: "s", in: 0...10)
        #expect(slider.displayText(for: 1.0 / 3.0) == "0.33")
        slider.localizedValueFormat = "%@ px (100%%)"
        #expect(slider.displayText(for: 2) == "2 px (100%)")
    }

    @Test("prominent values outside the range throw; inside they are sorted (and snapped when discrete)")
    func prominentValues() throws {
        let slider = try CaptureSlider("S", symbolName: "s", in: 0...10)
        for bad in [-1.0, 10.5, .nan] {
            #expect(throws: ControlError.self) { try slider.setProminentValues([5, bad]) }
        }
        #expect(slider.prominentValues.isEmpty)
        try slider.setProminentValues([7, 2, 7])
        #expect(slider.prominentValues == [2, 7])
        do {
            try slider.setProminentValues([11])
        } catch {
            #expect(error.code == .prominentValueOutOfRange)
        }
        let discrete = try CaptureSlider("D", symbolName: "s", in: 0...10, step: 2)
        try discrete.setProminentValues([4.9])
        #expect(discrete.prominentValues == [4])
    }

    @Test("ids default to the title in kebab case; explicit ids win")
    func ids() throws {
        #expect(try CaptureSlider("Exposure  Bias", symbolName: "s", in: 0...1).id == "exposure-bias")
        #expect(try CaptureSlider("Blur", symbolName: "s", in: 0...1, id: "b1").id == "b1")
        #expect(ControlID.derived(fromTitle: "   ") == "control")
    }

    @Test("properties: symbol, accessibility id, enabled, hasAction")
    func properties() throws {
        let slider = try CaptureSlider("Blur", symbolName: "drop", in: 0...1)
        #expect(slider.symbolName == "drop")
        #expect(slider.localizedTitle == "Blur")
        #expect(slider.isEnabled)
        #expect(!slider.hasAction)
        slider.accessibilityIdentifier = "blur-slider"
        slider.isEnabled = false
        slider.setActionQueue(InlineExecutor()) { _ in }
        #expect(slider.accessibilityIdentifier == "blur-slider")
        #expect(!slider.isEnabled)
        #expect(slider.hasAction)
        #expect(slider.snapshot.isEnabled == false)
    }

    @Test("programmatic sets notify observers with origin programmatic, never the action")
    func programmaticSet() throws {
        let slider = try CaptureSlider("Blur", symbolName: "s", in: 0...1)
        let actions = Recorder<Double>()
        let changes = Recorder<ValueChange<Double>>()
        slider.setActionQueue(InlineExecutor()) { actions.append($0) }
        slider.observeValueChanges(on: InlineExecutor()) { changes.append($0) }
        try slider.setValue(0.5)
        try slider.setValue(0.5)
        #expect(actions.values.isEmpty)
        #expect(changes.values == [ValueChange(controlID: "blur", value: 0.5, origin: .programmatic)])
    }

    @Test("observers can be removed")
    func removeObserver() throws {
        let slider = try CaptureSlider("Blur", symbolName: "s", in: 0...1)
        let changes = Recorder<Double>()
        let token = slider.observeValueChanges(on: InlineExecutor()) { changes.append($0.value) }
        try slider.setValue(0.1)
        slider.removeObserver(token)
        try slider.setValue(0.2)
        #expect(changes.values == [0.1])
    }

    @Test("the action runs on the given executor, not before it is drained")
    func actionExecutor() throws {
        let delegate = RecordingDelegate()
        let session = try readySession(delegate: delegate)
        let slider = try CaptureSlider("Blur", symbolName: "s", values: [0, 1, 2])
        let executor = ManualExecutor()
        let actions = Recorder<Double>()
        slider.setActionQueue(executor) { actions.append($0) }
        try session.addControl(slider)
        var script = GestureScript()
        script.lightPress()
        script.slide(samples: 1, delta: 0.5)
        for gesture in script.gestures { session.handle(gesture) }
        #expect(slider.value == 1)
        #expect(actions.values.isEmpty)
        #expect(executor.runAll() == 1)
        #expect(actions.values == [1])
    }
}
