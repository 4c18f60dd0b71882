import CameraControlTestSupport
import CameraControlWire
import Foundation
import Testing

@testable import CameraControlTools

/// What a replay takes from a recording (`RecordedInput`, docs/SIMULATOR.md "Replay"): the buttons' raw
/// levels when the raw samples carry them, the debounced events' levels when they do not.
@Suite struct RecordedInputTests {
    /// A session: the handshake, an event stream (call 3) and a raw stream (call 5) opened, then `batches` on
    /// the raw stream and `events` on the event stream, in time order.
    static func session(batches: [RawSampleBatch], events: [InputEvent]) throws -> [RecordedFrame] {
        var frames: [RecordedFrame] = []
        var sequence: UInt16 = 0
        func device(_ type: PacketType, _ callID: UInt32, _ payload: [UInt8], at micros: UInt64) throws {
            sequence += 1
            let packet = Packet(type: type, isReliable: type != .streamMessage, sequence: sequence, callID: callID, payload: payload)
            frames.append(try DecodeTests.frame(packet, .fromDevice, at: micros))
        }
        func request(_ method: MethodID, _ callID: UInt32, at micros: UInt64) throws {
            let packet = Packet(type: .request, isReliable: true, sequence: UInt16(callID), callID: callID, address: method)
            frames.append(try DecodeTests.frame(packet, .toDevice, at: micros))
        }
        try request(.deviceHandshake, 1, at: 0)
        let capabilities = Capabilities(
            hasForceSensor: true, hasTouchSensor: true, hasSlideStrip: true, buttons: [.volumeUp, .volumeDown],
            slideResolution: 1024, sampleRatesHertz: [1_000])
        try device(.response, 1, HandshakeResponse(capabilities: capabilities).serializedBytes(), at: 100)
        try request(.inputStreamInputEvents, 3, at: 200)
        try request(.inputStreamRawSamples, 5, at: 300)
        for batch in batches {
            try device(.streamMessage, 5, batch.serializedBytes(), at: batch.firstTimestampMicros + 30_000)
        }
        for event in events {
            try device(.streamMessage, 3, event.serializedBytes(), at: event.timestampMicros + 500)
        }
        return frames.sorted { $0.timeMicros < $1.timeMicros }
    }

    /// Two batches of 25 samples at 1 kHz from 10 ms, the strip untouched, and volume up's raw level per sample.
    static func batches(volumeUp: (Int) -> Bool) -> [RawSampleBatch] {
        (0..<2).map { batch in
            let indices = (batch * 25)..<(batch * 25 + 25)
            return RawSampleBatch(
                firstTimestampMicros: 10_000 + UInt64(indices.lowerBound) * 1_000, sampleIntervalMicros: 1_000,
                samples: indices.map { _ in RawSample(forceMillinewtons: 0, position: 0, isTouched: false) }, deltaCoded: true,
                buttons: indices.map { volumeUp($0) ? .volumeUp : [] })
        }
    }

    @Test("a recording's input is read from its file as a stream: a block and a few frames held, the input the same as from its frames")
    func streamedFromFile() throws {
        // 100 s at 1 kHz in 4 000 batches of 4-byte records (some 600 KB), presses between them.
        let batches = (0..<4_000).map { (batch: Int) -> RawSampleBatch in
            let samples = (0..<25).map { (index: Int) -> RawSample in
                RawSample(forceMillinewtons: UInt16((batch * 25 + index) % 3_000), position: 512, isTouched: index > 5)
            }
            let levels: [RawButtonLevels] = (0..<25).map { $0 < 12 ? .volumeUp : [] }
            return RawSampleBatch(
                firstTimestampMicros: 10_000 + UInt64(batch) * 25_000, sampleIntervalMicros: 1_000, samples: samples,
                deltaCoded: false, buttons: levels)
        }
        var events: [InputEvent] = []
        for press in 0..<100 {
            let at = 20_000 + UInt64(press) * 1_000_000
            events.append(
                InputEvent(
                    timestampMicros: at, kind: .lightPressDown, source: .cameraControl, eventNumber: UInt32(2 * press + 1),
                    reliableEventNumber: UInt32(2 * press + 1)))
            events.append(
                InputEvent(
                    timestampMicros: at + 90_000, kind: .lightPressUp, source: .cameraControl, eventNumber: UInt32(2 * press + 2),
                    reliableEventNumber: UInt32(2 * press + 2)))
        }
        let frames = try Self.session(batches: batches, events: events)
        // Written with neighbours swapped: a little out of time order, as two threads of a recorder leave it.
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/long.pcapng"
        let writer = try PcapngWriter(path: path, interfaceName: "test")
        for pair in stride(from: 0, to: frames.count, by: 2) {
            if pair + 1 < frames.count { writer.write(frames[pair + 1]) }
            writer.write(frames[pair])
        }
        writer.close()
        let passes = try RecordingPasses(path: path)
        let streamed = try RecordedInput(recording: passes)
        let held = RecordedInput(recording: frames)
        #expect(streamed.samples.count == 100_000)
        #expect(streamed.samples == held.samples)
        #expect(streamed.gestures == held.gestures && streamed.gestures.count > 100)
        #expect(passes.mostHeld <= 8, "frames held back for order: \(passes.mostHeld)")
        #expect(passes.mostBuffered < 128 * 1024, "bytes held by the reader: \(passes.mostBuffered)")
    }

