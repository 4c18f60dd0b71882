import CameraAppExample
import CameraControlCapture
import CameraControlControls
import CameraControlEmbedded
import CameraControlWire

/// One `expect` line of a scenario file: what the host pipeline must (or must not) produce, and by when
/// (docs/SIMULATOR.md, "Expectations").
///
/// ```
/// full-click
/// expect capture ended primary camera-control within 30ms
/// expect no gesture long-press-began
/// expect overlay value zoom 2.0±0.1
/// expect counter check_errors 0
/// ```
///
/// An expectation belongs to the step before it (its anchor; before any step, the scenario's start). Its
/// window opens when the anchor step starts; `within D` (or `for D`) closes it `D` after the anchor step
/// ends, and without either it stays open to the end of the run.
public struct ScenarioExpectation: Hashable, Sendable, CustomStringConvertible {
    /// What is expected.
    public enum Subject: Hashable, Sendable {
        /// An event matching the patterns happens in the window.
        case event([Pattern])
        /// No event matching the patterns happens in the window.
        case absence([Pattern])
        /// What the run added to a firmware counter (`GetCounters`, schema name: its value at the end less
        /// its value when the scenario started) compared with a value.
        case counter(name: String, comparison: Comparison, value: UInt64)
    }

    /// How a counter compares with the expected value.
    public enum Comparison: String, Hashable, Sendable, CaseIterable {
        /// `<=N`
        case atMost = "<="
        /// `>=N`
        case atLeast = ">="
        /// `<N`
        case less = "<"
        /// `>N`
        case greater = ">"
        /// `N`
        case equal = ""

        func holds(_ actual: UInt64, _ expected: UInt64) -> Bool {
            switch self {
            case .atMost: actual <= expected
            case .atLeast: actual >= expected
            case .less: actual < expected
            case .greater: actual > expected
            case .equal: actual == expected
            }
        }
    }

    /// One word of an event pattern; a pattern matches an event whose first words match it word by word.
    public enum Pattern: Hashable, Sendable {
        /// Exactly this word.
        case word(String)
        /// `*`: any one word.
        case any
        /// `V±T` (or `V+-T`), optionally `key=V±T`: a number within `tolerance` of `value`, bare or in
        /// milliseconds (a press's `116ms`: `115±3` and `115±3ms` match it).
        case number(key: String?, value: Double, tolerance: Double)

        func matches(_ word: Substring) -> Bool {
            switch self {
            case .word(let expected): return word == expected
            case .any: return true
            case .number(let key, let value, let tolerance):
                var rest = word
                if let key {
                    guard rest.hasPrefix(key + "=") else { return false }
                    rest = rest.dropFirst(key.count + 1)
                }
                // A number, or one in milliseconds (`press-ended camera-control 116ms`).
                guard let number = Double(rest) ?? (rest.hasSuffix("ms") ? Double(rest.dropLast(2)) : nil) else { return false }
                return abs(number - value) <= tolerance + 1e-9
            }
        }
    }

    /// What is expected.
    public var subject: Subject
    /// `within D` / `for D`, microseconds after the anchor step ends; nil: to the end of the run.
    public var limitMicros: UInt64?
    /// The 1-based line in the scenario text.
    public var line: Int
    /// The line after `expect`, trimmed (how reports name the expectation).
    public var text: String
    /// The step it follows; nil before the first step.
    public var anchor: ScenarioParser.TimedStep?

    /// Whether it is about an event only the simulator's own log shows (`firmware-…`).
    public var isAboutFirmwareFeedback: Bool {
        switch subject {
        case .event(let patterns), .absence(let patterns):
            if case .word(let kind) = patterns.first { return kind.hasPrefix("firmware-") }
            return false
        case .counter: return false
        }
    }

    /// `expect <text>`.
    public var description: String { "expect \(text)" }

    /// Whether `event` matches a pattern.
    public static func matches(_ patterns: [Pattern], _ event: ObservedEvent) -> Bool {
        let words = event.text.split(separator: " ")
        guard words.count >= patterns.count else { return false }
        return zip(patterns, words).allSatisfy { $0.matches($1) }
    }
}

