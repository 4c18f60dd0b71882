/// Bytes received and not yet taken, as the chunks they came in: the buffer of ``ReceiveAdapter`` and of an
/// in-memory end's inbox. A value type; its owner keeps it under a lock.
struct PendingBytes: Sendable {
    private var chunks: [[UInt8]] = []
    /// How many bytes wait.
    private(set) var count = 0

    /// True when nothing waits.
    var isEmpty: Bool { chunks.isEmpty }

    /// Adds one chunk after the others.
    mutating func append(_ chunk: [UInt8]) {
        chunks.append(chunk)
        count += chunk.count
    }

    /// Everything that waits, in order, as one array (the chunk itself when there is one); nil when nothing does.
    mutating func takeAll() -> [UInt8]? {
        guard !chunks.isEmpty else { return nil }
        let bytes = chunks.count == 1 ? chunks[0] : Array(chunks.joined())
        chunks.removeAll(keepingCapacity: true)
        count = 0
        return bytes
    }

    /// Drops everything that waits.
    mutating func removeAll() {
        chunks.removeAll()
        count = 0
    }
}