    @Test("a replay compares gestures without slide-changed, and each slide's moves from below: a live device coalesces them")
    func slideMovesComparedApart() {
        let live = [
            "touch-began camera-control", "slide-began camera-control", "slide-changed camera-control",
            "light-press-began camera-control", "slide-changed camera-control", "slide-ended camera-control",
            "press-began camera-control",
        ]
        // The replay: one move more, and one on the other side of the light press.
        let replayed = [
            "touch-began camera-control", "slide-began camera-control", "slide-changed camera-control",
            "slide-changed camera-control", "light-press-began camera-control", "slide-changed camera-control",
            "slide-ended camera-control", "press-began camera-control",
        ]
        #expect(RecordedInput.comparable(live) == RecordedInput.comparable(replayed))
        #expect(RecordedInput.comparable(live).count == 5)
        // A slide that ended and began again is not one slide; a missing slide-ended is not forgiven.
        #expect(RecordedInput.slideMoves(["slide-changed x", "slide-began x", "slide-changed x", "slide-changed x"]) == [1, 2])
        #expect(RecordedInput.comparable(Array(live.dropLast(2))) != RecordedInput.comparable(Array(replayed.dropLast(1))))
        #expect(RecordedInput.slideMoves(live) == [2] && RecordedInput.slideMoves(replayed) == [3])
        // A replay may show a move or two fewer (the slide interval falls on other samples), not most fewer.
        #expect(!RecordedInput.lostMoves(recorded: 28, replayed: 27) && !RecordedInput.lostMoves(recorded: 57, replayed: 59))
        #expect(!RecordedInput.lostMoves(recorded: 40, replayed: 36) && RecordedInput.lostMoves(recorded: 40, replayed: 35))
        #expect(RecordedInput.lostMoves(recorded: 59, replayed: 1) && RecordedInput.lostMoves(recorded: 3, replayed: 0))
    }

    @Test("a recording whose raw samples carry the buttons' levels replays them sample for sample, bounce included")
    func rawLevelsWin() throws {
        // Down at sample 5 with chatter (6 up, 7 down), held across the batch boundary, up at 40.
        let pressed = { (i: Int) in i >= 5 && i < 40 && i != 6 }
        // The debounced events a device sends for it (5 ms after the last bounce): these must not be used.
        let events = [
            InputEvent(timestampMicros: 22_000, kind: .buttonDown, source: .volumeUp, eventNumber: 1, reliableEventNumber: 1),
            InputEvent(timestampMicros: 55_000, kind: .buttonUp, source: .volumeUp, eventNumber: 2, reliableEventNumber: 2),
        ]
        let input = RecordedInput(recording: try Self.session(batches: Self.batches(volumeUp: pressed), events: events))
        #expect(input.samples.count == 50)
        for (index, sample) in input.samples.enumerated() {
            #expect(sample.micros == 10_000 + UInt64(index) * 1_000)
            #expect(sample.buttons == (pressed(index) ? 1 : 0), "sample \(index): buttons \(sample.buttons)")
        }
        #expect(input.sampleFile().contains("\n5000 0 0 0 1 0\n6000 0 0 0 0 0\n7000 0 0 0 1 0\n"))
    }

    @Test("from a device that sends no raw levels, the buttons are the debounced events' levels")
    func eventsWithoutRawLevels() throws {
        let events = [
            InputEvent(timestampMicros: 22_000, kind: .buttonDown, source: .volumeUp, eventNumber: 1, reliableEventNumber: 1),
            InputEvent(timestampMicros: 45_000, kind: .buttonUp, source: .volumeUp, eventNumber: 2, reliableEventNumber: 2),
        ]
        let input = RecordedInput(recording: try Self.session(batches: Self.batches { _ in false }, events: events))
        #expect(input.samples.count == 50)
        for sample in input.samples {
            let held = sample.micros >= 22_000 && sample.micros < 45_000
            #expect(sample.buttons == (held ? 1 : 0), "at \(sample.micros) µs: buttons \(sample.buttons)")
        }
    }