/// Something the host pipeline produced, at a device time: `gesture double-light-press camera-control`,
/// `capture ended primary camera-control`, `overlay value zoom 2 slider`, … (docs/SIMULATOR.md, "Expectations").
public struct ObservedEvent: Hashable, Sendable, CustomStringConvertible {
    /// Device time, microseconds.
    public var micros: UInt64
    /// The event's words.
    public var text: String

    /// An event.
    public init(micros: UInt64, text: String) {
        self.micros = micros
        self.text = text
    }

    /// `<ms with one decimal> ms <text>`.
    public var description: String { "\(ScenarioScript.milliseconds(micros)) ms \(text)" }
}

/// One `host` line of a scenario file: a step the host takes while the firmware plays the others
/// (docs/SIMULATOR.md, "Host steps"), when the step before it ends (before any step: at the scenario's start).
///
/// ```
/// host orientation landscape-right
/// host format tele
/// ```
public struct ScenarioHostStep: Hashable, Sendable, CustomStringConvertible {
    /// What the host does.
    public enum Action: Hashable, Sendable {
        /// The app's interface orientation changes (`CameraControlHost.setInterfaceOrientation(_:)`).
        case orientation(InterfaceOrientation)
        /// The camera's active format changes to the one of this name (the example app's
        /// `CameraApp.cameraFormats`): the system sliders re-range.
        case format(String)
    }

    /// What the host does.
    public var action: Action
    /// The line in the scenario text (1-based).
    public var line: Int
    /// When, microseconds from the scenario's start: the end of the step before the line (0 before any step).
    public var atMicros: UInt64

    /// `host orientation landscape-right`, `host format tele`.
    public var description: String {
        switch action {
        case .orientation(let orientation): "host orientation \(orientation)"
        case .format(let name): "host format \(name)"
        }
    }
}

/// A scenario text with its `expect` lines parsed and its steps placed in time.
public struct ScenarioScript: Sendable {
    /// The first words an event has (what an expectation's first word must be).
    public static let eventKinds = [
        "gesture", "capture", "overlay", "action", "delegate", "photo", "video", "lock", "ui", "haptic", "firmware-haptic",
        "firmware-sound", "firmware-indicator", "default-action", "default-sound", "refused", "host",
    ]

    /// What can follow an event's kind: the values of its first words (nil: any word), and how many words it
    /// has at most after the kind (nil: no limit), per kind and, for `overlay`, per effect. A word no event
    /// can have would make `expect no …` pass whatever happens, so the parser refuses it.
    struct EventShape {
        /// The words after the kind, in order: what each names and the values it takes (nil: any).
        var words: [(what: String, values: [String]?)]
        /// The most words an event of the kind has after the kind (nil: no limit).
        var maxWords: Int?
    }

    /// The haptic patterns' names (`detent`, `click`, …).
    static let hapticNames = HapticPattern.allCases.filter { $0 != .unspecified }.map(\.description)

    /// Each event kind's shape (``EventShape``).
    static let eventShapes: [String: EventShape] = [
        "capture": EventShape(words: captureWords.map { ($0.what, $0.values) }, maxWords: 3),
        "gesture": EventShape(words: [("gesture", gestureNames), captureWords[2]], maxWords: nil),
        "overlay": EventShape(words: [("effect", Array(overlayEffectWords.keys).sorted())], maxWords: 4),
        "delegate": EventShape(
            words: [("call", ["did-become-active", "will-enter-fullscreen", "will-exit-fullscreen", "did-become-inactive"])],
            maxWords: 1),
        "photo": EventShape(words: [("number", nil), ("word", ["zoom"]), ("zoom", nil), ("word", ["bias"])], maxWords: 7),
        "video": EventShape(words: [("number", nil), ("word", ["zoom"]), ("zoom", nil), ("word", ["bias"])], maxWords: 7),
        "lock": EventShape(words: [("event", ["locked", "unlocked", "unsupported:"])], maxWords: nil),
        "ui": EventShape(words: [("word", ["own"]), ("word", ["controls"]), ("state", ["hidden", "shown"])], maxWords: 5),
        "haptic": EventShape(words: [("pattern", hapticNames), ("outcome", ["sent", "failed"])], maxWords: 3),
        "firmware-haptic": EventShape(words: [("pattern", hapticNames)], maxWords: 1),
        "firmware-sound": EventShape(
            words: [("sound", Sound.allCases.filter { $0 != .unspecified }.map(\.description))], maxWords: 1),
        "firmware-indicator": EventShape(words: [], maxWords: 1),
        "action": EventShape(words: [], maxWords: 3),  // action zoom 2; action reactions #2 balloons
        "default-action": EventShape(words: [], maxWords: 3),
        "default-sound": EventShape(words: [], maxWords: 1),
        "refused": EventShape(words: [], maxWords: 2),
        "host": EventShape(words: [("step", ["orientation", "format"])], maxWords: 2),
    ]

