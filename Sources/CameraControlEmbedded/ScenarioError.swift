import FirmwareSim

/// A scenario that does not parse: where and why (docs/SIMULATOR.md, "Scenarios").
public struct ScenarioError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The 1-based line of the first error.
    public var line: Int
    /// The firmware's message, `line N: …`.
    public var message: String

    /// An error at a line.
    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }

    init(cError: ccsim_parse_error_t) {
        var copy = cError
        let text = withUnsafeBytes(of: &copy.message) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
        self.init(line: Int(cError.line), message: text)
    }

    /// Same as ``message``.
    public var description: String { message }
}
