import CameraControlEmbedded
import CameraControlSimulation
import CameraControlWire
import Foundation
import Testing

/// The `expect` grammar and checker (CameraControlSimulation's ``ScenarioScript``) on hand-made runs: each
/// form parses, bad ones name their column, patterns match word by word, windows open at the anchor step's
/// start and close `D` after its end, and the report and JUnit say what failed.
@Suite("Scenario expectations: grammar and checker")
struct ScenarioExpectationsTests {
    static let text = """
        expect counter check_errors 0
        full-click            # 205 ms: land 15, rise 50, hold 80, fall 40, lift 10, off 10
        expect capture ended primary camera-control within 30ms
        expect no gesture long-press-began   # a note
        expect overlay value reactions #2 slider
        pause 100ms
        expect gesture slide-ended camera-control at=0.6±0.02 for 0ms
        expect overlay value zoom 2.0+-0.1
        expect counter frames_sent >=3
        """

    @Test("each form parses; anchors are the step before; durations and comments")
    func parses() throws {
        let script = try ScenarioScript(Self.text)
        #expect(script.timeline.map(\.line) == [2, 6])
        #expect(script.timeline.map(\.durationMicros) == [205_000, 100_000])
        let e = script.expectations
        #expect(e.map(\.line) == [1, 3, 4, 5, 7, 8, 9])
        #expect(e[0].anchor == nil && e[0].subject == .counter(name: "check_errors", comparison: .equal, value: 0))
        #expect(e[1].anchor?.line == 2 && e[1].limitMicros == 30_000)
        #expect(e[1].subject == .event([.word("capture"), .word("ended"), .word("primary"), .word("camera-control")]))
        #expect(e[2].subject == .absence([.word("gesture"), .word("long-press-began")]) && e[2].limitMicros == nil)
        #expect(e[3].subject == .event([.word("overlay"), .word("value"), .word("reactions"), .word("#2"), .word("slider")]))
        #expect(e[4].anchor?.line == 6 && e[4].limitMicros == 0)
        #expect(
            e[4].subject
                == .event([
                    .word("gesture"), .word("slide-ended"), .word("camera-control"), .number(key: "at", value: 0.6, tolerance: 0.02),
                ]))
        #expect(e[5].subject == .event([.word("overlay"), .word("value"), .word("zoom"), .number(key: nil, value: 2, tolerance: 0.1)]))
        #expect(e[6].subject == .counter(name: "frames_sent", comparison: .atLeast, value: 3))
        #expect(ScenarioScript.withoutExpectations(Self.text).split(separator: "\n", omittingEmptySubsequences: false).count == 9)
    }

    @Test(
        "a bad expectation names its line, column and reason",
        arguments: [
            ("expect", 1, "expect needs an event"),
            ("expect gestrue light-press-began", 8, "unknown event kind (did you mean gesture?)"),
            ("expect gesture lite-press-began", 16, "unknown gesture (did you mean light-press-began?)"),
            ("expect capture ended within 3parsecs", 29, "expected a duration such as 30ms after within"),
            ("expect capture ended within", 22, "missing duration after within"),
            ("expect counter chek_errors 0", 16, "unknown counter (did you mean check_errors?)"),
            // No near name: what there is, as for the other words with a fixed set of values.
            ("expect counter nosuch 0", 16, "unknown counter; counters: uptime_us, frames_received, frames_sent, "),
            ("expect counter check_errors lots", 29, "expected a whole number"),
            ("expect counter check_errors 0 within 5ms", 8, "a counter is checked at the end"),
            ("expect overlay value zoom 2±x", 27, "expected a number and tolerance"),
            ("  expect no", 10, "expect no needs an event"),
            // A misspelt word would match no event: `expect no` with it could never fail.
            ("expect no capture endd for 500ms", 19, "unknown capture phase (did you mean ended?)"),
            ("expect capture ended primery", 22, "unknown capture role (did you mean primary?)"),
            ("expect no capture ended secondary volume_up for 500ms", 35, "unknown capture source (did you mean volume-up?)"),
            ("expect gesture press-began volumedown", 28, "unknown gesture source (did you mean volume-down?)"),
            ("expect no overlay valu zoom", 19, "unknown overlay effect (did you mean value?)"),
            ("expect no haptic detnt sent", 18, "unknown haptic pattern (did you mean detent?)"),
            ("expect no haptic detent snt", 25, "unknown haptic outcome (did you mean sent?)"),
            ("expect no firmware-haptic clik", 27, "unknown firmware-haptic pattern (did you mean click?)"),
            ("expect no firmware-sound shuter", 26, "unknown firmware-sound sound (did you mean shutter?)"),
            ("expect no delegate did-becme-active", 20, "unknown delegate call (did you mean did-become-active?)"),
            ("expect no photo one", 17, "a photo's number is a whole number"),
            ("expect no lock lockd", 16, "unknown lock event (did you mean locked?)"),
            // A word past what an event of the kind has, or a limit glued to its number, would match nothing too.
            ("expect no capture ended primary camera-control now", 48, "`now`: no capture event has more than 3 words"),
            ("expect no overlay overlay-hidden zoom", 34, "`zoom`: no overlay event has more than 1 word"),
            ("expect no delegate did-become-active twice", 38, "`twice`: no delegate event has more than 1 word"),
            ("expect no capture ended primary camera-control within30ms", 48, "`within30ms` is one word"),
            ("expect no gesture press-began camera-control for2s", 46, "`for2s` is one word"),
        ])
    func errors(line: String, column: Int, reason: String) {
        #expect {
            _ = try ScenarioScript("full-click\n" + line + "\n")
        } throws: { error in
            guard let error = error as? ScenarioError else { return false }
            return error.line == 2 && error.column == column && error.reason.hasPrefix(reason)
        }
    }

    @Test("a CRLF file's expect and host lines are its LF twin's: none dropped, the same lines, anchors and windows")
    func crlfLines() throws {
        let lf = try ScenarioScript(Self.text + "\nhost format tele\n")
        let crlf = try ScenarioScript((Self.text + "\nhost format tele\n").replacingOccurrences(of: "\n", with: "\r\n"))
        #expect(crlf.expectations.count == 7)
        #expect(crlf.expectations.map(\.line) == lf.expectations.map(\.line))
        #expect(crlf.expectations.map(\.subject) == lf.expectations.map(\.subject))
        #expect(crlf.expectations.map(\.limitMicros) == lf.expectations.map(\.limitMicros))
        #expect(crlf.expectations.map { $0.anchor?.line } == lf.expectations.map { $0.anchor?.line })
        #expect(crlf.hostSteps.map(\.line) == [10] && crlf.hostSteps.map(\.atMicros) == lf.hostSteps.map(\.atMicros))
        #expect(ScenarioScript.withoutExpectations(crlf.text) == ScenarioScript.withoutExpectations(lf.text))
        #expect(ScenarioParser.lines(of: "a\r\nb\n\r\nc") == ["a", "b", "", "c"])
        // A bad expectation in a CRLF file is found, at its own line.
        do {
            _ = try ScenarioScript("full-click\r\nexpect capture endd primary\r\n")
            Issue.record("a bad expectation in a CRLF file parsed")
        } catch {
            #expect(error.line == 2 && error.column == 16 && error.reason.hasPrefix("unknown capture phase"), "\(error)")
        }
    }

    @Test("a press's length, `116ms`, is a number a tolerance matches: `115±3`, `115±3ms`; so `expect no` with one can fail")
    func millisecondsMatch() throws {
        let event = ObservedEvent(micros: 273_000, text: "gesture press-ended camera-control 116ms long")
        for (pattern, matches) in [("115±3", true), ("115±3ms", true), ("115ms±3", true), ("110±3", false), ("110±3ms", false)] {
            let script = try ScenarioScript("full-click\nexpect gesture press-ended camera-control \(pattern)\n")
            guard case .event(let patterns) = script.expectations.first?.subject else {
                Issue.record("no event expectation for \(pattern)")
                continue
            }
            #expect(ScenarioExpectation.matches(patterns, event) == matches, "\(pattern)")
        }
        // A unit no event's number has is refused, not taken for a word that never matches.
        #expect(throws: ScenarioError.self) { try ScenarioScript("full-click\nexpect gesture press-ended camera-control 115±3s\n") }
        // In a run: the click's press lasts 116 ms (seed 1); `expect no` of that length fails, of another passes.
        let script = try ScenarioScript(
            """
            full-click
            expect gesture press-ended camera-control 116±2ms
            expect no gesture press-ended camera-control 116±2
            expect no gesture press-ended camera-control 200±2
            """)
        let results = script.check(try script.runVirtual(seed: 1, settleMicros: 100_000))
        #expect(results.map(\.passed) == [true, false, true], "\(results.map(\.detail))")
    }

    @Test("host lines: an orientation or a camera format, taken when the step before them ends; not the firmware's")
    func hostSteps() throws {
        let script = try ScenarioScript(
            """
            host format tele
            full-click
            host orientation landscape-right   # a note
            pause 100ms
            expect no capture
            host format fixed
            """)
        #expect(script.timeline.map(\.line) == [2, 4])
        #expect(script.hostSteps.map(\.line) == [1, 3, 6])
        #expect(script.hostSteps.map(\.action) == [.format("tele"), .orientation(.landscapeRight), .format("fixed")])
        #expect(script.hostSteps.map(\.atMicros) == [0, 205_000, 305_000])
        #expect(script.hostSteps.map(\.description) == ["host format tele", "host orientation landscape-right", "host format fixed"])
        #expect(script.expectations.map(\.line) == [5])
        #expect(ScenarioScript.isHostSideLine("  host format wide") && ScenarioScript.isHostSideLine("expect no capture"))
        #expect(!ScenarioScript.isHostSideLine("hostile") && !ScenarioScript.isHostSideLine("full-click"))
        // The firmware's parser skips them like comments: the device plays the same steps.
        let device = EmbeddedDevice(seed: 1)
        try device.play(scenario: script.text)
    }

    @Test(
        "a bad host line names its line, column and reason",
        arguments: [
            ("host", 1, "expected host orientation NAME or host format NAME"),
            ("host orientation", 1, "expected host orientation NAME or host format NAME"),
            ("host orientation sideways", 18, "unknown orientation; orientations: portrait, portrait-upside-down"),
            ("host orientation landscape-lft", 18, "unknown orientation (did you mean landscape-left?)"),
            ("host format teel", 13, "unknown camera format (did you mean tele?); formats: wide, tele, fixed"),
            ("host formt tele", 6, "expected host orientation NAME or host format NAME (did you mean format?)"),
            ("host format tele now", 18, "expected host orientation NAME or host format NAME"),
        ])
    func hostErrors(line: String, column: Int, reason: String) {
        #expect {
            _ = try ScenarioScript("full-click\n" + line + "\n")
        } throws: { error in
            guard let error = error as? ScenarioError else { return false }
            return error.line == 2 && error.column == column && error.reason.hasPrefix(reason)
        }
    }

    @Test("the firmware's errors come through with their positions")
    func stepErrors() {
        #expect(throws: ScenarioError(line: 2, column: 1, reason: "unknown step")) {
            _ = try ScenarioScript("expect counter check_errors 0\njump\n")
        }
    }

    /// A run of the text above starting at 100 ms.
    static func run(_ events: [(UInt64, String)], counters: Counters? = Counters(), uncertainty: UInt64 = 0) -> ScenarioRun {
        ScenarioRun(
            events: events.map { ObservedEvent(micros: $0.0 * 1000, text: $0.1) }, counters: counters,
            scenarioStartMicros: 100_000, endMicros: 2_000_000, startUncertaintyMicros: uncertainty)
    }

    /// Over a port the start is bracketed: the scenario began somewhere in the uncertainty after the start
    /// taken. An absence fails only for an event inside its window for every start in that bracket (at 19200
    /// baud a capture that ended 30 ms after the true window had closed failed `expect no capture for 0ms`
    /// behind a `pause 200ms`, the same event that passed the expectation before it).
    @Test("an absence over a bracketed start counts only what is surely inside its window")
    func absenceOverABracketedStart() throws {
        let script = try ScenarioScript("full-click\npause 200ms\nexpect no capture for 0ms\n")
        // The pause is 305 … 505 ms with a start at 100 ms; started up to 100 ms later, surely 405 … 505 ms.
        let late = script.check(Self.run([(350, "capture ended primary camera-control")], uncertainty: 100_000))[0]
        #expect(late.passed && !late.skipped && late.window == 405_000...505_000)
        let inside = script.check(Self.run([(420, "capture ended primary camera-control")], uncertainty: 100_000))[0]
        #expect(!inside.passed && inside.matched?.micros == 420_000)
        // Exact start: the whole pause.
        #expect(!script.check(Self.run([(350, "capture ended primary camera-control")]))[0].passed)
        // Known to less than the window's length: not checked, never a failure.
        let unknown = script.check(Self.run([(420, "capture ended primary camera-control")], uncertainty: 300_000))[0]
        #expect(unknown.passed && unknown.skipped)
        // Known to a little less than the window: a sure sliver of 5 ms would prove nothing; not checked
        // either. Half the window is checked (the first case above).
        let sliver = script.check(Self.run([(300, "capture ended primary camera-control")], uncertainty: 195_000))[0]
        #expect(sliver.passed && sliver.skipped, "\(sliver.detail)")
        // But an event inside that sliver is inside the window for every start: a failure.
        let inSliver = script.check(Self.run([(503, "capture ended primary camera-control")], uncertainty: 195_000))[0]
        #expect(!inSliver.passed && !inSliver.skipped && inSliver.matched?.micros == 503_000, "\(inSliver.detail)")
        #expect(late.detail.contains("every start the bracket allows: 100.0 of its 200.0 ms"), "\(late.detail)")
    }

    @Test("windows: open at the anchor's start, close D after its end; negatives over the same window")
    func windows() throws {
        let script = try ScenarioScript(Self.text)
        let good = Self.run([
            (158, "capture began primary camera-control"), (272, "capture ended primary camera-control"),
            (300, "overlay value reactions #2 slider"), (310, "gesture slide-ended camera-control at=0.61"),
            (320, "overlay value zoom 1.95 slider"),
        ])
        var counters = Counters()
        counters.framesSent = 3
        let results = script.check(
            ScenarioRun(
                events: good.events, counters: counters, scenarioStartMicros: 100_000, endMicros: 2_000_000))
        #expect(results.allSatisfy { $0.passed }, "\(ScenarioTestReport(file: "t", results: results).text)")
        #expect(results[1].window == 100_000...335_000)
        #expect(results[1].matched?.micros == 272_000)
        #expect(results[4].window == 305_000...405_000)

        // Too late (after the full-click's end + 30 ms), outside the pause, a long press, a wrong number.
        let bad = Self.run([
            (340, "capture ended primary camera-control"), (250, "gesture long-press-began camera-control"),
            (250, "gesture slide-ended camera-control at=0.5"), (320, "overlay value zoom 2.2 slider"),
        ])
        let failed = script.check(bad).filter { !$0.passed }.map(\.expectation.line)
        #expect(failed == [3, 4, 5, 7, 8, 9])
        // The start bracketed over a port: windows close that much later.
        #expect(script.check(Self.run([(340, "capture ended primary camera-control")], uncertainty: 10_000))[1].passed)
    }

    @Test("the report prints PASS/FAIL with the events around a failure; JUnit counts and escapes")
    func report() throws {
        let script = try ScenarioScript("full-click\nexpect no capture began\nexpect capture ended primary camera-control\n")
        let events = Self.run([
            (120, "gesture touch-began camera-control"), (158, "capture began primary camera-control"),
            (272, "capture ended primary camera-control"), (280, "photo 1 zoom 1 bias 0 <&\">"),
        ])
        let report = ScenarioTestReport(file: "a.scenario", results: script.check(events), seconds: 0.5)
        #expect(report.failures.count == 1)
        let lines = report.text.split(separator: "\n").map(String.init)
        #expect(
            lines.first
                == "FAIL a.scenario:2 expect no capture began (capture began primary camera-control at 158.0 ms, inside 100.0 … 2000.0 ms)")
        #expect(lines.contains("     > 158.0 ms capture began primary camera-control"))
        #expect(lines.contains("       120.0 ms gesture touch-began camera-control"))
        #expect(lines.contains("PASS a.scenario:3 expect capture ended primary camera-control (at 272.0 ms)"))
        #expect(lines.last == "a.scenario: 1 passed, 1 failed")
        #expect(report.text(onlyFailures: true).contains("PASS") == false)
        let xml = ScenarioTestReport.junit([report])
        #expect(xml.contains("<testsuites name=\"camctl test\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\">"))
        #expect(xml.contains("<testcase classname=\"a.scenario\" name=\"line 3: expect capture ended primary camera-control\"/>"))
        #expect(xml.contains("photo 1 zoom 1 bias 0 &lt;&amp;&quot;&gt;"))
        // A file without expectations checked nothing: said so, not counted as "0 passed, 0 failed".
        let empty = ScenarioTestReport(file: "b.scenario", results: try ScenarioScript("full-click\n").check(events))
        #expect(empty.text == "b.scenario: no expect lines, nothing checked\n")
    }

    @Test("a counter expectation checks what the run added: the counters before the scenario are taken off")
    func countersCountTheRun() throws {
        let script = try ScenarioScript("full-click\nexpect counter check_errors 0\nexpect counter frames_sent >=3\n")
        var before = Counters()
        before.checkErrors = 1  // a damaged frame long before this scenario
        before.framesSent = 400
        before.uptimeMicros = 10_000_000
        var after = before
        after.framesSent = 410
        after.uptimeMicros = 12_000_000
        func run(_ end: Counters, _ start: Counters?) -> ScenarioRun {
            ScenarioRun(
                events: [], counters: end, countersAtStart: start, scenarioStartMicros: 100_000, endMicros: 2_000_000)
        }
        let results = script.check(run(after, before))
        #expect(results.allSatisfy { $0.passed }, "\(results.map(\.detail))")
        #expect(results[1].detail == "frames_sent went up by 10 during the run (400 → 410)")
        // Without the counters at the start, the totals (the old error fails the run).
        #expect(!script.check(run(after, nil))[0].passed)
        // An error during the run fails it; a device that rebooted counts from 0 again.
        after.checkErrors = 2
        #expect(!script.check(run(after, before))[0].passed)
        var rebooted = Counters()  // its uptime went back: every counter counts from 0 again
        rebooted.framesSent = 5
        rebooted.uptimeMicros = 1_000_000
        #expect(script.check(run(rebooted, before))[1].detail == "frames_sent went up by 5 during the run (400 → 5)")
        rebooted.framesSent = 450  // climbed back above its start: still all of it since the reboot
        #expect(script.check(run(rebooted, before))[1].detail == "frames_sent went up by 450 during the run (400 → 450)")
    }

    @Test("every event the tour and the shipped scenarios produce can be expected: its text parses after `expect`")
    func everyObservedEventCanBeExpected() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Firmware-sim/scenarios")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".scenario") }
        #expect(files.count >= 9)
        var kinds = Set<String>()
        for file in files {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            let run = try ScenarioScript(text).runVirtual()
            for event in run.events {
                kinds.insert(String(event.text.split(separator: " ")[0]))
                #expect(throws: Never.self, "\(file): \(event.text)") {
                    _ = try ScenarioScript("pause 10ms\nexpect \(event.text)\nexpect no \(event.text)\n")
                }
            }
        }
        // The kinds the expectations name are all seen (a producer renamed would leave one unseen).
        #expect(
            kinds.isSuperset(of: ["gesture", "capture", "overlay", "action", "delegate", "photo", "video", "lock", "ui", "haptic"]),
            "\(kinds.sorted())")
    }

    @Test("a failure's context says what it leaves out: events of other kinds, and the middle of a long list")
    func contextSaysWhatItOmits() throws {
        let script = try ScenarioScript("full-click\nexpect overlay overlay-shown zoom within 0ms\n")
        // 20 overlay effects and 5 gestures inside the window, none the one expected.
        var events: [(UInt64, String)] = (0..<20).map { (110 + UInt64($0) * 5, "overlay value-changed zoom \($0)") }
        events += (0..<5).map { (112 + UInt64($0) * 5, "gesture slide-changed camera-control") }
        events.sort { $0.0 < $1.0 }
        let result = script.check(Self.run(events))[0]
        #expect(!result.passed)
        let texts = result.context.map(\.text)
        #expect(texts.first == "(5 events of other kinds left out)", "\(texts)")
        #expect(texts.contains("… 8 more events"), "\(texts)")
        #expect(texts.filter { $0.hasPrefix("overlay") }.count == 12, "\(texts)")
        let report = ScenarioTestReport(file: "a.scenario", results: [result]).text
        #expect(report.contains("… 8 more events"), "\(report)")
    }

    @Test("a replay's JUnit: one test case per comparison, a failure with its message, escaped")
    func replayJUnit() {
        let xml = ScenarioTestReport.junit(
            replayOf: "a<b>.pcapng", checks: [("gestures", nil), ("captures", "captures differ at #3 (recorded 6, replayed 5)")])
        #expect(xml.contains("<testsuites name=\"camctl test --replay\" tests=\"2\" failures=\"1\" errors=\"0\">"))
        #expect(xml.contains("<testcase classname=\"a&lt;b&gt;.pcapng\" name=\"gestures\"/>"), "\(xml)")
        #expect(xml.contains("<failure message=\"captures differ at #3 (recorded 6, replayed 5)\"/>"), "\(xml)")
    }

    @Test("over a port: firmware feedback is skipped, never failed; counters not read fail")
    func portRuns() throws {
        let script = try ScenarioScript("full-click\nexpect firmware-haptic click\nexpect counter check_errors 0\n")
        var run = Self.run([], counters: nil)
        run.seesFirmwareFeedback = false
        let results = script.check(run)
        #expect(results[0].skipped && results[0].passed)
        #expect(!results[1].passed && results[1].detail == "the counters were not read")
        #expect(ScenarioTestReport(file: "p", results: results).text.contains("SKIP p:2 expect firmware-haptic click"))
    }
}
