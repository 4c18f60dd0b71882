import Synchronization

/// Collects values appended from any task or thread, in order (what a callback saw).
public final class Recorder<Value: Sendable>: Sendable {
    private let storage = Mutex<[Value]>([])

    /// An empty recorder.
    public init() {}

    /// Records `value`.
    public func append(_ value: Value) { storage.withLock { $0.append(value) } }

    /// Everything recorded so far.
    public var values: [Value] { storage.withLock { $0 } }
}
