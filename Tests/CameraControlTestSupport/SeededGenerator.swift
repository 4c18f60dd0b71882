/// The one deterministic random generator of the tests (SeededGenerator), so every random test replays
/// exactly from its seed.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Array where Element == UInt8 {
    /// `count` random bytes from `generator`.
    public static func random(count: Int, using generator: inout some RandomNumberGenerator) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// Bytes from lowercase or uppercase hex (test input only; traps on bad hex).
    public init(hex: String) {
        let digits = Array(hex.utf8)
        precondition(digits.count % 2 == 0, "odd hex")
        self = stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    /// Lowercase hex.
    public var hex: String {
        map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