    /// An overlay effect's name and how many words it has at most after `overlay` (`overlay value zoom 2
    /// slider`: 4).
    static let overlayEffectWords: [String: Int] = [
        "overlay-shown": 2, "overlay-hidden": 1, "entered-fullscreen": 1, "exited-fullscreen": 1, "value": 4,
        "picker-opened": 2, "picker-moved": 2, "control-selected": 2,
    ]

    /// The gesture names (`gesture NAME …`).
    public static let gestureNames = [
        "touch-began", "touch-ended", "light-press-began", "light-press-ended", "double-light-press", "slide-began",
        "slide-changed", "slide-ended", "press-began", "long-press-began", "press-ended", "press-cancelled",
        "remote-click",
    ]

    /// The words of a `capture <phase> <role> <source>` event after its kind, in order: what each names and
    /// the values it takes (an expectation may put `*` for any).
    public static let captureWords: [(what: String, values: [String])] = [
        ("phase", CaptureEventPhase.allCases.map(\.rawValue)), ("role", ["primary", "secondary"]),
        ("source", InputSource.allCases.map(\.description)),
    ]

    /// The whole text (the firmware's parser skips `expect` lines like comments).
    public let text: String
    /// The expectations, in file order.
    public let expectations: [ScenarioExpectation]
    /// The `host` lines, in file order (and so in time order).
    public let hostSteps: [ScenarioHostStep]
    /// The steps, placed in time by the planner.
    public let timeline: [ScenarioParser.TimedStep]

    /// The scenario's length: the last step's end, microseconds.
    public var durationMicros: UInt64 { timeline.last?.endMicros ?? 0 }

    /// Parses the steps (the firmware's parser) and the `expect` lines.
    ///
    /// - Throws: ``ScenarioError`` with the line, column and reason of the first error, a step's or an
    ///   expectation's.
    public init(_ text: String) throws(ScenarioError) {
        self.text = text
        timeline = try ScenarioParser.timeline(text)
        var expectations: [ScenarioExpectation] = []
        var hostSteps: [ScenarioHostStep] = []
        for (index, line) in ScenarioParser.lines(of: text).enumerated() {
            if let action = try Self.parseHostLine(line, number: index + 1) {
                let before = timeline.last { $0.line < index + 1 }
                hostSteps.append(ScenarioHostStep(action: action, line: index + 1, atMicros: before?.endMicros ?? 0))
                continue
            }
            guard var expectation = try Self.parseLine(line, number: index + 1) else { continue }
            expectation.anchor = timeline.last { $0.line < expectation.line }
            expectations.append(expectation)
        }
        self.expectations = expectations
        self.hostSteps = hostSteps
    }

    /// `text` without its `expect` and `host` lines (each left blank, so the others keep their numbers).
    public static func withoutExpectations(_ text: String) -> String {
        ScenarioParser.lines(of: text)
            .map { isHostSideLine($0) ? "" : String($0) }
            .joined(separator: "\n")
    }

    /// Whether the line's first word is `expect`.
    public static func isExpectLine(_ line: Substring) -> Bool {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
        return words.first == "expect"
    }

