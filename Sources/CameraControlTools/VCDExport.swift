import CameraControlGestures
import CameraControlHost
import CameraControlWire

/// A recording as a Value Change Dump (IEEE 1364 §18) for logic-analyzer tools (PulseView, GTKWave,
/// `sigrok-cli -I vcd`): `camctl export FILE.pcapng --vcd OUT.vcd` (docs/SIMULATOR.md, "Timelines").
///
/// ```
/// $timescale 1 us $end
/// $scope module camera_control $end
/// $var real 64 A force_mn $end             raw samples (reals: GTKWave and PulseView draw them as analog)
/// $var real 64 B slide $end
/// $var wire 1 C touch $end                  raw samples' touch bit
/// $var wire 1 D light_press $end            the firmware's stages (input events)
/// $var wire 1 E full_press $end
/// $var wire 1 F volume_up $end              debounced button levels (input events)
/// …
/// $var wire 1 K volume_up_raw $end          the buttons' raw levels (raw samples, v1.2 button_levels),
/// …                                         bounce included; only when the recording carries them
/// $scope module gestures $end               one pulse (1 ms) per recognised gesture, a wire per kind
/// ```
///
/// Times are device microseconds from the recording's first change. Single-bit wires are what
/// libsigrok 0.5's VCD input reads; it skips `real` variables (and loses its way on bit vectors, so the
/// numbers are reals).
package struct VCDExport {
    /// One change of one signal.
    package struct Change: Hashable, Sendable {
        /// Device time, microseconds.
        package var micros: UInt64
        /// The signal's index in ``signals``.
        package var signal: Int
        /// The new value.
        package var value: UInt32
    }

    /// A signal: its name, whether it is a number or a wire, and the scope it sits in.
    package struct Signal: Hashable, Sendable {
        /// The wire's name (`force_mn`, `touch`, `double_light_press`).
        package var name: String
        /// True for a number (`real`), false for a logic wire.
        package var isReal: Bool
        /// `camera_control` or `gestures`.
        package var scope: String
    }

    /// The signals, in declaration order.
    package private(set) var signals: [Signal] = []
    /// Every change of a level, in the order recorded.
    private var levelChanges: [Change] = []
    /// Every pulse: its signal and its start, in the order recorded.
    private var pulses: [(signal: Int, micros: UInt64)] = []

    /// Every change, in the order recorded: the levels', then the pulses' (``pulseChanges``).
    package var changes: [Change] { levelChanges + pulseChanges }

    /// The value of a signal not known (written `x` for a wire, `rnan` for a number): where the recording lost
    /// raw samples.
    package static let unknown = UInt32.max

    /// How long a gesture's pulse lasts, microseconds.
    package static let pulseMicros: UInt64 = 1_000

    /// An empty timeline.
    package init() {}

    /// The timeline of a recording: raw samples (force, slide, touch, and the buttons' raw levels when the
    /// device sends them), the firmware's press stages and debounced button levels from its input events, and
    /// the gestures the host pipeline recognises replaying it. A recording without raw samples (`camctl
    /// record --no-raw`) has no `force_mn` and no `slide` (no values to give, rather than a flat 0) and its
    /// `touch` from the `TOUCH_DOWN`/`TOUCH_UP` events.
    package init(recording frames: [RecordedFrame]) {
        var levels: [Change] = []
        var touchEvents: [Change] = []
        var pulses: [(signal: Int, micros: UInt64)] = []
        let replay = TimelineReplay { item in
            switch item {
            case .level(let change): levels.append(change)
            case .touchEvent(let change): touchEvents.append(change)
            case .pulse(let signal, let micros): pulses.append((signal, micros))
            }
        }
        replay.engine.run(frames)
        var timeline = replay.timeline
        timeline.levelChanges = levels
        timeline.pulses = pulses
        if !replay.sawRawSamples {
            timeline.levelChanges += touchEvents
            timeline.removeSignals([0, 1])
        }
        self = timeline
    }

    /// What a replay makes of a recording, in the order it makes it.
    enum Item {
        /// A level's change (raw samples, stages, debounced buttons).
        case level(Change)
        /// A `TOUCH_DOWN`/`TOUCH_UP` event: the touch of a recording without raw samples.
        case touchEvent(Change)
        /// A pulse's start.
        case pulse(signal: Int, micros: UInt64)
    }

    /// The replay that makes a recording's timeline: a ``ReplayEngine`` whose observers declare the signals
    /// into ``timeline`` (force_mn and slide first, indices 0 and 1, removed when ``sawRawSamples`` stays
    /// false) and hand each change to `emit` as it comes. The same frames give the same declarations and
    /// items every time, so a first pass can learn the signals and a second write the changes.
    final class TimelineReplay {
        let engine = ReplayEngine()
        /// The signals declared so far (no changes).
        var timeline = VCDExport()
        /// Whether any raw sample came.
        var sawRawSamples = false

        init(emit: @escaping (Item) -> Void) {
            let force = timeline.signal("force_mn", isReal: true)
            let slide = timeline.signal("slide", isReal: true)
            let touch = timeline.signal("touch")
            let light = timeline.signal("light_press")
            let full = timeline.signal("full_press")
            var buttons: [InputSource: Int] = [:]
            for source in [InputSource.volumeUp, .volumeDown, .actionButton] {
                buttons[source] = timeline.signal(source.description.replacingOccurrences(of: "-", with: "_"))
            }
            let remote = timeline.signal("remote_click")
            var last: (force: UInt32, position: UInt32, touch: Bool)?
            // The raw button wires, declared at the first batch that carries levels (a device before them sends none).
            let rawBits: [(RawButtonLevels, String)] = [
                (.volumeUp, "volume_up_raw"), (.volumeDown, "volume_down_raw"), (.actionButton, "action_button_raw"),
                (.shutterSwitch, "shutter_switch_raw"),
            ]
            var rawWires: [Int] = []
            // nil: not known (before the first levels, after samples the device dropped).
            var lastLevels: RawButtonLevels? = RawButtonLevels()
            var lastMicros: UInt64?
            let level = { (micros: UInt64, signal: Int, value: UInt32) in
                emit(.level(Change(micros: micros, signal: signal, value: value)))
            }
            let pulse = { (signal: Int, micros: UInt64) in emit(.pulse(signal: signal, micros: micros)) }
            engine.onRawSamples = { [unowned self] batch in
                sawRawSamples = true
                if rawWires.isEmpty, !batch.buttonLevels.isEmpty {
                    rawWires = rawBits.map { self.timeline.signal($0.1) }
                }
                // Samples the device dropped for want of line: what the sensors read there is not known, so the
                // samples' signals are unknown (`x`, `rnan`) from one interval after the last sample seen, not held.
                if batch.droppedBefore > 0, let lastMicros {
                    let gap = lastMicros + UInt64(batch.sampleIntervalMicros)
                    for wire in [force, slide, touch] + rawWires { level(gap, wire, VCDExport.unknown) }
                    last = nil
                    lastLevels = nil
                }
                let levels = rawWires.isEmpty ? [] : batch.decodedButtonLevels
                for (index, record) in batch.records.enumerated() {
                    let at = batch.firstTimestampMicros + UInt64(index) * UInt64(batch.sampleIntervalMicros)
                    lastMicros = at
                    if index < levels.count, levels[index] != lastLevels {
                        for (wire, bit) in zip(rawWires, rawBits)
                        where lastLevels.map({ levels[index].contains(bit.0) != $0.contains(bit.0) }) ?? true {
                            level(at, wire, levels[index].contains(bit.0) ? 1 : 0)
                        }
                        lastLevels = levels[index]
                    }
                    if last?.force != record.force { level(at, force, record.force) }
                    if last?.position != record.position { level(at, slide, record.position) }
                    if last?.touch != record.touch { level(at, touch, record.touch ? 1 : 0) }
                    last = record
                }
            }
            var gestureSignals: [String: Int] = [:]
            engine.core.observer = { [unowned self] effect in
                switch effect {
                case .input(let event):
                    let at = event.timestampMicros
                    switch event.kind {
                    case .lightPressDown, .lightPressUp:
                        level(at, light, event.kind == .lightPressDown ? 1 : 0)
                    case .fullPressDown, .fullPressUp:
                        level(at, full, event.kind == .fullPressDown ? 1 : 0)
                    case .buttonDown, .buttonUp:
                        if let wire = buttons[event.source] { level(at, wire, event.kind == .buttonDown ? 1 : 0) }
                    case .remoteClick:
                        pulse(remote, at)
                    case .touchDown, .touchUp:
                        emit(.touchEvent(Change(micros: at, signal: touch, value: event.kind == .touchDown ? 1 : 0)))
                    default: break
                    }
                case .gesture(let gesture):
                    // The kind's name without its details (`press-ended click 117 ms …` is `press_ended`).
                    let kind = EventPrinter.name(gesture.kind).split(separator: " ").first.map(String.init) ?? "gesture"
                    let name = kind.replacingOccurrences(of: "-", with: "_")
                    let wire = gestureSignals[name] ?? self.timeline.signal(name, scope: "gestures")
                    gestureSignals[name] = wire
                    pulse(wire, gesture.timestampMicros)
                default: break
                }
            }
        }
    }

    /// Writes the VCD of the recording `passes` reads, as ``init(recording:)`` then ``text(version:)`` would
    /// (byte for byte), in `chunk`s of about ``chunkBytes`` as it goes: memory stays a few chunks and the
    /// changes of a moment, whatever the recording's length.
    ///
    /// It reads the recording twice more after the pass that checked it: once for the signals (the header
    /// comes first, and a gesture's wire is declared where the gesture first comes) and for how far the
    /// changes come out of time order (raw samples come in batches after the events of their time), once to
    /// write the changes, holding only those within that span until no earlier one can come. A recording
    /// whose device time goes back (the device restarted mid-recording) holds the changes since then.
    ///
    /// Returns the number of signals and of changes, as ``signals`` and ``changes`` count them.
    ///
    /// - Throws: the reader's ``RecordingError``, and one when the passes do not agree (the file changed
    ///   between them).
    package static func write(
        recording passes: RecordingPasses, version: String = "camctl export", chunk: @escaping (String) -> Void
    ) throws(RecordingError) -> (signals: Int, changes: Int) {
        // First pass: the signals, and the most a change comes after a later one.
        var latest: UInt64 = 0
        var lateness: UInt64 = 0
        var pulses = 0
        let survey = TimelineReplay { item in
            let micros: UInt64
            switch item {
            case .level(let change), .touchEvent(let change): micros = change.micros
            case .pulse(_, let at):
                micros = at
                pulses += 1
            }
            latest = max(latest, micros)
            lateness = max(lateness, latest - micros)
        }
        try passes.replay(into: survey.engine)
        var layout = survey.timeline
        let sawRaw = survey.sawRawSamples
        if !sawRaw { layout.removeSignals([0, 1]) }
        // Without raw samples force_mn and slide are gone: the other signals move down two.
        let shift = sawRaw ? 0 : 2
        var writer = Writer(signals: layout.signals, lateness: lateness, version: version, chunk: chunk)
        var changes = 0
        // A signal the first pass did not declare (the recording changed between the passes) is not written.
        var strays = 0
        let declared = layout.signals.count
        let replay = TimelineReplay { item in
            let signal: Int
            switch item {
            case .level(let change), .touchEvent(let change): signal = change.signal - shift
            case .pulse(let wire, _): signal = wire - shift
            }
            guard (0..<declared).contains(signal) else {
                strays += 1
                return
            }
            switch item {
            case .level(let change):
                changes += 1
                writer.add(Change(micros: change.micros, signal: change.signal - shift, value: change.value), order: 0)
            case .touchEvent(let change):
                guard !sawRaw else { return }
                changes += 1
                writer.add(Change(micros: change.micros, signal: change.signal - shift, value: change.value), order: 1)
            case .pulse(let signal, let micros):
                changes += 2
                writer.pulse(signal - shift, at: micros)
            }
        }
        try passes.replay(into: replay.engine)
        writer.finish()
        guard strays == 0, replay.timeline.signals.count == survey.timeline.signals.count else {
            throw RecordingError(description: "the recording changed while it was read: its passes do not agree")
        }
        return (layout.signals.count, changes)
    }

    /// The size of the text ``write(recording:version:chunk:)`` hands on at a time, bytes.
    package static let chunkBytes = 64 * 1024

    /// Removes the signals at `indices` and their changes; the others keep their order.
    package mutating func removeSignals(_ indices: Set<Int>) {
        var newIndex: [Int: Int] = [:]
        var kept: [Signal] = []
        for (index, signal) in signals.enumerated() where !indices.contains(index) {
            newIndex[index] = kept.count
            kept.append(signal)
        }
        signals = kept
        levelChanges = levelChanges.compactMap { change in
            newIndex[change.signal].map { Change(micros: change.micros, signal: $0, value: change.value) }
        }
        pulses = pulses.compactMap { pulse in newIndex[pulse.signal].map { ($0, pulse.micros) } }
    }

    /// Declares a signal; returns its index. A name already declared (in any scope) gets its scope as a
    /// suffix: viewers such as sigrok list channels by name alone, so the device's `remote_click` input
    /// and the `remote_click` gesture would be two channels of one name.
    @discardableResult
    package mutating func signal(_ name: String, isReal: Bool = false, scope: String = "camera_control") -> Int {
        let taken = signals.contains { $0.name == name }
        signals.append(Signal(name: taken ? "\(name)_\(scope)" : name, isReal: isReal, scope: scope))
        return signals.count - 1
    }

    /// `signal` becomes `value` at `micros`.
    package mutating func change(_ signal: Int, to value: UInt32, at micros: UInt64) {
        levelChanges.append(Change(micros: micros, signal: signal, value: value))
    }

    /// A 1 on `signal` at `micros` for ``pulseMicros``, or shorter where pulses of its wire crowd it
    /// (``pulseChanges``): one pulse per call, each with a rising edge of its own.
    package mutating func pulse(_ signal: Int, at micros: UInt64) {
        pulses.append((signal, micros))
    }

    /// The pulses as changes, so that a viewer counting rising edges counts every pulse: a pulse lasts
    /// ``pulseMicros`` unless the next pulse of its wire comes sooner, and then ends halfway to it (events
    /// one sample apart would otherwise merge into one longer pulse); `n` pulses at one time (three remote
    /// clicks read in one sample) are `n` pulses of equal width and gap within that span.
    var pulseChanges: [Change] {
        var out: [Change] = []
        for signal in Set(pulses.map(\.signal)).sorted() {
            let times = pulses.filter { $0.signal == signal }.map(\.micros).sorted()
            Self.takePulseRuns(times) { time, count, gap in
                for (micros, value) in Self.pulseEdges(at: time, count: count, gap: gap) {
                    out.append(Change(micros: micros, signal: signal, value: value))
                }
            }
        }
        return out
    }

    /// Takes the runs of equal start times of one wire's sorted pulses, from the first, while `more` holds for
    /// a run's time: `body` gets the time, the number of pulses in the run and the gap to the next run (nil:
    /// none). Returns how many times were taken.
    @discardableResult
    static func takePulseRuns(
        _ times: [UInt64], while more: (UInt64) -> Bool = { _ in true }, _ body: (UInt64, Int, UInt64?) -> Void
    ) -> Int {
        var used = 0
        while used < times.count, more(times[used]) {
            let time = times[used]
            var count = 0
            while used + count < times.count, times[used + count] == time { count += 1 }
            used += count
            body(time, count, used < times.count ? times[used] - time : nil)
        }
        return used
    }

    /// The edges of `count` pulses of one wire at `time`, the wire's next pulse `gap` later (nil: none). A
    /// single pulse with more room than its width keeps it; otherwise the pulses and their gaps share the
    /// span (ending exactly where the next begins, a pulse would merge with it).
    static func pulseEdges(at time: UInt64, count: Int, gap: UInt64?) -> [(micros: UInt64, value: UInt32)] {
        let width: UInt64
        if count == 1, gap.map({ $0 > pulseMicros }) ?? true {
            width = pulseMicros
        } else {
            width = max(1, min(pulseMicros, gap ?? pulseMicros) / UInt64(2 * count))
        }
        var edges: [(micros: UInt64, value: UInt32)] = []
        for k in 0..<UInt64(count) {
            edges.append((time + 2 * k * width, 1))
            edges.append((time + 2 * k * width + width, 0))
        }
        return edges
    }

    /// Identifier characters: letters and digits (VCD allows any printable ASCII, but some readers take
    /// `#` for a time and `$` for a keyword).
    static let codeCharacters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    /// The identifier code of signal `index`: one character, two past 62 signals, and so on.
    static func code(_ index: Int) -> String {
        var index = index
        var code = ""
        repeat {
            code.append(codeCharacters[index % codeCharacters.count])
            index = index / codeCharacters.count - 1
        } while index >= 0
        return code
    }

    /// A value as VCD writes it: `0`/`1` for a wire, `r1234 ` for a real (then the code); ``unknown`` as `x`
    /// and `rnan `.
    static func value(_ value: UInt32, isReal: Bool) -> String {
        guard isReal else { return value == unknown ? "x" : value == 0 ? "0" : "1" }
        return value == unknown ? "rnan " : "r\(value) "
    }

    /// The VCD text: the header, every signal at 0 at the first change's time, then the changes in time
    /// order (at one time, the last change of a signal wins), times relative to the first change.
    package func text(version: String = "camctl export") -> String {
        var out = ""
        var writer = Writer(signals: signals, lateness: .max, version: version) { out += $0 }
        for change in levelChanges { writer.add(change, order: 0) }
        for pulse in pulses { writer.pulse(pulse.signal, at: pulse.micros) }
        writer.finish()
        return out
    }

    /// Writes a VCD from changes given nearly in time order: each is held until no change still to come
    /// can be earlier (`lateness`: the most a change may come after a later one), then written in time
    /// order, and at one time in the order of ``text(version:)``: the levels in the order given (`order`
    /// 0 before 1), then the pulses' edges by signal. The header goes before the first moment, whose
    /// values are the `$dumpvars`; text goes to `chunk` about ``chunkBytes`` at a time.
    struct Writer {
        /// A change waiting for its turn.
        struct Pending: Comparable {
            var micros: UInt64
            var order: UInt8
            var sequence: UInt64
            var signal: Int
            var value: UInt32
            static func < (a: Pending, b: Pending) -> Bool { (a.micros, a.order, a.sequence) < (b.micros, b.order, b.sequence) }
            static func == (a: Pending, b: Pending) -> Bool { (a.micros, a.order, a.sequence) == (b.micros, b.order, b.sequence) }
        }

        let signals: [Signal]
        let lateness: UInt64
        let version: String
        let chunk: (String) -> Void
        private var out = ""
        private var pending = MinHeap<Pending>()
        /// Pulse starts not yet made edges, by signal, in time order.
        private var pulseStarts: [Int: [UInt64]] = [:]
        private var sequence: UInt64 = 0
        private var latest: UInt64 = 0
        private var current: [UInt32]
        private var origin: UInt64?

        init(signals: [Signal], lateness: UInt64, version: String, chunk: @escaping (String) -> Void) {
            self.signals = signals
            self.lateness = lateness
            self.version = version
            self.chunk = chunk
            current = [UInt32](repeating: 0, count: signals.count)
        }

        /// The time before which every change has come.
        private var horizon: UInt64 { latest > lateness ? latest - lateness : 0 }

        /// A level's change; `order` 1 goes after the 0s of its time.
        mutating func add(_ change: Change, order: UInt8) {
            sequence += 1
            pending.push(Pending(micros: change.micros, order: order, sequence: sequence, signal: change.signal, value: change.value))
            latest = max(latest, change.micros)
            release(through: horizon)
        }

        /// A pulse starting at `micros` (``VCDExport/pulse(_:at:)``).
        mutating func pulse(_ signal: Int, at micros: UInt64) {
            var times = pulseStarts[signal] ?? []
            var index = times.count
            while index > 0, times[index - 1] > micros { index -= 1 }
            times.insert(micros, at: index)
            pulseStarts[signal] = times
            latest = max(latest, micros)
            release(through: horizon)
        }

        /// Writes everything still held, and hands on the rest of the text.
        mutating func finish() {
            release(through: nil)
            if origin == nil { header(origin: 0) }
            if !out.isEmpty { chunk(out) }
            out = ""
        }

        /// Turns the pulses whose edges are known into changes, then writes every moment before `horizon`
        /// (nil: all) that no pulse still to be made can reach.
        private mutating func release(through horizon: UInt64?) {
            var firstOpenPulse = UInt64.max
            // (In any order of signals: the pending changes' order puts them in place.)
            for (signal, held) in pulseStarts {
                var times = held
                // A pulse's width needs the next pulse of its wire within ``pulseMicros``: known once the
                // horizon is past that.
                let used = VCDExport.takePulseRuns(
                    times, while: { time in horizon.map { time < $0 && $0 - time > VCDExport.pulseMicros } ?? true }
                ) { time, count, gap in
                    for (micros, value) in VCDExport.pulseEdges(at: time, count: count, gap: gap) {
                        pending.push(Pending(micros: micros, order: 2, sequence: UInt64(signal), signal: signal, value: value))
                    }
                }
                times.removeFirst(used)
                if let open = times.first { firstOpenPulse = min(firstOpenPulse, open) }
                pulseStarts[signal] = times.isEmpty ? nil : times
            }
            let limit = min(horizon ?? .max, firstOpenPulse)
            while let first = pending.first, horizon == nil && firstOpenPulse == .max || first.micros < limit {
                let time = first.micros
                var moment: [Pending] = []
                while let next = pending.first, next.micros == time { moment.append(pending.pop()!) }
                write(moment)
            }
        }

        /// Writes one moment's changes (the header first, with the first moment as its `$dumpvars`).
        private mutating func write(_ moment: [Pending]) {
            guard let origin else {
                for change in moment { current[change.signal] = change.value }
                header(origin: moment[0].micros)
                return
            }
            // Each signal once, where it first changes at this time, with its last value (a moment holds a
            // few changes: a list beats a dictionary).
            var order: [(signal: Int, value: UInt32)] = []
            for change in moment {
                if let index = order.firstIndex(where: { $0.signal == change.signal }) {
                    order[index].value = change.value
                } else {
                    order.append((change.signal, change.value))
                }
            }
            let moved = order.filter { $0.value != current[$0.signal] }
            guard !moved.isEmpty else { return }
            out += "#\(moment[0].micros - origin)\n"
            for (signal, value) in moved {
                current[signal] = value
                out += VCDExport.value(value, isReal: signals[signal].isReal) + VCDExport.code(signal) + "\n"
            }
            if out.utf8.count >= VCDExport.chunkBytes {
                chunk(out)
                out = ""
            }
        }

        /// The header, and the values at `origin` (``current``) as the `$dumpvars`.
        private mutating func header(origin: UInt64) {
            self.origin = origin
            out += "$version \(version) $end\n$comment device time starts at \(origin) us $end\n$timescale 1 us $end\n"
            for scope in ["camera_control", "gestures"] where signals.contains(where: { $0.scope == scope }) {
                out += "$scope module \(scope) $end\n"
                for (index, signal) in signals.enumerated() where signal.scope == scope {
                    let kind = signal.isReal ? "real 64" : "wire 1"
                    out += "$var \(kind) \(VCDExport.code(index)) \(signal.name) $end\n"
                }
                out += "$upscope $end\n"
            }
            out += "$enddefinitions $end\n#0\n$dumpvars\n"
            for (signal, value) in current.enumerated() {
                out += VCDExport.value(value, isReal: signals[signal].isReal) + VCDExport.code(signal) + "\n"
            }
            out += "$end\n"
        }
    }
}
