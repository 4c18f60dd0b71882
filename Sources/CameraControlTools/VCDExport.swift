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
        var timeline = VCDExport()
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
        let engine = ReplayEngine()
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
        var sawRawSamples = false
        var touchEvents: [Change] = []
        engine.onRawSamples = { batch in
            sawRawSamples = true
            if rawWires.isEmpty, !batch.buttonLevels.isEmpty {
                rawWires = rawBits.map { timeline.signal($0.1) }
            }
            // Samples the device dropped for want of line: what the sensors read there is not known, so the
            // samples' signals are unknown (`x`, `rnan`) from one interval after the last sample seen, not held.
            if batch.droppedBefore > 0, let lastMicros {
                let gap = lastMicros + UInt64(batch.sampleIntervalMicros)
                for wire in [force, slide, touch] + rawWires {
                    timeline.levelChanges.append(Change(micros: gap, signal: wire, value: Self.unknown))
                }
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
                        timeline.levelChanges.append(Change(micros: at, signal: wire, value: levels[index].contains(bit.0) ? 1 : 0))
                    }
                    lastLevels = levels[index]
                }
                if last?.force != record.force { timeline.levelChanges.append(Change(micros: at, signal: force, value: record.force)) }
                if last?.position != record.position {
                    timeline.levelChanges.append(Change(micros: at, signal: slide, value: record.position))
                }
                if last?.touch != record.touch {
                    timeline.levelChanges.append(Change(micros: at, signal: touch, value: record.touch ? 1 : 0))
                }
                last = record
            }
        }
        var gestureSignals: [String: Int] = [:]
        engine.core.observer = { effect in
            switch effect {
            case .input(let event):
                let at = event.timestampMicros
                switch event.kind {
                case .lightPressDown, .lightPressUp:
                    timeline.levelChanges.append(Change(micros: at, signal: light, value: event.kind == .lightPressDown ? 1 : 0))
                case .fullPressDown, .fullPressUp:
                    timeline.levelChanges.append(Change(micros: at, signal: full, value: event.kind == .fullPressDown ? 1 : 0))
                case .buttonDown, .buttonUp:
                    if let wire = buttons[event.source] {
                        timeline.levelChanges.append(Change(micros: at, signal: wire, value: event.kind == .buttonDown ? 1 : 0))
                    }
                case .remoteClick:
                    timeline.pulse(remote, at: at)
                case .touchDown, .touchUp:
                    touchEvents.append(Change(micros: at, signal: touch, value: event.kind == .touchDown ? 1 : 0))
                default: break
                }
            case .gesture(let gesture):
                // The kind's name without its details (`press-ended click 117 ms …` is `press_ended`).
                let kind = EventPrinter.name(gesture.kind).split(separator: " ").first.map(String.init) ?? "gesture"
                let name = kind.replacingOccurrences(of: "-", with: "_")
                let wire = gestureSignals[name] ?? timeline.signal(name, scope: "gestures")
                gestureSignals[name] = wire
                timeline.pulse(wire, at: gesture.timestampMicros)
            default: break
            }
        }
        engine.run(frames)
        if !sawRawSamples {
            timeline.levelChanges += touchEvents
            timeline.removeSignals([force, slide])
        }
        self = timeline
    }

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
            var index = 0
            while index < times.count {
                let time = times[index]
                var count = 0
                while index + count < times.count, times[index + count] == time { count += 1 }
                index += count
                // To the next pulse of the wire (nil: none). A single pulse with more room than its width keeps
                // it; otherwise the pulses and their gaps share the span (ending exactly where the next begins,
                // a pulse would merge with it).
                let gap = index < times.count ? times[index] - time : nil
                let width: UInt64
                if count == 1, gap.map({ $0 > Self.pulseMicros }) ?? true {
                    width = Self.pulseMicros
                } else {
                    width = max(1, min(Self.pulseMicros, gap ?? Self.pulseMicros) / UInt64(2 * count))
                }
                for k in 0..<UInt64(count) {
                    out.append(Change(micros: time + 2 * k * width, signal: signal, value: 1))
                    out.append(Change(micros: time + 2 * k * width + width, signal: signal, value: 0))
                }
            }
        }
        return out
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
        // In time order, and at one time in the order recorded (the standard library's sort is stable): one
        // copy of the changes, not three (an hour at 1 kHz is millions of them).
        var ordered = changes
        ordered.sort { $0.micros < $1.micros }
        let origin = ordered.first?.micros ?? 0
        var out = "$version \(version) $end\n$comment device time starts at \(origin) us $end\n$timescale 1 us $end\n"
        for scope in ["camera_control", "gestures"] where signals.contains(where: { $0.scope == scope }) {
            out += "$scope module \(scope) $end\n"
            for (index, signal) in signals.enumerated() where signal.scope == scope {
                let kind = signal.isReal ? "real 64" : "wire 1"
                out += "$var \(kind) \(Self.code(index)) \(signal.name) $end\n"
            }
            out += "$upscope $end\n"
        }
        // The initial values: 0, or what the first moment sets (one `#0`: some readers want times to rise).
        var current = [UInt32](repeating: 0, count: signals.count)
        var index = 0
        while index < ordered.count, ordered[index].micros == origin {
            current[ordered[index].signal] = ordered[index].value
            index += 1
        }
        out += "$enddefinitions $end\n#0\n$dumpvars\n"
        for (signal, value) in current.enumerated() {
            out += Self.value(value, isReal: signals[signal].isReal) + Self.code(signal) + "\n"
        }
        out += "$end\n"
        while index < ordered.count {
            let time = ordered[index].micros
            var atTime: [Int: UInt32] = [:]
            var order: [Int] = []
            while index < ordered.count, ordered[index].micros == time {
                let change = ordered[index]
                if atTime[change.signal] == nil { order.append(change.signal) }
                atTime[change.signal] = change.value
                index += 1
            }
            let moved = order.filter { atTime[$0] != current[$0] }
            guard !moved.isEmpty else { continue }
            out += "#\(time - origin)\n"
            for signal in moved {
                let value = atTime[signal] ?? 0
                current[signal] = value
                out += Self.value(value, isReal: signals[signal].isReal) + Self.code(signal) + "\n"
            }
        }
        return out
    }
}