    /// Whether the line is the host's, not the firmware's: its first word is `expect` or `host` (the firmware's
    /// parser skips both like comments).
    public static func isHostSideLine(_ line: Substring) -> Bool {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
        return words.first == "expect" || words.first == "host"
    }

    /// The names a `host format` line may give: the example app's camera formats.
    public static var formatNames: [String] { CameraApp.cameraFormats.map(\.name) }

    /// A `host` line's action; nil for another line.
    static func parseHostLine(_ line: Substring, number: Int) throws(ScenarioError) -> ScenarioHostStep.Action? {
        let content = commentStart(line).map { line[..<$0] } ?? line
        let words = Self.words(of: content)
        guard let keyword = words.first, keyword.text == "host" else { return nil }
        func fail(_ column: Int, _ reason: String) -> ScenarioError {
            ScenarioError(line: number, column: column, reason: reason)
        }
        let forms = "host orientation NAME or host format NAME"
        guard words.count == 3 else {
            throw fail(words.count > 3 ? words[3].column : keyword.column, "expected \(forms)")
        }
        let value = String(words[2].text)
        /// `unknown WHAT (did you mean …?); WHATs: …` at the value.
        func unknown(_ what: String, _ plural: String, _ names: [String]) -> ScenarioError {
            let near = NearMatch.best(for: value, among: names)
            return fail(
                words[2].column,
                "unknown \(what)" + (near.map { " (did you mean \($0)?)" } ?? "") + "; \(plural): " + names.joined(separator: ", "))
        }
        switch words[1].text {
        case "orientation":
            guard let orientation = InterfaceOrientation(rawValue: value) else {
                throw unknown("orientation", "orientations", InterfaceOrientation.allCases.map(\.rawValue))
            }
            return .orientation(orientation)
        case "format":
            guard formatNames.contains(value) else { throw unknown("camera format", "formats", formatNames) }
            return .format(value)
        default:
            let near = NearMatch.best(for: String(words[1].text), among: ["orientation", "format"])
            throw fail(words[1].column, "expected \(forms)" + (near.map { " (did you mean \($0)?)" } ?? ""))
        }
    }

    // MARK: Parsing

    private struct Word {
        var text: Substring
        var column: Int
    }

    private static func words(of line: Substring) -> [Word] {
        var words: [Word] = []
        var column = 1
        var current: Substring.Index?
        var start = 1
        for index in line.indices {
            let isSpace = line[index] == " " || line[index] == "\t" || line[index] == "\r"
            if isSpace {
                if let begin = current { words.append(Word(text: line[begin..<index], column: start)) }
                current = nil
            } else if current == nil {
                current = index
                start = column
            }
            column += line[index].utf8.count
        }
        if let begin = current { words.append(Word(text: line[begin...], column: start)) }
        return words
    }