    @Test("samples the device dropped are counted, and the force filter is not inverted across their gap nor from 0")
    func gapsInTheRawSamples() throws {
        func batch(at micros: UInt64, force: UInt16, dropped: UInt32) -> RawSampleBatch {
            var batch = RawSampleBatch(
                firstTimestampMicros: micros, sampleIntervalMicros: 1_000,
                samples: (0..<25).map { _ in RawSample(forceMillinewtons: force, position: 0, isTouched: true) }, deltaCoded: true,
                buttons: (0..<25).map { _ in [] })
            batch.droppedBefore = dropped
            return batch
        }
        // 25 samples at 1000 mN; 50 dropped for want of line; 25 at 3000 mN.
        let frames = try Self.session(
            batches: [batch(at: 10_000, force: 1_000, dropped: 0), batch(at: 85_000, force: 3_000, dropped: 50)], events: [])
        let input = RecordedInput(recording: frames)
        #expect(input.lostSamples == 50)
        #expect(input.samples.count == 50)
        // A filter at rest at the start and after the gap: the force as it is, not 2^3 times it, nor
        // 1000 + 8 × 2000 = 17000 mN at the gap.
        #expect(input.samples.map(\.forceMillinewtons) == Array(repeating: 1_000, count: 25) + Array(repeating: 3_000, count: 25))
        // Without a gap the filter is inverted: a step of 2000 mN is 8 × 2000 above the sample before.
        #expect(
            RecordedInput.unfiltered([1_000, 1_000, 3_000], intervalMicros: 1_000, times: [0, 1_000, 2_000]) == [1_000, 1_000, 17_000])
        #expect(
            RecordedInput.unfiltered([1_000, 1_000, 3_000], intervalMicros: 1_000, times: [0, 1_000, 60_000]) == [1_000, 1_000, 3_000])
    }

    @Test("a CSV trace with CRLF line ends (RFC 4180's, a Windows tool's) reads as its LF twin, line by line")
    func csvWithCRLF() throws {
        let lf = "# t,f,p,touch\n0,100,0.5,1\n1000,900,0.25,1,1\n2000,0,0,0,0,2\n"
        let crlf = lf.replacingOccurrences(of: "\n", with: "\r\n")
        let input = try RecordedInput(csv: crlf, name: "t.csv")
        #expect(input.samples.count == 3)
        #expect(input.samples == (try RecordedInput(csv: lf, name: "t.csv")).samples)
        // Its bad line is named by its own number.
        #expect {
            _ = try RecordedInput(csv: "0,100,0.5,1\r\n1000,abc,0.5,1\r\n", name: "t.csv")
        } throws: { error in
            (error as? RecordingError)?.description.hasPrefix("t.csv:2: force_mn 'abc'") == true
        }
    }

    @Test("a CSV trace's bad line is quoted with its control bytes escaped: the terminal shows them, obeys none")
    func csvErrorsEscapeControlBytes() {
        for (line, says) in [
            ("0,\u{1B}[2J,0.5,1", "t.csv:1: force_mn '\\x1B[2J' is not a whole number of mN"),
            ("0,100,0.5,1,0,0,\u{1B}]0;title\u{7}", "t.csv:1: 7 fields in '0,100,0.5,1,0,0,\\x1B]0;title\\x07'"),
        ] {
            #expect {
                _ = try RecordedInput(csv: line + "\n", name: "t.csv")
            } throws: { error in
                (error as? RecordingError)?.description.hasPrefix(says) == true
            }
        }
        #expect(StandardStreams.visible("a\tb\u{0}\u{9B}é\n") == "a\tb\\x00\\x9Bé\\x0A")
    }

    @Test(
        "a CSV trace's bad line says which field is wrong and how",
        arguments: [
            ("time_us,force_mn,position,touch", "t.csv:1: time_us 'time_us' is not a whole number of µs (a header line? a trace has none)"),
            ("0,abc,0.5,1", "t.csv:1: force_mn 'abc' is not a whole number of mN"),
            ("0,100,1.5,1", "t.csv:1: position '1.5' is not a number from 0 to 1"),
            ("0,100,0.5,2", "t.csv:1: touch '2' is not 0 or 1"),
            ("0,100,0.5", "t.csv:1: 3 fields in '0,100,0.5'"),
            ("0,100,0.5,1,99", "t.csv:1: buttons 0…15, remote clicks 0…100"),
        ])
    func csvErrors(line: String, says: String) {
        #expect {
            _ = try RecordedInput(csv: line + "\n", name: "t.csv")
        } throws: { error in
            (error as? RecordingError)?.description.hasPrefix(says) == true
        }
    }
}
