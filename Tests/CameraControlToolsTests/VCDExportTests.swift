import CameraControlWire
import Testing

@testable import CameraControlTools

/// The VCD writer: the header declares every signal once, the first moment's values go into `$dumpvars`,
/// times rise from 0, a signal changed twice at one time keeps the last value, unchanged values are not
/// repeated, identifiers stay letters and digits however many signals there are.
@Suite("VCD export")
struct VCDExportTests {
    @Test("header, initial values, rising times, last change wins, no repeats")
    func textShape() {
        var timeline = VCDExport()
        let force = timeline.signal("force_mn", isReal: true)
        let touch = timeline.signal("touch")
        let pulse = timeline.signal("double_light_press", scope: "gestures")
        timeline.change(touch, to: 1, at: 5_000)
        timeline.change(force, to: 150, at: 5_000)
        timeline.change(force, to: 150, at: 6_000)  // no change: not written
        timeline.change(force, to: 900, at: 7_000)
        timeline.change(force, to: 1_200, at: 7_000)  // the last at one time wins
        timeline.pulse(pulse, at: 8_000)
        let lines = timeline.text().split(separator: "\n").map(String.init)
        #expect(lines.contains("$timescale 1 us $end"))
        #expect(lines.contains("$var real 64 A force_mn $end"))
        #expect(lines.contains("$var wire 1 B touch $end"))
        #expect(lines.contains("$scope module gestures $end") && lines.contains("$var wire 1 C double_light_press $end"))
        let body = Array(lines.drop { $0 != "$enddefinitions $end" }.dropFirst())
        #expect(body == ["#0", "$dumpvars", "r150 A", "1B", "0C", "$end", "#2000", "r1200 A", "#3000", "1C", "#4000", "0C"])
    }

    @Test("every pulse has its own rising edge: one sample apart they do not merge, n at one time are n within the 1 ms")
    func pulsesStayApart() {
        var timeline = VCDExport()
        let click = timeline.signal("remote_click")
        let other = timeline.signal("press_began", scope: "gestures")
        for _ in 0..<3 { timeline.pulse(click, at: 10_000) }  // three clicks read in one sample
        timeline.pulse(click, at: 20_000)
        timeline.pulse(click, at: 21_000)  // the next sample
        timeline.pulse(click, at: 40_000)
        timeline.pulse(other, at: 10_000)
        let text = timeline.text()
        // Rising edges per wire, as a logic analyzer counts them.
        var level: [String: Character] = [:]
        var rises: [String: [Int]] = [:]
        var time = 0
        for line in text.split(separator: "\n").drop(while: { $0 != "$enddefinitions $end" }) {
            if line.hasPrefix("#") { time = Int(line.dropFirst()) ?? -1 }
            guard let bit = line.first, bit == "0" || bit == "1", line.count == 2 else { continue }
            let code = String(line.dropFirst())
            if bit == "1", level[code] != "1" { rises[code, default: []].append(time) }
            level[code] = bit
        }
        #expect(rises["A"] == [0, 332, 664, 10_000, 11_000, 30_000], "\(text)")
        #expect(rises["B"] == [0])
        // Each pulse has ended before the next one of its wire: the changes of A alternate 1, 0.
        let a = timeline.changes.filter { $0.signal == click }.sorted { $0.micros < $1.micros }
        #expect(a.map(\.value) == Array(repeating: [UInt32(1), 0], count: 6).flatMap { $0 })
        #expect(a.suffix(2).map(\.micros) == [40_000, 41_000])  // room after it: the whole 1 ms
    }

    @Test("a name declared again in another scope gets the scope as a suffix: channel names stay unique")
    func namesUnique() {
        var timeline = VCDExport()
        timeline.signal("remote_click")
        timeline.signal("remote_click", scope: "gestures")
        timeline.signal("click", scope: "gestures")
        #expect(timeline.signals.map(\.name) == ["remote_click", "remote_click_gestures", "click"])
        #expect(timeline.text().contains("$var wire 1 B remote_click_gestures $end"))
    }

    @Test("identifiers are letters and digits, unique past 62 signals")
    func identifiers() {
        let codes = (0..<5_000).map(VCDExport.code)
        #expect(Set(codes).count == codes.count)
        #expect(codes.allSatisfy { $0.allSatisfy { $0.isLetter || $0.isNumber } })
        #expect(VCDExport.code(0) == "A" && VCDExport.code(61) == "9" && VCDExport.code(62) == "AA")
    }

    @Test("a recording without raw samples (--no-raw) has no force or slide, not a flat 0, and touch from its events")
    func withoutRawSamples() throws {
        let events = [
            InputEvent(timestampMicros: 20_000, kind: .touchDown, source: .cameraControl, eventNumber: 1),
            InputEvent(timestampMicros: 31_000, kind: .lightPressDown, source: .cameraControl, eventNumber: 2, reliableEventNumber: 1),
            InputEvent(timestampMicros: 150_000, kind: .lightPressUp, source: .cameraControl, eventNumber: 3, reliableEventNumber: 2),
            InputEvent(timestampMicros: 170_000, kind: .touchUp, source: .cameraControl, eventNumber: 4),
        ]
        let timeline = VCDExport(recording: try RecordedInputTests.session(batches: [], events: events))
        let names = timeline.signals.map(\.name)
        #expect(!names.contains("force_mn") && !names.contains("slide"), "\(names)")
        let touch = try #require(names.firstIndex(of: "touch"))
        let light = try #require(names.firstIndex(of: "light_press"))
        #expect(timeline.changes.filter { $0.signal == touch }.map { [$0.micros, UInt64($0.value)] } == [[20_000, 1], [170_000, 0]])
        #expect(timeline.changes.filter { $0.signal == light }.map { [$0.micros, UInt64($0.value)] } == [[31_000, 1], [150_000, 0]])
        #expect(!timeline.text().contains("real"))
        // With raw samples, the numbers are there and touch is the samples' bit.
        let sampled = VCDExport(
            recording: try RecordedInputTests.session(batches: RecordedInputTests.batches { _ in false }, events: events))
        #expect(sampled.signals.prefix(3).map(\.name) == ["force_mn", "slide", "touch"])
        #expect(sampled.changes.filter { $0.signal == 2 }.map(\.value) == [0])
    }

