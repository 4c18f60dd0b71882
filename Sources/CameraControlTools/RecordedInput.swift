import CameraControlGestures
import CameraControlHost
import CameraControlWire

/// The input a recording holds, sample by sample, for replaying it into the simulator's firmware
/// (`camctl test --replay`, docs/SIMULATOR.md "Replay"): the raw samples' force, slide position, touch and
/// the buttons' raw levels (bounce included; from a device that does not send them, the levels its debounced
/// `BUTTON_DOWN`/`BUTTON_UP` events give), and its remote clicks.
package struct RecordedInput: Sendable {
    /// One sample: device time, and what the sensors and buttons read.
    package struct Sample: Hashable, Sendable {
        /// Device time of the sample, microseconds.
        package var micros: UInt64
        /// The force before the firmware's low-pass filter (``unfiltered(_:intervalMicros:times:)``), millinewtons.
        package var forceMillinewtons: Int32
        /// Slide position, strip counts.
        package var position: UInt32
        /// Touched.
        package var touched: Bool
        /// Buttons held (`CC_BUTTON_*` bits: 1 volume up, 2 volume down, 4 action, 8 the full-press switch).
        package var buttons: UInt32
        /// Remote clicks since the previous sample.
        package var remoteClicks: UInt32
    }

    /// The samples in time order.
    package var samples: [Sample] = []
    /// The gestures the host recognised replaying the recording, `kind source` (what a replay into the
    /// firmware should give again).
    package var gestures: [String] = []
    /// The capture events the host delivered replaying it, `phase source` (`ended volume-up`).
    package var captures: [String] = []
    /// Raw samples the device dropped for want of line (the batches' `dropped_before`): the recording has a
    /// gap there, which a replay holds the sample before through.
    package var lostSamples = 0
    /// Where a recording read by ``init(path:)`` is cut short (a recorder killed, a copy interrupted): the
    /// input is then its whole frames before the cut, and a caller that used them reports this after.
    package var truncation: RecordingError?

    /// The button bit of an input source (0 for the Camera Control itself and the remote).
    static func buttonBit(_ source: InputSource) -> UInt32 {
        switch source {
        case .volumeUp: 1
        case .volumeDown: 2
        case .actionButton: 4
        default: 0
        }
    }

    /// The input of a recording of `camctl record` (which keeps the raw-sample stream unless `--no-raw`).
    ///
    /// The buttons come from the raw samples' levels (`RawSampleBatch.button_levels`) when any batch carries
    /// them; otherwise (a device that does not send them) from the debounced button events, shifted by the
    /// debounce and without the contacts' bounce.
    package init(recording frames: [RecordedFrame]) {
        self.init(replaying: { $0.run(frames) })
    }

    /// The input a replay (`run`, given the engine) of a recording gives: raw samples as they come, held in
    /// the form ``samples`` keeps (not as frames or batches), then put in time order and completed in place.
    private init<Failure: Error>(replaying run: (ReplayEngine) throws(Failure) -> Void) throws(Failure) {
        // The filtered force (bit pattern) and the raw levels wait in `forceMillinewtons` and `buttons`
        // until the samples are in time order.
        var raw: [Sample] = []
        var rawLevelsSeen = false
        var edges: [(micros: UInt64, bit: UInt32, down: Bool)] = []
        var clicks: [UInt64] = []
        var gestures: [String] = []
        var captures: [String] = []
        var lost = 0
        let engine = ReplayEngine()
        engine.onCapture = { event, _ in captures.append("\(event.phase.rawValue) \(event.source)") }
        engine.onRawSamples = { batch in
            lost += Int(batch.droppedBefore)
            if !batch.buttonLevels.isEmpty { rawLevelsSeen = true }
            let levels = batch.decodedButtonLevels
            for (index, record) in batch.records.enumerated() {
                raw.append(
                    Sample(
                        micros: batch.firstTimestampMicros + UInt64(index) * UInt64(batch.sampleIntervalMicros),
                        forceMillinewtons: Int32(bitPattern: record.force), position: record.position, touched: record.touch,
                        buttons: index < levels.count ? UInt32(levels[index].rawValue) : 0, remoteClicks: 0))
            }
        }
        engine.core.observer = { effect in
            switch effect {
            case .input(let event) where event.kind == .buttonDown || event.kind == .buttonUp:
                let bit = Self.buttonBit(event.source)
                if bit != 0 { edges.append((event.timestampMicros, bit, event.kind == .buttonDown)) }
            case .input(let event) where event.kind == .remoteClick:
                clicks.append(event.timestampMicros)
            case .gesture(let gesture):
                gestures.append(Self.name(gesture))
            default: break
            }
        }
        try run(engine)
        raw.sort { $0.micros < $1.micros }
        edges.sort { $0.micros < $1.micros }
        clicks.sort()
        let interval = raw.count > 1 ? raw[1].micros - raw[0].micros : 1_000
        var filter = Unfiltering(intervalMicros: interval)
        var buttons: UInt32 = 0
        var edge = 0
        var click = 0
        for index in raw.indices {
            let micros = raw[index].micros
            raw[index].forceMillinewtons = filter.next(
                UInt32(bitPattern: raw[index].forceMillinewtons), afterGap: index > 0 && micros - raw[index - 1].micros > interval * 3 / 2)
            if !rawLevelsSeen {
                while edge < edges.count, edges[edge].micros <= micros {
                    buttons = edges[edge].down ? buttons | edges[edge].bit : buttons & ~edges[edge].bit
                    edge += 1
                }
                raw[index].buttons = buttons
            }
            var remote: UInt32 = 0
            while click < clicks.count, clicks[click] <= micros {
                remote += 1
                click += 1
            }
            raw[index].remoteClicks = remote
        }
        self.samples = raw
        self.gestures = gestures
        self.captures = captures
        self.lostSamples = lost
    }

    /// The input of the recording `passes` reads, read as a stream (``RecordingPasses/replay(into:)``):
    /// what is held is ``samples`` and the events, not the recording's frames.
    package init(recording passes: RecordingPasses) throws(RecordingError) {
        try self.init(replaying: { engine throws(RecordingError) in try passes.replay(into: engine) })
        truncation = passes.truncation
    }

    /// The input of the file at `path`: a CSV trace (a name ending `.csv` or `.txt`, ``init(csv:name:slideResolution:)``)
    /// or a recording of `camctl record` (``init(recording:)``). This is how both replays read a file:
    /// `camctl test --replay` and, through `camctl export --samples`, `camctl-sim --replay`.
    ///
    /// A recording cut short gives the whole frames before the cut, and ``truncation`` says where it is.
    ///
    /// - Throws: ``RecordingError`` (or the reader's error) for a file that cannot be read, is not a recording, or
    ///   holds no raw samples (before its cut: then the cut is the error).
    package init(path: String) throws {
        if path.hasSuffix(".csv") || path.hasSuffix(".txt") {
            let bytes = try BoundedFiles.read(path, maxBytes: PcapngReader.maxFileBytes, what: "a CSV trace")
            try self.init(csv: String(decoding: bytes, as: UTF8.self), name: path)
        } else {
            try self.init(recording: RecordingPasses(path: path))
        }
        guard !samples.isEmpty else {
            throw truncation ?? RecordingError(description: "\(path) has no raw samples (record it without --no-raw)")
        }
    }

    /// The first line of ``sampleFile()``: camctl-sim checks it before it reads a sample.
    package static let sampleFileHeader = "# camctl-sim replay samples v1: t_us force_mn position touched buttons remote_clicks"

    /// The samples as the replay sample file `camctl-sim --replay` reads (docs/SIMULATOR.md, "Replay"): the
    /// header line, then one line per sample of six decimal integers separated by one space, the time in
    /// microseconds from the first sample, the applied force (mN), the strip position (counts, 0…65535), touch
    /// (0, 1), the `CC_BUTTON_*` levels (0…15) and the remote clicks (0…255) delivered with it.
    package func sampleFile() -> String {
        let origin = samples.first?.micros ?? 0
        var text = Self.sampleFileHeader + "\n"
        text.reserveCapacity(text.utf8.count + samples.count * 24)
        for sample in samples {
            let fields = [
                String(sample.micros - origin), String(sample.forceMillinewtons), String(min(sample.position, 65_535)),
                sample.touched ? "1" : "0", String(sample.buttons & 15), String(min(sample.remoteClicks, 255)),
            ]
            text += fields.joined(separator: " ") + "\n"
        }
        return text
    }

    /// A trace from another tool: text lines `time_us,force_mn,position,touch[,buttons[,remote_clicks]]`
    /// (commas, spaces or tabs; `#` starts a comment), the force as applied (not filtered), the position
    /// 0…1 along the strip, touch 0 or 1, the buttons as `CC_BUTTON_*` bits (1 volume up, 2 volume down, 4
    /// action, 8 the Camera Control's full-press switch). It holds no gestures or captures to compare with.
    ///
    /// - Throws: ``RecordingError`` naming the first bad line; times must not go back.
    package init(csv text: String, name: String, slideResolution: UInt32 = 1024) throws(RecordingError) {
        var last: UInt64 = 0
        // Lines end at LF or CRLF (one `Character` to Swift, so `split(separator: "\n")` would miss it).
        for (number, line) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .enumerated()
        {
            let fields = line.prefix { $0 != "#" }.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" || $0 == "\r" })
            if fields.isEmpty { continue }
            func bad(_ why: String) -> RecordingError {
                RecordingError(
                    description: "\(name):\(number + 1): \(why); want `time_us,force_mn,position,touch[,buttons[,remote_clicks]]`")
            }
            guard (4...6).contains(fields.count) else {
                throw bad("\(fields.count) fields in '\(StandardStreams.visible(line.prefix(80)))'")
            }
            guard let time = UInt64(fields[0]) else {
                // A header such as the format's own field names is no sample.
                throw bad(
                    "time_us '\(StandardStreams.visible(fields[0].prefix(20)))' is not a whole number of µs (a header line? a trace has none)"
                )
            }
            guard let force = Int32(fields[1]) else {
                throw bad("force_mn '\(StandardStreams.visible(fields[1].prefix(20)))' is not a whole number of mN")
            }
            guard let position = Double(fields[2]), position >= 0, position <= 1 else {
                throw bad("position '\(StandardStreams.visible(fields[2].prefix(20)))' is not a number from 0 to 1")
            }
            guard let touch = UInt8(fields[3]), touch <= 1 else {
                throw bad("touch '\(StandardStreams.visible(fields[3].prefix(20)))' is not 0 or 1")
            }
            let buttons = fields.count > 4 ? UInt32(fields[4]) : 0
            let clicks = fields.count > 5 ? UInt32(fields[5]) : 0
            guard let buttons, buttons < 16, let clicks, clicks <= 100 else { throw bad("buttons 0…15, remote clicks 0…100") }
            guard time >= last else { throw bad("time goes back") }
            last = time
            samples.append(
                Sample(
                    micros: time, forceMillinewtons: force,
                    position: UInt32((position * Double(slideResolution - 1)).rounded()), touched: touch == 1,
                    buttons: buttons, remoteClicks: clicks))
        }
        guard !samples.isEmpty else { throw RecordingError(description: "\(name): no samples") }
    }

    /// The forces before the firmware's force filter, from the filtered ones raw samples carry.
    ///
    /// Raw samples carry the conditioned force: tared and through the single-pole low-pass
    /// `y += (x − y) / 2^k` (docs/SIMULATOR.md §1: k = 3 at 1 kHz, 2 at 500 Hz, 1 at 250 Hz, 0 at 100 Hz).
    /// Replayed as they are, the firmware would filter them twice (about 8 ms more lag, enough to put a
    /// light press's end after the touch's). Inverting the filter, `x = y₋₁ + 2^k (y − y₋₁)`, gives back
    /// the force it was fed, up to the rounding of the recorded millinewtons times 2^k.
    ///
    /// The filter's state before the first sample is not in the recording, nor after a gap (a sample more than
    /// one and a half intervals after the one before it in `times`: samples the device dropped for want of
    /// line, ``lostSamples``): there the force is taken as it is, a filter at rest (`x = y`). Inverted across
    /// a gap, the whole jump was multiplied by 2^k (a spike of several newtons the board never saw), and from
    /// an assumed 0 the first sample was 2^k times itself.
    package static func unfiltered(_ forces: [UInt32], intervalMicros: UInt64, times: [UInt64] = []) -> [Int32] {
        var filter = Unfiltering(intervalMicros: intervalMicros)
        return forces.enumerated().map { index, force in
            filter.next(force, afterGap: index > 0 && index < times.count && times[index] - times[index - 1] > intervalMicros * 3 / 2)
        }
    }

    /// ``unfiltered(_:intervalMicros:times:)`` one sample at a time.
    struct Unfiltering {
        let shift: Int64
        var previous: Int64?

        init(intervalMicros: UInt64) {
            switch intervalMicros {
            case 10_000...: shift = 0
            case 4_000...: shift = 1
            case 2_000...: shift = 2
            default: shift = 3
            }
        }

        /// The force fed to the filter that gave `force`; after a gap, the filter is taken at rest.
        mutating func next(_ force: UInt32, afterGap: Bool) -> Int32 {
            let y = Int64(force)
            if afterGap { previous = nil }
            defer { previous = y }
            guard let previous else { return Int32(clamping: y) }
            return Int32(clamping: previous + (y - previous) << shift)
        }
    }

    /// A gesture as `kind source` (`press-ended camera-control`), without its details.
    package static func name(_ gesture: Gesture) -> String {
        let kind = EventPrinter.name(gesture.kind).split(separator: " ").first.map(String.init) ?? "gesture"
        return "\(kind) \(gesture.source)"
    }

    /// Gesture names (``name(_:)``) as a replay compares them: without `slide-changed`. The device sends
    /// slide moves best-effort and coalesces them when its line is busy (latest wins), so a live session
    /// shows a few fewer than the same samples replayed (57 against 59 in one recording of
    /// `zoom-slide.scenario`), and a move may fall on the other side of a press event (one `choose-control`
    /// session had one after a light press began, its replay before). Where slides begin and end, and
    /// everything else, must match; ``slideMoves(_:)`` counts the moves of each slide.
    package static func comparable(_ gestures: [String]) -> [String] {
        gestures.filter { !$0.hasPrefix("slide-changed ") }
    }

    /// Whether a replayed slide has too few moves against the recorded one: fewer by more than 2 or a
    /// tenth of them. The counts differ by a move or two either way (the slide interval's
    /// timer falls on other samples: 27 replayed against 28 recorded in one `light-press-slide` session),
    /// and the live device drops more when its line is busy; a replay that lost most of a slide is wrong.
    package static func lostMoves(recorded: Int, replayed: Int) -> Bool {
        replayed + max(2, recorded / 10) < recorded
    }

    /// The number of `slide-changed` of each slide in `gestures`, in order (a slide starts at its
    /// `slide-began`; moves before the first count for a slide 0). ``lostMoves(recorded:replayed:)`` compares
    /// them.
    package static func slideMoves(_ gestures: [String]) -> [Int] {
        var moves: [Int] = []
        for gesture in gestures {
            if gesture.hasPrefix("slide-began ") {
                moves.append(0)
            } else if gesture.hasPrefix("slide-changed ") {
                if moves.isEmpty { moves.append(0) }
                moves[moves.count - 1] += 1
            }
        }
        return moves
    }
}
