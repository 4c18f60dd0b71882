/// Which of the last ``size`` sequence numbers below and at the highest one were received (§6).
///
/// The host's window is wide enough for the device's whole retransmission budget: 8 transmissions over
/// 2.54 s, while a device streaming small raw batches sends up to about 1,000 packets a second. With
/// the 64-number window of v1.0 a reliable input event retransmitted 300 ms late was already "older
/// than the window" and dropped as a duplicate (but acknowledged): a click lost with no trace.
struct ReceivedSequenceWindow: Sendable {
    /// Sequence numbers remembered (a power of two, well under 2¹⁵).
    static let size = 4_096
    private static let words = size / 64

    private var highest: UInt16 = 0
    private var bits: [UInt64] = []

    /// Forgets everything (a new session, a dead link).
    mutating func reset() {
        bits = []
        highest = 0
    }

    /// Records `sequence`; true when it was already received, or is older than the window (then it is
    /// treated as a duplicate too, §6).
    mutating func recordIsDuplicate(_ sequence: UInt16) -> Bool {
        guard !bits.isEmpty else {
            bits = Array(repeating: 0, count: Self.words)
            highest = sequence
            set(sequence)
            return false
        }
        let offset = Int16(bitPattern: sequence &- highest)
        if offset > 0 {
            if Int(offset) >= Self.size {
                for index in bits.indices { bits[index] = 0 }
            } else {
                var cleared = highest
                for _ in 0..<Int(offset) {
                    cleared &+= 1
                    clear(cleared)
                }
            }
            highest = sequence
            set(sequence)
            return false
        }
        if -Int(offset) >= Self.size { return true }
        if isSet(sequence) { return true }
        set(sequence)
        return false
    }

    private func slot(_ sequence: UInt16) -> (word: Int, bit: UInt64) {
        let index = Int(sequence) & (Self.size - 1)
        return (index >> 6, 1 << UInt64(index & 63))
    }

    private func isSet(_ sequence: UInt16) -> Bool {
        let (word, bit) = slot(sequence)
        return bits[word] & bit != 0
    }

    private mutating func set(_ sequence: UInt16) {
        let (word, bit) = slot(sequence)
        bits[word] |= bit
    }

    private mutating func clear(_ sequence: UInt16) {
        let (word, bit) = slot(sequence)
        bits[word] &= ~bit
    }
}
