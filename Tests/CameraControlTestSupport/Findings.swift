/// What a computation found wrong, collected where `#expect` cannot report it.
///
/// `#expect` attributes an issue to the test whose task it runs in; work moved off the cooperative pool with
/// ``onOwnThread(_:_:)`` runs on a thread of its own, outside that task. Such work checks its properties into
/// a `Findings` and returns it, and the test expects it to be empty (each problem says what went wrong).
public struct Findings: Sendable {
    /// The problems found, in the order they were found.
    public private(set) var problems: [String] = []

    /// No problem yet.
    public init() {}

    /// Records `message` when `condition` is false.
    public mutating func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { problems.append(message()) }
    }

    /// The problems, one paragraph each (what a failed expectation prints).
    public var report: String { problems.joined(separator: "\n\n") }
}