    static func parseLine(_ line: Substring, number: Int) throws(ScenarioError) -> ScenarioExpectation? {
        let content = commentStart(line).map { line[..<$0] } ?? line
        var words = Self.words(of: content)
        guard words.first?.text == "expect" else { return nil }
        let keyword = words.removeFirst()
        func fail(_ column: Int, _ reason: String) -> ScenarioError {
            ScenarioError(line: number, column: column, reason: reason)
        }
        guard !words.isEmpty else {
            throw fail(keyword.column, "expect needs an event, `no` and an event, or `counter NAME N`")
        }
        let text = words.map(\.text).joined(separator: " ")
        // `within D` / `for D` at the end.
        var limit: UInt64?
        if words.count >= 2, words[words.count - 2].text == "within" || words[words.count - 2].text == "for" {
            let value = words[words.count - 1]
            guard let micros = duration(value.text) else {
                throw fail(
                    value.column, "expected a duration such as 30ms after \(words[words.count - 2].text) (at most 600 s)")
            }
            limit = micros
            words.removeLast(2)
        } else if let last = words.last, last.text == "within" || last.text == "for" {
            throw fail(last.column, "missing duration after \(last.text)")
        }
        let subject: ScenarioExpectation.Subject
        if words.first?.text == "counter" {
            guard limit == nil else { throw fail(words[0].column, "a counter is checked at the end: no within/for") }
            guard words.count == 3 else {
                throw fail(words[0].column, "expect counter NAME N (or <=N, >=N, <N, >N)")
            }
            let name = String(words[1].text)
            guard Counters.fields.contains(where: { $0.name == name }) else {
                let near = NearMatch.best(for: name, among: Counters.fields.map(\.name))
                throw fail(
                    words[1].column,
                    "unknown counter" + (near.map { " (did you mean \($0)?)" } ?? "") + "; counters: "
                        + Counters.fields.map(\.name).joined(separator: ", "))
            }
            let valueWord = words[2].text
            let comparison = ScenarioExpectation.Comparison.allCases.first { valueWord.hasPrefix($0.rawValue) } ?? .equal
            guard let value = UInt64(valueWord.dropFirst(comparison.rawValue.count)) else {
                throw fail(words[2].column, "expected a whole number, optionally after <=, >=, < or >")
            }
            subject = .counter(name: name, comparison: comparison, value: value)
        } else {
            let negated = words.first?.text == "no"
            let no = negated ? words.removeFirst() : keyword
            guard let kind = words.first else { throw fail(no.column, "expect no needs an event after it") }
            guard eventKinds.contains(String(kind.text)) else {
                let near = NearMatch.best(for: String(kind.text), among: eventKinds + ["counter", "no"])
                throw fail(
                    kind.column,
                    "unknown event kind" + (near.map { " (did you mean \($0)?)" } ?? "") + "; kinds: "
                        + eventKinds.joined(separator: ", "))
            }
            if kind.text == "gesture", words.count > 1, words[1].text != "*",
                !gestureNames.contains(String(words[1].text))
            {
                let near = NearMatch.best(for: String(words[1].text), among: gestureNames)
                throw fail(words[1].column, "unknown gesture" + (near.map { " (did you mean \($0)?)" } ?? ""))
            }
            // A misspelt or extra word would match nothing: `expect no …` with it could never fail.
            if let stray = words.first(where: { Self.isGluedLimit($0.text) }) {
                throw fail(stray.column, "`\(stray.text)` is one word: write `within 30ms` or `for 30ms`, with a space")
            }
            let shape = Self.eventShapes[String(kind.text)] ?? EventShape(words: [], maxWords: nil)
            for (offset, vocabulary) in shape.words.enumerated() where offset + 1 < words.count {
                let word = words[offset + 1]
                if vocabulary.what == "number", word.text != "*", UInt64(word.text) == nil, !word.text.contains("±"),
                    !word.text.contains("+-")
                {
                    throw fail(word.column, "a \(kind.text)'s number is a whole number (1 for the first), `*` or N±T")
                }
                guard let values = vocabulary.values, word.text != "*", !values.contains(String(word.text)) else { continue }
                let near = NearMatch.best(for: String(word.text), among: values)
                throw fail(
                    word.column,
                    "unknown \(kind.text) \(vocabulary.what)" + (near.map { " (did you mean \($0)?)" } ?? "") + "; "
                        + vocabulary.what + "s: " + values.joined(separator: ", "))
            }
            var maxWords = shape.maxWords
            if kind.text == "overlay", words.count > 1, let effectWords = Self.overlayEffectWords[String(words[1].text)] {
                maxWords = effectWords
            }
            if let maxWords, words.count - 1 > maxWords {
                let extra = words[maxWords + 1]
                throw fail(
                    extra.column,
                    "`\(extra.text)`: no \(kind.text) event has more than \(maxWords) word\(maxWords == 1 ? "" : "s") after `\(kind.text)`"
                        + (words.count > 1 && kind.text == "overlay" ? " \(words[1].text)" : ""))
            }
            var patterns: [ScenarioExpectation.Pattern] = []
            for word in words {
                guard let pattern = Self.pattern(word.text) else {
                    throw fail(word.column, "expected a number and tolerance such as 2.0±0.1")
                }
                patterns.append(pattern)
            }
            subject = negated ? .absence(patterns) : .event(patterns)
        }
        return ScenarioExpectation(subject: subject, limitMicros: limit, line: number, text: text, anchor: nil)
    }