    @Test("samples the device dropped are unknown in the dump (x, rnan) from one interval after the last one seen, not held")
    func lostSamplesAreUnknown() throws {
        func batch(at micros: UInt64, force: UInt16, touched: Bool, dropped: UInt32) -> RawSampleBatch {
            var batch = RawSampleBatch(
                firstTimestampMicros: micros, sampleIntervalMicros: 1_000,
                samples: (0..<25).map { _ in RawSample(forceMillinewtons: force, position: 512, isTouched: touched) },
                deltaCoded: true, buttons: (0..<25).map { _ in touched ? .volumeUp : [] })
            batch.droppedBefore = dropped
            return batch
        }
        // 25 samples touched at 1000 mN, volume up held (10…34 ms); 50 dropped (35…84 ms); 25 untouched at
        // 0 mN, nothing held (85…109 ms).
        let frames = try RecordedInputTests.session(
            batches: [
                batch(at: 10_000, force: 1_000, touched: true, dropped: 0), batch(at: 85_000, force: 0, touched: false, dropped: 50),
            ],
            events: [])
        let timeline = VCDExport(recording: frames)
        let names = timeline.signals.map(\.name)
        for name in ["force_mn", "slide", "touch", "volume_up_raw"] {
            let signal = try #require(names.firstIndex(of: name))
            let changes = timeline.changes.filter { $0.signal == signal }.map { [$0.micros, UInt64($0.value)] }
            #expect(changes.contains([35_000, UInt64(VCDExport.unknown)]), "\(name): \(changes)")
            #expect(changes.last?.first == 85_000, "\(name): known again at the next sample: \(changes)")
        }
        let text = timeline.text()
        #expect(text.contains("#25000\nrnan A\nrnan B\nxC\n"), "\(text)")
        #expect(text.contains("#75000\n0J\n0K\n0L\n0M\nr0 A\nr512 B\n0C\n"), "\(text)")
    }

    @Test("the export streams: its first text is written before the last frame is read, in chunks, the same text as text()")
    func writesAsItReads() throws {
        // 10 s at 1 kHz, the force changing every sample; a press every 200 ms (events come before the batch
        // of their samples: out of time order in the file, as from a device).
        let batches = (0..<400).map { batch in
            RawSampleBatch(
                firstTimestampMicros: 10_000 + UInt64(batch) * 25_000, sampleIntervalMicros: 1_000,
                samples: (0..<25).map { RawSample(forceMillinewtons: UInt16((batch * 25 + $0) % 3_000), position: 512, isTouched: true) },
                deltaCoded: true, buttons: (0..<25).map { $0 < 12 ? .volumeUp : [] })
        }
        var events: [InputEvent] = []
        for press in 0..<50 {
            let at = 20_000 + UInt64(press) * 200_000
            events.append(InputEvent(timestampMicros: at, kind: .touchDown, source: .cameraControl, eventNumber: UInt32(4 * press + 1)))
            events.append(
                InputEvent(
                    timestampMicros: at + 20_000, kind: .lightPressDown, source: .cameraControl, eventNumber: UInt32(4 * press + 2),
                    reliableEventNumber: UInt32(2 * press + 1)))
            events.append(
                InputEvent(
                    timestampMicros: at + 90_000, kind: .lightPressUp, source: .cameraControl, eventNumber: UInt32(4 * press + 3),
                    reliableEventNumber: UInt32(2 * press + 2)))
            events.append(
                InputEvent(timestampMicros: at + 120_000, kind: .touchUp, source: .cameraControl, eventNumber: UInt32(4 * press + 4)))
        }
        for (withRaw, frames) in [
            (true, try RecordedInputTests.session(batches: batches, events: events)),
            (false, try RecordedInputTests.session(batches: [], events: events)),
        ] {
            let passes = RecordingPasses(frames: frames)
            var chunks: [(bytes: Int, pass: Int, framesRead: Int)] = []
            var text = ""
            let counts = try VCDExport.write(recording: passes) { chunk in
                chunks.append((chunk.utf8.count, passes.passes, passes.framesReadInPass))
                text += chunk
            }
            let timeline = VCDExport(recording: frames)
            #expect(text == timeline.text(), "raw samples: \(withRaw)")
            #expect(counts.signals == timeline.signals.count && counts.changes == timeline.changes.count)
            #expect(timeline.signals.contains { $0.scope == "gestures" }, "gestures recognised")
            guard withRaw else { continue }
            // Written while the recording is read (its last pass), not after it, and a chunk at a time.
            #expect(chunks.count >= 3, "\(chunks.map(\.bytes))")
            #expect(chunks[0].pass == passes.passes && chunks[0].framesRead < frames.count, "\(chunks[0])")
            #expect(chunks.allSatisfy { $0.bytes < VCDExport.chunkBytes + 1_024 }, "\(chunks.map(\.bytes))")
        }
    }

    @Test("an empty recording is a valid empty dump")
    func empty() {
        let text = VCDExport(recording: []).text()
        #expect(text.contains("$enddefinitions $end\n#0\n$dumpvars\n"))
        #expect(text.hasSuffix("$end\n"))
    }
}
