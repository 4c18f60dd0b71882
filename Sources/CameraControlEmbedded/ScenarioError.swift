import FirmwareSim

/// A scenario that does not parse: where and why (docs/SIMULATOR.md, "Scenarios").
public struct ScenarioError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The 1-based line of the first error.
    public var line: Int
    /// The firmware's message, `line N: …`.
    public var message: String
    /// The 1-based column (byte in the line) where the fault starts; 0 when the parser gave none.
    public var column: Int = 0
    /// The reason without the position (`unknown step`); the message's tail when the parser gave none.
    public var reason: String = ""

    /// An error at a line.
    public init(line: Int, message: String) {
        self.line = line
        self.message = message
        let prefix = "line \(line): "
        self.reason = message.hasPrefix(prefix) ? String(message.dropFirst(prefix.count)) : message
    }

    /// An error at a line and column.
    public init(line: Int, column: Int, reason: String) {
        self.init(line: line, message: "line \(line): \(reason)")
        self.column = column
    }

    init(cError: ccsim_parse_error_t) {
        var copy = cError
        let text = withUnsafeBytes(of: &copy.message) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
        self.init(line: Int(cError.line), message: text)
        self.column = Int(cError.column)
        if let reason = cError.reason { self.reason = String(cString: reason) }
    }

    /// Same as ``message``.
    public var description: String { message }
}

/// The firmware's scenario parser (C, `ccsim_parser.c`), run in-process: checks a scenario without a
/// device, with the same rules and the same error positions as the simulator.
public enum ScenarioParser {
    /// What a scenario that parses holds.
    public struct Summary: Hashable, Sendable {
        /// The number of steps.
        public var steps: Int
        /// The `seed N` line's seed, when there is one.
        public var seed: UInt64?

        /// A summary.
        public init(steps: Int, seed: UInt64? = nil) {
            self.steps = steps
            self.seed = seed
        }
    }

    /// The most steps a scenario holds (the firmware's `CCSIM_MAX_STEPS`).
    public static let maxSteps = Int(CCSIM_MAX_STEPS)
    /// The longest line of a scenario, comments included, in bytes (the firmware's `CCSIM_MAX_LINE`).
    public static let maxLineBytes = Int(CCSIM_MAX_LINE)

    /// The step names the parser knows (docs/SIMULATOR.md), for "did you mean" hints.
    public static let stepNames = [
        "hold", "pause", "wait", "touch", "release", "force", "light-press", "double-light-press", "full-click",
        "click-and-hold", "slide", "button", "remote-click", "noise", "settings", "seed",
    ]

    /// The lines of `text` as the parser numbers them: each ends at LF or at CRLF, and neither is part of
    /// the line. (Swift takes CRLF for one `Character`, so `split(separator: "\n")` leaves a CRLF file one
    /// line.) A lone CR ends no line: the parser refuses it as a control character.
    public static func lines(of text: String) -> [Substring] {
        text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
    }

    /// Parses `text` as the simulator does.
    ///
    /// - Throws: ``ScenarioError`` with the line, column and reason of the first error.
    public static func check(_ text: String) throws(ScenarioError) -> Summary {
        let bytes = Array(text.utf8).map { CChar(bitPattern: $0) } + [0]
        var scenario = ccsim_scenario_t()
        var error = ccsim_parse_error_t()
        let status = bytes.withUnsafeBufferPointer { buffer in
            ccsim_scenario_parse(buffer.baseAddress, bytes.count - 1, &scenario, &error)
        }
        guard status == 0 else { throw ScenarioError(cError: error) }
        return Summary(steps: Int(scenario.count), seed: scenario.has_seed ? scenario.seed : nil)
    }
}

extension ScenarioParser {
    /// One step of a parsed scenario placed in time by the simulator's planner (`ccsim_planner.c`).
    public struct TimedStep: Hashable, Sendable {
        /// The step's 1-based line in the text.
        public var line: Int
        /// When the step starts, microseconds after the scenario started.
        public var startMicros: UInt64
        /// How long the step lasts, microseconds (the planner's exact profile).
        public var durationMicros: UInt64

        /// When the step ends, microseconds after the scenario started.
        public var endMicros: UInt64 { startMicros + durationMicros }
    }

    /// Parses `text` and places each step in time as the simulator plays it on a fresh device (the finger
    /// lifted at the middle of the strip): the same planner, so the times are exact.
    ///
    /// - Throws: ``ScenarioError`` with the line, column and reason of the first error.
    public static func timeline(_ text: String) throws(ScenarioError) -> [TimedStep] {
        let bytes = Array(text.utf8).map { CChar(bitPattern: $0) } + [0]
        var scenario = ccsim_scenario_t()
        var error = ccsim_parse_error_t()
        let status = bytes.withUnsafeBufferPointer { buffer in
            ccsim_scenario_parse(buffer.baseAddress, bytes.count - 1, &scenario, &error)
        }
        guard status == 0 else { throw ScenarioError(cError: error) }
        var state = ccsim_finger_state_t(touching: false, position: UInt32(CCSIM_POS_ONE) / 2, force_mn: 0)
        var plan = ccsim_plan_t()
        var start: UInt64 = 0
        return withUnsafePointer(to: &scenario.steps) { pointer in
            pointer.withMemoryRebound(to: ccsim_step_t.self, capacity: Int(scenario.count)) { steps in
                (0..<Int(scenario.count)).map { index in
                    ccsim_plan_step(steps + index, &state, &plan)
                    defer { start += UInt64(plan.duration_us) }
                    return TimedStep(line: Int(steps[index].line), startMicros: start, durationMicros: UInt64(plan.duration_us))
                }
            }
        }
    }
}