    /// `within30ms`, `for2s`: a limit written without its space, which would be taken for a word to match.
    static func isGluedLimit(_ word: Substring) -> Bool {
        for keyword in ["within", "for"] where word.hasPrefix(keyword) && word.count > keyword.count {
            if duration(word.dropFirst(keyword.count)) != nil { return true }
        }
        return false
    }

    /// Where an `expect` line's comment starts: a `#` that is a word of its own or begins `# text` (so the
    /// picker's values, `#2`, are words).
    static func commentStart(_ line: Substring) -> Substring.Index? {
        var previous: Character = " "
        for index in line.indices {
            let next = line.index(after: index)
            if line[index] == "#", previous == " " || previous == "\t",
                next == line.endIndex || line[next] == " " || line[next] == "\t" || line[next] == "\r"
            {
                return index
            }
            previous = line[index]
        }
        return nil
    }

    /// A pattern word; nil for a malformed `V±T`.
    static func pattern(_ word: Substring) -> ScenarioExpectation.Pattern? {
        if word == "*" { return .any }
        let separator = word.range(of: "±") ?? word.range(of: "+-")
        guard let separator else { return .word(String(word)) }
        var number = word[..<separator.lowerBound]
        var key: String?
        if let equals = number.firstIndex(of: "=") {
            key = String(number[..<equals])
            number = number[number.index(after: equals)...]
        }
        // Milliseconds may say so (`115±3ms`, `115ms±3`): the only unit an event's number has.
        var toleranceText = word[separator.upperBound...]
        if toleranceText.hasSuffix("ms") { toleranceText = toleranceText.dropLast(2) }
        if number.hasSuffix("ms") { number = number.dropLast(2) }
        guard let value = Double(number), let tolerance = Double(toleranceText), tolerance >= 0,
            value.isFinite, tolerance.isFinite
        else { return nil }
        return .number(key: key, value: value, tolerance: tolerance)
    }

    /// `500us`, `30ms`, `1.5s`, or a bare number of ms, as microseconds (at most 600 s).
    static func duration(_ word: Substring) -> UInt64? {
        let units: [(String, Double)] = [("us", 1), ("ms", 1_000), ("s", 1_000_000), ("", 1_000)]
        for (unit, scale) in units where word.hasSuffix(unit) {
            guard let value = Double(word.dropLast(unit.count)), value >= 0, value <= 600_000_000 / scale else {
                continue
            }
            return UInt64((value * scale).rounded())
        }
        return nil
    }

    static func milliseconds(_ micros: UInt64) -> String {
        let tenths = (micros + 50) / 100
        return "\(tenths / 10).\(tenths % 10)"
    }
}

/// What a run of a scenario produced: the host pipeline's events, the firmware's counters at the end, and
/// where the scenario sat in device time.
public struct ScenarioRun: Sendable {
    /// Every event, in order of time.
    public var events: [ObservedEvent]
    /// `GetCounters` at the end of the run; nil when not read.
    public var counters: Counters?
    /// `GetCounters` just before the scenario started: a counter expectation checks what the run added
    /// (over a port the device counted every earlier session, scenario and damaged frame since it booted).
    /// Nil: the counters at the end are taken as they are.
    public var countersAtStart: Counters?
    /// Device time the scenario's first step started, microseconds (over a port: the earliest it can have).
    public var scenarioStartMicros: UInt64
    /// Device time the run ended (the last moment an event could have been seen), microseconds.
    public var endMicros: UInt64

    /// How much later than ``scenarioStartMicros`` the scenario may have started, microseconds: a positive
    /// expectation's window closes this much later, an absence's opens this much later (only what falls inside
    /// the window for every possible start breaks it). 0 in virtual time, where the start is exact; over a port
    /// it is bracketed.
    public var startUncertaintyMicros: UInt64

