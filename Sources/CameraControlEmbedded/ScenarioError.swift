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
        "click-and-hold", "slide", "button", "remote-click", "noise", "seed",
    ]

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