    /// Whether the firmware's own feedback (`firmware-haptic`, `firmware-sound`, `firmware-indicator`) was
    /// observed: only in virtual time; over a port such expectations are skipped.
    public var seesFirmwareFeedback: Bool

    /// A run.
    public init(
        events: [ObservedEvent], counters: Counters?, countersAtStart: Counters? = nil, scenarioStartMicros: UInt64,
        endMicros: UInt64, startUncertaintyMicros: UInt64 = 0, seesFirmwareFeedback: Bool = true
    ) {
        self.seesFirmwareFeedback = seesFirmwareFeedback
        self.events = events
        self.counters = counters
        self.countersAtStart = countersAtStart
        self.scenarioStartMicros = scenarioStartMicros
        self.endMicros = endMicros
        self.startUncertaintyMicros = startUncertaintyMicros
    }
}

/// One expectation checked against a run.
public struct ExpectationResult: Sendable {
    /// The expectation.
    public var expectation: ScenarioExpectation
    /// Whether it held.
    public var passed: Bool
    /// The window searched, device microseconds (for counters: the end of the run).
    public var window: ClosedRange<UInt64>
    /// The event that satisfied a positive expectation or broke a negative one.
    public var matched: ObservedEvent?
    /// Not checked: the run could not see such events (firmware feedback over a port); never a failure.
    public var skipped = false
    /// Why it failed, or what satisfied it.
    public var detail: String
    /// For a failure: the events around it (what the report prints).
    public var context: [ObservedEvent]
}

extension ScenarioScript {
    /// Checks every expectation against `run`.
    public func check(_ run: ScenarioRun) -> [ExpectationResult] {
        expectations.map { check($0, run) }
    }

    /// Checks one expectation against `run`.
    public func check(_ expectation: ScenarioExpectation, _ run: ScenarioRun) -> ExpectationResult {
        let slack = run.startUncertaintyMicros
        let start = run.scenarioStartMicros + (expectation.anchor?.startMicros ?? 0)
        let anchorEnd = run.scenarioStartMicros + (expectation.anchor?.endMicros ?? 0)
        let end = max(start, expectation.limitMicros.map { anchorEnd + $0 + slack } ?? run.endMicros)
        let window = start...end
        let span = "\(Self.milliseconds(start)) … \(Self.milliseconds(end)) ms"
        if !run.seesFirmwareFeedback, expectation.isAboutFirmwareFeedback {
            var result = ExpectationResult(
                expectation: expectation, passed: true, window: window, matched: nil,
                detail: "firmware feedback is not seen over a port", context: [])
            result.skipped = true
            return result
        }
        switch expectation.subject {
        case .event(let patterns):
            if let hit = run.events.first(where: { window.contains($0.micros) && ScenarioExpectation.matches(patterns, $0) }) {
                return ExpectationResult(
                    expectation: expectation, passed: true, window: window, matched: hit,
                    detail: "at \(Self.milliseconds(hit.micros)) ms", context: [])
            }
            let elsewhere = run.events.first { ScenarioExpectation.matches(patterns, $0) }
            let detail =
                "none in \(span)"
                + (elsewhere.map { ", the nearest at \(Self.milliseconds($0.micros)) ms" } ?? ", none in the whole run")
            return ExpectationResult(
                expectation: expectation, passed: false, window: window, matched: nil, detail: detail,
                context: Self.context(run.events, around: window, kind: patterns.first))
        case .absence(let patterns):
            // The scenario began somewhere in the `slack` after `scenarioStartMicros`: an event breaks the
            // expectation only inside the part of the window every such start shares. The whole window, as a
            // positive expectation searches, took an event that came after the window's true end for one inside
            // it (over a port at 19200 baud the start is known to 300 ms: the RunScenario request's line time).
            // An event in the sure part breaks the expectation for every start; where nothing is there, a sure
            // part under half the window proves too little to pass: not checked (a window only just longer
            // than the uncertainty was checked over a few microseconds and reported a pass).
            let sureEnd = expectation.limitMicros.map { anchorEnd + $0 } ?? run.endMicros
            let written = sureEnd - min(start, sureEnd)
            let sureLength = sureEnd - min(start + slack, sureEnd)
            let sure = min(start + slack, sureEnd)...sureEnd
            let share = "\(Self.milliseconds(sureLength)) of its \(Self.milliseconds(written)) ms"
            let sureSpan =
                "\(Self.milliseconds(sure.lowerBound)) … \(Self.milliseconds(sure.upperBound)) ms"
                + (slack > 0 ? " (the part inside the window for every start the bracket allows: \(share))" : "")
            if start + slack <= sureEnd,
                let index = run.events.firstIndex(where: { sure.contains($0.micros) && ScenarioExpectation.matches(patterns, $0) })
            {
                let hit = run.events[index]
                return ExpectationResult(
                    expectation: expectation, passed: false, window: sure, matched: hit,
                    detail: "\(hit.text) at \(Self.milliseconds(hit.micros)) ms, inside \(sureSpan)",
                    context: Array(run.events[max(0, index - 5)..<min(run.events.count, index + 6)]))
            }
            guard start + slack <= sureEnd, sureLength * 2 >= written else {
                var result = ExpectationResult(
                    expectation: expectation, passed: true, window: window, matched: nil,
                    detail: "not checked: the scenario's start is known to \(Self.milliseconds(slack)) ms, "
                        + "more than half the window (\(Self.milliseconds(written)) ms), and nothing is in the part inside it for every start",
                    context: [])
                result.skipped = true
                return result
            }
            return ExpectationResult(
                expectation: expectation, passed: true, window: sure, matched: nil, detail: "none in \(sureSpan)",
                context: [])
        case .counter(let name, let comparison, let value):
            let window = run.endMicros...run.endMicros
            guard let counters = run.counters, let field = Counters.fields.first(where: { $0.name == name }) else {
                return ExpectationResult(
                    expectation: expectation, passed: false, window: window, matched: nil,
                    detail: "the counters were not read", context: [])
            }
            let end = field.value(counters)
            guard let atStart = run.countersAtStart.map(field.value) else {
                return ExpectationResult(
                    expectation: expectation, passed: comparison.holds(end, value), window: window, matched: nil,
                    detail: "\(name) is \(end)", context: [])
            }
            // A device that rebooted meanwhile (its uptime went back) counts from 0 again: what it counted since
            // is its value, for every counter alike.
            let rebooted = counters.uptimeMicros < (run.countersAtStart?.uptimeMicros ?? 0)
            let added = rebooted ? end : end &- min(atStart, end)
            return ExpectationResult(
                expectation: expectation, passed: comparison.holds(added, value), window: window, matched: nil,
                detail: "\(name) went up by \(added) during the run (\(atStart) → \(end))", context: [])
        }
    }

    /// The events around a window a positive expectation missed: those inside it (and 20 ms either side),
    /// of the expected kind when there are many, at most 12. What is left out is said, in a line of its own
    /// where it was (`… 5 more events`), so that the list never reads as if nothing happened there.
    static func context(
        _ events: [ObservedEvent], around window: ClosedRange<UInt64>, kind: ScenarioExpectation.Pattern?
    ) -> [ObservedEvent] {
        let low = window.lowerBound > 20_000 ? window.lowerBound - 20_000 : 0
        var near = events.filter { $0.micros >= low && $0.micros <= window.upperBound + 20_000 }
        var note: ObservedEvent?
        if near.count > 12, let kind {
            let same = near.filter { $0.text.split(separator: " ").first.map { kind.matches($0) } ?? false }
            if !same.isEmpty {
                note = ObservedEvent(
                    micros: same[0].micros, text: "(\(near.count - same.count) events of other kinds left out)")
                near = same
            }
        }
        if near.count > 12 {
            let omitted = ObservedEvent(micros: near[6].micros, text: "… \(near.count - 12) more events")
            near = Array(near.prefix(6)) + [omitted] + Array(near.suffix(6))
        }
        return (note.map { [$0] } ?? []) + near
    }
}
